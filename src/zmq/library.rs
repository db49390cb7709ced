//! Which libzmq a process measures: the one built into zmqperf (`bundled`, the default),
//! Debian's or the distribution's shared library (`system`), or any shared library by path.
//! Chosen once, before the first socket, by `--libzmq` or `ZMQPERF_LIBZMQ`; child processes
//! inherit the choice through the environment.

use super::ffi::{Api, DraftApi, PeerApi};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable that chooses the libzmq (same values as `--libzmq`).
pub const LIBZMQ_ENV: &str = "ZMQPERF_LIBZMQ";

/// The shared library `system` loads (Debian's package libzmq5 installs it).
const SYSTEM_SONAME: &str = "libzmq.so.5";

/// What was built into zmqperf (written by build.rs).
pub mod built {
    include!(concat!(env!("OUT_DIR"), "/libzmq_build.rs"));
}

/// The capabilities asked of `zmq_has`, as libzmq spells them, and as zmqperf says them
/// (libzmq asks for the WebSocket transports in capitals).
const CAPABILITIES: &[(&str, &str)] = &[
    ("ipc", "ipc"),
    ("pgm", "pgm"),
    ("tipc", "tipc"),
    ("norm", "norm"),
    ("curve", "curve"),
    ("gssapi", "gssapi"),
    ("draft", "draft"),
    ("WS", "ws"),
    ("WSS", "wss"),
];

/// The library a run measured: recorded with every result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LibraryInfo {
    /// `bundled`, `system` or `path`.
    pub source: String,
    /// The file: the shared library loaded, or for `bundled` the zmqperf executable it is
    /// linked into.
    pub path: String,
    /// `zmq_version`, e.g. `4.3.5`.
    pub version: String,
    /// The capabilities `zmq_has` reports, e.g. `curve`, `ipc`.
    pub capabilities: Vec<String>,
    /// SHA-256 of the library file (for `bundled`, of the libzmq.a linked in).
    pub sha256: String,
    /// How it was built, where known (for `bundled`: the CMake options found).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub build: String,
}

struct Loaded {
    api: Api,
    /// The draft API's functions, when the library exports them.
    draft: Option<DraftApi>,
    /// PEER's connect, when the library exports it.
    peer: Option<PeerApi>,
    info: LibraryInfo,
}

static LOADED: OnceLock<Loaded> = OnceLock::new();

/// The table of libzmq functions: the chosen library, or the bundled one if none was
/// chosen before the first call.
#[inline]
pub fn api() -> &'static Api {
    &LOADED.get_or_init(bundled).api
}

/// The draft API's functions of the library this process measures, if it has them.
pub fn draft_api() -> Option<&'static DraftApi> {
    LOADED.get_or_init(bundled).draft.as_ref()
}

/// PEER's connect of the library this process measures, if it has it.
pub fn peer_api() -> Option<&'static PeerApi> {
    LOADED.get_or_init(bundled).peer.as_ref()
}

/// The library this process measures.
pub fn info() -> &'static LibraryInfo {
    &LOADED.get_or_init(bundled).info
}

fn bundled() -> Loaded {
    let api = Api::linked();
    let path = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let build = format!(
        "{}, built by zmqperf with libzmq's CMake, static; {}; libsodium {}",
        built::SOURCE,
        built::FEATURES.join(", "),
        built::SODIUM_VERSION
    );
    let info = describe(&api, "bundled", path, built::SHA256.to_string(), build);
    if super::layout::holds(&api) {
        super::layout::use_direct();
    }
    Loaded {
        api,
        draft: Some(DraftApi::linked()),
        peer: Some(PeerApi::linked()),
        info,
    }
}

/// Why a library could not be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("--libzmq {0:?}: expected `bundled`, `system` or the path of a libzmq shared library (e.g. /usr/lib/x86_64-linux-gnu/libzmq.so.5)")]
    Unknown(String),
    #[error("--libzmq system: {0} could not be loaded ({1}); install the distribution's libzmq (Debian: apt-get install libzmq5) or give the library's path")]
    NoSystem(String, String),
    #[error(
        "--libzmq {0}: not loaded ({1}); give the path of a libzmq shared library (libzmq.so.5)"
    )]
    Open(String, String),
    #[error("--libzmq {0}: not a libzmq this version of zmqperf can use: it has no {1}")]
    Missing(String, &'static str),
    #[error("--libzmq {0}: libzmq {1} is too old; zmqperf needs libzmq 4.2 or newer")]
    TooOld(String, String),
    #[error("the libzmq was already chosen ({0}) before --libzmq {1}")]
    AlreadyChosen(String, String),
}

/// What a node process must choose to load the library this process measures: None for the
/// bundled one, `system`, or the library's absolute path.
pub fn choice() -> Option<String> {
    let l = &LOADED.get()?.info;
    match l.source.as_str() {
        "bundled" => None,
        "path" => Some(l.path.clone()),
        other => Some(other.to_string()),
    }
}

/// Chooses the libzmq for this process: `bundled`, `system` or a path. Must come before
/// the first socket; choosing the same library twice is fine.
pub fn choose(choice: &str) -> Result<&'static LibraryInfo, LoadError> {
    let choice = choice.trim();
    if choice.is_empty() || choice == "bundled" {
        let l = info();
        return if l.source == "bundled" {
            Ok(l)
        } else {
            Err(LoadError::AlreadyChosen(l.path.clone(), "bundled".into()))
        };
    }
    let (source, file) = match choice {
        "system" => ("system", SYSTEM_SONAME.to_string()),
        p if p.contains('/') || p.ends_with(".so") || p.contains(".so.") => ("path", p.to_string()),
        other => return Err(LoadError::Unknown(other.to_string())),
    };
    if let Some(l) = LOADED.get() {
        return if l.info.source == source && (source == "system" || l.info.path == file) {
            Ok(&l.info)
        } else {
            Err(LoadError::AlreadyChosen(l.info.path.clone(), choice.into()))
        };
    }
    let loaded = open(source, &file)?;
    let _ = LOADED.set(loaded);
    Ok(info())
}

fn open(source: &str, file: &str) -> Result<Loaded, LoadError> {
    let c = CString::new(file).map_err(|_| LoadError::Unknown(file.into()))?;
    // SAFETY: dlopen with a valid C string; RTLD_LOCAL keeps the library's symbols (and its
    // own libsodium) apart from the libzmq linked into zmqperf, and RTLD_DEEPBIND makes the
    // library resolve its own symbols first.
    let handle = unsafe {
        libc::dlopen(
            c.as_ptr(),
            libc::RTLD_NOW | libc::RTLD_LOCAL | libc::RTLD_DEEPBIND,
        )
    };
    if handle.is_null() {
        // SAFETY: dlerror returns a message owned by libc or null.
        let why = unsafe {
            let e = libc::dlerror();
            if e.is_null() {
                "unknown error".to_string()
            } else {
                CStr::from_ptr(e).to_string_lossy().into_owned()
            }
        };
        return Err(if source == "system" {
            LoadError::NoSystem(file.into(), why)
        } else {
            LoadError::Open(file.into(), why)
        });
    }
    // SAFETY: the handle is live and never closed.
    let api =
        unsafe { Api::from_library(handle) }.map_err(|f| LoadError::Missing(file.into(), f))?;
    let path = loaded_path(&api).unwrap_or_else(|| PathBuf::from(file));
    let sha = std::fs::read(&path)
        .map(|b| hex(&Sha256::digest(b)))
        .unwrap_or_default();
    let info = describe(&api, source, path.display().to_string(), sha, String::new());
    let mut parts = info
        .version
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if (major, minor) < (4, 2) {
        return Err(LoadError::TooOld(file.into(), info.version));
    }
    // SAFETY: as above; a library built without the draft API lacks these, and says so.
    let draft = unsafe { DraftApi::from_library(handle) }.ok();
    // SAFETY: as above.
    let peer = unsafe { PeerApi::from_library(handle) }.ok();
    Ok(Loaded {
        api,
        draft,
        peer,
        info,
    })
}

/// The file a loaded function comes from (the library's real path, for the hash and the
/// record).
fn loaded_path(api: &Api) -> Option<PathBuf> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr fills info for an address inside a loaded object; dli_fname is a C
    // string owned by the loader.
    let rc = unsafe { libc::dladdr(api.zmq_version as *const std::ffi::c_void, &mut info) };
    if rc == 0 || info.dli_fname.is_null() {
        return None;
    }
    let name = unsafe { CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned();
    std::fs::canonicalize(Path::new(&name)).ok()
}

fn describe(api: &Api, source: &str, path: String, sha256: String, build: String) -> LibraryInfo {
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: zmq_version writes three ints.
    unsafe { (api.zmq_version)(&mut a, &mut b, &mut c) };
    let capabilities = CAPABILITIES
        .iter()
        .filter(|(asked, _)| {
            let name = CString::new(*asked).unwrap();
            // SAFETY: a valid C string.
            unsafe { (api.zmq_has)(name.as_ptr()) == 1 }
        })
        .map(|(_, said)| said.to_string())
        .collect();
    LibraryInfo {
        source: source.into(),
        path,
        version: format!("{a}.{b}.{c}"),
        capabilities,
        sha256,
        build,
    }
}

impl LibraryInfo {
    /// Whether `zmq_has` said yes to this capability.
    pub fn has(&self, capability: &str) -> bool {
        self.capabilities.iter().any(|c| c == capability)
    }

    /// One line: `libzmq 4.3.5 (bundled; curve, ipc; sha256 1a2b3c4d5e6f)`.
    pub fn summary(&self) -> String {
        format!(
            "libzmq {} ({}: {}; {}; sha256 {})",
            self.version,
            self.source,
            self.path,
            self.capabilities.join(", "),
            &self.sha256[..self.sha256.len().min(12)]
        )
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
