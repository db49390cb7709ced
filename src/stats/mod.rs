//! Mergeable statistics: latency distributions, throughput and the loss ledger.
//!
//! Every type here merges exactly (two results combine into the one a single observer of
//! both would have made) and serialises to JSON.

pub mod cause;
pub mod drift;
pub mod estimate;
pub mod latency;
pub mod ledger;
pub mod oneway;
pub mod throughput;

pub use cause::{cause_of, loss_causes, Cause, Facts, SenderEnd, SenderFacts};
pub use estimate::{estimate, Estimate};
pub use latency::{LatencyHistogram, LatencySummary};
pub use ledger::{GapPosition, Ledger, LossSummary, StreamLedger};
pub use oneway::{ClockCheck, OneWay};
pub use throughput::Throughput;
