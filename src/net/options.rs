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
    if let Some(m) = o.security {
        crate::net::security::apply(
            s,
            m,
            server,
            o.curve_keys.as_ref(),
            (
                o.plain_username
                    .as_deref()
                    .unwrap_or(crate::net::security::PLAIN_USER),
                o.plain_password
                    .as_deref()
                    .unwrap_or(crate::net::security::PLAIN_PASSWORD),
            ),
        )?;
    }
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
    }
}

/// Sets an integer socket option.
pub fn set_int_option(sock: &mut zmq::Socket, option: i32, value: i32) -> Result<()> {
    sock.set_int(option, value)
        .map_err(zmq_err("zmq_setsockopt"))
}
