//! The swarm's raw mode: `subs` plain stream sockets connected to a raw publisher, all read
//! by this one thread through one epoll set (level-triggered), each message cut out by its
//! length prefix and recorded exactly as a SUB socket's message is (same header, ledger,
//! per-subscriber figures and histogram), so the two runs' figures compare.

use super::super::poller::Poller;
use super::super::{
    child_report, deliver, hold_until_stop, over, StopReason, SubState, SwarmLatency, SwarmSpec,
    STDIN_TOKEN,
};
use super::frame::Deframer;
use super::{io_err, set_nonblocking, RawAddr};
use crate::clock::now_ns;
use crate::error::{Error, Result};
use crate::header::HEADER_LEN;
use crate::roles::{Control, NodeSpec, RoleReport};
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::Duration;

/// Bytes one `read` may take: a full buffer means more may be waiting, so it reads again;
/// less means the socket is drained and the next wake-up comes from epoll.
const READ_BUF: usize = 64 * 1024;

/// Connects the swarm's `subs` plain sockets to `endpoint`, in order.
fn connect_all(endpoint: &str, sw: &SwarmSpec) -> Result<Vec<OwnedFd>> {
    let addr = RawAddr::parse(endpoint)?;
    let timeout = Duration::from_millis(sw.first_timeout_ms.max(1));
    let n = sw.subs as usize;
    let mut conns = Vec::with_capacity(n);
    for i in 0..n {
        let fd = addr.connect(timeout).map_err(|e| {
            let hint = if e.raw_os_error() == Some(libc::EMFILE) {
                format!(
                    "; the open-file limit is too low for {n} subscribers per process: raise it (`ulimit -n`) or use fewer per process"
                )
            } else {
                String::new()
            };
            Error::Endpoint {
                endpoint: endpoint.to_string(),
                reason: format!(
                    "raw subscriber {i} of {n} in process {} cannot connect ({e}){hint}",
                    sw.process
                ),
            }
        })?;
        set_nonblocking(&fd).map_err(io_err("making a raw subscriber socket non-blocking"))?;
        conns.push(fd);
    }
    Ok(conns)
}

/// Connects the node's subscribers to its one endpoint; the connections and how long they
/// took.
fn connect(spec: &NodeSpec, sw: &SwarmSpec) -> Result<(Vec<OwnedFd>, u64)> {
    let endpoint = spec
        .sockets
        .first()
        .and_then(|p| p.connect.first())
        .ok_or_else(|| {
            Error::Internal(format!(
                "node {}: a raw swarm without an endpoint to connect to",
                spec.name
            ))
        })?
        .clone();
    let t0 = now_ns();
    let conns = connect_all(&endpoint, sw)?;
    Ok((conns, now_ns() - t0))
}

/// An epoll set over the connections (token: the index), and the runner's pipe when the
/// swarm is a process of its own (a stop, or its end, wakes the swarm).
fn watch(conns: &[OwnedFd], in_process: bool) -> Result<Poller> {
    let poller_err = io_err("watching the raw subscriber sockets (epoll)");
    let poller = Poller::new(conns.len() + 1).map_err(&poller_err)?;
    for (i, c) in conns.iter().enumerate() {
        poller.add(c.as_raw_fd(), i as u64).map_err(&poller_err)?;
    }
    if in_process {
        let _ = poller.add(0, STDIN_TOKEN);
    }
    Ok(poller)
}

/// Runs a raw swarm: connects, says ready, reads until every subscriber has the end (or
/// the idle or first-message time passes, or the runner says stop), says its measurement
/// is over, holds its sockets until the stop, and reports.
pub(in crate::roles::swarm) fn run(
    spec: &NodeSpec,
    sw: &SwarmSpec,
    ctl: &mut dyn Control,
    in_process: bool,
) -> Result<RoleReport> {
    let (conns, connect_ns) = connect(spec, sw)?;
    ctl.ready(&[])?;
    ctl.wait_start(Duration::from_millis(sw.first_timeout_ms))?;
    let spec = &*spec.started(ctl.send_offsets());

    let n = conns.len();
    let mut states = vec![SubState::default(); n];
    let mut lat = SwarmLatency::new(spec, sw);
    let poller_err = io_err("watching the raw subscriber sockets (epoll)");
    let mut poller = watch(&conns, in_process)?;
    let mut deframers: Vec<Deframer> = (0..n).map(|_| Deframer::default()).collect();
    let mut watching = vec![true; n];
    let mut open = n;
    // Connections the publisher closed before their end of stream (it died or gave up).
    let mut cut = 0usize;
    let mut buf = vec![0u8; READ_BUF];
    let mut woken: Vec<u64> = Vec::new();
    let first_deadline = now_ns().saturating_add(sw.first_timeout_ms.saturating_mul(1_000_000));
    let idle_ns = sw.idle_ms.saturating_mul(1_000_000);
    let mut last_activity: Option<u64> = None;
    // Level-triggered epoll: bytes that arrived before the watch are reported by the first
    // wait, so no socket needs a look of its own first.
    let stop = loop {
        let wait_ms = match over(open, last_activity, first_deadline, idle_ns) {
            Ok(stop) => break stop,
            Err(ms) => ms,
        };
        poller.wait(wait_ms, &mut woken).map_err(&poller_err)?;
        for &token in &woken {
            if token == STDIN_TOKEN {
                continue;
            }
            let i = token as usize;
            if !watching.get(i).copied().unwrap_or(false) {
                continue;
            }
            let fd = conns[i].as_raw_fd();
            let closed = loop {
                // SAFETY: reads at most buf.len() bytes into the buffer we own.
                let got = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
                if got < 0 {
                    let e = std::io::Error::last_os_error();
                    match e.kind() {
                        std::io::ErrorKind::WouldBlock => break false,
                        std::io::ErrorKind::Interrupted => continue,
                        // A reset: the publisher is gone, as with an end of file.
                        _ => break true,
                    }
                }
                if got == 0 {
                    break true;
                }
                // One clock read per read call: every message in it had arrived by then.
                let now = now_ns();
                let got = got as usize;
                let st = &mut states[i];
                let process = sw.process;
                deframers[i].feed(&buf[..got], &mut |m| {
                    deliver(
                        st,
                        &mut lat,
                        None,
                        &m[..m.len().min(HEADER_LEN)],
                        m.len(),
                        now,
                        (i, process),
                        "",
                    )
                })?;
                last_activity = Some(now);
                if got < buf.len() {
                    break false;
                }
            };
            let ended = states[i].ended();
            if closed || ended {
                // Done (the socket stays open until the runner's stop), or cut off.
                poller.remove(fd);
                watching[i] = false;
                open -= 1;
                if !ended {
                    cut += 1;
                }
            }
        }
        // On every wake-up, as the swarm does (a wake-up on the pipe may come before the
        // control's thread has parsed the stop).
        if ctl.stop_requested() {
            break StopReason::ParentGone;
        }
    };
    // Every connection ended, but some without the end of stream: it never came to them.
    let stop = if stop == StopReason::AllEnded && cut > 0 {
        StopReason::Idle
    } else {
        stop
    };
    let hist = lat.histogram(&states);
    let report = child_report(sw, &states, hist.clone(), stop, connect_ns, Vec::new());
    hold_until_stop(ctl, stop, in_process)?;
    // Closing tells the raw publisher the subscribers are done.
    drop(poller);
    drop(conns);
    Ok(RoleReport {
        latency: Some(hist),
        usage: Some(crate::roles::node_usage(spec)),
        swarm: Some(Box::new(report)),
        ..Default::default()
    })
}
