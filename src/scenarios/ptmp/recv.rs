//! check_recv: opens a PAIR, SUB or PULL socket as PTMP's receiver does and receives on the
//! sink's loop with PTMP's rules (`roles::ptmp`) until it has COUNT messages, the sender's
//! last message (the header's end mark) arrived, or nothing came for TIMEOUT, printing
//! PTMP's gap lines as they come; then the loss ledger and, for a loss or a stream that
//! stopped, its cause and fix.

use super::cause::{recv_cause, Cause};
use super::gap::{GapLine, GapTracker, Missed};
use super::send::CheckSocket;
use super::{open_receiver, RECEIVING};
use crate::endpoint::{Endpoint, Side};
use crate::error::{Error, Result};
use crate::net::Waiting;
use crate::ptmp_wire::Wire;
use crate::roles::ptmp::{take, Limits};
pub use crate::roles::ptmp::{Ended, WaitStatus};
use crate::roles::Opened;
use crate::stats::{LossSummary, Throughput};
use crate::topology::SocketType;
use crate::zmq;
use serde::Serialize;
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

/// The figures of PTMP's check_recv's last line, `recv COUNT in T s or R kHz, missed M`
/// (czmq's `zsys_info`), computed as PTMP computes them.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PtmpSummary {
    /// COUNT (PTMP prints the count asked for, not the count received).
    pub count: u64,
    /// Seconds from the receiver's start to its end (the timeout's wait included).
    pub elapsed_s: f64,
    /// 0.001 x COUNT / elapsed_s.
    pub khz: f64,
    /// PTMP's missed: the forward jumps of the counts (see `gap::Missed`).
    pub missed: u64,
    /// When the line was due, seconds since the Unix epoch (czmq's log prefix shows it in
    /// local time).
    pub at_unix_s: i64,
}

/// What check_recv received.
#[derive(Debug, Clone, Serialize)]
pub struct RecvResult {
    /// "check_recv", its socket and COUNT (the messages to receive), first in the JSON.
    #[serde(flatten)]
    pub socket: CheckSocket,
    /// The longest wait for a message, ms.
    pub timeout_ms: u64,
    /// The stream's message format, told from its first message: zmqperf's measurement
    /// header or PTMP's TPSet messages (null: nothing arrived).
    pub wire: Option<Wire>,
    /// PTMP's check_recv's summary line's figures.
    pub ptmp_summary: PtmpSummary,
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
    /// What check_recv's process used: CPU as a share of one core, peak RSS and VIRT.
    pub resources: crate::model::ProcessUsage,
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
    let began = std::time::Instant::now();
    let mut s = open_receiver(
        ctx,
        cfg.kind,
        &cfg.endpoint,
        cfg.side,
        cfg.timeout,
        Some(cfg.max_size),
    )?;
    on_ready(s.endpoint.as_str());
    // PTMP's gap lines, from each arrival's sequence number: all printed, the first
    // GAP_LINES_KEPT kept for the JSON.
    let mut gaps = GapTracker::new(cfg.verbose);
    let mut missed = Missed::default();
    let (mut gap_lines, mut gap_lines_total) = (Vec::new(), 0u64);
    let limits = Limits {
        count: Some(cfg.count),
        timeout: cfg.timeout,
        sender_done: None,
    };
    let on_arrival = |seq, at_ns| {
        missed.next(seq);
        if let Some(line) = gaps.next(seq, at_ns) {
            on_line(&line);
            gap_lines_total += 1;
            if gap_lines.len() < GAP_LINES_KEPT {
                gap_lines.push(line);
            }
        }
    };
    let mut r = take(&mut s.sock, s.watch.as_ref(), limits, on_arrival, on_wait)?;
    let elapsed_s = crate::clock::now_ns().saturating_sub(r.start_ns) as f64 / 1e9;
    let ptmp_summary = PtmpSummary {
        count: cfg.count,
        elapsed_s,
        khz: if elapsed_s > 0.0 {
            0.001 * cfg.count as f64 / elapsed_s
        } else {
            0.0
        },
        missed: missed.total,
        at_unix_s: crate::ptmp_wire::now_us() / 1_000_000,
    };
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
        wire: r.wire,
        ptmp_summary,
        ended: r.ended,
        received: r.arrivals,
        first_after_ns: r.first_ns.map(|f| f - r.start_ns),
        rate_msgs_per_s: delivered.msgs_per_sec(),
        delivered,
        first_sent_after_open_ns: r.joined_after_ns().map(|n| n as u64),
        sender_rate_msgs_per_s: r.sender_ns_per_msg().filter(|&n| n > 0.0).map(|n| 1e9 / n),
        loss,
        gap_lines,
        gap_lines_total,
        sender_disconnected: r.disconnected,
        causes,
        protocol_error: r.protocol_error.clone(),
        resources: crate::roles::process_usage(began.elapsed()),
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
