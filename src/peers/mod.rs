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
    /// Message shapes it plays beyond one frame: `typed` (typed frames, a node's
    /// `message`) and `log` (log lines, a node's `log`); none by default.
    #[serde(default)]
    pub shapes: Vec<String>,
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
    /// The fingerprint of the peer's sources it was built from ([`Manifest::sources`]); a
    /// peer whose sources changed since is not ready until it is set up again.
    #[serde(default)]
    pub sources: String,
}

/// Where the `peers/` folder is looked for, in order: `$ZMQPERF_PEERS_DIR`; beside the
/// binary as installed from the release tarball (`../share/zmqperf/peers`) or copied with
/// it (`peers/` in its folder); the source tree it was built from (`cargo install --path`
/// or `--git` keeps it).
fn peers_dir_candidates() -> Vec<PathBuf> {
    if let Some(d) = std::env::var_os("ZMQPERF_PEERS_DIR").filter(|d| !d.is_empty()) {
        return vec![PathBuf::from(d)];
    }
    let mut out = Vec::new();
    if let Some(bin) = std::env::current_exe()
        .ok()
        .and_then(|e| e.canonicalize().ok())
    {
        if let Some(dir) = bin.parent() {
            out.push(dir.join("../share/zmqperf/peers"));
            out.push(dir.join("peers"));
        }
    }
    out.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("peers"));
    out
}

/// The `peers/` folder: the first of [`peers_dir_candidates`] that exists (else the last,
/// whose absence [`all`] explains).
pub fn peers_dir() -> PathBuf {
    let mut c = peers_dir_candidates();
    let found = c.iter().position(|d| d.is_dir());
    match found {
        Some(i) => c.swap_remove(i),
        None => c.pop().expect("one candidate at least"),
    }
}

/// The folder of the peers' caches: `$ZMQPERF_PEERS_CACHE`, else
/// `~/.cache/zmqperf/peers`.
pub fn cache_root() -> PathBuf {
    if let Some(d) = std::env::var_os("ZMQPERF_PEERS_CACHE").filter(|d| !d.is_empty()) {
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
            "reading the peers folder: looked in {}; set ZMQPERF_PEERS_DIR to a peers/ folder (the release tarball's share/zmqperf/peers, or the repository's peers/)",
            peers_dir_candidates()
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
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
    if let Some(bad) = m.shapes.iter().find(|s| !SHAPES.contains(&s.as_str())) {
        return Err(Error::invalid(
            &format!("{}: shapes", path.display()),
            bad,
            format!("a shape is one of {}", SHAPES.join(", ")),
        ));
    }
    m.dir = path.parent().expect("a file has a folder").to_path_buf();
    Ok(m)
}

/// The message shapes a peer's manifest may list: typed frames and log lines.
pub const SHAPES: [&str; 2] = ["typed", "log"];

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
        self.setup_record().filter(|r| r.sources == self.sources())
    }

    /// What its last setup wrote, whether or not its sources changed since.
    pub fn setup_record(&self) -> Option<Ready> {
        let text = std::fs::read_to_string(self.cache().join("ready.json")).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Why it is not ready, with the command that readies it (None when ready).
    pub fn not_ready(&self) -> Option<String> {
        match self.setup_record() {
            Some(r) if r.sources == self.sources() => None,
            Some(_) => Some(format!(
                "peer {} changed since it was set up; run `zmqperf peers setup {}`",
                self.name, self.name
            )),
            None => Some(format!(
                "peer {} is not set up here; run `zmqperf peers setup {}` first",
                self.name, self.name
            )),
        }
    }

    /// The command of a node, once the peer is ready.
    pub fn command(&self) -> Result<Vec<String>> {
        if let Some(why) = self.not_ready() {
            return Err(Error::invalid("impl", &self.name, why));
        }
        Ok(self.expand(&self.run))
    }

    /// A fingerprint of its sources: every file of its folder and of the folders of
    /// `peers/` its commands name (`{peers}/go`), paths and contents (FNV-1a, 64 bits).
    /// Build output and hidden files are left out.
    pub fn sources(&self) -> String {
        self.sources_under(&peers_dir())
    }

    fn sources_under(&self, root: &Path) -> String {
        let mut dirs = vec![self.dir.clone()];
        let argv = self
            .setup
            .iter()
            .chain([&self.run, &self.test, &self.version]);
        for a in argv.flatten() {
            for (i, _) in a.match_indices("{peers}/") {
                let rest = &a[i + "{peers}/".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
                    .collect();
                let d = root.join(&name);
                if !name.is_empty() && d.is_dir() && !dirs.contains(&d) {
                    dirs.push(d);
                }
            }
        }
        let mut files = Vec::new();
        for d in &dirs {
            collect_files(d, &mut files);
        }
        files.sort();
        let mut h = Fnv::default();
        for f in &files {
            h.eat(
                f.strip_prefix(root)
                    .unwrap_or(f)
                    .to_string_lossy()
                    .as_bytes(),
            );
            h.eat(&std::fs::read(f).unwrap_or_default());
        }
        format!("{:016x}", h.0)
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

/// The files under `dir`, without build output (`target`, `node_modules`, `__pycache__`)
/// and hidden entries.
fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || matches!(&*name, "target" | "node_modules" | "__pycache__") {
            continue;
        }
        let path = e.path();
        if path.is_dir() {
            collect_files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// FNV-1a, 64 bits: a stable fingerprint (the standard library's hasher may change).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn eat(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        // A separator, so ("ab", "c") and ("a", "bc") differ.
        self.0 = (self.0 ^ 0xff).wrapping_mul(0x0100_0000_01b3);
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
            shapes: vec![],
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

    #[test]
    fn the_sources_fingerprint_follows_the_files_a_peer_is_built_from() {
        let root = std::env::temp_dir().join(format!("zmqperf-sources-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for d in ["x/src", "x/target", "shared", "other"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        let m = Manifest {
            setup: vec![vec!["build".into(), "{peers}/shared/cmd".into()]],
            dir: root.join("x"),
            ..toml::from_str(
                r#"name = "x"
language = "L"
binding = "b"
engine = "e"
setup = []
test = []
version = []
run = []
transports = []
roles = []
sockets = []"#,
            )
            .unwrap()
        };
        let write = |f: &str, text: &str| std::fs::write(root.join(f), text).unwrap();
        write("x/src/main.c", "int main;");
        write("shared/lib.go", "package x");
        write("other/a.py", "pass");
        let first = m.sources_under(&root);
        assert_eq!(
            first,
            m.sources_under(&root),
            "the same files, the same print"
        );
        // Build output and folders it does not name change nothing.
        write("x/target/out.o", "obj");
        write("other/a.py", "print()");
        assert_eq!(first, m.sources_under(&root));
        // Its own files and the shared folder its setup names do.
        write("x/src/main.c", "int main();");
        let second = m.sources_under(&root);
        assert_ne!(first, second);
        write("shared/lib.go", "package y");
        assert_ne!(second, m.sources_under(&root));
        let _ = std::fs::remove_dir_all(&root);
    }
}
