//! Writing to the history: a run's row at its start, each case and finding in its own
//! committed transaction as it completes, the run's end, or a whole run at once.

use super::error::StoreError;
use super::{owner, Store};
use crate::model::{CaseResult, Finding, Imported, RunResult};
use rusqlite::{params, OptionalExtension, TransactionBehavior};
use std::path::Path;

/// The statuses a run can have (see [`RunResult::status`]): `partial` is a run that ended
/// but some of whose cases could not be written to the history.
pub(crate) const STATUSES: [&str; 4] = ["complete", "interrupted", "partial", "running"];

impl Store {
    /// Records the start of a run: its row with status "running", owned by this process.
    ///
    /// Cases already in `run` (normally none) are recorded too. Call [`Store::add_case`]
    /// after each case and [`Store::finish_run`] at the end.
    pub fn begin_run(&mut self, run: &RunResult) -> Result<(), StoreError> {
        self.insert_run(run, "running", None, owner::current().as_deref(), None)
    }

    /// Records a whole run at once, with the status and end time it carries, and its import
    /// mark if it has one (when nothing needs to survive a crash; `zmqperf import` goes
    /// through [`Store::import_run`], which gives the run a new id and checks it is new).
    pub fn save_run(&mut self, run: &RunResult) -> Result<(), StoreError> {
        self.insert_run(
            run,
            run.status.as_str(),
            run.finished_at.as_deref(),
            None,
            run.imported.as_ref(),
        )
    }

    /// Records a whole run with its status and end time, and, for a run taken in by
    /// `zmqperf import`, its import mark (`run.imported`), in one transaction.
    pub(super) fn insert_run(
        &mut self,
        run: &RunResult,
        status: &str,
        finished_at: Option<&str>,
        owner: Option<&str>,
        imported: Option<&Imported>,
    ) -> Result<(), StoreError> {
        let op = format!("recording run {}", run.run_id);
        let path = self.path.clone();
        let sql_err = |e| StoreError::sqlite(&path, op.as_str(), e);
        let environment = to_json(&run.environment);
        // CURVE secret keys never reach the file (a history is often world-readable).
        let workload = run.workload.as_ref().map(|w| {
            to_json(&crate::model::Workload {
                path: w.path.clone(),
                text: crate::topology::security::redact_secrets(&w.text),
            })
        });
        let cases = run
            .cases
            .iter()
            .map(|c| encode_checked(c, "case", &c.id))
            .collect::<Result<Vec<_>, _>>()?;
        let findings = run
            .findings
            .iter()
            .map(|f| encode_checked(f, "finding", &f.id))
            .collect::<Result<Vec<_>, _>>()?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err)?;
        if run_exists(&tx, &run.run_id).map_err(sql_err)? {
            return Err(StoreError::DuplicateRun {
                path: path.clone(),
                run_id: run.run_id.clone(),
            });
        }
        tx.execute(
            "INSERT INTO runs (id, schema_version, started_at, finished_at, status, command,
                               environment, workload, cpu_model, hostname, owner)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                run.run_id,
                run.schema_version,
                run.started_at,
                finished_at,
                status,
                run.command,
                environment,
                workload,
                run.environment.cpu_model,
                run.environment.hostname,
                owner,
            ],
        )
        .map_err(sql_err)?;
        for (position, (case, data)) in run.cases.iter().zip(&cases).enumerate() {
            insert_case(&tx, &run.run_id, position as i64, case, data).map_err(sql_err)?;
        }
        for (position, (finding, data)) in run.findings.iter().zip(&findings).enumerate() {
            insert_finding(&tx, &run.run_id, position as i64, finding, data).map_err(sql_err)?;
        }
        if let Some(i) = imported {
            insert_import(&tx, &run.run_id, i).map_err(sql_err)?;
        }
        insert_outcomes(&tx, run).map_err(sql_err)?;
        tx.commit().map_err(sql_err)
    }

    /// Records one finished case of run `run_id`, after those recorded before it.
    ///
    /// One transaction, committed and synced before this returns: if the process dies
    /// afterwards, the case is in the history.
    pub fn add_case(&mut self, run_id: &str, case: &CaseResult) -> Result<(), StoreError> {
        let data = encode_checked(case, "case", &case.id)?;
        let op = format!("recording case {} of run {run_id}", case.id);
        self.append(run_id, "cases", &op, |tx, position| {
            insert_case(tx, run_id, position, case, &data)
        })
    }

    /// Records one finding of run `run_id` (of `zmqperf diagnose`), after those recorded
    /// before it; committed and synced before this returns, like [`Store::add_case`].
    pub fn add_finding(&mut self, run_id: &str, finding: &Finding) -> Result<(), StoreError> {
        let data = encode_checked(finding, "finding", &finding.id)?;
        let op = format!("recording finding {} of run {run_id}", finding.id);
        self.append(run_id, "findings", &op, |tx, position| {
            insert_finding(tx, run_id, position, finding, &data)
        })
    }

    /// Appends one row to `table` ("cases" or "findings") of run `run_id`, after the rows
    /// recorded before it, in one transaction committed before this returns.
    fn append(
        &mut self,
        run_id: &str,
        table: &str,
        op: &str,
        insert: impl FnOnce(&rusqlite::Transaction<'_>, i64) -> rusqlite::Result<()>,
    ) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sql_err = |e| StoreError::sqlite(&path, op, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql_err)?;
        if !run_exists(&tx, run_id).map_err(sql_err)? {
            return Err(not_in(&path, run_id));
        }
        let position: i64 = tx
            .query_row(
                &format!("SELECT COALESCE(MAX(position) + 1, 0) FROM {table} WHERE run_id = ?1"),
                [run_id],
                |r| r.get(0),
            )
            .map_err(sql_err)?;
        insert(&tx, position).map_err(sql_err)?;
        tx.commit().map_err(sql_err)
    }

    /// Records the end of `run` with `status`: its end time and its environment (which now
    /// names the hosts its nodes ran on).
    pub fn finish(&mut self, run: &RunResult, status: &str) -> Result<(), StoreError> {
        if !run.environment.hosts.is_empty() {
            let op = format!("recording the hosts of run {}", run.run_id);
            let path = self.path.clone();
            self.conn
                .execute(
                    "UPDATE runs SET environment = ?2 WHERE id = ?1",
                    params![run.run_id, to_json(&run.environment)],
                )
                .map_err(|e| StoreError::sqlite(&path, op.as_str(), e))?;
        }
        if !run.limits.is_empty() || !run.curves.is_empty() {
            let op = format!("recording the limits and curves of run {}", run.run_id);
            let path = self.path.clone();
            let sql_err = |e| StoreError::sqlite(&path, op.as_str(), e);
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sql_err)?;
            tx.execute("DELETE FROM outcomes WHERE run_id = ?1", [&run.run_id])
                .map_err(sql_err)?;
            insert_outcomes(&tx, run).map_err(sql_err)?;
            tx.commit().map_err(sql_err)?;
        }
        self.finish_run(&run.run_id, status, run.finished_at.as_deref())
    }

    /// Records the end of run `run_id`: its status ("complete", "interrupted" after
    /// Ctrl-C, or "partial" when some of its cases could not be written) and end time.
    pub fn finish_run(
        &mut self,
        run_id: &str,
        status: &str,
        finished_at: Option<&str>,
    ) -> Result<(), StoreError> {
        check_status(status)?;
        let op = format!("recording the end of run {run_id}");
        let path = self.path.clone();
        let sql_err = |e| StoreError::sqlite(&path, op.as_str(), e);
        let changed = self
            .conn
            .execute(
                "UPDATE runs SET status = ?2, finished_at = ?3 WHERE id = ?1",
                params![run_id, status, finished_at],
            )
            .map_err(sql_err)?;
        if changed == 0 {
            return Err(not_in(&path, run_id));
        }
        Ok(())
    }
}

/// The limits and curves of `run`, in that order.
fn insert_outcomes(tx: &rusqlite::Transaction<'_>, run: &RunResult) -> rusqlite::Result<()> {
    let rows = run
        .limits
        .iter()
        .map(|l| ("limit", to_json(l)))
        .chain(run.curves.iter().map(|c| ("curve", to_json(c))));
    for (position, (kind, data)) in rows.enumerate() {
        tx.execute(
            "INSERT INTO outcomes (run_id, position, kind, data) VALUES (?1, ?2, ?3, ?4)",
            params![run.run_id, position as i64, kind, data],
        )?;
    }
    Ok(())
}

/// The import mark of run `run_id` (taken in by `zmqperf import`).
fn insert_import(
    tx: &rusqlite::Transaction<'_>,
    run_id: &str,
    i: &Imported,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO imports (run_id, original_run_id, content_sha256, file, from_host,
                              imported_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            run_id,
            i.original_run_id,
            i.content_sha256,
            i.file,
            i.from_host,
            i.imported_at
        ],
    )?;
    Ok(())
}

fn check_status(status: &str) -> Result<(), StoreError> {
    if STATUSES.contains(&status) {
        Ok(())
    } else {
        Err(StoreError::InvalidStatus {
            status: status.to_string(),
        })
    }
}

/// A not-found error for a run id the database at `path` does not hold.
fn not_in(path: &Path, run_id: &str) -> StoreError {
    StoreError::NotFound {
        selector: run_id.to_string(),
        reason: format!(
            "history database {} holds no run with this id",
            path.display()
        ),
    }
}

/// Whether the history holds run `run_id`.
fn run_exists(tx: &rusqlite::Transaction<'_>, run_id: &str) -> rusqlite::Result<bool> {
    tx.query_row("SELECT 1 FROM runs WHERE id = ?1", [run_id], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
}

fn insert_case(
    tx: &rusqlite::Transaction<'_>,
    run_id: &str,
    position: i64,
    case: &CaseResult,
    data: &str,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO cases (run_id, position, case_id, failed, data) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![run_id, position, case.id, case.error.is_some(), data],
    )?;
    Ok(())
}

/// The JSON of a case or finding, checked to read back: JSON has no NaN or infinity
/// (serde_json writes them as null), and a record that cannot be read back would be lost
/// all the same.
fn encode_checked<T: serde::Serialize + serde::de::DeserializeOwned>(
    value: &T,
    what: &'static str,
    id: &str,
) -> Result<String, StoreError> {
    let encode_err = |reason: String| StoreError::Encode {
        what,
        case_id: id.to_string(),
        reason,
    };
    let data = serde_json::to_string(value).map_err(|e| encode_err(e.to_string()))?;
    serde_json::from_str::<T>(&data).map_err(|e| {
        encode_err(format!(
            "a figure in it is not a finite number, which JSON cannot hold ({e})"
        ))
    })?;
    Ok(data)
}

fn insert_finding(
    tx: &rusqlite::Transaction<'_>,
    run_id: &str,
    position: i64,
    finding: &Finding,
    data: &str,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO findings (run_id, position, finding_id, severity, data)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![run_id, position, finding.id, finding.severity.name(), data],
    )?;
    Ok(())
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    // Strings and integers only: serialising cannot fail.
    serde_json::to_string(value).expect("environment and workload serialise to JSON")
}
