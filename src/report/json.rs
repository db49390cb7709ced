//! JSON: one envelope for every command that prints JSON (schema/envelope.schema.json).
//!
//! ```text
//! { "kind": "run", "version": 3, "zmqperf": "0.1.0",
//!   "run": { "id", "started_at", "finished_at", "status", "command", "workload" } | null,
//!   "environment": { ... } | null,
//!   "results": { ... } | null,
//!   "error": { "exit_code", "message" }            (only when the command failed first) }
//! ```
//!
//! `kind` names the command and decides the shape of `results` (`run` for a recorded run,
//! whichever command made it); `run` is the recorded run the results belong to (none for the
//! compatible commands, which record nothing, nor for `history` and `compare`, which read
//! many); `environment` is where it was measured. A run's JSON is [`Json`]'s; it is also
//! what `zmqperf import` reads back (model::envelope), as it still reads the flat reports of
//! versions 1 and 2.

use super::Reporter;
pub use crate::model::envelope::{RunInfo, RUN_KIND};
use crate::model::{CaseResult, Finding, RunResult};
use serde::Serialize;

/// The version of the envelope (and of the run inside it): 3. Versions 1 and 2 were a run's
/// fields at the top level, without an envelope; `zmqperf import` still reads them.
pub const VERSION: u32 = crate::model::SCHEMA_VERSION;

/// The envelope around one command's results.
#[derive(Serialize)]
pub struct Envelope<'a, E: Serialize, R: Serialize> {
    /// The command.
    pub kind: &'a str,
    /// [`VERSION`].
    pub version: u32,
    /// The zmqperf that wrote it.
    pub zmqperf: &'static str,
    /// The recorded run the results belong to.
    pub run: Option<&'a RunInfo>,
    /// Where they were measured.
    pub environment: Option<&'a E>,
    /// The command's results; None when it failed before it had any.
    pub results: Option<&'a R>,
    /// Why the command failed before it had results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
}

/// A command that failed before it had results: its exit code and message.
#[derive(Serialize)]
pub struct ErrorInfo {
    /// The process's exit code.
    pub exit_code: i32,
    /// The error as printed on stderr.
    pub message: String,
}

/// A run's results: its cases and, from `diagnose`, its findings.
#[derive(Serialize)]
struct RunResults<'a> {
    cases: &'a [CaseResult],
    findings: &'a [Finding],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    limits: &'a [crate::model::LimitResult],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    curves: &'a [crate::model::LoadCurve],
}

/// `results` of `kind` in the envelope, with `run` and `environment`; pretty-printed
/// (a report to read), or on one line (the compatible commands' `--json`, a line per
/// result), always ending with a newline.
pub fn envelope<E: Serialize, R: Serialize>(
    kind: &str,
    run: Option<&RunInfo>,
    environment: Option<&E>,
    results: &R,
    pretty: bool,
) -> String {
    write(
        &Envelope {
            kind,
            version: VERSION,
            zmqperf: crate::VERSION,
            run,
            environment,
            results: Some(results),
            error: None,
        },
        pretty,
    )
}

/// The envelope of `kind` for a command that failed before it had results.
pub fn failure(kind: &str, exit_code: i32, message: String) -> String {
    write(
        &Envelope::<(), ()> {
            kind,
            version: VERSION,
            zmqperf: crate::VERSION,
            run: None,
            environment: None,
            results: None,
            error: Some(ErrorInfo { exit_code, message }),
        },
        false,
    )
}

fn write<T: Serialize>(v: &T, pretty: bool) -> String {
    let text = if pretty {
        serde_json::to_string_pretty(v)
    } else {
        serde_json::to_string(v)
    };
    match text {
        Ok(mut s) => {
            s.push('\n');
            s
        }
        // The model has only string keys and plain values, so this cannot happen; still,
        // a report is no reason to panic.
        Err(e) => format!(
            "{{\"error\": {}}}\n",
            serde_json::Value::String(format!("cannot serialise the results: {e}"))
        ),
    }
}

/// Renders a run as JSON: its envelope, with the cases and findings as results.
pub struct Json;

impl Reporter for Json {
    fn render(&self, run: &RunResult) -> String {
        envelope(
            RUN_KIND,
            Some(&RunInfo::of(run)),
            Some(&run.environment),
            &RunResults {
                cases: &run.cases,
                findings: &run.findings,
                limits: &run.limits,
                curves: &run.curves,
            },
            true,
        )
    }
}
