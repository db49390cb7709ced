//! Where a replica runs, as a value computed once per replica: on a thread of the runner,
//! or a process started by an argv (a launcher's prefix, if any, then the node program).
//! The engine only starts what the value says; it never asks again where a node goes.

pub use crate::topology::hosts::Quoting;

/// How a node process gets its spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecPassing {
    /// The first line on its stdin (zmqperf's own node: no remote shell quoting, no
    /// ARG_MAX, nothing in `ps`).
    Stdin,
    /// Its last argument (a peer in another language, control protocol version 1).
    LastArgument,
}

/// A process to start for a replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessLaunch {
    /// The launcher's argv prefix (empty: a child of the runner).
    pub prefix: Vec<String>,
    /// How the launcher passes the program's words on.
    pub quoting: Quoting,
    /// The node program and its arguments.
    pub program: Vec<String>,
    /// How the spec travels.
    pub spec: SpecPassing,
    /// The host it runs on, when that is not the runner's (a hosts file's name).
    pub host: Option<String>,
}

/// Where one replica runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// A thread of the runner (sharing its ZeroMQ context: inproc).
    Thread,
    /// A process of its own.
    Process(ProcessLaunch),
}

impl ProcessLaunch {
    /// zmqperf's own node program `exe __node`, spec on stdin, on the runner's host.
    pub fn own(exe: &str) -> ProcessLaunch {
        ProcessLaunch {
            prefix: Vec::new(),
            quoting: Quoting::Argv,
            program: vec![exe.to_string(), "__node".to_string()],
            spec: SpecPassing::Stdin,
            host: None,
        }
    }

    /// A peer's command (from its manifest), spec as the last argument.
    pub fn peer(command: Vec<String>) -> ProcessLaunch {
        ProcessLaunch {
            prefix: Vec::new(),
            quoting: Quoting::Argv,
            program: command,
            spec: SpecPassing::LastArgument,
            host: None,
        }
    }

    /// The whole argv to start, given the spec as JSON (used only when it is the last
    /// argument).
    pub fn argv(&self, spec_json: &str) -> Vec<String> {
        let mut words = self.program.clone();
        if self.spec == SpecPassing::LastArgument {
            words.push(spec_json.to_string());
        }
        let mut out = self.prefix.clone();
        match self.quoting {
            Quoting::Argv => out.extend(words),
            Quoting::Shell => out.push(shell_line(&words)),
        }
        out
    }
}

/// One POSIX shell command line that gives back exactly `words`: each word single-quoted,
/// a quote inside written as `'\''`.
pub fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_line_survives_a_remote_shell() {
        let words: Vec<String> = ["zmq perf", "{\"a\":[1,2]}", "it's", "$HOME", "*"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let line = shell_line(&words);
        let out = std::process::Command::new("sh")
            .args([
                "-c",
                &format!("for w in {line}; do printf '%s\\n' \"$w\"; done"),
            ])
            .output()
            .expect("sh runs");
        let back: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        assert_eq!(back, words);
    }

    #[test]
    fn the_spec_is_an_argument_only_for_a_peer() {
        let spec = "{\"name\":\"n\"}";
        let own = ProcessLaunch::own("/bin/zmqperf");
        assert_eq!(own.argv(spec), ["/bin/zmqperf", "__node"]);
        let peer = ProcessLaunch::peer(vec!["python3".into(), "node.py".into()]);
        let argv = peer.argv(spec);
        assert_eq!(argv, ["python3", "node.py", spec]);
        let ssh = ProcessLaunch {
            prefix: vec!["ssh".into(), "b".into()],
            quoting: Quoting::Shell,
            ..own
        };
        assert_eq!(ssh.argv(spec), ["ssh", "b", "'/bin/zmqperf' '__node'"]);
    }
}
