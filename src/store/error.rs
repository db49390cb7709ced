//! Errors of the history store, each naming the database file or run selector at fault and
//! the fix, with the exit code the binary returns for it.

use std::path::{Path, PathBuf};

/// Everything that can go wrong reading or writing the history of runs.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file cannot be created or opened, or it is not a zmqperf history.
    #[error("cannot open history database {}: {reason}; pass --db PATH or set ZMQPERF_DB", .path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// What went wrong, in words.
        reason: String,
    },
    /// `Store::open_existing` found no file at the path.
    #[error("no history database at {}: runs are recorded there by `zmqperf run`; pass --db PATH or set ZMQPERF_DB if yours lives elsewhere", .path.display())]
    Missing {
        /// The path looked at.
        path: PathBuf,
    },
    /// The database was written by a newer zmqperf whose layout this build does not know.
    #[error("history database {} has layout version {found}, newer than this zmqperf reads (up to {supported}); upgrade zmqperf, or pass --db PATH or set ZMQPERF_DB to use another file", .path.display())]
    TooNew {
        /// The database file.
        path: PathBuf,
        /// Layout version found in the file (`PRAGMA user_version`).
        found: i64,
        /// Highest layout version this build reads.
        supported: i64,
    },
    /// A statement failed on an open database.
    #[error("history database {}: {op} failed: {source}{}", .path.display(), sqlite_hint(.source))]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What the store was doing, e.g. "recording case latency/reqrep/tcp/64".
        op: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// A stored record cannot be decoded.
    #[error("history database {}: {what} cannot be read ({reason}); it may have been written by another zmqperf version", .path.display())]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// Which record, e.g. "case #2 of run 20261121-221530-4f2a".
        what: String,
        /// The decoder's message.
        reason: String,
    },
    /// A case or finding holds a value the stored JSON cannot carry back (a number that is
    /// not finite).
    #[error("cannot record {what} {case_id} in the history: {reason}")]
    Encode {
        /// "case" or "finding".
        what: &'static str,
        /// The case's or finding's id.
        case_id: String,
        /// Why it cannot be stored.
        reason: String,
    },
    /// `begin_run` or `save_run` was given a run id the history already holds.
    #[error("run {run_id} is already in history database {}; every run needs a new id", .path.display())]
    DuplicateRun {
        /// The database file.
        path: PathBuf,
        /// The id given.
        run_id: String,
    },
    /// `finish_run` was given a status other than the four a run can have.
    #[error("invalid run status '{status}': use complete, interrupted, partial or running")]
    InvalidStatus {
        /// The status given.
        status: String,
    },
    /// `--db` names something that is not a regular file (a folder, a named pipe, a device,
    /// a socket): SQLite would fail on it, or block opening it.
    #[error("history database {}: it is {kind}, not a file; pass --db PATH (or set ZMQPERF_DB) naming a regular file, or a path where one can be created", .path.display())]
    NotAFile {
        /// The path given.
        path: PathBuf,
        /// What it is, in words ("a named pipe (FIFO)", "a folder", ...).
        kind: &'static str,
    },
    /// After the run was written, its path no longer names a sound copy of the file that
    /// was written: it was deleted, replaced by another file, or damaged.
    #[error("history database {}: {what} while this run was written, so the run is not kept there; the report printed has every figure: write it with --format json -o FILE and `zmqperf import FILE` into a sound history (pass --db PATH for a new file)", .path.display())]
    Gone {
        /// The database file.
        path: PathBuf,
        /// What happened to it, in words.
        what: String,
    },
    /// Cases of a run that could not be written when it ended (the disk full, the file
    /// locked by another process past zmqperf's patience, ...).
    #[error("{} could not be recorded in {}: {source}; {}", what_missing(.run_id, *.missing, *.total), .path.display(), marked_words(.marked.as_deref(), *.missing == *.total))]
    Unrecorded {
        /// The database file.
        path: PathBuf,
        /// The run.
        run_id: String,
        /// Cases not in the history.
        missing: usize,
        /// Cases the run has.
        total: usize,
        /// The status the run is recorded with (`partial` when cases are missing), None
        /// when its end could not be recorded either.
        marked: Option<String>,
        /// The first failure.
        #[source]
        source: Box<StoreError>,
    },
    /// A run selector names no run.
    #[error("run '{selector}' not found: {reason}; list the runs with `zmqperf history`")]
    NotFound {
        /// The selector as given (a run id, a prefix, `last` or `last~N`).
        selector: String,
        /// Why nothing matched, naming the database.
        reason: String,
    },
    /// A run id prefix matches more than one run.
    #[error("run '{selector}' is ambiguous: it begins {count} run ids ({}{}); give more of the id, or list the runs with `zmqperf history`", .candidates.join(", "), if *.count > .candidates.len() { ", ..." } else { "" })]
    Ambiguous {
        /// The prefix as given.
        selector: String,
        /// How many runs it matches.
        count: usize,
        /// The first few of them.
        candidates: Vec<String>,
    },
    /// A run selector that is not written the way selectors are.
    #[error("bad run selector '{selector}': {reason}; write a run id, a unique prefix of one, `last` or `last~N` (N runs before the last), or list the runs with `zmqperf history`")]
    BadSelector {
        /// The selector as given.
        selector: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A threshold that is not a percentage of zero or more.
    #[error("invalid percentage '{value}': {reason}; write it like 5% or 2.5")]
    InvalidPercent {
        /// The text given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl crate::error::CodedError for StoreError {
    fn exit_code(&self) -> i32 {
        StoreError::exit_code(self)
    }
}

impl From<StoreError> for crate::error::Error {
    fn from(e: StoreError) -> Self {
        crate::error::Error::Store(Box::new(e))
    }
}

impl StoreError {
    /// The process exit code for this error: 14 when a selector names no single run, 3 for
    /// a malformed percentage (an invalid value, as elsewhere in zmqperf), 13 for every
    /// other failure of the history database.
    pub fn exit_code(&self) -> i32 {
        match self {
            StoreError::NotFound { .. }
            | StoreError::Ambiguous { .. }
            | StoreError::BadSelector { .. } => 14,
            StoreError::InvalidPercent { .. } => 3,
            _ => 13,
        }
    }

    /// Whether this failure may pass if tried again later: another process holds the
    /// database locked. A full disk, a read-only or damaged file do not go away by waiting.
    pub fn is_busy(&self) -> bool {
        use rusqlite::ErrorCode as C;
        matches!(
            self,
            StoreError::Sqlite { source, .. }
                if matches!(source.sqlite_error_code(), Some(C::DatabaseBusy | C::DatabaseLocked))
        )
    }

    /// Shorthand for a [`StoreError::Sqlite`].
    pub(crate) fn sqlite(path: &Path, op: impl Into<String>, source: rusqlite::Error) -> Self {
        StoreError::Sqlite {
            path: path.to_path_buf(),
            op: op.into(),
            source,
        }
    }
}

/// A hint appended to SQLite failures: what the failure means and its cure, one per kind
/// (a full disk is not a lock, and waiting does not cure it).
fn sqlite_hint(e: &rusqlite::Error) -> &'static str {
    use rusqlite::ErrorCode as C;
    match e.sqlite_error_code() {
        Some(C::DatabaseBusy | C::DatabaseLocked) => {
            "; another process held the database locked for longer than zmqperf waits: try again when it is done (`fuser FILE` names it)"
        }
        Some(C::ReadOnly | C::PermissionDenied) => {
            "; the file is not writable: fix its permissions, or pass --db PATH or set ZMQPERF_DB"
        }
        Some(C::DiskFull) => {
            "; the disk holding it is full: free some space there, or pass --db PATH on another disk"
        }
        Some(C::DatabaseCorrupt | C::NotADatabase) => {
            "; the file is damaged: move it aside to start a new history, or pass --db PATH"
        }
        Some(C::SystemIoFailure) => {
            "; the disk reported an I/O error: check it (dmesg), or pass --db PATH on another disk"
        }
        Some(C::CannotOpen) => {
            "; the file cannot be opened any more (was it or its folder removed?): pass --db PATH"
        }
        Some(C::OutOfMemory) => "; SQLite ran out of memory: free some memory and try again",
        Some(C::TooBig) => "; a record is larger than SQLite takes: report this as a bug",
        _ => "",
    }
}

/// The start of an [`StoreError::Unrecorded`] message: what is missing.
fn what_missing(run_id: &str, missing: usize, total: usize) -> String {
    if missing == 0 {
        format!("the end of run {run_id}")
    } else {
        format!("{missing} of {total} cases of run {run_id}")
    }
}

/// The end of an [`StoreError::Unrecorded`] message: what the history holds of the run.
fn marked_words(marked: Option<&str>, none_in: bool) -> String {
    match marked {
        Some(status) if none_in => format!(
            "the run is recorded as {status}, without its cases; the report printed has them all"
        ),
        Some(status) => format!(
            "the run is recorded as {status} with the other cases; the report printed has them all"
        ),
        None => "its end could not be recorded either: `zmqperf history` shows it running while this process lives, interrupted after; the report printed has every case".to_string(),
    }
}

/// Words for an SQLite failure while opening, for [`StoreError::Open`].
pub(crate) fn open_reason(e: &rusqlite::Error) -> String {
    use rusqlite::ErrorCode as C;
    match e.sqlite_error_code() {
        Some(C::NotADatabase) => "the file is not an SQLite database".to_string(),
        Some(C::ReadOnly | C::PermissionDenied) => format!("permission denied ({e})"),
        Some(C::CannotOpen) => {
            format!("the file cannot be opened or created ({e}); check that its folder is writable")
        }
        Some(C::DatabaseBusy | C::DatabaseLocked) => {
            format!("it stayed locked by another process ({e}); try again when it is done")
        }
        Some(C::DiskFull) => format!(
            "the disk holding it is full ({e}); free some space there, or pass --db PATH on another disk"
        ),
        _ => e.to_string(),
    }
}
