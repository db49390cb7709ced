//! The results of a suite run: what the runner produces, the store keeps and the reporters
//! show. Every field here is part of the JSON report (schema/run-result.schema.json).
//! A run holds measured cases (`zmqperf run`), findings (`zmqperf diagnose`), or both.

use crate::stats::{GapPosition, LatencyHistogram, LatencySummary, LossSummary, Throughput};
use crate::transport::Transport;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod status;
pub use status::RunStatus;

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
    /// "complete", "interrupted" (Ctrl-C or a crash: the cases so far are kept), "partial"
    /// (as read from the history: the run ended but some of its cases could not be written
    /// there) or "running".
    pub status: RunStatus,
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
    /// Where the run came from when it was taken into this history by `zmqperf import`
    /// (absent for a run recorded here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<Imported>,
}

/// The mark of an imported run: the run as it was known where it was made, and the file
/// it came in.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Imported {
    /// The run's id in the history it was made in (`run_id` is its id in this history).
    /// A run imported again from a history that had imported it keeps the very first id.
    pub original_run_id: String,
    /// The file it was imported from, as given to `zmqperf import` (`standard input` for
    /// `-`).
    pub file: String,
    /// The host name of the machine the run was made on (its environment's `hostname`).
    pub from_host: String,
    /// When it was imported, RFC 3339 UTC.
    pub imported_at: String,
    /// SHA-256 (hex) of the run's content: the run as exported, with its original id and
    /// without this mark. The same run imported twice has the same hash.
    pub content_sha256: String,
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
    /// Each host the run's nodes ran on, as that host described itself, in the order the
    /// run met them (the runner's own host first). Empty for a run on one host: the fields
    /// above are then its only host (see [`Environment::host_list`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostEnvironment>,
}

impl Environment {
    /// The run's hosts: [`Environment::hosts`], or when it is empty the one host the fields
    /// of this environment describe (named by its host name).
    pub fn host_list(&self) -> Vec<HostEnvironment> {
        if self.hosts.is_empty() {
            vec![self.own_host()]
        } else {
            self.hosts.clone()
        }
    }

    /// The host a node's `host` names: an entry of [`Environment::hosts`] by name, or for
    /// the runner's host name (or an empty name, as in runs made before hosts existed) the
    /// runner's own host.
    pub fn host(&self, name: &str) -> Option<HostEnvironment> {
        let name = if name.is_empty() {
            self.hostname.as_str()
        } else {
            name
        };
        if let Some(h) = self.hosts.iter().find(|h| h.name == name) {
            return Some(h.clone());
        }
        if name != self.hostname {
            return None;
        }
        Some(
            self.hosts
                .iter()
                .find(|h| h.hostname == name)
                .cloned()
                .unwrap_or_else(|| self.own_host()),
        )
    }

    /// The runner's host as the fields of this environment describe it: its interfaces are
    /// those the run's tcp addresses used.
    fn own_host(&self) -> HostEnvironment {
        let mut nics: Vec<HostNic> = Vec::new();
        for n in &self.network {
            match nics.iter_mut().find(|x| x.name == n.interface) {
                Some(x) => {
                    if !x.addresses.contains(&n.local_address) {
                        x.addresses.push(n.local_address.clone());
                    }
                }
                None => nics.push(HostNic {
                    name: n.interface.clone(),
                    addresses: vec![n.local_address.clone()],
                    loopback: n.loopback,
                    mtu: n.mtu,
                    speed_mbps: n.speed_mbps,
                }),
            }
        }
        HostEnvironment {
            name: self.hostname.clone(),
            hostname: self.hostname.clone(),
            cpu_model: self.cpu_model.clone(),
            cores: self.cores,
            kernel: self.kernel.clone(),
            libzmq_version: self.libzmq_version.clone(),
            libzmq_source: self
                .libzmq
                .as_ref()
                .map(|l| l.source.clone())
                .unwrap_or_default(),
            addr: None,
            nics,
        }
    }
}

/// One host of a run as the node process on it described its machine: what
/// [`crate::host::host_environment`] collects.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct HostEnvironment {
    /// The host's name in the run: its name in the hosts file, or the host name of the
    /// runner's own machine. Nodes name their host with it ([`NodeResult::host`]).
    pub name: String,
    /// The machine's own host name (uname -n).
    pub hostname: String,
    /// CPU model name (from /proc/cpuinfo).
    pub cpu_model: String,
    /// Logical CPUs available.
    pub cores: u32,
    /// Kernel release (uname -r).
    pub kernel: String,
    /// libzmq version the node measured with, e.g. `4.3.5`.
    pub libzmq_version: String,
    /// Which libzmq: `bundled`, `system` or `path` (empty where unknown).
    #[serde(default)]
    pub libzmq_source: String,
    /// The data-plane address the run reached this host at (the hosts file's `addr`),
    /// where one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
    /// The host's network interfaces that are up, in the order the kernel lists them.
    #[serde(default)]
    pub nics: Vec<HostNic>,
}

/// A network interface of a host.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct HostNic {
    /// Interface name, e.g. `lo`, `eth0`.
    pub name: String,
    /// Its IPv4 and IPv6 addresses.
    pub addresses: Vec<String>,
    /// Whether it is a loopback interface (traffic never reaches a wire).
    pub loopback: bool,
    /// Maximum transmission unit, bytes (from /sys/class/net/NAME/mtu).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// Link speed, Mbit/s, where the driver reports one (not for lo and most virtual links).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u64>,
}

impl HostNic {
    /// `eth0 mtu 1500 1000 Mb/s`: the interface without its addresses (what two hosts'
    /// interfaces are compared by).
    pub fn describe(&self) -> String {
        let mut s = self.name.clone();
        if self.loopback {
            s.push_str(" (loopback)");
        }
        if let Some(m) = self.mtu {
            s.push_str(&format!(" mtu {m}"));
        }
        if let Some(sp) = self.speed_mbps {
            s.push_str(&format!(" {sp} Mb/s"));
        }
        s
    }
}

impl HostEnvironment {
    /// The interface that holds `addr` (the host's data-plane address), if the host has
    /// one and lists it.
    pub fn nic_of(&self, addr: &str) -> Option<&HostNic> {
        let bare = addr.trim_start_matches('[').trim_end_matches(']');
        self.nics
            .iter()
            .find(|n| n.addresses.iter().any(|a| a == bare) || n.name == bare)
    }

    /// The interfaces that reach other hosts (not loopback), described without their
    /// addresses, joined by `, `; `-` when there are none.
    pub fn wired_nics(&self) -> String {
        let all: Vec<String> = self
            .nics
            .iter()
            .filter(|n| !n.loopback)
            .map(HostNic::describe)
            .collect();
        if all.is_empty() {
            "-".to_string()
        } else {
            all.join(", ")
        }
    }
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
    /// Why the case measured less than it was asked to, if it did, though what it measured
    /// is kept: "interrupted after 2 of 6 repetitions", a fan-out cut short or with
    /// subscribers left out. `compare`'s gate does not pass such a case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
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

impl RunResult {
    /// The host a node ran on: its `host`, or the run's own host name for a node recorded
    /// before hosts existed.
    pub fn node_host<'a>(&'a self, n: &'a NodeResult) -> &'a str {
        if n.host.is_empty() {
            &self.environment.hostname
        } else {
            &n.host
        }
    }

    /// Every host the run's nodes ran on, in the order first met, then those of
    /// [`Environment::hosts`] no node names; the run's own host name alone when nothing
    /// names another.
    pub fn hosts(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for c in &self.cases {
            for h in c.hosts(&self.environment.hostname) {
                if !out.contains(&h) {
                    out.push(h);
                }
            }
        }
        for h in &self.environment.hosts {
            if !out.contains(&h.name.as_str()) {
                out.push(&h.name);
            }
        }
        if out.is_empty() {
            out.push(&self.environment.hostname);
        }
        out
    }

    /// Whether the run's nodes ran on more than one host.
    pub fn is_multi_host(&self) -> bool {
        self.hosts().len() > 1
    }
}

/// Whether a role sends the measured messages (a ping's requests, a source's stream).
pub fn is_sending_role(role: &str) -> bool {
    matches!(role, "ping" | "source")
}

/// Whether a role receives the measured messages (an echo, a sink, a subscriber swarm).
pub fn is_receiving_role(role: &str) -> bool {
    matches!(role, "echo" | "sink" | "swarm")
}

impl CaseResult {
    /// The hosts of the case's nodes, each once, in node order; `own` (the run's host
    /// name) stands for a node that names none. A case without nodes ran on `own`.
    pub fn hosts<'a>(&'a self, own: &'a str) -> Vec<&'a str> {
        let mut out: Vec<&str> = Vec::new();
        for n in &self.nodes {
            let h = if n.host.is_empty() { own } else { &n.host };
            if !out.contains(&h) {
                out.push(h);
            }
        }
        if out.is_empty() {
            out.push(own);
        }
        out
    }

    /// Where the case ran, in one word: the host when all its nodes ran on one
    /// (`bench-01`), else `a->b`: the hosts of the sending nodes (pings, sources) to those
    /// of the receiving nodes (echoes, sinks, swarms), several joined by `+` (`a->b+c`).
    /// `own` (the run's host name) stands for a node that names no host.
    pub fn host_path(&self, own: &str) -> String {
        let all = self.hosts(own);
        if all.len() == 1 {
            return all[0].to_string();
        }
        let side = |keep: fn(&str) -> bool| {
            let mut hs: Vec<&str> = Vec::new();
            for n in self.nodes.iter().filter(|n| keep(&n.role)) {
                let h = if n.host.is_empty() { own } else { &n.host };
                if !hs.contains(&h) {
                    hs.push(h);
                }
            }
            hs.join("+")
        };
        let (from, to) = (side(is_sending_role), side(is_receiving_role));
        if from.is_empty() || to.is_empty() {
            return all.join("+");
        }
        format!("{from}->{to}")
    }

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::{host_pairs_run, machine_runs, sample_run};

    #[test]
    fn where_cases_ran() {
        let run = host_pairs_run();
        assert_eq!(run.hosts(), ["a", "b", "c"]);
        assert!(run.is_multi_host());
        assert_eq!(run.cases[0].host_path("bench-01"), "a");
        assert_eq!(run.cases[1].host_path("bench-01"), "a->b");
        assert_eq!(run.cases[7].host_path("bench-01"), "c->b");
        // A node that names no host ran on the run's own host.
        let hal = &machine_runs()[0];
        assert_eq!(hal.hosts(), ["hal"]);
        assert!(!hal.is_multi_host());
        assert_eq!(hal.node_host(&hal.cases[0].nodes[0]), "hal");
        assert_eq!(hal.cases[0].host_path("hal"), "hal");
        // A case without nodes ran on the run's host.
        let s = sample_run();
        assert_eq!(s.cases[0].hosts("bench-01"), ["bench-01"]);
        assert_eq!(s.hosts(), ["bench-01"]);
        // Sources on two hosts into one sink; a proxy is neither side.
        let mut c = run.cases[1].clone();
        c.nodes[0].role = "source".into();
        c.nodes.push(NodeResult {
            name: "src2".into(),
            role: "source".into(),
            host: "c".into(),
            ..Default::default()
        });
        c.nodes.push(NodeResult {
            name: "fwd".into(),
            role: "proxy".into(),
            host: "d".into(),
            ..Default::default()
        });
        c.nodes[1].role = "sink".into();
        assert_eq!(c.host_path("x"), "a+c->b");
        // Nothing that sends: every host, in node order.
        for n in &mut c.nodes {
            n.role = "proxy".into();
        }
        assert_eq!(c.host_path("x"), "a+b+c+d");
    }

    #[test]
    fn hosts_by_name_and_the_runs_own_host() {
        let run = host_pairs_run();
        let e = &run.environment;
        assert_eq!(e.host("b").unwrap().hostname, "ns-b");
        assert!(e.host("d").is_none());
        // The runner's own host, by its name or by none, from the environment's fields.
        let own = e.host("bench-01").unwrap();
        assert_eq!(own.cpu_model, e.cpu_model);
        assert_eq!(e.host("").unwrap(), own);
        assert_eq!(e.host_list().len(), 3);
        // One host: the environment itself, its interfaces those its tcp addresses used.
        let s = sample_run();
        let list = s.environment.host_list();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].name, "bench-01");
        assert_eq!(list[0].nics.len(), 1);
        assert_eq!(list[0].nics[0].name, "lo");
        assert_eq!(list[0].nics[0].addresses, ["127.0.0.1"]);
        assert_eq!(list[0].nics[0].describe(), "lo (loopback) mtu 65536");
        assert_eq!(
            run.environment.hosts[0].wired_nics(),
            "veth-a mtu 1500 10000 Mb/s"
        );
        assert_eq!(
            run.environment.hosts[0].nic_of("10.0.0.1").unwrap().name,
            "veth-a"
        );
        assert!(run.environment.hosts[0].nic_of("10.0.0.9").is_none());
    }

    #[test]
    fn results_without_hosts_still_load() {
        // A node and an environment as written before hosts existed.
        let node: NodeResult = serde_json::from_str(
            r#"{"name":"pub","role":"source","replicas":1,"placement":"thread",
                "cpu_ms":1.5,"peak_rss_kib":100}"#,
        )
        .unwrap();
        assert_eq!(node.host, "");
        let env: Environment = serde_json::from_str(
            r#"{"cpu_model":"x","cores":2,"memory_bytes":1,"kernel":"k","os":"o",
                "hostname":"h","libzmq_version":"4.3.5","zmqperf_version":"0.1.0"}"#,
        )
        .unwrap();
        assert!(env.hosts.is_empty());
        // And nothing new is written for them.
        assert!(!serde_json::to_string(&node).unwrap().contains("host"));
        assert!(!serde_json::to_string(&env).unwrap().contains("hosts"));
        let run = sample_run();
        let json = serde_json::to_string(&run).unwrap();
        assert!(!json.contains("\"imported\""));
        // A run across hosts reads back whole.
        let r = host_pairs_run();
        let back: RunResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
        assert_eq!(back, r);
    }
}
