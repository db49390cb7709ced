//! The history of runs in an embedded SQLite database: each case is committed as soon as it
//! completes, so a run that is interrupted or crashes keeps everything already measured.
//!
//! Layout (version 3, kept in `PRAGMA user_version`): a `runs` table (id, times, status,
//! command, the environment and workload as JSON, and the process writing it), a `cases`
//! table (run id, position, case id, whether it failed, the
//! [`CaseResult`](crate::model::CaseResult) as JSON), a `findings` table (run id,
//! position, finding id, severity, the [`Finding`](crate::model::Finding) as JSON), each
//! finding committed as soon as its experiment is done, and an `imports` table (for a run
//! taken in by `zmqperf import`: its original id, content hash, file, host and time).
//! A version 1 or 2 file is brought to version 3 in place when opened (a read-only
//! version 2 file is read as it is).
//! The [`Store`] is opened in `open`, written in `write` (and at a run's end in `record`),
//! read in `read` and imported into in `import`. It holds SQLite only: the comparison of
//! two runs is [`crate::compare`], the text of `history` and `compare` is in
//! [`crate::report`].

mod error;
pub mod import;
mod open;
mod owner;
mod path;
mod read;
mod record;
#[cfg(test)]
mod tests;
mod write;

pub use error::StoreError;
pub use import::ImportError;
pub use path::{default_db_path, default_is_current_dir, DB_ENV};
pub use read::RunListing;

use rusqlite::Connection;
use std::path::PathBuf;

/// An open history database.
///
/// Writers take `&mut self`; every write is one transaction, committed (and synced to disk)
/// before the call returns. Several processes may use the same file at once.
pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Device and inode of the file when it was opened: after a run is written, the path
    /// must still name this file ([`Store::check_kept`]).
    identity: Option<(u64, u64)>,
    /// Whether the file has the `imports` table (layout 3; a read-only file of layout 2
    /// is read without it).
    imports: bool,
    /// Whether its layout has the outcomes table (version 4; a file opened read-only may
    /// be older).
    outcomes: bool,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}
