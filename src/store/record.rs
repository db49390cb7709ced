//! The end of a run in the history: the cases a write did not take during the run are
//! written again, a lock held by another process is waited out (up to a patience), and
//! what still cannot be written is said with SQLite's own reason; the run is then marked
//! `partial` if at least that can be written.

use super::error::StoreError;
use super::Store;
use crate::model::{CaseResult, RunResult, RunStatus};
use std::time::{Duration, Instant};

/// How long the pause between two tries is, at most.
const RETRY_PAUSE: Duration = Duration::from_millis(500);

impl Store {
    /// Writes `pending` (cases of `run` not yet in the history, in order), then the run's
    /// end with its status. A failure because another process holds the database locked
    /// is tried again until `patience` has passed (`on_wait` is called once, when the
    /// first wait begins); any other failure (a full disk, a read-only or damaged file) is
    /// not waited on. A case that cannot be written is left in `pending` and the others
    /// are still tried.
    ///
    /// While cases are pending the run is marked `partial` first (the smallest write, made
    /// while it may still fit). If cases are left out, the run stays `partial` (or
    /// `interrupted`) when that can be written, and the error ([`StoreError::Unrecorded`]) says how many are missing,
    /// SQLite's reason and what the history holds.
    pub fn record_rest(
        &mut self,
        run: &RunResult,
        pending: &mut Vec<CaseResult>,
        patience: Duration,
        mut on_wait: impl FnMut(&StoreError),
    ) -> Result<(), StoreError> {
        let give_up = Instant::now() + patience;
        let mut waited = false;
        let mut wait = |e: &StoreError| -> bool {
            let now = Instant::now();
            if !e.is_busy() || now >= give_up {
                return false;
            }
            if !waited {
                on_wait(e);
                waited = true;
            }
            std::thread::sleep(RETRY_PAUSE.min(give_up - now));
            true
        };
        let incomplete = if run.status == RunStatus::Interrupted {
            RunStatus::Interrupted
        } else {
            RunStatus::Partial
        };
        // First the mark, while a write as small as that may still fit (on a disk about to
        // fill, the cases could take the last of the space): the run reads `partial`
        // until every case is in.
        if !pending.is_empty() {
            while let Err(e) = self.finish(run, incomplete.as_str()) {
                if !wait(&e) {
                    break;
                }
            }
        }
        // The cases: each tried in order; a busy database is waited on, any other
        // failure leaves the case out and goes on with the next.
        let mut left_out: Vec<CaseResult> = Vec::new();
        let mut first_err: Option<StoreError> = None;
        let mut i = 0;
        while i < pending.len() {
            match self.add_case(&run.run_id, &pending[i]) {
                Ok(()) => i += 1,
                Err(e) if wait(&e) => {}
                Err(e) => {
                    first_err.get_or_insert(e);
                    left_out.push(pending[i].clone());
                    i += 1;
                }
            }
        }
        *pending = left_out;
        let status = if pending.is_empty() {
            run.status
        } else {
            incomplete
        };
        let marked = loop {
            match self.finish(run, status.as_str()) {
                Ok(()) => break Ok(()),
                Err(e) if wait(&e) => {}
                Err(e) => break Err(e),
            }
        };
        match (first_err, marked) {
            (None, Ok(())) => Ok(()),
            (first, marked) => {
                let marked_ok = marked.is_ok();
                let source = match (first, marked) {
                    (Some(e), _) => e,
                    (None, Err(e)) => e,
                    (None, Ok(())) => unreachable!("handled above"),
                };
                Err(StoreError::Unrecorded {
                    path: self.path.clone(),
                    run_id: run.run_id.clone(),
                    missing: pending.len(),
                    total: run.cases.len(),
                    marked: marked_ok.then(|| status.to_string()),
                    source: Box::new(source),
                })
            }
        }
    }
}
