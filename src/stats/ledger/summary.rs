//! What a ledger says about a stream: the counts of lost, duplicated and reordered
//! messages, and the holes, each placed at the start, middle or end.

use serde::{Deserialize, Serialize};

/// How many holes a summary lists one by one.
pub const GAPS_LISTED: usize = 16;

/// Where a hole in a stream falls; each points at a different cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GapPosition {
    /// From the first message on: typically a slow joiner.
    Start,
    /// Inside the stream: typically a high-water mark reached.
    Middle,
    /// Up to the last message: typically a fast quit (sender gone before its queue drained).
    End,
}

/// One hole: `count` numbers from `first_seq` never arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gap {
    /// First missing sequence number.
    pub first_seq: u64,
    /// How many in a row are missing.
    pub count: u64,
    /// Start, middle or end of the stream.
    pub position: GapPosition,
    /// For a hole in the middle: when the first number after it arrived, ns after the
    /// stream's first arrival (None at the start or end, or when that number arrived out
    /// of order).
    #[serde(default)]
    pub after_ns: Option<u64>,
}

/// What a ledger says about a stream (or, merged, about many).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct LossSummary {
    /// Messages that should have arrived.
    pub expected: u64,
    /// Distinct messages that arrived.
    pub received: u64,
    /// Messages that never arrived.
    pub lost: u64,
    /// Arrivals of a message already received.
    pub duplicated: u64,
    /// Arrivals of a new number (not a duplicate) lower than the highest already seen: a
    /// late message. A duplicate is never counted as reordered.
    pub reordered: u64,
    /// Number of holes.
    pub gap_count: u64,
    /// Lost in a hole at the start of the stream.
    pub lost_at_start: u64,
    /// Lost in holes inside the stream.
    pub lost_in_middle: u64,
    /// Lost in a hole reaching the end of the stream.
    pub lost_at_end: u64,
    /// The first holes (at most 16), in stream order.
    pub gaps: Vec<Gap>,
    /// Arrivals numbered at or beyond the expected length: not of this stream (a message
    /// garbled on the way, or one of another run), left out of every other count.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub beyond: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl LossSummary {
    /// Adds another stream's figures (gaps lists are concatenated up to the limit).
    pub fn add(&mut self, o: &LossSummary) {
        self.expected += o.expected;
        self.received += o.received;
        self.lost += o.lost;
        self.duplicated += o.duplicated;
        self.reordered += o.reordered;
        self.gap_count += o.gap_count;
        self.lost_at_start += o.lost_at_start;
        self.lost_in_middle += o.lost_in_middle;
        self.lost_at_end += o.lost_at_end;
        self.beyond += o.beyond;
        let room = GAPS_LISTED.saturating_sub(self.gaps.len());
        self.gaps.extend(o.gaps.iter().take(room).copied());
    }

    /// True when nothing was lost, duplicated or reordered.
    pub fn is_clean(&self) -> bool {
        self.lost == 0 && self.duplicated == 0 && self.reordered == 0
    }
}

#[cfg(test)]
impl LossSummary {
    /// Losses placed at the start, in the middle and at the end (for the tests of causes).
    pub(crate) fn placed(start: u64, middle: u64, end: u64) -> Self {
        LossSummary {
            lost: start + middle + end,
            lost_at_start: start,
            lost_in_middle: middle,
            lost_at_end: end,
            ..Default::default()
        }
    }
}
