//! `zmqperf compare`: the change of each figure from run A to run B, whether it is beyond
//! noise, and whether it regressed past a threshold (so the command can gate CI).
//!
//! A difference is beyond noise when the two 95% confidence intervals do not overlap. It is
//! a regression when, in addition, the figure got worse by more than the threshold.
//! The cases of the two runs are paired in `matching` (which also names what differs
//! between their machines, host by host for runs across hosts), each pair of figures
//! judged in `noise`. The verdict is written out by [`crate::report::compare`], which also
//! lays several runs side by side, a column per host (`compare --by-host`); its tests cover
//! this module too (they read the text). Runs of `--find` are compared by their limits
//! (`limits`): the steps of two searches differ by design.

mod limits;
mod matching;
mod noise;
mod types;

pub use limits::LimitChange;
pub use matching::compare;
#[cfg(test)]
pub(crate) use noise::change;
pub use noise::parse_percent;
pub(crate) use noise::MAX_REPETITIONS;
pub use types::{
    CaseFailure, Comparison, IncompleteCase, Metric, MetricChange, Noise, RunRef, Verdict,
};
