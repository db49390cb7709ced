//! Validation of a topology before any socket opens, and what follows from its links: which
//! node reaches which, where each source's stream arrives and whether a sink gets all of it
//! (PUB copies) or a share (PUSH load-balances between peers).
//!
//! Every error names where the topology came from, the node and the field.

use super::{IoMode, Node, Placement, Role, SocketType, Topology};
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::{Error, Result};
use std::collections::{BTreeMap, BTreeSet};

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

fn err(origin: &str, node: &str, field: &str, value: &str, reason: impl Into<String>) -> Error {
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
    // Names.
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
        check_values(origin, n)?;
        match (n.role, n.subs) {
            (Role::Swarm, Some(0)) => {
                return Err(err(
                    origin,
                    &n.name,
                    "subs",
                    "0",
                    "a swarm has at least 1 SUB socket",
                ))
            }
            (Role::Swarm, _) => {}
            (_, Some(v)) => {
                return Err(err(
                    origin,
                    &n.name,
                    "subs",
                    &v.to_string(),
                    "only a swarm has `subs`; use replicas for other roles",
                ))
            }
            _ => {}
        }
    }
    // Sockets and their types.
    let mut types = Vec::new();
    for n in &t.nodes {
        let socks = n.all_sockets();
        let want = if n.role == Role::Proxy { 2 } else { 1 };
        if socks.len() != want {
            return Err(err(
                origin,
                &n.name,
                if n.role == Role::Proxy {
                    "sockets"
                } else {
                    "socket"
                },
                &socks.len().to_string(),
                if n.role == Role::Proxy {
                    "a proxy has two sockets: `sockets = [receiving side, sending side]`"
                        .to_string()
                } else {
                    format!(
                        "a {} has exactly one socket: `socket = {{ type = ..., bind = [...] }}`",
                        n.role.name()
                    )
                },
            ));
        }
        let mut ts = Vec::new();
        for (si, s) in socks.iter().enumerate() {
            let field = field_of(n, si, "type");
            let ty = SocketType::parse(&s.kind).ok_or_else(|| {
                let all: Vec<_> = SocketType::ALL.iter().map(|t| t.name()).collect();
                err(
                    origin,
                    &n.name,
                    &field,
                    &s.kind,
                    format!("not a socket type; use one of {}", all.join(", ")),
                )
            })?;
            ts.push(ty);
            if let Some(k) = &s.options.curve_keys {
                k.check(&format!(
                    "topology {origin}: node '{}': {}",
                    n.name,
                    field_of(n, si, "curve_keys")
                ))?;
                if s.options.security != Some(super::security::Mechanism::Curve) {
                    return Err(err(
                        origin,
                        &n.name,
                        &field_of(n, si, "curve_keys"),
                        "given",
                        "CURVE keys without `security = \"curve\"` would not be used; add it, or remove the keys",
                    ));
                }
            }
        }
        check_role(origin, n, &ts)?;
        if let Some(v) = n.wait_subscriptions {
            let out = usize::from(n.role == Role::Proxy);
            let publishes = matches!(n.role, Role::Source | Role::Proxy)
                && matches!(ts.get(out), Some(SocketType::Pub | SocketType::Xpub));
            if !publishes {
                return Err(err(
                    origin,
                    &n.name,
                    "wait_subscriptions",
                    &v.to_string(),
                    "only a source or proxy that publishes on PUB or XPUB waits for subscriptions; remove the field",
                ));
            }
        }
        check_shape(origin, n)?;
        check_io(origin, n)?;
        types.push(ts);
    }
    // Endpoints.
    let mut bound: BTreeMap<String, SockRef> = BTreeMap::new();
    for (i, n) in t.nodes.iter().enumerate() {
        for (si, s) in n.all_sockets().iter().enumerate() {
            for (bi, b) in s.bind.iter().enumerate() {
                let field = field_of(n, si, &format!("bind[{bi}]"));
                if b == "auto" {
                    continue;
                }
                let ep = Endpoint::parse(b, Side::Bind)
                    .map_err(|e| err(origin, &n.name, &field, b, e.to_string()))?;
                if n.replicas > 1 && !ep.is_wildcard() {
                    return Err(err(origin, &n.name, &field, b, format!(
                        "{} replicas cannot all bind one address; use `auto` or a wildcard port (tcp://127.0.0.1:*)",
                        n.replicas
                    )));
                }
                if !ep.is_wildcard() {
                    if let Some((j, _)) = bound.insert(b.clone(), (i, si)) {
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
    // Links.
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
                    if let Some(&b) = bound.get(c) {
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
                if j == i {
                    return Err(err(
                        origin,
                        &n.name,
                        &field,
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
                    return Err(err(origin, &n.name, &field, c, format!(
                        "node '{c}' binds nothing; give it `bind = [\"auto\"]` or connect the other way round"
                    )));
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
                        &field,
                        c,
                        format!(
                        "a {} socket cannot talk to {} (node '{c}'): ZMTP refuses that pair; {}",
                        types[i][si].name(),
                        theirs.join(" or "),
                        peers_hint(types[i][si])
                    ),
                    ));
                };
                links.push(Link {
                    conn: (i, si),
                    bind: (j, k),
                    entry: ci,
                });
            }
        }
    }
    for l in &links {
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
            if *ty != SocketType::Pair {
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
                return Err(err(origin, &n.name, &field_of(n, si, "type"), "PAIR", format!(
                    "a PAIR socket has exactly one peer, and this one would have {}; use PUSH/PULL, PUB/SUB or DEALER/ROUTER for more",
                    peers.max(2)
                )));
            }
        }
    }
    // Something to measure: a stream into a sink or swarm, or round trips from a ping. A
    // proxy or an echo alone times nothing, and a run of it would report no figure.
    if !t
        .nodes
        .iter()
        .any(|n| matches!(n.role, Role::Source | Role::Sink | Role::Swarm | Role::Ping))
    {
        let n = &t.nodes[0];
        return Err(err(
            origin,
            &n.name,
            "role",
            n.role.name(),
            "the topology measures nothing: it needs a source and a sink (or swarm), or a ping and an echo; a proxy or an echo alone has nothing to time",
        ));
    }
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

/// A node's own numbers and its sockets' options, in the ranges libzmq and the roles
/// accept: what `run` would otherwise fail on with libzmq's "Invalid argument" once the
/// sockets open, or silently ignore.
fn check_values(origin: &str, n: &Node) -> Result<()> {
    let at = |f: &str| format!("topology {origin}: node '{}': {f}", n.name);
    let count = super::value_u64(&n.count, &at("count"), crate::parse::parse_count)?;
    if count == Some(0) {
        return Err(err(origin, &n.name, "count", "0", "must be at least 1"));
    }
    super::value_u64(&n.size, &at("size"), |w, s| {
        crate::parse::parse_size(w, s).map(|x| x as u64)
    })?;
    if n.size.as_ref().and_then(|v| v.as_u64()) == Some(0) {
        return Err(err(
            origin,
            &n.name,
            "size",
            "0",
            "a message has at least 1 byte",
        ));
    }
    if let Some(sz) = n.size.as_ref().and_then(|v| v.as_u64()) {
        crate::parse::parse_size(&at("size"), &sz.to_string())?;
    }
    if let Some(r) = n.rate {
        if !(r.is_finite() && r > 0.0) {
            return Err(err(
                origin,
                &n.name,
                "rate",
                &r.to_string(),
                "a rate in msg/s above 0, e.g. 10000; leave it out for no pacing",
            ));
        }
    }
    if let Some(m) = &n.message {
        for (k, v) in m.frames.iter().enumerate() {
            let what = at(&format!("message.frames[{k}]"));
            let size = super::value_u64(&Some(v.clone()), &what, |w, s| {
                crate::parse::parse_size(w, s).map(|x| x as u64)
            })?
            .unwrap_or(0);
            let least = if k == 0 {
                crate::roles::shape::FIRST_FRAME_MIN as u64
            } else {
                1
            };
            if size < least {
                return Err(err(
                    origin,
                    &n.name,
                    &format!("message.frames[{k}]"),
                    &size.to_string(),
                    if k == 0 {
                        format!(
                            "the first frame holds the {}-byte header and the 4-byte type id; make it at least {least} bytes",
                            crate::header::HEADER_LEN
                        )
                    } else {
                        "a frame has at least 1 byte".to_string()
                    },
                ));
            }
        }
    }
    if let Some(t) = &n.ticks {
        if !(t.interval_ms.is_finite() && t.interval_ms >= 0.0) {
            return Err(err(
                origin,
                &n.name,
                "ticks.interval_ms",
                &t.interval_ms.to_string(),
                "0 (as fast as possible) or more ms",
            ));
        }
        if t.per_tick == 0 || t.passes == 0 {
            let (f, v) = if t.per_tick == 0 {
                ("ticks.per_tick", t.per_tick)
            } else {
                ("ticks.passes", t.passes)
            };
            return Err(err(
                origin,
                &n.name,
                f,
                &v.to_string(),
                "must be at least 1",
            ));
        }
        if t.io_threads < 1 {
            return Err(err(
                origin,
                &n.name,
                "ticks.io_threads",
                &t.io_threads.to_string(),
                "must be at least 1",
            ));
        }
    }
    for (si, s) in n.all_sockets().iter().enumerate() {
        let o = &s.options;
        let field = |f: &str| field_of(n, si, f);
        for (f, v, least, what) in [
            ("sndhwm", o.sndhwm, 0, "0 (no limit) or more messages"),
            ("rcvhwm", o.rcvhwm, 0, "0 (no limit) or more messages"),
            ("linger", o.linger, -1, "-1 (wait for ever), 0 or more ms"),
            (
                "sndbuf",
                o.sndbuf,
                -1,
                "-1 (the system's default) or more bytes",
            ),
            (
                "rcvbuf",
                o.rcvbuf,
                -1,
                "-1 (the system's default) or more bytes",
            ),
            (
                "tcp_keepalive",
                o.tcp_keepalive,
                -1,
                "-1 (the system's default), 0 (off) or 1 (on)",
            ),
        ] {
            let Some(v) = v else { continue };
            let high = if f == "tcp_keepalive" { 1 } else { i32::MAX };
            if v < least || v > high {
                return Err(err(origin, &n.name, &field(f), &v.to_string(), what));
            }
        }
        if let Some(id) = &o.routing_id {
            if id.is_empty() || id.len() > 255 || id.as_bytes()[0] == 0 {
                return Err(err(
                    origin,
                    &n.name,
                    &field("routing_id"),
                    &format!("{} bytes", id.len()),
                    "a routing id has 1 to 255 bytes and does not start with a zero byte",
                ));
            }
        }
    }
    Ok(())
}

fn field_of(n: &Node, si: usize, f: &str) -> String {
    if n.socket.is_some() && si == 0 {
        format!("socket.{f}")
    } else {
        let k = if n.socket.is_some() { si - 1 } else { si };
        format!("sockets[{k}].{f}")
    }
}

fn peers_hint(t: SocketType) -> String {
    let peers: Vec<_> = SocketType::ALL
        .iter()
        .filter(|o| t.pairs_with(**o))
        .map(|o| o.name())
        .collect();
    format!("a {} socket talks to {}", t.name(), peers.join(", "))
}

/// Typed frames and log lines: a plain source's, one or the other, with something in them.
fn check_shape(origin: &str, n: &Node) -> Result<()> {
    for (field, given) in [("message", n.message.is_some()), ("log", n.log.is_some())] {
        if given && (n.role != Role::Source || n.ticks.is_some()) {
            return Err(err(
                origin,
                &n.name,
                field,
                "given",
                "only a source (not on ticks) sends typed frames or log lines; remove the field",
            ));
        }
    }
    if let Some(st) = &n.stream {
        if !matches!(n.role, Role::Source | Role::Sink) || n.ticks.is_some() {
            return Err(err(
                origin,
                &n.name,
                "stream",
                st,
                "only sources and sinks belong to a stream (a group of flows); remove the field",
            ));
        }
        if st.is_empty() {
            return Err(err(origin, &n.name, "stream", "", "give the stream a name"));
        }
    }
    if n.message.is_some() && n.log.is_some() {
        return Err(err(
            origin,
            &n.name,
            "log",
            "given",
            "a source sends typed frames (`message`) or log lines (`log`), not both",
        ));
    }
    if n.message.as_ref().is_some_and(|m| m.frames.is_empty()) {
        return Err(err(
            origin,
            &n.name,
            "message.frames",
            "[]",
            "give every frame's size, the first holding the header and the type id: e.g. frames = [28, 1024, 1024]",
        ));
    }
    if n.log.as_ref().is_some_and(|l| {
        l.levels
            .as_ref()
            .is_some_and(|v| v.is_empty() || v.iter().any(String::is_empty))
    }) {
        return Err(err(
            origin,
            &n.name,
            "log.levels",
            "[]",
            "give the level of each line in turn, none empty: e.g. levels = [\"INFO\", \"ERROR\"]",
        ));
    }
    Ok(())
}

/// The most copies of one node, each a process of its own (as many as `fanout -c`; 1,000
/// sinks took 20 s and 600 MB to start on a 2-core machine, 5,000 did not start within the
/// start timeout).
pub const MAX_REPLICAS: u32 = crate::fanout::MAX_PROCESSES;

fn too_many_replicas() -> String {
    format!(
        "at most {MAX_REPLICAS}, as each replica is a process of its own; for many subscribers use one swarm node with `subs` SUB sockets per process"
    )
}

/// An I/O mode only on the roles that take one (a proxy and a swarm keep their own loops).
fn check_io(origin: &str, n: &Node) -> Result<()> {
    let Some(io) = n.io else { return Ok(()) };
    if !IoMode::applies_to(n.role) || n.ticks.is_some() {
        let what = if n.ticks.is_some() {
            "a source on ticks".to_string()
        } else {
            format!("a {}", n.role.name())
        };
        return Err(err(
            origin,
            &n.name,
            "io",
            io.name(),
            format!("{what} keeps its own way of sending and receiving; only a source, sink, ping or echo takes `io` (blocking, poll or timeout): remove the field"),
        ));
    }
    Ok(())
}

fn check_role(origin: &str, n: &Node, ts: &[SocketType]) -> Result<()> {
    use SocketType::*;
    let ok = match n.role {
        Role::Source => matches!(ts[0], Pub | Xpub | Push | Pair | Dealer),
        Role::Sink => matches!(ts[0], Sub | Xsub | Pull | Pair | Dealer | Router),
        Role::Ping => matches!(ts[0], Req | Dealer | Pair),
        Role::Echo => matches!(ts[0], Rep | Router | Dealer | Pair),
        Role::Proxy => ts[0].receives() && ts[1].sends(),
        Role::Swarm => ts[0] == Sub,
    };
    if ok {
        return Ok(());
    }
    let want = match n.role {
        Role::Source => "a sending socket: PUB, XPUB, PUSH, PAIR or DEALER",
        Role::Sink => "a receiving socket: SUB, XSUB, PULL, PAIR, DEALER or ROUTER",
        Role::Ping => "REQ, DEALER or PAIR",
        Role::Echo => "REP, ROUTER, DEALER or PAIR",
        Role::Proxy => "a receiving socket first (e.g. XSUB, PULL, ROUTER), then a sending one (e.g. XPUB, PUSH, DEALER)",
        Role::Swarm => "a SUB socket (the swarm opens `subs` of them)",
    };
    let got: Vec<_> = ts.iter().map(|t| t.name()).collect();
    Err(err(
        origin,
        &n.name,
        if n.role == Role::Proxy {
            "sockets"
        } else {
            "socket.type"
        },
        &got.join(", "),
        format!("a {} needs {want}", n.role.name()),
    ))
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
#[cfg(test)]
mod tests;
