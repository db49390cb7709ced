//! What libzmq refuses of a socket type on a transport, said before any socket opens: udp
//! is RADIO and DISH's alone (the DISH binds, the RADIO connects), multicast (pgm, epgm,
//! norm) PUB and SUB's; the draft API's thread-safe types carry one frame per message;
//! a group belongs to RADIO and DISH, the multicast options to the types that multicast.
//! Literal endpoints are checked with the topology; `auto` binds and links by name once a
//! case gives them a transport ([`check_case`]).

use super::{err, field_of, is_address, Graph};
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::Result;
use crate::topology::{Node, SocketType, Topology, DEFAULT_GROUP};

/// The largest datagram libzmq's udp engine writes (its MAX_UDP_MSG): the group's length
/// (one byte), the group, then the message.
pub const UDP_MAX: usize = 8192;

/// The per-socket rules that need no transport: the draft types' single frames, the group,
/// the multicast options, and each literal endpoint's transport.
pub(super) fn check_types(origin: &str, t: &Topology, types: &[Vec<SocketType>]) -> Result<()> {
    for (i, n) in t.nodes.iter().enumerate() {
        for (si, s) in n.all_sockets().iter().enumerate() {
            let ty = types[i][si];
            let o = &s.options;
            if ty.is_draft() {
                for (field, given) in [("message", n.message.is_some()), ("log", n.log.is_some())] {
                    if given {
                        return Err(err(origin, &n.name, field, "given", format!(
                            "a {} socket carries one frame per message (the draft API's thread-safe types take no multi-part messages); remove the field, or use a socket type that takes frames",
                            ty.name()
                        )));
                    }
                }
            }
            if o.group.is_some() && !matches!(ty, SocketType::Radio | SocketType::Dish) {
                return Err(err(origin, &n.name, &field_of(n, si, "group"), o.group.as_deref().unwrap_or(""), format!(
                    "only RADIO and DISH have groups; a {} socket would not use it: remove the field",
                    ty.name()
                )));
            }
            let multicast = [
                ("multicast_rate", o.multicast_rate),
                ("recovery_ivl", o.recovery_ivl),
                ("multicast_hops", o.multicast_hops),
            ];
            for (f, v) in multicast {
                // libzmq's udp engine sets a RADIO's (and DISH's) multicast TTL from
                // ZMQ_MULTICAST_HOPS too; the rate and recovery interval are OpenPGM's.
                let udp_too = f == "multicast_hops" && ty.takes_transport(Transport::Udp);
                if v.is_some() && !ty.takes_transport(Transport::Epgm) && !udp_too {
                    let who = if f == "multicast_hops" {
                        "PUB, SUB, XPUB and XSUB over pgm, epgm or norm, and RADIO and DISH over udp, take it"
                    } else {
                        "only PUB, SUB, XPUB and XSUB multicast (over pgm, epgm or norm)"
                    };
                    return Err(err(origin, &n.name, &field_of(n, si, f), &v.unwrap_or(0).to_string(), format!(
                        "a multicast option, and {who}; a {} socket would not use it: remove the field",
                        ty.name()
                    )));
                }
            }
            for (side, list) in [(Side::Bind, &s.bind), (Side::Connect, &s.connect)] {
                for (k, e) in list.iter().enumerate() {
                    if !is_address(e) {
                        continue;
                    }
                    let Ok(ep) = Endpoint::parse(e, side) else {
                        continue;
                    };
                    let what = if side == Side::Bind {
                        "bind"
                    } else {
                        "connect"
                    };
                    let field = field_of(n, si, &format!("{what}[{k}]"));
                    check_one(origin, n, &field, e, ty, ep.transport(), side)?;
                }
            }
        }
    }
    Ok(())
}

/// A socket of type `ty` on transport `tr`, bound or connected (`side`): what libzmq
/// would refuse with ENOCOMPATPROTO, as an error naming the node and the field.
fn check_one(
    origin: &str,
    n: &Node,
    field: &str,
    value: &str,
    ty: SocketType,
    tr: Transport,
    side: Side,
) -> Result<()> {
    if !ty.takes_transport(tr) {
        let who = match tr {
            Transport::Udp => "udp:// carries only RADIO and DISH (the draft API)",
            _ => "multicast (pgm, epgm, norm) carries only PUB, SUB, XPUB and XSUB",
        };
        return Err(err(
            origin,
            &n.name,
            field,
            value,
            format!(
            "libzmq refuses a {} socket on {tr}://: {who}; use tcp://, ipc:// or inproc:// for it",
            ty.name()
        ),
        ));
    }
    if tr == Transport::Udp {
        let wrong = match (ty, side) {
            (SocketType::Radio, Side::Bind) => Some("a RADIO sends datagrams: over udp it connects (to the DISH's address or a multicast group), and the DISH binds"),
            (SocketType::Dish, Side::Connect) => Some("a DISH takes datagrams: over udp it binds (an address of this host or a multicast group), and the RADIO connects to it"),
            _ => None,
        };
        if let Some(why) = wrong {
            return Err(err(origin, &n.name, field, value, why));
        }
    }
    Ok(())
}

/// The rules of a case on `transport` (the transport of `auto` binds, so of links by name
/// to them) with messages of `size` bytes: the types on it, and a RADIO's datagram within
/// udp's limit.
pub fn check_case(origin: &str, g: &Graph, transport: Transport, size: usize) -> Result<()> {
    let t = &g.topology;
    for l in &g.links {
        let (bind, conn) = (&t.nodes[l.bind.0], &t.nodes[l.conn.0]);
        let entry = &conn.all_sockets()[l.conn.1].connect[l.entry];
        if is_address(entry) {
            continue;
        }
        let bound = &bind.all_sockets()[l.bind.1].bind;
        if !bound.iter().any(|b| b == "auto") {
            continue;
        }
        let field = field_of(bind, l.bind.1, "bind");
        check_one(
            origin,
            bind,
            &field,
            "auto",
            g.types[l.bind.0][l.bind.1],
            transport,
            Side::Bind,
        )
        .map_err(|e| on_case(e, transport))?;
        let field = field_of(conn, l.conn.1, &format!("connect[{}]", l.entry));
        check_one(
            origin,
            conn,
            &field,
            entry,
            g.types[l.conn.0][l.conn.1],
            transport,
            Side::Connect,
        )
        .map_err(|e| on_case(e, transport))?;
    }
    for (i, n) in t.nodes.iter().enumerate() {
        for (si, s) in n.all_sockets().iter().enumerate() {
            if g.types[i][si] != SocketType::Radio {
                continue;
            }
            let on_udp = s.connect.iter().any(|c| {
                c.starts_with("udp://") || (!is_address(c) && transport == Transport::Udp)
            });
            let group = s.options.group.as_deref().unwrap_or(DEFAULT_GROUP);
            let own = crate::topology::value_u64(&n.size, "size", |w, s| {
                crate::parse::parse_size(w, s).map(|x| x as u64)
            })
            .ok()
            .flatten()
            .map_or(size, |v| v as usize);
            if on_udp && own + group.len() + 1 > UDP_MAX {
                return Err(err(origin, &n.name, "size", &own.to_string(), format!(
                    "a RADIO's message goes over udp in one datagram of at most {UDP_MAX} bytes with its group: at most {} bytes with the group '{group}'",
                    UDP_MAX - group.len() - 1
                )));
            }
        }
    }
    Ok(())
}

/// An error of a case's transport says which transport made it.
fn on_case(e: crate::error::Error, transport: Transport) -> crate::error::Error {
    match e {
        crate::error::Error::InvalidValue {
            what,
            value,
            reason,
        } => crate::error::Error::InvalidValue {
            what,
            value,
            reason: format!("{reason} (the case's transport, {transport}, binds `auto` there)"),
        },
        other => other,
    }
}
