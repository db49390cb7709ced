//! Roles: the parts of a topology that own sockets and measure. One file per role, one
//! dispatch enum ([`Role`]); a role runs the same whether the runner placed it on a thread
//! or in a child process, and knows nothing about where it is.
//!
//! A role opens its sockets, says `ready` (with the endpoints it bound) on its control
//! channel, waits for `start` (the start barrier), runs, and returns a [`RoleReport`].
//! Roles that do not end by themselves (sink, echo, proxy) end when everything they expect
//! has arrived, when the runner says `stop` (then they drain what is queued), or after
//! being idle for the timeout (then they report what they have, marked as cut short).

mod echo;
mod ping;
mod proxy;
pub mod publisher;
mod sink;
mod source;
pub mod swarm;

use crate::clock::now_ns;
use crate::endpoint::{Endpoint, Side};
use crate::error::{zmq_err, Error, Result};
use crate::model::RoleUsage;
use crate::msg::RawMsg;
use crate::net::{apply_options, open_socket};
pub use crate::runner::control::SentFacts;
use crate::stats::{LatencyHistogram, Ledger, Throughput};
pub use crate::topology::Role;
use crate::topology::{SocketOptions, SocketType};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Set in the environment of a child process that plays a node.
pub const CHILD_ENV: &str = "ZMQPERF_ROLE_CHILD";

/// How often a waiting passive role looks for the runner's stop.
pub const STOP_POLL: Duration = Duration::from_millis(100);

/// A socket as the runner resolved it: concrete endpoints, options.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SockPlan {
    /// Its type.
    pub kind: SocketType,
    /// Endpoints to bind (wildcards allowed).
    pub bind: Vec<String>,
    /// Endpoints to connect to.
    pub connect: Vec<String>,
    /// Options from the topology.
    pub options: SocketOptions,
}

impl SockPlan {
    /// Whether this is the socket of `spec` that waits for subscriptions: the only socket
    /// of a source, the sending side of a proxy.
    pub fn publishes(&self, spec: &NodeSpec) -> bool {
        match spec.role {
            Role::Proxy => spec.sockets.get(1) == Some(self),
            _ => true,
        }
    }
}

/// Everything a node replica needs to run; sent to a child process as JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NodeSpec {
    /// The replica's name: the node's, or `name[i]` for replicas.
    pub name: String,
    /// What it does.
    pub role: Role,
    /// Its sockets (a proxy: receiving side, then sending side).
    pub sockets: Vec<SockPlan>,
    /// Payload bytes per message.
    pub size: usize,
    /// Source: messages; ping: round trips.
    pub count: u64,
    /// Unmeasured messages or round trips first.
    pub warmup: u64,
    /// Source: messages per second (open loop), None for as fast as possible.
    pub rate: Option<f64>,
    /// Source: time-stamp every n-th message at full speed (every message in open loop).
    pub stamp_every: u64,
    /// Longest wait for a peer, and longest idle time of a passive role, ms.
    pub timeout_ms: u64,
    /// Source: the stream id written in every header.
    #[serde(default)]
    pub stream_id: u32,
    /// Sink: the streams it expects, each with its message count.
    #[serde(default)]
    pub streams: Vec<(u32, u64)>,
    /// Sink or echo: ends by itself once everything expected has arrived (false: it gets a
    /// share of a load-balanced stream, so only the runner's stop ends it).
    #[serde(default)]
    pub ends_itself: bool,
    /// Echo: requests to expect (warm-up included) when it ends by itself.
    #[serde(default)]
    pub expect: u64,
    /// Source or echo: peers to see disconnect before closing (the last sender keeps its
    /// connection until the receivers hang up, so no tail is lost).
    #[serde(default)]
    pub peers: u32,
    /// Source on PUB/XPUB: subscriptions to wait for before sending (no slow joiner).
    #[serde(default)]
    pub subscriptions: u32,
    /// Ping on DEALER talking to REP: an empty delimiter frame first.
    #[serde(default)]
    pub delimiter: bool,
    /// Whether messages carry the measurement header (both sides zmqperf), or whether the
    /// receiving side finds out from the first message (a peer such as libzmq's C tools).
    #[serde(default)]
    pub header: HeaderUse,
    /// Echo: how a message goes back.
    #[serde(default)]
    pub echo: EchoMode,
    /// Ping: also keep the full round trips (libzmq's remote_lat figure).
    #[serde(default)]
    pub full_rtt: bool,
    /// Swarm: its subscribers and timeouts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm: Option<swarm::SwarmSpec>,
    /// Who should be on the other side, for error messages (e.g. `remote_lat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_label: Option<String>,
    /// Source: how it ends once its last message has left.
    #[serde(default)]
    pub quit: Quit,
}

/// How a source ends once its last message has left (what `zmqperf diagnose` compares).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quit {
    /// Keep the socket until the peers hang up (up to the timeout), so no tail is lost.
    #[default]
    WaitForPeer,
    /// ZMQ_LINGER=0 and close at once: whatever is still queued is thrown away.
    LingerZero,
    /// libzmq's default linger (-1): terminating the context waits for the queue to leave.
    DefaultLinger,
    /// Keep the socket until the runner's `stop` (up to the timeout), then close with
    /// linger 0.
    WaitForStop,
}

/// How a role uses the measurement header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HeaderUse {
    /// Every message carries it (when it fits); one without is a protocol error.
    #[default]
    Always,
    /// Sink, echo and ping: use it if the first message (or reply) carries it.
    Detect,
    /// Source and ping: no header and no clock per message (libzmq's plain loop).
    Never,
}

/// How the echo role sends a request back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EchoMode {
    /// Reads the header of each request (the ledger of the requests), then sends it back.
    Inspect,
    /// Sends the received message itself back, without reading it (libzmq's local_lat).
    #[default]
    ZeroCopy,
    /// Sends a copy of the payload back (what a binding that copies does).
    Copy,
}

impl NodeSpec {
    /// The per-message timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }
}

/// What a node replica measured, mergeable with the reports of others.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct RoleReport {
    /// Latency samples (ping: round trip / 2; sink: send or due time to receipt).
    pub latency: Option<LatencyHistogram>,
    /// Sink: the latency of each stream (by stream id).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stream_latency: Vec<(u32, LatencyHistogram)>,
    /// Source in open loop: actual minus due send time.
    pub send_delay: Option<LatencyHistogram>,
    /// Source's admission rate.
    pub send: Option<Throughput>,
    /// Sink's delivered rate.
    pub delivered: Option<Throughput>,
    /// Sink's ledger, per stream.
    pub ledger: Option<Ledger>,
    /// Proxy: messages forwarded (both directions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded: Option<u64>,
    /// Why a passive role ended before everything arrived (idle for the timeout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<String>,
    /// Whether the messages carried the measurement header.
    #[serde(default)]
    pub header: bool,
    /// Swarm: every subscriber's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm: Option<Box<swarm::ChildReport>>,
    /// Ping: the full round trips, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<LatencyHistogram>,
    /// Ping and echo: round trips done, from the first to the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_trips: Option<Throughput>,
    /// Source: time spent waiting for the subscriptions before sending, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscription_wait_ns: Option<u64>,
    /// Source and echo over tcp or ipc: whether every peer hung up within the timeout after
    /// the last message (false: the tail may not have been delivered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_closed: Option<bool>,
    /// CPU and memory.
    pub usage: Option<RoleUsage>,
    /// A node in a process of its own: monotonic clock once its sockets were closed and its
    /// context terminated (where a linger is honoured, or not), ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_ns: Option<u64>,
}

/// The role's side of the control channel.
pub trait Control {
    /// Tells the runner the node's sockets are bound and connected (with the endpoints
    /// actually bound, in socket then bind order).
    fn ready(&mut self, endpoints: &[String]) -> Result<()>;
    /// Waits for the runner's start signal (the start barrier).
    fn wait_start(&mut self, timeout: Duration) -> Result<()>;
    /// Tells the runner a source's last message has left.
    fn sent(&mut self) -> Result<()> {
        self.sent_with(SentFacts::default())
    }
    /// As [`Control::sent`], with what the source measured around its send loop.
    fn sent_with(&mut self, _facts: SentFacts) -> Result<()> {
        Ok(())
    }
    /// Whether the runner has asked a passive role to stop (never blocks).
    fn stop_requested(&mut self) -> bool;
}

/// The control of a role run on the caller's own thread (the compatible commands): ready
/// goes to a callback, the start is at once, no stop ever comes.
struct Here<F: FnMut(&[String])> {
    on_ready: F,
}

impl<F: FnMut(&[String])> Control for Here<F> {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        (self.on_ready)(endpoints);
        Ok(())
    }

    fn wait_start(&mut self, _timeout: Duration) -> Result<()> {
        Ok(())
    }

    fn stop_requested(&mut self) -> bool {
        false
    }
}

/// Runs a node on this thread; `on_ready` gets the endpoints bound before the run starts.
pub fn run_here(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    on_ready: impl FnMut(&[String]),
) -> Result<RoleReport> {
    run_node(ctx, spec, &mut Here { on_ready })
}

impl NodeSpec {
    /// A spec with nothing set but the role, its one socket and the timeout: the
    /// compatible commands fill in the rest.
    pub fn single(name: &str, role: Role, socket: SockPlan, timeout: Duration) -> NodeSpec {
        NodeSpec {
            name: name.to_string(),
            role,
            sockets: vec![socket],
            size: 0,
            count: 0,
            warmup: 0,
            rate: None,
            stamp_every: 1,
            timeout_ms: timeout.as_millis() as u64,
            stream_id: 0,
            streams: Vec::new(),
            ends_itself: true,
            expect: 0,
            peers: 1,
            subscriptions: 0,
            delimiter: false,
            header: HeaderUse::Always,
            echo: EchoMode::ZeroCopy,
            full_rtt: false,
            swarm: None,
            peer_label: None,
            quit: Quit::WaitForPeer,
        }
    }

    /// The name of the peer for error messages, or `default`.
    pub(crate) fn peer_or<'a>(&'a self, default: &'a str) -> &'a str {
        self.peer_label.as_deref().unwrap_or(default)
    }
}

/// Runs a node replica to its end.
pub fn run_node(ctx: &zmq::Context, spec: &NodeSpec, ctl: &mut dyn Control) -> Result<RoleReport> {
    match spec.role {
        Role::Ping => ping::run(ctx, spec, ctl),
        Role::Echo => echo::run(ctx, spec, ctl),
        Role::Source => source::run(ctx, spec, ctl),
        Role::Sink => sink::run(ctx, spec, ctl),
        Role::Proxy => proxy::run(ctx, spec, ctl),
        Role::Swarm => swarm::run(spec, ctl),
    }
}

/// An opened socket with the endpoint it is measured on (for error messages).
pub(crate) struct Opened {
    pub sock: zmq::Socket,
    pub endpoint: Endpoint,
    pub bound: Vec<String>,
}

/// Opens one planned socket: options, then binds, then connects. A PUB that must count its
/// subscribers is opened as an XPUB (the same on the wire) that passes every subscription.
pub(crate) fn open_one(
    ctx: &zmq::Context,
    plan: &SockPlan,
    spec: &NodeSpec,
    recv_timeout: Duration,
) -> Result<Opened> {
    let mut kind = plan.kind;
    if spec.subscriptions > 0 && kind == SocketType::Pub && plan.publishes(spec) {
        kind = SocketType::Xpub;
    }
    let mut bound = Vec::new();
    let mut first: Option<(zmq::Socket, Endpoint)> = None;
    let sides = plan
        .bind
        .iter()
        .map(|e| (e, Side::Bind))
        .chain(plan.connect.iter().map(|e| (e, Side::Connect)));
    for (raw, side) in sides {
        let ep = Endpoint::parse(raw, side)?;
        match &mut first {
            None => {
                let (s, actual) = open_socket(ctx, kind.zmq(), &ep, side, spec.timeout(), |s| {
                    configure(s, kind, plan, spec, recv_timeout)
                })?;
                if side == Side::Bind {
                    bound.push(actual);
                }
                first = Some((s, ep));
            }
            Some((s, _)) => match side {
                Side::Bind => {
                    s.bind(raw).map_err(|e| crate::net::bind_error(&ep, e))?;
                    bound.push(
                        s.get_last_endpoint()
                            .ok()
                            .and_then(|r| r.ok())
                            .unwrap_or_else(|| raw.clone()),
                    );
                }
                Side::Connect => s.connect(raw).map_err(|e| Error::Endpoint {
                    endpoint: raw.clone(),
                    reason: format!("cannot connect ({e})"),
                })?,
            },
        }
    }
    let (sock, endpoint) = first
        .ok_or_else(|| Error::Protocol(format!("node {}: a socket with no endpoint", spec.name)))?;
    Ok(Opened {
        sock,
        endpoint,
        bound,
    })
}

fn configure(
    s: &mut zmq::Socket,
    kind: SocketType,
    plan: &SockPlan,
    spec: &NodeSpec,
    recv_timeout: Duration,
) -> Result<()> {
    let ms = recv_timeout.as_millis().min(i32::MAX as u128) as i32;
    s.set_rcvtimeo(ms)
        .map_err(zmq_err("setting ZMQ_RCVTIMEO"))?;
    apply_options(s, plan.kind, &plan.options)?;
    if kind == SocketType::Xpub && spec.subscriptions > 0 && plan.publishes(spec) {
        crate::net::set_xpub_verbose(s)?;
    }
    Ok(())
}

/// Opens every socket of a node and tells the runner it is ready.
pub(crate) fn open_all(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
    recv_timeout: Duration,
) -> Result<Vec<Opened>> {
    let opened: Vec<Opened> = spec
        .sockets
        .iter()
        .map(|p| open_one(ctx, p, spec, recv_timeout))
        .collect::<Result<_>>()?;
    let bound: Vec<String> = opened.iter().flat_map(|o| o.bound.clone()).collect();
    ctl.ready(&bound)?;
    Ok(opened)
}

/// How a passive role's wait for the next message ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// A message arrived.
    Got,
    /// The runner said stop and the queue is drained.
    Stopped,
    /// Nothing arrived for the whole timeout.
    Idle,
}

/// A passive role's receive: waits in slices of [`STOP_POLL`], looking for the runner's
/// stop between them; after the stop, drains until a slice passes with nothing.
pub(crate) struct Patience {
    limit: Duration,
    idle: Duration,
    stopping: bool,
}

impl Patience {
    pub fn new(limit: Duration) -> Self {
        Patience {
            limit,
            idle: Duration::ZERO,
            stopping: false,
        }
    }

    /// Receives into `msg`; zmq errors other than a timeout are returned.
    #[inline]
    pub fn recv(
        &mut self,
        msg: &mut RawMsg,
        s: &mut zmq::Socket,
        ctl: &mut dyn Control,
    ) -> std::result::Result<Next, zmq::Error> {
        loop {
            match msg.recv(s, 0) {
                Ok(()) => {
                    self.idle = Duration::ZERO;
                    return Ok(Next::Got);
                }
                Err(zmq::Error::EAGAIN) => {
                    if self.stopping {
                        return Ok(Next::Stopped);
                    }
                    if ctl.stop_requested() {
                        self.stopping = true;
                        continue;
                    }
                    self.idle += STOP_POLL;
                    if self.idle >= self.limit {
                        return Ok(Next::Idle);
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// How long the role had been idle (for the cut-short note).
    pub fn idle(&self) -> Duration {
        self.idle
    }
}

/// Peak resident set of this process, KiB, from /proc/self/status (VmHWM). Unlike
/// getrusage's ru_maxrss, it is not inherited across exec from the runner that spawned us.
fn peak_rss_kib() -> u64 {
    rss_kib().1
}

/// Resident memory of this process now (VmRSS) and at its peak (VmHWM), KiB.
pub(crate) fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// "thread" or "process": a child process plays one node, the runner's threads the others.
pub(crate) fn placement() -> &'static str {
    if std::env::var_os(CHILD_ENV).is_some() {
        "process"
    } else {
        "thread"
    }
}

/// CPU time of the calling thread (or process) and the process's peak RSS.
pub fn usage(role: &str, placement: &str) -> RoleUsage {
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
        role: role.to_string(),
        placement: placement.to_string(),
        cpu_user_ms: ms(ru.ru_utime),
        cpu_sys_ms: ms(ru.ru_stime),
        peak_rss_kib: peak_rss_kib(),
    }
}

/// This node's usage now.
pub(crate) fn node_usage(spec: &NodeSpec) -> RoleUsage {
    usage(&legacy_role_name(spec.role), placement())
}

/// The names results have always used for the roles (client, server, sender, receiver).
pub fn legacy_role_name(r: Role) -> String {
    match r {
        Role::Ping => "client",
        Role::Echo => "server",
        Role::Source => "sender",
        Role::Sink => "receiver",
        Role::Proxy => "proxy",
        Role::Swarm => "receiver",
    }
    .to_string()
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
