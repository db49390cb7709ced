//! A checked topology in words, for `zmqperf topology check`: one line per node (its role,
//! replicas and sockets), one per link, one per stream, then the checker's warnings.

use crate::topology::check::Graph;

/// The graph in words: one line per node, then one per link, per stream and per warning.
pub fn checked_topology(g: &Graph) -> String {
    let mut s = String::new();
    let t = &g.topology;
    s.push_str(&format!(
        "topology {}: {} nodes, {} links\n",
        if t.name.is_empty() {
            "(unnamed)"
        } else {
            &t.name
        },
        t.nodes.len(),
        g.links.len()
    ));
    for (i, n) in t.nodes.iter().enumerate() {
        let socks: Vec<String> = n
            .all_sockets()
            .iter()
            .enumerate()
            .map(|(si, sp)| {
                let mut w = g.types[i][si].name().to_string();
                for b in &sp.bind {
                    w.push_str(&format!(" bind {b}"));
                }
                for c in &sp.connect {
                    w.push_str(&format!(" connect {c}"));
                }
                w
            })
            .collect();
        let reps = if n.replicas > 1 {
            format!(" x{}", n.replicas)
        } else {
            String::new()
        };
        s.push_str(&format!(
            "  {:<12} {:<6}{reps}  {}\n",
            n.name,
            n.role.name(),
            socks.join("; ")
        ));
    }
    for l in &g.links {
        let (a, b) = (&t.nodes[l.conn.0], &t.nodes[l.bind.0]);
        s.push_str(&format!(
            "  {} ({}) -> {} ({})\n",
            a.name,
            g.types[l.conn.0][l.conn.1].name(),
            b.name,
            g.types[l.bind.0][l.bind.1].name()
        ));
    }
    for f in g.flows() {
        s.push_str(&format!(
            "  stream {} => {}{}\n",
            t.nodes[f.source].name,
            t.nodes[f.sink].name,
            if f.shared {
                " (shared: each replica gets part)"
            } else {
                ""
            }
        ));
    }
    for w in &g.warnings {
        s.push_str(&format!("warning: {w}\n"));
    }
    s
}
