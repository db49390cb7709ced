//! `zmqperf compare`: the change of each figure from run A to run B, whether it is beyond
//! noise, and whether it regressed past a threshold (so the command can gate CI).
//!
//! A difference is beyond noise when the two 95% confidence intervals do not overlap. It is
//! a regression when, in addition, the figure got worse by more than the threshold.
//! The cases of the two runs are paired in `matching`, each pair of figures judged in
//! `noise`, and the verdict written out in `format`.

mod format;
mod matching;
mod noise;
#[cfg(test)]
mod tests;
mod types;

pub use format::format_comparison;
pub use matching::compare;
pub use noise::parse_percent;
pub use types::{CaseFailure, Comparison, Metric, MetricChange, Noise, RunRef};
