//! The high-water mark: what a socket does when its queue to a slower receiver is full.
//!
//! Drop or block: a burst of messages to a receiver that takes 20 at a time and then
//! works for 1 ms, once through PUB/SUB and once through PUSH/PULL, for a range of
//! high-water marks (both sides set alike). The publisher is an XPUB that waits for the
//! subscription (no slow joiner) and then drops like a PUB; its end-of-stream mark is sent
//! again until the receiver has it, so that the mark arrives and every hole lies inside
//! the stream.
//! Over tcp and ipc the kernel's socket buffers are made small, so the high-water mark,
//! not the kernel, is what fills. Both are roles: the sender a source (which times its
//! sends that found the queue full), the receiver a slow sink that pauses after each
//! batch and keeps a record of what it took, from which the finding's figures come.
//!
//! Memory: a sender process (the source role) publishes at full speed to a subscriber that
//! reads nothing until it is done (a slow sink role that holds after its first message until
//! told), with no high-water mark and then with libzmq's default of 1,000; the sender
//! reports its resident memory before and after.

use super::nodes;
use super::sender::{self, figure, Sender};
use super::stream::Tally;
use super::{cause, messages, ms, ns_to_ms, round3, Config, FindingDraft, Part};
use crate::endpoint::Transport;
use crate::error::Result;
use crate::model::{Finding, Severity, TimedGap};
use crate::net::probe::{self as net, SIZE};
use crate::roles::{Quit, Role};
use crate::stats::LossSummary;
use crate::topology::SocketType;
use crate::units::grouped;
use crate::zmq;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The slow receiver takes this many messages...
const PACE_BATCH: u64 = 20;
/// ...then works (sleeps) this long.
const PACE_PAUSE: Duration = Duration::from_millis(1);
/// SO_SNDBUF and SO_RCVBUF of tcp and ipc sockets in the drop-or-block runs, bytes.
const KERNEL_BUF: i32 = 4096;
/// How often the publisher sends its end-of-stream mark again after the burst, until the
/// receiver has it: a PUB drops it too while the receiver's queue is full. The first goes
/// this long after the burst, when a receiver that keeps up has long drained its queue.
const END_AGAIN: Duration = Duration::from_millis(20);

/// One burst through one pattern at one high-water mark.
struct Burst {
    /// Messages in the stream, the end-of-stream mark included.
    sent: u64,
    tally: Tally,
    origin_ns: u64,
    /// Time spent in send calls that found the socket full, ns (PUSH).
    blocked_ns: u64,
    /// The receiver's rate while it was busy, msg/s.
    receiver_rate: f64,
}

/// A burst of `n` messages and the end-of-stream mark over `t`, through PUB/SUB (an XPUB
/// that waits for the subscription, then drops like a PUB, and sends its end mark again
/// until it gets through) or PUSH/PULL (its sends that found the queue full timed), with
/// both high-water marks `hwm`, to a receiver that takes [`PACE_BATCH`] messages and then
/// works for [`PACE_PAUSE`], keeping a record of what it took.
fn burst(cfg: &Config, t: Transport, pubsub: bool, hwm: i32, n: u64) -> Result<Burst> {
    let ctx = zmq::Context::new();
    let opts = net::with_small_kernel_buffers(net::options(Some(hwm)), t, KERNEL_BUF);
    let (rx_kind, tx_kind) = if pubsub {
        (SocketType::Sub, SocketType::Xpub)
    } else {
        (SocketType::Pull, SocketType::Push)
    };
    let sent = n + 1;
    let mut rx = nodes::receiver(
        Role::SlowSink,
        rx_kind,
        t,
        opts.clone(),
        (sent, SIZE),
        cfg.timeout,
    );
    rx.pause_every(PACE_BATCH, PACE_PAUSE);
    rx.trace_arrivals(sent);
    let (taken, source) = nodes::receive_from(&ctx, &rx, |ep| {
        let mut tx = sender::spec(ep, tx_kind, sent, SIZE, hwm, Quit::WaitForStop, cfg.timeout);
        tx.sockets[0].options = opts.clone();
        if pubsub {
            tx.resend_end_every(END_AGAIN);
        } else {
            tx.time_full_sends();
        }
        tx
    })?;
    let arrivals = nodes::arrivals(&taken);
    let tally = nodes::tally(&arrivals);
    let span = tally
        .last_ns()
        .saturating_sub(tally.first_ns().unwrap_or(0));
    let receiver_rate = if span > 0 {
        (arrivals.len() as u64).saturating_sub(1) as f64 * 1e9 / span as f64
    } else {
        0.0
    };
    Ok(Burst {
        sent,
        tally,
        origin_ns: source.send.map_or(0, |s| s.start_ns),
        blocked_ns: source.full_send_ns.unwrap_or(0),
        receiver_rate,
    })
}

/// PUB drops, PUSH blocks: bursts over `t` at each high-water mark.
pub(super) fn drop_or_block(cfg: &Config, t: Transport) -> Result<Finding> {
    let hwms: &[i32] = if cfg.quick {
        &[10, 1000]
    } else {
        &[10, 100, 1000]
    };
    let n: u64 = if cfg.quick { 2_000 } else { 5_000 };
    let mut pubs = Vec::new();
    let mut pushes = Vec::new();
    for &h in hwms {
        pubs.push(burst(cfg, t, true, h, n)?);
        pushes.push(burst(cfg, t, false, h, n)?);
    }
    let mut f = FindingDraft::new(&format!("hwm/{t}"), Part::HwmDropOrBlock, t);
    evidence(&mut f, t, n, hwms, &pubs, &pushes);
    let lost = |b: &Burst| b.tally.summary(b.sent).lost;
    let first = &pubs[0];
    let first_loss = first.tally.summary(first.sent);
    f.put_ledger(&format!("pub_hwm_{}_", hwms[0]), &first_loss);
    f.gaps = first.tally.gaps(first.sent, first.origin_ns);

    let holes = holes_words(&first_loss, &f.gaps);
    let push_lost: u64 = pushes.iter().map(lost).sum();
    let pub_lost_total: u64 = pubs.iter().map(lost).sum();
    f.severity = if pub_lost_total > 0 || push_lost > 0 {
        Severity::Warning
    } else {
        Severity::Info
    };
    f.title = format!(
        "High-water mark over {t}: PUB dropped {} of {} at HWM {}; PUSH lost {} and blocked {}",
        grouped(lost(first)),
        grouped(n),
        hwms[0],
        grouped(pushes.iter().map(lost).max().unwrap_or(0)),
        ms(ns_to_ms(pushes[0].blocked_ns))
    );
    f.observed = observed(t, n, hwms, &pubs, &pushes, &holes);
    f.cause = "A socket queues at most its high-water mark of messages per peer (ZMQ_SNDHWM on \
               the sender, ZMQ_RCVHWM on the receiver; one connection holds about both, plus the \
               kernel's buffers over tcp and ipc). When the queue is full, PUB (and XPUB, \
               ROUTER, RADIO) drop new messages without an error; PUSH, DEALER and PAIR wait for \
               room, so a slow receiver slows the sender down (back pressure)."
        .to_string();
    f.remedy = "Choose the behaviour first, then the size. When every message matters and the \
                sender may wait, use PUSH/PULL (or an XPUB with ZMQ_XPUB_NODROP), and set \
                ZMQ_SNDTIMEO so a blocked sender notices. When fresh data matters more than \
                complete data, PUB/SUB is right, but have subscribers check sequence numbers to \
                see the drops. Size the high-water mark for the largest burst to absorb (HWM x \
                message size is the memory per peer), or make the receiver faster."
        .to_string();
    let fix = if push_lost == 0 {
        "PUSH/PULL (or XPUB with ZMQ_XPUB_NODROP) waits instead of dropping: PUSH lost 0 here; \
         or a higher HWM, or a faster receiver"
    } else {
        "a higher HWM or a faster receiver; PUSH/PULL waits instead of dropping"
    };
    f.triage(cause::HWM, pub_lost_total, pub_lost_total, cause::LOST, fix);
    Ok(f.finish())
}

/// What the bursts showed, in words: PUB's drops (and where `holes` were), PUSH's waits.
fn observed(
    t: Transport,
    n: u64,
    hwms: &[i32],
    pubs: &[Burst],
    pushes: &[Burst],
    holes: &str,
) -> String {
    let lost = |b: &Burst| b.tally.summary(b.sent).lost;
    let push_lost: u64 = pushes.iter().map(lost).sum();
    let pub_words = list(
        hwms.iter()
            .zip(pubs)
            .map(|(h, p)| format!("{} at HWM {}", grouped(lost(p)), grouped(*h as u64)))
            .collect(),
    );
    let push_words = list(
        hwms.iter()
            .zip(pushes)
            .map(|(h, q)| {
                format!(
                    "{} at HWM {}",
                    ms(ns_to_ms(q.blocked_ns)),
                    grouped(*h as u64)
                )
            })
            .collect(),
    );
    let kernel = if t == Transport::Inproc {
        String::new()
    } else {
        format!(
            " The kernel's socket buffers were set to {} B (ZMQ_SNDBUF, ZMQ_RCVBUF) so that \
             ZeroMQ's queues are what fill.",
            grouped(KERNEL_BUF as u64)
        )
    };
    format!(
        "A burst of {} of {SIZE} B, sent as fast as possible to a receiver that takes about \
         {} msg/s ({PACE_BATCH} at a time, then 1 ms of work).{kernel} PUB dropped \
         {pub_words}{holes}. PUSH {} and its sender waited instead: {push_words} in send calls \
         that found the queue full.",
        messages(n),
        grouped(pushes[0].receiver_rate.round() as u64),
        if push_lost == 0 {
            format!("delivered all {} at every HWM", grouped(n))
        } else {
            format!("lost {}", grouped(push_lost))
        },
    )
}

/// The figures of the bursts at every high-water mark, PUB beside PUSH.
fn evidence(
    f: &mut FindingDraft,
    t: Transport,
    n: u64,
    hwms: &[i32],
    pubs: &[Burst],
    pushes: &[Burst],
) {
    f.put("burst", n);
    f.put("message_size", SIZE as u64);
    f.put("receiver_msgs_per_s", pushes[0].receiver_rate.round());
    f.put(
        "receiver",
        format!("{PACE_BATCH} messages, then 1 ms of work").as_str(),
    );
    if t != Transport::Inproc {
        f.put("kernel_buffer_bytes", KERNEL_BUF as u64);
    }
    let lost = |b: &Burst| b.tally.summary(b.sent).lost;
    for ((h, p), q) in hwms.iter().zip(pubs).zip(pushes) {
        f.put(&format!("pub_lost_hwm_{h}"), lost(p));
        f.put(&format!("push_lost_hwm_{h}"), lost(q));
        f.put(&format!("push_blocked_ms_hwm_{h}"), ns_to_ms(q.blocked_ns));
    }
}

/// `a`, `a and b`, `a, b and c`.
fn list(xs: Vec<String>) -> String {
    match xs.len() {
        0 => String::new(),
        1 => xs[0].clone(),
        _ => format!("{} and {}", xs[..xs.len() - 1].join(", "), xs[xs.len() - 1]),
    }
}

/// Where the first pattern's holes were, when all of them were inside the stream.
fn holes_words(first_loss: &LossSummary, gaps: &[TimedGap]) -> String {
    if first_loss.lost > 0 && first_loss.lost_at_start == 0 && first_loss.lost_at_end == 0 {
        let at = gaps
            .first()
            .map(|g| {
                format!(
                    " (the first hole began after seq {}{})",
                    grouped(g.first_seq.saturating_sub(1)),
                    g.before_ms
                        .map(|b| format!(", {} into the burst", ms(b)))
                        .unwrap_or_default()
                )
            })
            .unwrap_or_default();
        format!(
            ", every one inside the stream: the subscriber got the first message and the last, \
         so only the sequence numbers show the {}{at}",
            match first_loss.gap_count {
                1 => "hole".to_string(),
                n => format!("{} holes", grouped(n)),
            }
        )
    } else {
        String::new()
    }
}

/// One memory run: what the sender process reported and what arrived.
struct MemoryRun {
    rss_growth_kib: u64,
    rss_peak_kib: u64,
    lost: u64,
}

fn memory_run(cfg: &Config, t: Transport, hwm: i32, n: u64, size: usize) -> Result<MemoryRun> {
    let ctx = zmq::Context::new();
    // A slow sink (no work) that takes the connection and the subscription, then holds:
    // it reads nothing more until the sender is done.
    let mut rx = nodes::receiver(
        Role::SlowSink,
        SocketType::Sub,
        t,
        net::options(None),
        (n, size),
        cfg.timeout,
    );
    rx.hold_until_stop();
    let stop = Arc::new(AtomicBool::new(false));
    let release = nodes::StopOnDrop(stop.clone());
    let (ep_tx, ep_rx) = mpsc::channel();
    let ctl = nodes::Driven::telling(stop, ep_tx);
    let (receiver, ep, release) =
        nodes::start_receiver(&ctx, rx, ctl, ep_rx, release, cfg.timeout)?;
    let spec = sender::spec(
        &crate::net::connect_endpoint(&ep),
        SocketType::Xpub,
        n,
        size,
        hwm,
        Quit::WaitForStop,
        cfg.timeout,
    );
    let deadline = Instant::now() + cfg.timeout * 2;
    let mut child = Sender::start(&cfg.exe, &spec, deadline)?;
    let sent = child.sent(deadline, &mut || {})?;
    // Only now does the subscriber read: everything it did not take was queued or dropped.
    drop(release);
    let taken = nodes::joined(receiver, "receiving")?;
    child.stop();
    let _ = child.report(Instant::now() + cfg.timeout);
    let before = figure(sent.rss_before_kib, "its memory before sending")?;
    let after = figure(sent.rss_after_kib, "its memory after sending")?;
    Ok(MemoryRun {
        rss_growth_kib: after.saturating_sub(before),
        rss_peak_kib: figure(sent.rss_peak_kib, "its peak memory")?,
        lost: nodes::taken(&taken, n).1.lost,
    })
}

/// The memory of a publisher with no high-water mark, in a process of its own over `t`.
pub(super) fn memory(cfg: &Config, t: Transport) -> Result<Finding> {
    let n: u64 = if cfg.quick { 20_000 } else { 50_000 };
    let size = 1024usize;
    let unbounded = memory_run(cfg, t, 0, n, size)?;
    let bounded = memory_run(cfg, t, 1000, n, size)?;
    let mut f = FindingDraft::new(&format!("hwm-memory/{t}"), Part::HwmMemory, t);
    f.put("messages", n);
    f.put("message_size", size as u64);
    f.put("unbounded_rss_growth_kib", unbounded.rss_growth_kib);
    f.put("unbounded_peak_rss_kib", unbounded.rss_peak_kib);
    f.put("unbounded_lost", unbounded.lost);
    f.put("hwm_1000_rss_growth_kib", bounded.rss_growth_kib);
    f.put("hwm_1000_lost", bounded.lost);
    let per_msg = unbounded.rss_growth_kib as f64 * 1024.0 / n as f64;
    f.put("bytes_per_message", round3(per_msg));
    let ten_million_gib = per_msg * 1e7 / (1u64 << 30) as f64;
    f.put("gib_for_10_million", round3(ten_million_gib));
    let mib = |kib: u64| format!("{:.1} MiB", kib as f64 / 1024.0);
    f.severity = if unbounded.rss_growth_kib > bounded.rss_growth_kib * 4 {
        Severity::Warning
    } else {
        Severity::Info
    };
    f.title = format!(
        "PUB over {t} with no high-water mark: the sender grew by {} for {} the subscriber had \
         not read",
        mib(unbounded.rss_growth_kib),
        messages(n)
    );
    f.observed = format!(
        "A publisher (a process of its own) sent {} of {} at full speed to a subscriber that \
         read nothing until it was done. With ZMQ_SNDHWM=0 (no limit) it dropped {} but its \
         resident memory grew by {} (about {} B per message): the queue lives in the sender. At \
         that rate a subscriber 10,000,000 messages behind costs about {:.1} GiB (the Ruby \
         examples report 10 GB for 10 million). With the default high-water mark of 1,000 the \
         sender grew by {} and dropped {} instead.",
        messages(n),
        crate::units::bytes(size as u64),
        grouped(unbounded.lost),
        mib(unbounded.rss_growth_kib),
        grouped(per_msg.round() as u64),
        ten_million_gib,
        mib(bounded.rss_growth_kib),
        grouped(bounded.lost),
    );
    f.cause = "A high-water mark of 0 means no limit: every message a peer has not taken stays \
               queued in the sender's memory (beyond what the kernel's socket buffers hold). \
               Nothing is dropped and nothing blocks, so nothing warns, until memory runs out."
        .to_string();
    f.remedy = "Keep a finite ZMQ_SNDHWM, sized for the burst to absorb (HWM x message size is \
                the memory per peer), and choose what happens at the mark: drop (PUB) or wait \
                (PUSH, or XPUB with ZMQ_XPUB_NODROP). Make the subscriber keep up (faster, or \
                more of them), or pace the publisher."
        .to_string();
    f.triage(
        cause::HWM_MEMORY,
        unbounded.lost,
        unbounded.rss_growth_kib,
        "KiB of sender memory",
        "keep a finite ZMQ_SNDHWM (HWM x message size is the memory per peer)",
    );
    Ok(f.finish())
}
