//! Roles: the parts of a topology that own sockets and measure. One file per role; each
//! runs the same whether the runner placed it on a thread or in a child process.
//!
//! A role binds or connects, says `ready` (with the endpoint it bound) on its control
//! channel, waits for `start` (the start barrier), runs, and returns a [`RoleReport`].

mod client;
mod receiver;
mod sender;
mod server;

use crate::clock::now_ns;
use crate::endpoint::{Endpoint, Side};
use crate::error::{Error, Result};
use crate::model::RoleUsage;
use crate::stats::{LatencyHistogram, Ledger, Throughput};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Set in the environment of a child process that plays a role.
pub const CHILD_ENV: &str = "ZMQPERF_ROLE_CHILD";

/// Which role to play.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RoleKind {
    /// Sends requests and times the round trips (REQ, DEALER or PAIR).
    Client,
    /// Echoes requests (REP, ROUTER or PAIR).
    Server,
    /// Sends a stream (PUSH, PUB or PAIR), at full speed or at a fixed rate.
    Sender,
    /// Receives a stream (PULL, SUB or PAIR) and keeps the ledger.
    Receiver,
}

/// The socket pattern of a case.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// REQ/REP latency.
    ReqRep,
    /// DEALER/ROUTER latency.
    DealerRouter,
    /// PAIR latency.
    PairLat,
    /// PUSH/PULL throughput.
    PushPull,
    /// PUB/SUB throughput.
    PubSub,
    /// PAIR throughput.
    PairThr,
    /// Fan-in throughput: [`FANIN_SENDERS`] PUSH senders, each its own stream, into one PULL.
    FanIn,
}

/// Senders of the fan-in pattern.
pub const FANIN_SENDERS: u32 = 3;

impl Pattern {
    /// Every pattern, latency ones first.
    pub const ALL: [Pattern; 7] = [
        Pattern::ReqRep,
        Pattern::DealerRouter,
        Pattern::PairLat,
        Pattern::PushPull,
        Pattern::PubSub,
        Pattern::PairThr,
        Pattern::FanIn,
    ];

    /// The name used on the command line, in workload files and in case ids.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::ReqRep => "reqrep",
            Pattern::DealerRouter => "dealerrouter",
            Pattern::PairLat => "pair-lat",
            Pattern::PushPull => "pushpull",
            Pattern::PubSub => "pubsub",
            Pattern::PairThr => "pair-thr",
            Pattern::FanIn => "fanin",
        }
    }

    /// Parses a pattern name, naming the valid ones on error.
    pub fn parse(s: &str) -> Result<Pattern> {
        Pattern::ALL
            .iter()
            .copied()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Pattern::ALL.iter().map(|p| p.name()).collect();
                Error::invalid("pattern", s, format!("use one of {}", names.join(", ")))
            })
    }

    /// Whether the pattern measures round trips.
    pub fn is_latency(self) -> bool {
        matches!(
            self,
            Pattern::ReqRep | Pattern::DealerRouter | Pattern::PairLat
        )
    }

    /// How many connecting roles (senders or clients) the pattern has.
    pub fn connectors(self) -> u32 {
        match self {
            Pattern::FanIn => FANIN_SENDERS,
            _ => 1,
        }
    }

    /// The two roles: the first binds, the second connects ([`Pattern::connectors`] times).
    pub fn roles(self) -> [RoleKind; 2] {
        if self.is_latency() {
            [RoleKind::Server, RoleKind::Client]
        } else {
            [RoleKind::Receiver, RoleKind::Sender]
        }
    }

    /// The socket type a role uses in this pattern.
    pub fn socket(self, role: RoleKind) -> zmq::SocketType {
        use RoleKind::*;
        match (self, role) {
            (Pattern::ReqRep, Client) => zmq::REQ,
            (Pattern::ReqRep, _) => zmq::REP,
            (Pattern::DealerRouter, Client) => zmq::DEALER,
            (Pattern::DealerRouter, _) => zmq::ROUTER,
            (Pattern::PushPull | Pattern::FanIn, Sender) => zmq::PUSH,
            (Pattern::PushPull | Pattern::FanIn, _) => zmq::PULL,
            // XPUB is a PUB on the wire that also sees the subscription arrive.
            (Pattern::PubSub, Sender) => zmq::XPUB,
            (Pattern::PubSub, _) => zmq::SUB,
            (Pattern::PairLat | Pattern::PairThr, _) => zmq::PAIR,
        }
    }
}

/// Everything a role needs to run; serialised to a child process as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoleSpec {
    /// The role.
    pub role: RoleKind,
    /// The pattern.
    pub pattern: Pattern,
    /// Endpoint to bind (may hold a wildcard) or connect to.
    pub endpoint: String,
    /// Bind (true) or connect.
    pub bind: bool,
    /// Payload bytes per message.
    pub size: usize,
    /// Measured round trips or messages.
    pub count: u64,
    /// Unmeasured round trips or messages first.
    pub warmup: u64,
    /// Sender: messages per second (open loop), None for as fast as possible.
    pub rate: Option<f64>,
    /// Sender: time-stamp every n-th message at full speed (every message in open loop).
    pub stamp_every: u64,
    /// Longest wait for the peer, per message, ms.
    pub timeout_ms: u64,
    /// Sender: the stream id written in every header.
    #[serde(default)]
    pub stream_id: u32,
    /// Receiver: how many senders (streams) to take `count` messages from each.
    #[serde(default = "one_stream")]
    pub streams: u32,
}

fn one_stream() -> u32 {
    1
}

impl RoleSpec {
    /// The per-message timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    pub(crate) fn endpoint(&self) -> Result<Endpoint> {
        Endpoint::parse(
            &self.endpoint,
            if self.bind { Side::Bind } else { Side::Connect },
        )
    }
}

/// What a role measured, mergeable with the reports of other roles.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct RoleReport {
    /// Latency samples (client: round trip / 2; receiver: send or due time to receipt).
    pub latency: Option<LatencyHistogram>,
    /// Sender in open loop: actual minus due send time.
    pub send_delay: Option<LatencyHistogram>,
    /// Sender's admission rate.
    pub send: Option<Throughput>,
    /// Receiver's delivered rate.
    pub delivered: Option<Throughput>,
    /// Receiver's ledger.
    pub ledger: Option<Ledger>,
    /// CPU and memory.
    pub usage: Option<RoleUsage>,
}

/// The role's side of the control channel.
pub trait Control {
    /// Tells the runner the role is bound or connected (with the endpoint actually bound).
    fn ready(&mut self, endpoint: &str) -> Result<()>;
    /// Waits for the runner's start signal (the start barrier).
    fn wait_start(&mut self, timeout: Duration) -> Result<()>;
}

/// Runs a role to its end.
pub fn run_role(ctx: &zmq::Context, spec: &RoleSpec, ctl: &mut dyn Control) -> Result<RoleReport> {
    match spec.role {
        RoleKind::Client => client::run(ctx, spec, ctl),
        RoleKind::Server => server::run(ctx, spec, ctl),
        RoleKind::Sender => sender::run(ctx, spec, ctl),
        RoleKind::Receiver => receiver::run(ctx, spec, ctl),
    }
}

/// Opens the role's socket and tells the runner it is ready.
pub(crate) fn open(
    ctx: &zmq::Context,
    spec: &RoleSpec,
    ctl: &mut dyn Control,
) -> Result<(zmq::Socket, Endpoint)> {
    let ep = spec.endpoint()?;
    let side = if spec.bind { Side::Bind } else { Side::Connect };
    let kind = spec.pattern.socket(spec.role);
    let (s, actual) = crate::compat::open_socket(ctx, kind, &ep, side, spec.timeout())?;
    if kind == zmq::SUB {
        s.set_subscribe(b"")
            .map_err(crate::error::zmq_err("subscribing"))?;
    }
    ctl.ready(&actual)?;
    Ok((s, ep))
}

/// Peak resident set of this process, KiB, from /proc/self/status (VmHWM). Unlike
/// getrusage's ru_maxrss, it is not inherited across exec from the runner that spawned us.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// CPU time of the calling thread (or process) and the process's peak RSS.
pub fn usage(role: RoleKind, placement: &str) -> RoleUsage {
    let who = if placement == "thread" {
        libc::RUSAGE_THREAD
    } else {
        libc::RUSAGE_SELF
    };
    // SAFETY: getrusage fills the struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    RoleUsage {
        role: format!("{role:?}").to_lowercase(),
        placement: placement.to_string(),
        cpu_user_ms: ms(ru.ru_utime),
        cpu_sys_ms: ms(ru.ru_stime),
        peak_rss_kib: peak_rss_kib(),
    }
}

/// Waits until the monotonic clock reaches `due_ns`: sleeps while far, spins when close.
#[inline]
pub(crate) fn wait_until(due_ns: u64) {
    loop {
        let now = now_ns();
        if now >= due_ns {
            return;
        }
        let left = due_ns - now;
        if left > 200_000 {
            std::thread::sleep(Duration::from_nanos(left - 100_000));
        } else {
            std::hint::spin_loop();
        }
    }
}
