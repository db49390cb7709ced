//! The throughput pair: local_thr (PULL or SUB, binds, measures) and remote_thr
//! (PUSH or PUB, connects, sends).

use crate::clock::{measure_timer_cost, now_ns, TimerCost};
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::{zmq_err, Error, Result};
use crate::header::{Header, FLAG_END, FLAG_TIMESTAMP, HEADER_LEN};
use crate::msg::{set_int_option, RawMsg};
use crate::net::{check_size, open_socket, PeerWatch, Waiting};
use crate::progress::Progress;
use crate::stats::{LatencyHistogram, LatencySummary, Ledger, LossSummary, Throughput};
use serde::Serialize;
use std::time::Duration;

/// ZMQ_XPUB_NODROP from zmq.h: block at the high-water mark instead of dropping.
const ZMQ_XPUB_NODROP: i32 = 69;

/// The socket pattern of the throughput pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// PUSH connects and sends, PULL binds and receives (libzmq's tools).
    PushPull,
    /// PUB connects and sends, SUB binds and receives (the Ruby examples of seed 000).
    PubSub,
}

/// Settings of one side of the throughput pair.
#[derive(Debug, Clone)]
pub struct ThrConfig {
    /// Where to bind or connect.
    pub endpoint: Endpoint,
    /// Bind (local_thr) or connect (remote_thr).
    pub side: Side,
    /// Message size in bytes.
    pub size: usize,
    /// Messages in the run.
    pub count: u64,
    /// Longest wait for the peer, per message.
    pub timeout: Duration,
    /// Socket pattern.
    pub pattern: Pattern,
    /// Sender: carry the measurement header (false: the plain C loop).
    pub instrumented: bool,
    /// Sender: put the send time in every n-th message (and the last).
    pub stamp_every: u64,
    /// High-water mark for the measured socket (None: libzmq's default of 1000).
    pub hwm: Option<i32>,
    /// PUB/SUB sender: behave like a plain PUB (drop at the HWM, start without waiting for
    /// the subscription) instead of waiting and blocking.
    pub lossy: bool,
    /// Sender: the stream id written in the header.
    pub stream_id: u32,
}

/// What local_thr measured.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiverResult {
    /// The command.
    pub command: &'static str,
    /// Endpoint bound.
    pub endpoint: String,
    /// Its transport.
    pub transport: Transport,
    /// Socket pattern.
    pub pattern: Pattern,
    /// Message size in bytes.
    pub message_size: usize,
    /// Messages received (the run's count unless the stream ended early with loss).
    pub message_count: u64,
    /// From the first message to the last, ns (libzmq's timing).
    pub elapsed_ns: u64,
    /// libzmq's figure: message_count / elapsed, truncated to whole msg/s.
    pub mean_throughput_msgs: u64,
    /// libzmq's figure: mean_throughput_msgs x size x 8 / 10^6.
    pub mean_throughput_mbps: f64,
    /// Delivered rate at the receiver.
    pub delivered: Throughput,
    /// Whether messages carried the measurement header.
    pub header: bool,
    /// Loss, duplicates and reorders by sequence number (with a header only).
    pub loss: Option<LossSummary>,
    /// One-way latency from send to receipt, over the time-stamped messages (same host only).
    pub one_way: Option<LatencySummary>,
    /// The histogram behind `one_way`.
    pub one_way_histogram: Option<LatencyHistogram>,
    /// The cost of reading the clock on this machine.
    pub timer: TimerCost,
}

/// What remote_thr did.
#[derive(Debug, Clone, Serialize)]
pub struct SenderResult {
    /// The command.
    pub command: &'static str,
    /// Endpoint connected to.
    pub endpoint: String,
    /// Its transport.
    pub transport: Transport,
    /// Socket pattern.
    pub pattern: Pattern,
    /// Message size in bytes.
    pub message_size: usize,
    /// Messages sent.
    pub message_count: u64,
    /// Send (admission) rate: from the first send call to the return of the last.
    pub send: Throughput,
    /// PUB/SUB: time spent waiting for the subscription before sending, ns.
    pub subscription_wait_ns: Option<u64>,
    /// "instrumented" or "plain".
    pub mode: &'static str,
    /// Whether messages carried the measurement header.
    pub header: bool,
    /// Whether the receiver hung up within the timeout after the last message (tcp and ipc;
    /// None for inproc). False means the tail may not have been delivered.
    pub peer_closed: Option<bool>,
}

/// local_thr: binds a PULL (or SUB) socket and receives `count` messages of `size` bytes.
///
/// `on_ready` gets the endpoint actually bound, before the first message is awaited.
pub fn local_thr(
    ctx: &zmq::Context,
    cfg: &ThrConfig,
    on_ready: impl FnOnce(&str),
) -> Result<ReceiverResult> {
    let timer = measure_timer_cost(100_000);
    let kind = match cfg.pattern {
        Pattern::PushPull => zmq::PULL,
        Pattern::PubSub => zmq::SUB,
    };
    let (mut s, bound) = open_socket(ctx, kind, &cfg.endpoint, cfg.side, cfg.timeout, |_| Ok(()))?;
    if let Some(hwm) = cfg.hwm {
        s.set_rcvhwm(hwm).map_err(zmq_err("setting ZMQ_RCVHWM"))?;
    }
    if cfg.pattern == Pattern::PubSub {
        s.set_subscribe(b"").map_err(zmq_err("subscribing"))?;
    }
    on_ready(&bound);
    let wait = Waiting {
        endpoint: &bound,
        peer: "remote_thr",
        timeout: cfg.timeout,
        expected: cfg.count,
        unit: "messages",
    };
    let mut ledger = Ledger::new();
    let mut hist = LatencyHistogram::new();
    let mut msg = RawMsg::new();
    // Reads the header of one message; true when it marks the end of the stream.
    let mut account = |msg: &mut RawMsg| -> Result<bool> {
        let h =
            Header::decode(msg.prefix(HEADER_LEN)).map_err(|e| Error::Protocol(e.to_string()))?;
        let Some(h) = h else {
            return Err(Error::Protocol(
                "a message without the measurement header arrived in a stream that had one".into(),
            ));
        };
        ledger.record(h.stream_id, h.sequence);
        if h.has_timestamp() {
            hist.record(now_ns().saturating_sub(h.send_ns));
        }
        Ok(h.flags & FLAG_END != 0)
    };

    msg.recv(&mut s, 0)
        .map_err(|e| wait.error(e, 0, String::new()))?;
    check_size(&msg, cfg.size, 0)?;
    let header =
        cfg.size >= HEADER_LEN && matches!(Header::decode(msg.prefix(HEADER_LEN)), Ok(Some(_)));
    let start = now_ns();
    let mut received = 1;
    let mut progress = Progress::new("messages", cfg.count);
    let mut ended = header && account(&mut msg)?;
    while received < cfg.count && !ended {
        if let Err(e) = msg.recv(&mut s, 0) {
            let detail = if header {
                let l = ledger.summary(None);
                format!(" ({} lost so far by sequence number)", l.lost)
            } else {
                String::new()
            };
            return Err(wait.error(e, received, detail));
        }
        check_size(&msg, cfg.size, received)?;
        received += 1;
        progress.tick(received);
        if header {
            ended = account(&mut msg)?;
        }
    }
    let end = now_ns();
    progress.finish();
    let elapsed_us = ((end - start) / 1000).max(1);
    // libzmq's formula, with the count it was given: count / elapsed_us * 10^6.
    let msgs = (received as f64 / elapsed_us as f64 * 1_000_000.0) as u64;
    Ok(ReceiverResult {
        command: "local_thr",
        endpoint: bound,
        transport: cfg.endpoint.transport(),
        pattern: cfg.pattern,
        message_size: cfg.size,
        message_count: received,
        elapsed_ns: end - start,
        mean_throughput_msgs: msgs,
        mean_throughput_mbps: msgs as f64 * cfg.size as f64 * 8.0 / 1_000_000.0,
        delivered: Throughput {
            messages: received,
            payload_bytes: received * cfg.size as u64,
            start_ns: start,
            end_ns: end,
        },
        header,
        loss: header.then(|| ledger.summary(Some(cfg.count))),
        one_way: header.then(|| hist.summary()),
        one_way_histogram: header.then_some(hist),
        timer,
    })
}

/// remote_thr: connects a PUSH (or PUB) socket and sends `count` messages of `size` bytes.
pub fn remote_thr(ctx: &zmq::Context, cfg: &ThrConfig) -> Result<SenderResult> {
    let kind = match (cfg.pattern, cfg.lossy) {
        (Pattern::PushPull, _) => zmq::PUSH,
        (Pattern::PubSub, true) => zmq::PUB,
        // XPUB is PUB on the wire; it also tells us when the subscription has arrived.
        (Pattern::PubSub, false) => zmq::XPUB,
    };
    let (mut s, endpoint) =
        open_socket(ctx, kind, &cfg.endpoint, cfg.side, cfg.timeout, |_| Ok(()))?;
    let watch = PeerWatch::new(ctx, &s, &cfg.endpoint)?;
    if let Some(hwm) = cfg.hwm {
        s.set_sndhwm(hwm).map_err(zmq_err("setting ZMQ_SNDHWM"))?;
    }
    let wait = Waiting {
        endpoint: &endpoint,
        peer: "local_thr",
        timeout: cfg.timeout,
        expected: cfg.count,
        unit: "messages",
    };
    let mut subscription_wait_ns = None;
    if kind == zmq::XPUB {
        set_int_option(&mut s, ZMQ_XPUB_NODROP, 1)?;
        let t = now_ns();
        let mut sub = RawMsg::new();
        sub.recv(&mut s, 0)
            .map_err(|e| wait.error(e, 0, String::new()))?;
        subscription_wait_ns = Some(now_ns() - t);
    }
    let use_header = cfg.instrumented && cfg.size >= HEADER_LEN;
    let every = cfg.stamp_every.max(1);
    let last = cfg.count - 1;
    let start = now_ns();
    let mut m = RawMsg::new();
    // Counts down to the next time-stamped message (no division on the hot path).
    let mut until_stamp = 0u64;
    for i in 0..cfg.count {
        m.reset_uninit(cfg.size)?;
        if use_header {
            let mut h = Header {
                flags: 0,
                stream_id: cfg.stream_id,
                sequence: i,
                send_ns: 0,
            };
            if until_stamp == 0 || i == last {
                h.flags |= FLAG_TIMESTAMP;
                h.send_ns = now_ns();
                until_stamp = every;
            }
            until_stamp -= 1;
            if i == last {
                h.flags |= FLAG_END;
            }
            m.write_array(&h.to_bytes());
        }
        m.send(&mut s, 0).map_err(|e| {
            wait.error(
                e,
                i,
                " (sending blocked: the receiver stopped taking messages)".into(),
            )
        })?;
    }
    let end = now_ns();
    // Keep the connection up until the receiver has everything and hangs up.
    let peer_closed = watch.map(|w| w.wait_gone(cfg.timeout));
    Ok(SenderResult {
        command: "remote_thr",
        endpoint,
        transport: cfg.endpoint.transport(),
        pattern: cfg.pattern,
        message_size: cfg.size,
        message_count: cfg.count,
        send: Throughput {
            messages: cfg.count,
            payload_bytes: cfg.count * cfg.size as u64,
            start_ns: start,
            end_ns: end,
        },
        subscription_wait_ns,
        mode: if cfg.instrumented {
            "instrumented"
        } else {
            "plain"
        },
        header: use_header,
        peer_closed,
    })
}
