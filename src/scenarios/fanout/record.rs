//! A fan-out run as a case of the history: the figures `compare` judges (latency over all
//! deliveries, loss), the publisher and every subscriber process as nodes, and one edge per
//! subscriber process.

use super::FanoutReport;
use crate::model::{CaseResult, EdgeResult, Kind, LoopMode, NodeResult, Repetition};
use crate::stats::LossSummary;

/// The case of a fan-out (or sub-cluster) report. Its pattern names the shape
/// (`fanout[8x1000]`), so that runs of the same shape compare with each other.
pub fn to_case(r: &FanoutReport, wall_s: f64) -> CaseResult {
    let size = r.publisher.as_ref().map(|p| p.message_size).unwrap_or(0);
    // The shape asked for, failed processes included: a run cut short compares with runs of
    // its own shape, and says it is incomplete.
    let pattern = format!(
        "{}[{}x{}]",
        r.command,
        r.requested_processes(),
        r.subs_per_process
    );
    let rep = repetition(r);
    // Figures `compare` judges come only from samples read on one clock (or converted).
    let shown = Repetition {
        latency: rep.latency.filter(|l| !l.clock.differs()),
        ..rep.clone()
    };
    let summary = crate::runner::summarise(&[shown]);
    let reps = vec![rep];
    let (nodes, edges) = nodes_and_edges(r, size);
    let warnings = warnings(r);
    CaseResult {
        id: CaseResult::make_id(Kind::Throughput, &pattern, r.transport, size, None),
        kind: Kind::Throughput,
        pattern,
        transport: r.transport,
        message_size: size,
        count: r.expected_per_subscriber,
        rate: None,
        loop_mode: LoopMode::Open,
        warmup: r.publisher.as_ref().map(|p| p.warmup_ticks).unwrap_or(0),
        repetitions: reps,
        summary,
        // The fan-out's raw-socket floor, as a latency case's: the mean one-way latency
        // over plain sockets (its count: the deliveries measured, not round trips).
        floor: r.floor.as_ref().map(|f| crate::model::Floor {
            socket: f.socket.clone(),
            latency_us: f.raw.mean_ns / 1e3,
            roundtrips: f.raw.deliveries,
            p50_us: Some(f.raw.p50_ns as f64 / 1e3),
            p99_us: Some(f.raw.p99_ns as f64 / 1e3),
        }),
        warnings,
        incomplete: r.incomplete(),
        error: None,
        wall_s,
        nodes,
        edges,
        sender: Some(r.sender_facts()),
        machine: None,
        intervals: r.ticks.iter().cloned().collect(),
    }
}

/// The one repetition of a fan-out: its latency kept when measured, or when the clock
/// check has something to say (clocks that differ leave no samples, and the history must
/// still say why).
fn repetition(r: &FanoutReport) -> Repetition {
    let kept = r.latency.count > 0 || !r.latency.clock.is_same_clock();
    Repetition {
        latency: kept.then_some(r.latency),
        latency_histogram: kept.then(|| r.latency_histogram.clone()),
        send_delay: r.publisher.as_ref().and_then(|p| p.send_delay),
        send: r.publisher.as_ref().map(|p| p.send),
        delivered: None,
        loss: Some(r.delivery.clone()),
        roles: Vec::new(),
    }
}

/// The publisher and every subscriber process as nodes, and one edge from the publisher
/// to each process with its subscribers' loss, their delivered rates added up and the
/// latency of everything they received (`size`: the message size).
fn nodes_and_edges(r: &FanoutReport, size: usize) -> (Vec<NodeResult>, Vec<EdgeResult>) {
    let mut nodes = Vec::new();
    if let Some(p) = &r.publisher {
        nodes.push(NodeResult {
            name: "pub".into(),
            role: "source".into(),
            replicas: 1,
            placement: "thread".into(),
            cpu_ms: p.usage.cpu_user_ms + p.usage.cpu_sys_ms,
            peak_rss_kib: p.usage.peak_rss_kib,
            send_msgs_per_sec: Some(p.send.msgs_per_sec()),
            ..Default::default()
        });
    }
    let mut edges = Vec::new();
    for proc in &r.process_list {
        let name = format!("subs[{}]", proc.process);
        nodes.push(NodeResult {
            name: name.clone(),
            role: "swarm".into(),
            replicas: 1,
            placement: "process".into(),
            cpu_ms: proc.usage.cpu_user_ms + proc.usage.cpu_sys_ms,
            peak_rss_kib: proc.usage.peak_rss_kib,
            ..Default::default()
        });
        let mut loss = LossSummary::default();
        let mut rate = 0.0;
        for s in r
            .per_subscriber
            .iter()
            .filter(|s| s.process == proc.process)
        {
            loss.add(&s.loss);
            rate += s.delivered_per_sec;
        }
        let measured = proc.latency.count > 0 || !proc.latency.clock.is_same_clock();
        edges.push(EdgeResult {
            from: "pub".into(),
            to: name,
            messages: loss.received,
            bytes: loss.received * size as u64,
            msgs_per_sec: (rate > 0.0).then_some(rate),
            loss: Some(loss),
            latency: measured.then_some(proc.latency),
            clock_error_ns: None,
        });
    }
    (nodes, edges)
}

/// The warning of a delivery that was not clean (loss, duplicates, reordering).
fn warnings(r: &FanoutReport) -> Vec<String> {
    let mut warnings = Vec::new();
    if !r.delivery.is_clean() {
        warnings.push(format!(
            "delivery: {} lost (start {}, middle {}, end {}), {} duplicated, {} reordered",
            r.delivery.lost,
            r.delivery.lost_at_start,
            r.delivery.lost_in_middle,
            r.delivery.lost_at_end,
            r.delivery.duplicated,
            r.delivery.reordered
        ));
    }
    warnings
}
