//! The swarm role: many SUB sockets in one process (a fan-out's subscribers), watched
//! together by one thread (epoll over their ZMQ_FDs; DISH sockets bound to one udp group
//! through libzmq's poller instead), each with its own loss ledger and latency figures,
//! and one latency histogram for the whole swarm.
//!
//! Its measurement ends when every subscriber has seen the end of the stream, when nothing
//! arrived for the idle time (or for the first-message timeout), or when the runner says
//! stop. It then says `sent` (its measurement is over) and keeps its sockets open until the
//! runner's stop, so that no teardown competes with the delivery to other swarms.
//!
//! In raw mode ([`SwarmSpec::raw`], the fan-out's raw-socket floor) it opens plain stream
//! sockets instead of SUB sockets ([`raw::reader`]) and measures them the same way.

use crate::zmq;

mod context;
mod poller;
pub(crate) mod raw;
mod state;
pub mod ticks;

pub use state::{ChildReport, ProcessUsage, StopReason, SubReport};
pub use ticks::TickPlan;

use super::{Control, NodeSpec, RoleReport};
use crate::clock::now_ns;
use crate::error::{zmq_err, Error, Result};
use crate::header::{Header, FLAG_WARMUP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::net::limits;
use crate::stats::{LatencyHistogram, OneWay};
use context::BigContext;
use poller::{Watch, STDIN_TOKEN};
use serde::{Deserialize, Serialize};
use state::{LeanRun, SubState};

/// Longest a swarm keeps its sockets open after its measurement, waiting for the stop.
const RELEASE_TIMEOUT_NS: u64 = 60_000_000_000;

/// What a swarm does beyond its socket (in [`NodeSpec::swarm`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SwarmSpec {
    /// Index of this swarm (process) in its cluster, from 0.
    pub process: u32,
    /// SUB sockets in this swarm.
    pub subs: u32,
    /// Longest wait for the first message, ms.
    pub first_timeout_ms: u64,
    /// After the first message, stop when nothing arrives for this long, ms.
    pub idle_ms: u64,
    /// Messages each subscriber should get, when known (otherwise taken from the end of
    /// the stream).
    pub expect: Option<u64>,
    /// Plain stream sockets (TCP or Unix, by the endpoint) instead of SUB sockets: the
    /// raw-socket floor, read from a raw publisher.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub raw: bool,
    /// The publisher's tick schedule, when its ticks are spaced: the swarm then keeps its
    /// figures per tick ([`ticks`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ticks: Option<TickPlan>,
}

/// The swarm's one-way latency: the histogram of all its subscribers, and how its stream's
/// send stamps become delays on this clock (with the stream's offset from the spec when the
/// publisher is on another host), made at the first message, when the stream id is known.
pub(crate) struct SwarmLatency {
    /// Every latency but its extremes and sum, which the subscribers keep
    /// ([`SwarmLatency::histogram`] adds them).
    hist: LatencyHistogram,
    offsets: Vec<(u32, i64)>,
    errors: Vec<(u32, u64)>,
    timeout: std::time::Duration,
    clock: Option<OneWay>,
}

impl SwarmLatency {
    /// Nothing received yet; stamps older than the swarm's idle time are impossible.
    pub(crate) fn new(spec: &NodeSpec, sw: &SwarmSpec) -> SwarmLatency {
        SwarmLatency {
            hist: LatencyHistogram::new(),
            offsets: spec.send_offsets.clone(),
            errors: spec.send_offset_error_ns.clone(),
            timeout: std::time::Duration::from_millis(sw.idle_ms),
            clock: None,
        }
    }

    /// The reading of the swarm's stream (the first stream id seen: one publisher).
    #[inline]
    fn clock(&mut self, stream: u32) -> &mut OneWay {
        let (offsets, errors, timeout) = (&self.offsets, &self.errors, self.timeout);
        self.clock
            .get_or_insert_with(|| OneWay::for_stream(offsets, errors, stream, timeout))
    }

    /// The histogram of the subscribers `subs`, with what the clock check found.
    pub(crate) fn histogram(&self, subs: &[SubState]) -> LatencyHistogram {
        let mut h = self.hist.clone();
        for (min, max, sum) in subs.iter().filter_map(SubState::extremes_and_sum) {
            h.add_extremes_and_sum(min, max, sum);
        }
        if let Some(c) = &self.clock {
            h.set_clock(c.check());
        }
        h
    }
}

/// Records one message of subscriber `i` received at `now` (`prefix`: its first bytes,
/// `len`: its size): the ledger and figures of the subscriber, and the swarm's histogram.
/// The same for SUB sockets and raw ones, so both runs are measured alike. With `ticks`,
/// a measured message counts in its tick too (as `node`). Inlined into the receive loop,
/// with [`SubState::record`]: the two calls cost a fan-out's subscribers about 15
/// instructions per delivery (1,374 -> 1,360 with both inlined, callgrind).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn deliver(
    st: &mut SubState,
    lat: &mut SwarmLatency,
    ticks: Option<&mut ticks::TickRecords>,
    prefix: &[u8],
    len: usize,
    now: u64,
    (i, process): (usize, u32),
    node: &str,
) -> Result<()> {
    let h = match Header::decode(prefix) {
        Ok(Some(h)) => h,
        Ok(None) => {
            return Err(Error::Protocol(format!(
                "subscriber {i} of process {process} got a message of {len} B without the measurement header: sub-cluster measures the messages of `zmqperf pub`"
            )))
        }
        Err(e) => return Err(Error::Protocol(e.to_string())),
    };
    let clock = lat.clock(h.stream_id);
    let latency = st.record(&h, now, clock).map_err(Error::Protocol)?;
    if let Some(ns) = latency {
        lat.hist.record_shape(ns);
    }
    if let Some(t) = ticks.filter(|_| h.flags & FLAG_WARMUP == 0) {
        t.add(h.sequence, latency, now, node);
    }
    Ok(())
}

/// Takes one message of a subscriber, `st`, received at `now`: the lean path's when it
/// takes it and `lean` is on, else the full path's ([`deliver`]), after `lean`'s stretch is
/// given to the ledger. `lean` is on again after the full path when the subscriber allows
/// (never with ticks: their figures are per message). Whether the subscriber's stream ended.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn take(
    msg: &mut RawMsg,
    now: u64,
    st: &mut SubState,
    lean: &mut Option<LeanRun>,
    lat: &mut SwarmLatency,
    ticks: Option<&mut ticks::TickRecords>,
    who: (usize, u32),
    node: &str,
) -> Result<bool> {
    if let (Some(run), Some(head)) = (lean.as_mut(), msg.head_words()) {
        if st.take_lean(run, head, now, lat) {
            return Ok(false);
        }
    }
    if let Some(run) = lean.take() {
        st.end_lean(run);
    }
    let len = msg.len();
    let lean_allowed = ticks.is_none();
    deliver(st, lat, ticks, msg.prefix(HEADER_LEN), len, now, who, node)?;
    if st.ended() {
        return Ok(true);
    }
    *lean = st.lean_run().filter(|_| lean_allowed);
    Ok(false)
}

/// Whether the measurement is over with `open` subscribers still waiting for the end (none
/// left, or nothing arrived for the idle time, or nothing at all by `first_deadline`), or
/// else how long to wait for the next wake-up, ms.
fn over(
    open: usize,
    last_activity: Option<u64>,
    first_deadline: u64,
    idle_ns: u64,
) -> std::result::Result<StopReason, i32> {
    if open == 0 {
        return Ok(StopReason::AllEnded);
    }
    let now = now_ns();
    let deadline = last_activity.map_or(first_deadline, |t| t.saturating_add(idle_ns));
    if now >= deadline {
        return Ok(if last_activity.is_some() {
            StopReason::Idle
        } else {
            StopReason::NothingArrived
        });
    }
    Err(((deadline - now) / 1_000_000).clamp(1, 100) as i32)
}

/// The swarm's report once its measurement is over: each subscriber against the stream's
/// length (given, or the longest seen).
fn child_report(
    sw: &SwarmSpec,
    states: &[SubState],
    hist: LatencyHistogram,
    stop: StopReason,
    connect_ns: u64,
    ticks: Vec<crate::model::IntervalRecord>,
) -> ChildReport {
    // The end mark is the sender's own word on how many it sent (a publisher stopped by a
    // signal sends fewer than asked, and marks its last); then the length asked for.
    // An end mark past the length asked for is garbled (a multicast stream spliced by a
    // lost packet once gave 3.7e14): not the sender's word.
    let expected = states
        .iter()
        .filter_map(|s| s.end_seq().map(|e| e + 1))
        .filter(|&n| sw.expect.is_none_or(|x| n <= x))
        .max()
        .or(sw.expect)
        .or_else(|| states.iter().filter_map(SubState::stream_length).max())
        .unwrap_or(0);
    let subscribers = states
        .iter()
        .enumerate()
        .map(|(i, s)| s.report(sw.process, i as u32, expected))
        .collect();
    ChildReport {
        process: sw.process,
        pid: std::process::id(),
        stop,
        connect_ns,
        subscribers,
        latency: hist,
        usage: ProcessUsage::of_this_process(&format!("subscribers {}", sw.process)),
        host: None,
        clock_error_ns: None,
        ticks,
    }
}

/// Says the measurement is over, then (unless the runner already said stop) waits for the
/// runner's stop with the sockets still open, so that closing them cannot slow the
/// delivery to other swarms still receiving.
fn hold_until_stop(ctl: &mut dyn Control, stop: StopReason, in_process: bool) -> Result<()> {
    ctl.sent()?;
    if stop != StopReason::ParentGone {
        let give_up = now_ns().saturating_add(RELEASE_TIMEOUT_NS);
        while !ctl.stop_requested() && now_ns() < give_up {
            if in_process {
                // Sleep on the runner's pipe, not on a timer: a swarm done early must not
                // take CPU from those still receiving.
                let mut fds = libc::pollfd {
                    fd: 0,
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one pollfd we own, for stdin.
                unsafe { libc::poll(&mut fds, 1, 100) };
            } else {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
    }
    Ok(())
}

fn open_subscribers(
    ctx: &BigContext,
    spec: &NodeSpec,
    sw: &SwarmSpec,
) -> Result<Vec<Option<zmq::Socket>>> {
    let plan = &spec.sockets[0];
    let mut socks = Vec::with_capacity(sw.subs as usize);
    for i in 0..sw.subs {
        let mut s = ctx.socket(plan.kind.zmq()).map_err(|e| {
            let hint = if e == zmq::Error::EMFILE {
                format!(
                    "; the open-file limit is too low for {} subscribers per process: raise it (`ulimit -n`) or use fewer per process",
                    sw.subs
                )
            } else {
                String::new()
            };
            Error::Zmq {
                op: format!("opening subscriber {i} of {} in process {}{hint}", sw.subs, sw.process),
                source: e,
            }
        })?;
        s.set_linger(0).map_err(zmq_err("setting ZMQ_LINGER"))?;
        crate::net::apply_options(&mut s, plan.kind, &plan.options, false)?;
        if let Some(largest) = super::open::largest_frame(spec) {
            crate::net::limit_message_size(&s, largest)?;
        }
        // A DISH's sockets each bind the one udp multicast group (the checks allow no
        // other bind in a swarm); SUB sockets connect.
        for ep in &plan.bind {
            let ep = &crate::net::iface::local_multicast(ep);
            s.bind(ep).map_err(|e| Error::Endpoint {
                endpoint: ep.clone(),
                reason: format!("subscriber {i} cannot bind ({e}); a swarm's sockets bind a udp multicast group, which each joins on its own"),
            })?;
        }
        for ep in &plan.connect {
            crate::net::enable_ipv6(&s, ep)?;
            let ep = &crate::net::iface::local_multicast(ep);
            s.connect(ep).map_err(|e| Error::Endpoint {
                endpoint: ep.clone(),
                reason: format!("cannot connect ({e}); check the host name and port"),
            })?;
        }
        socks.push(Some(s));
    }
    Ok(socks)
}

/// Raises the open-file limit for `subs` sockets, or says how to.
fn ensure_files(sw: &SwarmSpec) -> Result<()> {
    limits::ensure(&limits::FdNeed {
        fds: limits::subscriber_fds(sw.subs as u64),
        who: "each subscriber process".into(),
        what: format!("{} SUB sockets", sw.subs),
        flag: "subscribers per process".into(),
        value: sw.subs.to_string(),
        fewer: "fewer subscribers per process and more processes".into(),
    })
    .map(|_| ())
}

/// Over UDP (udp, epgm, norm) the kernel drops what a receive buffer cannot hold: its
/// count so far in this network namespace, when the swarm's sockets take UDP.
fn kernel_drops_so_far(spec: &NodeSpec) -> Option<u64> {
    let udp = spec.sockets[0].transports().any(crate::net::kernel::counts);
    udp.then(crate::net::kernel::udp_receive_errors).flatten()
}

/// Runs a swarm: opens and connects its SUB sockets, says ready, receives until the end,
/// says its measurement is over, holds its sockets until the stop, and reports.
pub(super) fn run(spec: &NodeSpec, ctl: &mut dyn Control) -> Result<RoleReport> {
    let sw = spec.swarm.as_ref().ok_or_else(|| {
        Error::Internal(format!(
            "node {}: a swarm without its swarm settings",
            spec.name
        ))
    })?;
    let in_process = super::placement() == "process";
    if in_process {
        ensure_files(sw)?;
    }
    if sw.raw {
        return raw::reader::run(spec, sw, ctl, in_process);
    }
    let t0 = now_ns();
    let n = sw.subs as usize;
    let ctx = BigContext::new((sw.subs as i32).saturating_add(64))?;
    let mut socks = open_subscribers(&ctx, spec, sw)?;
    let connect_ns = now_ns() - t0;
    let udp_before = kernel_drops_so_far(spec);
    ctl.ready(&[])?;
    ctl.wait_start(std::time::Duration::from_millis(sw.first_timeout_ms))?;
    let spec = &*spec.started(ctl.send_offsets());

    let mut states = vec![SubState::default(); n];
    let mut lat = SwarmLatency::new(spec, sw);
    let mut watch = Watch::over(&socks, spec.sockets[0].kind.is_draft(), in_process)?;
    // Every socket is looked at once first: messages may have arrived before the watch.
    let mut woken: Vec<u64> = (0..n as u64).collect();
    let mut open = n;
    let mut msg = RawMsg::new();
    let first_deadline = now_ns().saturating_add(sw.first_timeout_ms.saturating_mul(1_000_000));
    let idle_ns = sw.idle_ms.saturating_mul(1_000_000);
    let mut last_activity: Option<u64> = None;
    let mut ticks = sw.ticks.map(|p| ticks::TickRecords::new(p, sw.subs));
    let stop = loop {
        for &token in &woken {
            if token == STDIN_TOKEN {
                continue;
            }
            let i = token as usize;
            let Some(sock) = socks.get_mut(i).and_then(|s| s.as_mut()) else {
                continue;
            };
            let st = &mut states[i];
            let mut lean = st.lean_run().filter(|_| ticks.is_none());
            let mut ended = false;
            loop {
                match msg.recv(sock, zmq::DONTWAIT) {
                    Ok(()) => {}
                    Err(zmq::Error::EAGAIN) => break,
                    Err(zmq::Error::EINTR) => continue,
                    Err(e) => return Err(zmq_err("receiving")(e)),
                }
                let now = now_ns();
                last_activity = Some(now);
                let who = (i, sw.process);
                if take(
                    &mut msg,
                    now,
                    st,
                    &mut lean,
                    &mut lat,
                    ticks.as_mut(),
                    who,
                    &spec.name,
                )? {
                    ended = true;
                    break;
                }
            }
            if let Some(run) = lean {
                st.end_lean(run);
            }
            if ended {
                // Done; the socket stays open until the runner's stop.
                watch.remove(i, sock);
                open -= 1;
            }
        }
        // Asked on every wake-up (a wait lasts at most 100 ms): the runner's pipe is read by
        // the control's own thread, so a wake-up on it may come before the stop is parsed,
        // and no second wake-up follows once that thread has read the line.
        if ctl.stop_requested() {
            break StopReason::ParentGone;
        }
        if let Some(t) = ticks.as_mut() {
            t.close_idle(now_ns(), idle_ns, &spec.name);
        }
        let wait_ms = match over(open, last_activity, first_deadline, idle_ns) {
            Ok(stop) => break stop,
            Err(ms) => ms,
        };
        watch.wait(wait_ms, &mut woken)?;
    };
    let hist = lat.histogram(&states);
    let ticks = ticks.map_or_else(Vec::new, |t| t.finish(now_ns(), &spec.name));
    let report = child_report(sw, &states, hist.clone(), stop, connect_ns, ticks);
    hold_until_stop(ctl, stop, in_process)?;
    // The watch goes first: libzmq's poller detaches from its sockets when destroyed.
    drop(watch);
    // Closing tells the publisher the subscribers are done.
    drop(socks);
    drop(ctx);
    let udp_drops = udp_before
        .zip(crate::net::kernel::udp_receive_errors())
        .map(|(b, a)| a.saturating_sub(b));
    Ok(RoleReport {
        latency: Some(hist),
        usage: Some(super::node_usage(spec)),
        swarm: Some(Box::new(report)),
        udp_drops,
        ..Default::default()
    })
}
