//! The clocks behind a case's one-way figures, for every report: whether they were read on
//! one clock, converted from another host's clock (with the offset's error bound), or come
//! from clocks that differ (then no one-way figure is shown).

use crate::model::{CaseResult, EdgeResult};
use crate::stats::ClockCheck;

/// What the receivers' clock checks found over a case's repetitions.
pub fn case_clock(c: &CaseResult) -> ClockCheck {
    let mut all = ClockCheck::default();
    for l in c.repetitions.iter().filter_map(|r| r.latency.as_ref()) {
        all.merge(&l.clock);
    }
    all
}

/// Whether a case's one-way latency must not be shown: its clocks differ.
pub fn hides_latency(c: &CaseResult) -> bool {
    case_clock(c).differs()
}

/// Whether an edge's latency must not be shown.
pub fn edge_hides_latency(e: &EdgeResult) -> bool {
    e.latency.as_ref().is_some_and(|l| l.clock.differs())
}

/// What a cell shows instead of a one-way figure whose clocks differ.
pub const CLOCKS_DIFFER: &str = "clocks differ";

/// The note a case's one-way figures need: clocks that differ (not shown), a conversion
/// whose error bound is too large beside the figure, or where a converted figure's clock
/// comes from. None for figures read on one clock.
pub fn clock_note(c: &CaseResult) -> Option<String> {
    let k = case_clock(c);
    if k.differs() {
        return Some(format!(
            "one-way latency not shown, {}: the senders' clocks are not the receivers'; \
             round trips (RTT/2) need no clock offset",
            k.provenance()
        ));
    }
    if k.converted == 0 {
        return None;
    }
    let figure_ns = c
        .summary
        .p50_us
        .map(|e| e.median * 1000.0)
        .or_else(|| {
            c.repetitions
                .iter()
                .filter_map(|r| r.latency.as_ref())
                .filter(|l| l.count > 0)
                .map(|l| l.p50_ns as f64)
                .reduce(f64::min)
        })
        .unwrap_or(0.0);
    Some(
        k.error_note(figure_ns)
            .unwrap_or_else(|| format!("one-way latency {}", k.provenance())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseSummary, Kind, LoopMode, Repetition};
    use crate::stats::LatencyHistogram;
    use crate::transport::Transport;

    fn case(checks: &[ClockCheck], p50_ns: u64) -> CaseResult {
        let reps = checks
            .iter()
            .map(|k| {
                let mut h = LatencyHistogram::new();
                if !k.differs() {
                    h.record(p50_ns);
                }
                h.set_clock(*k);
                Repetition {
                    latency: Some(h.summary()),
                    latency_histogram: Some(h),
                    send_delay: None,
                    send: None,
                    delivered: None,
                    loss: None,
                    roles: Vec::new(),
                }
            })
            .collect();
        CaseResult {
            id: "throughput/pushpull/tcp/64".into(),
            kind: Kind::Throughput,
            pattern: "pushpull".into(),
            transport: Transport::Tcp,
            message_size: 64,
            count: 10,
            rate: None,
            loop_mode: LoopMode::Closed,
            warmup: 0,
            repetitions: reps,
            summary: CaseSummary::default(),
            floor: None,
            warnings: Vec::new(),
            incomplete: None,
            error: None,
            wall_s: 1.0,
            nodes: Vec::new(),
            edges: Vec::new(),
            sender: None,
            machine: None,
            intervals: Vec::new(),
        }
    }

    #[test]
    fn one_clock_needs_no_note() {
        let c = case(&[ClockCheck::default(); 3], 50_000);
        assert!(!hides_latency(&c));
        assert_eq!(clock_note(&c), None);
    }

    #[test]
    fn clocks_that_differ_in_any_repetition_hide_the_figure() {
        let bad = ClockCheck {
            future: 1_000,
            future_max_ns: 5_000_000_000_000,
            ..Default::default()
        };
        let c = case(&[ClockCheck::default(), bad], 50_000);
        assert!(hides_latency(&c));
        let n = clock_note(&c).unwrap();
        assert!(
            n.starts_with("one-way latency not shown, clocks differ: 1,000 stamps from the future"),
            "{n}"
        );
        assert!(n.contains("RTT/2"), "{n}");
    }

    #[test]
    fn every_report_hides_the_figures_of_clocks_that_differ_and_says_why() {
        use crate::report::{render, Format};
        let mut run = crate::report::fixture::sample_run();
        let bad = ClockCheck {
            stale: 125,
            stale_max_ns: 5_000_000_000_000,
            ..Default::default()
        };
        let c = run
            .cases
            .iter_mut()
            .find(|c| c.id == "throughput/pushpull/tcp/64")
            .unwrap();
        assert!(c.summary.latency_us.is_some());
        for r in &mut c.repetitions {
            r.latency.as_mut().unwrap().clock = bad;
        }
        let c = run.cases.iter_mut().find(|c| !c.edges.is_empty()).unwrap();
        let edge = c.edges[0].clone();
        c.edges[0].latency.as_mut().unwrap().clock = bad;
        // The grid's latency cell of that case, and the edge's latency cells.
        let cell = super::super::grids(&run)
            .iter()
            .flat_map(|g| g.rows.iter())
            .filter(|(label, _)| label == "latency (us)")
            .flat_map(|(_, cells)| cells.iter())
            .any(|v| v == CLOCKS_DIFFER);
        assert!(cell, "no 'clocks differ' cell");
        let row = super::super::edges(&run)
            .into_iter()
            .find(|r| r[1] == format!("{} -> {}", edge.from, edge.to))
            .unwrap();
        assert_eq!(
            (row[5].as_str(), row[6].as_str()),
            (CLOCKS_DIFFER, CLOCKS_DIFFER)
        );
        // 125 in each of the 3 repetitions.
        let note = "one-way latency not shown, clocks differ: 375 stamps older than the timeout";
        let table = render(&run, Format::Table);
        assert!(table.contains("clocks differ"), "{table}");
        assert!(
            table
                .replace('\n', " ")
                .replace("  ", " ")
                .contains("375 stamps older"),
            "{table}"
        );
        for f in [Format::Markdown, Format::Html] {
            let out = render(&run, f);
            assert!(out.contains(note), "{out}");
        }
        let csv = render(&run, Format::Csv);
        let line = csv
            .lines()
            .find(|l| l.contains(",case,throughput/pushpull/tcp/64,"))
            .unwrap();
        assert!(line.contains(note), "{line}");
        // latency_us_median, its interval, p50 and p99: empty; msg/s still there.
        let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let at = |name: &str| head.iter().position(|h| *h == name).unwrap();
        let cols: Vec<&str> = line.split(',').collect();
        let (lat, rate) = (at("latency_us_median"), at("msgs_per_sec_median"));
        assert_eq!(&cols[lat..lat + 5], &["", "", "", "", ""], "{line}");
        assert!(!cols[rate].is_empty(), "{line}");
        // The JSON keeps the counts for whoever reads it.
        let json = render(&run, Format::Json);
        assert!(json.contains("\"stale\": 125"), "{json}");
    }

    #[test]
    fn a_converted_figure_says_its_error_and_when_it_is_too_large() {
        let conv = |e| ClockCheck {
            converted: 10,
            error_ns: Some(e),
            ..Default::default()
        };
        let c = case(&[conv(2_000)], 60_000);
        assert!(!hides_latency(&c));
        assert_eq!(
            clock_note(&c).unwrap(),
            "one-way latency converted, error <= 2.00 us"
        );
        let c = case(&[conv(24_000)], 60_000);
        let n = clock_note(&c).unwrap();
        assert!(n.contains("more than 10% of the figure (60.00 us)"), "{n}");
        assert!(
            n.contains("round trips (RTT/2) need no clock offset"),
            "{n}"
        );
    }
}
