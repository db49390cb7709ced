//! What the swarm measures per subscriber: the running state of each SUB socket (ledger,
//! latency figures, end of stream), and the reports it turns into.

use crate::header::{Header, FLAG_END, FLAG_WARMUP};
use crate::stats::{LatencyHistogram, LossSummary, OneWay, StreamLedger};
use serde::{Deserialize, Serialize};

/// CPU time and peak memory of one process of the run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProcessUsage {
    /// Which process: "publisher", "subscribers 3".
    pub name: String,
    /// Its process id.
    pub pid: u32,
    /// User CPU time, ms (all its threads, libzmq's io threads included).
    pub cpu_user_ms: f64,
    /// System CPU time, ms.
    pub cpu_sys_ms: f64,
    /// Peak resident memory, KiB (VmHWM).
    pub peak_rss_kib: u64,
}

impl ProcessUsage {
    /// The figures of the calling process so far.
    pub fn of_this_process(name: &str) -> ProcessUsage {
        let u = crate::roles::usage("receiver", "process");
        ProcessUsage {
            name: name.to_string(),
            pid: std::process::id(),
            cpu_user_ms: u.cpu_user_ms,
            cpu_sys_ms: u.cpu_sys_ms,
            peak_rss_kib: u.peak_rss_kib,
        }
    }
}

/// What one subscriber received.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SubReport {
    /// Index of its process, from 0.
    pub process: u32,
    /// Index of the subscriber in its process, from 0.
    pub sub: u32,
    /// Expected, received, lost (and where), duplicated and reordered messages.
    pub loss: LossSummary,
    /// Whether the end-of-stream message arrived.
    pub ended: bool,
    /// Warm-up messages received (not counted anywhere else).
    pub warmup: u64,
    /// Latency samples (messages with a send time).
    pub latency_count: u64,
    /// Smallest latency, ns.
    pub latency_min_ns: u64,
    /// Largest latency, ns.
    pub latency_max_ns: u64,
    /// Mean latency, ns.
    pub latency_mean_ns: f64,
    /// Delivered rate: messages received / (receipt of the last - send of the first), msg/s.
    pub delivered_per_sec: f64,
}

/// Why a subscriber process stopped.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Every subscriber saw the end of the stream.
    AllEnded,
    /// Nothing arrived for the idle time after the first message.
    Idle,
    /// No message arrived within the first-message timeout.
    NothingArrived,
    /// The runner (or the parent process) said stop, or went away.
    ParentGone,
}

/// What one swarm (subscriber process) reports. A peer's compact form (docs/peers.md:
/// each subscriber's arrival runs and latency buckets) is read into the same figures.
#[derive(Debug, Clone, Serialize)]
pub struct ChildReport {
    /// Index of the process in the cluster.
    pub process: u32,
    /// Its process id.
    pub pid: u32,
    /// Why it stopped.
    pub stop: StopReason,
    /// Time to open and connect all its sockets, ns.
    pub connect_ns: u64,
    /// Every subscriber's figures.
    pub subscribers: Vec<SubReport>,
    /// Latency of every message received by any of its subscribers.
    pub latency: LatencyHistogram,
    /// CPU time and peak RSS.
    pub usage: ProcessUsage,
    /// The host it ran on, when not the runner's (set by the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The bound on its latencies from the clocks of two hosts, ns (set by the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_error_ns: Option<u64>,
    /// Its figures per tick (or second of ticks), when the publisher's ticks are spaced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ticks: Vec<crate::model::IntervalRecord>,
}

/// The full form of a [`ChildReport`], as zmqperf writes it.
#[derive(Deserialize)]
struct FullReport {
    process: u32,
    pid: u32,
    stop: StopReason,
    connect_ns: u64,
    subscribers: Vec<SubReport>,
    latency: LatencyHistogram,
    usage: ProcessUsage,
    #[serde(default)]
    ticks: Vec<crate::model::IntervalRecord>,
}

/// A peer's subscriber: its arrivals as runs, its latency buckets.
#[derive(Deserialize)]
struct CompactSub {
    runs: Vec<(u64, u64, u64)>,
    #[serde(default)]
    warmup: u64,
    end_seq: Option<u64>,
    latency: LatencyHistogram,
    first_send_ns: Option<u64>,
    #[serde(default)]
    last_recv_ns: u64,
}

/// A peer's swarm report.
#[derive(Deserialize)]
struct CompactReport {
    process: u32,
    pid: u32,
    stop: StopReason,
    connect_ns: u64,
    subscribers: Vec<CompactSub>,
    /// Messages each subscriber should get, when the spec said.
    #[serde(default)]
    expect: Option<u64>,
}

impl CompactReport {
    fn into_report(self) -> ChildReport {
        let ledgers: Vec<StreamLedger> = self
            .subscribers
            .iter()
            .map(|s| StreamLedger::from_runs(&s.runs))
            .collect();
        // The stream's length: from the end marks (the sender's own word), else as the spec
        // said, else the highest number any subscriber saw.
        let expected = self
            .subscribers
            .iter()
            .filter_map(|s| s.end_seq.map(|e| e + 1))
            .max()
            .or(self.expect)
            .or_else(|| {
                ledgers
                    .iter()
                    .map(|l| l.summary(None))
                    .filter(|l| l.received > 0)
                    .map(|l| l.expected)
                    .max()
            })
            .unwrap_or(0);
        let mut all = LatencyHistogram::new();
        let subscribers = self
            .subscribers
            .iter()
            .zip(&ledgers)
            .enumerate()
            .map(|(i, (s, l))| {
                all.merge(&s.latency);
                let loss = l.summary(Some(expected));
                let lat = s.latency.summary();
                let span = s
                    .first_send_ns
                    .map(|f| s.last_recv_ns.saturating_sub(f))
                    .unwrap_or(0);
                SubReport {
                    process: self.process,
                    sub: i as u32,
                    ended: s.end_seq.is_some(),
                    warmup: s.warmup,
                    latency_count: lat.count,
                    latency_min_ns: lat.min_ns,
                    latency_max_ns: lat.max_ns,
                    latency_mean_ns: lat.mean_ns,
                    delivered_per_sec: if span == 0 {
                        0.0
                    } else {
                        loss.received as f64 * 1e9 / span as f64
                    },
                    loss,
                }
            })
            .collect();
        ChildReport {
            process: self.process,
            pid: self.pid,
            stop: self.stop,
            connect_ns: self.connect_ns,
            subscribers,
            latency: all,
            // The runner fills it in from the node's usage.
            usage: ProcessUsage {
                name: format!("subscribers {}", self.process),
                pid: self.pid,
                cpu_user_ms: 0.0,
                cpu_sys_ms: 0.0,
                peak_rss_kib: 0,
            },
            host: None,
            clock_error_ns: None,
            ticks: Vec::new(),
        }
    }
}

impl<'de> Deserialize<'de> for ChildReport {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let v = serde_json::Value::deserialize(d)?;
        let compact = v
            .get("subscribers")
            .and_then(|s| s.as_array())
            .is_some_and(|s| s.first().is_some_and(|x| x.get("runs").is_some()))
            || v.get("usage").is_none();
        if compact {
            return serde_json::from_value::<CompactReport>(v)
                .map(CompactReport::into_report)
                .map_err(D::Error::custom);
        }
        let f: FullReport = serde_json::from_value(v).map_err(D::Error::custom)?;
        Ok(ChildReport {
            process: f.process,
            pid: f.pid,
            stop: f.stop,
            connect_ns: f.connect_ns,
            subscribers: f.subscribers,
            latency: f.latency,
            usage: f.usage,
            host: None,
            clock_error_ns: None,
            ticks: f.ticks,
        })
    }
}

/// Running figures of one subscriber.
#[derive(Debug, Clone, Default)]
pub(crate) struct SubState {
    ledger: StreamLedger,
    stream: Option<u32>,
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    /// Send time of the first stamped message, on this clock (None while no stamp was
    /// possible on it).
    first_send_ns: Option<u64>,
    first_recv_ns: Option<u64>,
    last_recv_ns: u64,
    end_seq: Option<u64>,
    warmup: u64,
}

impl SubState {
    /// Records one message received at `now`; returns its latency (if stamped, and possible
    /// on this clock as `clock` reads the stream's stamps). A message of another stream is a
    /// protocol error. Inlined into the swarm's receive loop (see `deliver`).
    #[inline(always)]
    pub(crate) fn record(
        &mut self,
        h: &Header,
        now: u64,
        clock: &mut OneWay,
    ) -> std::result::Result<Option<u64>, String> {
        match self.stream {
            None => self.stream = Some(h.stream_id),
            Some(s) if s != h.stream_id => {
                return Err(format!(
                    "messages of two streams arrived (ids {s} and {}): two publishers on one endpoint, or a publisher restarted while the subscribers ran",
                    h.stream_id
                ))
            }
            Some(_) => {}
        }
        if h.flags & FLAG_WARMUP != 0 {
            self.warmup += 1;
            return Ok(None);
        }
        self.ledger.record(h.sequence);
        self.last_recv_ns = now;
        self.first_recv_ns.get_or_insert(now);
        let mut latency = None;
        // An impossible stamp (another host's clock) is counted by the clock's check only.
        if let Some(ns) = h
            .has_timestamp()
            .then(|| clock.delay(h.send_ns, now))
            .flatten()
        {
            if self.count == 0 {
                self.first_delay(ns, now);
            }
            self.count += 1;
            self.sum_ns += ns as u128;
            self.min_ns = self.min_ns.min(ns);
            self.max_ns = self.max_ns.max(ns);
            latency = Some(ns);
        }
        if h.flags & FLAG_END != 0 {
            self.end_seq = Some(h.sequence);
        }
        Ok(latency)
    }

    /// The first delay of the subscriber, `ns` at `now`: where its minimum starts, and the
    /// send time on this clock (converted when the publisher is elsewhere).
    #[cold]
    #[inline(never)]
    fn first_delay(&mut self, ns: u64, now: u64) {
        self.min_ns = ns;
        self.first_send_ns = Some(now - ns);
    }

    /// The least and greatest latency and their sum, when there is one: this subscriber's
    /// part of the swarm's histogram, which records the rest of each latency
    /// ([`LatencyHistogram::record_shape`]).
    pub(crate) fn extremes_and_sum(&self) -> Option<(u64, u64, u128)> {
        (self.count > 0).then_some((self.min_ns, self.max_ns, self.sum_ns))
    }

    /// The sequence number of the end-of-stream message, once it arrived.
    pub(crate) fn end_seq(&self) -> Option<u64> {
        self.end_seq
    }

    /// Whether the end-of-stream message arrived.
    pub(crate) fn ended(&self) -> bool {
        self.end_seq.is_some()
    }

    /// How many messages the stream had, as far as this subscriber can tell.
    pub(crate) fn stream_length(&self) -> Option<u64> {
        if let Some(s) = self.end_seq {
            return Some(s + 1);
        }
        let l = self.ledger.summary(None);
        (l.received > 0).then_some(l.expected)
    }

    /// The subscriber's report, with `expected` messages due.
    pub(crate) fn report(&self, process: u32, sub: u32, expected: u64) -> SubReport {
        // An empty ledger reports the whole stream as one hole at the start.
        let loss = self.ledger.summary(Some(expected));
        // From the first send, on this clock; when no stamp could be read on it (clocks
        // that differ), from the first receipt.
        let span = self
            .first_send_ns
            .or(self.first_recv_ns)
            .map(|s| self.last_recv_ns.saturating_sub(s))
            .unwrap_or(0);
        SubReport {
            process,
            sub,
            ended: self.ended(),
            warmup: self.warmup,
            latency_count: self.count,
            latency_min_ns: self.min_ns,
            latency_max_ns: self.max_ns,
            latency_mean_ns: if self.count == 0 {
                0.0
            } else {
                self.sum_ns as f64 / self.count as f64
            },
            delivered_per_sec: if span == 0 {
                0.0
            } else {
                loss.received as f64 * 1e9 / span as f64
            },
            loss,
        }
    }
}

mod lean;
pub(crate) use lean::LeanRun;

#[cfg(test)]
mod tests;
