//! Senders stop sending: the connection stays up, so only a receive timeout tells the
//! receiver that its sender went quiet.
//!
//! A source role (PUSH) sends a short stream and then stops, keeping its socket open (a hung
//! or paused process) until the experiment tells it to go. A sink role (PULL) takes the
//! stream, not ending on its end mark but only on silence: when it has waited the timeout
//! with nothing arriving, it gives up and reports what it took; how long it had been since
//! the last message is the figure. Its wait counts from the last message, so the figure is
//! never below the timeout.

use super::nodes::{self, Driven};
use super::sender;
use super::{cause, messages, ms, ns_to_ms, round3, Config, FindingDraft, Part};
use crate::clock::now_ns;
use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::model::Finding;
use crate::net::connect_endpoint;
use crate::net::probe::{self as net, SIZE};
use crate::roles::{self, slice_for, Quit, Role, RoleReport};
use crate::stats::{LossSummary, Throughput};
use crate::topology::SocketType;
use crate::units::grouped;
use crate::zmq;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// What the receiver saw: the stream, and how long it had been silent when it gave up.
struct Silence {
    /// The receiver's ledger of the stream.
    loss: LossSummary,
    /// Its first and last arrival.
    span: Throughput,
    /// The sender's first send, ns.
    origin: u64,
    /// From the last message's arrival to the moment the receiver gave up waiting, ns.
    silence_ns: u64,
    /// Receive slices that timed out before the silence had lasted the timeout.
    early_wakeups: u64,
}

/// Runs the experiment over `t`.
pub(super) fn run(cfg: &Config, t: Transport) -> Result<Finding> {
    let timeout = if cfg.quick {
        Duration::from_millis(100)
    } else {
        Duration::from_millis(250)
    };
    let n: u64 = 1_000;
    let Silence {
        loss,
        span,
        origin,
        silence_ns,
        early_wakeups,
    } = measure(cfg, t, timeout, n)?;
    let mut f = FindingDraft::new(&format!("sender-stops/{t}"), Part::SenderStops, t);
    f.put("sent", n);
    f.put_ledger("", &loss);
    f.put(
        "sockets",
        "PUSH -> PULL, sender silent with its socket open",
    );
    let last_seq = nodes::highest_seq(&loss).unwrap_or(0);
    f.put("last_seq", last_seq);
    f.put(
        "last_arrival_ms",
        ns_to_ms(span.end_ns.saturating_sub(origin)),
    );
    f.put("timeout_ms", timeout.as_millis() as u64);
    f.put("silence_ms", ns_to_ms(silence_ns));
    f.put(
        "overshoot_ms",
        round3(ns_to_ms(silence_ns) - timeout.as_secs_f64() * 1000.0),
    );
    f.put("early_wakeups", early_wakeups);
    f.gaps = nodes::timed_gaps(&loss, &span, origin);
    let to = ms(timeout.as_secs_f64() * 1000.0);
    f.title = format!(
        "PUSH/PULL over {t}: the receiver noticed the silent sender after {} (timeout {to})",
        ms(ns_to_ms(silence_ns))
    );
    f.observed = format!(
        "The sender sent {} and then stopped, keeping its socket open, as a hung or paused \
         process does; the connection stayed up. The receiver's receive with a {to} timeout \
         (ZMQ_RCVTIMEO) returned EAGAIN {} after the last message arrived (seq {}), so it knew \
         its sender had gone quiet and for how long; {} lost. Without the timeout it would \
         have waited for ever.",
        messages(n),
        ms(ns_to_ms(silence_ns)),
        grouped(last_seq),
        grouped(loss.lost),
    );
    f.cause = "ZeroMQ hides the connection: a sender that goes quiet leaves the connection up, \
               and a peer that disappears is reconnected to in the background, so a receive \
               without a timeout just waits. Deep queues make it later still: the receiver \
               works through what is queued before it sees the silence."
        .to_string();
    f.remedy = "Give every receive a timeout (ZMQ_RCVTIMEO, or zmq_poll with a timeout) and \
                decide what to do when it expires: report it, retry, or switch to a backup \
                sender. Have senders send heartbeats when they have nothing to say, so that \
                silence means trouble; over tcp, ZMQ_HEARTBEAT_IVL and ZMQ_HEARTBEAT_TIMEOUT \
                detect a dead peer, and a socket monitor reports disconnections."
        .to_string();
    f.triage(
        cause::SENDER_SILENT,
        loss.lost,
        1,
        "silent senders",
        "a timeout on every receive (ZMQ_RCVTIMEO or zmq_poll) and heartbeats from senders",
    );
    Ok(f.finish())
}

/// Sends `n` messages, then keeps the socket open and silent; receives until the silence
/// has lasted `timeout`.
fn measure(cfg: &Config, t: Transport, timeout: Duration, n: u64) -> Result<Silence> {
    let ctx = zmq::Context::new();
    let mut rx = nodes::receiver(
        Role::Sink,
        SocketType::Pull,
        t,
        net::options(Some(0)),
        (n, SIZE),
        timeout,
    );
    // It ends on the silence, not on the stream's end mark.
    rx.ends_itself = false;
    let stop = Arc::new(AtomicBool::new(false));
    let mut source = None;
    let taken = roles::run_here(&ctx, &rx, |endpoints| {
        let spec = sender::spec(
            &connect_endpoint(&endpoints[0]),
            SocketType::Push,
            n,
            SIZE,
            0,
            // Silent, socket open, until the receiver has given up (or for at most the
            // experiment's timeout).
            Quit::WaitForStop,
            cfg.timeout,
        );
        let (ctx, mut ctl) = (ctx.clone(), Driven::new(stop.clone()));
        source = Some(thread::spawn(move || {
            roles::run_node(&ctx, &spec, &mut ctl)
        }));
    });
    let gave_up = now_ns();
    stop.store(true, Ordering::Release);
    let sent: Option<RoleReport> = source.map(|h| nodes::joined(h, "sending")).transpose()?;
    let taken = taken?;
    let (span, loss) = nodes::taken(&taken, n);
    if span.messages == 0 {
        return Err(Error::Protocol(format!(
            "the sender's first message did not arrive within {}",
            crate::error::fmt_duration(timeout)
        )));
    }
    let silence_ns = gave_up.saturating_sub(span.end_ns);
    // The receiver waits in slices (the sink's receive timeout, `slice_for(timeout)`);
    // those that passed quiet before the silence had lasted the timeout woke it early.
    let slice_ns = slice_for(timeout).as_nanos() as u64;
    let early_wakeups = (silence_ns / slice_ns).saturating_sub(1);
    let origin = sent
        .and_then(|r| r.send)
        .map_or(span.start_ns, |s| s.start_ns);
    Ok(Silence {
        loss,
        span,
        origin,
        silence_ns,
        early_wakeups,
    })
}
