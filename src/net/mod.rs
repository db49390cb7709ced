//! The one socket opener and what every measuring loop shares: options, fresh endpoints,
//! the errors of a failed bind or wait, the size check, and the watch for a peer's
//! disconnection. Roles, the compatible commands and the experiments open sockets here.

pub mod limits;
mod options;

pub use options::{apply as apply_options, auto_endpoint, set_xpub_verbose};

use crate::endpoint::{Endpoint, Side};
use crate::error::{zmq_err, Error, Result};
use std::time::Duration;

/// The address to connect to for an endpoint that was bound: a wildcard interface
/// (`0.0.0.0`, `[::]`) becomes the loopback address.
pub fn connect_endpoint(bound: &str) -> String {
    if let Some(rest) = bound.strip_prefix("tcp://0.0.0.0:") {
        return format!("tcp://127.0.0.1:{rest}");
    }
    if let Some(rest) = bound.strip_prefix("tcp://[::]:") {
        return format!("tcp://[::1]:{rest}");
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
    let mut s = ctx.socket(kind).map_err(zmq_err("zmq_socket"))?;
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    s.set_rcvtimeo(ms)
        .map_err(zmq_err("setting ZMQ_RCVTIMEO"))?;
    s.set_sndtimeo(ms)
        .map_err(zmq_err("setting ZMQ_SNDTIMEO"))?;
    // Pending messages get at most the timeout to leave when the socket closes: no hang at exit.
    s.set_linger(ms).map_err(zmq_err("setting ZMQ_LINGER"))?;
    if endpoint.is_ipv6() {
        s.set_ipv6(true).map_err(zmq_err("setting ZMQ_IPV6"))?;
    }
    let raw = endpoint.as_str();
    match side {
        Side::Bind => {
            refuse_live_ipc(endpoint)?;
            configure(&mut s)?;
            s.bind(raw).map_err(|e| bind_error(endpoint, e))?
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
            s.connect(raw).map_err(|e| connect_error(endpoint, e))?
        }
    }
    let actual = match side {
        Side::Bind => s
            .get_last_endpoint()
            .ok()
            .and_then(|r| r.ok())
            .unwrap_or_else(|| raw.to_string()),
        Side::Connect => raw.to_string(),
    };
    Ok((s, actual))
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
        Ok(_) => Err(Error::AddressInUse {
            endpoint: endpoint.to_string(),
        }),
        Err(_) => Ok(()),
    }
}

/// The error for a failed bind, naming the cause and the fix.
pub fn bind_error(endpoint: &Endpoint, e: zmq::Error) -> Error {
    let reason = match e {
        zmq::Error::EADDRINUSE => {
            return Error::AddressInUse {
                endpoint: endpoint.to_string(),
            }
        }
        zmq::Error::EADDRNOTAVAIL => "that address is not on this machine; bind to 127.0.0.1, * or one of this host's addresses".to_string(),
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
pub fn check_size(msg: &crate::msg::RawMsg, expected: usize, index: u64) -> Result<()> {
    if msg.len() != expected {
        return Err(Error::WrongSize {
            expected,
            got: msg.len(),
            index,
        });
    }
    Ok(())
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
        if done == 0 {
            Error::PeerAbsent {
                endpoint: self.endpoint.to_string(),
                peer: self.peer.to_string(),
                timeout: self.timeout,
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

/// Watches a measured socket for its peer's disconnection.
///
/// libzmq's linger does not cover bytes already taken from the queue into the connection's
/// buffer (libzmq issues 1922 and 4660): a side that closes right after its last send can
/// lose the tail when the receiver is slower. So the last side to send keeps its socket open
/// until the peer, done receiving, disconnects (libzmq's local_lat sleeps 1 s instead).
pub struct PeerWatch {
    monitor: zmq::Socket,
}

static MONITOR_N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl PeerWatch {
    /// Starts watching `sock`; `None` for inproc, which has no connection buffer to lose.
    pub fn new(
        ctx: &zmq::Context,
        sock: &zmq::Socket,
        endpoint: &Endpoint,
    ) -> Result<Option<Self>> {
        if endpoint.transport() == crate::endpoint::Transport::Inproc {
            return Ok(None);
        }
        let n = MONITOR_N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let ep = format!("inproc://zmqperf-monitor-{}-{n}", std::process::id());
        sock.monitor(&ep, zmq::SocketEvent::DISCONNECTED as i32)
            .map_err(zmq_err("zmq_socket_monitor"))?;
        let monitor = ctx.socket(zmq::PAIR).map_err(zmq_err("zmq_socket"))?;
        monitor
            .set_linger(0)
            .map_err(zmq_err("setting ZMQ_LINGER"))?;
        monitor
            .connect(&ep)
            .map_err(zmq_err("connecting the monitor"))?;
        Ok(Some(PeerWatch { monitor }))
    }

    /// Waits up to `timeout` for the peer to disconnect; false if it did not.
    pub fn wait_gone(&self, timeout: Duration) -> bool {
        self.wait_gone_n(1, timeout)
    }

    /// Waits up to `timeout` for `n` peers to disconnect; false if fewer did.
    pub fn wait_gone_n(&self, n: u32, timeout: Duration) -> bool {
        let mut left_n = n;
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            if ms == 0 || self.monitor.set_rcvtimeo(ms).is_err() {
                return false;
            }
            // Each event is two frames: event number (u16) and value (u32), then the address.
            let Ok(frames) = self.monitor.recv_multipart(0) else {
                return false;
            };
            let event = frames
                .first()
                .filter(|f| f.len() >= 2)
                .map(|f| u16::from_le_bytes([f[0], f[1]]));
            if event == Some(zmq::SocketEvent::DISCONNECTED as u16) {
                left_n = left_n.saturating_sub(1);
                if left_n == 0 {
                    return true;
                }
            }
        }
    }
}
