//! Opening a node's sockets through the one opener in net/: options, binds, connects, and
//! the ready message with the endpoints bound.

use super::control::Control;
use super::{NodeSpec, SockPlan};
use crate::endpoint::{Endpoint, Side};
use crate::error::{zmq_err, Error, Result};
use crate::net::{apply_options, open_socket, PeerWatch};
use crate::topology::SocketType;
use crate::zmq;
use std::time::Duration;

/// An opened socket with the endpoint it is measured on (for error messages) and the
/// watch on its connections (tcp and ipc).
pub(crate) struct Opened {
    // The watch is declared first: its monitor socket closes before the measured one.
    pub watch: Option<PeerWatch>,
    pub sock: zmq::Socket,
    pub endpoint: Endpoint,
    pub bound: Vec<String>,
}

impl Opened {
    /// The socket alone, its watch ended first (a role that needs no watch).
    pub fn into_socket(mut self) -> zmq::Socket {
        drop(self.watch.take());
        self.sock
    }
}

/// Opens one planned socket: options, then binds, then connects. A PUB that must count its
/// subscribers is opened as an XPUB (the same on the wire) that passes every subscription.
pub(crate) fn open_one(
    ctx: &zmq::Context,
    plan: &SockPlan,
    spec: &NodeSpec,
    recv_timeout: Duration,
) -> Result<Opened> {
    let mut kind = plan.kind;
    if spec.subscriptions > 0 && kind == SocketType::Pub && plan.publishes(spec) {
        kind = SocketType::Xpub;
    }
    let mut bound = Vec::new();
    let mut first: Option<(zmq::Socket, Endpoint)> = None;
    let mut watch = None;
    let sides = plan
        .bind
        .iter()
        .map(|e| (e, Side::Bind))
        .chain(plan.connect.iter().map(|e| (e, Side::Connect)));
    for (raw, side) in sides {
        let local = crate::net::iface::local_multicast(raw);
        let raw = &local;
        let ep = Endpoint::parse(raw, side)?;
        match &mut first {
            None => {
                let (s, actual) = open_socket(ctx, kind.zmq(), &ep, side, spec.timeout(), |s| {
                    // Watched from before the bind or connect, so no handshake is missed.
                    watch = PeerWatch::new(ctx, s, &ep)?;
                    configure(s, kind, plan, spec, recv_timeout, side == Side::Bind)
                })?;
                // Errors name the endpoint bound (a port of `:0` or `:*` as it came out).
                let ep = if side == Side::Bind {
                    let at = Endpoint::parse(&actual, Side::Bind).unwrap_or(ep);
                    bound.push(actual);
                    at
                } else {
                    ep
                };
                first = Some((s, ep));
            }
            Some((s, _)) => match side {
                Side::Bind => {
                    s.bind(raw).map_err(|e| crate::net::bind_error(&ep, e))?;
                    crate::net::note_bound_ipc(raw);
                    bound.push(crate::net::last_endpoint(s, raw));
                }
                Side::Connect => {
                    crate::net::connect(s, kind.zmq(), raw).map_err(|e| Error::Endpoint {
                        endpoint: raw.clone(),
                        reason: format!("cannot connect ({e})"),
                    })?
                }
            },
        }
    }
    let (sock, endpoint) = first
        .ok_or_else(|| Error::Internal(format!("node {}: a socket with no endpoint", spec.name)))?;
    Ok(Opened {
        watch,
        sock,
        endpoint,
        bound,
    })
}

fn configure(
    s: &mut zmq::Socket,
    kind: SocketType,
    plan: &SockPlan,
    spec: &NodeSpec,
    recv_timeout: Duration,
    server: bool,
) -> Result<()> {
    let ms = recv_timeout.as_millis().min(i32::MAX as u128) as i32;
    s.set_rcvtimeo(ms)
        .map_err(zmq_err("setting ZMQ_RCVTIMEO"))?;
    // The timeout mode: every call bounded by one slice, retried by the role.
    if let Some((snd, rcv)) = super::io::socket_timeouts(spec.io, recv_timeout) {
        s.set_sndtimeo(snd)
            .map_err(zmq_err("setting ZMQ_SNDTIMEO"))?;
        s.set_rcvtimeo(rcv)
            .map_err(zmq_err("setting ZMQ_RCVTIMEO"))?;
    }
    apply_options(s, plan.kind, &plan.options, server)?;
    if let Some(largest) = largest_frame(spec) {
        crate::net::limit_message_size(s, largest)?;
    }
    if kind == SocketType::Xpub && spec.subscriptions > 0 && plan.publishes(spec) {
        crate::net::set_xpub_verbose(s)?;
    }
    Ok(())
}

/// The largest frame a receiving role expects (every frame of its messages is at most the
/// message size), or None for a role that takes whatever comes: a source, a proxy (it
/// forwards what others send), a sink of streams of different sizes (size 0), a swarm whose
/// publisher is not part of the run (sub-cluster).
pub(crate) fn largest_frame(spec: &NodeSpec) -> Option<usize> {
    match spec.max_frame {
        // A swarm's, when the run knows its publisher.
        Some(m) => Some(m),
        None if spec.role.info().bounds_frames && spec.size > 0 => Some(
            spec.frames
                .iter()
                .copied()
                .max()
                .unwrap_or(0)
                .max(spec.size),
        ),
        None => None,
    }
}

/// Opens every socket of a node and tells the runner it is ready.
pub(crate) fn open_all(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
    recv_timeout: Duration,
) -> Result<Vec<Opened>> {
    let opened: Vec<Opened> = spec
        .sockets
        .iter()
        .map(|p| open_one(ctx, p, spec, recv_timeout))
        .collect::<Result<_>>()?;
    let bound: Vec<String> = opened.iter().flat_map(|o| o.bound.clone()).collect();
    ctl.ready(&bound)?;
    Ok(opened)
}
