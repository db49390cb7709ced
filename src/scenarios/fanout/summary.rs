//! Merges the reports of the subscriber processes, and the publisher's, into the fan-out
//! report: delivery in total and per subscriber, the latency over all subscribers (the
//! histograms merge exactly), the slowest subscriber, and CPU and memory per process. What
//! the report says went wrong is summary/verdict.rs.

use super::ProcessUsage;
use crate::endpoint::Transport;
use crate::roles::publisher::PubResult;
use crate::roles::swarm::{ChildReport, StopReason, SubReport};
use crate::stats::ledger::{Gap, GAPS_LISTED};
use crate::stats::{GapPosition, LatencyHistogram, LatencySummary, LossSummary};
use serde::Serialize;

/// How many subscribers with losses the report names.
pub const WORST_LISTED: usize = 5;

/// The spread of the subscribers' delivered rates, msg/s.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Default)]
pub struct RateSpread {
    /// The slowest subscriber's rate.
    pub min: f64,
    /// The mean over subscribers.
    pub mean: f64,
    /// The fastest subscriber's rate.
    pub max: f64,
}

/// One subscriber process in the report.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessSummary {
    /// Index of the process, from 0.
    pub process: u32,
    /// Its process id.
    pub pid: u32,
    /// Subscribers it ran.
    pub subscribers: u32,
    /// Of them, how many received every message exactly once.
    pub complete: u64,
    /// Why it stopped.
    pub stop: StopReason,
    /// Time to open and connect its sockets, ns.
    pub connect_ns: u64,
    /// CPU time and peak RSS.
    pub usage: ProcessUsage,
    /// The host it ran on, when not this one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Latency of every message its subscribers received, ns (the process's own histogram,
    /// summarised as `latency` is for all of them).
    pub latency: LatencySummary,
}

/// The deliveries to the subscribers of one host.
#[derive(Debug, Clone, Serialize)]
pub struct HostSummary {
    /// The host (`local` for the runner's own).
    pub host: String,
    /// Subscriber processes there.
    pub processes: u32,
    /// Subscribers there.
    pub subscribers: u64,
    /// Deliveries, losses, duplicates there.
    pub delivery: LossSummary,
    /// Latency of the deliveries there (across hosts: on the publisher's clock, converted).
    pub latency: LatencySummary,
    /// The bound on those latencies from the two clocks, ns (None: one host's clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_error_ns: Option<u64>,
}

/// The whole fan-out report (`--json` prints it).
#[derive(Debug, Clone, Serialize)]
pub struct FanoutReport {
    /// The command: "fanout" or "sub-cluster".
    pub command: String,
    /// Endpoint the subscribers connected to.
    pub endpoint: String,
    /// Its transport.
    pub transport: Transport,
    /// Subscriber processes.
    pub processes: u32,
    /// Subscribers per process.
    pub subs_per_process: u32,
    /// Subscribers in all.
    pub subscribers: u64,
    /// Messages each subscriber should have received.
    pub expected_per_subscriber: u64,
    /// Delivery summed over all subscribers: expected is subscribers x messages.
    pub delivery: LossSummary,
    /// Subscribers that received every message exactly once and in order.
    pub complete_subscribers: u64,
    /// Whether the stream's end is known: the end-of-stream message reached a subscriber,
    /// or the publisher (in this run) said how many it sent. False: the publisher stopped
    /// or died part-way, and how many it meant to send is unknown.
    pub stream_ended: bool,
    /// Subscriber processes that failed, died or overran and were stopped, with why; the
    /// report covers the others (their subscribers are missing from the figures).
    pub failed_processes: Vec<String>,
    /// The publisher ran with --lossy: a PUB that drops at its high-water mark and does
    /// not wait for its subscribers, as the users' harnesses did.
    pub lossy: bool,
    /// Subscribers that lost, duplicated or reordered messages, worst first (at most 5).
    pub worst: Vec<SubReport>,
    /// Latency of every message at every subscriber, from the publisher's send call to the
    /// subscriber's receipt (one host, one monotonic clock).
    pub latency: LatencySummary,
    /// The histogram behind `latency`, mergeable.
    pub latency_histogram: LatencyHistogram,
    /// The subscriber with the highest mean latency.
    pub slowest: Option<SubReport>,
    /// Delivered rate per subscriber (its messages over the span from the send of its first
    /// to the receipt of its last), msg/s.
    pub delivered_per_sec: RateSpread,
    /// What the publisher did (None for a sub-cluster on its own).
    pub publisher: Option<PubResult>,
    /// The subscriber processes.
    pub process_list: Vec<ProcessSummary>,
    /// The deliveries per host, when the subscriber processes ran on more than one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_host: Vec<HostSummary>,
    /// Every subscriber's figures, by process and index.
    pub per_subscriber: Vec<SubReport>,
    /// The raw-socket floor beside this run (`fanout --floor`); None otherwise.
    pub floor: Option<super::FanoutFloor>,
    /// Who played the subscribers, when a peer did (`fanout --impl node`): its versions.
    #[serde(default, rename = "impl", skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// Every subscriber's figures per tick (a second of ticks when they are closer), the
    /// processes merged, with the drift verdict; None when the ticks were not spaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticks: Option<crate::model::IntervalSeries>,
}

/// Raises a subscriber's expected count to `expected` (its process knew a shorter stream,
/// as when none of its subscribers saw the end): the missing tail counts as lost.
fn extend_expected(loss: &mut LossSummary, expected: u64) {
    if loss.expected >= expected {
        return;
    }
    let d = expected - loss.expected;
    let old_end = loss.expected;
    loss.expected = expected;
    loss.lost += d;
    let all_listed = loss.gap_count as usize == loss.gaps.len();
    match loss.gaps.last_mut() {
        Some(g) if all_listed && g.first_seq + g.count == old_end => {
            g.count += d;
            // A hole reaching the old end starts at 0 (the whole stream) or is a tail.
            if g.position == GapPosition::Start {
                loss.lost_at_start += d;
            } else {
                loss.lost_at_end += d;
            }
        }
        _ => {
            loss.gap_count += 1;
            loss.lost_at_end += d;
            if loss.gaps.len() < GAPS_LISTED {
                loss.gaps.push(Gap {
                    first_seq: old_end,
                    count: d,
                    position: GapPosition::End,
                    after_ns: None,
                });
            }
        }
    }
}

fn is_complete(s: &SubReport) -> bool {
    s.loss.is_clean() && s.loss.received == s.loss.expected
}

/// What every subscriber should get: the most any says, or the publisher's count.
fn expected_of(children: &[ChildReport], publisher: Option<&PubResult>) -> u64 {
    children
        .iter()
        .flat_map(|c| c.subscribers.iter().map(|s| s.loss.expected))
        .chain(publisher.map(|p| p.messages))
        .max()
        .unwrap_or(0)
}

/// The deliveries per host, when the processes ran on more than one.
fn hosts_of(children: &[ChildReport], expected: u64) -> Vec<HostSummary> {
    let name = |c: &ChildReport| c.host.clone().unwrap_or_else(|| "local".into());
    let mut names: Vec<String> = children.iter().map(name).collect();
    names.dedup();
    names.sort();
    names.dedup();
    if names.len() < 2 {
        return Vec::new();
    }
    names
        .into_iter()
        .map(|h| {
            let mut delivery = LossSummary::default();
            let mut hist = LatencyHistogram::new();
            let (mut processes, mut subscribers) = (0, 0);
            let mut clock_error_ns: Option<u64> = None;
            for c in children.iter().filter(|c| name(c) == h) {
                processes += 1;
                if let Some(e) = c.clock_error_ns {
                    clock_error_ns = Some(clock_error_ns.unwrap_or(0).max(e));
                }
                hist.merge(&c.latency);
                for s in &c.subscribers {
                    subscribers += 1;
                    let mut l = s.loss.clone();
                    extend_expected(&mut l, expected);
                    delivery.add(&l);
                }
            }
            HostSummary {
                host: h,
                processes,
                subscribers,
                delivery,
                latency: hist.summary(),
                clock_error_ns,
            }
        })
        .collect()
}

/// Every process's subscribers in one list (each with the stream's `expected` length),
/// the latency of all processes merged, and one summary per process.
fn flatten(
    children: Vec<ChildReport>,
    expected: u64,
) -> (Vec<SubReport>, LatencyHistogram, Vec<ProcessSummary>) {
    let mut per_subscriber = Vec::new();
    let mut histogram = LatencyHistogram::new();
    let mut process_list = Vec::with_capacity(children.len());
    for c in children {
        histogram.merge(&c.latency);
        let mut complete = 0;
        let n = c.subscribers.len() as u32;
        for mut s in c.subscribers {
            extend_expected(&mut s.loss, expected);
            if is_complete(&s) {
                complete += 1;
            }
            per_subscriber.push(s);
        }
        process_list.push(ProcessSummary {
            process: c.process,
            pid: c.pid,
            subscribers: n,
            complete,
            stop: c.stop,
            connect_ns: c.connect_ns,
            usage: c.usage,
            host: c.host,
            latency: c.latency.summary(),
        });
    }
    (per_subscriber, histogram, process_list)
}

/// The subscribers that did not get the whole stream, the most lost (then duplicated)
/// first, at most [`WORST_LISTED`].
fn worst_of(per_subscriber: &[SubReport]) -> Vec<SubReport> {
    let mut worst: Vec<&SubReport> = per_subscriber.iter().filter(|s| !is_complete(s)).collect();
    worst.sort_by(|a, b| {
        b.loss
            .lost
            .cmp(&a.loss.lost)
            .then(b.loss.duplicated.cmp(&a.loss.duplicated))
            .then((a.process, a.sub).cmp(&(b.process, b.sub)))
    });
    worst.into_iter().take(WORST_LISTED).cloned().collect()
}

/// The spread of the delivered rates over the subscribers that measured one.
fn rate_spread(per_subscriber: &[SubReport]) -> RateSpread {
    let rates: Vec<f64> = per_subscriber
        .iter()
        .map(|s| s.delivered_per_sec)
        .filter(|r| *r > 0.0)
        .collect();
    if rates.is_empty() {
        RateSpread::default()
    } else {
        RateSpread {
            min: rates.iter().copied().fold(f64::INFINITY, f64::min),
            mean: rates.iter().sum::<f64>() / rates.len() as f64,
            max: rates.iter().copied().fold(0.0, f64::max),
        }
    }
}

/// Merges the processes' reports (in any order) and the publisher's result.
pub fn merge(
    command: &str,
    endpoint: &str,
    transport: Transport,
    subs_per_process: u32,
    mut children: Vec<ChildReport>,
    publisher: Option<PubResult>,
) -> FanoutReport {
    children.sort_by_key(|c| c.process);
    let ticks = ticks_of(&children);
    let per_host = hosts_of(&children, expected_of(&children, publisher.as_ref()));
    let expected = children
        .iter()
        .flat_map(|c| c.subscribers.iter().map(|s| s.loss.expected))
        .chain(publisher.as_ref().map(|p| p.messages))
        .max()
        .unwrap_or(0);
    let stream_ended = publisher.is_some()
        || children
            .iter()
            .any(|c| c.subscribers.iter().any(|s| s.ended));
    let (per_subscriber, histogram, process_list) = flatten(children, expected);
    let mut delivery = LossSummary::default();
    for s in &per_subscriber {
        delivery.add(&s.loss);
    }
    let complete_subscribers = per_subscriber.iter().filter(|s| is_complete(s)).count() as u64;
    let worst = worst_of(&per_subscriber);
    let slowest = per_subscriber
        .iter()
        .filter(|s| s.latency_count > 0)
        .max_by(|a, b| a.latency_mean_ns.total_cmp(&b.latency_mean_ns))
        .cloned();
    let delivered_per_sec = rate_spread(&per_subscriber);
    FanoutReport {
        command: command.to_string(),
        endpoint: endpoint.to_string(),
        transport,
        processes: process_list.len() as u32,
        subs_per_process,
        subscribers: per_subscriber.len() as u64,
        expected_per_subscriber: expected,
        delivery,
        complete_subscribers,
        stream_ended,
        failed_processes: Vec::new(),
        lossy: false,
        worst,
        latency: histogram.summary(),
        latency_histogram: histogram,
        slowest,
        delivered_per_sec,
        publisher,
        process_list,
        per_subscriber,
        per_host,
        floor: None,
        implementation: None,
        ticks,
    }
}

/// The processes' figures per tick merged into one series, with its verdict.
fn ticks_of(children: &[ChildReport]) -> Option<crate::model::IntervalSeries> {
    let per_process: Vec<_> = children
        .iter()
        .map(|c| c.ticks.clone())
        .filter(|t| !t.is_empty())
        .collect();
    let records = crate::roles::swarm::ticks::merge(&per_process);
    let every_ms = records.first()?.dur_ms;
    Some(crate::model::IntervalSeries::new(
        "subscribers".into(),
        1,
        every_ms,
        records,
    ))
}

#[cfg(test)]
mod tests;
mod verdict;
