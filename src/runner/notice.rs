//! What the library tells the user while it works (a case left out of a plan, a binary
//! being shipped, a node still awaited, the recording session's news) as values, not
//! words: the front-end installs the one printer that words them ([`set_printer`]), so no
//! text a user reads is written here. Without a printer (a library user, a unit test)
//! notices are dropped.

use crate::endpoint::Transport;
use crate::store::StoreError;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

/// What the library has to tell the user while it works; the front-end words it (on
/// stderr).
#[derive(Debug)]
pub enum Notice<'a> {
    /// A case could not be written when it completed; it and the cases after it are kept
    /// and written at the end of the run.
    CaseKept {
        /// The case's id.
        case_id: &'a str,
        /// Why the write failed.
        error: &'a StoreError,
    },
    /// The history is busy at the end of the run: the session waits for it.
    Waiting {
        /// SQLite's reason.
        error: &'a StoreError,
        /// The cases still to be written.
        cases: usize,
        /// The longest wait.
        patience: Duration,
    },
    /// The run is in the history.
    Recorded {
        /// The run's id.
        run_id: &'a str,
        /// The history database.
        path: &'a Path,
        /// Whether the history is in the current folder only because HOME is not set.
        in_current_folder: bool,
    },
    /// A case of a plan over implementations is run without one of them.
    RunWithout {
        /// The case's id.
        case_id: &'a str,
        /// The implementation left out.
        implementation: &'a str,
        /// Why (the peer's gap).
        why: &'a str,
    },
    /// A case is left out of `--host-pairs`: its transport cannot cross hosts.
    LeftOutOfHostPairs {
        /// The case's id.
        case_id: &'a str,
        /// Its transport.
        transport: Transport,
    },
    /// The binary is being copied to a host.
    Shipping {
        /// The host's name.
        host: &'a str,
        /// Bytes of the compressed copy.
        bytes: usize,
    },
    /// The binary is on a host.
    Shipped {
        /// The host's name.
        host: &'a str,
        /// Its path there.
        remote: &'a str,
        /// The copy's wall time.
        took: Duration,
    },
    /// Neither strip nor objcopy is on PATH: the binary is shipped with its debug
    /// information (said once per process).
    ShippingUnstripped {
        /// The binary.
        exe: &'a Path,
    },
    /// The stream has ended and nodes are still awaited.
    StillWaiting {
        /// Since the end of the stream.
        since: Duration,
        /// Each node awaited and when it will be stopped, s.
        late: &'a [(String, u64)],
    },
    /// A node process read a line from the runner that is not a control message.
    IgnoredLine {
        /// The line.
        line: &'a str,
        /// The oldest and newest control protocol versions this node speaks.
        versions: (u32, u32),
    },
}

static PRINTER: OnceLock<fn(&Notice)> = OnceLock::new();

/// Installs the printer of every notice (once, at the start of the front-end; a second
/// call is ignored).
pub fn set_printer(f: fn(&Notice)) {
    let _ = PRINTER.set(f);
}

/// Hands `n` to the printer, if one is installed.
pub fn tell(n: &Notice) {
    if let Some(f) = PRINTER.get() {
        f(n);
    }
}
