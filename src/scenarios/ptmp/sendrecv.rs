//! check_sendrecv: PTMP's pattern and transport test, both ends in one process. A sender
//! thread and a receiver thread on one context (pubsub, pipe/pair or pushpull over inproc,
//! ipc or tcp); the sender binds or connects as told and starts at once, as PTMP's does.
//! Unlike check_send it keeps its socket open until the receiver is done, so what it shows
//! is the pattern's own loss (the slow joiner, the high-water mark), not a fast quit.
//! The sender is the source role, on its own thread.

use super::cause::{causes, Cause};
use super::{open_receiver, DEFAULT_SIZE};
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::{Error, Result};
use crate::roles::ptmp::{take, Ended, Limits};
use crate::roles::{run_node, Control, RoleReport, SentFacts, HOLD_MS};
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

/// The control of check_sendrecv's sender (the source role on a thread of its own): its
/// endpoint goes back to the caller, it starts once the receiver's socket is open, it says
/// when its last message has left, and its hold ends once the receiver is done.
struct SenderControl {
    ready: mpsc::Sender<Vec<String>>,
    start: mpsc::Receiver<()>,
    done: Arc<AtomicBool>,
    finished: mpsc::Receiver<()>,
}

impl Control for SenderControl {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        let _ = self.ready.send(endpoints.to_vec());
        Ok(())
    }

    fn wait_start(&mut self, _timeout: Duration) -> Result<()> {
        self.start
            .recv()
            .map_err(|_| Error::Internal("check_sendrecv: the receiver never opened".into()))
    }

    fn sent_with(&mut self, _facts: SentFacts) -> Result<()> {
        self.done.store(true, Ordering::Release);
        Ok(())
    }

    fn stop_requested(&mut self) -> bool {
        // The socket stays open until the receiver is done: no fast quit here.
        !matches!(self.finished.try_recv(), Err(mpsc::TryRecvError::Empty))
    }
}

/// The sender, running, and the receiver's socket, one bound and the other connected to
/// it as `cfg.sender_side` says (the binder first); with the endpoint bound. The sender
/// starts when `start` is sent.
struct Opened {
    sender: std::thread::JoinHandle<Result<RoleReport>>,
    start: mpsc::Sender<()>,
    rx_sock: zmq::Socket,
    bound: String,
}

fn open_pair(
    ctx: &zmq::Context,
    cfg: &SendRecvConfig,
    done: Arc<AtomicBool>,
    finished: mpsc::Receiver<()>,
) -> Result<Opened> {
    let (ready_tx, ready_rx) = mpsc::channel();
    let (start, start_rx) = mpsc::channel();
    let ctl = SenderControl {
        ready: ready_tx,
        start: start_rx,
        done,
        finished,
    };
    let spawn = |ep: &Endpoint, side: Side, ctl: SenderControl| {
        let mut spec = super::send::sender_spec(
            cfg.send_kind,
            ep,
            side,
            (cfg.count, cfg.size, std::process::id()),
            cfg.timeout,
        );
        let hold = cfg.timeout * 2 + Duration::from_secs(1);
        spec.own.insert(HOLD_MS.into(), hold.as_millis() as u64);
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let mut ctl = ctl;
            let r = run_node(&ctx, &spec, &mut ctl);
            ctl.done.store(true, Ordering::Release);
            r
        })
    };
    let receiver = |ep: &Endpoint, side: Side| {
        open_receiver(ctx, cfg.recv_kind, ep, side, cfg.timeout, Some(cfg.size))
    };
    match cfg.sender_side {
        Side::Bind => {
            let sender = spawn(&cfg.endpoint, Side::Bind, ctl);
            let Ok(bound) = ready_rx.recv() else {
                return Err(sender
                    .join()
                    .expect("sender thread")
                    .err()
                    .unwrap_or_else(|| {
                        Error::Internal("check_sendrecv: the sender ended unready".into())
                    }));
            };
            let bound = crate::net::connect_endpoint(&bound[0]);
            let rx = receiver(&Endpoint::parse(&bound, Side::Connect)?, Side::Connect)?;
            Ok(Opened {
                sender,
                start,
                rx_sock: rx.into_socket(),
                bound,
            })
        }
        Side::Connect => {
            let rx = receiver(&cfg.endpoint, Side::Bind)?;
            let bound = crate::net::connect_endpoint(rx.endpoint.as_str());
            let sender = spawn(&Endpoint::parse(&bound, Side::Connect)?, Side::Connect, ctl);
            Ok(Opened {
                sender,
                start,
                rx_sock: rx.into_socket(),
                bound,
            })
        }
    }
}

/// The sender's error in check_sendrecv's words: a send that blocked, after how many.
fn blocked(cfg: &SendRecvConfig, bound: &str, e: Error) -> Error {
    let (done, e) = match e {
        Error::PeerStopped { done, .. } => (done, zmq::Error::EAGAIN),
        Error::PeerAbsent { .. } | Error::PeerSilent { .. } => (0, zmq::Error::EAGAIN),
        Error::Zmq { source, .. } => (0, source),
        e => return e,
    };
    Error::PeerStopped {
        endpoint: bound.to_string(),
        done,
        expected: cfg.count,
        unit: "messages sent".into(),
        timeout: cfg.timeout,
        detail: format!(
            " (the {} blocked: its receiver stopped taking messages; {e})",
            cfg.send_kind.name()
        ),
    }
}

/// Runs the sender and the receiver on two threads of one context.
pub fn check_sendrecv(cfg: &SendRecvConfig) -> Result<SendRecvResult> {
    let ctx = zmq::Context::new();
    let done = Arc::new(AtomicBool::new(false));
    let (finished_tx, finished_rx) = mpsc::channel::<()>();
    let Opened {
        sender,
        start,
        mut rx_sock,
        bound,
    } = open_pair(&ctx, cfg, done.clone(), finished_rx)?;
    let idle = cfg.timeout.min(Duration::from_secs(1));
    let timeout = cfg.timeout;
    let receiver = std::thread::spawn(move || {
        let limits = Limits {
            count: None,
            timeout,
            sender_done: Some((&*done, idle)),
        };
        let r = take(&mut rx_sock, None, limits, |_, _| {}, |_| {});
        let _ = finished_tx.send(());
        r
    });
    let _ = start.send(());
    let (count, size) = (cfg.count, cfg.size);
    let sent = sender.join().expect("sender thread");
    let received = receiver.join().expect("receiver thread")?;
    let send = sent
        .map_err(|e| blocked(cfg, &bound, e))?
        .send
        .unwrap_or_default();
    if let Some(why) = received.protocol_error {
        return Err(Error::Protocol(why));
    }
    // What was still to come when a stop signal came is not lost.
    let interrupted = received.ended == Ended::Interrupted;
    let loss = received.summary((!interrupted).then_some(cfg.count));
    let delivered = received.delivered();
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
