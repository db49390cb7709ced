//! Reading the history: the list of runs, a run selector resolved to a run id, and a
//! whole run loaded back with its cases and findings.

use super::error::StoreError;
use super::owner::{self, Liveness};
use super::Store;
use crate::model::{CaseResult, Environment, Finding, Imported, RunResult, RunStatus, Workload};
use rusqlite::{params, OptionalExtension};

/// One line of `zmqperf history`: a run without its cases.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunListing {
    /// The run's id.
    pub run_id: String,
    /// Start time, RFC 3339 UTC.
    pub started_at: String,
    /// End time, if one was recorded.
    pub finished_at: Option<String>,
    /// "complete", "interrupted", "partial" (some cases could not be written) or
    /// "running"; a run whose writer died without recording its end reads "interrupted".
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
    /// Where the run came from, if `zmqperf import` took it into this history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub imported: Option<Imported>,
}

/// How many candidates an ambiguous prefix error names.
const AMBIGUOUS_SHOWN: usize = 5;

impl Store {
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
                    // A word that is not a status is shown as it is.
                    status: match effective_status(&status, owner.as_deref()) {
                        Some(s) => s.to_string(),
                        None => status,
                    },
                    command: r.get(4)?,
                    cpu_model: r.get(5)?,
                    hostname: r.get(6)?,
                    cases: r.get::<_, i64>(8)? as u64,
                    failed_cases: r.get::<_, i64>(9)? as u64,
                    findings: r.get::<_, i64>(10)? as u64,
                    imported: None,
                })
            })
            .map_err(sql_err)?;
        let mut runs: Vec<RunListing> = rows.collect::<Result<_, _>>().map_err(sql_err)?;
        for r in &mut runs {
            r.imported = self.import_of(&r.run_id)?;
        }
        Ok(runs)
    }

    /// The import mark of run `id`, if `zmqperf import` took it into this history.
    pub(super) fn import_of(&self, id: &str) -> Result<Option<Imported>, StoreError> {
        if !self.imports {
            return Ok(None);
        }
        let sql_err = |e| StoreError::sqlite(&self.path, format!("reading run {id}"), e);
        self.conn
            .query_row(
                "SELECT original_run_id, file, from_host, imported_at, content_sha256
                 FROM imports WHERE run_id = ?1",
                [id],
                |r| {
                    Ok(Imported {
                        original_run_id: r.get(0)?,
                        file: r.get(1)?,
                        from_host: r.get(2)?,
                        imported_at: r.get(3)?,
                        content_sha256: r.get(4)?,
                    })
                },
            )
            .optional()
            .map_err(sql_err)
    }

    /// The id of the run `selector` names: a full run id, a unique prefix of one, `last`
    /// (the most recently started run) or `last~N` (N runs before the last).
    pub fn resolve(&self, selector: &str) -> Result<String, StoreError> {
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
        match back {
            Some(back) => self.nth_last(selector, back),
            None => self.by_id(selector, sel),
        }
    }

    /// The id of the run `back` runs before the last (`last~N` of `selector`), or why
    /// there is none.
    fn nth_last(&self, selector: &str, back: u32) -> Result<String, StoreError> {
        let sql_err = |e| StoreError::sqlite(&self.path, format!("looking up run '{selector}'"), e);
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
        Err(StoreError::NotFound {
            selector: selector.to_string(),
            reason,
        })
    }

    /// The id of the run whose id is `sel` (`selector` trimmed), or the one run whose id
    /// begins with it.
    fn by_id(&self, selector: &str, sel: &str) -> Result<String, StoreError> {
        let sql_err = |e| StoreError::sqlite(&self.path, format!("looking up run '{selector}'"), e);
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
        let mut workload: Option<Workload> = workload
            .map(|w| serde_json::from_str(&w))
            .transpose()
            .map_err(|e| corrupt(format!("the workload of run {id}"), e))?;
        // A run recorded by an older zmqperf may hold CURVE secrets in clear: never shown.
        if let Some(w) = workload.as_mut() {
            w.text = crate::topology::security::redact_secrets(&w.text);
        }
        let cases: Vec<CaseResult> = self.parts_of(&id, "cases", "case")?;
        let findings: Vec<Finding> = self.parts_of(&id, "findings", "finding")?;
        let imported = self.import_of(&id)?;
        let (limits, curves) = self.outcomes_of(&id)?;
        let status =
            effective_status(&status, owner.as_deref()).ok_or_else(|| StoreError::Corrupt {
                path: self.path.clone(),
                what: format!("the status of run {id}"),
                reason: RunStatus::refusal(&status),
            })?;
        Ok(RunResult {
            schema_version,
            run_id: id,
            started_at,
            finished_at,
            status,
            command,
            workload,
            environment,
            cases,
            findings,
            imported,
            limits,
            curves,
        })
    }

    /// The limits and curves of run `id`.
    fn outcomes_of(
        &self,
        id: &str,
    ) -> Result<(Vec<crate::model::LimitResult>, Vec<crate::model::LoadCurve>), StoreError> {
        if !self.outcomes {
            return Ok((Vec::new(), Vec::new()));
        }
        let sql_err = |e| StoreError::sqlite(&self.path, format!("reading run {id}"), e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT position, kind, data FROM outcomes WHERE run_id = ?1 ORDER BY position",
            )
            .map_err(sql_err)?;
        let rows: Vec<(i64, String, String)> = stmt
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .map_err(sql_err)?
            .collect::<Result<_, _>>()
            .map_err(sql_err)?;
        let corrupt = |pos: i64, e: serde_json::Error| StoreError::Corrupt {
            path: self.path.clone(),
            what: format!("outcome #{} of run {id}", pos + 1),
            reason: e.to_string(),
        };
        let (mut limits, mut curves) = (Vec::new(), Vec::new());
        for (pos, kind, data) in rows {
            match kind.as_str() {
                "limit" => limits.push(serde_json::from_str(&data).map_err(|e| corrupt(pos, e))?),
                "curve" => curves.push(serde_json::from_str(&data).map_err(|e| corrupt(pos, e))?),
                // A kind a newer build wrote: left out, not an error.
                _ => {}
            }
        }
        Ok((limits, curves))
    }
}

/// The status to show: a run still marked "running" whose writer is gone was interrupted.
/// None for a word that is not a status (the file was written by something else).
fn effective_status(stored: &str, owner: Option<&str>) -> Option<RunStatus> {
    match RunStatus::parse(stored)? {
        RunStatus::Running if owner::liveness(owner) == Liveness::Dead => {
            Some(RunStatus::Interrupted)
        }
        status => Some(status),
    }
}
