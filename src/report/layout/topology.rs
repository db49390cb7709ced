//! The edges and nodes of topology cases: which cases list them, their tables, and why
//! replicas were cut short.

use super::delivery::edge_loss;
use crate::model::{CaseResult, EdgeResult, NodeResult, RunResult};
use crate::units::{self, grouped};

/// Whether a case's edges are listed: it has more than one, or one whose stream lost,
/// duplicated or reordered messages.
pub fn lists_edges(c: &CaseResult) -> bool {
    c.edges.len() > 1 || c.edges.iter().any(edge_lossy)
}

/// True when the edge's ledger shows messages lost, duplicated or reordered.
pub fn edge_lossy(e: &EdgeResult) -> bool {
    e.loss.as_ref().is_some_and(|l| !l.is_clean())
}

/// Whether a case's nodes are listed: it ran and has more than two nodes, or its nodes ran
/// on more than one host, or a node of it was cut short (a case that never ran keeps its
/// nodes with nothing measured).
pub fn lists_nodes(c: &CaseResult) -> bool {
    (!c.repetitions.is_empty() && c.nodes.len() > 2)
        || c.nodes.iter().any(|n| !n.cut_short.is_empty())
        || c.nodes.windows(2).any(|w| w[0].host != w[1].host)
}

/// Heads of the edge table.
pub const EDGE_HEADS: [&str; 7] = [
    "case",
    "edge",
    "delivered",
    "msg/s",
    "lost",
    "mean (us)",
    "p99 (us)",
];

fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "-".to_string())
}

/// One row per edge of each case that lists its edges: case id, `from -> to`, messages
/// delivered, msg/s, loss, and mean and p99 latency in us.
pub fn edges(run: &RunResult) -> Vec<[String; 7]> {
    let mut out = Vec::new();
    for c in run.cases.iter().filter(|c| lists_edges(c)) {
        for e in &c.edges {
            let lat = e.latency.as_ref().filter(|l| l.count > 0);
            // One-way figures from clocks that differ are not shown.
            let figure = |f: fn(&crate::stats::LatencySummary) -> f64| {
                if super::edge_hides_latency(e) {
                    super::CLOCKS_DIFFER.to_string()
                } else {
                    or_dash(lat.map(|l| units::value(f(l))))
                }
            };
            out.push([
                c.id.clone(),
                format!("{} -> {}", e.from, e.to),
                grouped(e.messages),
                or_dash(e.msgs_per_sec.map(units::grouped_f)),
                or_dash(e.loss.as_ref().map(edge_loss)),
                figure(|l| l.mean_ns / 1000.0),
                figure(|l| l.p99_ns as f64 / 1000.0),
            ]);
        }
    }
    out
}

/// Heads of the node table of a run on one host (a run across hosts has a `host` column
/// after the node's name: see [`node_heads`]).
pub const NODE_HEADS: [&str; 9] = [
    "case",
    "node",
    "role",
    "placement",
    "%CPU",
    "RSS/VIRT (MiB)",
    "send msg/s",
    "delivered msg/s",
    "forwarded",
];

/// A node's name with its replicas when it has more than one: `sub x3`.
pub fn node_name(n: &NodeResult) -> String {
    if n.replicas > 1 {
        format!("{} x{}", n.name, n.replicas)
    } else {
        n.name.clone()
    }
}

/// Heads of the node table of `run`: [`NODE_HEADS`], with `host` after the node's name when
/// the run's nodes ran on more than one host.
pub fn node_heads(run: &RunResult) -> Vec<&'static str> {
    let mut h = NODE_HEADS.to_vec();
    if run.is_multi_host() {
        h.insert(2, "host");
    }
    h
}

/// How many of the node table's first columns are text: case, node, [host,] role and
/// placement.
pub fn node_text_columns(run: &RunResult) -> usize {
    if run.is_multi_host() {
        5
    } else {
        4
    }
}

/// One row per node of each case that lists its nodes: case id, name (with replicas),
/// its host when the run spans hosts, role, placement, CPU as % of one core, peak memory
/// (RSS/VIRT), the rates it
/// sent and received, and what it forwarded. The cells match [`node_heads`].
pub fn nodes(run: &RunResult) -> Vec<Vec<String>> {
    let multi = run.is_multi_host();
    let mut out = Vec::new();
    for c in run.cases.iter().filter(|c| lists_nodes(c)) {
        for n in &c.nodes {
            let mut row = vec![
                c.id.clone(),
                node_name(n),
                n.role.clone(),
                if n.placement.is_empty() {
                    "-".to_string()
                } else {
                    n.placement.clone()
                },
                or_dash(n.cpu_core_pct.map(|p| format!("{p:.0}"))),
                rss_virt(n),
                or_dash(n.send_msgs_per_sec.map(units::grouped_f)),
                or_dash(n.delivered_msgs_per_sec.map(units::grouped_f)),
                or_dash(n.forwarded.map(grouped)),
            ];
            if multi {
                row.insert(2, run.node_host(n).to_string());
            }
            out.push(row);
        }
    }
    out
}

/// A node's peak memory, resident and virtual, MiB: `9.1/152` (`9.1/-` where VIRT is
/// unknown).
fn rss_virt(n: &NodeResult) -> String {
    let mib = |k: u64| format!("{:.1}", k as f64 / 1024.0);
    let virt = if n.peak_virt_kib > 0 {
        format!("{:.0}", n.peak_virt_kib as f64 / 1024.0)
    } else {
        "-".to_string()
    };
    format!("{}/{virt}", mib(n.peak_rss_kib))
}

/// What each case's nodes used per host, as a share of one core (the sum of the nodes'
/// shares there), with the host's cores when known: `(case id, "b-01 112% of 4 cores,
/// b-02 95%")`, for the cases of the node table whose nodes say their share.
pub fn host_cpu(run: &RunResult) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for c in run.cases.iter().filter(|c| lists_nodes(c)) {
        let mut by: Vec<(&str, f64)> = Vec::new();
        for n in &c.nodes {
            let Some(p) = n.cpu_core_pct else { continue };
            let h = run.node_host(n);
            match by.iter_mut().find(|(x, _)| *x == h) {
                Some((_, t)) => *t += p,
                None => by.push((h, p)),
            }
        }
        if by.is_empty() {
            continue;
        }
        let cores = |h: &str| {
            run.environment
                .hosts
                .iter()
                .find(|e| e.name == h)
                .map(|e| e.cores)
                .or((h == run.environment.hostname).then_some(run.environment.cores))
                .filter(|c| *c > 0)
        };
        let parts: Vec<String> = by
            .iter()
            .map(|(h, p)| match cores(h) {
                Some(k) => format!("{h} {p:.0}% of one core ({k} cores)"),
                None => format!("{h} {p:.0}% of one core"),
            })
            .collect();
        out.push((c.id.clone(), parts.join(", ")));
    }
    out
}

/// Why replicas of the listed nodes were cut short, as (case id, reason), each reason
/// once with how often it recurred over replicas and repetitions: `sub1: idle: ... (2
/// times)`.
pub fn cut_short(run: &RunResult) -> Vec<(&str, String)> {
    let mut out = Vec::new();
    for c in run.cases.iter().filter(|c| lists_nodes(c)) {
        for n in &c.nodes {
            let mut seen: Vec<(&str, usize)> = Vec::new();
            for r in &n.cut_short {
                match seen.iter_mut().find(|(s, _)| *s == r.as_str()) {
                    Some((_, k)) => *k += 1,
                    None => seen.push((r.as_str(), 1)),
                }
            }
            for (r, k) in seen {
                let text = if k > 1 {
                    format!("{r} ({k} times)")
                } else {
                    r.to_string()
                };
                out.push((c.id.as_str(), text));
            }
        }
    }
    out
}

/// Heads of the stream table.
pub const STREAM_HEADS: [&str; 6] = ["case", "stream", "flows", "msg/s", "Mbit/s", "EOT ahead"];

/// One row per stream (a group of flows, as ACSflix has them) of each case, and one for
/// all of the case's streams: the flows' delivered rates added up, in msg/s and Mbit/s,
/// and the messages still on their way when the end of transmission came.
pub fn streams(run: &RunResult) -> Vec<[String; 6]> {
    let mut out = Vec::new();
    for c in &run.cases {
        let mut names: Vec<&str> = c.nodes.iter().filter_map(|n| n.stream.as_deref()).collect();
        names.sort_unstable();
        names.dedup();
        if names.is_empty() {
            continue;
        }
        let stream_of = |replica: &str| {
            let node = replica.split('[').next().unwrap_or(replica);
            c.nodes
                .iter()
                .find(|n| n.name == node)
                .and_then(|n| n.stream.as_deref())
        };
        let mut all = (0usize, 0.0f64, 0.0f64, None::<u64>);
        for name in &names {
            let flows: Vec<_> = c
                .edges
                .iter()
                .filter(|e| stream_of(&e.from) == Some(name))
                .collect();
            let rate: f64 = flows.iter().filter_map(|e| e.msgs_per_sec).sum();
            let mbit = rate * c.message_size as f64 * 8.0 / 1e6;
            let ahead = c
                .nodes
                .iter()
                .filter(|n| n.stream.as_deref() == Some(name))
                .filter_map(|n| n.eot_ahead)
                .reduce(|a, b| a + b);
            all.0 += flows.len();
            all.1 += rate;
            all.2 += mbit;
            all.3 = match (all.3, ahead) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            };
            out.push([
                c.id.clone(),
                name.to_string(),
                flows.len().to_string(),
                units::grouped_f(rate),
                units::value(mbit),
                or_dash(ahead.map(grouped)),
            ]);
        }
        if names.len() > 1 {
            out.push([
                c.id.clone(),
                "all".to_string(),
                all.0.to_string(),
                units::grouped_f(all.1),
                units::value(all.2),
                or_dash(all.3.map(grouped)),
            ]);
        }
    }
    out
}
