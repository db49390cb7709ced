//! A zmqperf command run on another host through its launcher (the other side of a
//! compatible pair, `--peer-on HOST`): started, its output kept, ended by a deadline, and
//! when it fails, what failed said: the launcher (ssh's 255, srun's errors) or the command.

use super::hosts::Host;
use crate::child::describe_status;
use crate::error::{Error, Result};
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// A command running on another host.
pub struct RemoteCommand {
    host: Host,
    what: String,
    child: Child,
    out: Option<JoinHandle<String>>,
    err: Option<JoinHandle<String>>,
}

fn collect(mut r: impl Read + Send + 'static) -> JoinHandle<String> {
    thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

/// The last few lines of a text, joined.
fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

impl RemoteCommand {
    /// Starts `exe args...` on `host` (`exe` being zmqperf's path there).
    pub fn start(host: &Host, exe: &str, args: &[String]) -> Result<RemoteCommand> {
        let mut words = vec![exe.to_string()];
        words.extend(args.iter().cloned());
        let argv = host.command(&words);
        let what = format!(
            "{} on host {}",
            args.first().map_or("zmqperf", |s| s),
            host.name
        );
        let (prog, rest) = argv
            .split_first()
            .ok_or_else(|| Error::Internal(format!("{what}: an empty launcher")))?;
        let mut child = Command::new(prog)
            .args(rest)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::Io {
                op: format!("starting {what} through {prog}"),
                source: e,
            })?;
        let out = child.stdout.take().map(collect);
        let err = child.stderr.take().map(collect);
        Ok(RemoteCommand {
            host: host.clone(),
            what,
            child,
            out,
            err,
        })
    }

    /// Whether it has ended, and if it failed, why (checked without waiting).
    pub fn failed_early(&mut self) -> Option<Error> {
        match self.child.try_wait() {
            Ok(Some(st)) if !st.success() => Some(self.failure(st)),
            _ => None,
        }
    }

    fn failure(&mut self, st: std::process::ExitStatus) -> Error {
        let err = self
            .err
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let out = self
            .out
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let said = tail(&format!("{out}\n{err}"));
        let how = describe_status(st);
        let launcher = self.host.launch.first().cloned().unwrap_or_default();
        let who = match (self.host.kind, st.code()) {
            ("ssh", Some(255)) => format!("ssh failed ({how})"),
            ("srun", _) if err.contains("srun: error") => format!("srun failed ({how})"),
            (_, Some(126 | 127)) => {
                format!("{launcher} could not run zmqperf there ({how}; is it installed at that path? set zmqperf = \"PATH\" or ship = true)")
            }
            _ => how,
        };
        Error::NodeGone(format!(
            "{}: {who}{}",
            self.what,
            if said.is_empty() {
                String::new()
            } else {
                format!(": {said}")
            }
        ))
    }

    /// Waits for it to end (at most `wait`; then it is stopped), and gives its output.
    pub fn finish(mut self, wait: Duration) -> Result<String> {
        let until = Instant::now() + wait;
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) if st.success() => {
                    return Ok(self
                        .out
                        .take()
                        .and_then(|h| h.join().ok())
                        .unwrap_or_default());
                }
                Ok(Some(st)) => return Err(self.failure(st)),
                Ok(None) if Instant::now() >= until => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err(Error::NodeGone(format!(
                        "{} did not end within {:.0} s of this side and was stopped",
                        self.what,
                        wait.as_secs_f64()
                    )));
                }
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(e) => {
                    return Err(Error::Io {
                        op: format!("waiting for {}", self.what),
                        source: e,
                    })
                }
            }
        }
    }
}

impl Drop for RemoteCommand {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::hosts::Quoting;

    fn sh_host(kind: &'static str) -> Host {
        Host {
            name: "b".into(),
            launch: vec!["sh".into(), "-c".into()],
            quoting: Quoting::Shell,
            addr: "127.0.0.1".into(),
            zmqperf: None,
            ship: false,
            kind,
        }
    }

    #[test]
    fn output_comes_back_and_failures_say_who_failed() {
        let h = sh_host("launch");
        let r = RemoteCommand::start(&h, "echo", &["it's".into(), "here".into()]).unwrap();
        assert_eq!(
            r.finish(Duration::from_secs(10)).unwrap().trim(),
            "it's here"
        );

        let r = RemoteCommand::start(&h, "/nonexistent/zmqperf", &["local_lat".into()]).unwrap();
        let e = r.finish(Duration::from_secs(10)).unwrap_err().to_string();
        assert!(
            e.contains("local_lat on host b") && e.contains("127"),
            "{e}"
        );

        let h = sh_host("ssh");
        let r = RemoteCommand::start(
            &h,
            "sh",
            &[
                "-c".into(),
                "echo 'Permission denied (publickey).' >&2; exit 255".into(),
            ],
        )
        .unwrap();
        let e = r.finish(Duration::from_secs(10)).unwrap_err().to_string();
        assert!(
            e.contains("ssh failed") && e.contains("Permission denied"),
            "{e}"
        );

        let r = RemoteCommand::start(&h, "sleep", &["30".into()]).unwrap();
        let t0 = Instant::now();
        let e = r
            .finish(Duration::from_millis(200))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("was stopped") && t0.elapsed() < Duration::from_secs(5),
            "{e}"
        );
    }
}
