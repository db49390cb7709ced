//! The slow joiner: a publisher that sends as soon as it has connected loses the start of
//! its stream, because its subscriber's subscription has not reached it yet.
//!
//! The SUB binds first (as PTMP advises) and the publisher connects and sends at once,
//! as fast as it can. The publisher is an XPUB, which is a PUB on the wire but also
//! receives the subscription: polling for it between sends tells when the subscription
//! reached the publisher, which is when loss stops. The subscriber's thread starts
//! receiving just after the publisher's first send, as when both start together: a SUB
//! sends its subscription only once its own thread handles the new connection, so the
//! first message at least is always lost (without that, a publisher thread that happens
//! to be descheduled between connecting and sending can win the race over ipc).
//!
//! Then three remedies are measured, with the subscriber already receiving: a fixed wait
//! after connecting, a handshake (probe messages until the subscriber answers on a second
//! socket), and an XPUB that waits for the subscription. High-water marks are off (0) on
//! both sides so that any loss is the slow joiner's.

use super::stream::Tally;
use super::{cause, messages, ms, ns_to_ms, Config, FindingDraft, Part};
use crate::clock::now_ns;
use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::header::{FLAG_END, FLAG_WARMUP};
use crate::model::{Finding, Severity};
use crate::msg::RawMsg;
use crate::net::probe::{self as net, SIZE};
use crate::stats::LossSummary;
use crate::topology::SocketType;
use crate::units::grouped;
use crate::zmq;
use std::sync::mpsc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// The fixed wait measured as a remedy.
const FIXED_WAIT: Duration = Duration::from_millis(5);

/// One stream: how many were sent, what arrived, and the times.
struct Outcome {
    /// Messages in the stream (sequence numbers 0 to sent-1).
    sent: u64,
    tally: Tally,
    /// The first send, ns.
    origin_ns: u64,
    /// Remedies: from connecting to the first send of the stream, ns.
    ready_ns: u64,
    /// No wait: when the subscription reached the publisher, ns (None if it never did).
    subscription_ns: Option<u64>,
    /// Handshake: probe messages sent before the subscriber answered.
    probes: u64,
}

/// Binds a SUB on `t` and receives on a thread until the end-of-stream mark or the
/// deadline; with `ack`, answers the first probe on it (the handshake); with `go`, starts
/// receiving only when told (or after the timeout).
fn receiver(
    ctx: &zmq::Context,
    t: Transport,
    timeout: Duration,
    ack: Option<zmq::Socket>,
    go: Option<mpsc::Receiver<()>>,
) -> Result<(String, JoinHandle<Result<Tally>>)> {
    let (mut s, ep) = net::bind(
        ctx,
        SocketType::Sub,
        t,
        Duration::from_millis(50),
        &net::options(Some(0)),
    )?;
    let h = thread::spawn(move || {
        if let Some(go) = go {
            let _ = go.recv_timeout(timeout);
        }
        let deadline = Instant::now() + timeout;
        let mut tally = Tally::new();
        let mut msg = RawMsg::new();
        let mut answered = false;
        while Instant::now() < deadline {
            let Some(h) = net::recv(&mut s, &mut msg)? else {
                continue;
            };
            if h.flags & FLAG_WARMUP != 0 {
                if let (Some(a), false) = (ack.as_ref(), answered) {
                    a.send("ready", 0).map_err(|e| Error::Zmq {
                        op: "answering the handshake".into(),
                        source: e,
                    })?;
                    answered = true;
                }
                continue;
            }
            if tally.record_now(&h) {
                break;
            }
        }
        Ok(tally)
    });
    Ok((ep, h))
}

/// The subscriber bound on `t` and receiving (as [`receiver`]), and a publisher of `kind`
/// connected to it, with no high-water mark: how every run of the experiment starts.
fn publish_to(
    ctx: &zmq::Context,
    cfg: &Config,
    t: Transport,
    kind: SocketType,
    ack: Option<zmq::Socket>,
    go: Option<mpsc::Receiver<()>>,
) -> Result<(zmq::Socket, JoinHandle<Result<Tally>>)> {
    let (ep, rx) = receiver(ctx, t, cfg.timeout, ack, go)?;
    let s = net::connect(ctx, kind, &ep, cfg.timeout, &net::options(Some(0)))?;
    Ok((s, rx))
}

fn join(h: JoinHandle<Result<Tally>>) -> Result<Tally> {
    h.join()
        .map_err(|_| Error::Internal("the receiving thread panicked".into()))?
}

fn send_err(e: zmq::Error) -> Error {
    Error::Zmq {
        op: "publishing".into(),
        source: e,
    }
}

/// Sends `n` messages then the end-of-stream mark; returns the first send time.
fn stream(s: &mut zmq::Socket, n: u64) -> Result<u64> {
    let origin = now_ns();
    for seq in 0..=n {
        let flags = if seq == n { FLAG_END } else { 0 };
        net::send(s, SIZE, seq, flags, 0)?.map_err(send_err)?;
    }
    Ok(origin)
}

/// The end of a remedy: sends the stream once the publisher is ready (`connected` is when
/// it connected) and collects what the subscriber got.
fn stream_and_collect(
    s: &mut zmq::Socket,
    n: u64,
    rx: JoinHandle<Result<Tally>>,
    connected: u64,
    probes: u64,
) -> Result<Outcome> {
    let origin_ns = stream(s, n)?;
    Ok(Outcome {
        sent: n + 1,
        tally: join(rx)?,
        origin_ns,
        ready_ns: origin_ns - connected,
        subscription_ns: None,
        probes,
    })
}

/// The problem: connect and publish at once; `n` more messages once the subscription is in.
fn no_wait(cfg: &Config, t: Transport, n: u64) -> Result<Outcome> {
    let ctx = zmq::Context::new();
    let (go, go_rx) = mpsc::channel();
    let (mut s, rx) = publish_to(&ctx, cfg, t, SocketType::Xpub, None, Some(go_rx))?;
    let origin_ns = now_ns();
    let give_up = origin_ns + cfg.timeout.as_nanos() as u64;
    let mut seq = 0u64;
    let mut subscription_ns = None;
    let mut after = 0u64;
    loop {
        net::send(&mut s, SIZE, seq, 0, 0)?.map_err(send_err)?;
        if seq == 0 {
            // The subscriber's thread gets going as the publisher does.
            let _ = go.send(());
        }
        seq += 1;
        match subscription_ns {
            None => {
                if s.recv_bytes(zmq::DONTWAIT).is_ok() {
                    subscription_ns = Some(now_ns());
                } else if now_ns() > give_up {
                    break;
                }
            }
            Some(_) => {
                after += 1;
                if after >= n {
                    break;
                }
            }
        }
    }
    net::send(&mut s, SIZE, seq, FLAG_END, 0)?.map_err(send_err)?;
    let tally = join(rx)?;
    Ok(Outcome {
        sent: seq + 1,
        tally,
        origin_ns,
        ready_ns: 0,
        subscription_ns,
        probes: 0,
    })
}

/// Remedy: a fixed wait after connecting.
fn fixed_wait(cfg: &Config, t: Transport, n: u64) -> Result<Outcome> {
    let ctx = zmq::Context::new();
    let (mut s, rx) = publish_to(&ctx, cfg, t, SocketType::Pub, None, None)?;
    let connected = now_ns();
    thread::sleep(FIXED_WAIT);
    stream_and_collect(&mut s, n, rx, connected, 0)
}

/// Remedy: probe messages until the subscriber answers on a second socket.
fn handshake(cfg: &Config, t: Transport, n: u64) -> Result<Outcome> {
    let ctx = zmq::Context::new();
    let (sync, sync_ep) = net::bind(&ctx, SocketType::Pull, t, cfg.timeout, &net::options(None))?;
    let ack = net::connect(
        &ctx,
        SocketType::Push,
        &sync_ep,
        cfg.timeout,
        &net::options(None),
    )?;
    let (mut s, rx) = publish_to(&ctx, cfg, t, SocketType::Pub, Some(ack), None)?;
    let connected = now_ns();
    let give_up = Instant::now() + cfg.timeout;
    let mut probes = 0u64;
    loop {
        net::send(&mut s, SIZE, probes, FLAG_WARMUP, 0)?.map_err(send_err)?;
        probes += 1;
        let ready = sync.poll(zmq::POLLIN, 1).map_err(|e| Error::Zmq {
            op: "waiting for the handshake".into(),
            source: e,
        })?;
        if ready > 0 {
            let _ = sync.recv_bytes(0);
            break;
        }
        if Instant::now() > give_up {
            return Err(Error::Protocol(format!(
                "the subscriber did not answer the handshake within {}",
                crate::error::fmt_duration(cfg.timeout)
            )));
        }
    }
    stream_and_collect(&mut s, n, rx, connected, probes)
}

/// Remedy: an XPUB that publishes once it has received the subscription.
fn xpub_wait(cfg: &Config, t: Transport, n: u64) -> Result<Outcome> {
    let ctx = zmq::Context::new();
    let (mut s, rx) = publish_to(&ctx, cfg, t, SocketType::Xpub, None, None)?;
    let connected = now_ns();
    s.recv_bytes(0).map_err(|e| Error::Zmq {
        op: "waiting for the subscription".into(),
        source: e,
    })?;
    stream_and_collect(&mut s, n, rx, connected, 0)
}

/// Runs the slow-joiner experiment and its remedies over `t`.
pub(super) fn run(cfg: &Config, t: Transport) -> Result<Finding> {
    let n = if cfg.quick { 2_000 } else { 10_000 };
    let base = no_wait(cfg, t, n)?;
    let wait = fixed_wait(cfg, t, n)?;
    let hs = handshake(cfg, t, n)?;
    let xp = xpub_wait(cfg, t, n)?;

    let mut f = FindingDraft::new(&format!("slow-joiner/{t}"), Part::SlowJoiner, t);
    let loss = base.tally.summary(base.sent);
    let lost = loss.lost_at_start;
    let since = |ns: u64| ns_to_ms(ns.saturating_sub(base.origin_ns));
    evidence(&mut f, &loss, [&base, &wait, &hs, &xp]);
    let lost_of = |o: &Outcome| o.tally.summary(o.sent).lost;

    let sub_words = match base.subscription_ns {
        Some(sub) => format!(
            "the subscription reached it {} after its first send",
            ms(since(sub))
        ),
        None => format!(
            "the subscription had not reached it after {}",
            crate::error::fmt_duration(cfg.timeout)
        ),
    };
    let remedies = format!(
        "Remedies, measured the same way: a fixed {} wait after connecting lost {}; a \
         handshake (probes until the subscriber answered on a second socket, {} probes) lost {} \
         and was ready {} after connecting; an XPUB waiting for the subscription lost {} and \
         was ready after {}.",
        crate::error::fmt_duration(FIXED_WAIT),
        messages(lost_of(&wait)),
        hs.probes,
        messages(lost_of(&hs)),
        ms(ns_to_ms(hs.ready_ns)),
        messages(lost_of(&xp)),
        ms(ns_to_ms(xp.ready_ns)),
    );
    if lost > 0 {
        f.severity = Severity::Warning;
        f.title = format!(
            "PUB/SUB over {t}: {} lost at the start (slow joiner)",
            messages(lost)
        );
        let first_seen = base
            .tally
            .first_ns()
            .map(|n| format!(", at {}", ms(since(n))))
            .unwrap_or_default();
        f.observed = format!(
            "The publisher connected to the bound subscriber and sent at once, as fast as it \
             could, while the subscriber's thread got going: {sub_words}, and the {} it had \
             sent by then went to no one (the first to arrive was seq {}{first_seen}). \
             {remedies}",
            messages(lost),
            grouped(lost),
        );
    } else {
        f.title = format!("PUB/SUB over {t}: no loss at the start");
        f.observed = format!(
            "The publisher connected and sent at once, yet nothing was lost: {sub_words}. \
             {remedies}"
        );
    }
    f.cause = "A PUB sends only to the subscribers whose subscriptions it has received. \
               Connecting (for tcp and ipc: the connection and the ZMTP handshake) and passing \
               the subscription upstream take time, and whatever is published meanwhile is \
               dropped without an error. Binding the SUB first does not help: the subscription \
               still has to travel. Over inproc the publisher learns of it only when its socket \
               next handles its commands."
        .to_string();
    f.remedy = "Publish only when the subscriber is known to be there: use an XPUB and wait for \
                recv() to return the subscription (and set ZMQ_XPUB_NODROP so the stream blocks \
                rather than drops at the high-water mark), or do a handshake: publish probes \
                until each subscriber confirms on a second socket (REQ/REP or PUSH/PULL), as in \
                the ZeroMQ Guide's node coordination. A fixed sleep after connecting is a guess \
                that can be too short: over a 1 Gbps network PTMP needed 2 ms. Or let \
                subscribers detect the gap by sequence number and ask for what they missed."
        .to_string();
    let fix = if lost_of(&xp) == 0 && lost_of(&hs) == 0 {
        "wait for the subscription before publishing (an XPUB's recv, or a handshake): both \
         lost 0 here"
            .to_string()
    } else {
        format!(
            "wait for the subscription before publishing: an XPUB's recv lost {}, a handshake \
             {} here",
            grouped(lost_of(&xp)),
            grouped(lost_of(&hs))
        )
    };
    f.triage(cause::SLOW_JOINER, lost, lost, cause::LOST, &fix);
    Ok(f.finish())
}

/// The figures of the stream with no wait in full, and of each remedy its loss and how
/// soon it was ready.
fn evidence(f: &mut FindingDraft, loss: &LossSummary, [base, wait, hs, xp]: [&Outcome; 4]) {
    let since = |ns: u64| ns_to_ms(ns.saturating_sub(base.origin_ns));
    f.put("sent", base.sent);
    f.put_ledger("", loss);
    f.put(
        "sockets",
        "XPUB (as a PUB) -> SUB, SUB binds and starts receiving at the first send",
    );
    if let Some(sub) = base.subscription_ns {
        f.put("subscription_ms", since(sub));
    }
    if let Some(first) = base.tally.first_ns() {
        f.put("first_arrival_ms", since(first));
    }
    f.gaps = base.tally.gaps(base.sent, base.origin_ns);
    let lost_of = |o: &Outcome| o.tally.summary(o.sent).lost;
    f.put("fixed_wait_ms", FIXED_WAIT.as_millis() as u64);
    f.put("fixed_wait_lost", lost_of(wait));
    f.put("handshake_lost", lost_of(hs));
    f.put("handshake_ready_ms", ns_to_ms(hs.ready_ns));
    f.put("handshake_probes", hs.probes);
    f.put("xpub_lost", lost_of(xp));
    f.put("xpub_ready_ms", ns_to_ms(xp.ready_ns));
}
