//! The high-water mark: what a socket does when its queue to a slower receiver is full.
//!
//! Drop or block: a burst of messages to a receiver that takes 20 at a time and then
//! works for 1 ms, once through PUB/SUB and once through PUSH/PULL, for a range of
//! high-water marks (both sides set alike). The publisher is an XPUB that waits for the
//! subscription (no slow joiner) and then drops like a PUB; its end-of-stream mark is sent
//! once the receiver has drained its queue, so that the mark arrives and every hole lies
//! inside the stream.
//! Over tcp and ipc the kernel's socket buffers are made small, so the high-water mark,
//! not the kernel, is what fills.
//!
//! Memory: a sender process (the source role) publishes at full speed to a subscriber that
//! reads nothing until it is done (a slow sink role that holds after its first message until
//! told), with no high-water mark and then with libzmq's default of 1,000; the sender
//! reports its resident memory before and after.

use super::nodes;
use super::sender::{self, figure, Sender};
use super::stream::Tally;
use super::{cause, messages, ms, ns_to_ms, round3, Config, FindingDraft, Part};
use crate::clock::now_ns;
use crate::endpoint::Transport;
use crate::error::{zmq_err, Error, Result};
use crate::header::FLAG_END;
use crate::model::{Finding, Severity, TimedGap};
use crate::msg::RawMsg;
use crate::net::probe::{self as net, SIZE};
use crate::roles::{Quit, Role};
use crate::stats::LossSummary;
use crate::topology::SocketType;
use crate::units::grouped;
use crate::zmq;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

/// The slow receiver takes this many messages...
const PACE_BATCH: u64 = 20;
/// ...then works (sleeps) this long.
const PACE_PAUSE: Duration = Duration::from_millis(1);
/// SO_SNDBUF and SO_RCVBUF of tcp and ipc sockets in the drop-or-block runs, bytes.
const KERNEL_BUF: i32 = 4096;

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

fn burst(cfg: &Config, t: Transport, pubsub: bool, hwm: i32, n: u64) -> Result<Burst> {
    let ctx = zmq::Context::new();
    let opts = net::with_small_kernel_buffers(net::options(Some(hwm)), t, KERNEL_BUF);
    let (rx, ep) = net::bind(
        &ctx,
        if pubsub {
            SocketType::Sub
        } else {
            SocketType::Pull
        },
        t,
        Duration::from_millis(50),
        &opts,
    )?;
    let timeout = cfg.timeout;
    let last_seen = Arc::new(AtomicU64::new(now_ns()));
    let got_end = Arc::new(AtomicBool::new(false));
    let (seen, ended) = (last_seen.clone(), got_end.clone());
    let receiver = thread::spawn(move || paced_receive(rx, timeout, &seen, &ended));
    let mut tx = net::connect(
        &ctx,
        if pubsub {
            SocketType::Xpub
        } else {
            SocketType::Push
        },
        &ep,
        cfg.timeout,
        &opts,
    )?;
    if pubsub {
        tx.recv_bytes(0).map_err(|e| Error::Zmq {
            op: "waiting for the subscription".into(),
            source: e,
        })?;
    }
    let send_err = |e| Error::Zmq {
        op: "sending the burst".into(),
        source: e,
    };
    let origin_ns = now_ns();
    let mut blocked_ns = 0u64;
    for seq in 0..n {
        let full = !pubsub
            && !tx
                .get_events()
                .map_err(zmq_err("reading ZMQ_EVENTS"))?
                .contains(zmq::POLLOUT);
        let before = if full { now_ns() } else { 0 };
        net::send(&mut tx, SIZE, seq, 0, 0)?.map_err(send_err)?;
        if full {
            blocked_ns += now_ns() - before;
        }
    }
    if pubsub {
        end_after_drain(&mut tx, n, &last_seen, &got_end, cfg.timeout)?;
    } else {
        net::send(&mut tx, SIZE, n, FLAG_END, 0)?.map_err(send_err)?;
    }
    let (tally, receiver_rate) = receiver
        .join()
        .map_err(|_| Error::Internal("the receiving thread panicked".into()))??;
    Ok(Burst {
        sent: n + 1,
        tally,
        origin_ns,
        blocked_ns,
        receiver_rate,
    })
}

/// The slow receiver: takes [`PACE_BATCH`] messages, then works for [`PACE_PAUSE`], until
/// the end-of-stream mark or `timeout`; notes when each message arrived (`seen`) and the
/// mark (`ended`) for the sender. With its rate while it was busy, msg/s.
fn paced_receive(
    mut rx: zmq::Socket,
    timeout: Duration,
    seen: &AtomicU64,
    ended: &AtomicBool,
) -> Result<(Tally, f64)> {
    let deadline = Instant::now() + timeout;
    let mut tally = Tally::new();
    let mut msg = RawMsg::new();
    let mut taken = 0u64;
    while Instant::now() < deadline {
        let Some(h) = net::recv(&mut rx, &mut msg)? else {
            continue;
        };
        taken += 1;
        seen.store(now_ns(), Ordering::Release);
        if tally.record_now(&h) {
            ended.store(true, Ordering::Release);
            break;
        }
        if taken.is_multiple_of(PACE_BATCH) {
            thread::sleep(PACE_PAUSE);
        }
    }
    let span = tally
        .last_ns()
        .saturating_sub(tally.first_ns().unwrap_or(0));
    let rate = if span > 0 {
        taken.saturating_sub(1) as f64 * 1e9 / span as f64
    } else {
        0.0
    };
    Ok((tally, rate))
}

/// Sends the end-of-stream mark of a PUB stream so that it arrives: a PUB stops writing to
/// a full queue until it hears that the reader made room, and drops everything meanwhile,
/// the mark included. So wait until the receiver has gone quiet (its queue is empty), let
/// the socket handle its commands, send the mark, and send it again if it is not seen.
fn end_after_drain(
    tx: &mut zmq::Socket,
    seq: u64,
    last_seen: &AtomicU64,
    got_end: &AtomicBool,
    timeout: Duration,
) -> Result<()> {
    let give_up = Instant::now() + timeout;
    let quiet_ns = 20_000_000;
    while Instant::now() < give_up {
        while now_ns().saturating_sub(last_seen.load(Ordering::Acquire)) < quiet_ns
            && Instant::now() < give_up
        {
            thread::sleep(Duration::from_millis(2));
        }
        tx.get_events().map_err(zmq_err("reading ZMQ_EVENTS"))?;
        net::send(tx, SIZE, seq, FLAG_END, 0)?.map_err(|e| Error::Zmq {
            op: "sending the end-of-stream mark".into(),
            source: e,
        })?;
        let sent = Instant::now();
        while sent.elapsed() < Duration::from_millis(100) {
            if got_end.load(Ordering::Acquire) {
                return Ok(());
            }
            thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(())
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

    let pub_words = list(
        hwms.iter()
            .zip(&pubs)
            .map(|(h, p)| format!("{} at HWM {}", grouped(lost(p)), grouped(*h as u64)))
            .collect(),
    );
    let push_lost: u64 = pushes.iter().map(lost).sum();
    let push_words = list(
        hwms.iter()
            .zip(&pushes)
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
    let holes = holes_words(&first_loss, &f.gaps);
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
    f.observed = format!(
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
    );
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
