//! Deep queues: a consumer slower than its sender, with a high-water mark too large to
//! matter, falls further behind with every message, and every message waits for all those
//! queued ahead of it.
//!
//! A PUSH sender (a source role in open loop, its messages due a batch every millisecond)
//! sends for a fixed time to a PULL consumer (a slow sink that takes a batch, then works
//! for a millisecond) that takes fewer per millisecond; both high-water marks are 0 (no
//! limit). The consumer keeps a record of every message (its send stamp and when it was
//! taken, one clock): each message's latency is the one minus the other, and the queue
//! depth it joined is the messages sent before it that had not arrived by its send stamp.
//! By Little's law the latency is that depth / the consumer's rate.

use super::nodes;
use super::sender;
use super::stream::Tally;
use super::{cause, messages, ms, ns_to_ms, round3, Config, FindingDraft, Part};
use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::header::Header;
use crate::model::{Finding, Severity};
use crate::net::probe::{self as net, SIZE};
use crate::roles::{Quit, Role};
use crate::stats::LossSummary;
use crate::topology::SocketType;
use crate::units::grouped;
use crate::zmq;
use std::time::Duration;

/// The sender sends this many messages every millisecond...
const SEND_BATCH: u64 = 20;
/// ...and the consumer takes this many, then works for a millisecond.
const TAKE_BATCH: u64 = 10;

/// One message: the queue it joined and how long it waited.
#[derive(Debug, Clone, Copy)]
struct Sample {
    /// Messages queued ahead of it (sent but not yet taken) when it was sent.
    depth: u64,
    /// Send to receipt, ns.
    latency_ns: u64,
}

/// Median latency (ms) of a slice of samples.
fn median_ms(xs: &[Sample]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v: Vec<u64> = xs.iter().map(|s| s.latency_ns).collect();
    v.sort_unstable();
    ns_to_ms(v[v.len() / 2])
}

/// Least-squares slope of latency (ns) on depth: the wait each queued message adds.
fn slope_ns(xs: &[Sample]) -> f64 {
    let n = xs.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let mx = xs.iter().map(|s| s.depth as f64).sum::<f64>() / n;
    let my = xs.iter().map(|s| s.latency_ns as f64).sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for s in xs {
        let dx = s.depth as f64 - mx;
        sxy += dx * (s.latency_ns as f64 - my);
        sxx += dx * dx;
    }
    if sxx == 0.0 {
        0.0
    } else {
        sxy / sxx
    }
}

/// What the stream gave: the sender's times and the queue each message joined, and what
/// the consumer saw.
struct Measured {
    /// Messages sent.
    n: u64,
    /// How long the sender sent.
    duration: Duration,
    /// The sender's first send and the return of its last, ns.
    origin: u64,
    send_end: u64,
    tally: Tally,
    /// The messages that arrived, in sequence order.
    samples: Vec<Sample>,
}

/// The figures the finding is written from.
struct Figures {
    /// Median latency of the first and of the last tenth, ms.
    first: f64,
    last: f64,
    /// The message that joined the deepest queue.
    deepest: Sample,
    per_msg_us: f64,
    send_rate: f64,
    take_rate: f64,
    drain_ms: f64,
    max_ms: f64,
}

/// Runs the experiment over `t`.
pub(super) fn run(cfg: &Config, t: Transport) -> Result<Finding> {
    let duration = if cfg.quick {
        Duration::from_millis(250)
    } else {
        Duration::from_millis(500)
    };
    let m = measure(cfg, t, duration)?;
    Ok(finding(t, &m))
}

/// Sends at a fixed rate for `duration` to a consumer that takes fewer per millisecond,
/// noting for every message the queue it joined and how long it waited.
fn measure(cfg: &Config, t: Transport, duration: Duration) -> Result<Measured> {
    let n = SEND_BATCH * duration.as_millis() as u64;
    let ctx = zmq::Context::new();
    let mut rx = nodes::receiver(
        Role::SlowSink,
        SocketType::Pull,
        t,
        net::options(Some(0)),
        (n, SIZE),
        cfg.timeout,
    );
    rx.pause_every(TAKE_BATCH, Duration::from_millis(1));
    rx.trace_arrivals(n);
    let (taken, sent) = nodes::receive_from(&ctx, &rx, |ep| {
        // The consumer is still reading when the last message has left: the socket stays
        // open until it is done.
        let mut tx = sender::spec(
            ep,
            SocketType::Push,
            n,
            SIZE,
            0,
            Quit::WaitForStop,
            cfg.timeout,
        );
        tx.sockets[0].options = net::options(Some(0));
        tx.rate = Some(SEND_BATCH as f64 * 1000.0);
        tx.send_in_batches(SEND_BATCH);
        tx
    })?;
    let send = sent.send.unwrap_or_default();
    let arrivals = nodes::arrivals(&taken);
    let samples = samples(&arrivals);
    if samples.len() < 10 {
        return Err(Error::Protocol(format!(
            "only {} of {} messages arrived",
            samples.len(),
            n
        )));
    }
    Ok(Measured {
        n,
        duration,
        origin: send.start_ns,
        send_end: send.end_ns,
        tally: nodes::tally(&arrivals),
        samples,
    })
}

/// The messages that arrived, in sequence order, from the consumer's record (in the order
/// they came, each with when it was taken): each waited from its send stamp to its arrival,
/// and joined a queue of the messages sent before it that had not arrived by its send
/// stamp.
fn samples(arrivals: &[(Header, u64)]) -> Vec<Sample> {
    // One consumer's clock, read in turn: the arrival times never go down.
    let times: Vec<u64> = arrivals.iter().map(|(_, at)| *at).collect();
    let mut by_seq: Vec<&(Header, u64)> = arrivals.iter().collect();
    by_seq.sort_by_key(|(h, _)| h.sequence);
    by_seq
        .into_iter()
        .map(|(h, at)| {
            let taken = times.partition_point(|&t| t <= h.send_ns) as u64;
            Sample {
                depth: h.sequence.saturating_sub(taken),
                latency_ns: at.saturating_sub(h.send_ns),
            }
        })
        .collect()
}

impl Figures {
    fn of(m: &Measured) -> Figures {
        let (samples, tally, n) = (&m.samples, &m.tally, m.n);
        let (origin, send_end) = (m.origin, m.send_end);
        let tenth = (samples.len() / 10).max(1);
        let first = median_ms(&samples[..tenth]);
        let last = median_ms(&samples[samples.len() - tenth..]);
        let deepest = samples
            .iter()
            .copied()
            .max_by_key(|s| s.depth)
            .expect("samples");
        let per_msg_us = slope_ns(samples) / 1000.0;
        let send_rate = n as f64 * 1e9 / send_end.saturating_sub(origin).max(1) as f64;
        let take_span = tally
            .last_ns()
            .saturating_sub(tally.first_ns().unwrap_or(0))
            .max(1);
        let take_rate = (samples.len() as f64 - 1.0) * 1e9 / take_span as f64;
        let drain_ms = ns_to_ms(tally.last_ns().saturating_sub(send_end));
        let max_ms = ns_to_ms(samples.iter().map(|s| s.latency_ns).max().unwrap_or(0));

        Figures {
            first,
            last,
            deepest,
            per_msg_us,
            send_rate,
            take_rate,
            drain_ms,
            max_ms,
        }
    }
}

/// The figures of a measured stream (`g`, with its ledger `loss`) in the finding.
fn evidence(f: &mut FindingDraft, m: &Measured, g: &Figures, loss: &LossSummary) {
    let (samples, n) = (&m.samples, m.n);
    f.put("sent", n);
    f.put_ledger("", loss);
    f.put("sockets", "PUSH -> PULL, ZMQ_SNDHWM = ZMQ_RCVHWM = 0");
    f.put("sender_msgs_per_s", g.send_rate.round());
    f.put("consumer_msgs_per_s", g.take_rate.round());
    f.put("latency_first_tenth_ms", g.first);
    f.put("latency_last_tenth_ms", g.last);
    f.put("latency_max_ms", g.max_ms);
    f.put("depth_max", g.deepest.depth);
    f.put("latency_at_depth_max_ms", ns_to_ms(g.deepest.latency_ns));
    f.put("us_per_queued_message", round3(g.per_msg_us));
    f.put("drain_after_sender_ms", g.drain_ms);
    for q in [1usize, 2, 3, 4] {
        let s = samples[(samples.len() * q / 4).min(samples.len() - 1)];
        f.put(&format!("depth_at_{}pct", q * 25), s.depth);
        f.put(
            &format!("latency_at_{}pct_ms", q * 25),
            ns_to_ms(s.latency_ns),
        );
    }
}

/// The finding of a measured stream.
fn finding(t: Transport, m: &Measured) -> Finding {
    let figures = Figures::of(m);
    let (tally, n, duration) = (&m.tally, m.n, m.duration);
    let mut f = FindingDraft::new(&format!("deep-queue/{t}"), Part::DeepQueue, t);
    let loss = tally.summary(n);
    evidence(&mut f, m, &figures, &loss);
    let Figures {
        first,
        last,
        deepest,
        per_msg_us,
        send_rate,
        take_rate,
        drain_ms,
        max_ms,
    } = figures;
    f.gaps = tally.gaps(n, m.origin);
    f.severity = if last > first * 10.0 {
        Severity::Warning
    } else {
        Severity::Info
    };
    f.title = format!(
        "PUSH/PULL over {t}: latency grew from {} to {} as the queue reached {}",
        ms(first),
        ms(last),
        messages(deepest.depth)
    );
    f.observed = format!(
        "The sender sent at {} msg/s for {} to a consumer taking {} msg/s, with no high-water \
         mark, so nothing was dropped or blocked ({} lost): the queue grew to {} and each \
         message waited behind it. Latency rose from {} (median of the first tenth) to {} (the \
         last tenth), at most {}: about {:.0} µs per message queued ahead, which is 1 / the \
         consumer's rate. After the sender stopped, the consumer needed {} more to work \
         through the backlog.",
        grouped(send_rate.round() as u64),
        ms(duration.as_secs_f64() * 1000.0),
        grouped(take_rate.round() as u64),
        grouped(loss.lost),
        messages(deepest.depth),
        ms(first),
        ms(last),
        ms(max_ms),
        per_msg_us,
        ms(drain_ms),
    );
    f.cause = "A queue in front of a slower consumer grows for as long as the overload lasts, \
               and every message waits for all those ahead of it: wait = depth / consumer rate \
               (Little's law). A high-water mark deep enough to be safe hides the overload: \
               nothing drops or blocks, the delay just grows, and news (even a sender's last \
               word before it died) arrives late."
        .to_string();
    f.remedy = "Make the consumer faster or add consumers (PUSH spreads messages over them). \
                Bound the queue with a high-water mark sized for the delay you accept (depth = \
                delay x consumer rate) so that overload shows as back pressure or drops. Watch \
                the age of messages (put the send time in them) and alarm when it grows. When \
                only the latest value matters, ZMQ_CONFLATE keeps one message per queue."
        .to_string();
    f.triage(
        cause::DEEP_QUEUE,
        loss.lost,
        deepest.depth,
        "messages queued at most",
        "a faster consumer or more of them; a high-water mark sized for the delay you accept",
    );
    f.finish()
}
