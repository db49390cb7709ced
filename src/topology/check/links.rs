//! The links of a topology: each `connect` entry joined to the socket it reaches (a
//! literal endpoint bound in the topology, or a named node's binding socket that can talk
//! to it), and the pairs ZMTP accepts, a PAIR with one peer.

use super::{err, field_of, is_address, peers_hint, Link, SockRef};
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::Result;
use crate::topology::{Placement, SocketType, Topology};
use std::collections::BTreeMap;

/// The connections: each `connect` entry to a literal endpoint bound in the topology, or
/// to the node it names.
pub(super) fn check_links(
    origin: &str,
    t: &Topology,
    names: &BTreeMap<String, usize>,
    bound: &BTreeMap<String, SockRef>,
    types: &[Vec<SocketType>],
) -> Result<Vec<Link>> {
    let mut links = Vec::new();
    for (i, n) in t.nodes.iter().enumerate() {
        for (si, s) in n.all_sockets().iter().enumerate() {
            for (ci, c) in s.connect.iter().enumerate() {
                let field = field_of(n, si, &format!("connect[{ci}]"));
                if is_address(c) {
                    let ep = Endpoint::parse(c, Side::Connect)
                        .map_err(|e| err(origin, &n.name, &field, c, e.to_string()))?;
                    if ep.transport() == Transport::Inproc && n.placement == Placement::Process {
                        return Err(err(origin, &n.name, "placement", "process", "inproc:// works only between threads of one process; use placement = \"thread\" or a tcp/ipc endpoint"));
                    }
                    if let Some(&b) = bound.get(&ep.meeting_point()) {
                        links.push(Link {
                            conn: (i, si),
                            bind: b,
                            entry: ci,
                        });
                    }
                    continue;
                }
                let Some(&j) = names.get(c) else {
                    let all: Vec<_> = t.nodes.iter().map(|n| n.name.as_str()).collect();
                    return Err(err(origin, &n.name, &field, c, format!(
                        "no node has this name and it is not an endpoint; name one of {} or write tcp://HOST:PORT",
                        all.join(", ")
                    )));
                };
                let k = link_to_node(origin, t, types, (i, si), j, &field, c)?;
                links.push(Link {
                    conn: (i, si),
                    bind: (j, k),
                    entry: ci,
                });
            }
        }
    }
    Ok(links)
}

/// The socket of node `j` that socket `from` connects to by the name `c`: the first that
/// binds and can talk to it.
fn link_to_node(
    origin: &str,
    t: &Topology,
    types: &[Vec<SocketType>],
    from: SockRef,
    j: usize,
    field: &str,
    c: &str,
) -> Result<usize> {
    let (i, si) = from;
    let n = &t.nodes[i];
    if j == i {
        return Err(err(
            origin,
            &n.name,
            field,
            c,
            "a node cannot connect to itself",
        ));
    }
    // The named node's binding sockets that can talk to this one.
    let cands: Vec<usize> = t.nodes[j]
        .all_sockets()
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.bind.is_empty())
        .map(|(k, _)| k)
        .collect();
    if cands.is_empty() {
        return Err(err(
            origin,
            &n.name,
            field,
            c,
            format!(
            "node '{c}' binds nothing; give it `bind = [\"auto\"]` or connect the other way round"
        ),
        ));
    }
    let fit: Vec<usize> = cands
        .iter()
        .copied()
        .filter(|&k| types[i][si].pairs_with(types[j][k]))
        .collect();
    let Some(&k) = fit.first() else {
        let theirs: Vec<_> = cands.iter().map(|&k| types[j][k].name()).collect();
        return Err(err(
            origin,
            &n.name,
            field,
            c,
            format!(
                "a {} socket cannot talk to {} (node '{c}'): ZMTP refuses that pair; {}",
                types[i][si].name(),
                theirs.join(" or "),
                peers_hint(types[i][si])
            ),
        ));
    };
    Ok(k)
}

/// Every link joins a pair ZMTP accepts, and a PAIR socket has one peer.
pub(super) fn check_pairs(
    origin: &str,
    t: &Topology,
    types: &[Vec<SocketType>],
    links: &[Link],
) -> Result<()> {
    for l in links {
        let (a, b) = (types[l.conn.0][l.conn.1], types[l.bind.0][l.bind.1]);
        if !a.pairs_with(b) {
            let n = &t.nodes[l.conn.0];
            return Err(err(
                origin,
                &n.name,
                &field_of(n, l.conn.1, &format!("connect[{}]", l.entry)),
                &n.all_sockets()[l.conn.1].connect[l.entry],
                format!(
                    "a {} socket cannot talk to {} (node '{}'): ZMTP refuses that pair; {}",
                    a.name(),
                    b.name(),
                    t.nodes[l.bind.0].name,
                    peers_hint(a)
                ),
            ));
        }
    }
    // PAIR has one peer.
    for (i, n) in t.nodes.iter().enumerate() {
        for (si, ty) in types[i].iter().enumerate() {
            if !matches!(ty, SocketType::Pair | SocketType::Channel) {
                continue;
            }
            let peers: u64 = links
                .iter()
                .filter_map(|l| {
                    if l.conn == (i, si) {
                        Some(t.nodes[l.bind.0].replicas as u64)
                    } else if l.bind == (i, si) {
                        Some(t.nodes[l.conn.0].replicas as u64)
                    } else {
                        None
                    }
                })
                .sum();
            if peers > 1 || (n.replicas > 1 && links.iter().any(|l| l.bind == (i, si))) {
                return Err(err(origin, &n.name, &field_of(n, si, "type"), ty.name(), format!(
                    "a {} socket has exactly one peer, and this one would have {}; use PUSH/PULL, PUB/SUB or DEALER/ROUTER for more",
                    ty.name(),
                    peers.max(2)
                )));
            }
        }
    }
    Ok(())
}
