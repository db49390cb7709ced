//! The throughput pair: local_thr (PULL or SUB, binds, measures) and remote_thr
//! (PUSH or PUB, connects, sends).

use super::Secrets;
use super::{run_reported, socket};
use crate::clock::{measure_timer_cost, TimerCost};
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::Result;
use crate::net::security::Mechanism;
use crate::roles::{HeaderUse, NodeSpec, Role, RoleReport};
use crate::stats::{
    loss_causes, Cause, ClockCheck, Facts, LatencyHistogram, LatencySummary, LossSummary,
    Throughput,
};
use crate::topology::{SocketOptions, SocketType};
use crate::zmq;
use serde::Serialize;
use std::time::Duration;

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
    /// Security mechanism of the pair.
    pub security: Mechanism,
    /// CURVE keys (None: those of libzmq's perf tools) and the GSSAPI principal of the pair.
    pub secrets: Secrets,
    /// Receiver: close an interval of figures this often (`--interval`).
    pub interval: Option<Duration>,
}

/// What both sides of the throughput pair report first: the command, its socket, and the
/// stream it was given.
#[derive(Debug, Clone, Serialize)]
pub struct ThrSide {
    /// The command.
    pub command: &'static str,
    /// Security mechanism used.
    pub security: Mechanism,
    /// Endpoint bound (local_thr) or connected to (remote_thr).
    pub endpoint: String,
    /// Its transport.
    pub transport: Transport,
    /// Socket pattern.
    pub pattern: Pattern,
    /// Message size in bytes.
    pub message_size: usize,
    /// The `<message-count>` argument: the messages the stream was to carry (local_thr
    /// prints it on its "message count" line, as libzmq's tool does), or to send.
    pub message_count: u64,
}

impl ThrSide {
    /// The side `command` of `cfg`, on `endpoint` (the one bound, or connected to).
    fn of(command: &'static str, cfg: &ThrConfig, endpoint: String) -> ThrSide {
        ThrSide {
            command,
            security: cfg.security,
            endpoint,
            transport: cfg.endpoint.transport(),
            pattern: cfg.pattern,
            message_size: cfg.size,
            message_count: cfg.count,
        }
    }
}

/// What local_thr measured.
#[derive(Debug, Clone, Serialize)]
pub struct ReceiverResult {
    /// The command and its socket (the endpoint bound), first in the JSON.
    #[serde(flatten)]
    pub side: ThrSide,
    /// Messages that arrived, duplicates included.
    pub arrivals: u64,
    /// Distinct messages that arrived (arrivals less duplicates; without a header, where
    /// duplicates cannot be told apart, the arrivals).
    pub distinct: u64,
    /// From the first message to the last, ns (libzmq's timing).
    pub elapsed_ns: u64,
    /// libzmq's figure over what arrived: distinct messages / elapsed, truncated to whole
    /// msg/s (libzmq divides its count, which is what arrived when nothing was lost).
    pub mean_throughput_msgs: u64,
    /// libzmq's figure: mean_throughput_msgs x size x 8 / 10^6.
    pub mean_throughput_mbps: f64,
    /// Delivered rate at the receiver.
    pub delivered: Throughput,
    /// Whether messages carried the measurement header.
    pub header: bool,
    /// Loss, duplicates and reorders by sequence number (with a header only).
    pub loss: Option<LossSummary>,
    /// One-way latency from send to receipt, over the time-stamped messages (same host
    /// only: absent when the clock check found stamps of another clock, see `clock`).
    pub one_way: Option<LatencySummary>,
    /// The histogram behind `one_way`.
    pub one_way_histogram: Option<LatencyHistogram>,
    /// What the check of the send stamps found: stamps from this host's future or older
    /// than the timeout mean the sender is on another host's clock, and no one-way figure
    /// is given (absent: every stamp was possible on this clock).
    #[serde(skip_serializing_if = "ClockCheck::is_same_clock")]
    pub clock: ClockCheck,
    /// The cost of reading the clock on this machine.
    pub timer: TimerCost,
    /// Why the stream ended before its end mark came (nothing arrived for the timeout).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<String>,
    /// The messages the sender's stream had, as its end mark said, when that is fewer than
    /// `message_count` (the sender was given a smaller count): `loss` is of that stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_length: Option<u64>,
    /// The stream broke the protocol part-way; the figures are of what arrived before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_error: Option<String>,
    /// With `--interval`: the figures per interval, with the drift verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub intervals: Option<crate::model::IntervalSeries>,
    /// How many senders' streams (stream ids) arrived: more than one when a sender was
    /// restarted or several sent at once (for the cause; not in the JSON).
    #[serde(skip)]
    pub streams: usize,
}

/// What remote_thr did.
#[derive(Debug, Clone, Serialize)]
pub struct SenderResult {
    /// The command and its socket (the endpoint connected to), first in the JSON.
    #[serde(flatten)]
    pub side: ThrSide,
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
    /// Why it sent fewer than asked, if it did: "interrupted by SIGTERM after 1234
    /// messages sent" (`send` counts what left).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<String>,
}

/// local_thr: binds a PULL (or SUB) socket and receives `count` messages of `size` bytes
/// (the sink role, which finds out from the first message whether the sender is zmqperf).
///
/// `on_ready` gets the endpoint actually bound, before the first message is awaited. A
/// stream that stops short ends after the timeout with what arrived (`cut_short`).
pub fn local_thr(
    ctx: &zmq::Context,
    cfg: &ThrConfig,
    on_ready: impl FnOnce(&str),
) -> Result<ReceiverResult> {
    let timer = measure_timer_cost(100_000);
    let (kind, subscribe) = match cfg.pattern {
        Pattern::PushPull => (SocketType::Pull, None),
        Pattern::PubSub => (SocketType::Sub, Some(vec![String::new()])),
    };
    let options = SocketOptions {
        rcvhwm: cfg.hwm,
        subscribe,
        ..Default::default()
    };
    let sock = socket(
        kind,
        &cfg.endpoint,
        cfg.side,
        options,
        cfg.security,
        &cfg.secrets,
    );
    let mut spec = NodeSpec::single("local_thr", Role::Sink, sock, cfg.timeout);
    spec.size = cfg.size;
    spec.streams = vec![(cfg.stream_id, cfg.count)];
    spec.header = HeaderUse::Detect;
    spec.peer_label = Some("remote_thr".into());
    spec.interval_ms = cfg.interval.map(|d| d.as_millis().max(1) as u64);
    let (r, endpoint) = run_reported(ctx, &spec, &cfg.endpoint, on_ready)?;
    let intervals = cfg.interval.map(|d| {
        crate::model::IntervalSeries::new(
            "local_thr".into(),
            1,
            d.as_secs_f64() * 1e3,
            r.intervals.clone(),
        )
    });
    let delivered = r.delivered.unwrap_or_default();
    let header = r.header;
    let (loss, stream_length, streams) = stream_loss(&r, cfg, header);
    let arrivals = delivered.messages;
    let distinct = loss
        .as_ref()
        .map_or(arrivals, |l| arrivals.saturating_sub(l.duplicated));
    // Send stamps of another host's clock give no one-way figure (no offset is known
    // without a control channel); the check says why.
    let clock = r
        .latency
        .as_ref()
        .filter(|_| header)
        .map(|h| *h.clock())
        .unwrap_or_default();
    let one_way = r.latency.filter(|_| header && !clock.differs());
    let elapsed_us = (delivered.elapsed_ns() / 1000).max(1);
    // libzmq's formula, with the distinct messages that arrived: count / elapsed_us * 10^6.
    let msgs = (distinct as f64 / elapsed_us as f64 * 1_000_000.0) as u64;
    Ok(ReceiverResult {
        side: ThrSide::of("local_thr", cfg, endpoint),
        arrivals,
        distinct,
        elapsed_ns: delivered.elapsed_ns(),
        mean_throughput_msgs: msgs,
        mean_throughput_mbps: msgs as f64 * cfg.size as f64 * 8.0 / 1_000_000.0,
        delivered,
        header,
        loss,
        one_way: one_way.as_ref().map(|h| h.summary()),
        one_way_histogram: one_way,
        clock,
        timer,
        cut_short: r.cut_short,
        stream_length,
        protocol_error: r.protocol_error,
        intervals,
        streams,
    })
}

/// What the sink's ledger says of the stream, when it carried the header: its loss, the
/// stream's own length when that was short of the count, and how many senders' streams
/// arrived.
fn stream_loss(
    r: &RoleReport,
    cfg: &ThrConfig,
    header: bool,
) -> (Option<LossSummary>, Option<u64>, usize) {
    // The sink stops at the end mark or at the count. A stream that ended at its mark
    // short of the count had fewer messages: its loss is measured against its own length,
    // as check_recv does (not "lost ... a fast quit").
    let ended_at_mark = r.cut_short.is_none() && r.protocol_error.is_none();
    let mut stream_length = None;
    let streams = r
        .ledger
        .as_ref()
        .filter(|_| header)
        .map_or(1, |l| l.streams().len().max(1));
    let loss = r.ledger.as_ref().filter(|_| header).map(|l| {
        let own = l.summary(None);
        if ended_at_mark && own.expected < cfg.count {
            stream_length = Some(own.expected);
            own
        } else if crate::interrupt::interrupted() {
            // Ended by a signal: the holes are those before the last message seen; what
            // had not been sent yet is not lost.
            own
        } else {
            l.summary(Some(cfg.count))
        }
    });
    (loss, stream_length, streams)
}

/// remote_thr: connects a PUSH (or PUB) socket and sends `count` messages of `size` bytes
/// (the source role).
pub fn remote_thr(ctx: &zmq::Context, cfg: &ThrConfig) -> Result<SenderResult> {
    let kind = match (cfg.pattern, cfg.lossy) {
        (Pattern::PushPull, _) => SocketType::Push,
        (Pattern::PubSub, true) => SocketType::Pub,
        // XPUB is PUB on the wire; it also tells us when the subscription has arrived.
        (Pattern::PubSub, false) => SocketType::Xpub,
    };
    let options = SocketOptions {
        sndhwm: cfg.hwm,
        xpub_nodrop: (kind == SocketType::Xpub).then_some(true),
        ..Default::default()
    };
    let sock = socket(
        kind,
        &cfg.endpoint,
        cfg.side,
        options,
        cfg.security,
        &cfg.secrets,
    );
    let mut spec = NodeSpec::single("remote_thr", Role::Source, sock, cfg.timeout);
    spec.size = cfg.size;
    spec.count = cfg.count;
    spec.stamp_every = cfg.stamp_every;
    spec.stream_id = cfg.stream_id;
    spec.subscriptions = u32::from(kind == SocketType::Xpub);
    spec.header = if cfg.instrumented {
        HeaderUse::Always
    } else {
        HeaderUse::Never
    };
    spec.peer_label = Some("local_thr".into());
    let (r, endpoint) = run_reported(ctx, &spec, &cfg.endpoint, |_| {})?;
    Ok(SenderResult {
        side: ThrSide::of("remote_thr", cfg, endpoint),
        send: r.send.unwrap_or_default(),
        subscription_wait_ns: r.subscription_wait_ns,
        mode: if cfg.instrumented {
            "instrumented"
        } else {
            "plain"
        },
        header: r.header,
        peer_closed: r.peer_closed,
        cut_short: r.cut_short,
    })
}

/// The causes of the holes in a stream that ended (its end mark came, or COUNT distinct
/// messages), worst first, with the fix. `streams`: how many senders' streams arrived.
pub fn loss_cause(pattern: Pattern, l: &LossSummary, streams: usize) -> String {
    let s = loss_causes(l, &facts(pattern, true), |_, c| fix_of(c));
    with_streams(s, streams)
}

/// The causes of a stream that stopped short (its end mark never came), from where its
/// holes are, by the one rule of `stats::cause` with what local_thr knows of its sender:
/// every place that lost messages, worst first, with its fix. Without the header (`loss`
/// None) the holes have no place and the cause cannot be told.
pub fn cut_short_cause(pattern: Pattern, loss: Option<&LossSummary>, streams: usize) -> String {
    let f = facts(pattern, loss.is_some());
    let s = match loss {
        Some(l) => loss_causes(l, &f, |_, c| fix_of(c)),
        None => loss_causes(&LossSummary::default(), &f, |_, c| fix_of(c)),
    };
    with_streams(s, streams)
}

/// A clause for a receiver that got the streams of several senders (a sender restarted,
/// or two at once): each is counted against <message-count>.
fn with_streams(s: String, streams: usize) -> String {
    if streams > 1 {
        format!(
            "{s}; {streams} senders' streams arrived (a sender restarted, or several sent at once): each is counted against <message-count>, and the rate spans all of them and the gaps between"
        )
    } else {
        s
    }
}

/// What local_thr knows of its sender: the pattern says the receiving socket, and a PUSH
/// blocks rather than drop; whether a PUB waited for its subscription (remote_thr does,
/// unless --lossy) and how the sender ended are not known here.
fn facts(pattern: Pattern, placed: bool) -> Facts {
    Facts {
        receiver: Some(match pattern {
            Pattern::PushPull => SocketType::Pull,
            Pattern::PubSub => SocketType::Sub,
        }),
        placed,
        drops_at_hwm: (pattern == Pattern::PushPull).then_some(false),
        ..Facts::default()
    }
}

/// The compatible commands' fix for a cause.
fn fix_of(cause: Cause) -> Option<String> {
    match cause {
        Cause::SlowJoiner => Some("start the receiving side first, or leave out --lossy (the sender then waits for the subscription)".into()),
        Cause::HighWaterMark => Some("remote_thr --hwm 0 for no limit, or leave out --lossy so it blocks instead".into()),
        Cause::LateStart => Some("start local_thr before remote_thr, and check what else connects to or sits in front of its endpoint".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_cut_short_is_named_by_the_one_rule_with_the_pattern_s_fix() {
        let s = cut_short_cause(Pattern::PubSub, Some(&LossSummary::placed(0, 40, 0)), 1);
        assert!(
            s.starts_with("in the middle (40 lost), the high-water mark"),
            "{s}"
        );
        assert!(s.contains("remote_thr --hwm 0"), "{s}");
        let s = cut_short_cause(Pattern::PushPull, Some(&LossSummary::placed(0, 40, 0)), 1);
        assert!(s.contains("lost on the way") && !s.contains("fix:"), "{s}");
        let s = cut_short_cause(Pattern::PubSub, Some(&LossSummary::placed(7, 0, 0)), 1);
        assert!(s.contains("a slow joiner") && s.contains("--lossy"), "{s}");
        let s = cut_short_cause(Pattern::PushPull, Some(&LossSummary::placed(0, 0, 9)), 1);
        assert!(s.contains("stopped (or died)"), "{s}");
        // The causes of a stream that ended say the same, worst first.
        let s = loss_cause(Pattern::PubSub, &LossSummary::placed(1, 5, 0), 1);
        assert!(
            s.starts_with("in the middle (5 lost), the high-water mark"),
            "{s}"
        );
    }

    /// A Ruby PUB (no header) dropping at its high-water mark into local_thr: it was "the
    /// sender stopped early ... (without the header the holes cannot be placed)".
    #[test]
    fn without_the_header_the_cause_cannot_be_told() {
        let s = cut_short_cause(Pattern::PubSub, None, 1);
        assert!(s.starts_with("cannot tell: "), "{s}");
        assert!(
            s.contains("high-water mark") && s.contains("instrumented sender"),
            "{s}"
        );
        assert!(!s.contains("the sender stopped early or was given"), "{s}");
    }

    /// `remote_thr --pattern pubsub --lossy` into local_thr: the lost start is a slow joiner,
    /// not the high-water mark of the middle.
    #[test]
    fn a_lossy_publisher_s_start_is_named_beside_its_middle() {
        let s = cut_short_cause(
            Pattern::PubSub,
            Some(&LossSummary::placed(20_776, 70_718, 4_506)),
            1,
        );
        assert!(
            s.starts_with("in the middle (70718 lost), the high-water mark"),
            "{s}"
        );
        assert!(
            s.contains("at the start (20776 lost), a slow joiner"),
            "{s}"
        );
        assert!(s.contains("at the end (4506 lost), cannot tell"), "{s}");
    }

    /// A relay that dropped the first 500 of a PUSH/PULL stream: no PUB and no --lossy, so
    /// neither a slow joiner nor "leave out --lossy".
    #[test]
    fn a_push_stream_s_lost_start_is_not_a_slow_joiner() {
        let s = loss_cause(Pattern::PushPull, &LossSummary::placed(500, 0, 0), 1);
        assert!(
            s.starts_with("at the start (500 lost), not a slow joiner"),
            "{s}"
        );
        assert!(!s.contains("--lossy"), "{s}");
    }

    /// remote_thr killed part-way, a second one started into the same local_thr: the first
    /// stopped (not "a fast quit"), and the two streams are said.
    #[test]
    fn a_killed_sender_is_not_a_fast_quit_and_a_second_stream_is_said() {
        let s = loss_cause(Pattern::PushPull, &LossSummary::placed(0, 0, 20_000_000), 2);
        assert!(
            !s.contains("fast quit:") && !s.contains("a fast quit"),
            "{s}"
        );
        assert!(s.contains("the sender stopped (or died)"), "{s}");
        assert!(s.contains("2 senders' streams arrived"), "{s}");
    }
}
