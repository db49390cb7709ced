//! The arrows of a topology graph: the column of each role, the node an edge end names,
//! and the measured streams between two nodes merged into one arrow with its label.

use crate::model::{CaseResult, EdgeResult, NodeResult};
use crate::report::layout;
use crate::stats::LossSummary;
use crate::units;

/// The column of a role: 0 for what starts a stream, 1 for what passes it on, 2 for
/// what ends it. Unknown roles go in the middle.
pub(super) fn column(role: &str) -> usize {
    match role {
        "source" | "ping" => 0,
        "sink" | "echo" => 2,
        _ => 1,
    }
}

/// The node an edge end names: the node itself, or one of its replicas (`src[2]`).
pub(super) fn node_index(nodes: &[NodeResult], end: &str) -> Option<usize> {
    if let Some(i) = nodes.iter().position(|n| n.name == end) {
        return Some(i);
    }
    let base = end
        .strip_suffix(']')
        .and_then(|s| s.rfind('[').map(|at| &s[..at]))?;
    nodes.iter().position(|n| n.name == base)
}

/// The measured edges between two nodes, merged: replicas of a node send and receive
/// streams of their own, drawn as one arrow.
pub(super) struct Link {
    pub(super) from: usize,
    pub(super) to: usize,
    streams: usize,
    messages: u64,
    /// Sum of the streams' rates, msg/s; None when no stream has one.
    rate: Option<f64>,
    loss: Option<LossSummary>,
    /// Latency samples and their sum, ns, for the mean over all streams.
    samples: u64,
    sum_ns: f64,
}

impl Link {
    fn add(&mut self, e: &EdgeResult) {
        self.streams += 1;
        self.messages += e.messages;
        if let Some(r) = e.msgs_per_sec.filter(|r| r.is_finite()) {
            *self.rate.get_or_insert(0.0) += r;
        }
        if let Some(l) = &e.loss {
            self.loss.get_or_insert_with(LossSummary::default).add(l);
        }
        if let Some(l) = e.latency.as_ref().filter(|l| l.count > 0) {
            self.samples += l.count;
            self.sum_ns += l.mean_ns * l.count as f64;
        }
    }

    pub(super) fn lossy(&self) -> bool {
        self.loss.as_ref().is_some_and(|l| !l.is_clean())
    }

    /// The lines written along the arrow.
    pub(super) fn label(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.streams > 1 {
            lines.push(format!("{} streams", self.streams));
        }
        lines.push(match self.rate {
            Some(r) => format!("{} msg/s", units::grouped_f(r)),
            None => format!("{} messages", units::grouped(self.messages)),
        });
        if self.samples > 0 {
            let mean_us = self.sum_ns / self.samples as f64 / 1000.0;
            lines.push(format!("mean {} µs", units::value(mean_us)));
        }
        if let Some(l) = self.loss.as_ref().filter(|l| !l.is_clean()) {
            if l.lost > 0 {
                lines.push(format!(
                    "lost {} of {}",
                    units::grouped(l.lost),
                    units::grouped(l.expected)
                ));
                let places = layout::loss_places(l);
                if !places.is_empty() {
                    lines.push(format!("({})", places.join(", ")));
                }
            }
            lines.extend(layout::loss_extras(l));
        }
        lines
    }
}

/// The arrows of a case: one per ordered pair of nodes with edges, in the order the edges
/// come. Edges naming no node of the case, and a node's edges to itself, are left out.
pub(super) fn links(c: &CaseResult) -> Vec<Link> {
    let mut out: Vec<Link> = Vec::new();
    for e in &c.edges {
        let (Some(from), Some(to)) = (node_index(&c.nodes, &e.from), node_index(&c.nodes, &e.to))
        else {
            continue;
        };
        if from == to {
            continue;
        }
        let at = match out.iter().position(|l| l.from == from && l.to == to) {
            Some(at) => at,
            None => {
                out.push(Link {
                    from,
                    to,
                    streams: 0,
                    messages: 0,
                    rate: None,
                    loss: None,
                    samples: 0,
                    sum_ns: 0.0,
                });
                out.len() - 1
            }
        };
        out[at].add(e);
    }
    out
}

/// The second line of a node's box: its role, and its replicas when there are several.
pub(super) fn role_line(n: &NodeResult) -> String {
    if n.replicas > 1 {
        format!("{} ×{}", n.role, n.replicas)
    } else {
        n.role.clone()
    }
}
