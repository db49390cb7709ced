//! A run: one invocation of `zmqperf run`, `diagnose`, `matrix` or a recorded fan-out, with
//! its environment, its cases and its findings; and where it came from when imported.

use super::{CaseResult, Environment, Finding, LimitResult, LoadCurve, NodeResult, RunStatus};
use serde::{Deserialize, Serialize};

/// One invocation of `zmqperf run` or `zmqperf diagnose`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// Identifier of the run in the history, e.g. `20261121-221530-4f2a`.
    pub run_id: String,
    /// Start time, RFC 3339 UTC.
    pub started_at: String,
    /// End time, RFC 3339 UTC; None while running or if the run was cut short.
    pub finished_at: Option<String>,
    /// "complete", "interrupted" (Ctrl-C or a crash: the cases so far are kept), "partial"
    /// (as read from the history: the run ended but some of its cases could not be written
    /// there) or "running".
    pub status: RunStatus,
    /// The exact command line.
    pub command: String,
    /// The workload file, if one was given: its path and its text.
    pub workload: Option<Workload>,
    /// The machine and software that produced the results.
    pub environment: Environment,
    /// The cases, in the order they ran (none for `zmqperf diagnose`).
    pub cases: Vec<CaseResult>,
    /// What `zmqperf diagnose` found, in the order the experiments ran (none for
    /// `zmqperf run`; absent from reports written before findings existed).
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// Where the run came from when it was taken into this history by `zmqperf import`
    /// (absent for a run recorded here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<Imported>,
    /// What `--find` found for each case searched (its steps are among `cases`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<LimitResult>,
    /// The latency-under-load curves of `--curve` (their steps are among `cases`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curves: Vec<LoadCurve>,
}

/// The mark of an imported run: the run as it was known where it was made, and the file
/// it came in.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Imported {
    /// The run's id in the history it was made in (`run_id` is its id in this history).
    /// A run imported again from a history that had imported it keeps the very first id.
    pub original_run_id: String,
    /// The file it was imported from, as given to `zmqperf import` (`standard input` for
    /// `-`).
    pub file: String,
    /// The host name of the machine the run was made on (its environment's `hostname`).
    pub from_host: String,
    /// When it was imported, RFC 3339 UTC.
    pub imported_at: String,
    /// SHA-256 (hex) of the run's content: the run as exported, with its original id and
    /// without this mark. The same run imported twice has the same hash.
    pub content_sha256: String,
}

/// A workload file as it was when the run read it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Workload {
    /// Path as given.
    pub path: String,
    /// Full text.
    pub text: String,
}

impl RunResult {
    /// The host a node ran on: its `host`, or the run's own host name for a node recorded
    /// before hosts existed.
    pub fn node_host<'a>(&'a self, n: &'a NodeResult) -> &'a str {
        if n.host.is_empty() {
            &self.environment.hostname
        } else {
            &n.host
        }
    }

    /// Every host the run's nodes ran on, in the order first met, then those of
    /// [`Environment::hosts`] no node names; the run's own host name alone when nothing
    /// names another.
    pub fn hosts(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for c in &self.cases {
            for h in c.hosts(&self.environment.hostname) {
                if !out.contains(&h) {
                    out.push(h);
                }
            }
        }
        for h in &self.environment.hosts {
            if !out.contains(&h.name.as_str()) {
                out.push(&h.name);
            }
        }
        if out.is_empty() {
            out.push(&self.environment.hostname);
        }
        out
    }

    /// Whether the run's nodes ran on more than one host.
    pub fn is_multi_host(&self) -> bool {
        self.hosts().len() > 1
    }
}
