//! The latency pair: local_lat (REP, echoes) and remote_lat (REQ, measures round trips).

use crate::clock::{measure_timer_cost, now_ns, TimerCost};
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_TIMESTAMP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::net::{check_size, open_socket, PeerWatch, Waiting};
use crate::progress::Progress;
use crate::stats::{LatencyHistogram, LatencySummary, LossSummary, StreamLedger};
use serde::Serialize;
use std::time::Duration;

/// How the echo side answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EchoMode {
    /// Send the received message object back; read the measurement header if there is one
    /// (to check the sequence). libzmq's local_lat does the same, less the header check.
    Inspect,
    /// Send the received message object back without reading or copying its content.
    ZeroCopy,
    /// Copy the content into a new message and send that (what most applications do).
    Copy,
}

/// Settings of one side of the latency pair.
#[derive(Debug, Clone)]
pub struct LatConfig {
    /// Where to bind or connect.
    pub endpoint: Endpoint,
    /// Bind (local_lat) or connect (remote_lat); inproc_lat swaps them, as libzmq's does.
    pub side: Side,
    /// Message size in bytes.
    pub size: usize,
    /// Round trips.
    pub count: u64,
    /// Longest wait for the peer, per message.
    pub timeout: Duration,
    /// remote_lat: carry the header and time every round trip (false: the plain C loop).
    pub instrumented: bool,
    /// local_lat: how to echo.
    pub echo: EchoMode,
}

/// What remote_lat measured.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyResult {
    /// The command that measured.
    pub command: &'static str,
    /// Endpoint used.
    pub endpoint: String,
    /// Its transport.
    pub transport: Transport,
    /// Message size in bytes.
    pub message_size: usize,
    /// Round trips made.
    pub roundtrip_count: u64,
    /// Time of the whole loop, ns.
    pub elapsed_ns: u64,
    /// libzmq's figure: elapsed / (2 x round trips), in us.
    pub average_latency_us: f64,
    /// "instrumented" (header and a clock reading around every round trip) or "plain".
    pub mode: &'static str,
    /// Whether replies carried the measurement header back (checked for sequence).
    pub header: bool,
    /// Round-trip time distribution (instrumented mode only).
    pub rtt: Option<LatencySummary>,
    /// The histogram behind `rtt`, mergeable.
    pub rtt_histogram: Option<LatencyHistogram>,
    /// The cost of reading the clock on this machine.
    pub timer: TimerCost,
}

/// What local_lat saw.
#[derive(Debug, Clone, Serialize)]
pub struct EchoResult {
    /// The command.
    pub command: &'static str,
    /// Endpoint bound (with the real port when a wildcard was given).
    pub endpoint: String,
    /// Message size in bytes.
    pub message_size: usize,
    /// Round trips expected.
    pub roundtrip_count: u64,
    /// Messages echoed.
    pub echoed: u64,
    /// How the echo was made.
    pub echo: EchoMode,
    /// From the first request to the last reply, ns.
    pub elapsed_ns: u64,
    /// Whether requests carried the measurement header.
    pub header: bool,
    /// Sequence check of the requests (with a header only).
    pub loss: Option<LossSummary>,
}

/// local_lat: binds a REP socket and echoes `count` messages of `size` bytes.
///
/// `on_ready` gets the endpoint actually bound, before the first message is awaited.
pub fn local_lat(
    ctx: &zmq::Context,
    cfg: &LatConfig,
    on_ready: impl FnOnce(&str),
) -> Result<EchoResult> {
    let (mut s, bound) = open_socket(ctx, zmq::REP, &cfg.endpoint, cfg.side, cfg.timeout, |_| {
        Ok(())
    })?;
    let watch = PeerWatch::new(ctx, &s, &cfg.endpoint)?;
    on_ready(&bound);
    let wait = Waiting {
        endpoint: &bound,
        peer: "remote_lat",
        timeout: cfg.timeout,
        expected: cfg.count,
        unit: "round trips",
    };
    let mut msg = RawMsg::new();
    let mut ledger = StreamLedger::new();
    let mut header = false;
    let mut start = 0;
    for i in 0..cfg.count {
        msg.recv(&mut s, 0)
            .map_err(|e| wait.error(e, i, String::new()))?;
        if i == 0 {
            start = now_ns();
        }
        check_size(&msg, cfg.size, i)?;
        match cfg.echo {
            EchoMode::ZeroCopy => msg.send(&mut s, 0),
            EchoMode::Inspect => {
                if cfg.size >= HEADER_LEN && (i == 0 || header) {
                    let h = Header::decode(msg.prefix(HEADER_LEN))
                        .map_err(|e| Error::Protocol(e.to_string()))?;
                    if let Some(h) = h {
                        header = true;
                        ledger.record(h.sequence);
                    }
                }
                msg.send(&mut s, 0)
            }
            EchoMode::Copy => RawMsg::copy_of(msg.bytes())?.send(&mut s, 0),
        }
        .map_err(|e| wait.error(e, i + 1, " (the reply could not be sent)".into()))?;
    }
    let elapsed = now_ns() - start;
    // Keep the last reply's connection up until remote_lat has it and hangs up.
    if let Some(w) = watch {
        w.wait_gone(cfg.timeout);
    }
    Ok(EchoResult {
        command: "local_lat",
        endpoint: bound,
        message_size: cfg.size,
        roundtrip_count: cfg.count,
        echoed: cfg.count,
        echo: cfg.echo,
        elapsed_ns: elapsed,
        header,
        loss: header.then(|| ledger.summary(Some(cfg.count))),
    })
}

/// remote_lat: connects a REQ socket, makes `count` round trips of `size` bytes and
/// measures them.
pub fn remote_lat(ctx: &zmq::Context, cfg: &LatConfig) -> Result<LatencyResult> {
    let timer = measure_timer_cost(100_000);
    let (mut s, endpoint) =
        open_socket(ctx, zmq::REQ, &cfg.endpoint, cfg.side, cfg.timeout, |_| {
            Ok(())
        })?;
    let wait = Waiting {
        endpoint: &endpoint,
        peer: "local_lat",
        timeout: cfg.timeout,
        expected: cfg.count,
        unit: "round trips",
    };
    let mut msg = RawMsg::zeroed(cfg.size)?;
    let use_header = cfg.instrumented && cfg.size >= HEADER_LEN;
    let mut hist = LatencyHistogram::new();
    let mut header_back = use_header;
    let mut progress = Progress::new("round trips", cfg.count);
    let start = now_ns();
    if cfg.instrumented {
        for i in 0..cfg.count {
            let t0 = now_ns();
            if header_back {
                let h = Header {
                    flags: FLAG_TIMESTAMP,
                    stream_id: 0,
                    sequence: i,
                    send_ns: t0,
                };
                msg.write_prefix(&h.to_bytes());
            }
            msg.send(&mut s, 0)
                .map_err(|e| wait.error(e, i, String::new()))?;
            msg.recv(&mut s, 0)
                .map_err(|e| wait.error(e, i, String::new()))?;
            let t1 = now_ns();
            check_size(&msg, cfg.size, i)?;
            if header_back {
                match Header::decode(msg.prefix(HEADER_LEN)) {
                    Ok(Some(h)) if h.sequence == i => {}
                    Ok(Some(h)) => {
                        return Err(Error::Protocol(format!(
                            "reply #{i} carries sequence {}; the echo side answered out of order",
                            h.sequence
                        )))
                    }
                    // The echo side rewrote the payload: measure on without the check.
                    _ => header_back = false,
                }
            }
            hist.record(t1 - t0);
            progress.tick(i);
        }
    } else {
        for i in 0..cfg.count {
            msg.send(&mut s, 0)
                .map_err(|e| wait.error(e, i, String::new()))?;
            msg.recv(&mut s, 0)
                .map_err(|e| wait.error(e, i, String::new()))?;
            check_size(&msg, cfg.size, i)?;
            progress.tick(i);
        }
    }
    progress.finish();
    let elapsed = now_ns() - start;
    Ok(LatencyResult {
        command: "remote_lat",
        endpoint,
        transport: cfg.endpoint.transport(),
        message_size: cfg.size,
        roundtrip_count: cfg.count,
        elapsed_ns: elapsed,
        average_latency_us: elapsed as f64 / 1000.0 / (cfg.count as f64 * 2.0),
        mode: if cfg.instrumented {
            "instrumented"
        } else {
            "plain"
        },
        header: use_header && header_back,
        rtt: cfg.instrumented.then(|| hist.summary()),
        rtt_histogram: cfg.instrumented.then_some(hist),
        timer,
    })
}
