//! One subscriber process of a sub-cluster (the hidden `__subs` command): many SUB sockets
//! in one context, watched together by one thread (epoll over their ZMQ_FDs), each with its
//! own loss ledger and latency figures, and one latency histogram for the whole process.
//!
//! The process speaks a line protocol on stdout: `READY` once every socket is connected,
//! then `REPORT <json>` or `ERROR <message>`. Its measurement ends when every subscriber has
//! seen the end of the stream, when nothing arrived for the idle time, or when its parent is
//! gone; it keeps its sockets open until its parent releases it (closes its stdin), so that
//! no teardown competes with the delivery to other processes' subscribers.

use super::poller::Poller;
use super::ProcessUsage;
use crate::clock::now_ns;
use crate::error::{zmq_err, Error, Result};
use crate::header::{Header, FLAG_END, FLAG_WARMUP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::stats::{LatencyHistogram, LossSummary, StreamLedger};
use serde::{Deserialize, Serialize};
use std::ffi::c_void;
use std::io::Write;

/// The poller token of stdin (the parent's pipe), beyond any socket index.
const STDIN_TOKEN: u64 = u64::MAX;

/// What one subscriber process is asked to do; sent to the child as JSON.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ChildSpec {
    /// Endpoint every SUB socket connects to.
    pub endpoint: String,
    /// Index of this process in the cluster, from 0.
    pub process: u32,
    /// SUB sockets in this process.
    pub subs: u32,
    /// Longest wait for the first message, ms.
    pub first_timeout_ms: u64,
    /// After the first message, stop when nothing arrives for this long, ms.
    pub idle_ms: u64,
    /// Messages each subscriber should get, when known (otherwise taken from the end of
    /// the stream).
    pub expect: Option<u64>,
    /// Receive high-water mark per socket (None: libzmq's 1000).
    pub hwm: Option<i32>,
    /// Stop when stdin closes (the parent is gone).
    pub watch_stdin: bool,
}

/// What one subscriber received.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SubReport {
    /// Index of its process, from 0.
    pub process: u32,
    /// Index of the subscriber in its process, from 0.
    pub sub: u32,
    /// Expected, received, lost (and where), duplicated and reordered messages.
    pub loss: LossSummary,
    /// Whether the end-of-stream message arrived.
    pub ended: bool,
    /// Warm-up messages received (not counted anywhere else).
    pub warmup: u64,
    /// Latency samples (messages with a send time).
    pub latency_count: u64,
    /// Smallest latency, ns.
    pub latency_min_ns: u64,
    /// Largest latency, ns.
    pub latency_max_ns: u64,
    /// Mean latency, ns.
    pub latency_mean_ns: f64,
    /// Delivered rate: messages received / (receipt of the last - send of the first), msg/s.
    pub delivered_per_sec: f64,
}

/// Why a subscriber process stopped.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Every subscriber saw the end of the stream.
    AllEnded,
    /// Nothing arrived for the idle time after the first message.
    Idle,
    /// No message arrived within the first-message timeout.
    NothingArrived,
    /// The parent process went away.
    ParentGone,
}

/// What one subscriber process reports to its parent.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChildReport {
    /// Index of the process in the cluster.
    pub process: u32,
    /// Its process id.
    pub pid: u32,
    /// Why it stopped.
    pub stop: StopReason,
    /// Time to open and connect all its sockets, ns.
    pub connect_ns: u64,
    /// Every subscriber's figures.
    pub subscribers: Vec<SubReport>,
    /// Latency of every message received by any of its subscribers.
    pub latency: LatencyHistogram,
    /// CPU time and peak RSS.
    pub usage: ProcessUsage,
}

/// Running figures of one subscriber.
#[derive(Debug, Clone, Default)]
pub(crate) struct SubState {
    ledger: StreamLedger,
    stream: Option<u32>,
    count: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    first_send_ns: Option<u64>,
    last_recv_ns: u64,
    end_seq: Option<u64>,
    warmup: u64,
}

impl SubState {
    /// Records one message received at `now`; returns its latency (if stamped) and whether
    /// it ended the stream. A message of another stream is a protocol error.
    #[inline]
    pub(crate) fn record(
        &mut self,
        h: &Header,
        now: u64,
    ) -> std::result::Result<Option<u64>, String> {
        match self.stream {
            None => self.stream = Some(h.stream_id),
            Some(s) if s != h.stream_id => {
                return Err(format!(
                    "messages of two streams arrived (ids {s} and {}): two publishers on one endpoint, or a publisher restarted while the subscribers ran",
                    h.stream_id
                ))
            }
            Some(_) => {}
        }
        if h.flags & FLAG_WARMUP != 0 {
            self.warmup += 1;
            return Ok(None);
        }
        self.ledger.record(h.sequence);
        self.last_recv_ns = now;
        let mut latency = None;
        if h.has_timestamp() {
            let ns = now.saturating_sub(h.send_ns);
            if self.count == 0 {
                self.min_ns = ns;
            }
            self.count += 1;
            self.sum_ns += ns as u128;
            self.min_ns = self.min_ns.min(ns);
            self.max_ns = self.max_ns.max(ns);
            self.first_send_ns.get_or_insert(h.send_ns);
            latency = Some(ns);
        }
        if h.flags & FLAG_END != 0 {
            self.end_seq = Some(h.sequence);
        }
        Ok(latency)
    }

    /// Whether the end-of-stream message arrived.
    pub(crate) fn ended(&self) -> bool {
        self.end_seq.is_some()
    }

    /// How many messages the stream had, as far as this subscriber can tell.
    fn stream_length(&self) -> Option<u64> {
        if let Some(s) = self.end_seq {
            return Some(s + 1);
        }
        let l = self.ledger.summary(None);
        (l.received > 0).then_some(l.expected)
    }

    /// The subscriber's report, with `expected` messages due.
    pub(crate) fn report(&self, process: u32, sub: u32, expected: u64) -> SubReport {
        // An empty ledger reports the whole stream as one hole at the start.
        let loss = self.ledger.summary(Some(expected));
        let span = self
            .first_send_ns
            .map(|s| self.last_recv_ns.saturating_sub(s))
            .unwrap_or(0);
        SubReport {
            process,
            sub,
            ended: self.ended(),
            warmup: self.warmup,
            latency_count: self.count,
            latency_min_ns: self.min_ns,
            latency_max_ns: self.max_ns,
            latency_mean_ns: if self.count == 0 {
                0.0
            } else {
                self.sum_ns as f64 / self.count as f64
            },
            delivered_per_sec: if span == 0 {
                0.0
            } else {
                loss.received as f64 * 1e9 / span as f64
            },
            loss,
        }
    }
}

/// A libzmq context that allows more sockets than the 1023 of a default one (the zmq crate
/// does not expose ZMQ_MAX_SOCKETS). Sockets made from it must be closed before it drops.
struct BigContext {
    raw: *mut c_void,
}

fn last_zmq_error() -> zmq::Error {
    // SAFETY: zmq_errno only reads the thread's errno.
    zmq::Error::from_raw(unsafe { zmq_sys::zmq_errno() })
}

impl BigContext {
    fn new(max_sockets: i32) -> Result<BigContext> {
        // SAFETY: zmq_ctx_new has no preconditions; it returns null on failure.
        let raw = unsafe { zmq_sys::zmq_ctx_new() };
        if raw.is_null() {
            return Err(zmq_err("zmq_ctx_new")(last_zmq_error()));
        }
        let ctx = BigContext { raw };
        // SAFETY: a live context; MAX_SOCKETS is set before its first socket, as required.
        let rc =
            unsafe { zmq_sys::zmq_ctx_set(ctx.raw, zmq_sys::ZMQ_MAX_SOCKETS as i32, max_sockets) };
        if rc != 0 {
            return Err(zmq_err("setting ZMQ_MAX_SOCKETS")(last_zmq_error()));
        }
        Ok(ctx)
    }

    fn sub_socket(&self) -> std::result::Result<zmq::Socket, zmq::Error> {
        // SAFETY: a live context; null means failure, with errno set.
        let s = unsafe { zmq_sys::zmq_socket(self.raw, zmq_sys::ZMQ_SUB as i32) };
        if s.is_null() {
            return Err(last_zmq_error());
        }
        // SAFETY: a socket fresh from zmq_socket, owned by nothing else; the Socket closes it.
        Ok(unsafe { zmq::Socket::from_raw(s) })
    }
}

impl Drop for BigContext {
    fn drop(&mut self) {
        // SAFETY: the context is live and terminated once; every socket is closed by then.
        while unsafe { zmq_sys::zmq_ctx_term(self.raw) } != 0 {
            if last_zmq_error() != zmq::Error::EINTR {
                break;
            }
        }
    }
}

fn open_subscribers(ctx: &BigContext, spec: &ChildSpec) -> Result<Vec<Option<zmq::Socket>>> {
    let mut socks = Vec::with_capacity(spec.subs as usize);
    for i in 0..spec.subs {
        let s = ctx.sub_socket().map_err(|e| {
            let hint = if e == zmq::Error::EMFILE {
                format!(
                    "; the open-file limit is too low for {} subscribers per process: raise it (`ulimit -n`) or use fewer per process",
                    spec.subs
                )
            } else {
                String::new()
            };
            Error::Zmq {
                op: format!("opening subscriber {i} of {} in process {}{hint}", spec.subs, spec.process),
                source: e,
            }
        })?;
        s.set_linger(0).map_err(zmq_err("setting ZMQ_LINGER"))?;
        if let Some(h) = spec.hwm {
            s.set_rcvhwm(h).map_err(zmq_err("setting ZMQ_RCVHWM"))?;
        }
        s.set_subscribe(b"").map_err(zmq_err("subscribing"))?;
        s.connect(&spec.endpoint).map_err(|e| Error::Endpoint {
            endpoint: spec.endpoint.clone(),
            reason: format!("cannot connect ({e}); check the host name and port"),
        })?;
        socks.push(Some(s));
    }
    Ok(socks)
}

/// The subscriber process's side of the protocol with its parent.
pub trait ChildControl {
    /// Every socket is open and connecting.
    fn ready(&mut self) -> Result<()>;
    /// The measurement is over: hands over the report. The sockets stay open until this
    /// returns, so that closing them cannot slow the delivery to other subscribers still
    /// receiving (a parent returns once every process has reported).
    fn report(&mut self, report: &ChildReport) -> Result<()>;
}

/// Runs one subscriber process: opens and connects `spec.subs` SUB sockets, says ready,
/// receives until the end, hands over the report, and closes the sockets.
pub fn run_child(spec: &ChildSpec, ctl: &mut dyn ChildControl) -> Result<ChildReport> {
    let t0 = now_ns();
    let n = spec.subs as usize;
    let ctx = BigContext::new((spec.subs as i32).saturating_add(64))?;
    let mut socks = open_subscribers(&ctx, spec)?;
    let connect_ns = now_ns() - t0;
    ctl.ready()?;

    let mut states = vec![SubState::default(); n];
    let mut hist = LatencyHistogram::new();
    let poller_err = |e: std::io::Error| Error::Io {
        op: "watching the subscriber sockets (epoll)".into(),
        source: e,
    };
    let mut poller = Poller::new(n + 1).map_err(poller_err)?;
    let mut fds = Vec::with_capacity(n);
    for (i, s) in socks.iter().enumerate() {
        let fd = s
            .as_ref()
            .map(|s| s.get_fd())
            .transpose()
            .map_err(zmq_err("reading ZMQ_FD"))?
            .unwrap_or(-1);
        poller.add(fd, i as u64).map_err(poller_err)?;
        fds.push(fd);
    }
    if spec.watch_stdin {
        // Not every stdin can be watched (a regular file cannot); then the timeouts end it.
        let _ = poller.add(0, STDIN_TOKEN);
    }
    // Every socket is looked at once first: messages may have arrived before the watch.
    let mut woken: Vec<u64> = (0..n as u64).collect();
    let mut open = n;
    let mut msg = RawMsg::new();
    let first_deadline = now_ns().saturating_add(spec.first_timeout_ms.saturating_mul(1_000_000));
    let idle_ns = spec.idle_ms.saturating_mul(1_000_000);
    let mut last_activity: Option<u64> = None;
    let stop = loop {
        for &token in &woken {
            if token == STDIN_TOKEN {
                continue;
            }
            let i = token as usize;
            let Some(sock) = socks.get_mut(i).and_then(|s| s.as_mut()) else {
                continue;
            };
            let mut ended = false;
            loop {
                match msg.recv(sock, zmq::DONTWAIT) {
                    Ok(()) => {}
                    Err(zmq::Error::EAGAIN) => break,
                    Err(zmq::Error::EINTR) => continue,
                    Err(e) => return Err(zmq_err("receiving")(e)),
                }
                let now = now_ns();
                let h = match Header::decode(msg.prefix(HEADER_LEN)) {
                    Ok(Some(h)) => h,
                    Ok(None) => {
                        return Err(Error::Protocol(format!(
                            "subscriber {i} of process {} got a message of {} B without the measurement header: sub-cluster measures the messages of `zmqperf pub`",
                            spec.process,
                            msg.len()
                        )))
                    }
                    Err(e) => return Err(Error::Protocol(e.to_string())),
                };
                let lat = states[i].record(&h, now).map_err(Error::Protocol)?;
                if let Some(ns) = lat {
                    hist.record(ns);
                }
                last_activity = Some(now);
                if states[i].ended() {
                    ended = true;
                    break;
                }
            }
            if ended {
                // Done; the socket stays open until every process has reported.
                poller.remove(fds[i]);
                open -= 1;
            }
        }
        if woken.contains(&STDIN_TOKEN) {
            break StopReason::ParentGone;
        }
        if open == 0 {
            break StopReason::AllEnded;
        }
        let now = now_ns();
        let deadline = last_activity.map_or(first_deadline, |t| t.saturating_add(idle_ns));
        if now >= deadline {
            break if last_activity.is_some() {
                StopReason::Idle
            } else {
                StopReason::NothingArrived
            };
        }
        let wait_ms = ((deadline - now) / 1_000_000).clamp(1, 1000) as i32;
        poller.wait(wait_ms, &mut woken).map_err(poller_err)?;
    };
    let expected = spec
        .expect
        .or_else(|| states.iter().filter_map(|s| s.end_seq.map(|e| e + 1)).max())
        .or_else(|| states.iter().filter_map(SubState::stream_length).max())
        .unwrap_or(0);
    let subscribers = states
        .iter()
        .enumerate()
        .map(|(i, s)| s.report(spec.process, i as u32, expected))
        .collect();
    let report = ChildReport {
        process: spec.process,
        pid: std::process::id(),
        stop,
        connect_ns,
        subscribers,
        latency: hist,
        usage: ProcessUsage::of_this_process(&format!("subscribers {}", spec.process)),
    };
    ctl.report(&report)?;
    // Closing tells the publisher the subscribers are done.
    drop(socks);
    drop(ctx);
    Ok(report)
}

/// Longest a subscriber process keeps its sockets open after its report, waiting for its
/// parent to release it.
const RELEASE_TIMEOUT_MS: i32 = 60_000;

/// The line protocol on stdout; the parent releases the process by closing its stdin.
struct StdioControl {
    wait_release: bool,
}

impl StdioControl {
    fn say(&self, line: &str) -> Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}")
            .and_then(|_| out.flush())
            .map_err(|e| Error::Io {
                op: "telling the parent".into(),
                source: e,
            })
    }
}

impl ChildControl for StdioControl {
    fn ready(&mut self) -> Result<()> {
        self.say("READY")
    }

    fn report(&mut self, report: &ChildReport) -> Result<()> {
        let json = serde_json::to_string(report).expect("reports serialise");
        self.say(&format!("REPORT {json}"))?;
        if self.wait_release {
            wait_for_eof(RELEASE_TIMEOUT_MS);
        }
        Ok(())
    }
}

/// Waits until stdin reaches its end (the parent closed it, or is gone), at most `ms`.
fn wait_for_eof(ms: i32) {
    let deadline = now_ns() + ms as u64 * 1_000_000;
    let mut buf = [0u8; 256];
    loop {
        let left = deadline.saturating_sub(now_ns()) / 1_000_000;
        if left == 0 {
            return;
        }
        let mut fds = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd we own, for stdin.
        let n = unsafe { libc::poll(&mut fds, 1, left as i32) };
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return;
        }
        // SAFETY: reads into a buffer we own, of the stated length.
        let got = unsafe { libc::read(0, buf.as_mut_ptr() as *mut c_void, buf.len()) };
        if got <= 0 {
            return;
        }
    }
}

/// The hidden `__subs` command: runs one subscriber process and prints its report line.
/// Returns the process exit code.
pub fn child_main(spec_json: &str) -> i32 {
    let spec: ChildSpec = match serde_json::from_str(spec_json) {
        Ok(s) => s,
        Err(e) => {
            println!("ERROR bad subscriber spec: {e}");
            return 2;
        }
    };
    let need = super::limits::FdNeed {
        fds: super::limits::subscriber_fds(spec.subs as u64),
        who: "each subscriber process".into(),
        what: format!("{} SUB sockets", spec.subs),
        flag: "subscribers per process".into(),
        value: spec.subs.to_string(),
        fewer: "fewer subscribers per process and more processes".into(),
    };
    let mut ctl = StdioControl {
        wait_release: spec.watch_stdin,
    };
    match super::limits::ensure(&need).and_then(|_| run_child(&spec, &mut ctl)) {
        Ok(_) => 0,
        Err(e) => {
            // One line: the parent reads line by line.
            println!("ERROR {}", e.to_string().replace('\n', " "));
            e.exit_code()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::FLAG_TIMESTAMP;

    fn h(seq: u64, send_ns: u64, end: bool) -> Header {
        Header {
            flags: FLAG_TIMESTAMP | if end { FLAG_END } else { 0 },
            stream_id: 7,
            sequence: seq,
            send_ns,
        }
    }

    #[test]
    fn a_full_stream_is_clean_with_its_latency() {
        let mut s = SubState::default();
        for i in 0..10u64 {
            let lat = s
                .record(&h(i, 1_000 * i, i == 9), 1_000 * i + 500 + i)
                .unwrap();
            assert_eq!(lat, Some(500 + i));
        }
        assert!(s.ended());
        let r = s.report(2, 5, 10);
        assert_eq!((r.process, r.sub), (2, 5));
        assert_eq!((r.loss.expected, r.loss.received, r.loss.lost), (10, 10, 0));
        assert_eq!(r.latency_count, 10);
        assert_eq!((r.latency_min_ns, r.latency_max_ns), (500, 509));
        assert!((r.latency_mean_ns - 504.5).abs() < 1e-9);
        // 10 messages from the first send (0) to the last receipt (9509 ns).
        assert!((r.delivered_per_sec - 10.0 * 1e9 / 9509.0).abs() < 1e-3);
    }

    #[test]
    fn losses_are_placed_and_a_silent_subscriber_lost_all() {
        let mut s = SubState::default();
        for i in [2u64, 3, 5] {
            s.record(&h(i, 0, false), 10).unwrap();
        }
        let r = s.report(0, 0, 8);
        assert_eq!(r.loss.lost, 5);
        assert_eq!(
            (
                r.loss.lost_at_start,
                r.loss.lost_in_middle,
                r.loss.lost_at_end
            ),
            (2, 1, 2)
        );
        assert!(!r.ended);
        let silent = SubState::default().report(0, 1, 8);
        assert_eq!((silent.loss.lost, silent.loss.lost_at_start), (8, 8));
        assert_eq!(silent.latency_count, 0);
    }

    #[test]
    fn warm_up_messages_are_not_counted() {
        let mut s = SubState::default();
        let mut w = h(0, 5, false);
        w.flags = FLAG_WARMUP;
        assert_eq!(s.record(&w, 10).unwrap(), None);
        s.record(&h(0, 5, true), 10).unwrap();
        let r = s.report(0, 0, 1);
        assert_eq!((r.warmup, r.loss.received, r.latency_count), (1, 1, 1));
    }

    #[test]
    fn another_stream_is_refused() {
        let mut s = SubState::default();
        s.record(&h(0, 0, false), 1).unwrap();
        let mut other = h(1, 0, false);
        other.stream_id = 8;
        assert!(s.record(&other, 2).unwrap_err().contains("two streams"));
    }

    #[test]
    fn stream_length_comes_from_the_end_or_the_highest() {
        let mut s = SubState::default();
        assert_eq!(s.stream_length(), None);
        s.record(&h(4, 0, false), 1).unwrap();
        assert_eq!(s.stream_length(), Some(5));
        s.record(&h(6, 0, true), 1).unwrap();
        assert_eq!(s.stream_length(), Some(7));
    }
}
