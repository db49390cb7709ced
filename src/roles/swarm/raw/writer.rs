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
use super::RawAddr;
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
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

fn io_err(op: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Io {
        op: op.to_string(),
        source: e,
    }
}

/// A listening plain socket. A Unix socket's file is removed when it closes.
enum Listener {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener, PathBuf),
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Listener {
    /// Binds `endpoint` (tcp:// or ipc://, `*` for a free port or a fresh path) with a
    /// backlog of `backlog` (the kernel caps it at somaxconn); returns the listener and the
    /// endpoint the subscribers connect to.
    fn bind(endpoint: &str, backlog: i32) -> Result<(Listener, String)> {
        let in_use = |e: std::io::Error| {
            if e.kind() == std::io::ErrorKind::AddrInUse {
                crate::net::address_in_use(endpoint)
            } else {
                Error::Io {
                    op: format!("listening on {endpoint} (raw floor)"),
                    source: e,
                }
            }
        };
        let (l, bound) = match RawAddr::parse(endpoint)? {
            RawAddr::Tcp(a) => {
                let l = std::net::TcpListener::bind(&a).map_err(in_use)?;
                let bound = format!("tcp://{}", l.local_addr().map_err(in_use)?);
                (Listener::Tcp(l), crate::net::connect_endpoint(&bound))
            }
            RawAddr::Unix(path) => {
                let path = path.unwrap_or_else(|| {
                    std::env::temp_dir().join(format!(
                        "zmqperf-raw-{}-{}.sock",
                        std::process::id(),
                        now_ns()
                    ))
                });
                // A socket file left by an earlier run would refuse the bind.
                if std::fs::symlink_metadata(&path)
                    .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()))
                {
                    let _ = std::fs::remove_file(&path);
                }
                let l = std::os::unix::net::UnixListener::bind(&path).map_err(in_use)?;
                let bound = format!("ipc://{}", path.display());
                (Listener::Unix(l, path), bound)
            }
        };
        // std listens with a backlog of 128; thousands of subscribers connect at once.
        // SAFETY: listen on a descriptor we own; a second listen only changes the backlog.
        if unsafe { libc::listen(l.fd(), backlog) } != 0 {
            return Err(in_use(std::io::Error::last_os_error()));
        }
        match &l {
            Listener::Tcp(t) => t.set_nonblocking(true),
            Listener::Unix(u, _) => u.set_nonblocking(true),
        }
        .map_err(in_use)?;
        Ok((l, bound))
    }

    fn fd(&self) -> RawFd {
        match self {
            Listener::Tcp(l) => l.as_raw_fd(),
            Listener::Unix(l, _) => l.as_raw_fd(),
        }
    }

    /// One waiting connection (blocking, Nagle off for TCP), or WouldBlock.
    fn accept(&self) -> std::io::Result<OwnedFd> {
        match self {
            Listener::Tcp(l) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                s.set_nodelay(true)?;
                Ok(s.into())
            }
            Listener::Unix(l, _) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                Ok(s.into())
            }
        }
    }
}

/// Accepts the subscribers' connections on a thread of its own from the moment the
/// listener is bound (as libzmq's io thread does): the subscriber processes connect before
/// the start, and a backlog that filled up would hold them back. It stops at `want`
/// connections, or when told to (dropped).
struct Acceptor {
    stop: Arc<AtomicBool>,
    want: u64,
    handle: Option<JoinHandle<std::io::Result<Vec<OwnedFd>>>>,
}

impl Acceptor {
    fn spawn(listener: Listener, want: u64) -> Acceptor {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut conns = Vec::with_capacity(want as usize);
            while (conns.len() as u64) < want && !s.load(Ordering::Relaxed) {
                let mut p = libc::pollfd {
                    fd: listener.fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one pollfd we own; 100 ms at most, so a stop is seen soon.
                unsafe { libc::poll(&mut p, 1, 100) };
                while (conns.len() as u64) < want {
                    match listener.accept() {
                        Ok(c) => conns.push(c),
                        Err(e) => match e.kind() {
                            std::io::ErrorKind::WouldBlock => break,
                            std::io::ErrorKind::Interrupted
                            | std::io::ErrorKind::ConnectionAborted => {}
                            _ => return Err(e),
                        },
                    }
                }
            }
            // The listener closes here: nobody else is expected.
            drop(listener);
            Ok(conns)
        });
        Acceptor {
            stop,
            want,
            handle: Some(handle),
        }
    }

    /// Waits up to `timeout` for every connection; Err holds how many came.
    fn wait(mut self, timeout: Duration) -> Result<std::result::Result<Vec<OwnedFd>, u64>> {
        let deadline = now_ns().saturating_add(dur_ns(timeout));
        let h = self.handle.take().expect("joined once");
        while !h.is_finished() && now_ns() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.stop.store(true, Ordering::Relaxed);
        let conns = h
            .join()
            .map_err(|_| Error::Protocol("the raw publisher's accepting thread panicked".into()))?
            .map_err(io_err("accepting raw subscriber connections"))?;
        let n = conns.len() as u64;
        Ok(if n == self.want { Ok(conns) } else { Err(n) })
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

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

/// The raw source on ticks: listens on the node's first bind endpoint, says ready, takes
/// `spec.subscriptions` connections (the swarms' subscribers), waits for the start,
/// publishes, says sent after its last message, and waits for the subscribers to close.
pub(crate) fn run_node(
    spec: &NodeSpec,
    ticks: &Ticks,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let plan = &spec.sockets[0];
    let raw = plan.bind.first().ok_or_else(|| {
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
    let timeout = spec.timeout();
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
    let subscribers = conns.len() as u64;
    let join_wait_ns = now_ns() - t0;
    let total = ticks.per_tick.saturating_mul(ticks.passes);
    let mut out = Fanout {
        open: vec![true; conns.len()],
        conns,
        endpoint: bound.clone(),
        timeout,
        expected: total,
        gone: 0,
    };

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
    let mut warm_seq = 0u64;
    for tick in 0..ticks.warmup {
        if interval_ns > 0 {
            idle_until(warm_start.saturating_add(tick.saturating_mul(interval_ns)));
        }
        for _ in 0..ticks.per_tick {
            stamp(&mut frame, FLAG_WARMUP, warm_seq, 0);
            out.write_all(&frame, 0)?;
            warm_seq += 1;
        }
    }
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
mod tests {
    use super::*;

    #[test]
    fn a_frame_goes_whole_and_a_closed_peer_is_gone() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let a: OwnedFd = a.into();
        let f = frame_buffer(100);
        assert!(matches!(send_frame(a.as_raw_fd(), &f), Ok(Wrote::All)));
        let mut got = vec![0u8; 104];
        std::io::Read::read_exact(&mut &b, &mut got).unwrap();
        assert_eq!(got, f);
        drop(b);
        assert!(matches!(send_frame(a.as_raw_fd(), &f), Ok(Wrote::Gone)));
    }

    #[test]
    fn a_full_socket_times_out() {
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        let a: OwnedFd = a.into();
        set_send_timeout(&a, Duration::from_millis(20)).unwrap();
        let big = vec![0u8; 1 << 16];
        let e = loop {
            match send_frame(a.as_raw_fd(), &big) {
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
    }

    #[test]
    fn the_acceptor_takes_every_connection_or_says_how_many() {
        let (l, bound) = Listener::bind("tcp://127.0.0.1:*", 128).unwrap();
        let addr = RawAddr::parse(&bound).unwrap();
        let acc = Acceptor::spawn(l, 3);
        let c: Vec<OwnedFd> = (0..3)
            .map(|_| addr.connect(Duration::from_secs(5)).unwrap())
            .collect();
        assert_eq!(acc.wait(Duration::from_secs(10)).unwrap().unwrap().len(), 3);
        drop(c);
        let (l, bound) = Listener::bind("ipc://*", 128).unwrap();
        let addr = RawAddr::parse(&bound).unwrap();
        let acc = Acceptor::spawn(l, 2);
        let _one = addr.connect(Duration::from_secs(5)).unwrap();
        assert_eq!(
            acc.wait(Duration::from_millis(300)).unwrap().unwrap_err(),
            1
        );
        // The socket file went with the listener.
        let RawAddr::Unix(Some(p)) = addr else {
            panic!("a path")
        };
        assert!(!p.exists());
    }
}
