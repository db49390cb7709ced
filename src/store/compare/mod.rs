//! `zmqperf compare`: the change of each figure from run A to run B, whether it is beyond
//! noise, and whether it regressed past a threshold (so the command can gate CI).
//!
//! A difference is beyond noise when the two 95% confidence intervals do not overlap. It is
//! a regression when, in addition, the figure got worse by more than the threshold.
//! The cases of the two runs are paired in `matching` (which also names what differs
//! between their machines, host by host for runs across hosts), each pair of figures
//! judged in `noise`, and the verdict written out in `format`. `by_host` lays several runs
//! side by side instead, a column per host (`compare --by-host`).

mod by_host;
mod format;
mod matching;
mod noise;
#[cfg(test)]
mod tests;
mod types;

pub use by_host::{by_host, format_by_host, short_cpu, HostColumn, HostTable};
pub use format::{comparison_json, format_comparison};
pub use matching::compare;
pub use noise::parse_percent;
pub use types::{
    CaseFailure, Comparison, IncompleteCase, Metric, MetricChange, Noise, RunRef, Verdict,
};
