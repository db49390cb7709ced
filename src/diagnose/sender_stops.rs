//! Senders stop sending: the connection stays up, so only a receive timeout tells the
//! receiver that its sender went quiet.
//!
//! A PUSH sender sends a short stream and then stops, keeping its socket open (a hung or
//! paused process). The PULL receiver waits with a timeout (ZMQ_RCVTIMEO); when it expires
//! the receiver reports how long it has been since the last message. It keeps waiting
//! until the silence has lasted the whole timeout by its own clock, so the figure it
//! reports is never below the timeout.

use super::stream::Tally;
use super::{cause, messages, ms, ns_to_ms, round3, Config, FindingDraft, Part};
use crate::clock::now_ns;
use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::model::Finding;
use crate::msg::RawMsg;
use crate::net::probe::{self as net, SIZE};
use crate::units::grouped;
use crate::zmq;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// What the receiver saw: the stream, and how long it had been silent when it gave up.
struct Silence {
    tally: Tally,
    /// The sender's first send, ns.
    origin: u64,
    /// From the last message's arrival to the moment the receiver gave up waiting, ns.
    silence_ns: u64,
    /// Receive calls that timed out before the silence had lasted the timeout.
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
        tally,
        origin,
        silence_ns,
        early_wakeups,
    } = measure(cfg, t, timeout, n)?;
    let mut f = FindingDraft::new(&format!("sender-stops/{t}"), Part::SenderStops, t);
    let loss = tally.summary(n);
    f.put("sent", n);
    f.put_ledger("", &loss);
    f.put(
        "sockets",
        "PUSH -> PULL, sender silent with its socket open",
    );
    let last_seq = tally.highest_seq().unwrap_or(0);
    f.put("last_seq", last_seq);
    f.put(
        "last_arrival_ms",
        ns_to_ms(tally.last_ns().saturating_sub(origin)),
    );
    f.put("timeout_ms", timeout.as_millis() as u64);
    f.put("silence_ms", ns_to_ms(silence_ns));
    f.put(
        "overshoot_ms",
        round3(ns_to_ms(silence_ns) - timeout.as_secs_f64() * 1000.0),
    );
    f.put("early_wakeups", early_wakeups);
    f.gaps = tally.gaps(n, origin);
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

/// Sends `n` messages, then keeps the socket open and silent; receives with `timeout` until
/// the silence has lasted it.
fn measure(cfg: &Config, t: Transport, timeout: Duration, n: u64) -> Result<Silence> {
    let ctx = zmq::Context::new();
    let (mut rx, mut tx) = net::push_pull(&ctx, t, timeout, cfg.timeout)?;
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let hold = cfg.timeout + timeout;
    let sender = thread::spawn(move || -> Result<u64> {
        let origin = now_ns();
        for seq in 0..n {
            net::send(&mut tx, SIZE, seq, 0, 0)?.map_err(|e| Error::Zmq {
                op: "sending".into(),
                source: e,
            })?;
        }
        // Silent, socket open, until the receiver has given up (or for at most `hold`).
        let _ = stop_rx.recv_timeout(hold);
        drop(tx);
        Ok(origin)
    });
    let mut tally = Tally::new();
    let mut msg = RawMsg::new();
    // Receive calls that timed out before the silence had lasted the timeout.
    let mut early_wakeups = 0u64;
    let limit = now_ns() + (cfg.timeout + timeout).as_nanos() as u64;
    // From the last message's arrival to the moment the receiver gives up waiting, ns.
    let silence_ns = loop {
        if let Some(h) = net::recv(&mut rx, &mut msg)? {
            tally.record_now(&h);
            continue;
        }
        let now = now_ns();
        if tally.first_ns().is_none() {
            if now > limit {
                let _ = stop_tx.send(());
                return Err(Error::Protocol(format!(
                    "the sender's first message did not arrive within {}",
                    crate::error::fmt_duration(cfg.timeout + timeout)
                )));
            }
            continue;
        }
        let quiet = now - tally.last_ns();
        if quiet >= timeout.as_nanos() as u64 {
            break quiet;
        }
        // The timeout counts from the call; make it count from the last message.
        early_wakeups += 1;
    };
    let _ = stop_tx.send(());
    let origin = sender
        .join()
        .map_err(|_| Error::Internal("the sending thread panicked".into()))??;
    Ok(Silence {
        tally,
        origin,
        silence_ns,
        early_wakeups,
    })
}
