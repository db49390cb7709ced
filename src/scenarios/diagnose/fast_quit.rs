//! Fast quit: a sender that exits right after its last send loses what is still queued.
//!
//! A sender process (the source role) queues a stream of 1 KiB messages (its high-water
//! mark is above the count, so every send returns at once) to a receiver in this process
//! (a sink role, held at its start) that has not started reading, then quits in one of three ways: ZMQ_LINGER=0, libzmq's default
//! linger (infinite), or keeping its socket until the receiver hangs up. The receiver
//! starts reading once the sender has queued everything (with linger 0: once it has
//! closed), and the ledger shows what was lost at the end of the stream.

use super::nodes::{self, Driven, StopOnDrop};
use super::sender::{self, Sender};
use super::{cause, messages, ms, ns_to_ms, Config, FindingDraft, Part};
use crate::endpoint::Transport;
use crate::error::Result;
use crate::model::{Finding, Severity, TimedGap};
use crate::net::probe as net;
use crate::roles::{Quit, Role, END_DRAIN};
use crate::stats::{LossSummary, Throughput};
use crate::topology::SocketType;
use crate::units::grouped;
use crate::zmq;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Instant;

/// The socket pattern of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// PUSH connects and sends, PULL binds and receives.
    PushPull,
    /// PAIR to PAIR.
    Pair,
}

impl Pattern {
    fn name(self) -> &'static str {
        match self {
            Pattern::PushPull => "PUSH/PULL",
            Pattern::Pair => "PAIR",
        }
    }
}

/// Bytes per message.
const SIZE: usize = 1024;

/// What one way of quitting cost.
struct QuitRun {
    /// The receiver's ledger of the stream.
    loss: LossSummary,
    /// Its first and last arrival.
    span: Throughput,
    /// The sender's first send, ns.
    origin_ns: u64,
    /// When the sender had closed its socket and terminated its context, ns.
    closed_ns: Option<u64>,
}

impl QuitRun {
    fn lost(&self) -> u64 {
        self.loss.lost
    }

    fn gaps(&self) -> Vec<TimedGap> {
        nodes::timed_gaps(&self.loss, &self.span, self.origin_ns)
    }

    /// The highest sequence number that arrived.
    fn highest_seq(&self) -> Option<u64> {
        nodes::highest_seq(&self.loss)
    }
}

fn quit_run(cfg: &Config, t: Transport, p: Pattern, quit: Quit, n: u64) -> Result<QuitRun> {
    let ctx = zmq::Context::new();
    let (rx_kind, tx_kind) = match p {
        Pattern::PushPull => (SocketType::Pull, SocketType::Push),
        Pattern::Pair => (SocketType::Pair, SocketType::Pair),
    };
    // Nothing more can come once the sender is gone and the line has been quiet.
    let mut rx = nodes::receiver(
        Role::Sink,
        rx_kind,
        t,
        net::options(None),
        (n, SIZE),
        END_DRAIN,
    );
    // With linger 0 the end of the stream is lost: the receiver ends on the quiet line, with
    // what arrived, however little.
    rx.ends_itself = quit != Quit::LingerZero;
    let go = Arc::new(AtomicBool::new(false));
    let release = StopOnDrop(go.clone());
    let (ep_tx, ep_rx) = mpsc::channel();
    let ctl =
        Driven::telling(Arc::new(AtomicBool::new(false)), ep_tx).held_until(go, cfg.timeout * 2);
    let (receiver, ep, release) =
        nodes::start_receiver(&ctx, rx, ctl, ep_rx, release, cfg.timeout)?;
    let sndhwm = (n + 1000).min(i32::MAX as u64) as i32;
    let ep = crate::net::connect_endpoint(&ep);
    let spec = sender::spec(&ep, tx_kind, n, SIZE, sndhwm, quit, cfg.timeout);
    let deadline = Instant::now() + cfg.timeout * 2;
    let mut child = Sender::start(&cfg.exe, &spec, deadline)?;
    let sent = child.sent(deadline, &mut || {})?;
    let mut closed_ns = None;
    if quit == Quit::LingerZero {
        // Read only once the sender has closed: what it threw away is certain to be gone.
        closed_ns = child.report(deadline)?.closed_ns;
    }
    // The receiver starts reading; it hangs up when it ends, and the sender that waits for
    // its peer may then go.
    drop(release);
    let taken = nodes::joined(receiver, "receiving")?;
    if closed_ns.is_none() {
        closed_ns = child.report(deadline).ok().and_then(|r| r.closed_ns);
    }
    let (span, loss) = nodes::taken(&taken, n);
    Ok(QuitRun {
        loss,
        span,
        origin_ns: sender::figure(sent.first_send_ns, "its first send time")?,
        closed_ns,
    })
}

/// Fast quit with pattern `p` over `t` (tcp or ipc).
pub(super) fn run(cfg: &Config, t: Transport, p: Pattern) -> Result<Finding> {
    let n: u64 = 20_000;
    let zero = quit_run(cfg, t, p, Quit::LingerZero, n)?;
    let default = quit_run(cfg, t, p, Quit::DefaultLinger, n)?;
    let wait = quit_run(cfg, t, p, Quit::WaitForPeer, n)?;
    let id = match p {
        Pattern::PushPull => format!("fast-quit/pushpull/{t}"),
        Pattern::Pair => format!("fast-quit/pair/{t}"),
    };
    let part = match p {
        Pattern::PushPull => Part::FastQuitPushPull,
        Pattern::Pair => Part::FastQuitPair,
    };
    let mut f = FindingDraft::new(&id, part, t);
    evidence(&mut f, p, n, [&zero, &default, &wait]);
    let loss = zero.loss.clone();
    f.gaps = zero.gaps();

    let what = p.name();
    let received_words = match zero.highest_seq() {
        Some(top) => format!(
            "the receiver got {} (through seq {}, the last at {})",
            grouped(loss.received),
            grouped(top),
            ms(ns_to_ms(zero.span.end_ns.saturating_sub(zero.origin_ns)))
        ),
        None => "the receiver got nothing".to_string(),
    };
    let closed_words = zero
        .closed_ns
        .map(|c| {
            format!(
                " {} after its first send",
                ms(ns_to_ms(c.saturating_sub(zero.origin_ns)))
            )
        })
        .unwrap_or_default();
    let default_words = if default.lost() == 0 {
        "lost nothing: terminating the context waited until the queue had left".to_string()
    } else {
        format!(
            "still lost {} at the end: the last bytes handed to the connection went with the \
             process (libzmq issues 1922 and 4660)",
            messages(default.lost())
        )
    };
    f.severity = if zero.lost() > 0 || default.lost() > 0 || wait.lost() > 0 {
        Severity::Warning
    } else {
        Severity::Info
    };
    f.title = if zero.lost() > 0 {
        format!(
            "{what} over {t}: {} of {} lost at the end when the sender quit with ZMQ_LINGER=0",
            grouped(zero.lost()),
            grouped(n)
        )
    } else {
        format!("{what} over {t}: nothing lost when the sender quit, even with ZMQ_LINGER=0")
    };
    f.observed = format!(
        "A sender process queued {} of {} for a receiver that had not started reading (its \
         ZMQ_SNDHWM held them all, so every send returned at once) and quit. With ZMQ_LINGER=0 \
         it closed{closed_words} and {received_words}: {} lost at the end. With the default \
         linger it {default_words}. Keeping the socket open until the receiver hung up lost {}.",
        messages(n),
        crate::units::bytes(SIZE as u64),
        grouped(loss.lost_at_end),
        grouped(wait.lost()),
    );
    f.cause = "send() only queues: ZeroMQ writes to the connection in the background. A socket \
               closed with ZMQ_LINGER=0 (or a process that exits without closing) throws its \
               queue away. With a linger, zmq_ctx_term waits up to the linger for the queue to \
               be handed to the connection, but bytes already in the connection's buffer can \
               still be lost if the process exits at once (libzmq issues 1922 and 4660); what \
               the kernel already holds is delivered."
        .to_string();
    f.remedy = "Do not exit right after the last send. Leave ZMQ_LINGER at its default or set \
                it > 0, close every socket and terminate the context before exit; better, end \
                with an acknowledgement: keep the process alive until the peer confirms the last \
                message (a reply, or an end-of-stream it answers) or disconnects (a socket \
                monitor reports ZMQ_EVENT_DISCONNECTED), as zmqperf's own senders do."
        .to_string();
    let fix = format!(
        "keep the sender until the peer has the last message (an acknowledgement, or its \
         disconnection): {} lost here",
        grouped(wait.lost())
    );
    f.triage(
        cause::FAST_QUIT,
        zero.lost(),
        zero.lost(),
        cause::LOST,
        &fix,
    );
    Ok(f.finish())
}

/// The figures of the three ways of quitting: linger 0 in full, the others' losses.
fn evidence(f: &mut FindingDraft, p: Pattern, n: u64, [zero, default, wait]: [&QuitRun; 3]) {
    let loss = zero.loss.clone();
    f.put("messages", n);
    f.put("message_size", SIZE as u64);
    f.put(
        "sockets",
        format!("{} in a sender process", p.name()).as_str(),
    );
    f.put_ledger("linger0_", &loss);
    f.put("linger0_lost", zero.lost());
    if let Some(c) = zero.closed_ns {
        f.put(
            "linger0_closed_ms",
            ns_to_ms(c.saturating_sub(zero.origin_ns)),
        );
    }
    if let Some(top) = zero.highest_seq() {
        f.put("linger0_last_seq", top);
        f.put(
            "linger0_last_arrival_ms",
            ns_to_ms(zero.span.end_ns.saturating_sub(zero.origin_ns)),
        );
    }
    f.put("default_linger_lost", default.lost());
    f.put("wait_for_peer_lost", wait.lost());
}
