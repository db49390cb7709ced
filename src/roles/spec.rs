//! What a role is given and what it gives back: the node spec (sent to a child process as
//! JSON), its resolved sockets, the modes of the header, the echo and the quit, and the
//! mergeable report.

use super::swarm;
use crate::endpoint::{Endpoint, Side};
use crate::model::RoleUsage;
use crate::stats::{LatencyHistogram, Ledger, Throughput};
use crate::topology::{IoMode, Role, SocketOptions, SocketType};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// A socket as the runner resolved it: concrete endpoints, options.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SockPlan {
    /// Its type.
    pub kind: SocketType,
    /// Endpoints to bind (wildcards allowed).
    pub bind: Vec<String>,
    /// Endpoints to connect to.
    pub connect: Vec<String>,
    /// Options from the topology.
    pub options: SocketOptions,
}

impl SockPlan {
    /// The transport of each of its endpoints (by scheme), binds first.
    pub fn transports(&self) -> impl Iterator<Item = crate::transport::Transport> + '_ {
        self.bind
            .iter()
            .chain(&self.connect)
            .filter_map(|e| e.split_once("://"))
            .filter_map(|(scheme, _)| crate::transport::Transport::parse(scheme))
    }

    /// One socket of `kind` bound to `ep` or connected to it, with `options`: the socket of
    /// a front-end's single node (a compatible command, a PTMP program).
    pub fn single(kind: SocketType, ep: &Endpoint, side: Side, options: SocketOptions) -> SockPlan {
        let e = vec![ep.as_str().to_string()];
        let (bind, connect) = match side {
            Side::Bind => (e, Vec::new()),
            Side::Connect => (Vec::new(), e),
        };
        SockPlan {
            kind,
            bind,
            connect,
            options,
        }
    }

    /// Whether this is the socket of `spec` that waits for subscriptions: the one its
    /// role's descriptor names (a source's only socket, a proxy's sending side).
    pub fn publishes(&self, spec: &NodeSpec) -> bool {
        spec.role.info().publishes.and_then(|i| spec.sockets.get(i)) == Some(self)
    }
}

/// Everything a node replica needs to run; sent to a child process as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeSpec {
    /// The replica's name: the node's, or `name[i]` for replicas.
    pub name: String,
    /// What it does.
    pub role: Role,
    /// Its sockets (a proxy: receiving side, then sending side).
    pub sockets: Vec<SockPlan>,
    /// Payload bytes per message.
    pub size: usize,
    /// Source: messages; ping: round trips.
    pub count: u64,
    /// Unmeasured messages or round trips first.
    pub warmup: u64,
    /// Source: messages per second (open loop), None for as fast as possible.
    pub rate: Option<f64>,
    /// Source: time-stamp every n-th message at full speed (every message in open loop).
    pub stamp_every: u64,
    /// Longest wait for a peer, and longest idle time of a passive role, ms.
    pub timeout_ms: u64,
    /// Source: the stream id written in every header.
    #[serde(default)]
    pub stream_id: u32,
    /// Sink: the streams it expects, each with its message count.
    #[serde(default)]
    pub streams: Vec<(u32, u64)>,
    /// Sink or echo: ends by itself once everything expected has arrived (false: it gets a
    /// share of a load-balanced stream, so only the runner's stop ends it).
    #[serde(default)]
    pub ends_itself: bool,
    /// Echo: requests to expect (warm-up included) when it ends by itself.
    #[serde(default)]
    pub expect: u64,
    /// Source or echo: peers to see disconnect before closing (the last sender keeps its
    /// connection until the receivers hang up, so no tail is lost).
    #[serde(default)]
    pub peers: u32,
    /// Source on PUB/XPUB: subscriptions to wait for before sending (no slow joiner).
    #[serde(default)]
    pub subscriptions: u32,
    /// Ping on DEALER talking to REP: an empty delimiter frame first.
    #[serde(default)]
    pub delimiter: bool,
    /// Whether messages carry the measurement header (both sides zmqperf), or whether the
    /// receiving side finds out from the first message (a peer such as libzmq's C tools).
    #[serde(default)]
    pub header: HeaderUse,
    /// Echo: how a message goes back.
    #[serde(default)]
    pub echo: EchoMode,
    /// Ping: also keep the full round trips (libzmq's remote_lat figure).
    #[serde(default)]
    pub full_rtt: bool,
    /// Source: send on a tick schedule (the fan-out publisher).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticks: Option<crate::topology::Ticks>,
    /// Swarm: its subscribers and timeouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm: Option<swarm::SwarmSpec>,
    /// Who should be on the other side, for error messages (e.g. `remote_lat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_label: Option<String>,
    /// Ping played by a compatible command: a peer that stops part-way ends the loop with
    /// what was measured (`cut_short`) instead of an error, so the command prints it first.
    #[serde(skip)]
    pub keep_partial: bool,
    /// Swarm: the largest message its publisher sends, when the run knows it (it bounds
    /// the frames its SUB sockets take).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_frame: Option<usize>,
    /// Source: how it ends once its last message has left.
    #[serde(default)]
    pub quit: Quit,
    /// Source: typed frames, every frame's size (the first holds the header and
    /// `type_id`); sink: the frames its streams carry, checked on every message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<usize>,
    /// The type id of typed frames.
    #[serde(default)]
    pub type_id: u32,
    /// Source: log lines with these levels in turn (the topic frame); sink: its streams are
    /// such log lines (with its SUB prefixes, it knows which lines should come).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_levels: Vec<String>,
    /// Sink in a stream: the endpoint of the stream's end-of-transmission channel (a PUB the
    /// runner binds); the sink ends on its message instead of the end marks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eot: Option<String>,
    /// Source, sink, ping and echo: how it sends and receives.
    #[serde(default)]
    pub io: IoMode,
    /// The libzmq a node in a process of its own loads (`system` or a path; absent: the
    /// bundled one), as the runner's `--libzmq` chose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libzmq: Option<String>,
    /// A node in a process of its own ends itself this long after its start, ms, whatever
    /// its input does (the case timeout plus a grace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
    /// Sink and swarm: per stream id, the ns to add to that stream's send stamps to bring
    /// them onto this node's clock (its sender is on another host; the runner estimates the
    /// offset over the control channel). A stream not listed is on this node's own clock.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub send_offsets: Vec<(u32, i64)>,
    /// Sink and swarm: per stream id, the error bound of its offset in `send_offsets`, ns
    /// (a stream with an offset but no bound is reported as converted without one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub send_offset_error_ns: Vec<(u32, u64)>,
    /// Sink: close an interval of figures every this many ms (`--interval`), handed to
    /// the live hook and kept in the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_ms: Option<u64>,
    /// A role's own settings, from the fields of its node that only it takes (e.g. a slow
    /// sink's `work_us`), by field name: its spec fill writes them, the role reads them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub own: BTreeMap<String, u64>,
}

/// The name of a slow sink's own setting that makes it hold after its first message.
const HOLD_UNTIL_STOP: &str = "hold_until_stop";

/// How a source ends once its last message has left (what `zmqperf diagnose` compares).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quit {
    /// Keep the socket until the peers hang up (up to the timeout), so no tail is lost.
    #[default]
    WaitForPeer,
    /// ZMQ_LINGER=0 and close at once: whatever is still queued is thrown away.
    LingerZero,
    /// libzmq's default linger (-1): terminating the context waits for the queue to leave.
    DefaultLinger,
    /// Keep the socket until the runner's `stop` (up to the timeout), then close with
    /// linger 0.
    WaitForStop,
    /// Keep the socket for its own `hold_ms` (PTMP's QUIT_DELAY_MS), or until the runner's
    /// stop if that comes first, then close with the linger its options gave.
    Hold,
}

/// How a role uses the measurement header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeaderUse {
    /// Every message carries it (when it fits); one without is a protocol error.
    #[default]
    Always,
    /// Sink, echo and ping: use it if the first message (or reply) carries it.
    Detect,
    /// Source and ping: no header and no clock per message (libzmq's plain loop).
    Never,
}

/// How the echo role sends a request back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EchoMode {
    /// Reads the header of each request (the ledger of the requests), then sends it back.
    Inspect,
    /// Sends the received message itself back, without reading it (libzmq's local_lat).
    #[default]
    ZeroCopy,
    /// Sends a copy of the payload back (what a binding that copies does).
    Copy,
}

impl NodeSpec {
    /// The per-message timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }
}

/// What a node replica measured, mergeable with the reports of others.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct RoleReport {
    /// Latency samples (ping: round trip / 2; sink: send or due time to receipt).
    pub latency: Option<LatencyHistogram>,
    /// Sink: the latency of each stream (by stream id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stream_latency: Vec<(u32, LatencyHistogram)>,
    /// Source in open loop: actual minus due send time.
    pub send_delay: Option<LatencyHistogram>,
    /// Source asked to measure it ([`NodeSpec::time_full_sends`]): the time spent in send
    /// calls that found the socket full, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_send_ns: Option<u64>,
    /// Source's admission rate.
    pub send: Option<Throughput>,
    /// Sink's delivered rate.
    pub delivered: Option<Throughput>,
    /// Sink's ledger, per stream.
    pub ledger: Option<Ledger>,
    /// Proxy: messages forwarded (both directions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded: Option<u64>,
    /// Why a passive role ended before everything arrived (idle for the timeout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<String>,
    /// Whether the messages carried the measurement header.
    #[serde(default)]
    pub header: bool,
    /// Sink: the stream broke the protocol part-way (a message without the header, or of
    /// another version); the figures are of what arrived before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_error: Option<String>,
    /// Source on ticks: what the publisher did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<Box<super::publisher::PubResult>>,
    /// Swarm: every subscriber's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm: Option<Box<swarm::ChildReport>>,
    /// Ping: the full round trips, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<LatencyHistogram>,
    /// Ping without a warm-up: the first round trip, ns (it holds the wait for an echo
    /// started later, and the connection's handshake).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_round_trip_ns: Option<u64>,
    /// Ping and echo: round trips done, from the first to the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trips: Option<Throughput>,
    /// Source: time spent waiting for the subscriptions before sending, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_wait_ns: Option<u64>,
    /// Source and echo over tcp or ipc: whether every peer hung up within the timeout after
    /// the last message (false: the tail may not have been delivered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_closed: Option<bool>,
    /// CPU and memory.
    pub usage: Option<RoleUsage>,
    /// Sink in a stream: messages of its flows still on their way when the
    /// end-of-transmission message arrived (a worker that stopped there would lose them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eot_ahead: Option<u64>,
    /// A node in a process of its own: monotonic clock once its sockets were closed and its
    /// context terminated (where a linger is honoured, or not), ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_ns: Option<u64>,
    /// Sink or swarm receiving streams sent on other hosts: the bound on its one-way times,
    /// the two hosts' clock errors over the case, ns (set by the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_error_ns: Option<u64>,
    /// Source, sink, ping and echo in poll or timeout mode: how many times a send or a
    /// receive waited (poll: `zmq_poll` calls after EAGAIN; timeout: calls timed out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_waits: Option<u64>,
    /// Sink on udp: datagrams the kernel dropped at full receive buffers in its network
    /// namespace while it received (`RcvbufErrors`; others' count too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_drops: Option<u64>,
    /// Source with [`Quit::Hold`] over tcp or ipc: what its watch had seen when the hold
    /// ended (on this thread only: a role run here, not sent over the control channel).
    #[serde(skip)]
    pub sightings: Option<crate::net::Sightings>,
    /// Sink with [`NodeSpec::interval_ms`]: its figures per interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<crate::model::IntervalRecord>,
    /// Slow sink asked to keep them ([`NodeSpec::trace_arrivals`]): every message
    /// it took, in the order they came, up to the most it was to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Vec<Arrival>>,
}

/// One message a sink took, as its record keeps it ([`RoleReport::arrivals`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arrival {
    /// Its sequence number.
    pub sequence: u64,
    /// Its header's flags (the end mark among them).
    pub flags: u8,
    /// The send time in its header, ns (0 when not time-stamped).
    pub send_ns: u64,
    /// The receiver's clock when it had taken it, ns.
    pub arrival_ns: u64,
}

impl NodeSpec {
    /// The spec with the offsets the runner's start gave (streams sent on other hosts),
    /// which replace the spec's own `send_offsets` when there are any.
    pub fn started(&self, offsets: &[(u32, i64)]) -> std::borrow::Cow<'_, NodeSpec> {
        if offsets.is_empty() {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut s = self.clone();
        s.send_offsets = offsets.to_vec();
        std::borrow::Cow::Owned(s)
    }

    /// A spec with nothing set but the role, its one socket and the timeout: the
    /// compatible commands fill in the rest.
    pub fn single(name: &str, role: Role, socket: SockPlan, timeout: Duration) -> NodeSpec {
        NodeSpec {
            name: name.to_string(),
            role,
            sockets: vec![socket],
            size: 0,
            count: 0,
            warmup: 0,
            rate: None,
            stamp_every: 1,
            timeout_ms: timeout.as_millis() as u64,
            stream_id: 0,
            streams: Vec::new(),
            ends_itself: true,
            expect: 0,
            peers: 1,
            subscriptions: 0,
            delimiter: false,
            header: HeaderUse::Always,
            echo: EchoMode::ZeroCopy,
            full_rtt: false,
            ticks: None,
            swarm: None,
            peer_label: None,
            keep_partial: false,
            max_frame: None,
            quit: Quit::WaitForPeer,
            interval_ms: None,
            frames: Vec::new(),
            type_id: 0,
            log_levels: Vec::new(),
            eot: None,
            io: IoMode::Blocking,
            libzmq: crate::zmq::library::choice(),
            deadline_ms: None,
            send_offsets: Vec::new(),
            send_offset_error_ns: Vec::new(),
            own: BTreeMap::new(),
        }
    }

    /// How this receiver reads the send stamps of stream `stream`: with the stream's offset
    /// from the spec, or on its own clock; stamps older than `timeout` are impossible.
    pub fn one_way(&self, stream: u32, timeout: Duration) -> crate::stats::OneWay {
        crate::stats::OneWay::for_stream(
            &self.send_offsets,
            &self.send_offset_error_ns,
            stream,
            timeout,
        )
    }

    /// A slow sink that holds after its first message until the runner's stop (or its
    /// timeout), then reads on: a receiver that reads nothing until told, so that what it
    /// has not taken builds up upstream (what `zmqperf diagnose` measures of a sender's
    /// memory).
    pub fn hold_until_stop(&mut self) {
        self.own.insert(HOLD_UNTIL_STOP.to_string(), 1);
    }

    /// Whether this slow sink holds after its first message ([`NodeSpec::hold_until_stop`]).
    pub fn holds_until_stop(&self) -> bool {
        self.own.get(HOLD_UNTIL_STOP).is_some_and(|&v| v != 0)
    }

    /// The name of the peer for error messages, or `default`.
    pub(crate) fn peer_or<'a>(&'a self, default: &'a str) -> &'a str {
        self.peer_label.as_deref().unwrap_or(default)
    }
}

/// What a source says with its `sent`: when its send loop ran and, in a process of its
/// own, that process's resident memory around it. Every field is optional on the wire
/// (left out when not measured), so `{"type":"sent","v":1}` is still a whole message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentFacts {
    /// Monotonic clock at the first measured send, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_send_ns: Option<u64>,
    /// Monotonic clock after the last send returned, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_send_ns: Option<u64>,
    /// Resident memory (VmRSS) of the node's process before the first send, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_before_kib: Option<u64>,
    /// Resident memory of the node's process after the last send, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_after_kib: Option<u64>,
    /// Peak resident memory (VmHWM) of the node's process so far, KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_peak_kib: Option<u64>,
}
