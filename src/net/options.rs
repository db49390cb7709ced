//! Socket options from a topology, applied in one place, and fresh endpoints for `auto`
//! binds.

use crate::error::{zmq_err, Result};
use crate::topology::{SocketOptions, SocketType};
use crate::transport::Transport;
use crate::zmq;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Applies the options a topology gave a socket (before it binds or connects); `server`:
/// the socket binds, so it is the server of a security handshake.
pub fn apply(s: &mut zmq::Socket, kind: SocketType, o: &SocketOptions, server: bool) -> Result<()> {
    crate::net::security::apply(s, o, server)?;
    let int = |s: &mut zmq::Socket, opt: i32, v: i32| set_int_option(s, opt, v);
    if let Some(v) = o.sndhwm {
        s.set_sndhwm(v).map_err(zmq_err("setting ZMQ_SNDHWM"))?;
    }
    if let Some(v) = o.rcvhwm {
        s.set_rcvhwm(v).map_err(zmq_err("setting ZMQ_RCVHWM"))?;
    }
    if let Some(v) = o.linger {
        s.set_linger(v).map_err(zmq_err("setting ZMQ_LINGER"))?;
    }
    if let Some(v) = o.sndbuf {
        s.set_sndbuf(v).map_err(zmq_err("setting ZMQ_SNDBUF"))?;
    }
    if let Some(v) = o.rcvbuf {
        s.set_rcvbuf(v).map_err(zmq_err("setting ZMQ_RCVBUF"))?;
    }
    if let Some(v) = o.immediate {
        s.set_immediate(v)
            .map_err(zmq_err("setting ZMQ_IMMEDIATE"))?;
    }
    if let Some(v) = o.conflate {
        int(s, zmq::ZMQ_CONFLATE, v as i32)?;
    }
    if matches!(kind, SocketType::Sub | SocketType::Xsub) {
        for t in o.subscribe.iter().flatten() {
            if kind == SocketType::Sub {
                s.set_subscribe(t.as_bytes())
                    .map_err(zmq_err("subscribing"))?;
            }
        }
    }
    if let Some(v) = o.xpub_verbose {
        int(s, zmq::ZMQ_XPUB_VERBOSE, v as i32)?;
    }
    if let Some(v) = o.xpub_nodrop {
        int(s, zmq::ZMQ_XPUB_NODROP, v as i32)?;
    }
    if let Some(v) = o.router_mandatory {
        int(s, zmq::ZMQ_ROUTER_MANDATORY, v as i32)?;
    }
    if let Some(id) = &o.routing_id {
        s.set_identity(id.as_bytes())
            .map_err(zmq_err("setting ZMQ_ROUTING_ID"))?;
    }
    for (opt, v, name) in [
        (zmq::ZMQ_RATE, o.multicast_rate, "ZMQ_RATE"),
        (zmq::ZMQ_RECOVERY_IVL, o.recovery_ivl, "ZMQ_RECOVERY_IVL"),
        (
            zmq::ZMQ_MULTICAST_HOPS,
            o.multicast_hops,
            "ZMQ_MULTICAST_HOPS",
        ),
    ] {
        if let Some(v) = v {
            s.set_int(opt, v)
                .map_err(|e| zmq_err(&format!("setting {name}"))(e))?;
        }
    }
    if kind == SocketType::Dish {
        let group = o.group.as_deref().unwrap_or(crate::topology::DEFAULT_GROUP);
        s.join(group)
            .map_err(|e| zmq_err(&format!("joining group '{group}'"))(e))?;
    }
    if let Some(v) = o.tcp_keepalive {
        s.set_tcp_keepalive(v)
            .map_err(zmq_err("setting ZMQ_TCP_KEEPALIVE"))?;
    }
    Ok(())
}

/// Makes an XPUB pass every subscription on, so a source can count its subscribers.
pub fn set_xpub_verbose(s: &mut zmq::Socket) -> Result<()> {
    set_int_option(s, zmq::ZMQ_XPUB_VERBOSE, 1)
}

static ENDPOINT_N: AtomicUsize = AtomicUsize::new(0);

/// A fresh loopback endpoint to bind on `t`: `tcp://127.0.0.1:*`, an ipc name (in Linux's
/// abstract namespace, so no socket file is left behind in the temp folder, whatever
/// becomes of the process), or a new inproc name.
pub fn auto_endpoint(t: Transport) -> String {
    auto_endpoint_for(t, true)
}

/// [`auto_endpoint`], with an ipc path in the file system instead of Linux's abstract
/// namespace when `abstract_ipc` is false (a peer whose binding has no abstract sockets).
pub fn auto_endpoint_for(t: Transport, abstract_ipc: bool) -> String {
    let n = ENDPOINT_N.fetch_add(1, Ordering::Relaxed);
    match t {
        Transport::Tcp => "tcp://127.0.0.1:*".into(),
        Transport::Ipc if cfg!(target_os = "linux") && abstract_ipc => {
            format!("ipc://@zmqperf-{}-{n}", std::process::id())
        }
        Transport::Ipc => format!(
            "ipc://{}/zmqperf-{}-{n}.sock",
            std::env::temp_dir().display(),
            std::process::id()
        ),
        Transport::Inproc => format!("inproc://zmqperf-node-{}-{n}", std::process::id()),
        Transport::Udp => format!("udp://127.0.0.1:{}", free_udp_port()),
        Transport::Ws | Transport::Wss => format!("{t}://127.0.0.1:*/zmqperf"),
        Transport::Pgm | Transport::Epgm | Transport::Norm => {
            let pid = std::process::id();
            format!(
                "{t}://{};239.192.{}.{}:{}",
                super::iface::multicast_interface(),
                pid % 251,
                n % 251 + 1,
                free_udp_port()
            )
        }
        Transport::Tipc => format!(
            "tipc://{{{},0,0}}",
            20_000 + std::process::id() % 40_000 + n as u32
        ),
    }
}

/// A UDP port nobody uses now: libzmq's udp and multicast transports take no wildcard
/// port, so one is asked of the kernel (bound, then let go at once for libzmq to bind).
fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .map(|a| a.port())
        .unwrap_or(5556)
}

/// Sets an integer socket option.
pub fn set_int_option(sock: &mut zmq::Socket, option: i32, value: i32) -> Result<()> {
    sock.set_int(option, value)
        .map_err(zmq_err("zmq_setsockopt"))
}
