//! The figures over time (`--interval`): for each receiving node's series, its latency
//! (p50, p99, max) and its delivered rate against time, each interval a point, with the
//! drift verdict as the caption.

use super::parts::{figure, latency_chart};
use crate::model::{IntervalSeries, RunResult};
use crate::report::svg::{self, Axis, Dash, LineChart, Marker, Point, Scale, Series};
use crate::units;
use std::fmt::Write;

/// The section, when any case has intervals.
pub(super) fn over_time(out: &mut String, run: &RunResult) {
    let cases: Vec<_> = run
        .cases
        .iter()
        .filter(|c| !c.intervals.is_empty())
        .collect();
    if cases.is_empty() {
        return;
    }
    out.push_str("<h2>Over time</h2>\n");
    for c in cases {
        for (k, s) in c.intervals.iter().enumerate() {
            let id = format!("iv-{}-{k}", c.id.replace(['/', '.', ' '], "-"));
            let _ = writeln!(
                out,
                "<h3>{}: {} (repetition {})</h3>",
                svg::esc(&c.id),
                svg::esc(&s.node),
                s.repetition
            );
            if let Some(chart) = latency(s, &id) {
                figure(out, &chart, &s.drift.said);
            }
            figure(
                out,
                &rate(s, &id),
                "Messages delivered per second in each interval (the last may be partial).",
            );
        }
    }
}

/// The middle of each interval, s.
fn mid(r: &crate::model::IntervalRecord) -> f64 {
    (r.start_ms + r.dur_ms / 2.0) / 1e3
}

fn time_axis(s: &IntervalSeries) -> Axis {
    let xs: Vec<f64> = s.records.iter().map(mid).chain([0.0]).collect();
    Axis::new(
        "time from the first message (s)",
        Scale::Linear,
        xs,
        units::compact,
    )
    .relabel(units::linear_ticks)
}

/// p50, p99 and max against time, ms; None when no interval has latency.
fn latency(s: &IntervalSeries, id: &str) -> Option<String> {
    let pick = |f: fn(&crate::stats::LatencySummary) -> u64| -> Vec<Point> {
        s.records
            .iter()
            .filter_map(|r| {
                r.latency
                    .filter(|l| l.count > 0)
                    .map(|l| Point::at(mid(r), f(&l) as f64 / 1e6))
            })
            .collect()
    };
    let (p50, p99, max) = (pick(|l| l.p50_ns), pick(|l| l.p99_ns), pick(|l| l.max_ns));
    if p50.is_empty() {
        return None;
    }
    Some(latency_chart(
        format!("{id}-lat"),
        format!("Latency per interval: {}", s.node),
        time_axis(s),
        [p50, p99, max],
    ))
}

/// The delivered rate against time, msg/s.
fn rate(s: &IntervalSeries, id: &str) -> String {
    let round_trips = s.records.first().is_some_and(|r| r.round_trips);
    let series = vec![Series {
        name: if round_trips {
            "round trips"
        } else {
            "delivered"
        }
        .to_string(),
        color: svg::PALETTE[0],
        dash: Dash::Solid,
        marker: Marker::Circle,
        points: s
            .records
            .iter()
            .map(|r| Point::at(mid(r), r.msgs_per_sec()))
            .collect(),
    }];
    let ys: Vec<f64> = svg::y_values(&series).into_iter().chain([0.0]).collect();
    LineChart {
        id: format!("{id}-rate"),
        title: format!("Delivered per interval: {}", s.node),
        x: time_axis(s),
        y: Axis::new(
            if round_trips {
                "round trips/s"
            } else {
                "msg/s"
            },
            Scale::Linear,
            ys,
            units::compact,
        )
        .relabel(units::linear_ticks),
        series,
        legend: Vec::new(),
        end_labels: false,
    }
    .render()
}
