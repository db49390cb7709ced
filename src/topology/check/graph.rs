//! What follows from a checked topology's links: each socket's peers, and where every
//! source's stream arrives (a copy at each subscriber, or a share of a load-balanced
//! stream). The graph in words, for `zmqperf topology check`, is `report::checked`.

use super::{Flow, Graph, SockRef};
use crate::topology::StreamPart;
use std::collections::BTreeSet;

impl Graph {
    /// The sockets linked to `s`, with the replicas of each.
    pub fn peers(&self, s: SockRef) -> Vec<SockRef> {
        self.links
            .iter()
            .filter_map(|l| {
                if l.conn == s {
                    Some(l.bind)
                } else if l.bind == s {
                    Some(l.conn)
                } else {
                    None
                }
            })
            .collect()
    }

    fn replicas(&self, node: usize) -> u64 {
        self.topology.nodes[node].replicas as u64
    }

    /// Where each source's stream arrives: followed through proxies; shared when a
    /// non-copying socket on the way has more than one receiving peer.
    pub fn flows(&self) -> Vec<Flow> {
        let mut out = Vec::new();
        for (src, n) in self.topology.nodes.iter().enumerate() {
            if n.role.info().stream != StreamPart::Sends {
                continue;
            }
            // (socket that sends, shared so far)
            let mut todo = vec![((src, 0usize), false)];
            let mut seen = BTreeSet::new();
            while let Some((s, shared)) = todo.pop() {
                if !seen.insert((s, shared)) {
                    continue;
                }
                let ty = self.types[s.0][s.1];
                let receivers: Vec<SockRef> = self
                    .peers(s)
                    .into_iter()
                    .filter(|p| {
                        let info = self.topology.nodes[p.0].role.info();
                        let takes = match info.stream {
                            StreamPart::Forwards { from, .. } => p.1 == from,
                            _ => info.ends_flows(),
                        };
                        takes && self.types[p.0][p.1].receives()
                    })
                    .collect();
                let fan: u64 = receivers.iter().map(|p| self.replicas(p.0)).sum();
                let split = shared || (!ty.copies() && fan > 1);
                for p in receivers {
                    match self.topology.nodes[p.0].role.info().stream {
                        StreamPart::Forwards { to, .. } => {
                            todo.push(((p.0, to), split || self.replicas(p.0) > 1))
                        }
                        _ => out.push(Flow {
                            source: src,
                            sink: p.0,
                            shared: split,
                        }),
                    }
                }
            }
        }
        out.sort_by_key(|f| (f.source, f.sink));
        out.dedup_by_key(|f| (f.source, f.sink));
        out
    }
}
