//! Deep queues: a consumer slower than its sender, with a high-water mark too large to
//! matter, falls further behind with every message, and every message waits for all those
//! queued ahead of it.
//!
//! A PUSH sender sends at a fixed rate (a batch every millisecond) for a fixed time to a
//! PULL consumer that takes fewer per millisecond; both high-water marks are 0 (no limit).
//! For every message the sender notes the queue depth it joined (messages sent before it
//! that the consumer had not yet taken, the consumer's count shared through an atomic,
//! since both are threads of this process) and the consumer its latency (send time to
//! receipt, one clock): by Little's law the latency is that depth / the consumer's rate.

use super::stream::Tally;
use super::{cause, messages, ms, ns_to_ms, round3, Config, FindingDraft, Part};
use crate::clock::now_ns;
use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::header::FLAG_END;
use crate::model::{Finding, Severity};
use crate::msg::RawMsg;
use crate::net::probe::{self as net, SIZE};
use crate::units::grouped;
use crate::zmq;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

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
    let (mut rx, mut tx) = net::push_pull(&ctx, t, Duration::from_millis(50), cfg.timeout)?;
    let taken = Arc::new(AtomicU64::new(0));
    let taken_seen = taken.clone();
    let sender = thread::spawn(move || -> Result<(u64, u64, Vec<u64>, zmq::Socket)> {
        let mut depths = Vec::with_capacity(n as usize);
        let origin = now_ns();
        let mut seq = 0;
        while seq < n {
            let due = origin + seq / SEND_BATCH * 1_000_000;
            let now = now_ns();
            if due > now {
                thread::sleep(Duration::from_nanos(due - now));
            }
            for _ in 0..SEND_BATCH.min(n - seq) {
                let flags = if seq + 1 == n { FLAG_END } else { 0 };
                depths.push(seq.saturating_sub(taken_seen.load(Ordering::Acquire)));
                net::send(&mut tx, SIZE, seq, flags, 0)?.map_err(|e| Error::Zmq {
                    op: "sending".into(),
                    source: e,
                })?;
                seq += 1;
            }
        }
        let end = now_ns();
        // The consumer is still reading: the socket stays open until it is done.
        Ok((origin, end, depths, tx))
    });
    let deadline = Instant::now() + duration * 4 + cfg.timeout;
    let mut tally = Tally::new();
    let mut msg = RawMsg::new();
    // Latency by sequence number (u64::MAX: never arrived).
    let mut latency = vec![u64::MAX; n as usize];
    let mut count = 0u64;
    while Instant::now() < deadline {
        let Some(h) = net::recv(&mut rx, &mut msg)? else {
            continue;
        };
        let now = now_ns();
        count += 1;
        taken.store(count, Ordering::Release);
        if let Some(slot) = latency.get_mut(h.sequence as usize) {
            *slot = now.saturating_sub(h.send_ns);
        }
        if tally.record(&h, now) {
            break;
        }
        if count.is_multiple_of(TAKE_BATCH) {
            thread::sleep(Duration::from_millis(1));
        }
    }
    let (origin, send_end, depths, tx) = sender
        .join()
        .map_err(|_| Error::Internal("the sending thread panicked".into()))??;
    drop(tx);
    let samples: Vec<Sample> = depths
        .iter()
        .zip(&latency)
        .filter(|(_, &l)| l != u64::MAX)
        .map(|(&depth, &latency_ns)| Sample { depth, latency_ns })
        .collect();
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
        origin,
        send_end,
        tally,
        samples,
    })
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

/// The finding of a measured stream.
fn finding(t: Transport, m: &Measured) -> Finding {
    let Figures {
        first,
        last,
        deepest,
        per_msg_us,
        send_rate,
        take_rate,
        drain_ms,
        max_ms,
    } = Figures::of(m);
    let (samples, tally, n, duration) = (&m.samples, &m.tally, m.n, m.duration);
    let mut f = FindingDraft::new(&format!("deep-queue/{t}"), Part::DeepQueue, t);
    let loss = tally.summary(n);
    f.put("sent", n);
    f.put_ledger("", &loss);
    f.put("sockets", "PUSH -> PULL, ZMQ_SNDHWM = ZMQ_RCVHWM = 0");
    f.put("sender_msgs_per_s", send_rate.round());
    f.put("consumer_msgs_per_s", take_rate.round());
    f.put("latency_first_tenth_ms", first);
    f.put("latency_last_tenth_ms", last);
    f.put("latency_max_ms", max_ms);
    f.put("depth_max", deepest.depth);
    f.put("latency_at_depth_max_ms", ns_to_ms(deepest.latency_ns));
    f.put("us_per_queued_message", round3(per_msg_us));
    f.put("drain_after_sender_ms", drain_ms);
    for q in [1usize, 2, 3, 4] {
        let s = samples[(samples.len() * q / 4).min(samples.len() - 1)];
        f.put(&format!("depth_at_{}pct", q * 25), s.depth);
        f.put(
            &format!("latency_at_{}pct_ms", q * 25),
            ns_to_ms(s.latency_ns),
        );
    }
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
