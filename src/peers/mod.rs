//! Peers in other languages (docs/peers.md): their manifests (`peers/<name>/peer.toml`),
//! their cache folders, whether they are ready, setting them up, and the command that plays
//! a node. The runner places a node with `impl = "<name>"` through [`Manifest::command`].

mod setup;

pub use setup::{setup, SetupOutcome};

use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::topology::{Role, SocketType};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The name of zmqperf's own core among the implementations (not a peer).
pub const CORE: &str = "zmqperf";

/// A command a peer needs before its setup, and what to install when it is missing.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Require {
    /// A program looked up on PATH.
    pub command: String,
    /// What to install, e.g. `apt install ruby ruby-ffi-rzmq`.
    pub install: String,
}

/// A peer's manifest, `peers/<name>/peer.toml`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Its name (`impl = "<name>"`).
    pub name: String,
    /// Other names it answers to (`python`, `java`).
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Its language.
    pub language: String,
    /// The binding it uses.
    pub binding: String,
    /// The ZMTP implementation underneath.
    pub engine: String,
    /// Commands that must exist before the setup.
    #[serde(default)]
    pub requires: Vec<Require>,
    /// Setup steps, each an argv.
    #[serde(default)]
    pub setup: Vec<Vec<String>>,
    /// The conformance test.
    pub test: Vec<String>,
    /// Prints one JSON line with `binding` and `engine` versions.
    pub version: Vec<String>,
    /// The command of a node (the spec is appended).
    pub run: Vec<String>,
    /// Transports it has.
    pub transports: Vec<String>,
    /// Roles it plays.
    pub roles: Vec<Role>,
    /// Socket types it opens.
    pub sockets: Vec<String>,
    /// Whether it reaches ipc endpoints in Linux's abstract namespace (`ipc://@name`);
    /// when not, the runner gives the case ipc paths in the file system.
    #[serde(default = "yes")]
    pub abstract_ipc: bool,
    /// Its folder.
    #[serde(skip)]
    pub dir: PathBuf,
}

fn yes() -> bool {
    true
}

/// What `peers setup` wrote once a peer passed its conformance test.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct Ready {
    /// The binding's version, e.g. `pyzmq 26.2.0`.
    pub binding: String,
    /// The engine's version, e.g. `libzmq 4.3.5`.
    pub engine: String,
    /// Seconds the setup and test took.
    pub setup_s: f64,
    /// When (seconds since the Unix epoch).
    pub at_unix: u64,
}

/// The `peers/` folder: `$ZMQPERF_PEERS_DIR`, else the one of the source tree this binary
/// was built from.
pub fn peers_dir() -> PathBuf {
    match std::env::var_os("ZMQPERF_PEERS_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("peers"),
    }
}

/// The folder of the peers' caches: `$ZMQPERF_PEERS_CACHE`, else
/// `~/.cache/zmqperf/peers`.
pub fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("ZMQPERF_PEERS_CACHE") {
        return PathBuf::from(d);
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
    Path::new(&home).join(".cache/zmqperf/peers")
}

/// The `spec/` folder of the source tree (the header vectors).
fn spec_dir() -> PathBuf {
    peers_dir()
        .parent()
        .map(|p| p.join("spec"))
        .unwrap_or_else(|| PathBuf::from("spec"))
}

/// Every peer, by name.
pub fn all() -> Result<Vec<Manifest>> {
    let dir = peers_dir();
    let entries = std::fs::read_dir(&dir).map_err(|e| Error::Io {
        op: format!(
            "reading the peers folder {} (set ZMQPERF_PEERS_DIR to the repository's peers/)",
            dir.display()
        ),
        source: e,
    })?;
    let mut out = Vec::new();
    for e in entries.flatten() {
        let path = e.path().join("peer.toml");
        if path.is_file() {
            out.push(load(&path)?);
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn load(path: &Path) -> Result<Manifest> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        op: format!("reading {}", path.display()),
        source: e,
    })?;
    let mut m: Manifest = toml::from_str(&text).map_err(|e| {
        Error::invalid(
            &path.display().to_string(),
            "the manifest",
            format!("{e}; see docs/peers.md for its fields"),
        )
    })?;
    m.dir = path.parent().expect("a file has a folder").to_path_buf();
    Ok(m)
}

/// The peer called `name` (or one of its aliases).
pub fn get(name: &str) -> Result<Manifest> {
    let all = all()?;
    let names: Vec<&str> = all.iter().map(|m| m.name.as_str()).collect();
    let hint = format!(
        "use {CORE} (zmqperf's own core) or one of the peers: {}",
        names.join(", ")
    );
    all.iter()
        .find(|m| m.name == name || m.aliases.iter().any(|a| a == name))
        .cloned()
        .ok_or_else(|| Error::invalid("impl", name, hint))
}

/// The canonical name of an implementation: `zmqperf`, or the peer's own name for a name
/// or alias.
pub fn canonical(name: &str) -> Result<String> {
    if name == CORE {
        return Ok(CORE.to_string());
    }
    get(name).map(|m| m.name)
}

/// [`canonical`] for a command-line option: an unknown name is an error of `flag`.
pub fn canonical_for(flag: &str, name: &str) -> Result<String> {
    canonical(name).map_err(|e| match e {
        Error::InvalidValue { value, reason, .. } => Error::invalid(flag, &value, reason),
        other => other,
    })
}

impl Manifest {
    /// Its cache folder.
    pub fn cache(&self) -> PathBuf {
        cache_root().join(&self.name)
    }

    /// An argv with its placeholders filled in.
    pub fn expand(&self, argv: &[String]) -> Vec<String> {
        let peers = peers_dir();
        argv.iter()
            .map(|a| {
                a.replace("{peer}", &self.dir.display().to_string())
                    .replace("{peers}", &peers.display().to_string())
                    .replace("{cache}", &self.cache().display().to_string())
                    .replace("{spec}", &spec_dir().display().to_string())
            })
            .collect()
    }

    /// What its setup wrote, if it passed.
    pub fn ready(&self) -> Option<Ready> {
        let text = std::fs::read_to_string(self.cache().join("ready.json")).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The command of a node, once the peer is ready.
    pub fn command(&self) -> Result<Vec<String>> {
        if self.ready().is_none() {
            return Err(Error::invalid(
                "impl",
                &self.name,
                format!(
                    "peer {} is not set up here; run `zmqperf peers setup {}` first",
                    self.name, self.name
                ),
            ));
        }
        Ok(self.expand(&self.run))
    }

    /// `name version (engine)` once ready, else the name.
    pub fn label(&self) -> String {
        match self.ready() {
            Some(r) => format!("{} ({})", r.binding, r.engine),
            None => self.name.clone(),
        }
    }

    /// Whether it can play `role` on a socket of `kind` over `transport`; the error names
    /// what it lacks.
    pub fn plays(&self, role: Role, kinds: &[SocketType], transport: Transport) -> Result<()> {
        let gap = |what: String| {
            Err(Error::invalid(
                "impl",
                &self.name,
                format!(
                    "peer {} does not play {what}; its manifest ({}) lists what it plays",
                    self.name,
                    self.dir.join("peer.toml").display()
                ),
            ))
        };
        if !self.roles.contains(&role) {
            return gap(format!("the role {}", role.name()));
        }
        for k in kinds {
            let name = k.name();
            // A publishing PUB is opened as an XPUB by a source that waits for subscribers.
            if !self.sockets.iter().any(|s| s.eq_ignore_ascii_case(name)) {
                return gap(format!("{name} sockets"));
            }
        }
        let t = transport.to_string();
        if !self.transports.contains(&t) {
            return gap(format!("the {t} transport"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_in() {
        let m = Manifest {
            name: "x".into(),
            aliases: vec![],
            language: "L".into(),
            binding: "b".into(),
            engine: "e".into(),
            requires: vec![],
            setup: vec![],
            test: vec![],
            version: vec![],
            run: vec!["{cache}/bin/x".into(), "{peer}/main".into()],
            transports: vec!["tcp".into()],
            roles: vec![Role::Source],
            sockets: vec!["PUSH".into()],
            abstract_ipc: true,
            dir: PathBuf::from("/p/x"),
        };
        let run = m.expand(&m.run);
        assert!(run[0].ends_with("/x/bin/x"), "{run:?}");
        assert_eq!(run[1], "/p/x/main");
        assert!(m
            .plays(Role::Source, &[SocketType::Push], Transport::Tcp)
            .is_ok());
        let e = m
            .plays(Role::Sink, &[SocketType::Pull], Transport::Tcp)
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not play the role sink"), "{e}");
        let e = m
            .plays(Role::Source, &[SocketType::Push], Transport::Ipc)
            .unwrap_err()
            .to_string();
        assert!(e.contains("the ipc transport"), "{e}");
    }
}
