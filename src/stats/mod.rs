//! Mergeable statistics: latency distributions, throughput and the loss ledger.
//!
//! Every type here merges exactly (two results combine into the one a single observer of
//! both would have made) and serialises to JSON.

pub mod estimate;
pub mod latency;
pub mod ledger;
pub mod oneway;
pub mod throughput;

pub use estimate::estimate;
pub use latency::{LatencyHistogram, LatencySummary};
pub use ledger::{
    cause_name, cause_text, loss_causes, GapPosition, Ledger, LossSummary, SenderFacts,
    StreamLedger,
};
pub use oneway::{ClockCheck, OneWay};
pub use throughput::Throughput;
