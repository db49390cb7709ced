//! The swarm's figures per tick (seed 002's per-tick MIN/MAX/MEAN/HARMONIC MEAN): each
//! message counts in the tick its publisher sent it in (its sequence number over the
//! messages per tick), whenever it arrives, so a subscriber process stopped for a while
//! shows as the late ticks it delivered after, not as quiet seconds. Ticks closer than a
//! second are taken together, a record per second of the schedule.
//!
//! A record closes when every subscriber of the process has every message of it, or when
//! nothing of it arrived for the swarm's idle time (a loss), or at the end; it is then
//! handed to the live hook. A message that comes after its record closed is still counted
//! in it: the stored record is final, the live line was the first word.

use crate::model::IntervalRecord;
use crate::stats::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The publisher's schedule, as the swarm needs it to place a message in its tick.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct TickPlan {
    /// Messages per tick.
    pub per_tick: u64,
    /// Time between ticks, ms (above 0: ticks sent back to back have no time of their own).
    pub interval_ms: f64,
    /// Measured ticks.
    pub passes: u64,
}

impl TickPlan {
    /// Ticks per record: one, or as many as make a second of the schedule.
    pub fn group(&self) -> u64 {
        (1000.0 / self.interval_ms.max(1e-3)).ceil().max(1.0) as u64
    }

    /// Records in the whole stream.
    pub fn records(&self) -> u64 {
        self.passes.div_ceil(self.group())
    }

    /// The first tick (from 0) and the ticks of record `k`.
    pub fn ticks_of(&self, k: u64) -> (u64, u64) {
        let g = self.group();
        let first = k * g;
        (first, g.min(self.passes.saturating_sub(first)))
    }

    /// The record `k` before any message is in it: its place in the schedule.
    pub fn empty_record(&self, k: u64) -> IntervalRecord {
        let (first, n) = self.ticks_of(k);
        IntervalRecord {
            start_ms: first as f64 * self.interval_ms,
            dur_ms: n as f64 * self.interval_ms,
            messages: 0,
            lost: 0,
            latency: None,
            histogram: None,
            cpu_pct: None,
            tick: Some(first + 1),
            round_trips: false,
        }
    }
}

/// A record in the making.
struct Open {
    received: u64,
    hist: LatencyHistogram,
    last_ns: u64,
}

/// The records of one swarm.
pub(crate) struct TickRecords {
    plan: TickPlan,
    /// Messages of the stream per record.
    per_record: u64,
    subs: u64,
    open: BTreeMap<u64, Open>,
    closed: BTreeMap<u64, IntervalRecord>,
    cpu_at: f64,
    cpu_since: u64,
}

impl TickRecords {
    /// For `subs` subscribers of a stream sent on `plan`.
    pub(crate) fn new(plan: TickPlan, subs: u32) -> TickRecords {
        TickRecords {
            plan,
            per_record: plan.per_tick.saturating_mul(plan.group()).max(1),
            subs: subs as u64,
            open: BTreeMap::new(),
            closed: BTreeMap::new(),
            cpu_at: crate::roles::usage::cpu_now_ms(true),
            cpu_since: crate::clock::now_ns(),
        }
    }

    /// Deliveries due in record `k`: each subscriber gets each of its messages.
    fn due(&self, k: u64) -> u64 {
        let (_, ticks) = self.plan.ticks_of(k);
        ticks * self.plan.per_tick * self.subs
    }

    /// One measured message (`seq`, with its latency if stamped) arrived at `now`.
    #[inline]
    pub(crate) fn add(&mut self, seq: u64, latency: Option<u64>, now: u64, node: &str) {
        let k = seq / self.per_record;
        if k >= self.plan.records() {
            return;
        }
        if let Some(r) = self.closed.get_mut(&k) {
            late(r, latency);
            return;
        }
        let o = self.open.entry(k).or_insert_with(|| Open {
            received: 0,
            hist: LatencyHistogram::new(),
            last_ns: now,
        });
        o.received += 1;
        o.last_ns = now;
        if let Some(ns) = latency {
            o.hist.record(ns);
        }
        if o.received >= self.due(k) {
            self.close(k, now, node);
        }
    }

    /// Closes the records nothing arrived for in `idle_ns` (their missing messages are
    /// lost, or very late).
    pub(crate) fn close_idle(&mut self, now: u64, idle_ns: u64, node: &str) {
        let quiet: Vec<u64> = self
            .open
            .iter()
            .filter(|(_, o)| now.saturating_sub(o.last_ns) >= idle_ns)
            .map(|(k, _)| *k)
            .collect();
        for k in quiet {
            self.close(k, now, node);
        }
    }

    #[cold]
    fn close(&mut self, k: u64, now: u64, node: &str) {
        let Some(o) = self.open.remove(&k) else {
            return;
        };
        let mut r = self.plan.empty_record(k);
        r.messages = o.received;
        r.lost = self.due(k).saturating_sub(o.received);
        r.latency = (o.hist.count() > 0).then(|| o.hist.summary());
        r.histogram = (o.hist.count() > 0).then_some(o.hist);
        // The CPU since the last record closed, over the time since: a record closed
        // within a tenth of its length of the last (a catch-up) has none of its own, and
        // its CPU counts in the next.
        let spent_ms = now.saturating_sub(self.cpu_since) as f64 / 1e6;
        if spent_ms >= r.dur_ms / 10.0 && spent_ms > 0.0 {
            let cpu = crate::roles::usage::cpu_now_ms(true);
            r.cpu_pct = Some(100.0 * (cpu - self.cpu_at) / spent_ms);
            self.cpu_at = cpu;
            self.cpu_since = now;
        }
        crate::roles::live::interval(node, &r);
        self.closed.insert(k, r);
    }

    /// At the end: every record still open closed, every record nothing of arrived made
    /// (all its messages lost), in the order of the schedule.
    pub(crate) fn finish(mut self, now: u64, node: &str) -> Vec<IntervalRecord> {
        let open: Vec<u64> = self.open.keys().copied().collect();
        for k in open {
            self.close(k, now, node);
        }
        (0..self.plan.records())
            .map(|k| {
                self.closed.remove(&k).unwrap_or_else(|| {
                    let mut r = self.plan.empty_record(k);
                    r.lost = self.due(k);
                    r
                })
            })
            .collect()
    }
}

/// A message of a record already closed: counted in it, one fewer lost.
fn late(r: &mut IntervalRecord, latency: Option<u64>) {
    r.messages += 1;
    r.lost = r.lost.saturating_sub(1);
    if let Some(ns) = latency {
        let h = r.histogram.get_or_insert_with(LatencyHistogram::new);
        h.record(ns);
        r.latency = Some(h.summary());
    }
}

/// The records of several swarms for the same ticks, merged: what every subscriber of the
/// fan-out got of each tick (messages, lost, the latencies together, the CPU of all).
pub fn merge(per_process: &[Vec<IntervalRecord>]) -> Vec<IntervalRecord> {
    let mut by_tick: BTreeMap<u64, IntervalRecord> = BTreeMap::new();
    for r in per_process.iter().flatten() {
        let key = r.tick.unwrap_or(0);
        match by_tick.get_mut(&key) {
            None => {
                by_tick.insert(key, r.clone());
            }
            Some(m) => add_into(m, r),
        }
    }
    by_tick.into_values().collect()
}

/// Adds one process's record of a tick into the fan-out's.
pub fn add_into(m: &mut IntervalRecord, r: &IntervalRecord) {
    m.messages += r.messages;
    m.lost += r.lost;
    if let Some(h) = &r.histogram {
        let all = m.histogram.get_or_insert_with(LatencyHistogram::new);
        all.merge(h);
        m.latency = Some(all.summary());
    }
    m.cpu_pct = match (m.cpu_pct, r.cpu_pct) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(interval_ms: f64, per_tick: u64, passes: u64) -> TickPlan {
        TickPlan {
            per_tick,
            interval_ms,
            passes,
        }
    }

    #[test]
    fn ticks_under_a_second_are_taken_a_second_at_a_time() {
        assert_eq!(plan(1000.0, 1, 30).group(), 1);
        assert_eq!(plan(250.0, 1, 30).group(), 4);
        assert_eq!(plan(300.0, 1, 30).group(), 4);
        assert_eq!(plan(5000.0, 1, 30).group(), 1);
        let p = plan(250.0, 2, 10);
        assert_eq!(p.records(), 3);
        assert_eq!(p.ticks_of(2), (8, 2));
        let r = p.empty_record(1);
        assert_eq!((r.start_ms, r.dur_ms, r.tick), (1000.0, 1000.0, Some(5)));
    }

    #[test]
    fn a_record_closes_when_every_subscriber_has_it_and_counts_late_ones() {
        let mut t = TickRecords::new(plan(1000.0, 2, 3), 2);
        // Tick 1 (seq 0, 1) to both subscribers: complete after 4 deliveries.
        for (seq, ns) in [(0, 100), (0, 200), (1, 300)] {
            t.add(seq, Some(ns), 10, "s");
        }
        assert!(t.closed.is_empty());
        t.add(1, Some(400), 11, "s");
        assert_eq!(t.closed[&0].messages, 4);
        assert_eq!(t.closed[&0].lost, 0);
        // Tick 2: one delivery, then quiet for the idle time: closed with 3 lost.
        t.add(2, Some(1_000), 20, "s");
        t.close_idle(25, 10, "s");
        assert!(t.open.contains_key(&1));
        t.close_idle(30, 10, "s");
        assert_eq!((t.closed[&1].messages, t.closed[&1].lost), (1, 3));
        // A late one still counts in its tick.
        t.add(3, Some(9_000), 40, "s");
        assert_eq!((t.closed[&1].messages, t.closed[&1].lost), (2, 2));
        assert_eq!(t.closed[&1].latency.unwrap().max_ns, 9_000);
        // Beyond the plan (an end mark after the last tick) is not a tick.
        t.add(6, None, 41, "s");
        let records = t.finish(50, "s");
        assert_eq!(records.len(), 3);
        // Tick 3: nothing arrived, all lost.
        assert_eq!((records[2].messages, records[2].lost), (0, 4));
        assert_eq!(records[2].tick, Some(3));
        let total: u64 = records.iter().map(|r| r.messages).sum();
        assert_eq!(total, 6);
    }

    #[test]
    fn processes_merge_tick_by_tick() {
        let p = plan(1000.0, 1, 2);
        let mut a = TickRecords::new(p, 1);
        let mut b = TickRecords::new(p, 1);
        a.add(0, Some(1_000), 1, "a");
        a.add(1, Some(2_000), 2, "a");
        b.add(0, Some(5_000), 1, "b");
        let m = merge(&[a.finish(3, "a"), b.finish(3, "b")]);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].messages, m[0].lost), (2, 0));
        let l = m[0].latency.unwrap();
        assert_eq!((l.min_ns, l.max_ns, l.count), (1_000, 5_000, 2));
        assert_eq!((m[1].messages, m[1].lost), (1, 1));
    }
}
