//! The peer in another language that plays a node (its `impl`): found, and checked against
//! what the peer plays and against what no peer is given (docs/peers.md).

use super::case::CaseSpec;
use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::net::security::Mechanism;
use crate::topology::check::Graph;
use crate::topology::{IoMode, Placement};

/// The peer that plays node `i`, if its `impl` names one: checked against what the peer
/// plays and against what no peer is given (docs/peers.md).
pub(crate) fn node_peer(
    g: &Graph,
    i: usize,
    case: &CaseSpec,
) -> Result<Option<crate::peers::Manifest>> {
    let t = &g.topology;
    let n = &t.nodes[i];
    let name = match n.implementation.as_deref() {
        None | Some(crate::peers::CORE) => return Ok(None),
        Some(x) => x,
    };
    let at = format!("topology {}: node '{}': impl", case.origin, n.name);
    let m = crate::peers::get(name).map_err(|e| match e {
        Error::InvalidValue { reason, .. } => Error::invalid(&at, name, reason),
        other => other,
    })?;
    let refuse = |what: &str| {
        Err(Error::invalid(
            &at,
            name,
            format!("a peer is not given {what} (docs/peers.md); play this node with zmqperf's own core (leave out impl)"),
        ))
    };
    let socks = n.all_sockets();
    // Typed frames and log lines: only to a peer whose manifest lists them (`shapes`); a
    // sink in a topology whose sources send them may be fed them (through proxies too).
    let sink = n.role == crate::topology::Role::Sink;
    let fed = |f: fn(&crate::topology::Node) -> bool| f(n) || (sink && t.nodes.iter().any(f));
    for (used, shape, what) in [
        (
            fed(|x| x.message.is_some()),
            "typed",
            "typed frames (message)",
        ),
        (fed(|x| x.log.is_some()), "log", "log lines (log)"),
    ] {
        if used && !m.shapes.iter().any(|s| s == shape) {
            return Err(Error::invalid(
                &at,
                name,
                format!(
                    "peer {} does not play {what}: its manifest has no shapes = [\"{shape}\"] (the c and czmq peers play them; docs/peers.md); play this node with that peer or zmqperf's own core (leave out impl)",
                    m.name
                ),
            ));
        }
    }
    if n.stream.is_some() {
        return refuse("streams with an end-of-transmission channel (stream)");
    }
    if n.ticks.is_some() {
        return refuse("a tick schedule (ticks)");
    }
    if n.io
        .or(t.params.io)
        .is_some_and(|io| io != IoMode::Blocking)
        && n.role.info().takes_io
    {
        return refuse("an I/O mode other than blocking (io)");
    }
    if socks
        .iter()
        .any(|s| s.options.security.is_some_and(|m| m != Mechanism::Null))
    {
        return refuse("a security mechanism (PLAIN, CURVE, GSSAPI)");
    }
    if matches!(n.placement, Placement::Thread | Placement::Process) {
        return Err(Error::invalid(
            &format!("topology {}: node '{}': placement", case.origin, n.name),
            if n.placement == Placement::Thread {
                "thread"
            } else {
                "process"
            },
            "a node played by a peer runs in a process of its own (foreign); leave out placement",
        ));
    }
    // The transport it uses: its literal endpoints', else the case's.
    let mut transport = case.transport;
    for s in &socks {
        for e in s.bind.iter().chain(&s.connect) {
            if let Some(scheme) = e.split("://").next().filter(|_| e.contains("://")) {
                transport = match scheme {
                    "tcp" => Transport::Tcp,
                    "ipc" => Transport::Ipc,
                    _ => Transport::Inproc,
                };
            }
        }
    }
    if transport == Transport::Inproc {
        return Err(Error::invalid(
            &at,
            name,
            "a peer runs in a process of its own, which inproc:// cannot reach; run the case over tcp or ipc (--transports tcp,ipc)",
        ));
    }
    m.plays(n.role, &g.types[i], transport)?;
    Ok(Some(m))
}
