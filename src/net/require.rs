//! What the chosen libzmq must carry for a socket: its transport (`zmq_has`) and, for the
//! draft API's types, the draft API; each refused with the library to use. And the
//! endpoint a socket bound, with its scheme (libzmq's udp leaves it out).

use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::zmq;

/// The transport of `endpoint` is one the libzmq measured here carries (`zmq_has`), or an
/// error that names the library and the one to use.
pub fn require_transport(endpoint: &Endpoint) -> Result<()> {
    let t = endpoint.transport();
    let Some(cap) = t.capability() else {
        return Ok(());
    };
    let lib = zmq::library::info();
    if lib.has(cap) {
        return Ok(());
    }
    let fix = match t {
        crate::endpoint::Transport::Udp => "udp:// is RADIO/DISH's, in libzmq's draft API: the bundled libzmq has it (leave out --libzmq)".to_string(),
        crate::endpoint::Transport::Wss => "neither the bundled libzmq nor Debian's carries wss:// (it needs libzmq built with TLS); give one that does with --libzmq PATH".to_string(),
        _ if lib.source == "bundled" => format!("the bundled libzmq is built without it; use --libzmq system (Debian's libzmq5 has {t}://; `apt-get install libzmq5`) or --libzmq PATH"),
        _ => format!("give a libzmq built with {cap} with --libzmq PATH"),
    };
    Err(Error::Endpoint {
        endpoint: endpoint.to_string(),
        reason: format!(
            "the libzmq measured here ({} {}, zmq_has: {}) has no {t}://; {fix}",
            lib.source,
            lib.version,
            lib.capabilities.join(", ")
        ),
    })
}

/// A socket of type `kind` on `endpoint`'s transport as libzmq would refuse it (udp is
/// RADIO and DISH's, multicast PUB and SUB's): said before libzmq's "protocol is not
/// compatible with the socket type", naming the transports that type takes.
pub fn require_type_on(kind: zmq::SocketType, endpoint: &Endpoint) -> Result<()> {
    use crate::endpoint::Transport;
    let t = endpoint.transport();
    let ok = match t {
        Transport::Udp => kind == zmq::RADIO || kind == zmq::DISH,
        Transport::Pgm | Transport::Epgm | Transport::Norm => {
            [zmq::PUB, zmq::SUB, zmq::XPUB, zmq::XSUB].contains(&kind)
        }
        _ => true,
    };
    if ok {
        return Ok(());
    }
    let who = match t {
        Transport::Udp => "udp:// carries only RADIO and DISH (the draft API)",
        _ => "multicast (pgm, epgm, norm) carries only PUB, SUB, XPUB and XSUB",
    };
    Err(Error::Endpoint {
        endpoint: endpoint.to_string(),
        reason: format!(
            "libzmq refuses a {} socket on {t}://: {who}; use tcp://, ipc:// or inproc://",
            kind.name()
        ),
    })
}

/// A socket type of the draft API (RADIO, DISH, CLIENT, SERVER, SCATTER, GATHER, CHANNEL,
/// PEER) needs a libzmq built with it (PEER also `zmq_connect_peer`, from 4.3.3): an error
/// that names the library and the one to use otherwise.
pub fn require_draft(kind: zmq::SocketType) -> Result<()> {
    let lib = zmq::library::info();
    let draft = lib.has("draft") && zmq::library::draft_api().is_some();
    let has = draft && (kind != zmq::PEER || zmq::library::peer_api().is_some());
    if !kind.is_draft() || has {
        return Ok(());
    }
    let what = if draft {
        "PEER needs the draft API's zmq_connect_peer (libzmq 4.3.3 and later), and the libzmq measured here"
    } else {
        "RADIO, DISH, CLIENT, SERVER, SCATTER, GATHER, CHANNEL and PEER are libzmq's draft API, and the libzmq measured here"
    };
    Err(Error::invalid(
        "socket type",
        kind.name(),
        format!(
            "{what} ({} {}, {}) is built without it; the bundled libzmq has it (leave out --libzmq)",
            lib.source, lib.version, lib.path
        ),
    ))
}

/// The endpoint a socket bound last (a `*` port as the system chose it), with its scheme:
/// libzmq's udp gives the address alone. `raw` when it says nothing.
pub fn last_endpoint(s: &zmq::Socket, raw: &str) -> String {
    let Some(last) = s.get_last_endpoint().ok().and_then(|r| r.ok()) else {
        return raw.to_string();
    };
    if last.is_empty() {
        return raw.to_string();
    }
    match (last.contains("://"), raw.split_once("://")) {
        (false, Some((scheme, _))) => format!("{scheme}://{last}"),
        _ => last,
    }
}

/// A udp connect to an IPv4 address (a multicast group, or a host) that names no interface
/// has a route from this host, or an error that names the fix: without one the kernel drops
/// every datagram before it leaves (ENETUNREACH), and libzmq's udp engine says nothing, so
/// the receivers would see nothing at all. A UDP socket's connect is the route lookup.
pub fn require_route(endpoint: &Endpoint) -> Result<()> {
    // An interface named (`IFACE;GROUP:PORT`) chooses the way out itself.
    let Some((ip, port)) = endpoint
        .udp_target()
        .filter(|_| !endpoint.as_str().contains(';'))
    else {
        return Ok(());
    };
    let Ok(probe) = std::net::UdpSocket::bind(("0.0.0.0", 0)) else {
        return Ok(());
    };
    match probe.connect((ip, port)) {
        Err(e) if e.raw_os_error() == Some(libc::ENETUNREACH) => {
            let fix = if ip.is_multicast() {
                "add a route for the group on the interface to send on (`ip route add 224.0.0.0/4 dev eth0`)"
            } else {
                "add a route to it, or connect to an address this host reaches"
            };
            Err(Error::Endpoint {
                endpoint: endpoint.to_string(),
                reason: format!(
                    "no route to {ip} from this host ({e}): the kernel would drop every datagram before it left, and libzmq's udp says nothing of it; fix: {fix}"
                ),
            })
        }
        _ => Ok(()),
    }
}
