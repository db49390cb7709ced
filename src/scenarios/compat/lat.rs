//! The latency pair: local_lat (REP, echoes) and remote_lat (REQ, measures round trips).

use super::Secrets;
use super::{run_reported, socket};
use crate::clock::{measure_timer_cost, TimerCost};
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::Result;
use crate::net::security::Mechanism;
use crate::roles::{HeaderUse, NodeSpec, Role};
use crate::stats::{LatencyHistogram, LatencySummary, LossSummary};
use crate::topology::{SocketOptions, SocketType};
use crate::zmq;
use serde::Serialize;
use std::time::Duration;

pub use crate::roles::EchoMode;

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
    /// Security mechanism of the pair.
    pub security: Mechanism,
    /// CURVE keys (None: those of libzmq's perf tools) and the GSSAPI principal of the pair.
    pub secrets: Secrets,
    /// remote_lat: close an interval of figures this often (`--interval`).
    pub interval: Option<Duration>,
}

/// What remote_lat measured.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyResult {
    /// The command that measured.
    pub command: &'static str,
    /// Security mechanism used.
    pub security: Mechanism,
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
    /// remote_lat: the first round trip, ns; with no warm-up it holds the wait for the
    /// echo side (a remote_lat started before its local_lat) and the handshake.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_roundtrip_ns: Option<u64>,
    /// remote_lat: libzmq's formula over the round trips after the first, us: the true
    /// figure when the first waited for the peer (None with one round trip).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub average_latency_after_first_us: Option<f64>,
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
    /// remote_lat: why the round trips stopped before the count (the echo side stopped
    /// answering); the figures are of the round trips done (`roundtrip_count`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<String>,
    /// With `--interval`: the figures per interval (round trips/s, round trip / 2), with the
    /// drift verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intervals: Option<crate::model::IntervalSeries>,
}

/// What local_lat saw.
#[derive(Debug, Clone, Serialize)]
pub struct EchoResult {
    /// The command.
    pub command: &'static str,
    /// Security mechanism used.
    pub security: Mechanism,
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

/// local_lat: binds a REP socket and echoes `count` messages (the echo role).
///
/// `on_ready` gets the endpoint actually bound, before the first message is awaited.
pub fn local_lat(
    ctx: &zmq::Context,
    cfg: &LatConfig,
    on_ready: impl FnOnce(&str),
) -> Result<EchoResult> {
    let sock = socket(
        SocketType::Rep,
        &cfg.endpoint,
        cfg.side,
        SocketOptions::default(),
        cfg.security,
        &cfg.secrets,
    );
    let mut spec = NodeSpec::single("local_lat", Role::Echo, sock, cfg.timeout);
    spec.size = cfg.size;
    spec.expect = cfg.count;
    spec.header = HeaderUse::Detect;
    spec.echo = cfg.echo;
    spec.peer_label = Some("remote_lat".into());
    let (r, endpoint) = run_reported(ctx, &spec, &cfg.endpoint, on_ready)?;
    let rt = r.round_trips.unwrap_or_default();
    if let Some(why) = r
        .cut_short
        .as_ref()
        .filter(|_| crate::interrupt::interrupted())
    {
        return Err(crate::error::Error::Interrupted(format!(
            "{why} (echoed {} of {} round trips)",
            rt.messages, cfg.count
        )));
    }
    if r.cut_short.is_some() {
        return Err(crate::error::Error::PeerStopped {
            endpoint,
            done: rt.messages,
            expected: cfg.count,
            unit: "round trips".into(),
            timeout: cfg.timeout,
            detail: String::new(),
        });
    }
    Ok(EchoResult {
        command: "local_lat",
        security: cfg.security,
        endpoint,
        message_size: cfg.size,
        roundtrip_count: cfg.count,
        echoed: rt.messages,
        echo: cfg.echo,
        elapsed_ns: rt.elapsed_ns(),
        header: r.header,
        loss: r.ledger.map(|l| l.summary(Some(cfg.count))),
    })
}

/// remote_lat: connects a REQ socket and times `count` round trips (the ping role).
pub fn remote_lat(ctx: &zmq::Context, cfg: &LatConfig) -> Result<LatencyResult> {
    let timer = measure_timer_cost(100_000);
    let sock = socket(
        SocketType::Req,
        &cfg.endpoint,
        cfg.side,
        SocketOptions::default(),
        cfg.security,
        &cfg.secrets,
    );
    let mut spec = NodeSpec::single("remote_lat", Role::Ping, sock, cfg.timeout);
    spec.size = cfg.size;
    spec.count = cfg.count;
    spec.header = if cfg.instrumented {
        HeaderUse::Detect
    } else {
        HeaderUse::Never
    };
    spec.full_rtt = true;
    spec.peer_label = Some("local_lat".into());
    spec.keep_partial = true;
    spec.interval_ms = cfg.interval.map(|d| d.as_millis().max(1) as u64);
    let (r, endpoint) = run_reported(ctx, &spec, &cfg.endpoint, |_| {})?;
    let intervals = cfg.interval.map(|d| {
        crate::model::IntervalSeries::new(
            "remote_lat".into(),
            1,
            d.as_secs_f64() * 1e3,
            r.intervals.clone(),
        )
    });
    let elapsed = r.round_trips.map(|t| t.elapsed_ns()).unwrap_or(0);
    // The round trips done: the count, or fewer when the echo side stopped part-way.
    let done = r.round_trips.map_or(cfg.count, |t| t.messages).max(1);
    let first = r.first_round_trip_ns;
    let after_first = first
        .filter(|_| done > 1)
        .map(|f| elapsed.saturating_sub(f) as f64 / 1000.0 / ((done - 1) as f64 * 2.0));
    Ok(LatencyResult {
        command: "remote_lat",
        security: cfg.security,
        endpoint,
        transport: cfg.endpoint.transport(),
        message_size: cfg.size,
        roundtrip_count: done,
        elapsed_ns: elapsed,
        average_latency_us: elapsed as f64 / 1000.0 / (done as f64 * 2.0),
        first_roundtrip_ns: first,
        average_latency_after_first_us: after_first,
        mode: if cfg.instrumented {
            "instrumented"
        } else {
            "plain"
        },
        header: r.header,
        rtt: r.rtt.as_ref().map(|h| h.summary()),
        rtt_histogram: r.rtt,
        timer,
        cut_short: r.cut_short,
        intervals,
    })
}
