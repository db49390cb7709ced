//! Topologies: every measurement is a socket graph. A topology is nodes (a role, a replica
//! count, a placement hint) and their sockets (a libzmq type, `bind[]`, `connect[]`,
//! options). The built-in shapes of the suite are shipped files read by the same code as a
//! user's file ([`load`]); [`check`] validates a topology before any socket opens and works
//! out how messages flow through it.

pub mod builtin;
pub mod check;
pub mod hosts;
pub mod load;
mod role;
pub mod security;
mod socket_type;

pub use role::{Ends, Latency, Role, RoleInfo, StreamPart};
use serde::{Deserialize, Serialize};
pub use socket_type::{SocketType, DEFAULT_GROUP, GROUP_MAX};
use std::collections::BTreeMap;

/// A socket graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Its name: the pattern column of reports and the middle of case ids.
    #[serde(default)]
    pub name: String,
    /// What it shows, in a sentence.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Case parameters the file sets (size, count, transport, ...); the command line may
    /// override them.
    #[serde(default)]
    pub params: Params,
    /// Cartesian sweeps: a parameter (`size`, or `NODE.FIELD` such as `sub.replicas` or
    /// `pub.socket.sndhwm`) and the values it takes. Expanded by [`load`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sweep: BTreeMap<String, Vec<serde_json::Value>>,
    /// The nodes.
    #[serde(alias = "node")]
    pub nodes: Vec<Node>,
    /// Hosts its nodes may be placed on (`host = "b"`), as a hosts file has them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hosts: BTreeMap<String, hosts::HostEntry>,
}

/// Case parameters of a topology.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Payload bytes per message (`64`, `"1KiB"`).
    pub size: Option<serde_json::Value>,
    /// Messages per source, or round trips per ping.
    pub count: Option<serde_json::Value>,
    /// Unmeasured messages or round trips first.
    pub warmup: Option<serde_json::Value>,
    /// Sources: messages per second (open loop).
    pub rate: Option<f64>,
    /// Repetitions of the case.
    pub repetitions: Option<u32>,
    /// Transport of `auto` binds: tcp, ipc or inproc.
    pub transport: Option<String>,
    /// I/O mode of every source, sink, ping and echo node that sets none of its own.
    pub io: Option<IoMode>,
}

/// How a role calls libzmq to send and receive (source, sink, ping and echo).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// Blocking `zmq_msg_send` / `zmq_msg_recv` (flags 0), as libzmq's own tools.
    #[default]
    Blocking,
    /// Every call with ZMQ_DONTWAIT; on EAGAIN the role waits in `zmq_poll` on the socket.
    Poll,
    /// Blocking calls bounded by ZMQ_SNDTIMEO / ZMQ_RCVTIMEO, retried (and counted) until
    /// the role's own timeout.
    Timeout,
}

impl IoMode {
    /// Its name in files and results.
    pub fn name(self) -> &'static str {
        match self {
            IoMode::Blocking => "blocking",
            IoMode::Poll => "poll",
            IoMode::Timeout => "timeout",
        }
    }
}

/// Where a node runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// A thread of the runner (needed for inproc).
    Thread,
    /// A child process (the same binary re-executed).
    Process,
    /// Left to the runner: a thread if the node uses inproc, else a process.
    #[default]
    Auto,
    /// A child process running a peer in another language (the node's `impl`).
    Foreign,
    /// A process on another host (the node's `host`), started through its launcher. Set by
    /// the runner.
    Remote,
}

/// A node: a role with its sockets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Node {
    /// Unique name; other nodes connect to it by this name.
    pub name: String,
    /// What it does.
    pub role: Role,
    /// Replicas of this node (e.g. 100 subscribers).
    #[serde(default = "one")]
    pub replicas: u32,
    /// Where it runs.
    #[serde(default)]
    pub placement: Placement,
    /// Its socket (a PTMP socket object is accepted verbatim).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<SocketSpec>,
    /// Its sockets, for a proxy: the receiving side first, then the sending side.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sockets: Vec<SocketSpec>,
    /// Source: messages (ping: round trips), overriding the case's count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<serde_json::Value>,
    /// Source or ping: payload size, overriding the case's size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<serde_json::Value>,
    /// Source: messages per second, overriding the case's rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Swarm: SUB sockets in each replica (process), all on one epoll set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subs: Option<u32>,
    /// Slow sink: the microseconds it works on each message it takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_us: Option<u64>,
    /// Source whose receivers' joins cannot be counted (a RADIO; a PUB over multicast): how
    /// long it lets them join before its first message, ms (default: by transport and
    /// receivers, see `roles::source::join`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join_ms: Option<u64>,
    /// Source: send on a tick schedule (a fan-out's publisher) instead of a stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticks: Option<Ticks>,
    /// Swarm: stop when nothing arrived for this long after the first message, ms
    /// (default: the run's timeout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_ms: Option<u64>,
    /// Swarm: longest wait for the first message, ms (default: the run's timeout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_timeout_ms: Option<u64>,
    /// Source or proxy publishing on PUB/XPUB: wait for every subscription before the
    /// first message (the default). `false` sends at once, as a plain PUB does, so a
    /// subscriber that joins late loses the start (a slow joiner, measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_subscriptions: Option<bool>,
    /// Source: typed multi-frame messages (a type id, then payload frames) instead of one
    /// frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<MessageFrames>,
    /// Source: log lines (the level as a topic frame, then the line) instead of one frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<LogLines>,
    /// Source or sink: the stream (a group of flows, as ACSflix has them) it belongs to. The
    /// sinks of a stream end on its end-of-transmission message, which the runner publishes
    /// on the stream's own PUB/SUB channel once every source of the stream has sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Source, sink, ping or echo: how it sends and receives (default: the case's
    /// `params.io`, else blocking).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoMode>,
    /// Who plays it: `zmqperf` (its own core, the default) or a peer in another language
    /// (`pyzmq`, `node`, `jeromq`, ...; docs/peers.md), placed as a child process.
    #[serde(default, rename = "impl", skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// The host it runs on (a name of the run's hosts; docs/hosts.md); default the
    /// runner's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The hosts its replicas are spread over, in turn (replica i on hosts[i % n]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
}

/// A source's typed multi-frame messages: the first frame holds the measurement header and
/// the type id, the others are payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageFrames {
    /// The type id written after the header in the first frame (4 bytes, little-endian).
    #[serde(default = "one")]
    pub type_id: u32,
    /// Every frame's size in bytes (a number or a string such as "1KiB"); the first holds
    /// the header and the type id, so it has at least 28 bytes.
    pub frames: Vec<serde_json::Value>,
}

/// A source's log lines: each message is a level (the topic frame a SUB filters on), then
/// the line (the header, then text) of the node's size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogLines {
    /// The level of each line in turn, repeated (default: a cycle of 20 lines with 1
    /// ERROR, 3 WARN, 6 INFO and 10 DEBUG).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<Vec<String>>,
}

/// A source's tick schedule: `per_tick` messages every `interval_ms`, `passes` times, after
/// `warmup` unmeasured ticks on the same schedule. The node's count is per_tick x passes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ticks {
    /// Time between ticks, ms (0: every message as fast as possible).
    pub interval_ms: f64,
    /// Messages per tick.
    pub per_tick: u64,
    /// Measured ticks.
    pub passes: u64,
    /// Unmeasured ticks first.
    #[serde(default)]
    pub warmup: u64,
    /// Without subscribers to wait for: how long to let them join first, ms.
    #[serde(default = "join_wait_ms")]
    pub wait_ms: u64,
    /// After the last message, longest wait for the subscribers to leave, ms.
    #[serde(default = "linger_ms")]
    pub linger_ms: u64,
    /// libzmq io threads of the publisher's context.
    #[serde(default = "one_thread")]
    pub io_threads: i32,
    /// Write the ticks to plain stream sockets (TCP or Unix) instead of an XPUB, one
    /// connection per subscriber, read by raw swarms: the raw-socket floor of a fan-out.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub raw: bool,
}

fn join_wait_ms() -> u64 {
    1000
}

fn linger_ms() -> u64 {
    10_000
}

fn one_thread() -> i32 {
    1
}

fn one() -> u32 {
    1
}

impl Node {
    /// Its sockets, whichever way the file wrote them.
    pub fn all_sockets(&self) -> Vec<&SocketSpec> {
        self.socket.iter().chain(self.sockets.iter()).collect()
    }

    /// The fields only some roles take ([`RoleInfo::fields`]): each one's name, its value
    /// when given, and what to say to a node whose role does not take it.
    pub fn own_fields(&self) -> [(&'static str, Option<String>, &'static str); 3] {
        [
            (
                "subs",
                self.subs.map(|v| v.to_string()),
                "only a swarm has `subs`; use replicas for other roles",
            ),
            (
                "work_us",
                self.work_us.map(|v| v.to_string()),
                "only a slow_sink has `work_us` (the microseconds it works on each message); remove it, or make the node a slow_sink",
            ),
            (
                "join_ms",
                self.join_ms.map(|v| v.to_string()),
                "only a source has `join_ms` (its pause for joins it cannot count, on a RADIO or a multicast PUB)",
            ),
        ]
    }
}

/// A socket: its type, where it binds and connects, and its options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketSpec {
    /// A libzmq socket type name: PAIR, PUB, SUB, XPUB, XSUB, REQ, REP, DEALER, ROUTER,
    /// PUSH, PULL (checked by [`check`], so the error names the node).
    #[serde(rename = "type")]
    pub kind: String,
    /// Endpoints to bind: `tcp://127.0.0.1:*`, `ipc:///path`, `inproc://name`, or `auto`
    /// (a fresh endpoint on the case's transport).
    #[serde(default)]
    pub bind: Vec<String>,
    /// Endpoints to connect to, or the names of nodes whose binds to connect to.
    #[serde(default)]
    pub connect: Vec<String>,
    /// Options.
    #[serde(flatten)]
    pub options: SocketOptions,
}

impl SocketSpec {
    /// The transport of each of its binds and connects, in that order: a literal
    /// endpoint's own, else (`auto`, a node's name) the case's `case`.
    pub fn transports(
        &self,
        case: crate::transport::Transport,
    ) -> impl Iterator<Item = crate::transport::Transport> + '_ {
        self.bind.iter().chain(&self.connect).map(move |e| {
            e.split_once("://")
                .and_then(|(scheme, _)| crate::transport::Transport::parse(scheme))
                .unwrap_or(case)
        })
    }
}

/// Socket options a topology may set; anything else is an error naming the field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketOptions {
    /// ZMQ_SNDHWM, messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sndhwm: Option<i32>,
    /// ZMQ_RCVHWM, messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcvhwm: Option<i32>,
    /// ZMQ_LINGER, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linger: Option<i32>,
    /// ZMQ_SNDBUF, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sndbuf: Option<i32>,
    /// ZMQ_RCVBUF, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcvbuf: Option<i32>,
    /// ZMQ_IMMEDIATE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immediate: Option<bool>,
    /// ZMQ_CONFLATE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflate: Option<bool>,
    /// SUB/XSUB topics (prefixes); none on a SUB means everything, with a warning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<Vec<String>>,
    /// ZMQ_XPUB_VERBOSE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpub_verbose: Option<bool>,
    /// ZMQ_XPUB_NODROP: block at the high-water mark instead of dropping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpub_nodrop: Option<bool>,
    /// ZMQ_ROUTER_MANDATORY.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_mandatory: Option<bool>,
    /// ZMQ_ROUTING_ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing_id: Option<String>,
    /// ZMQ_TCP_KEEPALIVE (-1 system default, 0 off, 1 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_keepalive: Option<i32>,
    /// RADIO: the group every message is sent to; DISH: the group it joins (default
    /// `zmqperf`). Only RADIO and DISH take it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// ZMQ_RATE, kbit/s: the multicast send rate limit (libzmq's default: 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multicast_rate: Option<i32>,
    /// ZMQ_RECOVERY_IVL, ms: how long multicast data is kept for a receiver that asks for
    /// it again (libzmq's default: 10,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_ivl: Option<i32>,
    /// ZMQ_MULTICAST_HOPS: the multicast packets' time to live (libzmq's default: 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multicast_hops: Option<i32>,
    /// Security mechanism: null (the default), plain, curve or gssapi. The binding side is
    /// the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security: Option<security::Mechanism>,
    /// CURVE keys (Z85); generated for each run when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve_keys: Option<security::CurveKeys>,
    /// PLAIN user name (default `zmqperf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plain_username: Option<String>,
    /// PLAIN password (default `zmqperf`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plain_password: Option<String>,
    /// GSSAPI: the service principal the connecting side (the client) asks the KDC a ticket
    /// for: `service@host` (host-based) or `service/host@REALM` (default
    /// `zmqperf@localhost`). The binding side accepts a ticket to any key of its keytab.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gssapi_principal: Option<String>,
    /// GSSAPI: authenticate only, leave the messages unwrapped (ZMQ_GSSAPI_PLAINTEXT).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gssapi_plaintext: Option<bool>,
}

/// A node's number field (`count`, `size`, a frame's size): a whole number, or a string
/// read by `parse` (such as "10k" or "1KiB"); `what` names it in errors.
pub fn value_u64(
    v: &Option<serde_json::Value>,
    what: &str,
    parse: fn(&str, &str) -> crate::error::Result<u64>,
) -> crate::error::Result<Option<u64>> {
    match v {
        None => Ok(None),
        Some(serde_json::Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
        Some(serde_json::Value::String(s)) => parse(what, s).map(Some),
        Some(other) => Err(crate::error::Error::invalid(
            what,
            &other.to_string(),
            "give a whole number",
        )),
    }
}
