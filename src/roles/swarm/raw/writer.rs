//! The raw publisher: a source on ticks that listens on a plain TCP or Unix socket, accepts
//! one connection per subscriber, and on each tick writes every message (the measurement
//! header stamped just before the first write, as the XPUB publisher stamps it before its
//! send call) to every connection in turn, with the same schedule, warm-up, size and end
//! flag as the libzmq publisher.
//!
//! Writes are plain blocking `send` calls, one per connection and message, with
//! `SO_SNDTIMEO` as the bound. A non-blocking socket with an epoll set for back-pressure
//! would add system calls (and a wait per full socket) only when a subscriber falls behind
//! by a whole socket buffer, which a fan-out of small messages at these rates does not
//! reach; a blocking write that waits for a slow subscriber is also what the XPUB does with
//! ZMQ_XPUB_NODROP (wait rather than drop). One system call per delivery is the least any
//! publisher over stream sockets pays, which is what a floor should show.

use super::frame::{frame_buffer, PREFIX_LEN};
use super::io_err;
use super::listen::{Acceptor, Listener};
use crate::clock::now_ns;
use crate::endpoint::{Endpoint, Side};
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_END, FLAG_TIMESTAMP, FLAG_WARMUP};
use crate::roles::publisher::{dur_ns, PubResult};
use crate::roles::swarm::poller::Poller;
use crate::roles::swarm::ProcessUsage;
use crate::roles::{Control, NodeSpec, RoleReport};
use crate::stats::{LatencyHistogram, Throughput};
use crate::topology::Ticks;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// How a write to one subscriber went.
enum Wrote {
    /// Every byte is in the socket.
    All,
    /// The subscriber has closed its end (it died, or was stopped).
    Gone,
}

/// Writes the whole frame to `fd`: a blocking `send` (MSG_NOSIGNAL, so a closed peer is an
/// error, not a SIGPIPE), again for what a short write left. An error of kind WouldBlock
/// is the send timeout passing.
fn send_frame(fd: RawFd, frame: &[u8]) -> std::io::Result<Wrote> {
    let mut at = 0;
    while at < frame.len() {
        let rest = &frame[at..];
        // SAFETY: sends from a buffer we own, at most its length.
        let n = unsafe { libc::send(fd, rest.as_ptr().cast(), rest.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EPIPE) | Some(libc::ECONNRESET) => return Ok(Wrote::Gone),
                _ => return Err(e),
            }
        }
        at += n as usize;
    }
    Ok(Wrote::All)
}

/// Sets the send timeout of a connection.
fn set_send_timeout(fd: &OwnedFd, timeout: Duration) -> std::io::Result<()> {
    let tv = libc::timeval {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_usec: timeout.subsec_micros() as libc::suseconds_t,
    };
    // SAFETY: setsockopt with a timeval we own and its size.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDTIMEO,
            (&tv as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Lets time pass until `due_ns`: sleeps, then waits the last stretch precisely.
fn idle_until(due_ns: u64) {
    loop {
        let now = now_ns();
        if now >= due_ns {
            return;
        }
        let left = due_ns - now;
        if left <= 2_000_000 {
            crate::roles::wait_until(due_ns);
            return;
        }
        std::thread::sleep(Duration::from_nanos((left - 1_000_000).min(50_000_000)));
    }
}

/// The subscribers' connections and what became of them.
struct Fanout {
    conns: Vec<OwnedFd>,
    open: Vec<bool>,
    endpoint: String,
    timeout: Duration,
    expected: u64,
    /// Connections found closed while writing.
    gone: u64,
}

impl Fanout {
    /// Listens on `endpoint`, says ready, waits for the start, and takes the `want`
    /// subscribers' connections (a shortfall is an error); the connections, ready to write
    /// `expected` messages, and how long the wait after the start took.
    fn accept(
        endpoint: &Endpoint,
        want: u64,
        timeout: Duration,
        expected: u64,
        ctl: &mut dyn Control,
    ) -> Result<(Fanout, u64)> {
        let backlog = want.clamp(128, 65_535) as i32;
        let (listener, bound) = Listener::bind(endpoint.as_str(), backlog)?;
        let acceptor = Acceptor::spawn(listener, want);
        ctl.ready(std::slice::from_ref(&bound))?;
        ctl.wait_start(timeout)?;
        let t0 = now_ns();
        let conns = match acceptor.wait(timeout)? {
            Ok(c) => c,
            Err(k) => {
                return Err(Error::Shortfall(format!(
                    "only {k} of {want} raw subscribers connected to {bound} within {}: the rest \
                     never connected. Check that the open-file limits allow the connections, and \
                     raise --timeout on a loaded machine, or ask for fewer subscribers",
                    crate::error::fmt_duration(timeout)
                )))
            }
        };
        for c in &conns {
            set_send_timeout(c, timeout).map_err(io_err("setting SO_SNDTIMEO"))?;
        }
        let join_wait_ns = now_ns() - t0;
        let out = Fanout {
            open: vec![true; conns.len()],
            conns,
            endpoint: bound,
            timeout,
            expected,
            gone: 0,
        };
        Ok((out, join_wait_ns))
    }

    /// Writes the warm-up ticks, on the schedule from `warm_start`, flagged WARMUP.
    fn warm_up(
        &mut self,
        frame: &mut [u8],
        stamp: &impl Fn(&mut [u8], u8, u64, u64),
        ticks: &Ticks,
        warm_start: u64,
        interval_ns: u64,
    ) -> Result<()> {
        let mut warm_seq = 0u64;
        for tick in 0..ticks.warmup {
            if interval_ns > 0 {
                idle_until(warm_start.saturating_add(tick.saturating_mul(interval_ns)));
            }
            for _ in 0..ticks.per_tick {
                stamp(frame, FLAG_WARMUP, warm_seq, 0);
                self.write_all(frame, 0)?;
                warm_seq += 1;
            }
        }
        Ok(())
    }

    /// Writes one frame to every open connection in turn.
    fn write_all(&mut self, frame: &[u8], seq: u64) -> Result<()> {
        for (c, open) in self.conns.iter().zip(self.open.iter_mut()) {
            if !*open {
                continue;
            }
            match send_frame(c.as_raw_fd(), frame) {
                Ok(Wrote::All) => {}
                Ok(Wrote::Gone) => {
                    *open = false;
                    self.gone += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    return Err(Error::PeerStopped {
                        endpoint: self.endpoint.clone(),
                        done: seq,
                        expected: self.expected,
                        unit: "messages".into(),
                        timeout: self.timeout,
                        detail: " (writing blocked: a raw subscriber's socket stayed full, and \
                                 the publisher waits for it rather than drop)"
                            .into(),
                    })
                }
                Err(e) => return Err(io_err("writing to a raw subscriber")(e)),
            }
        }
        Ok(())
    }

    /// After the last message: waits up to `linger` for every subscriber to close its
    /// end (read returns 0), so nothing is cut off in a socket buffer. Returns how many
    /// closed in that time.
    fn wait_for_leaving(&mut self, linger: Duration) -> Result<u64> {
        let poller_err = io_err("watching the raw connections close (epoll)");
        let mut poller = Poller::new(1024).map_err(&poller_err)?;
        for (i, c) in self.conns.iter().enumerate() {
            if self.open[i] {
                poller.add(c.as_raw_fd(), i as u64).map_err(&poller_err)?;
            }
        }
        let until = now_ns().saturating_add(dur_ns(linger));
        let mut left = 0u64;
        let mut ready = Vec::new();
        let mut scratch = [0u8; 256];
        while self.open.iter().any(|o| *o) {
            let now = now_ns();
            if now >= until {
                break;
            }
            let ms = ((until - now) / 1_000_000).clamp(1, 100) as i32;
            poller.wait(ms, &mut ready).map_err(&poller_err)?;
            for &t in &ready {
                let i = t as usize;
                let fd = self.conns[i].as_raw_fd();
                // SAFETY: reads at most scratch.len() bytes into the buffer we own.
                let n = unsafe {
                    libc::recv(
                        fd,
                        scratch.as_mut_ptr().cast(),
                        scratch.len(),
                        libc::MSG_DONTWAIT,
                    )
                };
                let closed = n == 0
                    || (n < 0 && {
                        let e = std::io::Error::last_os_error();
                        !matches!(
                            e.kind(),
                            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                        )
                    });
                if closed && self.open[i] {
                    poller.remove(fd);
                    self.open[i] = false;
                    left += 1;
                }
            }
        }
        Ok(left)
    }
}

/// The endpoint a raw source on ticks binds, and how many subscribers it waits for.
fn raw_endpoint(spec: &NodeSpec) -> Result<(Endpoint, u64)> {
    let raw = spec.sockets[0].bind.first().ok_or_else(|| {
        Error::invalid(
            &format!("node {}: socket.bind", spec.name),
            "",
            "a raw source on ticks binds its endpoint (the subscribers connect to it)",
        )
    })?;
    let endpoint = Endpoint::parse(raw, Side::Bind)?;
    let want = u64::from(spec.subscriptions);
    if want == 0 {
        return Err(Error::invalid(
            &format!("node {}: ticks.raw", spec.name),
            "true",
            "a raw publisher needs the swarms that read it connected to it",
        ));
    }
    Ok((endpoint, want))
}

/// The raw source on ticks: listens on the node's first bind endpoint, says ready, takes
/// `spec.subscriptions` connections (the swarms' subscribers), waits for the start,
/// publishes, says sent after its last message, and waits for the subscribers to close.
pub(crate) fn run_node(
    spec: &NodeSpec,
    ticks: &Ticks,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let (endpoint, want) = raw_endpoint(spec)?;
    let total = ticks.per_tick.saturating_mul(ticks.passes);
    let (mut out, join_wait_ns) = Fanout::accept(&endpoint, want, spec.timeout(), total, ctl)?;
    let subscribers = out.conns.len() as u64;
    let bound = out.endpoint.clone();

    let interval_ns = (ticks.interval_ms.max(0.0) * 1e6) as u64;
    let mut delay = (interval_ns > 0).then(LatencyHistogram::new);
    let mut frame = frame_buffer(spec.size);
    let stamp = |frame: &mut [u8], flags: u8, sequence: u64, send_ns: u64| {
        Header {
            flags,
            stream_id: spec.stream_id,
            sequence,
            send_ns,
        }
        .encode(&mut frame[PREFIX_LEN..]);
    };
    let warm_start = now_ns();
    out.warm_up(&mut frame, &stamp, ticks, warm_start, interval_ns)?;
    let last = total.saturating_sub(1);
    let start = if ticks.warmup > 0 && interval_ns > 0 {
        warm_start.saturating_add(ticks.warmup.saturating_mul(interval_ns))
    } else {
        now_ns()
    };
    let mut seq = 0u64;
    let mut first_left_tick = None;
    for tick in 0..ticks.passes {
        let due = start.saturating_add(tick.saturating_mul(interval_ns));
        if interval_ns > 0 {
            idle_until(due);
        }
        if first_left_tick.is_none() && out.gone > 0 {
            first_left_tick = Some(tick);
        }
        for _ in 0..ticks.per_tick {
            let send_ns = now_ns();
            let flags = if seq == last {
                FLAG_TIMESTAMP | FLAG_END
            } else {
                FLAG_TIMESTAMP
            };
            stamp(&mut frame, flags, seq, send_ns);
            out.write_all(&frame, seq)?;
            if let Some(h) = delay.as_mut() {
                h.record(send_ns.saturating_sub(due));
            }
            seq += 1;
        }
    }
    let end = now_ns();
    let left_early = out.gone;
    ctl.sent()?;
    let left_after = out.wait_for_leaving(Duration::from_millis(ticks.linger_ms))?;
    let r = PubResult {
        endpoint: bound,
        transport: endpoint.transport(),
        interval_ms: ticks.interval_ms,
        per_tick: ticks.per_tick,
        passes: ticks.passes,
        warmup_ticks: ticks.warmup,
        message_size: spec.size,
        messages: total,
        subscribers,
        join_wait_ns,
        send: Throughput {
            messages: total,
            payload_bytes: total.saturating_mul(spec.size as u64),
            start_ns: start,
            end_ns: end,
        },
        send_delay: delay.map(|h| h.summary()),
        left: left_early + left_after,
        left_early,
        first_left_tick,
        all_left: !out.open.iter().any(|o| *o),
        interrupted: None,
        usage: ProcessUsage::of_this_process("publisher"),
    };
    Ok(RoleReport {
        send: Some(r.send),
        header: true,
        usage: Some(crate::roles::node_usage(spec)),
        publisher: Some(Box::new(r)),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests;
