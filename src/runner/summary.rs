//! A case's figures over its repetitions: medians with confidence intervals, the warnings
//! (spread, short or lossy repetitions, clocks across hosts), and the facts the causes of
//! its loss are decided from.

use super::CaseSpec;

mod multicast;
use crate::model::{CaseSummary, Estimate, Kind, Repetition};
use crate::stats::{estimate, loss_causes, Cause, Facts, SenderFacts};
use crate::topology::{SocketType, StreamPart};
use crate::transport::Transport;

/// What a one-way figure across hosts is worth: its clocks' error bound beside it (the
/// clock check of its histogram says when the bound is too coarse for the figure).
pub(super) fn clock_notes(edges: &[crate::model::EdgeResult]) -> Vec<String> {
    let mut out = Vec::new();
    for e in edges {
        let (Some(err), Some(l)) = (e.clock_error_ns, &e.latency) else {
            continue;
        };
        out.push(format!(
            "one-way {} -> {} across hosts: p50 {:.1} us, mean {:.1} us, on one clock to within ±{:.1} us (the two hosts' clock offsets, measured over the control channel before the start and after the report)",
            e.from,
            e.to,
            l.p50_ns as f64 / 1e3,
            l.mean_ns / 1e3,
            err as f64 / 1e3
        ));
    }
    out
}

fn est(reps: &[Repetition], f: impl Fn(&Repetition) -> Option<f64>) -> Option<Estimate> {
    let xs: Vec<f64> = reps.iter().filter_map(f).collect();
    estimate(&xs)
}

/// Medians with confidence intervals over the repetitions.
pub fn summarise(reps: &[Repetition]) -> CaseSummary {
    let us = |ns: f64| ns / 1000.0;
    CaseSummary {
        latency_us: est(reps, |r| {
            r.latency.filter(|l| l.count > 0).map(|l| us(l.mean_ns))
        }),
        p50_us: est(reps, |r| {
            r.latency
                .filter(|l| l.count > 0)
                .map(|l| us(l.p50_ns as f64))
        }),
        p99_us: est(reps, |r| {
            r.latency
                .filter(|l| l.count > 0)
                .map(|l| us(l.p99_ns as f64))
        }),
        msgs_per_sec: est(reps, |r| r.delivered.map(|t| t.msgs_per_sec())),
        mbit_per_sec: est(reps, |r| r.delivered.map(|t| t.mbit_per_sec())),
        send_msgs_per_sec: est(reps, |r| r.send.map(|t| t.msgs_per_sec())),
        send_delay_p50_us: est(reps, |r| r.send_delay.map(|d| us(d.p50_ns as f64))),
        lost: reps
            .iter()
            .filter_map(|r| r.loss.as_ref())
            .map(|l| l.lost)
            .sum(),
        duplicated: reps
            .iter()
            .filter_map(|r| r.loss.as_ref())
            .map(|l| l.duplicated)
            .sum(),
        reordered: reps
            .iter()
            .filter_map(|r| r.loss.as_ref())
            .map(|l| l.reordered)
            .sum(),
    }
}

/// Spread above this (percent of the median) makes a result suspect.
pub const SPREAD_WARN_PCT: f64 = 10.0;
/// A repetition shorter than this is too short to trust.
pub const SHORT_NS: u64 = 20_000_000;

pub(super) fn warnings(spec: &CaseSpec, reps: &[Repetition], s: &CaseSummary) -> Vec<String> {
    let mut w = Vec::new();
    let main = match spec.kind() {
        Kind::Latency => s.latency_us.map(|e| ("latency", e)),
        Kind::Throughput => s.msgs_per_sec.map(|e| ("msg/s", e)),
    };
    if let Some((what, e)) = main {
        if e.n > 1 && e.spread_pct > SPREAD_WARN_PCT {
            w.push(format!(
                "high spread: {what} varies by {:.0}% between repetitions (> {SPREAD_WARN_PCT:.0}%); run more repetitions or on a quieter machine",
                e.spread_pct
            ));
        }
    }
    let span = |r: &Repetition| match spec.kind() {
        Kind::Latency => r.latency.map(|l| (l.mean_ns * 2.0 * l.count as f64) as u64),
        Kind::Throughput => r.delivered.map(|t| t.elapsed_ns()),
    };
    if let Some(min) = reps.iter().filter_map(span).min() {
        if min < SHORT_NS {
            w.push(format!(
                "too short: a repetition measured only {:.1} ms; raise --count for steadier figures",
                min as f64 / 1e6
            ));
        }
    }
    if let (Some(rate), Some(got)) = (spec.rate, s.msgs_per_sec) {
        if got.median < rate * 0.95 {
            w.push(format!(
                "rate not reached: asked for {rate:.0} msg/s, delivered {:.0} msg/s",
                got.median
            ));
        }
    }
    w.extend(multicast::rate_limit(spec, s));
    let beyond: u64 = reps
        .iter()
        .filter_map(|r| r.loss.as_ref())
        .map(|l| l.beyond)
        .sum();
    if beyond > 0 {
        w.push(format!(
            "{beyond} arrivals were numbered at or past the end of their stream and are left out of every count: messages garbled on the way (a multicast stream spliced across a lost packet), or of another run on the same endpoint"
        ));
    }
    if s.lost > 0 || s.duplicated > 0 || s.reordered > 0 {
        let mut at = (0, 0, 0);
        for l in reps.iter().filter_map(|r| r.loss.as_ref()) {
            at.0 += l.lost_at_start;
            at.1 += l.lost_in_middle;
            at.2 += l.lost_at_end;
        }
        w.push(format!(
            "delivery: {} lost (start {}, middle {}, end {}), {} duplicated, {} reordered",
            s.lost, at.0, at.1, at.2, s.duplicated, s.reordered
        ));
        if s.lost > 0 {
            let mut total = crate::stats::LossSummary::default();
            for l in reps.iter().filter_map(|r| r.loss.as_ref()) {
                total.add(l);
            }
            let facts = facts(spec);
            let causes = loss_causes(&total, &facts, |_, cause| {
                match cause {
                    Cause::MulticastHops => Some("multicast_hops = 8 on the sending socket (ZMQ_MULTICAST_HOPS), and a multicast route on each router between (smcroute, pimd)".into()),
                    Cause::SlowJoiner if facts.paused_for_joins => Some("a longer pause for the joins: give the source `join_ms` (it paused the default: 250 ms and 1 ms per DISH for a RADIO, 1 s and 20 ms per subscriber over multicast)".into()),
                    Cause::SlowJoiner => Some("let the PUB wait for its subscribers (remove `wait_subscriptions = false`), or start the subscribers first".into()),
                    Cause::HighWaterMark => Some("give the PUB xpub_nodrop = true (an XPUB), a larger sndhwm, or a rate".into()),
                    Cause::LostOnTheWay if facts.one_way => Some("pace the publisher (`rate`) below what the receivers take; over epgm or norm give the receiving sockets a larger `rcvbuf` (a kernel count of dropped datagrams, when there is one, is named beside); where the kernel dropped none the network lost them and no repair brought them back: find the lossy link (`ip -s link`, the switches' counters); over pgm or epgm a longer `recovery_ivl` (ZMQ_RECOVERY_IVL) on the sender keeps more to repair from".into()),
                    _ => None,
                }
            });
            w.push(format!("cause: {causes}"));
        }
    }
    w
}

/// What the senders of the topology do, for the causes of loss: whether one publishes
/// without flow control, whether every publisher waits for its subscriptions, and that
/// sources keep their sockets until the receivers hang up.
pub fn sender_facts(spec: &CaseSpec) -> SenderFacts {
    let (t, transport) = (&spec.topology, spec.transport);
    let publishers = t.nodes.iter().filter(|n| n.role.info().publishes.is_some());
    let waits = publishers
        .clone()
        .all(|n| n.wait_subscriptions != Some(false));
    // A publisher that cannot count its receivers' joins (a RADIO, a PUB over multicast)
    // pauses for them instead: what it lost at the start joined after the pause.
    let paused = waits
        && publishers.clone().any(|n| {
            n.all_sockets().first().is_some_and(|s| {
                SocketType::parse(&s.kind).is_some_and(|k| {
                    k.pauses_for_joins(s.transports(transport).any(Transport::is_multicast))
                })
            })
        });
    let one_way = publishers.clone().any(|n| {
        n.all_sockets()
            .first()
            .is_some_and(|s| s.transports(transport).any(Transport::one_way))
    });
    SenderFacts {
        drops_at_hwm: drops_at_hwm(t),
        waited_for_subscribers: waits && !paused,
        waited_at_end: true,
        paused_for_joins: paused,
        one_way,
        one_hop_across_hosts: multicast::one_hop_across_hosts(t, transport),
        paced_below_limit: multicast::paced_below_limit(spec),
    }
}

/// The facts the causes of a case's loss are decided from: its senders' (all known to the
/// runner) and, when every receiver is a SUB (or XSUB), that.
pub fn facts(spec: &CaseSpec) -> Facts {
    let t = &spec.topology;
    let receivers: Vec<String> = t
        .nodes
        .iter()
        .filter(|n| n.role.info().stream == StreamPart::Receives)
        .filter_map(|n| n.all_sockets().first().map(|s| s.kind.to_ascii_uppercase()))
        .collect();
    let subs = !receivers.is_empty() && receivers.iter().all(|k| k == "SUB" || k == "XSUB");
    Facts {
        receiver: subs.then_some(SocketType::Sub),
        ..Facts::of_run(sender_facts(spec))
    }
}

/// Whether a source (or a proxy's sending side) of the topology publishes without flow
/// control (PUB, or XPUB or RADIO without xpub_nodrop), so that loss is messages dropped at its
/// high-water mark.
fn drops_at_hwm(t: &crate::topology::Topology) -> bool {
    t.nodes.iter().any(|n| {
        let out = n
            .role
            .info()
            .publishes
            .and_then(|i| n.all_sockets().get(i).copied());
        out.is_some_and(|s| {
            let kind = s.kind.to_ascii_uppercase();
            kind == "PUB"
                || ((kind == "XPUB" || kind == "RADIO") && s.options.xpub_nodrop != Some(true))
        })
    })
}
