//! The experiments' nodes: the specs of the roles an experiment runs (a receiver bound to a
//! fresh loopback endpoint, the sender of [`super::sender::spec`]), the control of a role run
//! on one of the experiment's threads, a receiver and its sender run as a pair, and what
//! their reports say: the holes of a role's ledger as a finding shows them (with the times
//! around them, after the sender's first send), and a receiver's record of what it took.

use super::stream::Tally;
use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::header::Header;
use crate::model::TimedGap;
use crate::net::{auto_endpoint, connect_endpoint};
use crate::roles::{self, Control, NodeSpec, Role, RoleReport, SockPlan};
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

/// The receiving node `rx` run on this thread, and the source that `source` makes (given
/// the endpoint to connect to, once `rx` has bound it) on a thread of its own, stopped when
/// the receiver has ended: what the receiver and the source reported.
pub(super) fn receive_from(
    ctx: &zmq::Context,
    rx: &NodeSpec,
    source: impl FnOnce(&str) -> NodeSpec,
) -> Result<(RoleReport, RoleReport)> {
    let stop = Arc::new(AtomicBool::new(false));
    let mut make = Some(source);
    let mut sender = None;
    let taken = roles::run_here(ctx, rx, |endpoints| {
        if let Some(make) = make.take() {
            let spec = make(&connect_endpoint(&endpoints[0]));
            let (ctx, mut ctl) = (ctx.clone(), Driven::new(stop.clone()));
            sender = Some(std::thread::spawn(move || {
                roles::run_node(&ctx, &spec, &mut ctl)
            }));
        }
    });
    stop.store(true, Ordering::Release);
    let sent = sender.map(|h| joined(h, "sending")).transpose()?;
    let taken = taken?;
    let sent = sent.ok_or_else(|| Error::Internal("the sender never started".into()))?;
    Ok((taken, sent))
}

/// What a receiver kept a record of ([`NodeSpec::trace_arrivals`]), in the order it came:
/// each message's header (sequence, flags, send stamp) and when it was taken, ns.
pub(super) fn arrivals(r: &RoleReport) -> Vec<(Header, u64)> {
    r.arrivals
        .iter()
        .flatten()
        .map(|a| {
            let h = Header {
                flags: a.flags,
                stream_id: 0,
                sequence: a.sequence,
                send_ns: a.send_ns,
            };
            (h, a.arrival_ns)
        })
        .collect()
}

/// The tally of what a receiver kept a record of, as if it had kept the tally itself.
pub(super) fn tally(arrivals: &[(Header, u64)]) -> Tally {
    let mut t = Tally::new();
    for (h, at) in arrivals {
        t.record(h, *at);
    }
    t
}

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
