//! A case's figures per interval (`--interval 1s`): what each receiving node measured in
//! each interval of its stream, and the drift verdict on them (stats::drift).

use crate::stats::drift::{self, Drift, Point};
use crate::stats::{LatencyHistogram, LatencySummary};
use serde::{Deserialize, Serialize};

/// One interval of one receiving node.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IntervalRecord {
    /// Its start, from the node's first message, ms.
    pub start_ms: f64,
    /// Its length, ms (the last one is partial).
    pub dur_ms: f64,
    /// Messages delivered in it.
    pub messages: u64,
    /// Messages that went missing in it (holes the ledger saw open in it).
    pub lost: u64,
    /// Latency of the time-stamped messages delivered in it (None: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
    /// The HdrHistogram of those latencies (the interval's own, not cumulative).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<LatencyHistogram>,
    /// The node's CPU in it (its thread, or its process when it has one), % of one core.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_pct: Option<f64>,
    /// A fan-out's record: the first tick in it, from 1 (its messages are those the
    /// publisher sent in its ticks, whenever they arrived).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<u64>,
    /// A closed-loop client's record: its `messages` are round trips, its latency round
    /// trip / 2.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub round_trips: bool,
}

impl IntervalRecord {
    /// Its delivered rate, msg/s.
    pub fn msgs_per_sec(&self) -> f64 {
        self.messages as f64 / (self.dur_ms / 1e3).max(1e-9)
    }

    /// The point the drift verdict reads.
    pub fn point(&self) -> Point {
        Point {
            at_s: self.start_ms / 1e3,
            dur_s: self.dur_ms / 1e3,
            messages: self.messages,
            lost: self.lost,
            p99_ns: self
                .latency
                .filter(|l| l.count > 0)
                .map(|l| l.p99_ns as f64),
        }
    }
}

/// The intervals of one receiving node (one replica) in one repetition.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IntervalSeries {
    /// The node, with its replica when it has several: `sink`, `workers[2]`.
    pub node: String,
    /// The repetition, from 1.
    pub repetition: u32,
    /// The interval asked for, ms.
    pub interval_ms: f64,
    pub records: Vec<IntervalRecord>,
    /// Whether latency or loss drift over the run.
    pub drift: Drift,
}

impl IntervalSeries {
    /// The series of `node` in `repetition`, with its verdict.
    pub fn new(
        node: String,
        repetition: u32,
        interval_ms: f64,
        records: Vec<IntervalRecord>,
    ) -> Self {
        let points: Vec<Point> = records.iter().map(IntervalRecord::point).collect();
        IntervalSeries {
            node,
            repetition,
            interval_ms,
            drift: drift::verdict(&points),
            records,
        }
    }
}
