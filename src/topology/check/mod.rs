//! Validation of a topology before any socket opens, and what follows from its links: which
//! node reaches which, where each source's stream arrives and whether a sink gets all of it
//! (PUB copies) or a share (PUSH load-balances between peers).
//!
//! Every error names where the topology came from, the node and the field.

use super::{Node, Placement, Role, SocketType, Topology};
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::{Error, Result};
use links::{check_links, check_pairs};
use std::collections::{BTreeMap, BTreeSet};
pub use transports::{check_case, UDP_MAX};

/// A socket of a node: (node index, socket index).
pub type SockRef = (usize, usize);

/// A connection the runner will make: a connecting socket to a binding one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The socket that connects.
    pub conn: SockRef,
    /// The socket that binds.
    pub bind: SockRef,
    /// Which of the connecting socket's `connect` entries made it.
    pub entry: usize,
}

/// Where one source's stream arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    /// The source node.
    pub source: usize,
    /// The sink node.
    pub sink: usize,
    /// Each replica of the sink gets a share of the stream (load-balanced), not all of it.
    pub shared: bool,
}

/// A checked topology.
#[derive(Debug, Clone)]
pub struct Graph {
    /// The topology, with SUB sockets' default subscription filled in.
    pub topology: Topology,
    /// Each node's socket types, in socket order.
    pub types: Vec<Vec<SocketType>>,
    /// The connections.
    pub links: Vec<Link>,
    /// Nodes in an order where every node comes after the nodes it connects to by name.
    pub order: Vec<usize>,
    /// What is allowed but probably not meant.
    pub warnings: Vec<String>,
}

pub(super) fn err(
    origin: &str,
    node: &str,
    field: &str,
    value: &str,
    reason: impl Into<String>,
) -> Error {
    Error::invalid(
        &format!("topology {origin}: node '{node}': {field}"),
        value,
        reason,
    )
}

/// Whether an endpoint entry names a node rather than an address.
fn is_address(s: &str) -> bool {
    s.contains("://")
}

/// Checks a topology. `origin` names it in errors (a file path, or `built-in pubsub`).
pub fn check(origin: &str, t: &Topology) -> Result<Graph> {
    let mut t = t.clone();
    let mut warnings = Vec::new();
    if t.nodes.is_empty() {
        return Err(Error::invalid(
            &format!("topology {origin}"),
            "",
            "has no nodes; add at least a source and a sink (see docs/topology.md)",
        ));
    }
    let names = check_names(origin, &t)?;
    let types = t
        .nodes
        .iter()
        .map(|n| node::check_sockets(origin, n))
        .collect::<Result<Vec<_>>>()?;
    let bound = check_binds(origin, &t)?;
    let links = check_links(origin, &t, &names, &bound, &types)?;
    check_pairs(origin, &t, &types, &links)?;
    transports::check_types(origin, &t, &types)?;
    check_measures(origin, &t)?;
    check_reach(origin, &t, &links, &mut warnings)?;
    subscribe_all(&mut t, &types, &mut warnings);
    let order = placement_order(origin, &t)?;
    let g = Graph {
        topology: t,
        types,
        links,
        order,
        warnings,
    };
    check_filters(origin, &g)?;
    Ok(g)
}

/// Every node's name (plain, unique), replicas and own values; the index of each name.
fn check_names(origin: &str, t: &Topology) -> Result<BTreeMap<String, usize>> {
    let mut names = BTreeMap::new();
    for (i, n) in t.nodes.iter().enumerate() {
        if n.name.is_empty()
            || !n
                .name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        {
            return Err(err(
                origin,
                &n.name,
                "name",
                &n.name,
                "give each node a plain name (letters, digits, - or _)",
            ));
        }
        if names.insert(n.name.clone(), i).is_some() {
            return Err(err(
                origin,
                &n.name,
                "name",
                &n.name,
                "two nodes have this name; names must be unique",
            ));
        }
        if n.replicas == 0 {
            return Err(err(origin, &n.name, "replicas", "0", "must be at least 1"));
        }
        if n.replicas > MAX_REPLICAS {
            return Err(err(
                origin,
                &n.name,
                "replicas",
                &n.replicas.to_string(),
                too_many_replicas(),
            ));
        }
        values::check_values(origin, n)?;
        node::check_own_fields(origin, n)?;
    }
    Ok(names)
}

/// Literal binds: parsed, bound once, and reachable from the node's placement. The socket
/// that bound each, by the endpoint's meeting point.
fn check_binds(origin: &str, t: &Topology) -> Result<BTreeMap<String, SockRef>> {
    let mut bound: BTreeMap<String, SockRef> = BTreeMap::new();
    for (i, n) in t.nodes.iter().enumerate() {
        for (si, s) in n.all_sockets().iter().enumerate() {
            for (bi, b) in s.bind.iter().enumerate() {
                let field = field_of(n, si, &format!("bind[{bi}]"));
                let swarm = n.role == Role::Swarm;
                if b == "auto" && !swarm {
                    continue;
                }
                let ep = Endpoint::parse(b, Side::Bind)
                    .map_err(|e| err(origin, &n.name, &field, b, e.to_string()))?;
                if swarm && !ep.is_shared_group() {
                    return Err(err(origin, &n.name, &field, b, "a swarm's sockets bind only a udp multicast group, which each joins on its own (a DISH: bind = [\"udp://239.192.0.1:5555\"]); SUB sockets connect"));
                }
                if n.replicas > 1 && !ep.is_wildcard() && !ep.is_shared_group() {
                    return Err(err(origin, &n.name, &field, b, format!(
                        "{} replicas cannot all bind one address; use `auto` or a wildcard port (tcp://127.0.0.1:*)",
                        n.replicas
                    )));
                }
                if !ep.is_wildcard() {
                    if let Some((j, _)) = bound.insert(ep.meeting_point(), (i, si)) {
                        return Err(err(origin, &n.name, &field, b, format!(
                            "this endpoint is already bound by node '{}'; an endpoint can be bound once",
                            t.nodes[j].name
                        )));
                    }
                }
                if ep.transport() == Transport::Inproc && n.placement == Placement::Process {
                    return Err(err(origin, &n.name, "placement", "process", "inproc:// works only between threads of one process; use placement = \"thread\" or a tcp/ipc endpoint"));
                }
            }
        }
    }
    Ok(bound)
}

/// Something to measure: a stream into a sink or swarm, or round trips from a ping.
fn check_measures(origin: &str, t: &Topology) -> Result<()> {
    // Something to measure: a stream into a sink or swarm, or round trips from a ping. A
    // proxy or an echo alone times nothing, and a run of it would report no figure.
    if !t.nodes.iter().any(|n| n.role.info().measures()) {
        let n = &t.nodes[0];
        return Err(err(
            origin,
            &n.name,
            "role",
            n.role.name(),
            "the topology measures nothing: it needs a source and a sink (or swarm), or a ping and an echo; a proxy or an echo alone has nothing to time",
        ));
    }
    Ok(())
}

/// Every node is linked to another, or has a literal endpoint a peer outside can reach.
fn check_reach(
    origin: &str,
    t: &Topology,
    links: &[Link],
    warnings: &mut Vec<String>,
) -> Result<()> {
    // Reachability (a node alone too: its auto binds reach nobody).
    {
        for (i, n) in t.nodes.iter().enumerate() {
            let linked = links.iter().any(|l| l.conn.0 == i || l.bind.0 == i);
            if linked {
                continue;
            }
            let literal = n
                .all_sockets()
                .iter()
                .any(|s| s.bind.iter().chain(&s.connect).any(|e| is_address(e)));
            if literal {
                warnings.push(format!(
                    "node '{}' is linked to no other node; only a peer outside the topology can reach it",
                    n.name
                ));
            } else {
                return Err(err(origin, &n.name, "socket", "", "nobody reaches this node: no node connects to its binds and it connects to none; add `connect = [\"NODE\"]` on one side"));
            }
        }
    }
    Ok(())
}

/// A SUB socket with no `subscribe` is subscribed to everything, with a warning.
fn subscribe_all(t: &mut Topology, types: &[Vec<SocketType>], warnings: &mut Vec<String>) {
    // SUB without a subscription: subscribe to everything, and say so.
    for (i, n) in t.nodes.iter_mut().enumerate() {
        let name = n.name.clone();
        let mut socks: Vec<&mut super::SocketSpec> =
            n.socket.iter_mut().chain(n.sockets.iter_mut()).collect();
        for (si, s) in socks.iter_mut().enumerate() {
            if types[i][si] == SocketType::Sub && s.options.subscribe.is_none() {
                warnings.push(format!(
                    "node '{name}': its SUB socket has no `subscribe`; a SUB receives nothing without one, so it is subscribed to everything (\"\")"
                ));
                s.options.subscribe = Some(vec![String::new()]);
            }
        }
    }
}

/// A SUB whose every filter cannot match what its sources send would receive nothing, and
/// its loss would read as a slow joiner: refused, naming the filter. A source's message
/// starts with the measurement header (`ZP`, its version, ...), so a filter matches only if
/// it is a prefix of that or starts with it (log lines are filtered on their level frame,
/// which the flows already count).
fn check_filters(origin: &str, g: &Graph) -> Result<()> {
    let magic = crate::header::MAGIC;
    for f in g.flows() {
        let (src, snk) = (&g.topology.nodes[f.source], &g.topology.nodes[f.sink]);
        if src.log.is_some() || src.ticks.as_ref().is_some_and(|t| t.raw) {
            continue;
        }
        for (si, s) in snk.all_sockets().iter().enumerate() {
            if !matches!(g.types[f.sink][si], SocketType::Sub | SocketType::Xsub) {
                continue;
            }
            let Some(filters) = &s.options.subscribe else {
                continue;
            };
            let can = |t: &String| {
                let b = t.as_bytes();
                b.starts_with(&magic) || magic.starts_with(b)
            };
            if !filters.is_empty() && !filters.iter().any(can) {
                return Err(err(
                    origin,
                    &snk.name,
                    &field_of(snk, si, "subscribe"),
                    &format!("{filters:?}"),
                    format!(
                        "no message of source '{}' can match: each starts with the measurement header \"ZP\", so a filter matches only if it is a prefix of \"ZP\" or starts with it; subscribe to \"\" (everything), or send log lines (`log`) to filter on their level",
                        src.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

pub(super) fn field_of(n: &Node, si: usize, f: &str) -> String {
    if n.socket.is_some() && si == 0 {
        format!("socket.{f}")
    } else {
        let k = if n.socket.is_some() { si - 1 } else { si };
        format!("sockets[{k}].{f}")
    }
}

pub(super) fn peers_hint(t: SocketType) -> String {
    let peers: Vec<_> = SocketType::ALL
        .iter()
        .filter(|o| t.pairs_with(**o))
        .map(|o| o.name())
        .collect();
    format!("a {} socket talks to {}", t.name(), peers.join(", "))
}

/// The most copies of one node, each a process of its own (as many as `fanout -c`; 1,000
/// sinks took 20 s and 600 MB to start on a 2-core machine, 5,000 did not start within the
/// start timeout).
pub const MAX_REPLICAS: u32 = 1024;

fn too_many_replicas() -> String {
    format!(
        "at most {MAX_REPLICAS}, as each replica is a process of its own; for many subscribers use one swarm node with `subs` SUB sockets per process"
    )
}

/// Nodes ordered so that each comes after every node it connects to by name.
fn placement_order(origin: &str, t: &Topology) -> Result<Vec<usize>> {
    let idx: BTreeMap<&str, usize> = t
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    let deps: Vec<BTreeSet<usize>> = t
        .nodes
        .iter()
        .map(|n| {
            n.all_sockets()
                .iter()
                .flat_map(|s| s.connect.iter())
                .filter_map(|c| idx.get(c.as_str()).copied())
                .collect()
        })
        .collect();
    let mut done = vec![false; t.nodes.len()];
    let mut order = Vec::new();
    while order.len() < t.nodes.len() {
        let next = (0..t.nodes.len()).find(|&i| !done[i] && deps[i].iter().all(|&d| done[d]));
        match next {
            Some(i) => {
                done[i] = true;
                order.push(i);
            }
            None => {
                let stuck: Vec<_> = (0..t.nodes.len())
                    .filter(|&i| !done[i])
                    .map(|i| t.nodes[i].name.as_str())
                    .collect();
                return Err(Error::invalid(
                    &format!("topology {origin}"),
                    &stuck.join(", "),
                    "these nodes connect to each other in a circle by name; one of them must connect to a literal endpoint that the other binds",
                ));
            }
        }
    }
    Ok(order)
}

mod graph;
mod links;
mod node;
#[cfg(test)]
mod tests;
mod transports;
mod values;
