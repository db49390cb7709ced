//! The parts of the JSON envelope (report::json, schema/envelope.schema.json) that are read
//! back as well as written: a recorded run's fields, and a run's whole envelope as
//! `zmqperf import` reads it.

use super::{CaseResult, Environment, Finding, Imported, RunResult, RunStatus, Workload};
use serde::{Deserialize, Serialize};

/// The kind of a recorded run's JSON (`run`, `show`, `report`, `diagnose`, and the runs
/// `fanout` and `matrix` record, as `show` prints them): `results` is its cases and
/// findings, and `run.command` says which command made it.
pub const RUN_KIND: &str = "run";

/// A recorded run, without its environment and results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    /// Its id in the history, e.g. `20261121-221530-4f2a`.
    pub id: String,
    /// Start time, RFC 3339 UTC.
    pub started_at: String,
    /// End time, RFC 3339 UTC; None while running or if the run was cut short.
    pub finished_at: Option<String>,
    /// complete, interrupted, partial or running.
    pub status: RunStatus,
    /// The exact command line.
    pub command: String,
    /// The workload file, if one was given: its path and its text.
    pub workload: Option<Workload>,
    /// Where the run came from when it was imported (absent for a run recorded here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<Imported>,
}

impl RunInfo {
    /// The run fields of `run`.
    pub fn of(run: &RunResult) -> Self {
        RunInfo {
            id: run.run_id.clone(),
            started_at: run.started_at.clone(),
            finished_at: run.finished_at.clone(),
            status: run.status,
            command: run.command.clone(),
            workload: run.workload.clone(),
            imported: run.imported.clone(),
        }
    }
}

/// A run's JSON as read back (`zmqperf import`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunEnvelope {
    /// [`RUN_KIND`].
    pub kind: String,
    /// 3.
    pub version: u32,
    /// The zmqperf that wrote it.
    pub zmqperf: String,
    /// The run.
    pub run: RunInfo,
    /// Its environment.
    pub environment: Environment,
    /// Its cases and findings.
    pub results: RunResultsIn,
}

/// A run's results as read back.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunResultsIn {
    /// The cases.
    pub cases: Vec<CaseResult>,
    /// The findings (none for `run`).
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// What `--find` found.
    #[serde(default)]
    pub limits: Vec<super::LimitResult>,
    /// The curves of `--curve`.
    #[serde(default)]
    pub curves: Vec<super::LoadCurve>,
}

impl From<RunEnvelope> for RunResult {
    fn from(e: RunEnvelope) -> Self {
        RunResult {
            schema_version: e.version,
            run_id: e.run.id,
            started_at: e.run.started_at,
            finished_at: e.run.finished_at,
            status: e.run.status,
            command: e.run.command,
            workload: e.run.workload,
            environment: e.environment,
            cases: e.results.cases,
            findings: e.results.findings,
            imported: e.run.imported,
            limits: e.results.limits,
            curves: e.results.curves,
        }
    }
}
