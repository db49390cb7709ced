//! The ledger of one stream: received numbers kept as sorted ranges, with the arrival
//! times of forward jumps so holes in the middle can be timed.

use super::summary::{Gap, GapPosition, LossSummary, GAPS_LISTED};
use crate::clock::now_ns;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many forward jumps a stream ledger remembers with their arrival times (enough to
/// time every listed hole; more only cost memory).
const JUMPS_KEPT: usize = 4 * GAPS_LISTED;

/// The ledger of one stream (one sender).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct StreamLedger {
    /// Received sequence numbers as half-open ranges `[start, end)`, not touching each other,
    /// except the last run, which is kept in `run` while it grows.
    ranges: BTreeMap<u64, u64>,
    /// The run being extended by in-order arrivals, `[start, end)`; `end == start` when empty.
    run: (u64, u64),
    /// Messages recorded, duplicates included.
    arrivals: u64,
    /// Arrivals of a number already seen.
    duplicates: u64,
    /// Arrivals of a new number lower than the highest seen so far.
    reordered: u64,
    /// Clock (ns) at the first arrival.
    #[serde(default)]
    first_ns: Option<u64>,
    /// Forward jumps: a number that arrived with numbers missing just below it, and the
    /// clock (ns) at its arrival; the first [`JUMPS_KEPT`], in arrival order.
    #[serde(default)]
    jumps: Vec<(u64, u64)>,
}

impl StreamLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// The ledger of arrivals given as runs of consecutive numbers in arrival order,
    /// `(first_seq, length, arrival_ns of the first)` (a peer's compact form): the same
    /// ledger as recording each arrival in turn.
    pub fn from_runs(runs: &[(u64, u64, u64)]) -> Self {
        let mut l = StreamLedger::new();
        for &(first, len, at) in runs {
            for seq in first..first.saturating_add(len) {
                l.record_with(seq, || at);
            }
        }
        l
    }

    /// Records the arrival of `seq` now. The clock is read only off the common path: at
    /// the first arrival and at a number that does not follow the one before.
    #[inline]
    pub fn record(&mut self, seq: u64) {
        self.record_with(seq, now_ns);
    }

    /// Records the arrival of `seq`, with `clock` giving the time (ns) when one is needed.
    #[inline(always)]
    pub fn record_with(&mut self, seq: u64, clock: impl FnOnce() -> u64) {
        self.arrivals += 1;
        let (start, end) = self.run;
        if seq == end && end > start {
            // The common case: the next number in order.
            self.run.1 = end + 1;
            return;
        }
        self.record_slow(seq, clock());
    }

    /// The number that continues the run in order (the next one on the common path of
    /// [`StreamLedger::record_with`]), or None before the run has begun.
    #[inline(always)]
    pub fn next_in_order(&self) -> Option<u64> {
        (self.run.1 > self.run.0).then_some(self.run.1)
    }

    /// Records the `n` numbers that continue the run in order, from
    /// [`StreamLedger::next_in_order`] on: the same as recording each in turn.
    #[inline(always)]
    pub fn record_in_order(&mut self, n: u64) {
        debug_assert!(n == 0 || self.run.1 > self.run.0);
        self.arrivals += n;
        self.run.1 += n;
    }

    #[cold]
    fn record_slow(&mut self, seq: u64, now: u64) {
        if self.first_ns.is_none() {
            self.first_ns = Some(now);
        }
        let highest = self.highest();
        if self.contains(seq) {
            self.duplicates += 1;
            return;
        }
        match highest {
            Some(h) if seq < h => self.reordered += 1,
            Some(h) if seq > h + 1 && self.jumps.len() < JUMPS_KEPT => {
                self.jumps.push((seq, now));
            }
            _ => {}
        }
        if self.run.1 == self.run.0 && self.ranges.is_empty() {
            // The first arrival.
            self.run = (seq, seq + 1);
            return;
        }
        self.flush_run();
        self.insert(seq);
        // Keep the run on the highest range so in-order arrivals stay on the fast path.
        if let Some((&s, &e)) = self.ranges.iter().next_back() {
            self.ranges.remove(&s);
            self.run = (s, e);
        }
    }

    fn highest(&self) -> Option<u64> {
        if self.run.1 > self.run.0 {
            return Some(self.run.1 - 1);
        }
        self.ranges.iter().next_back().map(|(_, &e)| e - 1)
    }

    fn contains(&self, seq: u64) -> bool {
        if seq >= self.run.0 && seq < self.run.1 {
            return true;
        }
        matches!(self.ranges.range(..=seq).next_back(), Some((_, &e)) if seq < e)
    }

    fn flush_run(&mut self) {
        let (s, e) = self.run;
        if e > s {
            self.run = (0, 0);
            self.insert_range(s, e);
        }
    }

    fn insert(&mut self, seq: u64) {
        self.insert_range(seq, seq + 1);
    }

    /// Adds `[s, e)`, assumed not to overlap what is there, merging with neighbours.
    fn insert_range(&mut self, mut s: u64, mut e: u64) {
        if let Some((&ps, &pe)) = self.ranges.range(..=s).next_back() {
            if pe == s {
                self.ranges.remove(&ps);
                s = ps;
            }
        }
        if let Some(&ne) = self.ranges.get(&e) {
            self.ranges.remove(&e);
            e = ne;
        }
        self.ranges.insert(s, e);
    }

    /// All received ranges, sorted and merged.
    fn all_ranges(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = Vec::with_capacity(self.ranges.len() + 1);
        let mut items: Vec<(u64, u64)> = self.ranges.iter().map(|(&s, &e)| (s, e)).collect();
        if self.run.1 > self.run.0 {
            items.push(self.run);
            items.sort_unstable();
        }
        for (s, e) in items {
            match v.last_mut() {
                Some(last) if last.1 >= s => last.1 = last.1.max(e),
                _ => v.push((s, e)),
            }
        }
        v
    }

    /// Distinct sequence numbers received, counted as they came (cheaper than
    /// [`StreamLedger::received`], which walks the ranges).
    pub fn distinct(&self) -> u64 {
        self.arrivals - self.duplicates
    }

    /// Distinct sequence numbers received.
    pub fn received(&self) -> u64 {
        self.all_ranges().iter().map(|(s, e)| e - s).sum()
    }

    /// Combines the observations of another receiver of the same stream.
    ///
    /// A number seen by both counts as a duplicate, as it would for one receiver seeing both.
    pub fn merge(&mut self, other: &StreamLedger) {
        let overlap = overlap_count(&self.all_ranges(), &other.all_ranges());
        self.flush_run();
        let mut mine = other.clone();
        mine.flush_run();
        for (s, e) in mine.ranges {
            // Insert piecewise, skipping what is already present.
            let mut cur = s;
            while cur < e {
                if self.contains(cur) {
                    let (_, &ee) = self.ranges.range(..=cur).next_back().expect("contained");
                    cur = ee.min(e);
                    continue;
                }
                let next_start = self
                    .ranges
                    .range(cur..)
                    .next()
                    .map(|(&ns, _)| ns)
                    .unwrap_or(u64::MAX)
                    .min(e);
                self.insert_range(cur, next_start);
                cur = next_start;
            }
        }
        self.arrivals += other.arrivals;
        self.duplicates += other.duplicates + overlap;
        self.reordered += other.reordered;
        self.first_ns = match (self.first_ns, other.first_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.jumps.extend_from_slice(&other.jumps);
        self.jumps.sort_unstable_by_key(|&(_, t)| t);
        self.jumps.truncate(JUMPS_KEPT);
    }

    /// When the number after a hole ending at `seq` arrived, ns after the first arrival
    /// (None if it came in order behind another or was not remembered).
    fn arrival_after_hole(&self, seq: u64) -> Option<u64> {
        let first = self.first_ns?;
        self.jumps
            .iter()
            .filter(|&&(s, _)| s == seq)
            .map(|&(_, t)| t.saturating_sub(first))
            .min()
    }

    /// The figures of this stream. With `expected`, numbers `[0, expected)` should all have
    /// arrived; without it, the highest number seen marks the end.
    pub fn summary(&self, expected: Option<u64>) -> LossSummary {
        let mut ranges = self.all_ranges();
        // Numbers at or past the expected length are not of this stream: counted apart.
        let mut beyond = 0;
        if let Some(n) = expected {
            beyond = ranges
                .iter()
                .map(|&(s, e)| e.saturating_sub(s.max(n)))
                .sum();
            ranges.retain(|r| r.0 < n);
            if let Some(last) = ranges.last_mut() {
                last.1 = last.1.min(n);
            }
        }
        let received = ranges.iter().map(|(s, e)| e - s).sum();
        let end = expected
            .unwrap_or(0)
            .max(ranges.last().map(|r| r.1).unwrap_or(0));
        let mut holes = Vec::new();
        let mut cursor = 0u64;
        for &(s, e) in &ranges {
            if s > cursor {
                holes.push((cursor, s));
            }
            cursor = e;
        }
        if end > cursor {
            holes.push((cursor, end));
        }
        let lost = holes.iter().map(|(s, e)| e - s).sum();
        let gaps = holes
            .iter()
            .take(GAPS_LISTED)
            .map(|&(s, e)| {
                let position = if s == 0 {
                    GapPosition::Start
                } else if e == end {
                    GapPosition::End
                } else {
                    GapPosition::Middle
                };
                Gap {
                    first_seq: s,
                    count: e - s,
                    position,
                    after_ns: (position == GapPosition::Middle)
                        .then(|| self.arrival_after_hole(e))
                        .flatten(),
                }
            })
            .collect();
        let sum_where = |p: GapPosition| {
            holes
                .iter()
                .filter(|&&(s, e)| {
                    let at = if s == 0 {
                        GapPosition::Start
                    } else if e == end {
                        GapPosition::End
                    } else {
                        GapPosition::Middle
                    };
                    at == p
                })
                .map(|(s, e)| e - s)
                .sum()
        };
        LossSummary {
            expected: end,
            received,
            lost,
            duplicated: self.duplicates,
            reordered: self.reordered,
            gap_count: holes.len() as u64,
            lost_at_start: sum_where(GapPosition::Start),
            lost_in_middle: sum_where(GapPosition::Middle),
            lost_at_end: sum_where(GapPosition::End),
            gaps,
            beyond,
        }
    }
}

impl PartialEq for StreamLedger {
    /// Equal when the same numbers were received with the same counts, however stored.
    fn eq(&self, other: &Self) -> bool {
        self.all_ranges() == other.all_ranges()
            && self.arrivals == other.arrivals
            && self.duplicates == other.duplicates
            && self.reordered == other.reordered
    }
}

impl Eq for StreamLedger {}

fn overlap_count(a: &[(u64, u64)], b: &[(u64, u64)]) -> u64 {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let s = a[i].0.max(b[j].0);
        let e = a[i].1.min(b[j].1);
        if e > s {
            n += e - s;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    n
}
