//! The experiments' nodes: the specs of the roles an experiment runs (a receiver bound to a
//! fresh loopback endpoint, the sender of [`super::sender::spec`]), the control of a role run
//! on one of the experiment's threads, and the holes of a role's ledger as a finding shows
//! them (with the times around them, after the sender's first send).

use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::model::TimedGap;
use crate::net::auto_endpoint;
use crate::roles::{Control, NodeSpec, Role, RoleReport, SockPlan};
use crate::stats::{GapPosition, LossSummary, Throughput};
use crate::topology::{SocketOptions, SocketType};
use crate::zmq;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// The spec of a receiving node of `role` (a sink or a slow sink) on a `kind` socket bound
/// to a fresh endpoint of `t`, with the options `options`, taking one stream (id 0) of
/// `count` messages of `size` bytes; `timeout` is how long it waits in silence.
pub(super) fn receiver(
    role: Role,
    kind: SocketType,
    t: Transport,
    options: SocketOptions,
    (count, size): (u64, usize),
    timeout: Duration,
) -> NodeSpec {
    let mut options = options;
    if kind == SocketType::Sub && options.subscribe.is_none() {
        options.subscribe = Some(vec![String::new()]);
    }
    let plan = SockPlan {
        kind,
        bind: vec![auto_endpoint(t)],
        connect: Vec::new(),
        options,
    };
    let mut s = NodeSpec::single("receiver", role, plan, timeout);
    s.size = size;
    s.streams = vec![(0, count)];
    s.peer_label = Some("the experiment's sender".into());
    s
}

/// The control of a role on one of the experiment's threads: its first endpoint goes to
/// the experiment (if it asked), the start is at once (the sockets are made before the
/// other side is told the endpoint), and the stop comes when the experiment sets the flag.
pub(super) struct Driven {
    stop: Arc<AtomicBool>,
    endpoint: Option<mpsc::Sender<String>>,
    /// The start, when the experiment gives it later (a receiver that has not started
    /// reading: its socket is bound but nothing reads it or handles its commands).
    start: Option<(Arc<AtomicBool>, Duration)>,
}

impl Driven {
    /// A control whose stop is `stop`.
    pub fn new(stop: Arc<AtomicBool>) -> Driven {
        Driven {
            stop,
            endpoint: None,
            start: None,
        }
    }

    /// The same, sending the role's first bound endpoint on `endpoint` when it is ready.
    pub fn telling(stop: Arc<AtomicBool>, endpoint: mpsc::Sender<String>) -> Driven {
        Driven {
            stop,
            endpoint: Some(endpoint),
            start: None,
        }
    }

    /// The same, with the start held until `go` is set (or for at most `longest`).
    pub fn held_until(mut self, go: Arc<AtomicBool>, longest: Duration) -> Driven {
        self.start = Some((go, longest));
        self
    }
}

impl Control for Driven {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        if let (Some(tx), Some(ep)) = (&self.endpoint, endpoints.first()) {
            let _ = tx.send(ep.clone());
        }
        Ok(())
    }

    fn wait_start(&mut self, _timeout: Duration) -> Result<()> {
        if let Some((go, longest)) = &self.start {
            let until = std::time::Instant::now() + *longest;
            while !go.load(Ordering::Acquire) && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        Ok(())
    }

    fn stop_requested(&mut self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}

/// The report of a role run on a thread of the experiment.
pub(super) fn joined(
    h: std::thread::JoinHandle<Result<RoleReport>>,
    what: &str,
) -> Result<RoleReport> {
    h.join()
        .map_err(|_| Error::Internal(format!("the {what} thread panicked")))?
}

/// A receiving node started on its own thread under `ctl` (which tells the endpoint it
/// bound on `bound`): its thread and that endpoint. A receiver that has not bound within
/// `timeout` is let go (`release` dropped) and joined, and that is the error.
pub(super) fn start_receiver(
    ctx: &zmq::Context,
    rx: NodeSpec,
    mut ctl: Driven,
    bound: mpsc::Receiver<String>,
    release: StopOnDrop,
    timeout: Duration,
) -> Result<(Receiver, String, StopOnDrop)> {
    let c = ctx.clone();
    let receiver = std::thread::spawn(move || crate::roles::run_node(&c, &rx, &mut ctl));
    match bound.recv_timeout(timeout) {
        Ok(ep) => Ok((receiver, ep, release)),
        Err(_) => {
            drop(release);
            joined(receiver, "receiving")?;
            Err(Error::Internal(
                "the receiver never bound its socket".into(),
            ))
        }
    }
}

/// The thread of a receiving node.
pub(super) type Receiver = std::thread::JoinHandle<Result<RoleReport>>;

/// What a receiving role took: its delivered span (first and last arrival) and its ledger
/// of a stream of `expected` messages.
pub(super) fn taken(r: &RoleReport, expected: u64) -> (Throughput, LossSummary) {
    let span = r.delivered.unwrap_or_default();
    let loss = match &r.ledger {
        Some(l) => l.summary(Some(expected)),
        None => crate::stats::Ledger::new().summary(Some(expected)),
    };
    (span, loss)
}

/// The highest sequence number that arrived (the last arrives last on one connection).
pub(super) fn highest_seq(loss: &LossSummary) -> Option<u64> {
    (loss.received > 0).then(|| loss.expected.saturating_sub(1 + loss.lost_at_end))
}

/// The holes of `loss` with the arrival times a finding shows, ms after `origin_ns` (the
/// sender's first send): after a hole at the start, the first arrival; before a hole at
/// the end, the last; after one in the middle, the message that followed it.
pub(super) fn timed_gaps(loss: &LossSummary, span: &Throughput, origin_ns: u64) -> Vec<TimedGap> {
    let at = |ns: u64| super::ns_to_ms(ns.saturating_sub(origin_ns));
    loss.gaps
        .iter()
        .map(|g| TimedGap {
            first_seq: g.first_seq,
            count: g.count,
            position: g.position,
            before_ms: (g.position == GapPosition::End && loss.received > 0)
                .then(|| at(span.end_ns)),
            after_ms: match g.position {
                GapPosition::Start if loss.received > 0 => Some(at(span.start_ns)),
                GapPosition::Middle => g.after_ns.map(|a| at(span.start_ns + a)),
                _ => None,
            },
        })
        .collect()
}

/// Sets its flag when dropped: the stop of a role that must end however the experiment
/// leaves.
pub(super) struct StopOnDrop(pub Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}
