//! The checks of one node against its role's descriptor ([`RoleInfo`]): its sockets (how
//! many, of which types), the fields only some roles take, and what only a source, a member
//! of a stream or a role with an I/O mode may give.
//!
//! [`RoleInfo`]: crate::topology::RoleInfo

use super::{err, field_of};
use crate::error::Result;
use crate::topology::{Latency, Node, SocketType, StreamPart};

/// A socket's security fields: CURVE keys well formed, and each mechanism's fields only
/// with that mechanism (they would not be used otherwise).
fn check_security(
    origin: &str,
    n: &Node,
    si: usize,
    o: &crate::topology::SocketOptions,
) -> Result<()> {
    use crate::topology::security::Mechanism;
    if let Some(k) = &o.curve_keys {
        k.check(&format!(
            "topology {origin}: node '{}': {}",
            n.name,
            field_of(n, si, "curve_keys")
        ))?;
    }
    use Mechanism::*;
    let fields = [
        (Curve, "curve_keys", o.curve_keys.is_some()),
        (Plain, "plain_username", o.plain_username.is_some()),
        (Plain, "plain_password", o.plain_password.is_some()),
        (Gssapi, "gssapi_principal", o.gssapi_principal.is_some()),
        (Gssapi, "gssapi_plaintext", o.gssapi_plaintext.is_some()),
    ];
    for (m, field, given) in fields {
        if given && o.security != Some(m) {
            return Err(err(
                origin,
                &n.name,
                &field_of(n, si, field),
                "given",
                format!(
                    "{field} is used only with `security = \"{}\"`; add it, or remove the field",
                    m.name()
                ),
            ));
        }
    }
    if o.gssapi_principal
        .as_deref()
        .is_some_and(|p| p.trim().is_empty())
    {
        return Err(err(
            origin,
            &n.name,
            &field_of(n, si, "gssapi_principal"),
            "",
            "name the service, as `zmqperf@host` or `zmqperf/host@REALM`",
        ));
    }
    Ok(())
}

/// A node's sockets, as many as its role has and of types it takes; the types in socket
/// order. Its CURVE keys are checked, and its waiting for subscriptions, shape and I/O mode.
pub(super) fn check_sockets(origin: &str, n: &Node) -> Result<Vec<SocketType>> {
    let info = n.role.info();
    let socks = n.all_sockets();
    if socks.len() != info.sockets {
        return Err(err(
            origin,
            &n.name,
            if info.sockets > 1 {
                "sockets"
            } else {
                "socket"
            },
            &socks.len().to_string(),
            if info.sockets > 1 {
                info.sockets_reason.to_string()
            } else {
                format!(
                    "a {} has exactly one socket: `socket = {{ type = ..., bind = [...] }}`",
                    info.name
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
        check_security(origin, n, si, &s.options)?;
    }
    check_role(origin, n, &ts)?;
    check_peer(origin, n, &ts)?;
    if let Some(v) = n.wait_subscriptions {
        if info.publishes_on(&ts).is_none() {
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
    Ok(ts)
}

/// The fields only some roles take: refused on the others, and checked by the role's own
/// rule where it takes them.
pub(super) fn check_own_fields(origin: &str, n: &Node) -> Result<()> {
    let info = n.role.info();
    if let Some((field, value, why)) = (info.check_fields)(n) {
        return Err(err(origin, &n.name, field, &value, why));
    }
    for (field, given, why) in n.own_fields() {
        if let Some(v) = given.filter(|_| !info.fields.contains(&field)) {
            return Err(err(origin, &n.name, field, &v, why));
        }
    }
    Ok(())
}

fn check_role(origin: &str, n: &Node, ts: &[SocketType]) -> Result<()> {
    let info = n.role.info();
    if (info.accepts)(ts) {
        return Ok(());
    }
    let got: Vec<_> = ts.iter().map(|t| t.name()).collect();
    Err(err(
        origin,
        &n.name,
        if info.sockets > 1 {
            "sockets"
        } else {
            "socket.type"
        },
        &got.join(", "),
        format!("a {} needs {}", info.name, info.wants),
    ))
}

/// Typed frames and log lines: a plain source's, one or the other, with something in them.
pub(super) fn check_shape(origin: &str, n: &Node) -> Result<()> {
    for (field, given) in [("message", n.message.is_some()), ("log", n.log.is_some())] {
        if given && (n.role.info().stream != StreamPart::Sends || n.ticks.is_some()) {
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
        if !n.role.info().in_stream || n.ticks.is_some() {
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

/// An I/O mode only on the roles that take one (a proxy and a swarm keep their own loops).
pub(super) fn check_io(origin: &str, n: &Node) -> Result<()> {
    let Some(io) = n.io else { return Ok(()) };
    if !n.role.info().takes_io || n.ticks.is_some() {
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

/// A PEER that speaks first (a source's or a ping's socket, a proxy's sending side) sends
/// to the routing id its one connect gave (`zmq_connect_peer`): it connects to exactly one
/// peer and binds nothing.
fn check_peer(origin: &str, n: &Node, ts: &[SocketType]) -> Result<()> {
    let info = n.role.info();
    let first = match info.stream {
        StreamPart::Sends => Some(0),
        StreamPart::Forwards { to, .. } => Some(to),
        _ => (info.latency == Latency::RoundTrip).then_some(0),
    };
    let Some(si) = first.filter(|&i| ts.get(i) == Some(&SocketType::Peer)) else {
        return Ok(());
    };
    let s = &n.all_sockets()[si];
    if s.connect.len() == 1 && s.bind.is_empty() {
        return Ok(());
    }
    let (field, value) = if s.bind.is_empty() {
        ("connect", format!("{:?}", s.connect))
    } else {
        ("bind", format!("{:?}", s.bind))
    };
    Err(err(
        origin,
        &n.name,
        &field_of(n, si, field),
        &value,
        format!(
            "a PEER {} sends to the routing id its connect gave (zmq_connect_peer): give it exactly one `connect` and no `bind`, and let the receiving PEER bind",
            info.name
        ),
    ))
}
