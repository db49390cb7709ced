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

/// The wait for a busy database: until a deadline, the caller told once when it begins.
struct Patience<F: FnMut(&StoreError)> {
    give_up: Instant,
    waited: bool,
    on_wait: F,
}

impl<F: FnMut(&StoreError)> Patience<F> {
    /// After the failure `e`: pauses and says to try again when the database was busy and
    /// time is left; false (do not try again) otherwise.
    fn wait(&mut self, e: &StoreError) -> bool {
        let now = Instant::now();
        if !e.is_busy() || now >= self.give_up {
            return false;
        }
        if !self.waited {
            (self.on_wait)(e);
            self.waited = true;
        }
        std::thread::sleep(RETRY_PAUSE.min(self.give_up - now));
        true
    }
}

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
        on_wait: impl FnMut(&StoreError),
    ) -> Result<(), StoreError> {
        let mut patience = Patience {
            give_up: Instant::now() + patience,
            waited: false,
            on_wait,
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
                if !patience.wait(&e) {
                    break;
                }
            }
        }
        let first_err = self.write_cases(&run.run_id, pending, &mut patience);
        let status = if pending.is_empty() {
            run.status
        } else {
            incomplete
        };
        let marked = loop {
            match self.finish(run, status.as_str()) {
                Ok(()) => break Ok(()),
                Err(e) if patience.wait(&e) => {}
                Err(e) => break Err(e),
            }
        };
        let marked_ok = marked.is_ok();
        let source = match (first_err, marked) {
            (None, Ok(())) => return Ok(()),
            (Some(e), _) | (None, Err(e)) => e,
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

    /// Writes the cases of `pending`, each tried in order: a busy database is waited on,
    /// any other failure leaves the case out (in `pending`) and goes on with the next.
    /// The first failure, if any.
    fn write_cases<F: FnMut(&StoreError)>(
        &mut self,
        run_id: &str,
        pending: &mut Vec<CaseResult>,
        patience: &mut Patience<F>,
    ) -> Option<StoreError> {
        let mut left_out: Vec<CaseResult> = Vec::new();
        let mut first_err: Option<StoreError> = None;
        let mut i = 0;
        while i < pending.len() {
            match self.add_case(run_id, &pending[i]) {
                Ok(()) => i += 1,
                Err(e) if patience.wait(&e) => {}
                Err(e) => {
                    first_err.get_or_insert(e);
                    left_out.push(pending[i].clone());
                    i += 1;
                }
            }
        }
        *pending = left_out;
        first_err
    }
}
