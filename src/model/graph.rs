//! A case's topology as measured: each node (its replicas merged) and each edge between
//! nodes, with what the roles sent and received.

use crate::stats::{LatencySummary, LossSummary};
use crate::topology::{Ends, Role, RoleInfo, StreamPart};
use serde::{Deserialize, Serialize};

/// One node of a case's topology: its replicas merged, over all repetitions.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct NodeResult {
    /// The node's name in the topology.
    pub name: String,
    /// Its role: source, sink, echo, ping, proxy, or swarm (a fan-out's subscriber process).
    pub role: String,
    /// Replicas.
    pub replicas: u32,
    /// Where its replicas ran: thread or process.
    pub placement: String,
    /// CPU time (user + system) of all replicas over all repetitions, ms.
    pub cpu_ms: f64,
    /// Largest peak resident memory of a replica's process, KiB.
    pub peak_rss_kib: u64,
    /// Largest peak virtual memory (VIRT) of a replica's process, KiB (absent in older
    /// runs and for peers that do not say).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub peak_virt_kib: u64,
    /// CPU as a share of one core while the node ran, %, as `top` shows it: the CPU time
    /// of all its replicas from the start barrier to their reports, over the longest
    /// replica's time, summed over repetitions (3 replicas each busy: 300). A node on
    /// a thread counts its thread, one in a process the whole process (with libzmq's I/O
    /// thread). Absent where unknown (older runs, peers in other languages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_core_pct: Option<f64>,
    /// Sources: admission rate, msg/s (all replicas, median over repetitions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_msgs_per_sec: Option<f64>,
    /// Sinks: delivered rate, msg/s (all replicas, median over repetitions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered_msgs_per_sec: Option<f64>,
    /// Proxies: messages forwarded over all repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded: Option<u64>,
    /// Replicas that ended cut short (idle for the timeout), with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut_short: Vec<String>,
    /// Sources and sinks in a stream (a group of flows): its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Sinks in a stream: messages still on their way when the end of transmission arrived,
    /// over all replicas and repetitions (seen to within 1,024 while messages flow).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eot_ahead: Option<u64>,
    /// Its I/O mode when not blocking: `poll` or `timeout`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<String>,
    /// In poll or timeout mode: how many times its sends and receives waited (poll:
    /// `zmq_poll` calls after EAGAIN; timeout: calls that timed out), all replicas and
    /// repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_waits: Option<u64>,
    /// Sinks on udp: datagrams the kernel dropped at full receive buffers in their network
    /// namespaces while they received, all replicas and repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_drops: Option<u64>,
    /// Who played it: `zmqperf` (its own core) or a peer with its versions, as
    /// `pyzmq 26.2.0 (libzmq 4.3.5)`.
    #[serde(default, rename = "impl", skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// The host it ran on: a host's name in the hosts file ([`HostEnvironment::name`]), or
    /// the runner's host name for a node on the runner's machine. Absent in runs made
    /// before hosts existed, whose nodes all ran on the run's own host (see
    /// [`RunResult::node_host`]).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub host: String,
}

/// One edge: a source replica's stream as one sink (or a load-balanced group of sink
/// replicas) received it, or a ping's round trips to its echo; over all repetitions.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct EdgeResult {
    /// The sending replica (`pub`, `src[2]`).
    pub from: String,
    /// The receiving replica, or the node when its replicas share the stream.
    pub to: String,
    /// Messages (or round trips) that arrived.
    pub messages: u64,
    /// Payload bytes that arrived.
    pub bytes: u64,
    /// Delivered messages per second (median over repetitions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msgs_per_sec: Option<f64>,
    /// The loss ledger of the stream on this edge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSummary>,
    /// One-way times across hosts: the bound on their error from the two hosts' clocks
    /// (the largest over the repetitions), ns; absent on one host's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_error_ns: Option<u64>,
    /// Latency end to end on this edge (across proxies), merged over repetitions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencySummary>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// The role named `role` in a result, as the topology's descriptors know it.
fn role_info(role: &str) -> Option<&'static RoleInfo> {
    use serde::de::{value::Error, IntoDeserializer};
    Role::deserialize(IntoDeserializer::<Error>::into_deserializer(role))
        .ok()
        .map(Role::info)
}

/// Whether a role sends the measured messages (a ping's requests, a source's stream): it
/// ends by itself.
pub fn is_sending_role(role: &str) -> bool {
    role_info(role).is_some_and(|i| i.ends == Ends::Itself)
}

/// Whether a role receives the measured messages (an echo, a sink, a subscriber swarm): it
/// is ended by the runner and keeps what arrives rather than passing it on (a proxy).
pub fn is_receiving_role(role: &str) -> bool {
    role_info(role)
        .is_some_and(|i| i.ends != Ends::Itself && !matches!(i.stream, StreamPart::Forwards { .. }))
}
