//! The findings of `zmqperf diagnose`: a box per finding, with a chart of latency by queue
//! depth for a deep queue.

use super::parts::{figure, medians, prose, y_axis};
use crate::model::{Finding, Measure, RunResult};
use crate::report::layout;
use crate::report::svg::{self, esc, Axis, Dash, LineChart, Marker, Point, Scale, Series};
use crate::units;
use std::fmt::Write;

/// The triage summary of `zmqperf diagnose`, for the top of the page: one line per cause,
/// worst first (most messages lost), with what it cost, where, and its fix; each cause
/// links to its first finding below. Nothing when no finding names a cause.
pub(super) fn triage(out: &mut String, run: &RunResult) {
    let lines = layout::triage(run);
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<section class=\"triage\" id=\"triage\">\n<h2>Triage, worst first</h2>\n\
         <p class=\"note\">{}</p>\n<ol class=\"triage\">",
        esc(&layout::findings_count(run))
    );
    for l in &lines {
        let first = run
            .findings
            .iter()
            .find(|f| f.triage.as_ref().is_some_and(|t| t.cause == l.cause));
        let cause = match first {
            Some(f) => format!(
                "<a href=\"#finding-{}\">{}</a>",
                esc(&f.id.replace('/', "-")),
                esc(&l.cause)
            ),
            None => esc(&l.cause),
        };
        let _ = writeln!(
            out,
            "<li><strong>{cause}</strong>: {} {} ({}).<br><span class=\"fix\">Fix: {}.</span></li>",
            crate::units::grouped(l.count),
            esc(&l.unit),
            esc(&l.transports.join(", ")),
            prose(l.fix.trim_end_matches('.'))
        );
    }
    out.push_str("</ol>\n</section>\n");
}

/// The findings of `zmqperf diagnose`: a box per finding with its severity, title, what
/// happened, cause, remedy, evidence and gaps.
pub(super) fn findings(out: &mut String, run: &RunResult) {
    out.push_str("<h2>Findings</h2>\n");
    let _ = writeln!(
        out,
        "<p class=\"note\">{}</p>",
        esc(&layout::findings_count(run))
    );
    for v in layout::findings(run) {
        let f = v.finding;
        let sev = f.severity.name();
        let _ = writeln!(
            out,
            "<div class=\"finding {sev}\" id=\"finding-{}\">\n<h3><span class=\"sev {sev}\">{sev}</span> \
             {}</h3>\n<p><code>{}</code> &middot; {}</p>",
            esc(&f.id.replace('/', "-")),
            esc(&f.title),
            esc(&f.id),
            prose(&f.observed)
        );
        if let Some(e) = &f.error {
            let _ = writeln!(out, "<p><strong>Failed:</strong> {}</p>", prose(e));
        }
        let _ = writeln!(
            out,
            "<p><strong>Cause:</strong> {}</p>\n<p><strong>Remedy:</strong> {}</p>",
            prose(&f.cause),
            prose(&f.remedy)
        );
        if !v.evidence.is_empty() {
            out.push_str("<ul class=\"ev\">");
            for (k, val) in &v.evidence {
                let _ = write!(out, "<li><code>{}</code> {}</li>", esc(k), esc(val));
            }
            out.push_str("</ul>\n");
        }
        if let Some(chart) = depth_chart(f) {
            figure(
                out,
                &chart,
                "Latency of the messages a quarter, half, three quarters of the way through the \
                 stream and at its end, against the number of messages queued ahead of each when \
                 it was sent; dashed: that number divided by the consumer's measured rate \
                 (Little's law).",
            );
        }
        if !v.gaps.is_empty() {
            out.push_str("<ul class=\"items\">");
            for g in &v.gaps {
                let _ = write!(out, "<li>Gap: {}</li>", esc(g));
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</div>\n");
    }
}

/// For a deep-queue finding, latency against queue depth from its evidence, with the wait
/// Little's law predicts from the consumer's rate; None for other findings.
fn depth_chart(f: &Finding) -> Option<String> {
    if f.experiment != "deep-queue" {
        return None;
    }
    let num = |k: &str| match f.evidence.get(k)? {
        Measure::Count(v) => Some(*v as f64),
        Measure::Number(v) => Some(*v),
        Measure::Text(_) => None,
    };
    let mut measured = Vec::new();
    for q in [25, 50, 75, 100] {
        measured.push(Point::at(
            num(&format!("depth_at_{q}pct"))?,
            num(&format!("latency_at_{q}pct_ms"))?,
        ));
    }
    let rate = num("consumer_msgs_per_s").filter(|r| *r > 0.0)?;
    let predicted = measured
        .iter()
        .map(|p| Point::at(p.x, p.x / rate * 1000.0))
        .collect();
    let series = vec![
        Series {
            name: "measured".to_string(),
            color: svg::PALETTE[0],
            dash: Dash::Solid,
            marker: Marker::Circle,
            points: measured,
        },
        Series {
            name: "depth / consumer rate".to_string(),
            color: "#555555",
            dash: Dash::Dashed,
            marker: Marker::None,
            points: predicted,
        },
    ];
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .chain([0.0])
        .collect();
    let ys: Vec<f64> = svg::y_values(&series).into_iter().chain([0.0]).collect();
    Some(
        LineChart {
            id: format!("dq-{}", f.id.replace('/', "-")),
            title: format!("Latency by queue depth: {}", f.id),
            x: Axis::new(
                "messages queued ahead when sent",
                Scale::Linear,
                xs,
                units::compact,
            )
            .relabel(units::linear_ticks),
            y: y_axis("latency (ms)", &medians(&series), ys),
            series,
            legend: Vec::new(),
            end_labels: false,
        }
        .render(),
    )
}
