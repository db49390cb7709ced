//! From the replicas' reports to results: one repetition's figures (the case's headline
//! numbers), and the nodes and edges of the case merged exactly over replicas and
//! repetitions (histograms and ledgers merge; rates are medians over repetitions).

use super::engine::Reports;
use crate::model::{EdgeResult, NodeResult, Repetition};
use crate::roles::swarm::ChildReport;
use crate::stats::{LatencyHistogram, LossSummary, StreamLedger, Throughput};
use crate::topology::check::Graph;
use crate::topology::{IoMode, Latency, Placement, StreamPart};
use std::collections::BTreeMap;

/// One edge of one repetition, before merging.
#[derive(Debug, Clone)]
pub struct EdgeRep {
    pub from: String,
    pub to: String,
    pub messages: u64,
    pub bytes: u64,
    pub rate: Option<f64>,
    pub loss: Option<LossSummary>,
    pub latency: Option<LatencyHistogram>,
    /// The bound on its one-way times from two hosts' clocks, ns.
    pub clock_error_ns: Option<u64>,
}

/// The edges of one repetition: each source replica's stream at each sink replica (or at
/// a sink node whose replicas share it), and each ping's round trips.
pub fn edges(g: &Graph, reports: &Reports) -> Vec<EdgeRep> {
    let t = &g.topology;
    let mut out = Vec::new();
    let sources: Vec<&(super::replicas::Replica, crate::roles::RoleReport)> = reports
        .iter()
        .filter(|(r, _)| r.spec.role.info().stream == StreamPart::Sends)
        .collect();
    for f in g.flows() {
        let sinks: Vec<_> = reports.iter().filter(|(r, _)| r.node == f.sink).collect();
        for (src, _) in sources.iter().filter(|(r, _)| r.node == f.source) {
            let sid = src.spec.stream_id;
            let expected = src.spec.count;
            let groups: Vec<Vec<_>> = if f.shared {
                vec![sinks.clone()]
            } else {
                sinks.iter().map(|s| vec![*s]).collect()
            };
            for group in groups {
                if let [(rep, rr)] = group.as_slice() {
                    if let Some(sw) = &rr.swarm {
                        out.push(swarm_edge(
                            &src.spec.name,
                            &rep.spec.name,
                            rep.spec.size,
                            sw,
                        ));
                        continue;
                    }
                }
                let mut ledger = StreamLedger::new();
                let mut hist: Option<LatencyHistogram> = None;
                let mut thr: Option<Throughput> = None;
                let mut messages = 0;
                for (rep, rr) in &group {
                    if let Some(l) = &rr.ledger {
                        if let Some(sl) = l.streams().get(&sid) {
                            messages += sl.received();
                            ledger.merge(sl);
                        }
                    } else if let Some(d) = &rr.delivered {
                        // Headerless messages: only the count, shared by the streams.
                        messages += d.messages / rep.spec.streams.len().max(1) as u64;
                    }
                    if let Some((_, h)) = rr.stream_latency.iter().find(|(id, _)| *id == sid) {
                        hist.get_or_insert_with(LatencyHistogram::new).merge(h);
                    }
                    if let Some(d) = &rr.delivered {
                        thr.get_or_insert_with(Throughput::default).merge(d);
                    }
                }
                let to = if f.shared && group.len() > 1 {
                    t.nodes[f.sink].name.clone()
                } else {
                    group
                        .first()
                        .map(|(r, _)| r.spec.name.clone())
                        .unwrap_or_default()
                };
                let size = group.first().map(|(r, _)| r.spec.size).unwrap_or(0) as u64;
                let has_ledger = group.iter().any(|(_, rr)| rr.ledger.is_some());
                // What this sink expected of the stream: fewer than were sent when a SUB
                // filter lets only some log lines through.
                let expected = group
                    .first()
                    .and_then(|(r, _)| r.spec.streams.iter().find(|(id, _)| *id == sid))
                    .map_or(expected, |(_, n)| *n);
                out.push(EdgeRep {
                    from: src.spec.name.clone(),
                    to,
                    messages,
                    bytes: messages * size,
                    rate: thr.map(|t| {
                        let secs = t.elapsed_ns() as f64 / 1e9;
                        if secs > 0.0 {
                            messages as f64 / secs
                        } else {
                            0.0
                        }
                    }),
                    loss: has_ledger.then(|| ledger.summary(Some(expected))),
                    latency: hist,
                    clock_error_ns: group.iter().filter_map(|(_, rr)| rr.clock_error_ns).max(),
                });
            }
        }
    }
    for (rep, rr) in reports
        .iter()
        .filter(|(r, _)| r.spec.role.info().latency == Latency::RoundTrip)
    {
        let echo = g
            .peers((rep.node, 0))
            .first()
            .map(|p| t.nodes[p.0].name.clone())
            .unwrap_or_default();
        let n = rr.latency.as_ref().map(|h| h.count()).unwrap_or(0);
        out.push(EdgeRep {
            from: rep.spec.name.clone(),
            to: echo,
            messages: n,
            bytes: n * rep.spec.size as u64,
            rate: rr.latency.as_ref().map(|h| {
                let s = h.summary();
                if s.mean_ns > 0.0 {
                    1e9 / (2.0 * s.mean_ns)
                } else {
                    0.0
                }
            }),
            loss: None,
            latency: rr.latency.clone(),
            // Round trips are timed on one clock.
            clock_error_ns: None,
        });
    }
    out
}

/// A swarm's edge: its subscribers' ledgers summed, its one latency histogram.
fn swarm_edge(from: &str, to: &str, size: usize, sw: &ChildReport) -> EdgeRep {
    let mut loss = LossSummary::default();
    for s in &sw.subscribers {
        loss.add(&s.loss);
    }
    let rates: Vec<f64> = sw.subscribers.iter().map(|s| s.delivered_per_sec).collect();
    EdgeRep {
        from: from.to_string(),
        to: to.to_string(),
        messages: loss.received,
        bytes: loss.received * size as u64,
        rate: Some(rates.iter().sum()),
        loss: Some(loss),
        latency: Some(sw.latency.clone()),
        clock_error_ns: sw.clock_error_ns,
    }
}

/// One repetition's headline figures: the latency of the pings (or of the sinks), the
/// sources' and sinks' rates, and the loss over every edge.
pub fn repetition(reports: &Reports, edges: &[EdgeRep]) -> Repetition {
    let mut latency: Option<LatencyHistogram> = None;
    let mut delay: Option<LatencyHistogram> = None;
    let mut send: Option<Throughput> = None;
    let mut delivered: Option<Throughput> = None;
    let pings = reports
        .iter()
        .any(|(r, _)| r.spec.role.info().latency == Latency::RoundTrip);
    // The headline latency: the round trips', or without them the one-way times.
    let headline = if pings {
        Latency::RoundTrip
    } else {
        Latency::OneWay
    };
    for (rep, r) in reports {
        let round_trips = rep.spec.role.info().latency == Latency::RoundTrip;
        let counts = rep.spec.role.info().latency == headline;
        if let (true, Some(h)) = (counts, &r.latency) {
            latency.get_or_insert_with(LatencyHistogram::new).merge(h);
        }
        if let Some(h) = &r.send_delay {
            delay.get_or_insert_with(LatencyHistogram::new).merge(h);
        }
        if let Some(t) = &r.send {
            send.get_or_insert_with(Throughput::default).merge(t);
        }
        if let Some(t) = &r.delivered {
            delivered.get_or_insert_with(Throughput::default).merge(t);
        }
        // A latency case's rate is its round trips per second, counted by the pings.
        if let (true, Some(t)) = (pings && round_trips, &r.round_trips) {
            delivered.get_or_insert_with(Throughput::default).merge(t);
        }
    }
    let mut loss: Option<LossSummary> = None;
    for e in edges {
        if let Some(l) = &e.loss {
            loss.get_or_insert_with(LossSummary::default).add(l);
        }
    }
    Repetition {
        latency: latency.as_ref().map(|h| h.summary()),
        latency_histogram: latency,
        send_delay: delay.as_ref().map(|h| h.summary()),
        send,
        delivered,
        loss,
        roles: reports
            .iter()
            .filter_map(|(_, r)| r.usage.clone())
            .collect(),
    }
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    Some(if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    })
}

/// An edge being merged: its figures, its latency histogram, its rates per repetition.
type Merging = (EdgeResult, Option<LatencyHistogram>, Vec<f64>);

/// The edges of the case: each edge's repetitions merged.
pub fn case_edges(reps: &[Vec<EdgeRep>]) -> Vec<EdgeResult> {
    let mut by: BTreeMap<(String, String), Merging> = BTreeMap::new();
    let mut order = Vec::new();
    for rep in reps {
        for e in rep {
            let key = (e.from.clone(), e.to.clone());
            let entry = by.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                (
                    EdgeResult {
                        from: e.from.clone(),
                        to: e.to.clone(),
                        messages: 0,
                        bytes: 0,
                        msgs_per_sec: None,
                        loss: None,
                        latency: None,
                        clock_error_ns: None,
                    },
                    None,
                    Vec::new(),
                )
            });
            entry.0.messages += e.messages;
            entry.0.bytes += e.bytes;
            if let Some(l) = &e.loss {
                entry.0.loss.get_or_insert_with(LossSummary::default).add(l);
            }
            if let Some(h) = &e.latency {
                entry.1.get_or_insert_with(LatencyHistogram::new).merge(h);
            }
            if let Some(c) = e.clock_error_ns {
                entry.0.clock_error_ns = Some(entry.0.clock_error_ns.unwrap_or(0).max(c));
            }
            entry.2.extend(e.rate);
        }
    }
    order
        .into_iter()
        .map(|k| {
            let (mut e, h, rates) = by.remove(&k).expect("key recorded");
            e.latency = h.filter(|h| h.count() > 0).map(|h| h.summary());
            e.msgs_per_sec = median(rates);
            e
        })
        .collect()
}

/// The intervals of every receiving replica in every repetition (`--interval`), each with
/// its drift verdict.
pub fn case_intervals(
    reps: &[Reports],
    every: Option<std::time::Duration>,
) -> Vec<crate::model::IntervalSeries> {
    let Some(every) = every else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (i, rep) in reps.iter().enumerate() {
        for (r, rr) in rep.iter().filter(|(_, rr)| !rr.intervals.is_empty()) {
            out.push(crate::model::IntervalSeries::new(
                r.spec.name.clone(),
                i as u32 + 1,
                every.as_secs_f64() * 1e3,
                rr.intervals.clone(),
            ));
        }
    }
    out
}

/// The nodes of the case: replicas and repetitions merged.
pub fn case_nodes(g: &Graph, reps: &[Reports]) -> Vec<NodeResult> {
    g.topology
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut cpu = 0.0;
            let mut rss = 0;
            let mut virt = 0;
            let (mut run_cpu, mut run_ms) = (0.0, 0.0);
            let mut placement = String::new();
            let mut hosts: Vec<String> = Vec::new();
            let mut send_rates = Vec::new();
            let mut recv_rates = Vec::new();
            let mut forwarded = None;
            let mut cut = Vec::new();
            let mut eot_ahead = None;
            let mut io = None;
            let mut io_waits = None;
            let mut udp_drops = None;
            let mut implementation = None;
            for rep in reps {
                let mut send: Option<Throughput> = None;
                let mut recv: Option<Throughput> = None;
                let mut longest: f64 = 0.0;
                for (r, rr) in rep.iter().filter(|(r, _)| r.node == i) {
                    let h = r
                        .host
                        .as_ref()
                        .map(|h| h.name.clone())
                        .unwrap_or_else(crate::host::hostname);
                    if !hosts.contains(&h) {
                        hosts.push(h);
                    }
                    if let Some(u) = &rr.usage {
                        cpu += u.cpu_user_ms + u.cpu_sys_ms;
                        rss = rss.max(u.peak_rss_kib);
                        virt = virt.max(u.peak_virt_kib);
                        run_cpu += u.run_cpu_ms;
                        longest = longest.max(u.run_ms);
                        placement = u.placement.clone();
                    }
                    if let Some(t) = &rr.send {
                        send.get_or_insert_with(Throughput::default).merge(t);
                    }
                    if let Some(t) = &rr.delivered {
                        recv.get_or_insert_with(Throughput::default).merge(t);
                    }
                    if let Some(f) = rr.forwarded {
                        *forwarded.get_or_insert(0) += f;
                    }
                    if let Some(a) = rr.eot_ahead {
                        *eot_ahead.get_or_insert(0) += a;
                    }
                    if let Some(c) = &rr.cut_short {
                        cut.push(format!("{}: {c}", r.spec.name));
                    }
                    if r.spec.io != IoMode::Blocking {
                        io = Some(r.spec.io.name().to_string());
                    }
                    if let Some(w) = rr.io_waits {
                        *io_waits.get_or_insert(0) += w;
                    }
                    if let Some(d) = rr.udp_drops {
                        *udp_drops.get_or_insert(0) += d;
                    }
                    implementation = Some(r.implementation.clone());
                    if r.placement == Placement::Foreign {
                        placement = "foreign".to_string();
                    }
                    if r.placement == Placement::Remote {
                        placement = "remote".to_string();
                    }
                }
                run_ms += longest;
                send_rates.extend(send.map(|t| t.msgs_per_sec()));
                recv_rates.extend(recv.map(|t| t.msgs_per_sec()));
            }
            NodeResult {
                name: n.name.clone(),
                role: n.role.name().to_string(),
                replicas: n.replicas,
                placement,
                cpu_ms: cpu,
                peak_rss_kib: rss,
                peak_virt_kib: virt,
                cpu_core_pct: (run_ms > 0.0).then(|| run_cpu / run_ms * 100.0),
                send_msgs_per_sec: median(send_rates),
                delivered_msgs_per_sec: median(recv_rates),
                forwarded,
                cut_short: cut,
                stream: n.stream.clone(),
                eot_ahead,
                io,
                io_waits,
                udp_drops,
                implementation,
                host: if hosts.is_empty() {
                    crate::host::hostname()
                } else {
                    hosts.join(",")
                },
            }
        })
        .collect()
}
