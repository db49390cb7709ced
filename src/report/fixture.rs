//! A made-up but self-consistent run for tests: every report format, the store and the
//! runner's tests render or keep it. Deterministic: the same bytes on every call and host.
//!
//! The samples come from an integer generator (no floating-point maths that could differ
//! between platforms), and the derived floats are rounded to a few decimals so the
//! snapshots and the JSON stay short and readable.

use crate::endpoint::Transport;
use crate::model::{
    CaseResult, CaseSummary, EdgeResult, Environment, Estimate, Finding, Floor, Kind, LoopMode,
    Measure, NodeResult, Repetition, RoleUsage, RunResult, Severity, TimedGap, Workload,
    SCHEMA_VERSION,
};
use crate::stats::ledger::Gap;
use crate::stats::{
    estimate, GapPosition, LatencyHistogram, LatencySummary, LossSummary, Throughput,
};
use std::collections::BTreeMap;

/// A small linear congruential generator: the same numbers everywhere.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

fn round(x: f64, decimals: i32) -> f64 {
    let m = 10f64.powi(decimals);
    (x * m).round() / m
}

fn round_estimate(e: Estimate) -> Estimate {
    Estimate {
        median: round(e.median, 3),
        ci_low: round(e.ci_low, 3),
        ci_high: round(e.ci_high, 3),
        spread_pct: round(e.spread_pct, 2),
        n: e.n,
    }
}

fn est(xs: &[f64]) -> Option<Estimate> {
    estimate(xs).map(round_estimate)
}

/// `n` samples around `base_ns`: uniform jitter, 1% of them slower, 0.1% much slower and
/// 0.01% far out, like a real latency distribution with a tail.
fn samples(seed: u64, n: u64, base_ns: u64, jitter_ns: u64) -> LatencyHistogram {
    let mut g = Lcg(seed);
    let mut h = LatencyHistogram::new();
    for _ in 0..n {
        let mut v = base_ns + g.next() % jitter_ns;
        let t = g.next() % 10_000;
        if t < 100 {
            v += g.next() % (jitter_ns * 8);
        }
        if t < 10 {
            v += g.next() % (base_ns * 4);
        }
        if t == 0 {
            v += base_ns * 20 + g.next() % base_ns;
        }
        h.record(v);
    }
    h
}

fn rounded_summary(h: &LatencyHistogram) -> LatencySummary {
    let mut s = h.summary();
    s.mean_ns = round(s.mean_ns, 1);
    s.stddev_ns = round(s.stddev_ns, 1);
    s.harmonic_mean_ns = round(s.harmonic_mean_ns, 1);
    s
}

fn role(name: &str, placement: &str, user: f64, sys: f64, rss_kib: u64) -> RoleUsage {
    RoleUsage {
        role: name.to_string(),
        placement: placement.to_string(),
        cpu_user_ms: round(user, 1),
        cpu_sys_ms: round(sys, 1),
        peak_rss_kib: rss_kib,
    }
}

/// Summary figures of a case from its repetitions, the way the runner computes them.
fn summarise(reps: &[Repetition]) -> CaseSummary {
    let lat = |f: fn(&LatencySummary) -> f64| -> Vec<f64> {
        reps.iter()
            .filter_map(|r| r.latency.as_ref().map(f))
            .collect()
    };
    let thr = |pick: fn(&Repetition) -> Option<Throughput>, f: fn(&Throughput) -> f64| {
        reps.iter()
            .filter_map(|r| pick(r).map(|t| f(&t)))
            .collect::<Vec<f64>>()
    };
    let mut lost = 0;
    let mut duplicated = 0;
    let mut reordered = 0;
    for l in reps.iter().filter_map(|r| r.loss.as_ref()) {
        lost += l.lost;
        duplicated += l.duplicated;
        reordered += l.reordered;
    }
    CaseSummary {
        latency_us: est(&lat(|s| s.mean_ns / 1000.0)),
        p50_us: est(&lat(|s| s.p50_ns as f64 / 1000.0)),
        p99_us: est(&lat(|s| s.p99_ns as f64 / 1000.0)),
        msgs_per_sec: est(&thr(|r| r.delivered, Throughput::msgs_per_sec)),
        mbit_per_sec: est(&thr(|r| r.delivered, Throughput::mbit_per_sec)),
        send_msgs_per_sec: est(&thr(|r| r.send, Throughput::msgs_per_sec)),
        send_delay_p50_us: est(&reps
            .iter()
            .filter_map(|r| r.send_delay.as_ref().map(|s| s.p50_ns as f64 / 1000.0))
            .collect::<Vec<_>>()),
        lost,
        duplicated,
        reordered,
    }
}

/// Run clock origin of the fixture's spans, ns.
const T0: u64 = 1_000_000_000;

fn latency_case(
    pattern: &str,
    transport: Transport,
    size: usize,
    base_ns: [u64; 3],
    floor_socket: Option<&str>,
    seed: u64,
) -> CaseResult {
    let count = 10_000u64;
    let mut reps = Vec::new();
    for (i, &base) in base_ns.iter().enumerate() {
        let h = samples(seed + i as u64, count, base, base / 8 + 1);
        let s = rounded_summary(&h);
        // A round trip is two one-way latencies; the span is all round trips back to back.
        let span = 2 * (s.mean_ns as u64) * count;
        let start = T0 + i as u64 * 10_000_000_000;
        let cpu = span as f64 / 1e6;
        reps.push(Repetition {
            latency: Some(s),
            latency_histogram: Some(h),
            send_delay: None,
            send: None,
            delivered: Some(Throughput {
                messages: count,
                payload_bytes: count * size as u64,
                start_ns: start,
                end_ns: start + span,
            }),
            loss: None,
            roles: vec![
                role(
                    "client",
                    "thread",
                    cpu * 0.41,
                    cpu * 0.52,
                    14_336 + 64 * i as u64,
                ),
                role(
                    "server",
                    "thread",
                    cpu * 0.39,
                    cpu * 0.55,
                    14_336 + 64 * i as u64,
                ),
            ],
        });
    }
    let summary = summarise(&reps);
    let floor = floor_socket.map(|socket| Floor {
        socket: socket.to_string(),
        latency_us: round(base_ns[1] as f64 / 1000.0 * 0.62, 3),
        roundtrips: count,
    });
    CaseResult {
        id: CaseResult::make_id(Kind::Latency, pattern, transport, size, None),
        kind: Kind::Latency,
        pattern: pattern.to_string(),
        transport,
        message_size: size,
        count,
        rate: None,
        loop_mode: LoopMode::Closed,
        warmup: 1_000,
        repetitions: reps,
        summary,
        floor,
        warnings: Vec::new(),
        error: None,
        wall_s: round(
            base_ns.iter().sum::<u64>() as f64 * 2.0 * count as f64 / 1e9 + 0.3,
            3,
        ),
        nodes: Vec::new(),
        edges: Vec::new(),
    }
}

/// One stream of `count` messages: the receiver's span, the sender's (shorter: it finishes
/// before the last message is read), and the first `lost_at_start` messages missing.
struct Stream {
    count: u64,
    size: usize,
    span_ns: u64,
    send_span_ns: u64,
    lost_at_start: u64,
}

fn stream_rep(st: &Stream, i: u64, h: LatencyHistogram, placement: &str) -> Repetition {
    let start = T0 + i * 10_000_000_000;
    // A stream that lost its start also loses 250 in the middle, halfway through.
    let lost_in_middle = if st.lost_at_start > 0 { 250 } else { 0 };
    let received = st.count - st.lost_at_start - lost_in_middle;
    let mut gaps = Vec::new();
    if st.lost_at_start > 0 {
        gaps.push(Gap {
            first_seq: 0,
            count: st.lost_at_start,
            position: GapPosition::Start,
            after_ns: None,
        });
        gaps.push(Gap {
            first_seq: st.count / 2,
            count: lost_in_middle,
            position: GapPosition::Middle,
            after_ns: Some(st.span_ns / 2),
        });
    }
    let cpu = st.span_ns as f64 / 1e6;
    Repetition {
        latency: Some(rounded_summary(&h)),
        latency_histogram: Some(h),
        send_delay: None,
        send: Some(Throughput {
            messages: st.count,
            payload_bytes: st.count * st.size as u64,
            start_ns: start,
            end_ns: start + st.send_span_ns,
        }),
        delivered: Some(Throughput {
            messages: received,
            payload_bytes: received * st.size as u64,
            start_ns: start + 20_000,
            end_ns: start + 20_000 + st.span_ns,
        }),
        loss: Some(LossSummary {
            expected: st.count,
            received,
            lost: st.lost_at_start + lost_in_middle,
            duplicated: 0,
            reordered: 0,
            gap_count: gaps.len() as u64,
            lost_at_start: st.lost_at_start,
            lost_in_middle,
            lost_at_end: 0,
            gaps,
        }),
        roles: vec![
            role("sender", placement, cpu * 0.83, cpu * 0.15, 9_216 + 128 * i),
            role(
                "receiver",
                placement,
                cpu * 0.78,
                cpu * 0.2,
                10_240 + 96 * i,
            ),
        ],
    }
}

fn throughput_case(
    pattern: &str,
    transport: Transport,
    size: usize,
    spans_ns: [u64; 3],
    lost_first_rep: u64,
    placement: &str,
    seed: u64,
) -> CaseResult {
    let count = 1_000_000u64;
    let mut reps = Vec::new();
    for (i, &span) in spans_ns.iter().enumerate() {
        let st = Stream {
            count,
            size,
            span_ns: span,
            send_span_ns: span - span / 12,
            lost_at_start: if i == 0 { lost_first_rep } else { 0 },
        };
        // Sampled one-way latency at full speed: queueing, tens of microseconds.
        let h = samples(seed + i as u64, 20_000, 18_000 + size as u64 * 3, 40_000);
        reps.push(stream_rep(&st, i as u64, h, placement));
    }
    let summary = summarise(&reps);
    CaseResult {
        id: CaseResult::make_id(Kind::Throughput, pattern, transport, size, None),
        kind: Kind::Throughput,
        pattern: pattern.to_string(),
        transport,
        message_size: size,
        count,
        rate: None,
        loop_mode: LoopMode::Closed,
        warmup: 10_000,
        repetitions: reps,
        summary,
        floor: None,
        warnings: Vec::new(),
        error: None,
        wall_s: round(spans_ns.iter().sum::<u64>() as f64 / 1e9 + 0.4, 3),
        nodes: Vec::new(),
        edges: Vec::new(),
    }
}

fn open_loop_case(size: usize, rate: f64, seed: u64) -> CaseResult {
    let count = 100_000u64;
    let span = (count as f64 / rate * 1e9) as u64;
    let mut reps = Vec::new();
    for i in 0..3u64 {
        let st = Stream {
            count,
            size,
            span_ns: span + 35_000 + i * 4_000,
            send_span_ns: span - 100_000 + i * 1_000,
            lost_at_start: 0,
        };
        // Latency counts from the due time: a few tens of us, with the tail of late sends.
        let h = samples(seed + i, count, 38_000 + i * 600, 9_000);
        let mut rep = stream_rep(&st, i, h, "thread");
        rep.send_delay = Some(rounded_summary(&samples(seed + 100 + i, count, 900, 2_600)));
        reps.push(rep);
    }
    let summary = summarise(&reps);
    CaseResult {
        id: CaseResult::make_id(
            Kind::Throughput,
            "pushpull",
            Transport::Tcp,
            size,
            Some(rate),
        ),
        kind: Kind::Throughput,
        pattern: "pushpull".to_string(),
        transport: Transport::Tcp,
        message_size: size,
        count,
        rate: Some(rate),
        loop_mode: LoopMode::Open,
        warmup: 1_000,
        repetitions: reps,
        summary,
        floor: None,
        warnings: Vec::new(),
        error: None,
        wall_s: round(3.0 * span as f64 / 1e9 + 0.5, 3),
        nodes: Vec::new(),
        edges: Vec::new(),
    }
}

/// A topology case as `zmqperf run` writes it for a file of nodes: a PUB `pub` (a source)
/// sending 200,000 messages of 64 B per repetition to two SUBs, `sub1` and `sub2` (sinks),
/// each node in its own process. In the first repetition sub2 loses 250 messages in the
/// middle of the stream (a high-water mark); sub1 gets every message. The repetitions'
/// figures merge both sinks, as the runner's do; the edges and nodes are merged over the
/// repetitions.
fn topology_case(seed: u64) -> CaseResult {
    let count = 200_000u64;
    let size = 64usize;
    let sinks = ["sub1", "sub2"];
    let mut edge_hist = [LatencyHistogram::new(), LatencyHistogram::new()];
    let mut edge_loss = [LossSummary::default(), LossSummary::default()];
    let mut edge_rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut edge_msgs = [0u64; 2];
    let mut send_rates = Vec::new();
    // Per node (pub, sub1, sub2): CPU time over the repetitions, largest peak memory.
    let mut cpu = [0.0f64; 3];
    let mut rss = [0u64; 3];
    let mut reps = Vec::new();
    for i in 0..3u64 {
        let start = T0 + i * 10_000_000_000;
        let send_span = 81_000_000 + i * 1_500_000;
        let send = Throughput {
            messages: count,
            payload_bytes: count * size as u64,
            start_ns: start,
            end_ns: start + send_span,
        };
        send_rates.push(send.msgs_per_sec());
        let c = send_span as f64 / 1e6;
        let sender = role("sender", "process", c * 0.86, c * 0.12, 9_344 + 128 * i);
        cpu[0] += sender.cpu_user_ms + sender.cpu_sys_ms;
        rss[0] = rss[0].max(sender.peak_rss_kib);
        let mut roles = vec![sender];
        let mut latency = LatencyHistogram::new();
        let mut delivered: Option<Throughput> = None;
        let mut loss = LossSummary::default();
        for k in 0..sinks.len() {
            let lost = if k == 1 && i == 0 { 250 } else { 0 };
            let received = count - lost;
            let span = send_span + 400_000 + k as u64 * 250_000 + i * 100_000;
            let d = Throughput {
                messages: received,
                payload_bytes: received * size as u64,
                start_ns: start + 25_000,
                end_ns: start + 25_000 + span,
            };
            let gaps = if lost > 0 {
                vec![Gap {
                    first_seq: count / 2,
                    count: lost,
                    position: GapPosition::Middle,
                    after_ns: Some(span / 2),
                }]
            } else {
                Vec::new()
            };
            let l = LossSummary {
                expected: count,
                received,
                lost,
                duplicated: 0,
                reordered: 0,
                gap_count: gaps.len() as u64,
                lost_at_start: 0,
                lost_in_middle: lost,
                lost_at_end: 0,
                gaps,
            };
            let h = samples(
                seed + 10 * k as u64 + i,
                20_000,
                21_000 + 1_500 * k as u64,
                30_000,
            );
            latency.merge(&h);
            edge_hist[k].merge(&h);
            edge_loss[k].add(&l);
            loss.add(&l);
            edge_msgs[k] += received;
            edge_rates[k].push(d.msgs_per_sec());
            delivered.get_or_insert_with(Throughput::default).merge(&d);
            let c = span as f64 / 1e6;
            let receiver = role(
                "receiver",
                "process",
                c * 0.74,
                c * 0.21,
                10_240 + 96 * i + 64 * k as u64,
            );
            cpu[k + 1] += receiver.cpu_user_ms + receiver.cpu_sys_ms;
            rss[k + 1] = rss[k + 1].max(receiver.peak_rss_kib);
            roles.push(receiver);
        }
        reps.push(Repetition {
            latency: Some(rounded_summary(&latency)),
            latency_histogram: Some(latency),
            send_delay: None,
            send: Some(send),
            delivered,
            loss: Some(loss),
            roles,
        });
    }
    let summary = summarise(&reps);
    let median = |xs: &[f64]| est(xs).map(|e| e.median);
    let node = |i: usize, name: &str, role: &str| NodeResult {
        name: name.to_string(),
        role: role.to_string(),
        replicas: 1,
        placement: "process".to_string(),
        cpu_ms: round(cpu[i], 1),
        peak_rss_kib: rss[i],
        send_msgs_per_sec: None,
        delivered_msgs_per_sec: None,
        forwarded: None,
        cut_short: Vec::new(),
    };
    let mut nodes = vec![NodeResult {
        send_msgs_per_sec: median(&send_rates),
        ..node(0, "pub", "source")
    }];
    let mut edges = Vec::new();
    for (k, name) in sinks.iter().enumerate() {
        nodes.push(NodeResult {
            delivered_msgs_per_sec: median(&edge_rates[k]),
            ..node(k + 1, name, "sink")
        });
        edges.push(EdgeResult {
            from: "pub".to_string(),
            to: name.to_string(),
            messages: edge_msgs[k],
            bytes: edge_msgs[k] * size as u64,
            msgs_per_sec: median(&edge_rates[k]),
            loss: Some(edge_loss[k].clone()),
            latency: Some(rounded_summary(&edge_hist[k])),
        });
    }
    CaseResult {
        id: CaseResult::make_id(Kind::Throughput, "ptmp", Transport::Tcp, size, None),
        kind: Kind::Throughput,
        pattern: "ptmp".to_string(),
        transport: Transport::Tcp,
        message_size: size,
        count,
        rate: None,
        loop_mode: LoopMode::Closed,
        warmup: 20_000,
        repetitions: reps,
        summary,
        floor: None,
        warnings: vec![
            "delivery: 250 lost (start 0, middle 250, end 0), 0 duplicated, 0 reordered"
                .to_string(),
        ],
        error: None,
        wall_s: 1.284,
        nodes,
        edges,
    }
}

/// The sample run: latency reqrep/tcp at 64, 1024 and 65536 B, latency pair/ipc at 64 B,
/// throughput pushpull/tcp at 64 and 1024 B, throughput pubsub/inproc at 64 B with 1,797
/// messages lost at the start, pushpull/tcp 1024 B open loop at 10,000 msg/s, a failed
/// dealerrouter/tcp case, and last a topology (`ptmp`: PUB `pub` to SUBs `sub1` and `sub2`,
/// sub2 losing 250 in the middle) with its nodes and edges. Three cases carry warnings;
/// latency cases over tcp and ipc carry a raw-socket floor.
#[doc(hidden)]
pub fn sample_run() -> RunResult {
    let mut cases = vec![
        latency_case(
            "reqrep",
            Transport::Tcp,
            64,
            [29_400, 29_950, 30_600],
            Some("tcp"),
            11,
        ),
        latency_case(
            "reqrep",
            Transport::Tcp,
            1024,
            [31_200, 31_800, 32_100],
            Some("tcp"),
            21,
        ),
        latency_case(
            "reqrep",
            Transport::Tcp,
            65536,
            [88_000, 95_500, 101_000],
            Some("tcp"),
            31,
        ),
        latency_case(
            "pair",
            Transport::Ipc,
            64,
            [17_900, 18_150, 18_300],
            Some("unix"),
            41,
        ),
        throughput_case(
            "pushpull",
            Transport::Tcp,
            64,
            [412_000_000, 398_500_000, 405_300_000],
            0,
            "process",
            51,
        ),
        throughput_case(
            "pushpull",
            Transport::Tcp,
            1024,
            [1_310_000_000, 1_285_000_000, 1_322_000_000],
            0,
            "process",
            61,
        ),
        throughput_case(
            "pubsub",
            Transport::Inproc,
            64,
            [188_000_000, 179_600_000, 183_100_000],
            1_797,
            "thread",
            71,
        ),
        open_loop_case(1024, 10_000.0, 81),
    ];

    let spread = cases[2]
        .summary
        .latency_us
        .map(|e| e.spread_pct)
        .unwrap_or(0.0);
    cases[2].warnings.push(format!(
        "high spread: {spread:.1}% between repetitions (over 10%), so the median is less certain; \
         close other programs or raise --count"
    ));
    cases[6].warnings.push(
        "1797 messages lost at the start of the stream: a \"slow joiner\" (the subscriber \
         connected after the first messages were sent); raise --warmup or wait for subscriptions"
            .to_string(),
    );

    cases.push(CaseResult {
        id: CaseResult::make_id(Kind::Latency, "dealerrouter", Transport::Tcp, 64, None),
        kind: Kind::Latency,
        pattern: "dealerrouter".to_string(),
        transport: Transport::Tcp,
        message_size: 64,
        count: 10_000,
        rate: None,
        loop_mode: LoopMode::Closed,
        warmup: 1_000,
        repetitions: Vec::new(),
        summary: CaseSummary::default(),
        floor: None,
        warnings: Vec::new(),
        error: Some(
            "peer stopped: 412 of 10000 round trips done on tcp://127.0.0.1:41235, then nothing \
             for 5 s. Check that the other side is still running and was given the same \
             message count"
                .to_string(),
        ),
        wall_s: 5.214,
        nodes: Vec::new(),
        edges: Vec::new(),
    });
    cases.push(topology_case(91));

    RunResult {
        schema_version: SCHEMA_VERSION,
        run_id: "20261121-221530-4f2a".to_string(),
        started_at: "2026-11-21T22:15:30Z".to_string(),
        finished_at: Some("2026-11-21T22:16:41Z".to_string()),
        status: "complete".to_string(),
        command: "zmqperf run --workload suite.toml --repetitions 3".to_string(),
        workload: Some(Workload {
            path: "suite.toml".to_string(),
            text: "[[case]]\nkind = \"latency\"\npattern = \"reqrep\"\ntransport = \"tcp\"\n\
                   sizes = [64, 1024, 65536]\n"
                .to_string(),
        }),
        environment: Environment {
            cpu_model: "Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz".to_string(),
            cores: 8,
            memory_bytes: 33_554_432 * 1024,
            kernel: "6.1.0-27-amd64".to_string(),
            os: "Debian GNU/Linux 12 (bookworm)".to_string(),
            hostname: "bench-01".to_string(),
            libzmq_version: "4.3.5".to_string(),
            zmqperf_version: "0.1.0".to_string(),
        },
        cases,
        findings: sample_findings(),
    }
}

/// Two findings as `zmqperf diagnose` writes them: a slow joiner that lost the start of a
/// stream (a warning, with its gap) and a PUSH that blocked instead of dropping (info).
pub fn sample_findings() -> Vec<Finding> {
    let evidence = |pairs: Vec<(&str, Measure)>| -> BTreeMap<String, Measure> {
        pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
    };
    vec![
        Finding {
            id: "slow-joiner/tcp".to_string(),
            experiment: "slow-joiner".to_string(),
            transport: Transport::Tcp,
            severity: Severity::Warning,
            title: "PUB/SUB over tcp: 1,797 messages lost at the start (slow joiner)".to_string(),
            observed: "The publisher sent at once after connecting; the subscription reached \
                       it 2.7 ms after its first send, and the 1,797 messages sent before \
                       that went to no one. With a 5 ms wait 0 were lost; with a handshake \
                       0 (ready after 3.1 ms); with an XPUB waiting for the subscription 0 \
                       (ready after 2.5 ms)."
                .to_string(),
            cause: "A PUB sends only to subscribers whose subscription it has received; \
                    connecting and passing the subscription take time, and messages sent \
                    meanwhile are dropped."
                .to_string(),
            remedy: "Wait for the subscription on an XPUB before publishing (or use a \
                     handshake on a second socket); a fixed sleep is a guess that fails on a \
                     slower network."
                .to_string(),
            evidence: evidence(vec![
                ("sent", Measure::Count(21_797)),
                ("received", Measure::Count(20_000)),
                ("lost_at_start", Measure::Count(1_797)),
                ("subscription_ms", Measure::Number(2.74)),
                ("first_arrival_ms", Measure::Number(2.81)),
                ("fixed_wait_ms", Measure::Count(5)),
                ("fixed_wait_lost", Measure::Count(0)),
                ("handshake_lost", Measure::Count(0)),
                ("handshake_ready_ms", Measure::Number(3.1)),
                ("xpub_lost", Measure::Count(0)),
                ("xpub_ready_ms", Measure::Number(2.5)),
            ]),
            gaps: vec![TimedGap {
                first_seq: 0,
                count: 1_797,
                position: GapPosition::Start,
                before_ms: None,
                after_ms: Some(2.81),
            }],
            wall_s: 0.214,
            error: None,
        },
        Finding {
            id: "sender-stops/inproc".to_string(),
            experiment: "sender-stops".to_string(),
            transport: Transport::Inproc,
            severity: Severity::Info,
            title: "PUSH/PULL over inproc: the receiver noticed the silent sender after 250 ms"
                .to_string(),
            observed: "The sender stopped after 1,000 messages and kept its socket open. The \
                       receiver's 250 ms timeout expired 251.3 ms after the last message \
                       arrived; nothing was lost."
                .to_string(),
            cause: "A connection does not break when its sender goes quiet: without a timeout \
                    a receive waits for ever."
                .to_string(),
            remedy: "Give every receive a timeout (ZMQ_RCVTIMEO, or zmq_poll with a timeout) \
                     and decide what to do when it expires."
                .to_string(),
            evidence: evidence(vec![
                ("received", Measure::Count(1_000)),
                ("last_seq", Measure::Count(999)),
                ("timeout_ms", Measure::Number(250.0)),
                ("silence_ms", Measure::Number(251.3)),
                ("sockets", Measure::Text("PUSH -> PULL".to_string())),
            ]),
            gaps: Vec::new(),
            wall_s: 0.312,
            error: None,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_consistent() {
        let a = sample_run();
        assert_eq!(a, sample_run());
        assert_eq!(a.cases.len(), 10);
        let pubsub = &a.cases[6];
        assert_eq!(pubsub.summary.lost, 1797 + 250);
        // The topology: its edges add up to its repetitions' figures.
        let ptmp = &a.cases[9];
        assert_eq!(ptmp.nodes.len(), 3);
        assert_eq!(ptmp.edges.len(), 2);
        assert_eq!(ptmp.summary.lost, 250);
        let lost: u64 = ptmp
            .edges
            .iter()
            .filter_map(|e| e.loss.as_ref())
            .map(|l| l.lost)
            .sum();
        assert_eq!(lost, 250);
        let delivered: u64 = ptmp
            .repetitions
            .iter()
            .filter_map(|r| r.delivered)
            .map(|d| d.messages)
            .sum();
        assert_eq!(
            ptmp.edges.iter().map(|e| e.messages).sum::<u64>(),
            delivered
        );
        assert_eq!(ptmp.edges[1].loss.as_ref().unwrap().lost_in_middle, 250);
        assert!(a
            .cases
            .iter()
            .any(|c| c.error.is_some() && c.repetitions.is_empty()));
        for c in a
            .cases
            .iter()
            .filter(|c| c.kind == Kind::Latency && c.error.is_none())
        {
            let h = c.repetitions[2].latency_histogram.as_ref().unwrap();
            assert_eq!(h.count(), c.count);
        }
    }
}
