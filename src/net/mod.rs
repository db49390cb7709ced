//! The one socket opener and what every measuring loop shares: options, fresh endpoints,
//! the errors of a failed bind or wait, the size check, and the watch for a peer's
//! disconnection. Roles, the compatible commands and the experiments open sockets here.

use crate::zmq;

pub mod iface;
pub mod kerberos;
pub mod kernel;
pub mod limits;
mod options;
pub mod probe;
mod require;
pub mod security;
mod watch;

pub use options::{
    apply as apply_options, auto_endpoint, auto_endpoint_for, set_int_option, set_xpub_verbose,
};
pub use require::{
    last_endpoint, require_draft, require_route, require_transport, require_type_on,
};
pub use watch::{PeerWatch, Sightings};

use crate::endpoint::{Endpoint, Side};
use crate::error::{zmq_err, Error, Result};
use std::time::Duration;

/// The address to connect to for an endpoint that was bound: a wildcard interface
/// (`0.0.0.0`, `[::]`) becomes the loopback address.
pub fn connect_endpoint(bound: &str) -> String {
    connect_endpoint_on(bound, None)
}

/// [`connect_endpoint`] for an endpoint bound on a host reached at `addr` (another host of
/// a run): a wildcard interface becomes that address; None: the loopback address.
pub fn connect_endpoint_on(bound: &str, addr: Option<&str>) -> String {
    let host = |loopback: &str| match addr {
        Some(a) if a.contains(':') && !a.starts_with('[') => format!("[{a}]"),
        Some(a) => a.to_string(),
        None => loopback.to_string(),
    };
    if let Some(rest) = bound.strip_prefix("tcp://0.0.0.0:") {
        return format!("tcp://{}:{rest}", host("127.0.0.1"));
    }
    if let Some(rest) = bound.strip_prefix("tcp://[::]:") {
        return format!("tcp://{}:{rest}", host("[::1]"));
    }
    bound.to_string()
}

/// Opens a socket with the run's timeouts and binds or connects it.
///
/// Returns the endpoint actually bound (the port chosen for `tcp://host:*`).
pub fn open_socket(
    ctx: &zmq::Context,
    kind: zmq::SocketType,
    endpoint: &Endpoint,
    side: Side,
    timeout: Duration,
    configure: impl FnOnce(&mut zmq::Socket) -> Result<()>,
) -> Result<(zmq::Socket, String)> {
    require_transport(endpoint)?;
    require_draft(kind)?;
    require_type_on(kind, endpoint)?;
    let mut s = ctx.socket(kind).map_err(zmq_err("zmq_socket"))?;
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    s.set_rcvtimeo(ms)
        .map_err(zmq_err("setting ZMQ_RCVTIMEO"))?;
    s.set_sndtimeo(ms)
        .map_err(zmq_err("setting ZMQ_SNDTIMEO"))?;
    // Pending messages get at most the timeout to leave when the socket closes: no hang at exit.
    s.set_linger(ms).map_err(zmq_err("setting ZMQ_LINGER"))?;
    enable_ipv6(&s, endpoint.as_str())?;
    let raw = endpoint.as_str();
    match side {
        Side::Bind => {
            refuse_live_ipc(endpoint)?;
            configure(&mut s)?;
            s.bind(raw).map_err(|e| bind_error(endpoint, e))?;
            note_bound_ipc(raw);
        }
        Side::Connect => {
            // Send-only sockets queue only on completed connections, so a missing peer shows
            // as a send timeout rather than a full queue. Not on sockets that receive: with
            // ZMQ_IMMEDIATE libzmq discards unread messages when the peer disconnects, which
            // loses the last reply of a latency run whose echo side exits at once.
            if kind == zmq::PUSH || kind == zmq::PUB || kind == zmq::XPUB {
                s.set_immediate(true)
                    .map_err(zmq_err("setting ZMQ_IMMEDIATE"))?;
            }
            configure(&mut s)?;
            resolve_host(endpoint)?;
            require_route(endpoint)?;
            connect(&mut s, kind, raw).map_err(|e| connect_error(endpoint, e))?
        }
    }
    let actual = match side {
        Side::Bind => last_endpoint(&s, raw),
        Side::Connect => raw.to_string(),
    };
    Ok((s, actual))
}

/// Connects `s`, a socket of type `kind`: a PEER by `zmq_connect_peer`, whose routing id
/// then addresses what it sends.
pub fn connect(s: &mut zmq::Socket, kind: zmq::SocketType, raw: &str) -> zmq::Result<()> {
    if kind == zmq::PEER {
        return s.connect_peer(raw).map(|_| ());
    }
    s.connect(raw)
}

/// Sets ZMQ_IPV6 on a socket that will bind or connect to `endpoint` when its address is
/// an IPv6 one: without it libzmq refuses the bind and retries the connect forever in
/// silence. Every socket opened outside [`open_socket`] calls this for each endpoint.
pub fn enable_ipv6(s: &zmq::Socket, endpoint: &str) -> Result<()> {
    let v6 = [Side::Connect, Side::Bind]
        .into_iter()
        .any(|side| Endpoint::parse(endpoint, side).is_ok_and(|e| e.is_ipv6()));
    if v6 {
        s.set_ipv6(true).map_err(zmq_err("setting ZMQ_IPV6"))?;
    }
    Ok(())
}

/// What a receiver takes beyond the largest frame it expects: room for a routing id, a
/// log line's level frame, and a security mechanism's framing (CURVE adds a few dozen bytes
/// to every frame).
pub const FRAME_MARGIN: usize = 64 * 1024;

/// Frames below this are always taken (routing ids, subscriptions, levels, short replies).
const SMALL_FRAME: usize = 256;

/// Limits the frames a receiving socket takes to `largest` (the biggest frame the run's
/// senders write) plus [`FRAME_MARGIN`] (ZMQ_MAXMSGSIZE): a stray peer that declares a
/// larger frame is disconnected by libzmq before it can make this process hold the memory.
/// Call before the bind or connect (libzmq copies options into each new connection).
pub fn limit_message_size(s: &zmq::Socket, largest: usize) -> Result<()> {
    let limit = largest.max(SMALL_FRAME).saturating_add(FRAME_MARGIN);
    s.set_maxmsgsize(i64::try_from(limit).unwrap_or(i64::MAX))
        .map_err(zmq_err("setting ZMQ_MAXMSGSIZE"))
}

/// Socket files of the ipc paths this process bound: (path, device, inode).
static BOUND_IPC: std::sync::Mutex<Vec<(std::path::PathBuf, u64, u64)>> =
    std::sync::Mutex::new(Vec::new());

/// Remembers the socket file of an ipc path just bound (not the abstract namespace, not a
/// `*` that libzmq names and removes itself), so the process removes it at exit: libzmq
/// leaves it behind.
pub fn note_bound_ipc(endpoint: &str) {
    use std::os::unix::fs::MetadataExt;
    let Some(path) = endpoint.strip_prefix("ipc://") else {
        return;
    };
    if path.starts_with('@') || path == "*" {
        return;
    }
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if let Ok(mut v) = BOUND_IPC.lock() {
            v.push((path.into(), m.dev(), m.ino()));
        }
    }
}

/// Removes the socket files noted by [`note_bound_ipc`] that are still the ones this
/// process created (same device and inode: a path another process has bound since is left
/// alone). Called once as the process ends.
pub fn remove_bound_ipc_files() {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(mut v) = BOUND_IPC.lock() else {
        return;
    };
    for (path, dev, ino) in v.drain(..) {
        let ours = std::fs::symlink_metadata(&path)
            .is_ok_and(|m| m.file_type().is_socket() && m.dev() == dev && m.ino() == ino);
        if ours {
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// Refuses to bind an ipc path that a running process is listening on: libzmq would remove
/// the socket file and take the path over, and the first binder would silently lose its
/// peers. A file nobody listens on (left by a process that died) is fine to replace.
fn refuse_live_ipc(endpoint: &Endpoint) -> Result<()> {
    if endpoint.transport() != crate::transport::Transport::Ipc || endpoint.is_wildcard() {
        return Ok(());
    }
    let Some(path) = endpoint.as_str().strip_prefix("ipc://") else {
        return Ok(());
    };
    if path.starts_with('@') || !std::path::Path::new(path).exists() {
        // The abstract namespace refuses a second binder by itself.
        return Ok(());
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Err(address_in_use(endpoint.as_str())),
        Err(_) => Ok(()),
    }
}

/// The error for an address another socket holds, naming the holder when it can be told:
/// a TCP connection to itself (a socket that connected to a port in the ephemeral range
/// while nothing listened on it can be given that very port as its own, and then holds
/// it), or else another process.
pub fn address_in_use(endpoint: &str) -> Error {
    let port = endpoint
        .strip_prefix("tcp://")
        .and_then(|r| r.rsplit_once(':'))
        .and_then(|(_, p)| p.parse::<u16>().ok());
    let holder = match port.filter(|&p| self_connected(p)) {
        Some(p) => format!(
            "A TCP connection to itself holds it: a socket connected to port {p} while nothing listened there, and as {p} is in the ephemeral port range ({}) the kernel gave it that port as its own (a self-connect). Start the binding side first, or use a port below the ephemeral range",
            ephemeral_range()
        ),
        None => "Another process (an earlier local_lat or local_thr?) holds it; stop it, pick another port, or bind to tcp://127.0.0.1:* for a free one".to_string(),
    };
    Error::AddressInUse {
        endpoint: endpoint.to_string(),
        holder,
    }
}

/// Whether a TCP connection of this host has `port` at both ends on one address (a
/// self-connect), from /proc/net/tcp and tcp6.
pub fn self_connected(port: u16) -> bool {
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f)
            .map(|t| t.lines().skip(1).any(|l| is_self_connect(l, port)))
            .unwrap_or(false)
    })
}

/// One line of /proc/net/tcp: `sl local_address rem_address st ...`, addresses as
/// HEX:PORT.
fn is_self_connect(line: &str, port: u16) -> bool {
    let mut f = line.split_whitespace().skip(1);
    let (Some(local), Some(remote), Some(state)) = (f.next(), f.next(), f.next()) else {
        return false;
    };
    let want = format!("{port:04X}");
    // 01: established (a closed one in TIME_WAIT holds nothing a bind needs).
    state == "01" && local == remote && local.rsplit_once(':').is_some_and(|(_, p)| p == want)
}

/// The kernel's ephemeral port range, `32768-60999`.
fn ephemeral_range() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join("-"))
        .unwrap_or_else(|_| "see /proc/sys/net/ipv4/ip_local_port_range".into())
}

/// The error for a failed bind, naming the cause and the fix.
pub fn bind_error(endpoint: &Endpoint, e: zmq::Error) -> Error {
    let reason = match e {
        zmq::Error::EADDRINUSE => return address_in_use(endpoint.as_str()),
        zmq::Error::EADDRNOTAVAIL => "that address is not on this machine; bind to 127.0.0.1, * or one of this host's addresses".to_string(),
        zmq::Error::ENODEV if endpoint.transport().is_multicast() => "the interface named before ';' is not on this host, or has no multicast (`ip link set DEV multicast on`, and a route for the group: `ip route add 239.0.0.0/8 dev DEV`); name another with ZMQPERF_MULTICAST_IFACE or in the endpoint".to_string(),
        zmq::Error::ENODEV => "neither an address nor a network interface of this host (libzmq binds to an address such as 127.0.0.1 or *, or an interface name such as lo, not a host name)".to_string(),
        zmq::Error::EACCES => "permission denied; use a port above 1023 or a path you may write".to_string(),
        zmq::Error::ENOENT => "the directory of the ipc path does not exist; create it or pick another path".to_string(),
        other => format!("ZeroMQ refused it ({other}); check the address"),
    };
    Error::Endpoint {
        endpoint: endpoint.to_string(),
        reason,
    }
}

/// A host name that does not resolve is said at once (libzmq would retry it silently and
/// the run would end as "no peer").
fn resolve_host(endpoint: &Endpoint) -> Result<()> {
    use std::net::ToSocketAddrs;
    let Some((host, port)) = endpoint.tcp_host_port() else {
        return Ok(());
    };
    if host.parse::<std::net::IpAddr>().is_ok() {
        return Ok(());
    }
    let port: u16 = port.parse().unwrap_or(0);
    match (host, port).to_socket_addrs() {
        Ok(addrs) if addrs.len() > 0 => Ok(()),
        Ok(_) => Err(Error::Endpoint {
            endpoint: endpoint.to_string(),
            reason: format!(
                "the host name '{host}' has no address; check it or write an IP address"
            ),
        }),
        Err(e) => Err(Error::Endpoint {
            endpoint: endpoint.to_string(),
            reason: format!(
                "cannot resolve the host name '{host}' ({e}); check it or write an IP address"
            ),
        }),
    }
}

fn connect_error(endpoint: &Endpoint, e: zmq::Error) -> Error {
    Error::Endpoint {
        endpoint: endpoint.to_string(),
        reason: format!("cannot connect ({e}); check the host name and port"),
    }
}

/// libzmq's check on every message: it must have the run's size.
#[inline]
pub fn check_size(msg: &mut crate::msg::RawMsg, expected: usize, index: u64) -> Result<()> {
    if msg.len() != expected {
        return Err(wrong_size(msg, expected, index));
    }
    Ok(())
}

/// The error for a message of the wrong size, with a hint from its bytes: text is not what
/// a ZeroMQ sender of this run writes (libzmq takes the bytes of a peer speaking the old
/// ZMTP 1.0, or of a stray client that happens to look like it, as messages).
#[cold]
fn wrong_size(msg: &mut crate::msg::RawMsg, expected: usize, index: u64) -> Error {
    let bytes = msg.prefix(64);
    let text = !bytes.is_empty()
        && bytes
            .iter()
            .all(|b| b.is_ascii_graphic() || matches!(b, b' ' | b'\r' | b'\n' | b'\t'));
    let hint = if text {
        format!(
            "The message reads as text (\"{}\"): something other than the run's sender is connected (a client of another protocol, or an old ZMTP 1.0 peer); check what connects to this endpoint",
            String::from_utf8_lossy(bytes).escape_debug()
        )
    } else {
        "Give both sides the same <message-size>".to_string()
    };
    Error::WrongSize {
        expected,
        got: msg.len(),
        index,
        hint,
    }
}

/// What a command waits for, to turn a timed-out wait into an error a user can act on.
pub struct Waiting<'a> {
    /// The endpoint waited on.
    pub endpoint: &'a str,
    /// The command that should be on the other side.
    pub peer: &'a str,
    /// The per-message timeout.
    pub timeout: Duration,
    /// How many units the run should complete.
    pub expected: u64,
    /// What is counted ("round trips", "messages").
    pub unit: &'a str,
    /// The watch on the socket's connections, to say what was seen when nothing arrived.
    pub watch: Option<&'a PeerWatch>,
}

impl Waiting<'_> {
    /// The error for a failed wait after `done` units; `detail` is appended to a mid-run stop.
    pub fn error(&self, e: zmq::Error, done: u64, detail: String) -> Error {
        if e != zmq::Error::EAGAIN {
            return Error::Zmq {
                op: "waiting for the peer".into(),
                source: e,
            };
        }
        let seen = self.watch.map(|w| w.sightings());
        if let (0, Some(seen)) = (done, seen) {
            if let Some(what) = seen.explain() {
                if seen.refused() {
                    return Error::Protocol(format!(
                        "nothing arrived on {} within {}: {what}",
                        self.endpoint,
                        crate::error::fmt_duration(self.timeout)
                    ));
                }
                return Error::PeerSilent {
                    endpoint: self.endpoint.to_string(),
                    seen: what,
                    timeout: self.timeout,
                };
            }
        }
        let one_way = self
            .endpoint
            .split_once("://")
            .and_then(|(scheme, _)| crate::transport::Transport::parse(scheme))
            .is_some_and(crate::transport::Transport::one_way);
        if done == 0 && one_way {
            // No connection to watch: what does not arrive may not reach this host at all.
            Error::PeerSilent {
                endpoint: self.endpoint.to_string(),
                seen: format!(
                    "no datagram of the group reached this socket. Start the other side ({}) or raise --timeout; from another host, a router between drops multicast at libzmq's default of one hop (give the sender multicast_hops = 8, and the router a multicast route), and each host needs a route to the group (`ip route get GROUP`)",
                    self.peer
                ),
                timeout: self.timeout,
            }
        } else if done == 0 {
            Error::PeerAbsent {
                endpoint: self.endpoint.to_string(),
                peer: self.peer.to_string(),
                timeout: self.timeout,
                raise: "--timeout".into(),
            }
        } else {
            Error::PeerStopped {
                endpoint: self.endpoint.to_string(),
                done,
                expected: self.expected,
                unit: self.unit.to_string(),
                timeout: self.timeout,
                detail,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_with_one_address_and_port_at_both_ends_is_a_self_connect() {
        let line = "  3: 0100007F:9C40 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 1 1";
        assert!(is_self_connect(line, 0x9C40));
        assert!(!is_self_connect(line, 0x9C41));
        let other = "  3: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 1 1";
        assert!(!is_self_connect(other, 0x9C40));
    }

    /// A socket bound to a port and connected to that same port on loopback meets itself
    /// (TCP simultaneous open): the port is then held, and a bind there is told why.
    #[test]
    fn a_bind_refused_by_a_self_connect_says_so() {
        // A free port: bound, noted, released.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // SAFETY: a socket of our own, addresses built here, closed at the end.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
        assert!(fd >= 0);
        let addr = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: port.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from_be_bytes([127, 0, 0, 1]).to_be(),
            },
            sin_zero: [0; 8],
        };
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let p = &addr as *const libc::sockaddr_in as *const libc::sockaddr;
        // SAFETY: as above.
        let connected = unsafe { libc::bind(fd, p, len) == 0 && libc::connect(fd, p, len) == 0 };
        assert!(connected, "{}", std::io::Error::last_os_error());
        assert!(self_connected(port));
        let ctx = zmq::Context::new();
        let s = ctx.socket(zmq::PUB).unwrap();
        let ep = format!("tcp://127.0.0.1:{port}");
        let e = s.bind(&ep).unwrap_err();
        assert_eq!(e, zmq::Error::EADDRINUSE);
        let told = bind_error(
            &Endpoint::parse(&ep, crate::endpoint::Side::Bind).unwrap(),
            e,
        );
        assert_eq!(told.exit_code(), 5);
        assert!(
            told.to_string()
                .contains("A TCP connection to itself holds it"),
            "{told}"
        );
        // SAFETY: our descriptor.
        unsafe { libc::close(fd) };
        assert!(!self_connected(port));
    }
}
