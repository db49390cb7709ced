//! The results of a suite run: what the runner produces, the store keeps and the reporters
//! show. Every field here is part of the JSON report (schema/run-result.schema.json).
//! A run holds measured cases (`zmqperf run`), findings (`zmqperf diagnose`), or both.
//!
//! One file per concept: the run (`run`), the machine it ran on (`environment`), a case and
//! its summary (`case`), the case's nodes and edges (`graph`), findings (`finding`), and the
//! one table of a case's figures (`metric`). The
//! paths stay `crate::model::X`; [`Estimate`] lives in [`crate::stats`] and is re-exported.

mod case;
mod environment;
mod finding;
mod graph;
mod interval;
mod limit;
mod metric;
mod run;
mod status;
#[cfg(test)]
mod tests;

pub use crate::stats::Estimate;
pub use case::{
    BusyProcess, CaseResult, CaseSummary, Floor, Kind, LoopMode, MachineLoad, ProcessUsage,
    Repetition, RoleUsage,
};
pub use environment::{Environment, HostEnvironment, HostNic, NetworkInterface};
pub use finding::{Finding, Measure, Severity, TimedGap, Triage};
pub use graph::{is_receiving_role, is_sending_role, EdgeResult, NodeResult};
pub use interval::{IntervalRecord, IntervalSeries};
pub use limit::{CurvePoint, LimitResult, LoadCurve, TunedSetting};
pub use metric::{Metric, MetricRow, METRICS};
pub use run::{Imported, RunResult, Workload};
pub mod envelope;
pub use status::RunStatus;

/// Version of the JSON report; bumped when a field changes meaning or disappears. 3: every
/// command's JSON is one envelope (`kind`, `version`, `run`, `environment`, `results`:
/// report::json); 1 and 2 had a run's fields at the top level and are still imported.
pub const SCHEMA_VERSION: u32 = 3;
