//! The hosts of a multi-host run: each a launcher the user already has (ssh, srun,
//! `ip netns exec`, `docker|podman|kubectl exec -i`, or any argv prefix) and the address
//! its nodes bind and are reached at. Read from `--hosts FILE` or a `[hosts]` table of a
//! topology or workload file (docs/hosts.md).

use super::launch::{shell_line, ProcessLaunch, SpecPassing};
use crate::error::{Error, Result};
use crate::model::HostEnvironment;
pub use crate::topology::hosts::{HostEntry, Quoting};
use serde::Deserialize;
use std::collections::BTreeMap;

/// A host, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Its name in the hosts file.
    pub name: String,
    /// The launcher's argv prefix (empty for the runner's own host).
    pub launch: Vec<String>,
    /// How the launcher passes words on.
    pub quoting: Quoting,
    /// What its nodes bind and are reached at.
    pub addr: String,
    /// zmqperf there, if not the runner's own path.
    pub zmqperf: Option<String>,
    /// Copy the runner's build there when missing.
    pub ship: bool,
    /// Which preset made it: local, ssh, srun, exec or launch.
    pub kind: &'static str,
}

/// The options of the ssh preset: never prompt, give up connecting after 5 s, and notice a
/// dead link within 6 s.
pub const SSH_OPTIONS: [&str; 8] = [
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=5",
    "-o",
    "ServerAliveInterval=2",
    "-o",
    "ServerAliveCountMax=3",
];

impl Host {
    /// Whether it is the runner's own host.
    pub fn is_local(&self) -> bool {
        self.kind == "local"
    }

    /// The launch of zmqperf's node program on this host, `exe` being the program's path
    /// there.
    pub fn node_launch(&self, exe: &str) -> ProcessLaunch {
        ProcessLaunch {
            prefix: self.launch.clone(),
            quoting: self.quoting,
            program: vec![exe.to_string(), "__node".to_string()],
            spec: SpecPassing::Stdin,
            host: (!self.is_local()).then(|| self.name.clone()),
        }
    }

    /// The argv that runs `words` on this host (a short command such as a stop or a
    /// copy), quoted as its launcher needs.
    pub fn command(&self, words: &[String]) -> Vec<String> {
        let mut out = self.launch.clone();
        match self.quoting {
            Quoting::Argv => out.extend(words.iter().cloned()),
            Quoting::Shell => out.push(shell_line(words)),
        }
        out
    }
}

/// The hosts of a run, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hosts {
    /// Every host, by its name.
    pub by_name: BTreeMap<String, Host>,
}

fn bad(origin: &str, name: &str, field: &str, value: &str, why: impl Into<String>) -> Error {
    Error::invalid(&format!("{origin}: hosts.{name}.{field}"), value, why)
}

/// Resolves the entry named `name` (from `origin`, for errors).
pub fn resolve(e: &HostEntry, origin: &str, name: &str) -> Result<Host> {
    let kind = kind_of(e, origin, name)?;
    let (launch, quoting) = launcher(e, kind, origin, name)?;
    let addr = address(e, kind, origin, name)?;
    if kind == "local" && (e.ship || e.zmqperf.is_some()) {
        return Err(bad(
            origin,
            name,
            if e.ship { "ship" } else { "zmqperf" },
            "",
            "the runner's own host runs the runner's own binary",
        ));
    }
    Ok(Host {
        name: name.to_string(),
        launch,
        quoting,
        addr,
        zmqperf: e.zmqperf.clone(),
        ship: e.ship,
        kind,
    })
}

/// How the entry starts its nodes: exactly one of `local`, `ssh`, `srun`, `exec` and
/// `launch`, with only the fields that go with it.
fn kind_of(e: &HostEntry, origin: &str, name: &str) -> Result<&'static str> {
    let given: Vec<&'static str> = [
        ("local", e.local),
        ("ssh", e.ssh.is_some()),
        ("srun", e.srun.is_some()),
        ("exec", e.exec.is_some()),
        ("launch", e.launch.is_some()),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(k, _)| *k)
    .collect();
    let how = "give exactly one of local = true, ssh = \"user@host\", srun = \"NODE\", exec = [ARGV...] or launch = [ARGV...] with quoting";
    let kind = match given.as_slice() {
        [one] => *one,
        [] => return Err(bad(origin, name, "launch", "(none)", how)),
        many => return Err(bad(origin, name, many[1], &many.join(" and "), how)),
    };
    if !e.ssh_options.is_empty() && kind != "ssh" {
        return Err(bad(
            origin,
            name,
            "ssh_options",
            &e.ssh_options.join(" "),
            "ssh_options go with ssh = \"user@host\"",
        ));
    }
    if let (Some(q), false) = (e.quoting, kind == "launch") {
        return Err(bad(
            origin,
            name,
            "quoting",
            &format!("{q:?}").to_lowercase(),
            format!("{kind} has its quoting built in; quoting goes with launch = [...]"),
        ));
    }
    Ok(kind)
}

/// The launcher's words for `kind`, and how it quotes a command.
fn launcher(e: &HostEntry, kind: &str, origin: &str, name: &str) -> Result<(Vec<String>, Quoting)> {
    let nonempty = |field: &str, v: &[String]| -> Result<()> {
        if v.is_empty() || v[0].trim().is_empty() {
            return Err(bad(
                origin,
                name,
                field,
                "[]",
                "an empty command; write the launcher's words, e.g. [\"ip\", \"netns\", \"exec\", \"b\"]",
            ));
        }
        Ok(())
    };
    Ok(match kind {
        "local" => (Vec::new(), Quoting::Argv),
        "ssh" => {
            let dest = e.ssh.clone().unwrap_or_default();
            if dest.trim().is_empty() || dest.starts_with('-') {
                return Err(bad(
                    origin,
                    name,
                    "ssh",
                    &dest,
                    "a destination such as \"user@host\"; options go in ssh_options",
                ));
            }
            let mut l = vec!["ssh".to_string()];
            l.extend(SSH_OPTIONS.iter().map(|s| s.to_string()));
            l.extend(e.ssh_options.iter().cloned());
            l.push(dest);
            (l, Quoting::Shell)
        }
        "srun" => {
            let node = e.srun.clone().unwrap_or_default();
            if node.trim().is_empty() {
                return Err(bad(origin, name, "srun", "", "a Slurm node name"));
            }
            let l = [
                "srun",
                "--overlap",
                "-N1",
                "-n1",
                "-w",
                &node,
                "--quiet",
                "--unbuffered",
            ];
            (l.iter().map(|s| s.to_string()).collect(), Quoting::Argv)
        }
        "exec" => {
            let l = e.exec.clone().unwrap_or_default();
            nonempty("exec", &l)?;
            (l, Quoting::Argv)
        }
        _ => {
            let l = e.launch.clone().unwrap_or_default();
            nonempty("launch", &l)?;
            (l, e.quoting.unwrap_or_default())
        }
    })
}

/// The address its nodes bind and the other hosts reach (the loopback for the runner's
/// own host when none is given).
fn address(e: &HostEntry, kind: &str, origin: &str, name: &str) -> Result<String> {
    Ok(match &e.addr {
        Some(a) if !a.trim().is_empty() && !a.contains("://") && !a.contains(' ') => a.clone(),
        Some(a) => {
            return Err(bad(
                origin,
                name,
                "addr",
                a,
                "an IP address or host name that the other hosts reach this one at (no scheme, no port)",
            ))
        }
        None if kind == "local" => "127.0.0.1".to_string(),
        None => {
            return Err(bad(
                origin,
                name,
                "addr",
                "(none)",
                "the address its nodes bind and the other hosts reach (addr = \"10.0.0.2\")",
            ))
        }
    })
}

impl Hosts {
    /// Resolves a table of entries (from `origin`, for errors).
    pub fn from_entries(origin: &str, entries: &BTreeMap<String, HostEntry>) -> Result<Hosts> {
        let mut by_name = BTreeMap::new();
        for (name, e) in entries {
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                return Err(bad(
                    origin,
                    name,
                    "",
                    name,
                    "a host name of letters, digits, '-', '_' and '.'",
                ));
            }
            by_name.insert(name.clone(), resolve(e, origin, name)?);
        }
        let locals: Vec<&str> = by_name
            .values()
            .filter(|h| h.is_local())
            .map(|h| h.name.as_str())
            .collect();
        if locals.len() > 1 {
            return Err(Error::invalid(
                &format!("{origin}: hosts"),
                &locals.join(", "),
                "only one host is the runner's own (local = true)",
            ));
        }
        Ok(Hosts { by_name })
    }

    /// Reads a hosts file: `[hosts.NAME]` tables (docs/hosts.md).
    pub fn load(path: &str) -> Result<Hosts> {
        let text = crate::parse::read_text_file("hosts file", path)?;
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            hosts: BTreeMap<String, HostEntry>,
        }
        let f: File = toml::from_str(&text).map_err(|e| {
            Error::invalid(
                &format!("hosts file {path}"),
                "",
                format!(
                    "{}; a hosts file is [hosts.NAME] tables, e.g. [hosts.b] ssh = \"user@b\" addr = \"10.0.0.2\" (docs/hosts.md)",
                    e.message()
                ),
            )
        })?;
        Hosts::from_entries(&format!("hosts file {path}"), &f.hosts)
    }

    /// Adds `other`'s hosts; a name in both must mean the same host.
    pub fn merge(&mut self, other: &Hosts, origin: &str) -> Result<()> {
        for (name, h) in &other.by_name {
            match self.by_name.get(name) {
                Some(mine) if mine != h => {
                    return Err(Error::invalid(
                        &format!("{origin}: hosts.{name}"),
                        name,
                        "defined twice, differently (the hosts file and the topology or workload file); keep one",
                    ))
                }
                _ => {
                    self.by_name.insert(name.clone(), h.clone());
                }
            }
        }
        Ok(())
    }

    /// The host called `name`, or an error naming the hosts there are.
    pub fn get(&self, at: &str, name: &str) -> Result<&Host> {
        self.by_name.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
            Error::invalid(
                at,
                name,
                if known.is_empty() {
                    "no hosts are defined; give --hosts FILE or a [hosts] table (docs/hosts.md)"
                        .to_string()
                } else {
                    format!("not a host of this run (hosts: {})", known.join(", "))
                },
            )
        })
    }

    /// The runner's own host entry, if the hosts name one.
    pub fn local(&self) -> Option<&Host> {
        self.by_name.values().find(|h| h.is_local())
    }

    /// Whether there are no hosts.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// The machines of the hosts this process has placed nodes on, as their nodes described
/// them in their hellos, by host name: what [`crate::runner::finish`] records in the run's
/// `environment.hosts`.
static SEEN: std::sync::Mutex<BTreeMap<String, HostEnvironment>> =
    std::sync::Mutex::new(BTreeMap::new());

/// Notes host `h`'s machine as a node there described it, named as the hosts file names
/// it and with the address the run reached it at.
pub fn saw(h: &Host, machine: &HostEnvironment) {
    let mut m = machine.clone();
    m.name = h.name.clone();
    m.addr = Some(h.addr.clone());
    SEEN.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(h.name.clone(), m);
}

/// The machines noted so far, by host name, emptying the list.
pub fn take_seen() -> Vec<HostEnvironment> {
    std::mem::take(&mut *SEEN.lock().unwrap_or_else(|p| p.into_inner()))
        .into_values()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Hosts> {
        #[derive(Deserialize)]
        struct F {
            hosts: BTreeMap<String, HostEntry>,
        }
        let f: F = toml::from_str(text).expect("toml");
        Hosts::from_entries("test", &f.hosts)
    }

    #[test]
    fn presets_become_launchers() {
        let h = parse(
            r#"
            [hosts.a]
            local = true
            addr = "10.0.0.1"
            [hosts.b]
            ssh = "bench@b"
            ssh_options = ["-i", "key"]
            addr = "10.0.0.2"
            ship = true
            [hosts.n17]
            srun = "n17"
            addr = "n17-ib0"
            [hosts.ns]
            exec = ["ip", "netns", "exec", "zb"]
            addr = "10.0.0.3"
            [hosts.pod]
            launch = ["kubectl", "exec", "-i", "p0", "--"]
            addr = "p0.zmqperf"
            zmqperf = "/zmqperf"
            "#,
        )
        .unwrap();
        let b = &h.by_name["b"];
        assert_eq!(b.quoting, Quoting::Shell);
        assert_eq!(b.launch.first().map(String::as_str), Some("ssh"));
        assert!(b.launch.contains(&"BatchMode=yes".to_string()));
        assert_eq!(&b.launch[b.launch.len() - 3..], ["-i", "key", "bench@b"]);
        let n = &h.by_name["n17"];
        assert_eq!(n.quoting, Quoting::Argv);
        assert!(n.launch.contains(&"--overlap".to_string()));
        assert_eq!(
            h.by_name["ns"].node_launch("/z").argv(""),
            ["ip", "netns", "exec", "zb", "/z", "__node"]
        );
        assert_eq!(
            b.command(&["kill".into(), "12".into()]).last().unwrap(),
            "'kill' '12'"
        );
        assert_eq!(h.local().unwrap().name, "a");
        assert_eq!(h.by_name["pod"].zmqperf.as_deref(), Some("/zmqperf"));
    }

    #[test]
    fn mistakes_name_the_host_and_field() {
        let e = |t: &str| parse(t).unwrap_err().to_string();
        let m = e("[hosts.b]\naddr = \"x\"");
        assert!(
            m.contains("hosts.b.launch") && m.contains("exactly one"),
            "{m}"
        );
        let m = e("[hosts.b]\nssh = \"b\"\nsrun = \"n\"\naddr = \"x\"");
        assert!(m.contains("ssh and srun"), "{m}");
        let m = e("[hosts.b]\nssh = \"b\"");
        assert!(m.contains("hosts.b.addr"), "{m}");
        let m = e("[hosts.b]\nexec = []\naddr = \"x\"");
        assert!(m.contains("hosts.b.exec") && m.contains("empty"), "{m}");
        let m = e("[hosts.b]\nssh = \"b\"\naddr = \"tcp://x:5\"");
        assert!(m.contains("no scheme"), "{m}");
        let m = e("[hosts.a]\nlocal = true\n[hosts.b]\nlocal = true");
        assert!(m.contains("only one"), "{m}");
        let h = parse("[hosts.b]\nssh = \"b\"\naddr = \"x\"").unwrap();
        let m = h.get("node 'x': host", "c").unwrap_err().to_string();
        assert!(m.contains("hosts: b"), "{m}");
    }
}
