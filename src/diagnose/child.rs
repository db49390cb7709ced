//! The sender process of the experiments that need one (fast quit: the process exits;
//! memory: its resident set is measured): the zmqperf binary re-executed as
//! `zmqperf diagnose __sender '<spec as JSON>'`, and the parent's handle on it.
//!
//! The child speaks lines on stdout: `SENT {report}` once its messages are queued,
//! `CLOSED <ns>` after it closed its socket and terminated its context, `ERROR <text>` if
//! it failed. The parent may write `STOP` on its stdin. The parent ends the child (by its
//! handle, never by name) if it outlives its deadline.

use crate::child::ChildProc;
use crate::clock::now_ns;
use crate::endpoint::{Endpoint, Side};
use crate::error::{zmq_err, Error, Result};
use crate::header::FLAG_END;
use crate::net::PeerWatch;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::net;

/// How the sender ends once its messages are queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Quit {
    /// ZMQ_LINGER=0, close, terminate the context, exit: the queue is thrown away.
    LingerZero,
    /// libzmq's default linger (infinite): terminating the context waits for the queue.
    DefaultLinger,
    /// Keep the socket until the receiver disconnects (seen by a socket monitor), then exit.
    WaitForPeer,
    /// Keep the socket until the parent writes STOP, then exit with linger 0.
    WaitForStop,
}

/// What the sender process does.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SenderSpec {
    /// Endpoint to connect to.
    pub endpoint: String,
    /// "push", "pair" or "xpub" (an XPUB waits for the subscription first).
    pub socket: String,
    /// Messages to send; the last carries the end-of-stream mark.
    pub count: u64,
    /// Bytes per message.
    pub size: usize,
    /// ZMQ_SNDHWM (0: no limit).
    pub sndhwm: i32,
    /// How to end.
    pub quit: Quit,
    /// Longest wait for any one event, ms.
    pub timeout_ms: u64,
}

/// What the sender process reports once its messages are queued.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct SentReport {
    /// Monotonic clock at the first send, ns (the same clock as the parent's).
    pub first_send_ns: u64,
    /// Monotonic clock after the last send returned, ns.
    pub last_send_ns: u64,
    /// Resident memory before the first send, KiB.
    pub rss_before_kib: u64,
    /// Resident memory after the last send, KiB.
    pub rss_after_kib: u64,
    /// Peak resident memory so far, KiB.
    pub rss_peak_kib: u64,
}

/// The hidden `diagnose __sender` command: plays the sender and returns the exit code.
pub fn child_main(spec_json: &str) -> i32 {
    let spec: SenderSpec = match serde_json::from_str(spec_json) {
        Ok(s) => s,
        Err(e) => {
            println!("ERROR bad sender spec: {e}");
            return 2;
        }
    };
    match sender(&spec) {
        Ok(()) => 0,
        Err(e) => {
            println!("ERROR {e}");
            let _ = std::io::stdout().flush();
            e.exit_code()
        }
    }
}

fn say(line: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|_| out.flush())
        .map_err(|e| Error::Io {
            op: "telling the parent".into(),
            source: e,
        })
}

fn sender(spec: &SenderSpec) -> Result<()> {
    let timeout = Duration::from_millis(spec.timeout_ms);
    let kind = match spec.socket.as_str() {
        "push" => zmq::PUSH,
        "pair" => zmq::PAIR,
        "xpub" => zmq::XPUB,
        other => {
            return Err(Error::invalid(
                "sender socket",
                other,
                "use push, pair or xpub",
            ))
        }
    };
    let ctx = zmq::Context::new();
    let mut s = net::socket(&ctx, kind, timeout)?;
    s.set_sndhwm(spec.sndhwm)
        .map_err(zmq_err("setting ZMQ_SNDHWM"))?;
    match spec.quit {
        Quit::LingerZero | Quit::WaitForStop => s.set_linger(0),
        // libzmq's default, -1: wait for ever (net::socket set 0); the parent bounds it.
        Quit::DefaultLinger => s.set_linger(-1),
        Quit::WaitForPeer => s.set_linger(net::millis(timeout)),
    }
    .map_err(zmq_err("setting ZMQ_LINGER"))?;
    let ep = Endpoint::parse(&spec.endpoint, Side::Connect)?;
    let watch = if spec.quit == Quit::WaitForPeer {
        PeerWatch::new(&ctx, &s, &ep)?
    } else {
        None
    };
    net::connect(&s, &spec.endpoint)?;
    if kind == zmq::XPUB {
        // No slow joiner: the stream starts once the subscription is in.
        s.recv_bytes(0).map_err(|e| Error::Zmq {
            op: "waiting for the subscription".into(),
            source: e,
        })?;
    }
    let (rss_before_kib, _) = net::rss_kib();
    let first_send_ns = now_ns();
    for seq in 0..spec.count {
        let flags = if seq + 1 == spec.count { FLAG_END } else { 0 };
        net::send(&mut s, spec.size, seq, flags, 0)?.map_err(|e| Error::Zmq {
            op: format!("sending message {seq}"),
            source: e,
        })?;
    }
    let last_send_ns = now_ns();
    let (rss_after_kib, rss_peak_kib) = net::rss_kib();
    let report = SentReport {
        first_send_ns,
        last_send_ns,
        rss_before_kib,
        rss_after_kib,
        rss_peak_kib,
    };
    say(&format!(
        "SENT {}",
        serde_json::to_string(&report).expect("reports serialise")
    ))?;
    match spec.quit {
        Quit::LingerZero | Quit::DefaultLinger => {}
        Quit::WaitForPeer => {
            if let Some(w) = &watch {
                w.wait_gone(timeout);
            }
        }
        Quit::WaitForStop => wait_for_stop(timeout),
    }
    drop(watch);
    drop(s);
    // Terminating the context is where a linger is honoured (or not).
    drop(ctx);
    say(&format!("CLOSED {}", now_ns()))
}

/// Waits up to `timeout` for a line on stdin (STOP, or end of input).
fn wait_for_stop(timeout: Duration) {
    let mut fds = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd we own, for stdin.
    let n = unsafe { libc::poll(&mut fds, 1, net::millis(timeout)) };
    if n > 0 {
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    }
}

/// The parent's handle on a sender process.
pub struct SenderProcess {
    proc: ChildProc,
    lines: Receiver<String>,
}

impl SenderProcess {
    /// Starts `exe diagnose __sender '<spec>'`.
    pub fn spawn(exe: &Path, spec: &SenderSpec) -> Result<SenderProcess> {
        let json = serde_json::to_string(spec).expect("specs serialise");
        let (tx, rx) = mpsc::channel();
        let proc = ChildProc::spawn(
            exe,
            &["diagnose", "__sender", &json],
            &[],
            "the sender process",
            tx,
            Some,
            None,
        )?;
        Ok(SenderProcess { proc, lines: rx })
    }

    /// Waits until `deadline` for the line starting with `word` and returns the rest of it.
    pub fn expect(&mut self, word: &str, deadline: Instant) -> Result<String> {
        self.expect_ticking(word, deadline, &mut || {})
    }

    /// As [`SenderProcess::expect`], calling `tick` every few milliseconds meanwhile (a
    /// socket of this thread must handle its commands to attach a new connection).
    pub fn expect_ticking(
        &mut self,
        word: &str,
        deadline: Instant,
        tick: &mut dyn FnMut(),
    ) -> Result<String> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left.min(Duration::from_millis(5))) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix(word) {
                        return Ok(rest.trim().to_string());
                    }
                    if let Some(err) = line.strip_prefix("ERROR ") {
                        return Err(Error::Protocol(format!("the sender process failed: {err}")));
                    }
                }
                Err(RecvTimeoutError::Timeout) if !left.is_zero() => tick(),
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Err(Error::Protocol(format!(
                        "the sender process did not say {} in time and was stopped",
                        word.trim()
                    )));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let why = self.exit_reason();
                    return Err(Error::Protocol(format!(
                        "the sender process ended before saying {}: {why}",
                        word.trim()
                    )));
                }
            }
        }
    }

    /// The sender's report once its messages are queued; `tick` as for
    /// [`SenderProcess::expect_ticking`].
    pub fn sent(&mut self, deadline: Instant, tick: &mut dyn FnMut()) -> Result<SentReport> {
        let json = self.expect_ticking("SENT ", deadline, tick)?;
        serde_json::from_str(&json)
            .map_err(|e| Error::Protocol(format!("unreadable sender report: {e}")))
    }

    /// Writes a line to the sender's stdin (ignored if it has gone).
    pub fn tell(&mut self, line: &str) {
        let _ = self.proc.write_line(line);
    }

    /// Whether the process has ended.
    pub fn exited(&mut self) -> bool {
        self.proc.exited()
    }

    /// Waits until `deadline` for the process to end; ends it (by its handle) if it does
    /// not. True if it ended by itself.
    pub fn wait(&mut self, deadline: Instant) -> bool {
        self.proc.wait_until(deadline)
    }

    fn kill(&mut self) {
        self.proc.kill();
    }

    fn exit_reason(&mut self) -> String {
        self.proc.exit_reason()
    }
}
