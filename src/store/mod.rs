//! The history of runs in an embedded SQLite database: each case is committed as soon as it
//! completes, so a run that is interrupted or crashes keeps everything already measured.
//!
//! Layout (version 2, kept in `PRAGMA user_version`): a `runs` table (id, times, status,
//! command, the environment and workload as JSON, and the process writing it), a `cases`
//! table (run id, position, case id, whether it failed, the [`CaseResult`] as JSON) and a
//! `findings` table (run id, position, finding id, severity, the [`Finding`] as JSON), each
//! finding committed as soon as its experiment is done. A version 1 file (no `findings`
//! table) is brought to version 2 in place when opened.
//! [`compare`] and the text formats for `history` and `compare` live here too.

mod compare;
mod error;
mod history;
mod owner;
mod path;
#[cfg(test)]
mod tests;
mod text;

pub use compare::{
    compare, format_comparison, parse_percent, CaseFailure, Comparison, Metric, MetricChange,
    Noise, RunRef,
};
pub use error::StoreError;
pub use history::format_history;
pub use path::{default_db_path, DB_ENV};

use crate::model::{CaseResult, Environment, Finding, RunResult, Workload};
use owner::Liveness;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Layout version this build writes and reads (older ones are migrated when opened).
const LAYOUT_VERSION: i64 = 2;
/// `PRAGMA application_id` of a zmqperf history ("zmqp").
const APPLICATION_ID: i64 = 0x7a6d_7170;
/// How long a statement waits for another process's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// How many candidates an ambiguous prefix error names.
const AMBIGUOUS_SHOWN: usize = 5;

/// The statuses a run can have (see [`RunResult::status`]).
const STATUSES: [&str; 3] = ["complete", "interrupted", "running"];

const CREATE_TABLES: &str = "
CREATE TABLE runs (
    seq            INTEGER PRIMARY KEY,
    id             TEXT NOT NULL UNIQUE,
    schema_version INTEGER NOT NULL,
    started_at     TEXT NOT NULL,
    finished_at    TEXT,
    status         TEXT NOT NULL,
    command        TEXT NOT NULL,
    environment    TEXT NOT NULL,
    workload       TEXT,
    cpu_model      TEXT NOT NULL,
    hostname       TEXT NOT NULL,
    owner          TEXT
);
CREATE TABLE cases (
    run_id   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    case_id  TEXT NOT NULL,
    failed   INTEGER NOT NULL,
    data     TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
CREATE INDEX cases_by_case_id ON cases(case_id);
";

/// What layout version 2 adds to version 1: the findings of `zmqperf diagnose`.
const CREATE_FINDINGS: &str = "
CREATE TABLE findings (
    run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    finding_id TEXT NOT NULL,
    severity   TEXT NOT NULL,
    data       TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
";

/// One line of `zmqperf history`: a run without its cases.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunListing {
    /// The run's id.
    pub run_id: String,
    /// Start time, RFC 3339 UTC.
    pub started_at: String,
    /// End time, if one was recorded.
    pub finished_at: Option<String>,
    /// "complete", "interrupted" or "running"; a run whose writer died without recording
    /// its end reads "interrupted".
    pub status: String,
    /// The command line of the run.
    pub command: String,
    /// Cases recorded.
    pub cases: u64,
    /// Cases recorded with an error.
    pub failed_cases: u64,
    /// Findings recorded (`zmqperf diagnose`).
    pub findings: u64,
    /// CPU model of the machine.
    pub cpu_model: String,
    /// Host name of the machine.
    pub hostname: String,
}

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

impl Store {
    /// Opens the history at `path`, creating the file, its folder and its tables if absent.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| StoreError::Open {
                path: path.clone(),
                reason: format!("cannot create folder {}: {e}", dir.display()),
            })?;
        }
        let open_err = |e: rusqlite::Error| StoreError::Open {
            path: path.clone(),
            reason: error::open_reason(&e),
        };
        let conn = Connection::open(&path).map_err(open_err)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        // WAL: readers never block the writer, and a commit is one append. FULL sync makes
        // each committed case survive a power cut too, not just a crash of the process.
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))
            .map_err(open_err)?;
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
            .map_err(open_err)?;
        let mut store = Store { conn, path };
        store.prepare_layout()?;
        Ok(store)
    }

    /// Opens the history at `path` only if the file exists (for `history`, `show` and
    /// `compare`, which have nothing to read in a new file).
    pub fn open_existing(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        let path = path.as_ref();
        if !path.exists() {
            return Err(StoreError::Missing {
                path: path.to_path_buf(),
            });
        }
        Store::open(path)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks the file is a zmqperf history this build reads, creating the tables in a new one.
    fn prepare_layout(&mut self) -> Result<(), StoreError> {
        let path = self.path.clone();
        let open_err = |e: rusqlite::Error| StoreError::Open {
            path: path.clone(),
            reason: error::open_reason(&e),
        };
        // IMMEDIATE: two processes opening a new file at once do not both create the tables.
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(open_err)?;
        let version: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(open_err)?;
        let app_id: i64 = tx
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(open_err)?;
        if version == 0 {
            let tables: i64 = tx
                .query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get(0))
                .map_err(open_err)?;
            if tables > 0 {
                return Err(StoreError::Open {
                    path,
                    reason: "it is an SQLite database of something else, not a zmqperf history"
                        .to_string(),
                });
            }
            tx.execute_batch(CREATE_TABLES).map_err(open_err)?;
            tx.execute_batch(CREATE_FINDINGS).map_err(open_err)?;
            tx.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(open_err)?;
            tx.pragma_update(None, "user_version", LAYOUT_VERSION)
                .map_err(open_err)?;
        } else if app_id != APPLICATION_ID {
            return Err(StoreError::Open {
                path,
                reason: "it is an SQLite database of something else, not a zmqperf history"
                    .to_string(),
            });
        } else if version > LAYOUT_VERSION {
            return Err(StoreError::TooNew {
                path,
                found: version,
                supported: LAYOUT_VERSION,
            });
        } else if version == 1 {
            // Version 1 -> 2: the findings table; runs and cases are unchanged.
            tx.execute_batch(CREATE_FINDINGS).map_err(open_err)?;
            tx.pragma_update(None, "user_version", LAYOUT_VERSION)
                .map_err(open_err)?;
        }
        tx.commit().map_err(open_err)
    }

    /// Records the start of a run: its row with status "running", owned by this process.
    ///
    /// Cases already in `run` (normally none) are recorded too. Call [`Store::add_case`]
    /// after each case and [`Store::finish_run`] at the end.
    pub fn begin_run(&mut self, run: &RunResult) -> Result<(), StoreError> {
        self.insert_run(run, "running", None, owner::current().as_deref())
    }

    /// Records a whole run at once, with the status and end time it carries (to import a
    /// run, or when nothing needs to survive a crash).
    pub fn save_run(&mut self, run: &RunResult) -> Result<(), StoreError> {
        check_status(&run.status)?;
        self.insert_run(run, &run.status, run.finished_at.as_deref(), None)
    }

    fn insert_run(
        &mut self,
        run: &RunResult,
        status: &str,
        finished_at: Option<&str>,
        owner: Option<&str>,
    ) -> Result<(), StoreError> {
        let op = format!("recording run {}", run.run_id);
        let path = self.path.clone();
        let sql_err = |e| StoreError::sqlite(&path, op.as_str(), e);
        let environment = to_json(&run.environment);
        let workload = run.workload.as_ref().map(to_json);
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

    /// Records the end of run `run_id`: its status ("complete", or "interrupted" after
    /// Ctrl-C) and end time.
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

    /// The most recent runs first, at most `limit` of them (all with None).
    pub fn list_runs(&self, limit: Option<usize>) -> Result<Vec<RunListing>, StoreError> {
        let sql_err = |e| StoreError::sqlite(&self.path, "listing runs", e);
        let limit = limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.started_at, r.finished_at, r.status, r.command, r.cpu_model,
                        r.hostname, r.owner,
                        (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.id),
                        (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.id AND c.failed),
                        (SELECT COUNT(*) FROM findings f WHERE f.run_id = r.id)
                 FROM runs r ORDER BY r.seq DESC LIMIT ?1",
            )
            .map_err(sql_err)?;
        let rows = stmt
            .query_map([limit], |r| {
                let status: String = r.get(3)?;
                let owner: Option<String> = r.get(7)?;
                Ok(RunListing {
                    run_id: r.get(0)?,
                    started_at: r.get(1)?,
                    finished_at: r.get(2)?,
                    status: effective_status(status, owner.as_deref()),
                    command: r.get(4)?,
                    cpu_model: r.get(5)?,
                    hostname: r.get(6)?,
                    cases: r.get::<_, i64>(8)? as u64,
                    failed_cases: r.get::<_, i64>(9)? as u64,
                    findings: r.get::<_, i64>(10)? as u64,
                })
            })
            .map_err(sql_err)?;
        rows.collect::<Result<_, _>>().map_err(sql_err)
    }

    /// The id of the run `selector` names: a full run id, a unique prefix of one, `last`
    /// (the most recently started run) or `last~N` (N runs before the last).
    pub fn resolve(&self, selector: &str) -> Result<String, StoreError> {
        let sql_err = |e| StoreError::sqlite(&self.path, format!("looking up run '{selector}'"), e);
        let bad = |reason: &str| StoreError::BadSelector {
            selector: selector.to_string(),
            reason: reason.to_string(),
        };
        let sel = selector.trim();
        if sel.is_empty() {
            return Err(bad("it is empty"));
        }
        let back = if sel == "last" {
            Some(0)
        } else if let Some(n) = sel.strip_prefix("last~") {
            Some(
                n.parse::<u32>()
                    .map_err(|_| bad("after `last~` comes a number of runs back, e.g. last~1"))?,
            )
        } else {
            None
        };
        if let Some(back) = back {
            let found: Option<String> = self
                .conn
                .query_row(
                    "SELECT id FROM runs ORDER BY seq DESC LIMIT 1 OFFSET ?1",
                    [back],
                    |r| r.get(0),
                )
                .optional()
                .map_err(sql_err)?;
            if let Some(id) = found {
                return Ok(id);
            }
            let runs: i64 = self
                .conn
                .query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))
                .map_err(sql_err)?;
            let reason = if runs == 0 {
                format!(
                    "history database {} holds no runs yet (`zmqperf run` records them)",
                    self.path.display()
                )
            } else {
                format!(
                    "history database {} holds only {runs} run{}",
                    self.path.display(),
                    if runs == 1 { "" } else { "s" }
                )
            };
            return Err(StoreError::NotFound {
                selector: selector.to_string(),
                reason,
            });
        }
        let exact = self
            .conn
            .query_row("SELECT id FROM runs WHERE id = ?1", [sel], |r| r.get(0))
            .optional()
            .map_err(sql_err)?;
        if let Some(id) = exact {
            return Ok(id);
        }
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM runs WHERE substr(id, 1, ?1) = ?2 ORDER BY seq DESC")
            .map_err(sql_err)?;
        let matches: Vec<String> = stmt
            .query_map(params![sel.chars().count() as i64, sel], |r| r.get(0))
            .map_err(sql_err)?
            .collect::<Result<_, _>>()
            .map_err(sql_err)?;
        match matches.len() {
            0 => Err(StoreError::NotFound {
                selector: selector.to_string(),
                reason: format!(
                    "no run id in history database {} begins with it",
                    self.path.display()
                ),
            }),
            1 => Ok(matches.into_iter().next().expect("one match")),
            count => Err(StoreError::Ambiguous {
                selector: selector.to_string(),
                count,
                candidates: matches.into_iter().take(AMBIGUOUS_SHOWN).collect(),
            }),
        }
    }

    /// The rows of `table` ("cases" or "findings") of run `id`, in recorded order, each
    /// decoded from its JSON (`what` names one in an error: "case", "finding").
    fn parts_of<T: serde::de::DeserializeOwned>(
        &self,
        id: &str,
        table: &str,
        what: &str,
    ) -> Result<Vec<T>, StoreError> {
        let sql_err = |e| StoreError::sqlite(&self.path, format!("reading run {id}"), e);
        let mut stmt = self
            .conn
            .prepare(&format!(
                "SELECT position, data FROM {table} WHERE run_id = ?1 ORDER BY position"
            ))
            .map_err(sql_err)?;
        let rows: Vec<(i64, String)> = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(sql_err)?
            .collect::<Result<_, _>>()
            .map_err(sql_err)?;
        rows.into_iter()
            .map(|(pos, data)| {
                serde_json::from_str(&data).map_err(|e| StoreError::Corrupt {
                    path: self.path.clone(),
                    what: format!("{what} #{} of run {id}", pos + 1),
                    reason: e.to_string(),
                })
            })
            .collect()
    }

    /// The run `selector` names (see [`Store::resolve`]), with its cases in the order they
    /// ran. A run whose writer died without recording its end reads "interrupted".
    pub fn load_run(&self, selector: &str) -> Result<RunResult, StoreError> {
        let id = self.resolve(selector)?;
        let sql_err = |e| StoreError::sqlite(&self.path, format!("reading run {id}"), e);
        let corrupt = |what: String, e: serde_json::Error| StoreError::Corrupt {
            path: self.path.clone(),
            what,
            reason: e.to_string(),
        };
        type RunRow = (
            u32,
            String,
            Option<String>,
            String,
            String,
            String,
            Option<String>,
            Option<String>,
        );
        let row: RunRow = self
            .conn
            .query_row(
                "SELECT schema_version, started_at, finished_at, status, command, environment,
                        workload, owner
                 FROM runs WHERE id = ?1",
                [&id],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                        r.get(7)?,
                    ))
                },
            )
            .map_err(sql_err)?;
        let (schema_version, started_at, finished_at, status, command, env, workload, owner) = row;
        let environment: Environment = serde_json::from_str(&env)
            .map_err(|e| corrupt(format!("the environment of run {id}"), e))?;
        let workload: Option<Workload> = workload
            .map(|w| serde_json::from_str(&w))
            .transpose()
            .map_err(|e| corrupt(format!("the workload of run {id}"), e))?;
        let cases: Vec<CaseResult> = self.parts_of(&id, "cases", "case")?;
        let findings: Vec<Finding> = self.parts_of(&id, "findings", "finding")?;
        Ok(RunResult {
            schema_version,
            run_id: id,
            started_at,
            finished_at,
            status: effective_status(status, owner.as_deref()),
            command,
            workload,
            environment,
            cases,
            findings,
        })
    }
}

/// The status to show: a run still marked "running" whose writer is gone was interrupted.
fn effective_status(stored: String, owner: Option<&str>) -> String {
    if stored == "running" && owner::liveness(owner) == Liveness::Dead {
        "interrupted".to_string()
    } else {
        stored
    }
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
