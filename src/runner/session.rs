//! The recording session of a run: one flow for every command that keeps its runs in the
//! history (`run`, `matrix`, `diagnose`, `fanout`). It begins the run in the history, writes
//! each case as it completes (a write that fails, e.g. on a database another process holds
//! locked, keeps that case and the ones after it for the end), records the rest and the
//! run's end (a lock waited out for [`RECORD_PATIENCE`]), and at last checks that the
//! history still holds the run and says where it is.
//!
//! The words the user reads are the front-end's: the session hands it a [`Notice`]
//! (`super::notice::tell`).
//! A session without a history (`--no-history`) takes every call and writes nothing.

use super::notice::{tell, Notice};
use crate::error::Result;
use crate::model::{CaseResult, Finding, RunResult};
use crate::store::{Store, StoreError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the end of a run keeps trying to write to a history another process holds
/// locked.
pub const RECORD_PATIENCE: Duration = Duration::from_secs(30);

/// Where a session records: the history database and whether that path was chosen by
/// default (not by `--db`).
#[derive(Debug, Clone)]
pub struct History {
    /// The database file.
    pub path: PathBuf,
    /// True when no `--db` named it.
    pub by_default: bool,
}

/// One run being recorded in the history, or a session that records nothing.
pub struct Session {
    /// The open history, None with `--no-history`.
    store: Option<Store>,
    /// Whether the history's path was chosen by default.
    by_default: bool,
    run_id: String,
    /// Cases not yet in the history, in order: after a failed write the others wait for
    /// the end (the run goes on).
    pending: Vec<CaseResult>,
}

impl Session {
    /// Begins `run` in `history` (opened here), or a session that records nothing when
    /// `history` is None.
    pub fn begin(history: Option<History>, run: &RunResult) -> Result<Self> {
        let store = match &history {
            Some(h) => {
                let mut s = Store::open(h.path.clone())?;
                s.begin_run(run)?;
                Some(s)
            }
            None => None,
        };
        Ok(Session {
            store,
            by_default: history.is_some_and(|h| h.by_default),
            run_id: run.run_id.clone(),
            pending: Vec::new(),
        })
    }

    /// Whether this session writes to a history.
    pub fn records(&self) -> bool {
        self.store.is_some()
    }

    /// The history's database, if the session writes to one.
    pub fn path(&self) -> Option<&Path> {
        self.store.as_ref().map(|s| s.path())
    }

    /// Writes `case` as soon as it completes. If that fails, the case is kept (and every
    /// case after it, unwritten) for [`Session::finish`], and the user is told once.
    pub fn case_done(&mut self, case: &CaseResult) {
        let Some(s) = self.store.as_mut() else { return };
        self.pending.push(case.clone());
        if self.pending.len() == 1 {
            match s.add_case(&self.run_id, case) {
                Ok(()) => self.pending.clear(),
                Err(e) => tell(&Notice::CaseKept {
                    case_id: &case.id,
                    error: &e,
                }),
            }
        }
    }

    /// Keeps `cases` to be written at [`Session::finish`] (a command that records its
    /// cases only once they are all known).
    pub fn keep(&mut self, cases: &[CaseResult]) {
        if self.store.is_some() {
            self.pending.extend_from_slice(cases);
        }
    }

    /// Writes `finding` now; the error is the caller's to keep or to return.
    pub fn finding(&mut self, finding: &Finding) -> std::result::Result<(), StoreError> {
        match self.store.as_mut() {
            Some(s) => s.add_finding(&self.run_id, finding),
            None => Ok(()),
        }
    }

    /// Writes the cases not yet in the history, then the run's end with its status (see
    /// [`Store::record_rest`]): a lock is waited out for [`RECORD_PATIENCE`], and the error
    /// names SQLite's reason, how many cases are missing and how the run is marked.
    pub fn finish(&mut self, run: &RunResult) -> Result<()> {
        let Some(s) = self.store.as_mut() else {
            return Ok(());
        };
        let cases = self.pending.len();
        s.record_rest(run, &mut self.pending, RECORD_PATIENCE, |error| {
            tell(&Notice::Waiting {
                error,
                cases,
                patience: RECORD_PATIENCE,
            })
        })?;
        Ok(())
    }

    /// Writes the run's end with its status, once (no case is pending, and a busy history
    /// is not waited for).
    pub fn mark_end(&mut self, run: &RunResult) -> Result<()> {
        if let Some(s) = self.store.as_mut() {
            s.finish(run, run.status.as_str())?;
        }
        Ok(())
    }

    /// After the run's last write: checks that the history still holds it (the file was
    /// not deleted, replaced or damaged during the run; an error, exit 13, and nothing is
    /// announced), then tells where the run was recorded.
    pub fn announce(&self) -> Result<()> {
        let Some(s) = &self.store else {
            return Ok(());
        };
        s.check_kept()?;
        tell(&Notice::Recorded {
            run_id: &self.run_id,
            path: s.path(),
            in_current_folder: self.by_default && crate::store::default_is_current_dir(),
        });
        Ok(())
    }
}
