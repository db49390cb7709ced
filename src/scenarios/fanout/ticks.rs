//! The fan-out's ticks as they are delivered: each subscriber process hands over its record
//! of a tick when it closes; once every process has, the tick is whole, and it is shown
//! with the figures of the run so far (seed 002's "HARMONIC MEAN (current)").

use crate::model::IntervalRecord;
use crate::roles::swarm::ticks::add_into;
use crate::stats::{LatencyHistogram, LatencySummary};
use std::collections::BTreeMap;

/// The ticks of a run of `processes` subscriber processes, gathered as they close.
pub struct LiveTicks {
    processes: usize,
    waiting: BTreeMap<u64, (usize, IntervalRecord)>,
    so_far: LatencyHistogram,
}

impl LiveTicks {
    /// For `processes` subscriber processes.
    pub fn new(processes: u32) -> LiveTicks {
        LiveTicks {
            processes: processes.max(1) as usize,
            waiting: BTreeMap::new(),
            so_far: LatencyHistogram::new(),
        }
    }

    /// One process's record of a tick; the whole tick once every process gave it, with
    /// the latency of every whole tick so far.
    pub fn add(&mut self, r: &IntervalRecord) -> Option<(IntervalRecord, LatencySummary)> {
        let key = r.tick?;
        let (n, merged) = match self.waiting.remove(&key) {
            None => (1, r.clone()),
            Some((n, mut m)) => {
                add_into(&mut m, r);
                (n + 1, m)
            }
        };
        if n < self.processes {
            self.waiting.insert(key, (n, merged));
            return None;
        }
        if let Some(h) = &merged.histogram {
            self.so_far.merge(h);
        }
        Some((merged, self.so_far.summary()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(tick: u64, ns: u64) -> IntervalRecord {
        let mut h = LatencyHistogram::new();
        h.record(ns);
        IntervalRecord {
            start_ms: (tick - 1) as f64 * 1e3,
            dur_ms: 1e3,
            messages: 1,
            lost: 0,
            latency: Some(h.summary()),
            histogram: Some(h),
            cpu_pct: Some(1.0),
            tick: Some(tick),
            round_trips: false,
        }
    }

    #[test]
    fn a_tick_is_whole_when_every_process_gave_it() {
        let mut t = LiveTicks::new(2);
        assert!(t.add(&record(1, 1_000)).is_none());
        assert!(t.add(&record(2, 3_000)).is_none());
        let (whole, so_far) = t.add(&record(1, 2_000)).unwrap();
        assert_eq!(whole.messages, 2);
        assert_eq!(whole.cpu_pct, Some(2.0));
        assert_eq!(so_far.count, 2);
        let (_, so_far) = t.add(&record(2, 4_000)).unwrap();
        assert_eq!((so_far.count, so_far.max_ns), (4, 4_000));
        // A record without a tick (a sink's interval) is not a tick.
        let mut other = record(3, 1);
        other.tick = None;
        assert!(t.add(&other).is_none());
    }
}
