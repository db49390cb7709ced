//! The probe sockets of `zmqperf diagnose`'s experiment that still runs its own loops
//! (slow joiner) and of its listener, and the options every experiment's sockets take
//! (those on roles too): opened by the one opener ([`crate::net::open_socket`]) with
//! linger 0 and on fresh loopback endpoints, and carrying measured messages (the
//! measurement header with a sequence number and the send time).

use super::{apply_options, auto_endpoint, open_socket};
use crate::clock::now_ns;
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_TIMESTAMP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::topology::{SocketOptions, SocketType};
use crate::zmq;
use std::time::Duration;

/// Payload bytes of the experiments' messages unless one says otherwise.
pub const SIZE: usize = 64;

/// The options of an experiment's socket: linger 0 (an experiment's socket never holds up
/// the end of the experiment), no ZMQ_IMMEDIATE (messages queue on a connection still
/// being made, libzmq's default), and both high-water marks if `hwm` is given (0: no
/// limit). A SUB opened with them subscribes to everything.
pub fn options(hwm: Option<i32>) -> SocketOptions {
    SocketOptions {
        sndhwm: hwm,
        rcvhwm: hwm,
        linger: Some(0),
        immediate: Some(false),
        ..Default::default()
    }
}

/// Options that also make the kernel's socket buffers of a tcp or ipc socket small, so
/// that ZeroMQ's own queue is what fills; inproc has none.
pub fn with_small_kernel_buffers(mut o: SocketOptions, t: Transport, bytes: i32) -> SocketOptions {
    if t != Transport::Inproc {
        o.sndbuf = Some(bytes);
        o.rcvbuf = Some(bytes);
    }
    o
}

fn open(
    ctx: &zmq::Context,
    kind: SocketType,
    endpoint: &str,
    side: Side,
    timeout: Duration,
    o: &SocketOptions,
) -> Result<(zmq::Socket, String)> {
    let mut o = o.clone();
    if kind == SocketType::Sub && o.subscribe.is_none() {
        o.subscribe = Some(vec![String::new()]);
    }
    let ep = Endpoint::parse(endpoint, side)?;
    open_socket(ctx, kind.zmq(), &ep, side, timeout, |s| {
        apply_options(s, kind, &o, side == Side::Bind)
    })
}

/// A socket of `kind` with send and receive timeouts of `timeout` and the options `o`,
/// bound to a fresh loopback endpoint of `t` ([`auto_endpoint`]: an ipc name on Linux is in
/// the abstract namespace, so no socket file is left behind); with the endpoint to connect
/// to.
pub fn bind(
    ctx: &zmq::Context,
    kind: SocketType,
    t: Transport,
    timeout: Duration,
    o: &SocketOptions,
) -> Result<(zmq::Socket, String)> {
    open(ctx, kind, &auto_endpoint(t), Side::Bind, timeout, o)
}

/// A socket of `kind` with send and receive timeouts of `timeout` and the options `o`,
/// connected to `endpoint`.
pub fn connect(
    ctx: &zmq::Context,
    kind: SocketType,
    endpoint: &str,
    timeout: Duration,
    o: &SocketOptions,
) -> Result<zmq::Socket> {
    Ok(open(ctx, kind, endpoint, Side::Connect, timeout, o)?.0)
}

/// A message of `size` bytes (at least the header) carrying sequence `seq`, the send time
/// and `flags`, ready to send.
pub fn message(size: usize, seq: u64, flags: u8) -> Result<RawMsg> {
    let mut m = RawMsg::zeroed(size.max(HEADER_LEN))?;
    let h = Header {
        flags: flags | FLAG_TIMESTAMP,
        stream_id: 0,
        sequence: seq,
        send_ns: now_ns(),
    };
    m.write_array(&h.to_bytes());
    Ok(m)
}

/// Sends message `seq` on `s`; the zmq error as is (EAGAIN: timed out or would block).
pub fn send(
    s: &mut zmq::Socket,
    size: usize,
    seq: u64,
    flags: u8,
    zmq_flags: i32,
) -> Result<std::result::Result<(), zmq::Error>> {
    let mut m = message(size, seq, flags)?;
    Ok(m.send(s, zmq_flags))
}

/// Receives the next message; `Ok(None)` when the receive timed out.
pub fn recv(s: &mut zmq::Socket, msg: &mut RawMsg) -> Result<Option<Header>> {
    match msg.recv(s, 0) {
        Ok(()) => {}
        Err(zmq::Error::EAGAIN) => return Ok(None),
        Err(e) => {
            return Err(Error::Zmq {
                op: "receiving".into(),
                source: e,
            })
        }
    }
    match Header::decode(msg.prefix(HEADER_LEN)) {
        Ok(Some(h)) => Ok(Some(h)),
        Ok(None) => Err(Error::Protocol(
            "a message without the measurement header".into(),
        )),
        Err(e) => Err(Error::Protocol(e.to_string())),
    }
}

/// What `zmqperf diagnose --connect|--bind` listens with.
#[derive(Debug, Clone, Copy)]
pub struct Listener<'a> {
    /// SUB or PULL.
    pub kind: SocketType,
    /// The endpoint as given.
    pub endpoint: &'a str,
    /// Connect to it or bind it.
    pub side: Side,
    /// A SUB's prefix.
    pub subscribe: &'a str,
    /// ZMQ_RCVHWM, if given.
    pub rcvhwm: Option<i32>,
    /// The largest message taken (ZMQ_MAXMSGSIZE).
    pub max_size: usize,
}

/// Opens the listening socket: linger 0, the given receive high-water mark, a SUB
/// subscribed to its prefix, receive timeout `poll`; with the endpoint bound or
/// connected.
pub fn listener(ctx: &zmq::Context, l: Listener, poll: Duration) -> Result<(zmq::Socket, String)> {
    let ep = Endpoint::parse(l.endpoint, l.side)?;
    let o = SocketOptions {
        rcvhwm: l.rcvhwm,
        linger: Some(0),
        subscribe: (l.kind == SocketType::Sub).then(|| vec![l.subscribe.to_string()]),
        ..Default::default()
    };
    open_socket(ctx, l.kind.zmq(), &ep, l.side, poll, |s| {
        apply_options(s, l.kind, &o, l.side == Side::Bind)?;
        super::limit_message_size(s, l.max_size)
    })
}
