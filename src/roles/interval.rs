//! A measuring role's figures per interval (`--interval`), the sink's and the ping's: at
//! each interval's end it takes what arrived since the last (messages or round trips, the
//! holes the sink's ledger saw open, the latency histogram since a copy taken then, its
//! CPU), with nothing added per message but one comparison of a clock reading the role
//! already takes with the next interval's end. A quiet interval is closed by the sink's idle
//! slices (the ping's by the round trip that ends it), so a stall shows.

use crate::model::IntervalRecord;
use crate::stats::{LatencyHistogram, Ledger};

/// An interval in the making, and those closed.
pub(super) struct Intervals {
    every_ns: u64,
    /// The first message's arrival: the intervals count from it, ns.
    t0: u64,
    /// The current interval's start, ns.
    from: u64,
    /// Messages received, and lost so far, at `from`.
    received_at: u64,
    lost_at: u64,
    /// Every latency up to `from`: the next interval is what was recorded since.
    before: LatencyHistogram,
    /// The node's CPU at `from`, ms.
    cpu_at: f64,
    /// Whether the node has a process of its own (its CPU is the process's).
    own_process: bool,
    /// Whether what is counted is round trips (the ping's).
    round_trips: bool,
    pub(super) records: Vec<IntervalRecord>,
}

/// All latencies recorded so far, over every stream's histogram.
fn merged(hists: &[LatencyHistogram]) -> LatencyHistogram {
    let mut all = LatencyHistogram::new();
    for h in hists {
        all.merge(h);
    }
    all
}

/// What the ledger counts lost so far (a role with no ledger, the ping, loses nothing: a
/// round trip that never came back ends its run).
fn lost_in(ledger: Option<&Ledger>) -> u64 {
    ledger.map_or(0, |l| l.summary(None).lost)
}

impl Intervals {
    /// Intervals of `every_ns`, from the first message at `t0`.
    pub(super) fn new(every_ns: u64, t0: u64) -> Intervals {
        let own_process = crate::roles::usage::placement() == "process";
        Intervals {
            every_ns,
            t0,
            from: t0,
            received_at: 0,
            lost_at: 0,
            before: LatencyHistogram::new(),
            cpu_at: crate::roles::usage::cpu_now_ms(own_process),
            own_process,
            round_trips: false,
            records: Vec::new(),
        }
    }

    /// The same, counting round trips.
    pub(super) fn of_round_trips(self) -> Intervals {
        Intervals {
            round_trips: true,
            ..self
        }
    }

    /// When the current interval ends, ns.
    pub(super) fn next_end(&self) -> u64 {
        self.from + self.every_ns
    }

    /// Closes every interval that ended by `now` (the first with what arrived in it, any
    /// after it empty: nothing arrived), hands each to the live hook as `node`, and
    /// returns when the next one ends.
    #[cold]
    #[inline(never)]
    pub(super) fn close_until(
        &mut self,
        now: u64,
        node: &str,
        received: u64,
        ledger: Option<&Ledger>,
        hists: &[LatencyHistogram],
    ) -> u64 {
        if now < self.next_end() {
            return self.next_end();
        }
        let all = merged(hists);
        let lost = lost_in(ledger);
        let cpu = crate::roles::usage::cpu_now_ms(self.own_process);
        let mut first = true;
        while now >= self.next_end() {
            let r = if first {
                self.record(self.every_ns, received, lost, &all, cpu, now)
            } else {
                IntervalRecord {
                    start_ms: (self.from - self.t0) as f64 / 1e6,
                    dur_ms: self.every_ns as f64 / 1e6,
                    messages: 0,
                    lost: 0,
                    latency: None,
                    histogram: None,
                    cpu_pct: None,
                    tick: None,
                    round_trips: self.round_trips,
                }
            };
            first = false;
            crate::roles::live::interval(node, &r);
            self.records.push(r);
            self.from += self.every_ns;
        }
        self.received_at = received;
        self.lost_at = lost;
        self.before = all;
        self.cpu_at = cpu;
        self.next_end()
    }

    /// The record of the interval from `from`, `dur_ns` long, with the CPU used since
    /// `cpu_at` over the time to `now` (the clock reading that closed it).
    fn record(
        &self,
        dur_ns: u64,
        received: u64,
        lost: u64,
        all: &LatencyHistogram,
        cpu: f64,
        now: u64,
    ) -> IntervalRecord {
        let h = all.since(&self.before);
        let spent_ms = (now.saturating_sub(self.from)) as f64 / 1e6;
        IntervalRecord {
            start_ms: (self.from - self.t0) as f64 / 1e6,
            dur_ms: dur_ns as f64 / 1e6,
            messages: received - self.received_at,
            lost: lost.saturating_sub(self.lost_at),
            latency: (h.count() > 0).then(|| h.summary()),
            histogram: (h.count() > 0).then_some(h),
            cpu_pct: (spent_ms > 0.0).then(|| 100.0 * (cpu - self.cpu_at) / spent_ms),
            tick: None,
            round_trips: self.round_trips,
        }
    }

    /// At the end: the last interval, partial, up to the last arrival `last` (none when
    /// nothing arrived in it), handed to the live hook; then every record.
    pub(super) fn finish(
        mut self,
        last: u64,
        node: &str,
        received: u64,
        ledger: Option<&Ledger>,
        hists: &[LatencyHistogram],
    ) -> Vec<IntervalRecord> {
        self.close_until(last, node, received, ledger, hists);
        if received > self.received_at && last > self.from {
            let all = merged(hists);
            let lost = lost_in(ledger);
            let cpu = crate::roles::usage::cpu_now_ms(self.own_process);
            let r = self.record(last - self.from, received, lost, &all, cpu, last);
            crate::roles::live::interval(node, &r);
            self.records.push(r);
        }
        self.records
    }
}
