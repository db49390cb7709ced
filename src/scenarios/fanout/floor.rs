//! The raw-socket floor of a fan-out (`zmqperf fanout --floor`): the same run again with
//! plain stream sockets instead of libzmq (TCP for tcp://, Unix sockets for ipc://), one
//! process writing every message to every subscriber's connection and the same subscriber
//! processes reading them with epoll, measured the same way; and the two side by side, so a
//! user sees how much of the fan-out's latency and CPU is ZeroMQ's.

use super::{FanoutReport, ProcessSummary};
use crate::roles::publisher::PubResult;
use crate::stats::{LatencySummary, LossSummary};
use serde::Serialize;

/// One run's figures in the comparison.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Default)]
pub struct FloorFigures {
    /// Deliveries measured (subscribers x messages received; warm-up not counted).
    pub deliveries: u64,
    /// Deliveries made, warm-up included: what the CPU time below paid for.
    pub deliveries_made: u64,
    /// Mean latency of the measured deliveries, ns.
    pub mean_ns: f64,
    /// Median latency, ns.
    pub p50_ns: u64,
    /// 99th percentile latency, ns.
    pub p99_ns: u64,
    /// Largest latency, ns.
    pub max_ns: u64,
    /// CPU time (user + system) of all subscriber processes over their whole run
    /// (connecting, warm-up and measured ticks), ms.
    pub subscriber_cpu_ms: f64,
    /// CPU time (user + system) of the publisher's process over its run, ms.
    pub publisher_cpu_ms: f64,
    /// `subscriber_cpu_ms` per delivery made, us.
    pub subscriber_cpu_per_delivery_us: f64,
    /// `publisher_cpu_ms` per delivery made, us.
    pub publisher_cpu_per_delivery_us: f64,
}

/// libzmq's figure divided by the raw floor's (None where the floor's is zero).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Default)]
pub struct FloorRatios {
    /// Mean latency, libzmq / raw.
    pub mean: Option<f64>,
    /// p99 latency, libzmq / raw.
    pub p99: Option<f64>,
    /// Subscriber CPU per delivery, libzmq / raw.
    pub subscriber_cpu: Option<f64>,
    /// Publisher CPU per delivery, libzmq / raw.
    pub publisher_cpu: Option<f64>,
}

/// The raw-socket floor of a fan-out and its comparison with the libzmq run (the
/// report's `floor`).
#[derive(Debug, Clone, Serialize)]
pub struct FanoutFloor {
    /// The plain sockets: "tcp" or "unix".
    pub socket: String,
    /// Where the raw publisher listened.
    pub endpoint: String,
    /// Subscribers of the raw run.
    pub subscribers: u64,
    /// Delivery over the raw sockets, summed over all subscribers (the same ledger as the
    /// libzmq run's `delivery`).
    pub delivery: LossSummary,
    /// Subscribers that got every message exactly once and in order.
    pub complete_subscribers: u64,
    /// Whether the end of the raw stream is known (see the report's `stream_ended`).
    pub stream_ended: bool,
    /// Subscriber processes of the raw run that failed and were left out.
    pub failed_processes: Vec<String>,
    /// Latency of every raw delivery, from the write of a message's first copy to the
    /// subscriber's read (the same clock and reference as the libzmq run's `latency`).
    pub latency: LatencySummary,
    /// What the raw publisher did; its `usage` counts the CPU time of its process from the
    /// start of the raw run (the libzmq run before it left out).
    pub publisher: PubResult,
    /// The raw run's subscriber processes.
    pub process_list: Vec<ProcessSummary>,
    /// The libzmq run's figures.
    pub libzmq: FloorFigures,
    /// The raw floor's figures.
    pub raw: FloorFigures,
    /// libzmq / raw.
    pub ratio: FloorRatios,
    /// How much of libzmq's mean latency is above the floor: 1 - raw mean / libzmq mean
    /// (None without libzmq deliveries).
    pub zeromq_share_of_mean: Option<f64>,
}

fn cpu_ms(u: &crate::roles::swarm::ProcessUsage) -> f64 {
    u.cpu_user_ms + u.cpu_sys_ms
}

fn per_delivery_us(ms: f64, deliveries: u64) -> f64 {
    if deliveries == 0 {
        0.0
    } else {
        ms * 1000.0 / deliveries as f64
    }
}

/// The comparison figures of one run; `publisher_cpu_ms` as measured for it.
pub fn figures(r: &FanoutReport, publisher_cpu_ms: f64) -> FloorFigures {
    let made = r
        .per_subscriber
        .iter()
        .map(|s| s.loss.received + s.warmup)
        .sum();
    let subscriber_cpu_ms = r.process_list.iter().map(|p| cpu_ms(&p.usage)).sum();
    FloorFigures {
        deliveries: r.latency.count,
        deliveries_made: made,
        mean_ns: r.latency.mean_ns,
        p50_ns: r.latency.p50_ns,
        p99_ns: r.latency.p99_ns,
        max_ns: r.latency.max_ns,
        subscriber_cpu_ms,
        publisher_cpu_ms,
        subscriber_cpu_per_delivery_us: per_delivery_us(subscriber_cpu_ms, made),
        publisher_cpu_per_delivery_us: per_delivery_us(publisher_cpu_ms, made),
    }
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0 && a.is_finite() && b.is_finite()).then(|| a / b)
}

/// The floor from the libzmq run's report and the raw run's, whose publisher (`raw_pub`)
/// has its CPU time counted from the start of the raw run.
pub fn compare(zmq: &FanoutReport, raw: FanoutReport, raw_pub: PubResult) -> FanoutFloor {
    let zmq_pub_ms = zmq
        .publisher
        .as_ref()
        .map(|p| cpu_ms(&p.usage))
        .unwrap_or(0.0);
    let libzmq = figures(zmq, zmq_pub_ms);
    let rawf = figures(&raw, cpu_ms(&raw_pub.usage));
    let ratio = FloorRatios {
        mean: ratio(libzmq.mean_ns, rawf.mean_ns),
        p99: ratio(libzmq.p99_ns as f64, rawf.p99_ns as f64),
        subscriber_cpu: ratio(
            libzmq.subscriber_cpu_per_delivery_us,
            rawf.subscriber_cpu_per_delivery_us,
        ),
        publisher_cpu: ratio(
            libzmq.publisher_cpu_per_delivery_us,
            rawf.publisher_cpu_per_delivery_us,
        ),
    };
    let zeromq_share_of_mean = (libzmq.mean_ns > 0.0).then(|| 1.0 - rawf.mean_ns / libzmq.mean_ns);
    FanoutFloor {
        socket: match raw.transport {
            crate::endpoint::Transport::Ipc => "unix".into(),
            _ => "tcp".into(),
        },
        endpoint: raw.endpoint,
        subscribers: raw.subscribers,
        delivery: raw.delivery,
        complete_subscribers: raw.complete_subscribers,
        stream_ended: raw.stream_ended,
        failed_processes: raw.failed_processes,
        latency: raw.latency,
        publisher: raw_pub,
        process_list: raw.process_list,
        libzmq,
        raw: rawf,
        ratio,
        zeromq_share_of_mean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::Transport;
    use crate::roles::swarm::{ChildReport, ProcessUsage, StopReason, SubReport};
    use crate::stats::LatencyHistogram;

    fn usage(ms: f64) -> ProcessUsage {
        ProcessUsage {
            name: "x".into(),
            pid: 1,
            cpu_user_ms: ms / 2.0,
            cpu_sys_ms: ms / 2.0,
            peak_rss_kib: 1,
        }
    }

    /// A report of `subs` subscribers of one process, each with `msgs` messages and one
    /// warm-up, every latency `lat_ns`, the process costing `cpu_ms`.
    fn report(
        transport: Transport,
        subs: u32,
        msgs: u64,
        lat_ns: u64,
        cpu_ms: f64,
    ) -> FanoutReport {
        let mut h = LatencyHistogram::new();
        let mut list = Vec::new();
        for s in 0..subs {
            let mut l = crate::stats::StreamLedger::new();
            for i in 0..msgs {
                l.record(i);
                h.record(lat_ns);
            }
            list.push(SubReport {
                process: 0,
                sub: s,
                loss: l.summary(Some(msgs)),
                ended: true,
                warmup: 1,
                latency_count: msgs,
                latency_min_ns: lat_ns,
                latency_max_ns: lat_ns,
                latency_mean_ns: lat_ns as f64,
                delivered_per_sec: 1.0,
            });
        }
        let child = ChildReport {
            process: 0,
            pid: 2,
            stop: StopReason::AllEnded,
            connect_ns: 1,
            subscribers: list,
            latency: h,
            usage: usage(cpu_ms),
            host: None,
            clock_error_ns: None,
            ticks: Vec::new(),
        };
        super::super::merge("fanout", "x", transport, subs, vec![child], None)
    }

    #[test]
    fn the_comparison_divides_libzmq_by_raw() {
        let zmq = report(Transport::Ipc, 4, 9, 40_000_000, 80.0);
        let raw = report(Transport::Ipc, 4, 9, 10_000_000, 20.0);
        let mut p: PubResult = serde_json::from_value(serde_json::json!({
            "endpoint": "ipc:///tmp/x", "transport": "ipc", "interval_ms": 1.0, "per_tick": 1,
            "passes": 9, "warmup_ticks": 1, "message_size": 64, "messages": 9,
            "subscribers": 4, "join_wait_ns": 0,
            "send": {"messages": 9, "payload_bytes": 576, "start_ns": 0, "end_ns": 1},
            "send_delay": null, "left": 4, "all_left": true,
            "usage": {"name": "publisher", "pid": 1, "cpu_user_ms": 1.0, "cpu_sys_ms": 1.0, "peak_rss_kib": 1}
        }))
        .unwrap();
        p.usage = usage(4.0);
        let f = compare(&zmq, raw, p);
        assert_eq!(f.socket, "unix");
        // 4 subscribers x (9 + 1 warm-up) deliveries made, 36 measured.
        assert_eq!((f.raw.deliveries, f.raw.deliveries_made), (36, 40));
        assert!((f.raw.subscriber_cpu_per_delivery_us - 500.0).abs() < 1e-9);
        assert!((f.raw.publisher_cpu_per_delivery_us - 100.0).abs() < 1e-9);
        assert_eq!(
            f.libzmq.publisher_cpu_ms, 0.0,
            "no libzmq publisher in this report"
        );
        let r = f.ratio.mean.unwrap();
        assert!((r - 4.0).abs() < 0.05, "{r}");
        assert!((f.ratio.subscriber_cpu.unwrap() - 4.0).abs() < 1e-9);
        assert_eq!(f.ratio.publisher_cpu, Some(0.0));
        let share = f.zeromq_share_of_mean.unwrap();
        assert!((share - 0.75).abs() < 0.01, "{share}");
        assert_eq!(f.complete_subscribers, 4);
    }

    #[test]
    fn a_zero_floor_has_no_ratio() {
        assert_eq!(ratio(5.0, 0.0), None);
        assert_eq!(ratio(6.0, 3.0), Some(2.0));
        assert_eq!(per_delivery_us(1.0, 0), 0.0);
    }
}
