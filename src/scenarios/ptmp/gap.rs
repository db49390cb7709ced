//! PTMP's gap lines, `i - seq = diff : t s`: i counts the messages received (from 0), seq
//! is the message's sequence number, diff = i - seq, and t the time since the receiver
//! started. A line is due for the first message and wherever diff changes (a hole, a
//! duplicate, a message out of order); with verbose, for every message. Its text is
//! `report::ptmp::gap_line`.

use serde::Serialize;

/// One gap line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GapLine {
    /// Index of the message among those received, from 0.
    pub index: u64,
    /// Its sequence number.
    pub seq: u64,
    /// index - seq (negative when messages were lost before it).
    pub diff: i64,
    /// When it arrived, ns since the receiver started.
    pub at_ns: u64,
}

/// Decides which messages get a line.
#[derive(Debug, Clone, Default)]
pub struct GapTracker {
    next_index: u64,
    last_diff: Option<i64>,
    verbose: bool,
}

impl GapTracker {
    /// A tracker; `verbose` gives every message a line.
    pub fn new(verbose: bool) -> Self {
        GapTracker {
            verbose,
            ..Default::default()
        }
    }

    /// Notes the next message received, `seq`, arrived `at_ns` after the start; returns
    /// its line if one is due.
    #[inline]
    pub fn next(&mut self, seq: u64, at_ns: u64) -> Option<GapLine> {
        let index = self.next_index;
        self.next_index += 1;
        let diff = (index as i128 - seq as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        let changed = self.last_diff != Some(diff);
        self.last_diff = Some(diff);
        (changed || self.verbose).then_some(GapLine {
            index,
            seq,
            diff,
            at_ns,
        })
    }

    /// Messages noted so far.
    pub fn count(&self) -> u64 {
        self.next_index
    }
}

/// PTMP's own count of missed messages, for its summary line (`recv COUNT in T s or R
/// kHz, missed M`): for each message, how far its count jumped past the previous one's
/// next, when it jumped forward; the previous starts at 0 (so a stream starting at 5
/// counts 4). Duplicates, reordering and a lost end count nothing: the ledger has those.
#[derive(Debug, Clone, Copy, Default)]
pub struct Missed {
    last: i64,
    /// Missed so far.
    pub total: u64,
}

impl Missed {
    /// Notes the next message received, `seq`.
    #[inline]
    pub fn next(&mut self, seq: u64) {
        let seq = seq.min(i64::MAX as u64) as i64;
        let here = seq - self.last - 1;
        if here > 0 {
            self.total += here as u64;
        }
        self.last = seq;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ptmp::gap_line;

    #[test]
    fn a_line_for_the_first_message_and_each_change_of_diff() {
        let mut g = GapTracker::new(false);
        let a = g.next(1797, 2_749_240_000).expect("first line");
        assert_eq!(gap_line(&a), "0 - 1797 = -1797 : 2.74924s");
        assert_eq!(g.next(1798, 2_749_280_000), None, "same diff: no line");
        let hole = g.next(1805, 2_750_000_000).expect("a hole changes diff");
        assert_eq!(gap_line(&hole), "2 - 1805 = -1803 : 2.75s");
        assert_eq!(g.next(1806, 2_751_000_000), None);
        // A duplicate moves diff the other way.
        assert_eq!(
            gap_line(&g.next(1806, 2_752_000_000).unwrap()),
            "4 - 1806 = -1802 : 2.752s"
        );
        assert_eq!(g.count(), 5);
    }

    #[test]
    fn in_order_from_zero_is_one_line_unless_verbose() {
        let mut quiet = GapTracker::new(false);
        let lines: Vec<_> = (0..100).filter_map(|s| quiet.next(s, s * 1000)).collect();
        assert_eq!(lines.len(), 1);
        assert_eq!(gap_line(&lines[0]), "0 - 0 = 0 : 0s");
        let mut loud = GapTracker::new(true);
        let lines: Vec<_> = (0..100).filter_map(|s| loud.next(s, s * 1000)).collect();
        assert_eq!(lines.len(), 100);
        assert_eq!(gap_line(&lines[99]), "99 - 99 = 0 : 9.9e-05s");
    }

    #[test]
    fn missed_is_counted_as_ptmp_counts_it() {
        let mut m = Missed::default();
        for s in [0, 1, 2, 5, 6, 9, 9, 8, 10] {
            m.next(s);
        }
        // 2 -> 5 and 6 -> 9: 4; the duplicate 9 and the late 8 add nothing; 8 -> 10 adds
        // 1 (PTMP compares with the message before, not with the highest seen).
        assert_eq!(m.total, 5);
        let mut m = Missed::default();
        m.next(1797);
        assert_eq!(m.total, 1796, "PTMP's previous count starts at 0");
    }
}
