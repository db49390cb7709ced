//! A measured case: what it measures, each repetition, the summary over them with 95%
//! intervals, the raw-socket floor beside it, and where it ran.

use super::{is_receiving_role, is_sending_role, EdgeResult, Estimate, NodeResult};
use crate::stats::{LatencyHistogram, LatencySummary, LossSummary, Throughput};
use crate::transport::Transport;
use serde::{Deserialize, Serialize};

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
    /// Peak virtual memory (VmPeak), KiB, of the same process (0 in older runs).
    #[serde(default)]
    pub peak_virt_kib: u64,
    /// How long the role ran from the start barrier to its report, ms (0 where unknown:
    /// older runs, peers in other languages).
    #[serde(default)]
    pub run_ms: f64,
    /// CPU time (user + system) it used over `run_ms`, ms.
    #[serde(default)]
    pub run_cpu_ms: f64,
}

/// What a whole process used: CPU time as a share of one core over its run, and its peak
/// memory, resident (RSS) and virtual (VIRT), as `top` shows them.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct ProcessUsage {
    /// User CPU time, ms.
    pub cpu_user_ms: f64,
    /// System CPU time, ms.
    pub cpu_sys_ms: f64,
    /// How long the process had run, s.
    pub wall_s: f64,
    /// (user + system) / wall, % of one core (above 100 when more than one core worked).
    pub cpu_core_pct: f64,
    /// Peak resident memory, KiB.
    pub peak_rss_kib: u64,
    /// Peak virtual memory, KiB.
    pub peak_virt_kib: u64,
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
    /// The runner's machine around the case: the load average before and after, and the
    /// other processes that used more than a tenth of a core during it (absent in older
    /// runs and in cases not run by the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineLoad>,
    /// With `--interval`: each receiving node's figures per interval, per repetition,
    /// with the drift verdict on them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<super::IntervalSeries>,
}

/// Whether the runner's machine was idle around a case.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct MachineLoad {
    /// /proc/loadavg before the case: runnable processes averaged over 1, 5 and 15 min.
    pub load_before: [f64; 3],
    /// /proc/loadavg after the case.
    pub load_after: [f64; 3],
    /// The other processes (not zmqperf's own, not its children) that used more than a
    /// tenth of a core over the case, busiest first; not empty: the machine was busy, and
    /// the case has a warning that names them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub busy: Vec<BusyProcess>,
}

/// A process that worked beside a case.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BusyProcess {
    /// Its pid.
    pub pid: u32,
    /// Its command name (/proc/PID/comm).
    pub command: String,
    /// Its CPU time over the case's wall time, % of one core.
    pub core_pct: f64,
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
