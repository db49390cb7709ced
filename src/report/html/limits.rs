//! What `--find` and `--curve` found: each limit with its band, the step that broke it and
//! its cause, and what `--tune` tried (a table each); each load curve as two charts,
//! latency against the offered rate and the delivered rate against it, the knee named in
//! the caption.

use super::parts::{figure, latency_chart, plain_table};
use crate::model::{LoadCurve, RunResult};
use crate::report::svg::{self, Axis, Dash, LineChart, Marker, Point, Scale, Series};
use crate::units;
use std::fmt::Write;

fn n(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| units::grouped(v.round() as u64))
}

/// The sections, when the run has limits or curves.
pub(super) fn limits_and_curves(out: &mut String, run: &RunResult) {
    if !run.limits.is_empty() {
        out.push_str("<h2>Limits</h2>\n");
        let rows: Vec<Vec<String>> = run
            .limits
            .iter()
            .map(|l| {
                vec![
                    l.case.clone(),
                    format!("max {} ({})", l.what, l.slo),
                    n(l.held),
                    format!("{} .. {}", n(l.low), n(l.high)),
                    n(l.broke_at),
                    l.cause.clone().unwrap_or_default(),
                ]
            })
            .collect();
        plain_table(
            out,
            &["case", "search", "limit", "band", "broke at", "cause"],
            &rows,
            2,
            &[],
            0,
        );
        for l in run.limits.iter().filter(|l| !l.tuned.is_empty()) {
            let _ = writeln!(out, "<h3>Tuned: {}</h3>", svg::esc(&l.case));
            let rows: Vec<Vec<String>> = l
                .tuned
                .iter()
                .map(|t| {
                    vec![
                        t.settings.clone(),
                        n(t.held),
                        t.gain.map_or("-".into(), |g| {
                            format!("x{:.2} [{:.2} .. {:.2}]", g[0], g[1], g[2])
                        }),
                        if t.helps {
                            "raises it"
                        } else {
                            "not beyond the noise"
                        }
                        .into(),
                    ]
                })
                .collect();
            let warn: Vec<bool> = l.tuned.iter().map(|t| !t.helps).collect();
            plain_table(
                out,
                &["settings", "limit", "gain [interval]", ""],
                &rows,
                1,
                &warn,
                3,
            );
        }
    }
    if !run.curves.is_empty() {
        out.push_str("<h2>Latency under load</h2>\n");
        for (k, c) in run.curves.iter().enumerate() {
            let _ = writeln!(out, "<h3>{}</h3>", svg::esc(&c.case));
            let id = format!("curve-{k}");
            let knee = match c.knee.map(|i| &c.points[i]) {
                Some(p) => format!(
                    "The knee: {} msg/s offered (the highest before p99 stayed above twice its value at the lightest load, or {} broke).",
                    units::grouped(p.offered.round() as u64),
                    c.slo
                ),
                None => format!("No knee: even the lightest load broke {}.", c.slo),
            };
            if let Some(chart) = latency(c, &id) {
                figure(out, &chart, &knee);
            }
            figure(
                out,
                &delivered(c, &id),
                "Delivered against offered: the dashed line is delivered = offered.",
            );
        }
    }
}

fn offered_axis(c: &LoadCurve) -> Axis {
    Axis::new(
        "offered (msg/s)",
        Scale::Log10,
        c.points.iter().map(|p| p.offered).collect::<Vec<f64>>(),
        units::compact,
    )
}

/// p50, p99 and max against the offered rate, ms.
fn latency(c: &LoadCurve, id: &str) -> Option<String> {
    let pick = |f: fn(&crate::model::CurvePoint) -> Option<f64>| -> Vec<Point> {
        c.points
            .iter()
            .filter_map(|p| f(p).map(|v| Point::at(p.offered, v / 1e6)))
            .collect()
    };
    let (p50, p99, max) = (pick(|p| p.p50_ns), pick(|p| p.p99_ns), pick(|p| p.max_ns));
    if p99.is_empty() {
        return None;
    }
    Some(latency_chart(
        format!("{id}-lat"),
        format!("Latency under load: {}", c.case),
        offered_axis(c),
        [p50, p99, max],
    ))
}

/// Delivered against offered, msg/s, beside delivered = offered.
fn delivered(c: &LoadCurve, id: &str) -> String {
    let series = vec![
        Series {
            name: "delivered".to_string(),
            color: svg::PALETTE[0],
            dash: Dash::Solid,
            marker: Marker::Circle,
            points: c
                .points
                .iter()
                .map(|p| Point::at(p.offered, p.delivered))
                .collect(),
        },
        Series {
            name: "offered".to_string(),
            color: svg::PALETTE[1],
            dash: Dash::Dashed,
            marker: Marker::None,
            points: c
                .points
                .iter()
                .map(|p| Point::at(p.offered, p.offered))
                .collect(),
        },
    ];
    let ys: Vec<f64> = svg::y_values(&series).into_iter().chain([0.0]).collect();
    LineChart {
        id: format!("{id}-rate"),
        title: format!("Delivered under load: {}", c.case),
        x: offered_axis(c),
        y: Axis::new("delivered (msg/s)", Scale::Linear, ys, units::compact)
            .relabel(units::linear_ticks),
        series,
        legend: Vec::new(),
        end_labels: false,
    }
    .render()
}
