//! check_sendrecv: PTMP's pattern and transport test, both ends in one process. A sender
//! thread and a receiver thread on one context (pubsub, pipe/pair or pushpull over inproc,
//! ipc or tcp); the sender binds or connects as told and starts at once, as PTMP's does.
//! Unlike check_send it keeps its socket open until the receiver is done, so what it shows
//! is the pattern's own loss (the slow joiner, the high-water mark), not a fast quit.

use super::cause::{causes, Cause};
use super::recv::{receive, Ended, Loop};
use super::send::send_stream;
use super::{open, DEFAULT_SIZE};
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::{Error, Result};
use crate::stats::{LossSummary, SenderEnd, Throughput};
use crate::topology::SocketType;
use crate::zmq;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// What check_sendrecv is asked to do.
#[derive(Debug, Clone)]
pub struct SendRecvConfig {
    /// Messages the sender sends.
    pub count: u64,
    /// The pattern's name as given (pubsub, pipe, pair, pushpull).
    pub pattern: String,
    /// The sender's type.
    pub send_kind: SocketType,
    /// The receiver's type.
    pub recv_kind: SocketType,
    /// Bind: the sender binds and the receiver connects; connect: the other way round.
    pub sender_side: Side,
    /// The address.
    pub endpoint: Endpoint,
    /// Bytes per message.
    pub size: usize,
    /// Longest wait for a send or a message.
    pub timeout: Duration,
}

impl SendRecvConfig {
    /// A config with the default size and a 10 s timeout.
    pub fn new(
        count: u64,
        pattern: &str,
        sender_side: Side,
        endpoint: Endpoint,
    ) -> Result<SendRecvConfig> {
        let (send_kind, recv_kind) = super::parse_pattern(pattern)?;
        Ok(SendRecvConfig {
            count,
            pattern: pattern.to_ascii_lowercase(),
            send_kind,
            recv_kind,
            sender_side,
            endpoint,
            size: DEFAULT_SIZE,
            timeout: super::DEFAULT_TIMEOUT,
        })
    }
}

/// What check_sendrecv measured.
#[derive(Debug, Clone, Serialize)]
pub struct SendRecvResult {
    /// "check_sendrecv".
    pub command: &'static str,
    /// pubsub, pipe, pair or pushpull.
    pub pattern: String,
    /// The endpoint bound.
    pub endpoint: String,
    /// Its transport.
    pub transport: Transport,
    /// The sender's socket type.
    pub sender: SocketType,
    /// The receiver's socket type.
    pub receiver: SocketType,
    /// "bind" when the sender binds, "connect" when the receiver does.
    pub sender_side: &'static str,
    /// Messages sent.
    pub count: u64,
    /// Bytes per message.
    pub message_size: usize,
    /// Send (admission) rate, first send to last.
    pub send: Throughput,
    /// send as msg/s.
    pub send_rate_msgs_per_s: f64,
    /// Delivered rate, first message received to last.
    pub delivered: Throughput,
    /// delivered as msg/s.
    pub receive_rate_msgs_per_s: f64,
    /// Why receiving stopped: the end mark, or a silence after the sender was done.
    pub ended: Ended,
    /// The loss ledger over the count sent.
    pub loss: LossSummary,
    /// Why messages were lost, with the fix.
    pub causes: Vec<Cause>,
}

impl SendRecvResult {
    /// The causes as one line.
    pub fn cause_line(&self) -> String {
        super::cause::one_line(&self.causes)
    }
}

/// The sender's and the receiver's sockets, one bound and the other connected to it as
/// `cfg.sender_side` says; with the endpoint bound.
fn open_pair(
    ctx: &zmq::Context,
    cfg: &SendRecvConfig,
) -> Result<(zmq::Socket, zmq::Socket, String)> {
    let binder_kind = match cfg.sender_side {
        Side::Bind => cfg.send_kind,
        Side::Connect => cfg.recv_kind,
    };
    let connecter_kind = match cfg.sender_side {
        Side::Bind => cfg.recv_kind,
        Side::Connect => cfg.send_kind,
    };
    let binder = open(
        ctx,
        binder_kind,
        &cfg.endpoint,
        Side::Bind,
        cfg.timeout,
        false,
        (binder_kind == cfg.recv_kind).then_some(cfg.size),
    )?;
    let bound = crate::net::connect_endpoint(&binder.endpoint);
    let connect_ep = Endpoint::parse(&bound, Side::Connect)?;
    let connecter = open(
        ctx,
        connecter_kind,
        &connect_ep,
        Side::Connect,
        cfg.timeout,
        false,
        (connecter_kind == cfg.recv_kind).then_some(cfg.size),
    )?;
    let (tx_sock, rx_sock) = match cfg.sender_side {
        Side::Bind => (binder.sock, connecter.sock),
        Side::Connect => (connecter.sock, binder.sock),
    };
    Ok((tx_sock, rx_sock, bound))
}

/// Runs the sender and the receiver on two threads of one context.
pub fn check_sendrecv(cfg: &SendRecvConfig) -> Result<SendRecvResult> {
    let ctx = zmq::Context::new();
    let (mut tx_sock, mut rx_sock, bound) = open_pair(&ctx, cfg)?;
    let done = Arc::new(AtomicBool::new(false));
    let (finished_tx, finished_rx) = mpsc::channel::<()>();
    let idle = cfg.timeout.min(Duration::from_secs(1));
    let timeout = cfg.timeout;
    let done_rx = done.clone();
    let receiver = std::thread::spawn(move || {
        let r = receive(
            &mut rx_sock,
            None,
            Loop {
                count: None,
                timeout,
                verbose: false,
                sender_done: Some((&*done_rx, idle)),
                on_line: &mut |_| {},
                on_wait: &mut |_| {},
            },
        );
        let _ = finished_tx.send(());
        r
    });
    let (count, size) = (cfg.count, cfg.size);
    let sender = std::thread::spawn(move || {
        let opened = crate::clock::now_ns();
        let r = send_stream(
            &mut tx_sock,
            count,
            size,
            std::process::id(),
            (opened, None),
        );
        done.store(true, Ordering::Release);
        // The socket stays open until the receiver is done: no fast quit here.
        let _ = finished_rx.recv_timeout(timeout * 2 + Duration::from_secs(1));
        r
    });
    let sent = sender.join().expect("sender thread");
    let received = receiver.join().expect("receiver thread")?;
    let sent = sent.map_err(|(seq, e)| Error::PeerStopped {
        endpoint: bound.clone(),
        done: seq,
        expected: count,
        unit: "messages sent".into(),
        timeout: cfg.timeout,
        detail: format!(
            " (the {} blocked: its receiver stopped taking messages; {e})",
            cfg.send_kind.name()
        ),
    })?;
    if let Some(why) = received.protocol_error {
        return Err(Error::Protocol(why));
    }
    // What was still to come when a stop signal came is not lost.
    let interrupted = received.ended == Ended::Interrupted;
    let loss = received.summary((!interrupted).then_some(cfg.count));
    let delivered = received.delivered();
    let send = sent.throughput(size);
    Ok(SendRecvResult {
        command: "check_sendrecv",
        pattern: cfg.pattern.clone(),
        endpoint: bound,
        transport: cfg.endpoint.transport(),
        sender: cfg.send_kind,
        receiver: cfg.recv_kind,
        sender_side: super::send::side_name(cfg.sender_side),
        count,
        message_size: size,
        send_rate_msgs_per_s: send.msgs_per_sec(),
        send,
        receive_rate_msgs_per_s: delivered.msgs_per_sec(),
        delivered,
        ended: received.ended,
        causes: causes(
            cfg.recv_kind,
            &loss,
            received.ended,
            // The sender keeps its socket until the receiver is done.
            SenderEnd::WaitedForReceivers,
            received.joined_after_ns(),
            delivered.msgs_per_sec(),
        ),
        loss,
    })
}
