//! A case's intervals in words (`--interval`): the live line of one interval, as iperf3
//! prints its own, and the drift verdict of each node's series for the text report.

use crate::model::{CaseResult, IntervalRecord};
use crate::units::grouped;

/// One interval of `node` on a line: `[sink]  3.0-4.0 s  1,000 msg/s  p50 52 us  p99 120
/// us  max 300 us  lost 0  cpu 12%`.
pub fn line(node: &str, r: &IntervalRecord) -> String {
    let from = r.start_ms / 1e3;
    let mut s = format!(
        "[{node}] {:>5.1}-{:.1} s {:>11} {}",
        from,
        from + r.dur_ms / 1e3,
        grouped(r.msgs_per_sec().round() as u64),
        if r.round_trips {
            "round trips/s"
        } else {
            "msg/s"
        }
    );
    match r.latency.filter(|l| l.count > 0) {
        Some(l) => s.push_str(&format!(
            "  p50 {}  p99 {}  max {}",
            crate::units::latency(l.p50_ns as f64),
            crate::units::latency(l.p99_ns as f64),
            crate::units::latency(l.max_ns as f64)
        )),
        None => s.push_str("  no latency"),
    }
    s.push_str(&format!("  lost {}", grouped(r.lost)));
    if let Some(c) = r.cpu_pct {
        s.push_str(&format!("  cpu {c:.0}%"));
    }
    s
}

/// A fan-out's tick, whole, on a line, with the run so far: `[subscribers] tick 12
/// 11.0-12.0 s  200 of 200  min 310 us  max 3.10 ms  mean 1.20 ms  hmean 900 us  p99 3.00
/// ms  cpu 4%  | so far: mean 1.10 ms  hmean 850 us`.
pub fn tick_line(r: &IntervalRecord, so_far: &crate::stats::LatencySummary) -> String {
    // A record of several ticks (closer than a second) is named by its first.
    let first = r.tick.unwrap_or(0);
    let from = r.start_ms / 1e3;
    let mut s = format!(
        "[subscribers] tick {:<4} {:>5.1}-{:.1} s {:>9} of {}",
        first,
        from,
        from + r.dur_ms / 1e3,
        grouped(r.messages),
        grouped(r.messages + r.lost)
    );
    let ms = crate::units::latency;
    match r.latency.filter(|l| l.count > 0) {
        Some(l) => s.push_str(&format!(
            "  min {}  max {}  mean {}  hmean {}  p99 {}",
            ms(l.min_ns as f64),
            ms(l.max_ns as f64),
            ms(l.mean_ns),
            ms(l.harmonic_mean_ns),
            ms(l.p99_ns as f64)
        )),
        None => s.push_str("  no latency"),
    }
    if r.lost > 0 {
        s.push_str(&format!("  lost {}", grouped(r.lost)));
    }
    if let Some(c) = r.cpu_pct {
        s.push_str(&format!("  cpu {c:.0}%"));
    }
    if so_far.count > 0 {
        s.push_str(&format!(
            "  | so far: mean {}  hmean {}",
            ms(so_far.mean_ns),
            ms(so_far.harmonic_mean_ns)
        ));
    }
    s
}

/// The drift verdict of every series of a case, a line each: `sink (repetition 1, 30
/// intervals of 1 s): steady: p99 changed +3% over the run [...]`.
pub fn verdicts(c: &CaseResult) -> Vec<String> {
    c.intervals
        .iter()
        .map(|s| {
            format!(
                "{} (repetition {}, {} interval{} of {}): {}",
                s.node,
                s.repetition,
                s.records.len(),
                if s.records.len() == 1 { "" } else { "s" },
                crate::error::fmt_duration(std::time::Duration::from_secs_f64(s.interval_ms / 1e3)),
                s.drift.said
            )
        })
        .collect()
}
