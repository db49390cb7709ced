//! check_recv: opens a PAIR, SUB or PULL socket as PTMP's receiver does, receives until it
//! has COUNT messages, the sender's last message (the header's end mark) arrived, or
//! nothing came for TIMEOUT, printing PTMP's gap lines as it goes; then the loss ledger
//! and, for a loss or a stream that stopped, its cause and fix.

use super::cause::{recv_cause, Cause};
use super::gap::{GapLine, GapTracker};
pub use super::received::Ended;
pub(crate) use super::received::Received;
use super::send::CheckSocket;
use super::{open_receiver, RECEIVING};
use crate::clock::now_ns;
use crate::endpoint::{Endpoint, Side};
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_END};
use crate::msg::RawMsg;
use crate::net::{PeerWatch, Waiting};
use crate::roles::Opened;
use crate::stats::{LossSummary, Throughput};
use crate::topology::SocketType;
use crate::zmq;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Gap lines kept for the JSON (all of them are printed as they come).
pub const GAP_LINES_KEPT: usize = 1000;

/// What check_recv is asked to do.
#[derive(Debug, Clone)]
pub struct RecvConfig {
    /// Messages to receive (and, without the sender's end mark, the stream's length).
    pub count: u64,
    /// PAIR, SUB or PULL.
    pub kind: SocketType,
    /// Bind ADDR or connect to it.
    pub side: Side,
    /// ADDR.
    pub endpoint: Endpoint,
    /// Longest wait for the next message.
    pub timeout: Duration,
    /// A line for every message, not only where diff changes.
    pub verbose: bool,
    /// The largest message taken (`--max-size`); a peer declaring a larger frame is
    /// disconnected.
    pub max_size: usize,
}

/// What the receiver is waiting for, for a progress line.
#[derive(Debug, Clone, Copy)]
pub struct WaitStatus {
    /// Messages received so far.
    pub received: u64,
    /// How long nothing has arrived.
    pub silent: Duration,
    /// When the wait gives up.
    pub timeout: Duration,
    /// Whether the sender has disconnected (None: not known, inproc).
    pub disconnected: Option<bool>,
}

/// Limits and hooks of the receive loop.
pub(crate) struct Loop<'a> {
    pub count: Option<u64>,
    pub timeout: Duration,
    pub verbose: bool,
    /// Set by the sender of check_sendrecv when it is done; after it, `idle` of silence ends.
    pub sender_done: Option<(&'a AtomicBool, Duration)>,
    pub on_line: &'a mut dyn FnMut(&GapLine),
    pub on_wait: &'a mut dyn FnMut(&WaitStatus),
}

/// Receives until the count, every stream's end mark, or the timeout.
pub(crate) fn receive(
    sock: &mut zmq::Socket,
    watch: Option<&PeerWatch>,
    mut lp: Loop<'_>,
) -> Result<Received> {
    let slice = lp.timeout.min(Duration::from_millis(100));
    sock.set_rcvtimeo(slice.as_millis().max(1) as i32)
        .map_err(crate::error::zmq_err("setting ZMQ_RCVTIMEO"))?;
    let start = now_ns();
    let mut r = Received::starting(start, watch.is_some());
    let mut gaps = GapTracker::new(lp.verbose);
    let mut msg = RawMsg::new();
    let mut part = RawMsg::new();
    let mut streams_seen = 0usize;
    loop {
        // COUNT distinct messages: a duplicate does not stand for one still missing.
        if lp
            .count
            .is_some_and(|c| r.arrivals >= c && r.ledger.distinct() >= c)
        {
            r.ended = Ended::Count;
            break;
        }
        if crate::interrupt::interrupted() {
            r.ended = Ended::Interrupted;
            break;
        }
        match msg.recv(sock, 0) {
            Ok(()) => {
                let now = now_ns();
                if msg.more() {
                    // Further frames of a multi-frame message are read and not counted.
                    while part.recv(sock, 0).is_ok() && part.more() {}
                }
                let h = match decode(&mut msg, r.arrivals) {
                    Ok(h) => h,
                    Err(why) => {
                        r.protocol_error = Some(why);
                        break;
                    }
                };
                if r.arrivals == 0 && h.has_timestamp() {
                    let trailer = msg.prefix(super::send::TRAILER_END);
                    r.first_sent = super::send::opened_ns(trailer).map(|o| (h.send_ns, o));
                    r.quit_delay_ms = super::send::quit_delay_ms(trailer);
                }
                r.arrivals += 1;
                r.payload_bytes += msg.len() as u64;
                r.first_ns.get_or_insert(now);
                r.last_ns = now;
                let before = r.ledger.streams().len();
                r.ledger.record(h.stream_id, h.sequence);
                if r.ledger.streams().len() != before {
                    streams_seen += 1;
                }
                if let Some(line) = gaps.next(h.sequence, now - start) {
                    (lp.on_line)(&line);
                    r.gap_lines_total += 1;
                    if r.gap_lines.len() < GAP_LINES_KEPT {
                        r.gap_lines.push(line);
                    }
                }
                if h.has_timestamp() {
                    let stamp = (h.sequence, h.send_ns);
                    r.stamps = Some(match r.stamps {
                        None => (stamp, stamp),
                        Some((first, _)) => (first, stamp),
                    });
                }
                if h.flags & FLAG_END != 0 {
                    r.ends.insert(h.stream_id, h.sequence);
                    if r.ends.len() == streams_seen {
                        r.ended = Ended::EndMark;
                        break;
                    }
                }
            }
            Err(zmq::Error::EAGAIN) => {
                if waited_out(&mut r, watch, &mut lp) {
                    r.ended = Ended::Timeout;
                    break;
                }
            }
            // A signal: the loop's head looks whether it was a stop.
            Err(zmq::Error::EINTR) => {}
            Err(e) => {
                return Err(Error::Zmq {
                    op: "receiving".into(),
                    source: e,
                })
            }
        }
    }
    if let (Some(w), Some(d)) = (watch, r.disconnected.as_mut()) {
        let seen = w.sightings();
        *d = seen.disconnections > 0 && seen.disconnections >= seen.connections;
        r.sightings = Some(seen);
    }
    Ok(r)
}

/// The header of message number `arrivals`, or why it breaks the protocol.
#[inline]
fn decode(msg: &mut RawMsg, arrivals: u64) -> std::result::Result<Header, String> {
    match Header::decode(msg.prefix(super::send::TRAILER_END)) {
        Ok(Some(h)) => Ok(h),
        Ok(None) => Err(format!(
            "message #{} ({} B) carries no zmqperf measurement header: check_recv reads the sequence numbers that zmqperf check_send writes (PTMP's own check_send sends TPSet messages without one)",
            arrivals,
            msg.len()
        )),
        Err(e) => Err(format!("message #{arrivals}: {e}")),
    }
}

/// A receive that timed out: whether the wait is over (the timeout, or the idle time after
/// the sender is done); else tells `on_wait` how it stands.
fn waited_out(r: &mut Received, watch: Option<&PeerWatch>, lp: &mut Loop<'_>) -> bool {
    let now = now_ns();
    let silent = Duration::from_nanos(now - r.last_ns);
    if let (Some(w), Some(d)) = (watch, r.disconnected.as_mut()) {
        let seen = w.sightings();
        *d = seen.disconnections > 0 && seen.disconnections >= seen.connections;
    }
    let idle_done = lp
        .sender_done
        .is_some_and(|(done, idle)| done.load(Ordering::Acquire) && silent >= idle);
    if silent >= lp.timeout || idle_done {
        return true;
    }
    (lp.on_wait)(&WaitStatus {
        received: r.arrivals,
        silent,
        timeout: lp.timeout,
        disconnected: r.disconnected,
    });
    false
}

/// Whether a sender came and went: it completed the handshake and left, or (for a SUB) a
/// publisher left during its one handshake, as a fast one does when its stream is over
/// before the subscription: a stream lost whole. A connection that failed its handshakes
/// otherwise is a pairing to name (a PUB to a PULL retries, so it connects again).
pub(crate) fn came_and_went(
    kind: SocketType,
    disconnected: Option<bool>,
    seen: &crate::net::Sightings,
) -> bool {
    let left_mid_handshake = kind == SocketType::Sub && closed_mid_handshake(seen);
    disconnected == Some(true) && (seen.handshakes > 0 || left_mid_handshake)
}

/// One connection, whose peer closed it during the ZeroMQ handshake.
fn closed_mid_handshake(seen: &crate::net::Sightings) -> bool {
    // The connection's own event may not have been taken yet: at most one.
    seen.connections <= 1
        && seen.handshakes == 0
        && !seen.failures.is_empty()
        && seen
            .failures
            .iter()
            .all(|f| f.starts_with("the peer closed the connection during the handshake"))
}

/// What else a handshake failure may be, for a PAIR or PULL: a peer that closed its one
/// connection mid-handshake is a type that cannot talk to this one, or a sender that closed
/// (linger 0) right after queueing its stream (check_send with QUIT_DELAY_MS 0 and large
/// messages): which, the receiver cannot tell.
pub(crate) fn mid_handshake_hint(
    kind: SocketType,
    seen: &crate::net::Sightings,
) -> Option<&'static str> {
    (kind != SocketType::Sub && closed_mid_handshake(seen)).then_some(
        "; or a sender that closed (linger 0) before its handshake completed, losing its whole stream (a fast quit: check_send with QUIT_DELAY_MS 0 does; give it a QUIT_DELAY_MS): cannot tell which from here, check_send's output says",
    )
}

/// What check_recv received.
#[derive(Debug, Clone, Serialize)]
pub struct RecvResult {
    /// "check_recv", its socket and COUNT (the messages to receive), first in the JSON.
    #[serde(flatten)]
    pub socket: CheckSocket,
    /// The longest wait for a message, ms.
    pub timeout_ms: u64,
    /// Why receiving stopped: count, end_mark or timeout.
    pub ended: Ended,
    /// Messages received, duplicates included.
    pub received: u64,
    /// When the first message arrived, ns after the receiver started.
    pub first_after_ns: Option<u64>,
    /// Delivered rate, from the first message to the last.
    pub delivered: Throughput,
    /// delivered as msg/s.
    pub rate_msgs_per_s: f64,
    /// How long after its socket opened check_send sent the first message that arrived, ns
    /// (from its trailer): for a SUB, when the subscription had taken effect.
    pub first_sent_after_open_ns: Option<u64>,
    /// The sender's pace over the messages that arrived, from their send times, msg/s.
    pub sender_rate_msgs_per_s: Option<f64>,
    /// The loss ledger. Without the sender's end mark, a stream that stopped is taken to
    /// have COUNT messages; one that reached COUNT, to end at the highest number seen.
    pub loss: LossSummary,
    /// The gap lines printed (the first 1000).
    pub gap_lines: Vec<GapLine>,
    /// How many gap lines were printed.
    pub gap_lines_total: u64,
    /// Whether the sender had disconnected when receiving stopped (tcp and ipc).
    pub sender_disconnected: Option<bool>,
    /// Why messages were lost or the stream stopped, with the fix (None when complete).
    pub causes: Vec<Cause>,
    /// The stream broke the protocol part-way; the figures are of what came before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_error: Option<String>,
}

impl RecvResult {
    /// The causes as one line.
    pub fn cause_line(&self) -> String {
        super::cause::one_line(&self.causes)
    }
}

/// Runs check_recv. `on_ready` gets the endpoint bound; `on_line` each gap line as it is
/// due; `on_wait` the state of a wait that lasts (about every 100 ms).
pub fn check_recv(
    ctx: &zmq::Context,
    cfg: &RecvConfig,
    on_ready: impl FnOnce(&str),
    on_line: &mut dyn FnMut(&GapLine),
    on_wait: &mut dyn FnMut(&WaitStatus),
) -> Result<RecvResult> {
    debug_assert!(RECEIVING.contains(&cfg.kind));
    let mut s = open_receiver(
        ctx,
        cfg.kind,
        &cfg.endpoint,
        cfg.side,
        cfg.timeout,
        Some(cfg.max_size),
    )?;
    on_ready(s.endpoint.as_str());
    let mut r = receive(
        &mut s.sock,
        s.watch.as_ref(),
        Loop {
            count: Some(cfg.count),
            timeout: cfg.timeout,
            verbose: cfg.verbose,
            sender_done: None,
            on_line,
            on_wait,
        },
    )?;
    let came_and_went = r
        .sightings
        .as_ref()
        .is_some_and(|seen| came_and_went(cfg.kind, r.disconnected, seen));
    // Interrupted: the report says what arrived, even nothing.
    let interrupted = r.ended == Ended::Interrupted;
    if r.arrivals == 0 && r.protocol_error.is_none() && !came_and_went && !interrupted {
        return Err(nothing_came(cfg, &s));
    }
    if r.protocol_error.is_some() {
        // Receiving stopped at the message that broke the protocol, not after a timeout;
        // what was not read is neither lost nor a cause's evidence.
        r.ended = Ended::ProtocolError;
    }
    // Nor is what was still to come when a stop signal came.
    let mut loss = r.summary(match r.ended {
        Ended::ProtocolError | Ended::Interrupted => None,
        _ => Some(cfg.count),
    });
    let delivered = r.delivered();
    let causes = if matches!(r.ended, Ended::ProtocolError | Ended::Interrupted) {
        Vec::new()
    } else if r.arrivals == 0 {
        // A sender connected and left, and nothing arrived: for a SUB the whole stream went
        // before the subscription (the ledger places it at the start), else it quit before
        // anything was delivered (at the end).
        if cfg.kind == SocketType::Sub {
            loss.lost_at_start = loss.lost_at_end;
            loss.lost_at_end = 0;
        }
        vec![super::cause::nothing_arrived(cfg.kind, cfg.count)]
    } else {
        recv_cause(cfg.kind, &loss, r.ended, r.disconnected, &r)
    };
    Ok(RecvResult {
        socket: CheckSocket::of(
            "check_recv",
            cfg.kind,
            cfg.side,
            &cfg.endpoint,
            s.endpoint.as_str().to_string(),
            cfg.count,
        ),
        timeout_ms: cfg.timeout.as_millis() as u64,
        ended: r.ended,
        received: r.arrivals,
        first_after_ns: r.first_ns.map(|f| f - r.start_ns),
        rate_msgs_per_s: delivered.msgs_per_sec(),
        delivered,
        first_sent_after_open_ns: r.joined_after_ns().map(|n| n as u64),
        sender_rate_msgs_per_s: r.sender_ns_per_msg().filter(|&n| n > 0.0).map(|n| 1e9 / n),
        loss,
        gap_lines: r.gap_lines.clone(),
        gap_lines_total: r.gap_lines_total,
        sender_disconnected: r.disconnected,
        causes,
        protocol_error: r.protocol_error.clone(),
    })
}

/// The error when nothing arrived and no sender came and went: the receiver waited for
/// TIMEOUT in vain.
fn nothing_came(cfg: &RecvConfig, s: &Opened) -> Error {
    let waiting = Waiting {
        endpoint: s.endpoint.as_str(),
        peer: "check_send",
        timeout: cfg.timeout,
        expected: cfg.count,
        unit: "messages",
        watch: s.watch.as_ref(),
    };
    // check_recv waits as PTMP's does, for its TIMEOUT argument: it has no --timeout.
    match waiting.error(zmq::Error::EAGAIN, 0, String::new()) {
        Error::PeerAbsent {
            endpoint,
            peer,
            timeout,
            ..
        } => Error::PeerAbsent {
            endpoint,
            peer,
            timeout,
            raise: "TIMEOUT (check_recv's last argument, in ms)".into(),
        },
        Error::Protocol(why) => {
            let hint = s
                .watch
                .as_ref()
                .and_then(|w| mid_handshake_hint(cfg.kind, &w.sightings()))
                .unwrap_or_default();
            Error::Protocol(format!("{why}{hint}"))
        }
        e => e,
    }
}

#[cfg(test)]
mod tests;
