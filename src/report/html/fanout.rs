//! The fan-out cases (`zmqperf fanout`, `sub-cluster`): the figures the Node harness
//! printed (MIN, MAX, MEAN and HARMONIC MEAN delivery latency, in ms) with the median and
//! p99, then one row per subscriber process: its deliveries, losses, delivered rate per
//! subscriber, its own latency figures in ms, CPU and memory.

use super::parts::plain_table;
use crate::model::{CaseResult, RunResult};
use crate::report::layout;
use crate::report::svg::esc;
use crate::stats::LatencySummary;
use crate::units::{self, grouped};
use std::fmt::Write;

/// Whether a case is a fan-out: its pattern is `fanout[PxS]` or `sub-cluster[PxS]`.
pub(super) fn is_fanout(c: &CaseResult) -> bool {
    (c.pattern.starts_with("fanout[") || c.pattern.starts_with("sub-cluster["))
        && c.pattern.ends_with(']')
}

/// Subscribers per process, from the pattern's `[PxS]`.
fn subs_per_process(c: &CaseResult) -> Option<u64> {
    let inner = c.pattern.split('[').nth(1)?.trim_end_matches(']');
    inner.split('x').nth(1)?.parse().ok()
}

/// Nanoseconds as milliseconds with three decimals, as the harness printed them.
fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// The column heads of the per-process table (latency in ms, as the note above it says).
const HEADS: [&str; 11] = [
    "process",
    "delivered",
    "lost",
    "msg/s/sub",
    "MIN",
    "MEAN",
    "HARMONIC",
    "p99",
    "MAX",
    "CPU (ms)",
    "RSS (MiB)",
];

/// The fan-out section of each fan-out case; nothing for a run without one.
pub(super) fn fanout(out: &mut String, run: &RunResult) {
    for c in run.cases.iter().filter(|c| is_fanout(c)) {
        let _ = writeln!(
            out,
            "<section class=\"fanout\">\n<h2>Fan-out <code>{}</code> over {}</h2>",
            esc(&c.pattern),
            c.transport
        );
        let lat = c
            .repetitions
            .last()
            .and_then(|r| r.latency)
            .filter(|l| l.count > 0 && !l.clock.differs());
        match lat {
            Some(l) => seed_figures(out, &l),
            None => out.push_str(
                "<p class=\"note\">No delivery latency to show: nothing was measured on one \
                 clock.</p>\n",
            ),
        }
        delivery_line(out, c);
        processes(out, c);
        out.push_str("</section>\n");
    }
}

/// The harness's four figures, then the median and p99, of every delivery.
fn seed_figures(out: &mut String, l: &LatencySummary) {
    out.push_str("<div class=\"seed\">");
    for (name, v) in [
        ("MIN", l.min_ns as f64),
        ("MAX", l.max_ns as f64),
        ("MEAN", l.mean_ns),
        ("HARMONIC MEAN", l.harmonic_mean_ns),
        ("p50", l.p50_ns as f64),
        ("p99", l.p99_ns as f64),
    ] {
        let _ = write!(out, "<div><span>{name}</span><b>{} ms</b></div>", ms(v));
    }
    out.push_str("</div>\n");
    let _ = writeln!(
        out,
        "<p class=\"note\">Delivery latency of all {} messages received, from the publisher's \
         send call to each subscriber's receipt: MIN, MAX, MEAN and HARMONIC MEAN as the Node \
         harness printed them, in ms.</p>",
        grouped(l.count)
    );
}

/// Subscribers, messages each, and delivery over all of them.
fn delivery_line(out: &mut String, c: &CaseResult) {
    let subs = subs_per_process(c).unwrap_or(0) * c.edges.len() as u64;
    let (mut received, mut expected, mut lost) = (0, 0, 0);
    for e in &c.edges {
        if let Some(l) = &e.loss {
            received += l.received;
            expected += l.expected;
            lost += l.lost;
        }
    }
    let share = if expected > 0 {
        format!(" ({:.3}%)", received as f64 * 100.0 / expected as f64)
    } else {
        String::new()
    };
    let send = c.nodes.iter().find_map(|n| n.send_msgs_per_sec);
    let _ = writeln!(
        out,
        "<p>{} subscribers in {} processes, {} messages each{}: delivered {} of {}{share}, {} \
         lost.</p>",
        grouped(subs),
        c.edges.len(),
        grouped(c.count),
        send.map(|r| format!(", published at {} msg/s", units::sig3(r)))
            .unwrap_or_default(),
        grouped(received),
        grouped(expected),
        grouped(lost)
    );
}

/// One row per subscriber process: its edge (deliveries, loss, rate, latency) and its node
/// (CPU, memory).
fn processes(out: &mut String, c: &CaseResult) {
    let per = subs_per_process(c).unwrap_or(0);
    let dash = || "-".to_string();
    let mut rows = Vec::new();
    let mut lossy = Vec::new();
    for e in &c.edges {
        let node = c.nodes.iter().find(|n| n.name == e.to);
        let l = e
            .latency
            .as_ref()
            .filter(|l| l.count > 0 && !l.clock.differs());
        let f = |v: fn(&LatencySummary) -> f64| l.map(|l| ms(v(l))).unwrap_or_else(dash);
        rows.push(vec![
            e.to.clone(),
            grouped(e.messages),
            e.loss
                .as_ref()
                .map(|l| grouped(l.lost))
                .unwrap_or_else(dash),
            e.msgs_per_sec
                .filter(|_| per > 0)
                .map(|r| units::sig3(r / per as f64))
                .unwrap_or_else(dash),
            f(|l| l.min_ns as f64),
            f(|l| l.mean_ns),
            f(|l| l.harmonic_mean_ns),
            f(|l| l.p99_ns as f64),
            f(|l| l.max_ns as f64),
            node.map(|n| units::value(n.cpu_ms)).unwrap_or_else(dash),
            node.map(|n| format!("{:.1}", n.peak_rss_kib as f64 / 1024.0))
                .unwrap_or_else(dash),
        ]);
        lossy.push(layout::edge_lossy(e));
    }
    if rows.is_empty() {
        return;
    }
    out.push_str(
        "<h3>Per subscriber process</h3>\n<p class=\"note\">Each process's subscribers \
         (as many in each as the pattern says): messages delivered and lost, the mean \
         delivered rate of one subscriber, the latency of everything they received in ms \
         (MIN, MEAN, HARMONIC mean, p99, MAX), and the process's CPU time and peak \
         memory (RSS).</p>\n",
    );
    plain_table(out, &HEADS, &rows, 1, &lossy, 2);
    if let Some(p) = c.nodes.iter().find(|n| n.role == "source") {
        let _ = writeln!(
            out,
            "<p class=\"note\">Publisher <code>{}</code>: CPU {} ms, peak RSS {:.1} MiB.</p>",
            esc(&p.name),
            units::value(p.cpu_ms),
            p.peak_rss_kib as f64 / 1024.0
        );
    }
}
