//! The sections about the cases: charts, tables (with the topology of each topology
//! case), warnings, failures, delivery and resource use.

use super::delivery::delivery;
use super::floor::floor_charts;
use super::parts::{figure, grid, items, prose};
use super::sizes::{SizeChart, BANDWIDTH, LATENCY, THROUGHPUT};
use super::spectrum::spectrum_charts;
use super::topology::{topology_figure, topology_tables};
use crate::model::{CaseResult, Kind, RunResult};
use crate::report::layout::{self, Group};
use crate::report::svg::esc;
use std::fmt::Write;

/// The charts, tables, warnings, failures, delivery and resources of the cases.
pub(super) fn cases(out: &mut String, run: &RunResult) {
    super::fanout::fanout(out, run);
    charts(out, run);
    tables(out, run);
    lists(out, run);
    resources(out, run);
}

/// The charts section: latency, throughput and bandwidth by size, the percentile
/// spectra, the floors and the delivery chart (or a note that there is nothing to chart).
fn charts(out: &mut String, run: &RunResult) {
    let groups = layout::groups(run);
    let closed = |k: Kind| -> Vec<&Group<'_>> {
        groups
            .iter()
            .filter(|g| g.kind == k && g.open_rate.is_none())
            .collect()
    };
    out.push_str("<h2>Charts</h2>\n");
    let lines_note = "Markers are medians over the repetitions; whiskers in each series' \
                          colour show the 95% confidence interval where it is wider than a \
                          pixel, cut at the frame with an arrowhead when it runs further.";
    let bars_note = "Bars are medians over the repetitions, their values in the column at \
                         the right; whiskers in each bar's colour show the 95% confidence \
                         interval. The axis is scaled to the first bar of each group (the \
                         median): a longer bar is clipped at the edge with a break and its \
                         value marked \u{bb}, a longer whisker with an arrowhead.";
    let mut drawn = 0;
    let charts = [
        (
            SizeChart {
                id: "lat",
                what: "Latency",
                y_label: "one-way latency (µs)",
                stats: &LATENCY,
            },
            Kind::Latency,
            "Latency cases: median (p50), 99th percentile (p99) and mean one-way latency \
                 (round trip / 2).",
        ),
        (
            SizeChart {
                id: "thr",
                what: "Throughput",
                y_label: "messages per second (msg/s)",
                stats: &THROUGHPUT,
            },
            Kind::Throughput,
            "Throughput cases at full speed: messages delivered per second at the receiver \
                 and accepted per second by the sender.",
        ),
        (
            SizeChart {
                id: "bw",
                what: "Bandwidth",
                y_label: "payload bandwidth (Mbit/s)",
                stats: &BANDWIDTH,
            },
            Kind::Throughput,
            "Payload delivered, ZeroMQ framing not counted.",
        ),
    ];
    for (chart, kind, caption) in &charts {
        for (s, bars) in chart.render(&closed(*kind)) {
            let note = if bars { bars_note } else { lines_note };
            figure(out, &s, &format!("{caption} {note}"));
            drawn += 1;
        }
    }
    for (s, left_out) in spectrum_charts(&groups) {
        figure(
            out,
            &s,
            &format!(
                "Percentile spectrum of the last repetition: the latency below which each \
                 share of the messages fell. Each step right adds a nine (90%, 99%, 99.9%, \
                 ...), so the tail is as visible as the median. Each line has its own colour \
                 and dash, and its name at its end.{left_out}"
            ),
        );
        drawn += 1;
    }
    drawn += floor_charts(out, run);
    if delivery(out, run) {
        drawn += 1;
    }
    if drawn == 0 {
        out.push_str("<p class=\"note\">Nothing to chart: no case produced figures.</p>\n");
    }
}

/// The tables section: host pairs, each group's grid with the topologies worth a closer
/// look, then the topology tables.
fn tables(out: &mut String, run: &RunResult) {
    out.push_str("<h2>Tables</h2>\n");
    let tables = layout::tables(run);
    if tables.is_empty() {
        out.push_str("<p>No cases in this run.</p>\n");
    } else {
        out.push_str(
            "<p class=\"note\">Figures are medians over the repetitions; ± is half the \
                 width of their 95% confidence interval. Latency is the mean one-way time \
                 (round trip / 2 for latency cases).</p>\n",
        );
    }
    if let Some(hp) = layout::host_pairs(run) {
        let _ = writeln!(
            out,
            "<h3>Host pairs</h3>\n<p class=\"note\">{}</p>",
            esc(layout::HOST_PAIRS_NOTE)
        );
        super::parts::plain_table(out, &hp.heads, &hp.rows, hp.text_columns, &[], 0);
    }
    for (g, cases) in &tables {
        grid(out, g);
        // Under a matrix (one case per cell), only the topologies worth a closer look:
        // a graph of one ping and one echo per cell says nothing the table does not.
        let worth = |c: &CaseResult| {
            !c.nodes.is_empty()
                && (g.row_groups.is_empty() || layout::lists_edges(c) || layout::lists_nodes(c))
        };
        for c in cases.iter().filter(|c| worth(c)) {
            topology_figure(out, run, c);
        }
    }
    topology_tables(out, run);
}

/// The lists: warnings and failed cases (each tagged with its case), and delivery.
fn lists(out: &mut String, run: &RunResult) {
    let tagged = |v: Vec<(&str, &str)>| -> Vec<String> {
        v.into_iter()
            .map(|(id, t)| format!("<code>{}</code>: {}", esc(id), prose(t)))
            .collect()
    };
    let warnings = layout::warnings(run);
    items(
        out,
        "Warnings",
        &tagged(warnings.iter().map(|(id, w)| (*id, w.as_str())).collect()),
    );
    items(out, "Failed cases", &tagged(layout::failures(run)));
    let delivery: Vec<String> = layout::delivery(run).iter().map(|d| esc(d)).collect();
    items(out, "Delivery", &delivery);
}

/// The tables of security cost and of resource use.
fn resources(out: &mut String, run: &RunResult) {
    let security = layout::security_cost(run);
    plain_table(
        out,
        "Security cost (each mechanism beside its NULL twin)",
        &layout::SECURITY_HEADS,
        &security,
        3,
    );
    plain_table(
        out,
        "Resources (last repetition of each case)",
        &layout::RESOURCE_HEADS,
        &layout::resources(run),
        3,
    );
}

/// A table of text cells under a heading (nothing when there are no rows); the first
/// `text_cols` columns are left-aligned, the rest are numbers.
fn plain_table<const N: usize>(
    out: &mut String,
    title: &str,
    heads: &[&str; N],
    rows: &[[String; N]],
    text_cols: usize,
) {
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<h2>{}</h2>\n<div class=\"tw\"><table><thead><tr>",
        esc(title)
    );
    let class = |i: usize| if i < text_cols { "l" } else { "n" };
    for (i, h) in heads.iter().enumerate() {
        let _ = write!(out, "<th class=\"{}\">{}</th>", class(i), esc(h));
    }
    out.push_str("</tr></thead><tbody>\n");
    for r in rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let _ = write!(out, "<td class=\"{}\">{}</td>", class(i), esc(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}
