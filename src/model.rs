//! The results of a suite run: what the runner produces, the store keeps and the reporters
//! show. Every field here is part of the JSON report (schema/run-result.schema.json).
//! A run holds measured cases (`zmqperf run`), findings (`zmqperf diagnose`), or both.

use crate::stats::{GapPosition, LatencyHistogram, LatencySummary, LossSummary, Throughput};
use crate::transport::Transport;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the JSON report; bumped when a field changes meaning or disappears.
pub const SCHEMA_VERSION: u32 = 1;

/// One invocation of `zmqperf run` or `zmqperf diagnose`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunResult {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// Identifier of the run in the history, e.g. `20261121-221530-4f2a`.
    pub run_id: String,
    /// Start time, RFC 3339 UTC.
    pub started_at: String,
    /// End time, RFC 3339 UTC; None while running or if the run was cut short.
    pub finished_at: Option<String>,
    /// "complete", "interrupted" (Ctrl-C or a crash: the cases so far are kept) or "running".
    pub status: String,
    /// The exact command line.
    pub command: String,
    /// The workload file, if one was given: its path and its text.
    pub workload: Option<Workload>,
    /// The machine and software that produced the results.
    pub environment: Environment,
    /// The cases, in the order they ran (none for `zmqperf diagnose`).
    pub cases: Vec<CaseResult>,
    /// What `zmqperf diagnose` found, in the order the experiments ran (none for
    /// `zmqperf run`; absent from reports written before findings existed).
    #[serde(default)]
    pub findings: Vec<Finding>,
}

/// A workload file as it was when the run read it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Workload {
    /// Path as given.
    pub path: String,
    /// Full text.
    pub text: String,
}

/// The machine and software a result comes from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Environment {
    /// CPU model name (from /proc/cpuinfo).
    pub cpu_model: String,
    /// Logical CPUs available.
    pub cores: u32,
    /// Total memory in bytes.
    pub memory_bytes: u64,
    /// Kernel release (uname -r).
    pub kernel: String,
    /// Operating system name.
    pub os: String,
    /// Host name.
    pub hostname: String,
    /// libzmq version measured.
    pub libzmq_version: String,
    /// The libzmq measured: which file, its capabilities and hash (runs before this field
    /// existed have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libzmq: Option<crate::zmq::LibraryInfo>,
    /// What the user said of the conditions (`zmqperf run --note TEXT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The network interface of each tcp address the run's cases used, in the order first
    /// used (none for runs on ipc and inproc only, and for runs before this field existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<NetworkInterface>,
    /// zmqperf version.
    pub zmqperf_version: String,
}

/// The network interface that carried a tcp address of a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct NetworkInterface {
    /// The host as the run's endpoints named it, e.g. `127.0.0.1`, `10.0.0.5`, `eth0`.
    pub address: String,
    /// This host's address on the interface (the source the kernel picks for a remote
    /// address; the address itself for a local one).
    pub local_address: String,
    /// Interface name, e.g. `lo`, `eth0`.
    pub interface: String,
    /// Whether it is a loopback interface (traffic never reaches a wire).
    pub loopback: bool,
    /// Maximum transmission unit, bytes (from /sys/class/net/NAME/mtu).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// Link speed, Mbit/s, where the driver reports one (not for lo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u64>,
    /// Kernel driver of the device (none for virtual interfaces such as lo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
}

impl NetworkInterface {
    /// One line: `lo (loopback) mtu 65536 for 127.0.0.1`.
    pub fn describe(&self) -> String {
        let mut s = self.interface.clone();
        if self.loopback {
            s.push_str(" (loopback)");
        }
        if let Some(m) = self.mtu {
            s.push_str(&format!(" mtu {m}"));
        }
        if let Some(sp) = self.speed_mbps {
            s.push_str(&format!(" {sp} Mb/s"));
        }
        if let Some(d) = &self.driver {
            s.push_str(&format!(" driver {d}"));
        }
        s.push_str(&format!(" for {}", self.address));
        if self.local_address != self.address {
            s.push_str(&format!(" (from {})", self.local_address));
        }
        s
    }
}

/// What a case measures.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Round trips, one message in flight (closed loop).
    Latency,
    /// A one-way stream, as fast as possible or at a fixed rate.
    Throughput,
}

/// Closed loop (the next message waits for the previous) or open loop (a fixed schedule).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LoopMode {
    /// The sender waits for each message (latency) or for the socket (throughput at full rate).
    Closed,
    /// Messages are due at fixed times (`--rate`); latency counts from the due time.
    Open,
}

/// A point estimate over repetitions with its 95% confidence interval.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    /// Median of the repetitions.
    pub median: f64,
    /// Lower end of the 95% confidence interval.
    pub ci_low: f64,
    /// Upper end of the 95% confidence interval.
    pub ci_high: f64,
    /// (max - min) / median over the repetitions, in percent.
    pub spread_pct: f64,
    /// Repetitions it comes from.
    pub n: u32,
}

/// CPU time and memory of one role in one repetition.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RoleUsage {
    /// Role name ("client", "server", "sender", "receiver").
    pub role: String,
    /// Where it ran: "thread" or "process".
    pub placement: String,
    /// User CPU time, ms.
    pub cpu_user_ms: f64,
    /// System CPU time, ms.
    pub cpu_sys_ms: f64,
    /// Peak resident memory, KiB (of the process; for threads, of the whole runner).
    pub peak_rss_kib: u64,
}

/// One repetition of a case.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Repetition {
    /// Latency samples: round trip / 2 for latency cases; send (or due) time to receipt for
    /// throughput cases.
    pub latency: Option<LatencySummary>,
    /// The histogram behind `latency`, mergeable.
    pub latency_histogram: Option<LatencyHistogram>,
    /// Open loop: actual send time minus due time.
    pub send_delay: Option<LatencySummary>,
    /// Sender's admission rate.
    pub send: Option<Throughput>,
    /// Receiver's delivered rate.
    pub delivered: Option<Throughput>,
    /// Loss ledger of the stream.
    pub loss: Option<LossSummary>,
    /// CPU and memory per role.
    pub roles: Vec<RoleUsage>,
}

/// The summary figures of a case: medians over repetitions with confidence intervals.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct CaseSummary {
    /// Mean latency in us (latency cases: round trip / 2, libzmq's figure).
    pub latency_us: Option<Estimate>,
    /// Median latency in us.
    pub p50_us: Option<Estimate>,
    /// 99th percentile latency in us.
    pub p99_us: Option<Estimate>,
    /// Delivered messages per second.
    pub msgs_per_sec: Option<Estimate>,
    /// Delivered payload megabits per second.
    pub mbit_per_sec: Option<Estimate>,
    /// Sender's messages per second.
    pub send_msgs_per_sec: Option<Estimate>,
    /// Open loop: median send delay in us.
    pub send_delay_p50_us: Option<Estimate>,
    /// Messages lost over all repetitions.
    pub lost: u64,
    /// Messages duplicated over all repetitions.
    pub duplicated: u64,
    /// Messages reordered over all repetitions.
    pub reordered: u64,
}

/// The raw-socket floor: a plain TCP or Unix-socket ping-pong of the same size, measured in
/// the same run, to show what ZeroMQ adds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Floor {
    /// "tcp" or "unix".
    pub socket: String,
    /// Mean one-way latency (round trip / 2), us.
    pub latency_us: f64,
    /// Round trips measured (for a fan-out's floor: the deliveries measured).
    pub roundtrips: u64,
    /// Median one-way latency, us (a fan-out's floor: over every delivery; absent for the
    /// ping-pong floor of latency cases and in results written before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_us: Option<f64>,
    /// 99th percentile one-way latency, us (as `p50_us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_us: Option<f64>,
}

/// One case: a topology with its parameters, run for some repetitions.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CaseResult {
    /// Stable key across runs, used by `compare`: `kind/pattern/transport/size[/rate]`.
    pub id: String,
    /// Latency or throughput.
    pub kind: Kind,
    /// Socket pattern: reqrep, dealerrouter, pair, pushpull, pubsub.
    pub pattern: String,
    /// Transport.
    pub transport: Transport,
    /// Payload bytes per message.
    pub message_size: usize,
    /// Round trips or messages per repetition.
    pub count: u64,
    /// Open loop: the target rate in msg/s.
    pub rate: Option<f64>,
    /// Closed or open loop.
    pub loop_mode: LoopMode,
    /// Warm-up round trips or messages before each measured repetition.
    pub warmup: u64,
    /// The repetitions, in order.
    pub repetitions: Vec<Repetition>,
    /// Medians with confidence intervals.
    pub summary: CaseSummary,
    /// The raw-socket floor (latency cases over tcp and ipc).
    pub floor: Option<Floor>,
    /// Reasons not to trust the figures (high spread, too short, rate not reached, loss).
    pub warnings: Vec<String>,
    /// Why the case failed, if it did (the suite goes on).
    pub error: Option<String>,
    /// Wall time of the case, seconds.
    pub wall_s: f64,
    /// Each node of the topology, over all its replicas and repetitions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeResult>,
    /// Each measured edge (a stream from a source to a sink, or a ping's round trips), over
    /// all repetitions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub edges: Vec<EdgeResult>,
    /// What the senders did, as far as the causes of loss depend on it (drop at the
    /// high-water mark, wait for subscribers, wait at the end); absent in older runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<crate::stats::SenderFacts>,
}

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
    /// Who played it: `zmqperf` (its own core) or a peer with its versions, as
    /// `pyzmq 26.2.0 (libzmq 4.3.5)`.
    #[serde(default, rename = "impl", skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
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

impl CaseResult {
    /// The stable key of a case.
    pub fn make_id(
        kind: Kind,
        pattern: &str,
        transport: Transport,
        size: usize,
        rate: Option<f64>,
    ) -> String {
        let kind = match kind {
            Kind::Latency => "latency",
            Kind::Throughput => "throughput",
        };
        match rate {
            Some(r) => format!("{kind}/{pattern}/{transport}/{size}/{r}"),
            None => format!("{kind}/{pattern}/{transport}/{size}"),
        }
    }
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Behaviour worth knowing, nothing lost (e.g. PUSH blocked instead of dropping).
    Info,
    /// Messages were lost, or delayed far beyond the transport's own latency, or the
    /// experiment itself failed.
    Warning,
}

impl Severity {
    /// `info` or `warning`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
        }
    }
}

/// A measured value of a finding's evidence: a count, a number (with its unit in the
/// name, e.g. `subscription_ms`) or a short text (e.g. the socket options used).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Measure {
    /// A whole number (messages, bytes, sequence numbers).
    Count(u64),
    /// A measured quantity; always finite.
    Number(f64),
    /// A word or setting.
    Text(String),
}

impl From<u64> for Measure {
    fn from(v: u64) -> Self {
        Measure::Count(v)
    }
}

impl From<f64> for Measure {
    /// Not-finite values (which JSON cannot carry) become the text "n/a".
    fn from(v: f64) -> Self {
        if v.is_finite() {
            Measure::Number(v)
        } else {
            Measure::Text("n/a".to_string())
        }
    }
}

impl From<&str> for Measure {
    fn from(v: &str) -> Self {
        Measure::Text(v.to_string())
    }
}

/// A hole in a diagnosed stream with the times around it: when the last message before
/// it and the first after it arrived, in ms from the sender's first send.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct TimedGap {
    /// First missing sequence number.
    pub first_seq: u64,
    /// How many in a row are missing.
    pub count: u64,
    /// Start (slow joiner), middle (high-water mark) or end (fast quit) of the stream.
    pub position: GapPosition,
    /// Arrival of the message just before the hole, ms after the first send; None for a
    /// hole at the start.
    pub before_ms: Option<f64>,
    /// Arrival of the message just after the hole, ms after the first send; None for a
    /// hole at the end.
    pub after_ms: Option<f64>,
}

/// What one experiment of `zmqperf diagnose` found: what happened, the measured evidence,
/// the cause and the remedy.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// Stable key: experiment and variant, e.g. `slow-joiner/tcp`, `hwm/inproc`,
    /// `fast-quit/pushpull/tcp`.
    pub id: String,
    /// The experiment: slow-joiner, hwm, hwm-memory, fast-quit, sender-stops or deep-queue.
    pub experiment: String,
    /// The transport it ran over.
    pub transport: Transport,
    /// Info (worth knowing) or warning (messages lost or badly delayed, or the experiment
    /// failed).
    pub severity: Severity,
    /// One line, e.g. `PUB/SUB over tcp: 1,797 messages lost at the start (slow joiner)`.
    pub title: String,
    /// What happened, in plain words with the numbers.
    pub observed: String,
    /// Why it happens.
    pub cause: String,
    /// What to do about it: which option, which pattern.
    pub remedy: String,
    /// The measured values behind the words, by name; units are in the names
    /// (`_ms`, `_kib`, `_msgs_per_s`); counts are messages unless named otherwise.
    pub evidence: BTreeMap<String, Measure>,
    /// The holes in the main stream of the experiment, with times (at most 16).
    pub gaps: Vec<TimedGap>,
    /// Wall time of the experiment, seconds.
    pub wall_s: f64,
    /// Why the experiment could not run to its end, if it could not.
    pub error: Option<String>,
    /// The finding's line in the triage summary that leads the findings: its cause in a
    /// few words, what it cost and the fix in one line (None for a finding that names no
    /// cause, such as a failed experiment; absent from reports written before triage).
    #[serde(default)]
    pub triage: Option<Triage>,
}

/// One cause as the triage summary counts it. Findings of the same cause (the same
/// experiment over several transports, or one cause seen in a listened stream) share the
/// `cause` text, so the summary adds them up into one line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Triage {
    /// The cause in a few words, e.g. `slow joiner`, `high-water mark / slow consumer`,
    /// `sender stopped / fast quit`, `reordering`, `duplicates`, `publisher restart`.
    pub cause: String,
    /// Messages lost to this cause (0 for causes that lose none: reordering, idle periods).
    /// The summary puts the worst first by this number, then by `count`.
    pub lost: u64,
    /// How often the cause was seen, in `unit`s (equal to `lost` for a loss).
    pub count: u64,
    /// What `count` counts: `messages lost`, `messages reordered`, `restarts`, ...
    pub unit: String,
    /// The fix in one line; measured where the experiment measured it.
    pub fix: String,
}
