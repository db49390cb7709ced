//! The topology cases: each case's graph under its group's table, and the tables of edges
//! and nodes.

use super::parts::{figure, plain_table};
use crate::model::{CaseResult, RunResult};
use crate::report::graph;
use crate::report::layout;
use crate::report::svg::esc;
use std::fmt::Write;

/// The graph of a topology case, under a heading naming the case.
pub(super) fn topology_figure(out: &mut String, run: &RunResult, c: &CaseResult) {
    let n = run
        .cases
        .iter()
        .position(|x| std::ptr::eq(x, c))
        .unwrap_or(0);
    let Some(svg) = graph::topology(&format!("topo{n}"), c) else {
        return;
    };
    let _ = writeln!(
        out,
        "<h4 id=\"topology-{n}\">Topology of <code>{}</code></h4>",
        esc(&c.id)
    );
    figure(
        out,
        &svg,
        "Nodes by role: sources and pings on the left, proxies in the middle, sinks and \
         echoes on the right; ×N counts a node's replicas. Each arrow carries the streams \
         measured between two nodes over all repetitions: messages per second delivered \
         (median over the repetitions), mean latency end to end, and loss; lossy arrows \
         are orange.",
    );
}

/// The edges and nodes of the cases that list them, as in the other reports.
pub(super) fn topology_tables(out: &mut String, run: &RunResult) {
    let edges = layout::edges(run);
    if !edges.is_empty() {
        out.push_str(
            "<h2>Edges</h2>\n<p class=\"note\">Each stream from a sending replica to a \
             receiver, over all repetitions: messages delivered, their rate (median over the \
             repetitions), loss, and mean and 99th percentile latency end to end.</p>\n",
        );
        let lossy: Vec<bool> = run
            .cases
            .iter()
            .filter(|c| layout::lists_edges(c))
            .flat_map(|c| c.edges.iter().map(layout::edge_lossy))
            .collect();
        plain_table(out, &layout::EDGE_HEADS, &edges, 2, &lossy, 4);
    }
    let streams = layout::streams(run);
    if !streams.is_empty() {
        let _ = writeln!(out, "<h2>Streams</h2>\n<p class=\"note\">{}</p>", esc("Each stream (a group of flows) of a case, and all of them: its flows' delivered rates added up (medians over the repetitions), in msg/s and Mbit/s, and the messages still on their way when its end of transmission arrived (a worker that stopped there would lose them)."));
        plain_table(out, &layout::STREAM_HEADS, &streams, 2, &[], 0);
    }
    let nodes = layout::nodes(run);
    if !nodes.is_empty() {
        out.push_str(
            "<h2>Nodes</h2>\n<p class=\"note\">Each node with its replicas, over all \
             repetitions: CPU time (user + system), largest peak memory of a replica, rates \
             sent and delivered (medians over the repetitions) and messages forwarded.</p>\n",
        );
        plain_table(
            out,
            &layout::node_heads(run),
            &nodes,
            layout::node_text_columns(run),
            &[],
            0,
        );
        let cut = layout::cut_short(run);
        if !cut.is_empty() {
            out.push_str(
                "<p>Cut short (the end of a stream never came):</p>\n<ul class=\"items\">\n",
            );
            for (id, why) in cut {
                let _ = writeln!(out, "<li><code>{}</code>: {}</li>", esc(id), esc(&why));
            }
            out.push_str("</ul>\n");
        }
    }
}
