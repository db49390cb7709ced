//! The history of runs in an embedded SQLite database: each case is committed as soon as it
//! completes, so a run that is interrupted or crashes keeps everything already measured.
//!
//! Layout (version 2, kept in `PRAGMA user_version`): a `runs` table (id, times, status,
//! command, the environment and workload as JSON, and the process writing it), a `cases`
//! table (run id, position, case id, whether it failed, the
//! [`CaseResult`](crate::model::CaseResult) as JSON) and a `findings` table (run id,
//! position, finding id, severity, the [`Finding`](crate::model::Finding) as JSON), each
//! finding committed as soon as its experiment is done. A version 1 file (no `findings`
//! table) is brought to version 2 in place when opened.
//! The [`Store`] is opened in `open`, written in `write` and read in `read`;
//! [`compare`] and the text formats for `history` and `compare` live here too.

mod compare;
mod error;
mod history;
mod open;
mod owner;
mod path;
mod read;
#[cfg(test)]
mod tests;
mod text;
mod write;

pub use compare::{
    compare, format_comparison, parse_percent, CaseFailure, Comparison, Metric, MetricChange,
    Noise, RunRef,
};
pub use error::StoreError;
pub use history::format_history;
pub use path::{default_db_path, DB_ENV};
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
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}
