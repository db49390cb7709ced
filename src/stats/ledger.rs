//! The loss ledger: which sequence numbers of each stream arrived, and how.
//!
//! A receiver records every sequence number it sees. The ledger keeps the set of received
//! numbers as sorted ranges, so it can say exactly what was lost (holes), duplicated (seen
//! twice) and reordered (arrived after a higher number), and where the holes fall.

use crate::clock::now_ns;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How many holes a summary lists one by one.
pub const GAPS_LISTED: usize = 16;

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

    /// Records the arrival of `seq` now. The clock is read only off the common path: at
    /// the first arrival and at a number that does not follow the one before.
    #[inline]
    pub fn record(&mut self, seq: u64) {
        self.record_with(seq, now_ns);
    }

    /// Records the arrival of `seq`, with `clock` giving the time (ns) when one is needed.
    #[inline]
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
        let ranges = self.all_ranges();
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
    /// Messages that arrived after one with a higher sequence number.
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
        let room = GAPS_LISTED.saturating_sub(self.gaps.len());
        self.gaps.extend(o.gaps.iter().take(room).copied());
    }

    /// True when nothing was lost, duplicated or reordered.
    pub fn is_clean(&self) -> bool {
        self.lost == 0 && self.duplicated == 0 && self.reordered == 0
    }
}

/// Ledgers of all streams a receiver saw, by stream id.
///
/// The stream that received the last message is kept apart ("hot"), so a receiver of one
/// stream, or of a few in bursts, records without a map lookup per message.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    streams: BTreeMap<u32, StreamLedger>,
    hot: Option<(u32, StreamLedger)>,
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `seq` of stream `stream`.
    #[inline]
    pub fn record(&mut self, stream: u32, seq: u64) {
        if let Some((id, l)) = &mut self.hot {
            if *id == stream {
                l.record(seq);
                return;
            }
        }
        self.record_other(stream, seq);
    }

    #[cold]
    fn record_other(&mut self, stream: u32, seq: u64) {
        self.cool();
        let mut l = self.streams.remove(&stream).unwrap_or_default();
        l.record(seq);
        self.hot = Some((stream, l));
    }

    fn cool(&mut self) {
        if let Some((id, l)) = self.hot.take() {
            self.streams.insert(id, l);
        }
    }

    /// Makes stream `id` part of the ledger even if none of its numbers arrived, so a
    /// summary with an expected count counts it as lost.
    pub fn expect_stream(&mut self, id: u32) {
        if !matches!(&self.hot, Some((h, _)) if *h == id) {
            self.streams.entry(id).or_default();
        }
    }

    /// Every stream's ledger, by id.
    pub fn streams(&self) -> BTreeMap<u32, &StreamLedger> {
        let mut all: BTreeMap<u32, &StreamLedger> =
            self.streams.iter().map(|(k, v)| (*k, v)).collect();
        if let Some((id, l)) = &self.hot {
            all.insert(*id, l);
        }
        all
    }

    /// Combines another receiver's ledger.
    pub fn merge(&mut self, other: &Ledger) {
        self.cool();
        for (id, l) in other.streams() {
            self.streams.entry(id).or_default().merge(l);
        }
    }

    /// The figures over all streams; `expected` is per stream.
    pub fn summary(&self, expected: Option<u64>) -> LossSummary {
        let mut total = LossSummary::default();
        for l in self.streams().values() {
            total.add(&l.summary(expected));
        }
        total
    }
}

impl PartialEq for Ledger {
    fn eq(&self, other: &Self) -> bool {
        self.streams() == other.streams()
    }
}

impl Eq for Ledger {}

impl Serialize for Ledger {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            streams: BTreeMap<u32, &'a StreamLedger>,
        }
        Wire {
            streams: self.streams(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Ledger {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            streams: BTreeMap<u32, StreamLedger>,
        }
        Ok(Ledger {
            streams: Wire::deserialize(d)?.streams,
            hot: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ledger_of(seqs: &[u64]) -> StreamLedger {
        let mut l = StreamLedger::new();
        for &s in seqs {
            l.record(s);
        }
        l
    }

    #[test]
    fn in_order_is_clean() {
        let l = ledger_of(&(0..1000).collect::<Vec<_>>());
        let s = l.summary(Some(1000));
        assert_eq!(
            (s.received, s.lost, s.duplicated, s.reordered),
            (1000, 0, 0, 0)
        );
        assert!(s.is_clean());
    }

    /// A ledger fed `seqs`, the k-th arriving at 1,000 x k + 500 ns.
    fn timed_ledger_of(seqs: &[u64]) -> StreamLedger {
        let mut l = StreamLedger::new();
        for (k, &s) in seqs.iter().enumerate() {
            l.record_with(s, || 1_000 * k as u64 + 500);
        }
        l
    }

    #[test]
    fn gaps_at_start_middle_end() {
        // 0..5 lost (start), 20..23 lost (middle), 90..100 lost (end).
        let seqs: Vec<u64> = (5..20).chain(23..90).collect();
        let s = timed_ledger_of(&seqs).summary(Some(100));
        assert_eq!(s.received, 82);
        assert_eq!(s.lost, 18);
        assert_eq!(
            (s.lost_at_start, s.lost_in_middle, s.lost_at_end),
            (5, 3, 10)
        );
        assert_eq!(s.gap_count, 3);
        assert_eq!(
            s.gaps,
            vec![
                Gap {
                    first_seq: 0,
                    count: 5,
                    position: GapPosition::Start,
                    after_ns: None,
                },
                Gap {
                    first_seq: 20,
                    count: 3,
                    position: GapPosition::Middle,
                    // 23 is the 16th arrival (k = 15), the first (k = 0) was 15,000 ns before.
                    after_ns: Some(15_000),
                },
                Gap {
                    first_seq: 90,
                    count: 10,
                    position: GapPosition::End,
                    after_ns: None,
                },
            ]
        );
    }

    #[test]
    fn the_clock_is_read_only_off_the_in_order_path() {
        use std::cell::Cell;
        let reads = Cell::new(0);
        let mut l = StreamLedger::new();
        for s in (0..1000).chain(1005..2000) {
            l.record_with(s, || {
                reads.set(reads.get() + 1);
                s
            });
        }
        // The first arrival and the jump over 1000..1005.
        assert_eq!(reads.get(), 2);
    }

    #[test]
    fn a_hole_filled_out_of_order_has_no_time_and_merge_keeps_times() {
        // 3 and 4 arrive late: no hole at all.
        let s = timed_ledger_of(&[0, 1, 2, 5, 6, 3, 4]).summary(Some(7));
        assert!(s.gaps.is_empty());
        // Two receivers of one stream: the merged hole is timed from the earliest first
        // arrival of either.
        let a = timed_ledger_of(&[0, 1, 2]); // first arrival at 500 ns
        let mut b = StreamLedger::new();
        b.record_with(3, || 10_000);
        b.record_with(8, || 20_000);
        let mut m = a.clone();
        m.merge(&b);
        let s = m.summary(Some(9));
        assert_eq!(s.lost, 4);
        assert_eq!(s.gaps[0].first_seq, 4);
        assert_eq!(s.gaps[0].after_ns, Some(19_500));
        // Times survive serialisation (child processes send their ledgers as JSON).
        let back: StreamLedger = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back.summary(Some(9)), s);
    }

    #[test]
    fn duplicates_at_start_middle_end() {
        let s = ledger_of(&[0, 0, 1, 2, 3, 3, 4, 5, 5]).summary(Some(6));
        assert_eq!(
            (s.received, s.lost, s.duplicated, s.reordered),
            (6, 0, 3, 0)
        );
    }

    #[test]
    fn reorders_at_start_middle_end() {
        // 1 before 0 (start), 5 before 4 (middle), 9 before 8 (end).
        let s = ledger_of(&[1, 0, 2, 3, 5, 4, 6, 7, 9, 8]).summary(Some(10));
        assert_eq!(
            (s.received, s.lost, s.duplicated, s.reordered),
            (10, 0, 0, 3)
        );
    }

    #[test]
    fn a_late_arrival_fills_its_gap() {
        let s = ledger_of(&[0, 1, 3, 4, 2]).summary(Some(5));
        assert_eq!((s.lost, s.reordered), (0, 1));
        let s = ledger_of(&[0, 1, 3, 4, 2, 2]).summary(Some(5));
        assert_eq!((s.lost, s.reordered, s.duplicated), (0, 1, 1));
    }

    #[test]
    fn without_expected_the_highest_marks_the_end() {
        let s = ledger_of(&[0, 1, 5]).summary(None);
        assert_eq!((s.expected, s.received, s.lost), (6, 3, 3));
        assert_eq!(s.lost_in_middle, 3);
    }

    #[test]
    fn merge_of_two_receivers_equals_one_that_saw_everything() {
        // Round-robin split of 0..100 minus a few, as PUSH would load-balance.
        let all: Vec<u64> = (0..100).filter(|s| s % 17 != 3).collect();
        let a: Vec<u64> = all.iter().copied().filter(|s| s % 2 == 0).collect();
        let b: Vec<u64> = all.iter().copied().filter(|s| s % 2 == 1).collect();
        let mut la = ledger_of(&a);
        la.merge(&ledger_of(&b));
        let whole = ledger_of(&all).summary(Some(100));
        let merged = la.summary(Some(100));
        assert_eq!(merged.received, whole.received);
        assert_eq!(merged.lost, whole.lost);
        // The same holes (their times differ: each ledger read the clock itself).
        let holes = |v: &[Gap]| {
            v.iter()
                .map(|g| (g.first_seq, g.count, g.position))
                .collect::<Vec<_>>()
        };
        assert_eq!(holes(&merged.gaps), holes(&whole.gaps));
        assert_eq!(merged.duplicated, 0);
    }

    #[test]
    fn an_expected_stream_that_never_arrived_is_lost_whole() {
        // Fan-in of three senders: stream 1 sent nothing that arrived.
        let mut l = Ledger::new();
        for s in 0..10 {
            l.record(0, s);
            l.record(2, s);
        }
        for id in 0..3 {
            l.expect_stream(id);
        }
        let s = l.summary(Some(10));
        assert_eq!((s.expected, s.received, s.lost), (30, 20, 10));
        assert_eq!(s.lost_at_start, 10);
        // Expecting a stream that is there changes nothing.
        l.expect_stream(2);
        assert_eq!(l.summary(Some(10)), s);
    }

    #[test]
    fn merge_counts_overlap_as_duplicates() {
        let mut a = ledger_of(&[0, 1, 2, 3]);
        a.merge(&ledger_of(&[2, 3, 4]));
        let s = a.summary(Some(5));
        assert_eq!((s.received, s.duplicated, s.lost), (5, 2, 0));
    }

    #[test]
    fn interleaved_streams_keep_apart() {
        let mut l = Ledger::new();
        for s in 0..100u64 {
            l.record((s % 3) as u32, s / 3);
        }
        let by_id = l.streams();
        assert_eq!(by_id.len(), 3);
        let s = l.summary(None);
        assert_eq!(
            (s.received, s.lost, s.duplicated, s.reordered),
            (100, 0, 0, 0)
        );
        let mut m = Ledger::new();
        m.merge(&l);
        assert_eq!(m, l);
    }

    #[test]
    fn ledger_of_many_streams() {
        let mut l = Ledger::new();
        for s in 0..10 {
            l.record(1, s);
            if s != 4 {
                l.record(2, s);
            }
        }
        let s = l.summary(Some(10));
        assert_eq!((s.expected, s.received, s.lost), (20, 19, 1));
        let json = serde_json::to_string(&l).unwrap();
        let back: Ledger = serde_json::from_str(&json).unwrap();
        assert_eq!(back.summary(Some(10)), s);
    }
}
