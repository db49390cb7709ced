//! The node process's side of the control protocol (the hidden `__node` command): it reads
//! its spec, says hello, answers the runner's clock exchanges and heartbeats on a thread of
//! its own whatever the role is doing, hands start and stop to the role, and writes its
//! report.

use crate::clock::now_ns;
use crate::error::{Error, Result};
use crate::roles::{run_node, Control, NodeSpec};
use crate::runner::control::{Hello, SentFacts, ToNode, ToRunner, V1, VERSION};
use crate::zmq;
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

/// Reads the runner's lines from stdin (fd 0) itself, with a timeout for each.
struct Lines {
    pending: Vec<u8>,
    closed: bool,
}

impl Lines {
    /// The next whole line as bytes, waiting up to `ms` (-1: for ever); None if none came
    /// by then, or if the runner closed our input (`closed` says which).
    fn next(&mut self, ms: i32) -> Option<Vec<u8>> {
        loop {
            if let Some(nl) = self.pending.iter().position(|&b| b == b'\n') {
                return Some(self.pending.drain(..=nl).collect());
            }
            if self.closed {
                return None;
            }
            let mut fds = libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one pollfd we own, for stdin.
            let r = unsafe { libc::poll(&mut fds, 1, ms) };
            if r == 0
                || (r < 0
                    && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted)
            {
                return None;
            }
            if r < 0 {
                continue;
            }
            let mut buf = [0u8; 4096];
            // SAFETY: reading into a buffer we own, at most its length.
            let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                self.closed = true;
                return None;
            }
            self.pending.extend_from_slice(&buf[..n as usize]);
        }
    }
}

/// The control channel out: the process's stdout as it started, moved to a descriptor of
/// its own by [`claim_stdout`] so that what a library prints (OpenPGM writes its warnings
/// to stdout) goes to stderr and cannot break the protocol.
static CONTROL_OUT: std::sync::OnceLock<std::sync::Mutex<std::fs::File>> =
    std::sync::OnceLock::new();

/// Keeps fd 1 for the control lines alone: a copy of it carries them from now on, and fd 1
/// itself becomes a copy of stderr. Left as it is if either call fails.
fn claim_stdout() {
    use std::os::fd::FromRawFd;
    // SAFETY: dup and dup2 on the process's own standard descriptors; the new one is owned
    // by the File from here on.
    unsafe {
        let own = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if own < 0 {
            return;
        }
        if libc::dup2(2, 1) < 0 {
            libc::close(own);
            return;
        }
        let _ = CONTROL_OUT.set(std::sync::Mutex::new(std::fs::File::from_raw_fd(own)));
    }
}

/// Writes one line to the runner (whole, under the channel's lock: the role's thread and
/// the reader thread both write).
fn say(m: &ToRunner) -> Result<()> {
    use std::io::Write;
    let line = format!("{}\n", m.line());
    let written = match CONTROL_OUT.get() {
        Some(out) => {
            let mut f = out.lock().unwrap_or_else(|p| p.into_inner());
            f.write_all(line.as_bytes()).and_then(|_| f.flush())
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(line.as_bytes()).and_then(|_| out.flush())
        }
    };
    written.map_err(|e| Error::Io {
        op: "telling the runner".into(),
        source: e,
    })
}

/// What the reader thread hands the role: the runner's start and stop; `Closed` once the
/// runner closed our input (taken as a stop).
enum FromRunner {
    Start(Vec<(u32, i64)>),
    Stop,
    Closed,
}

/// The child's side: a thread reads the runner's lines, answers clock exchanges and
/// heartbeats at once (whatever the role is doing), and hands start and stop to the role.
struct StdioControl {
    rx: Receiver<FromRunner>,
    stop: bool,
    closed: bool,
    /// The version this node writes (2 when it was started with its spec on stdin).
    v: u32,
    /// From `start`: what to add to each stream's send stamps (another host's clock).
    offsets: Vec<(u32, i64)>,
}

impl StdioControl {
    fn new(mut lines: Lines, v: u32) -> StdioControl {
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || loop {
            let Some(line) = lines.next(-1) else {
                let _ = tx.send(FromRunner::Closed);
                return;
            };
            let t1 = now_ns();
            let m = match ToNode::parse(&line) {
                Some(m) => m,
                None => {
                    crate::runner::notice::tell(&crate::runner::notice::Notice::IgnoredLine {
                        line: String::from_utf8_lossy(&line).trim_end(),
                        versions: (V1, VERSION),
                    });
                    continue;
                }
            };
            let fwd = match m {
                ToNode::Clock { t0, .. } => {
                    let _ = say(&ToRunner::Clock {
                        v,
                        t0,
                        t1,
                        t2: now_ns(),
                    });
                    continue;
                }
                ToNode::Ping { seq, .. } => {
                    let _ = say(&ToRunner::Pong { v, seq });
                    continue;
                }
                ToNode::Start { send_offsets, .. } => FromRunner::Start(send_offsets),
                ToNode::Stop { .. } => FromRunner::Stop,
            };
            if tx.send(fwd).is_err() {
                return;
            }
        });
        StdioControl {
            rx,
            stop: false,
            closed: false,
            v,
            offsets: Vec::new(),
        }
    }

    fn say(&self, m: &ToRunner) -> Result<()> {
        say(m)
    }

    /// After the report: keeps answering clock exchanges until the runner closes our input
    /// (it measures a remote node's clock once more), at most `wait`.
    fn linger(&mut self, wait: Duration) {
        let until = Instant::now() + wait;
        if self.closed {
            return;
        }
        // The reader thread answers the clock; here only the end of the input is awaited.
        loop {
            match self
                .rx
                .recv_timeout(until.saturating_duration_since(Instant::now()))
            {
                Ok(FromRunner::Closed) | Err(_) => return,
                Ok(_) => {}
            }
        }
    }
}

impl Control for StdioControl {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        self.say(&ToRunner::Ready {
            v: self.v,
            endpoints: endpoints.to_vec(),
        })
    }

    fn wait_start(&mut self, timeout: Duration) -> Result<()> {
        match self.rx.recv_timeout(timeout) {
            Ok(FromRunner::Start(offsets)) => {
                self.offsets = offsets;
                Ok(())
            }
            Ok(FromRunner::Stop) => Err(Error::RunnerGone("expected start, got stop".into())),
            Ok(FromRunner::Closed) => {
                self.closed = true;
                Err(Error::RunnerGone(
                    "expected start, but the runner closed the control channel".into(),
                ))
            }
            Err(_) => Err(Error::RunnerGone("no start signal from the runner".into())),
        }
    }

    fn sent_with(&mut self, facts: SentFacts) -> Result<()> {
        self.say(&ToRunner::Sent { v: self.v, facts })
    }

    fn stop_requested(&mut self) -> bool {
        while !self.stop {
            match self.rx.try_recv() {
                Ok(FromRunner::Stop) => self.stop = true,
                Ok(FromRunner::Closed) => {
                    self.closed = true;
                    self.stop = true;
                }
                Ok(FromRunner::Start(_)) => {}
                Err(_) => break,
            }
        }
        self.stop
    }

    fn send_offsets(&self) -> &[(u32, i64)] {
        &self.offsets
    }
}

/// How long a node waits for its spec on stdin.
const SPEC_WAIT_MS: i32 = 10_000;
/// How long a node that has reported keeps answering the runner's clock before it exits.
const LINGER: Duration = Duration::from_secs(5);

/// Ends this node process at its deadline, whatever its input does (a launcher that died
/// may leave it running on its host).
fn end_at(deadline_ms: u64) {
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(deadline_ms));
        let _ = say(&ToRunner::Error {
            v: VERSION,
            message: format!(
                "deadline: still running {:.1} s after its start, the case timeout plus a grace; it ended itself",
                deadline_ms as f64 / 1e3
            ),
            exit_code: DEADLINE_EXIT,
        });
        std::process::exit(DEADLINE_EXIT);
    });
}

/// The exit code of a node that passed its deadline.
pub const DEADLINE_EXIT: i32 = 124;

/// The hidden `__node` command: reads its spec (the first line on stdin, or `spec_arg`),
/// says hello (version 2, spec on stdin), loads the libzmq the spec names, plays the node
/// and prints its report.
pub fn child_main(spec_arg: Option<&str>) -> i32 {
    claim_stdout();
    let mut lines = Lines {
        pending: Vec::new(),
        closed: false,
    };
    let v = if spec_arg.is_some() { V1 } else { VERSION };
    let bad = |message: String, code: i32| {
        let _ = say(&ToRunner::Error {
            v,
            message,
            exit_code: code,
        });
        code
    };
    let spec = match read_spec(&mut lines, spec_arg) {
        Ok(s) => s,
        Err(message) => return bad(message, 2),
    };
    if let Some(ms) = spec.deadline_ms {
        end_at(ms);
    }
    crate::roles::set_own_process();
    if let Some(lib) = &spec.libzmq {
        if let Err(e) = zmq::library::choose(lib) {
            return bad(format!("libzmq {lib}: {e}"), 3);
        }
    }
    if v >= 2 {
        // Its machine is described once the libzmq it measures is chosen.
        say_hello(v);
    }
    let ticks = spec.swarm.as_ref().is_some_and(|s| s.ticks.is_some());
    if v >= 2 && (spec.interval_ms.is_some() || ticks) {
        // Each interval goes to the runner as it closes, without its histogram (a tick's
        // keeps it: the fan-out's line merges the processes' ticks).
        crate::roles::live::set_interval_hook(Some(std::sync::Arc::new(move |node, r| {
            let record = Box::new(crate::model::IntervalRecord {
                histogram: r.histogram.clone().filter(|_| r.tick.is_some()),
                ..r.clone()
            });
            let _ = say(&ToRunner::Interval {
                v,
                node: node.to_string(),
                record,
            });
        })));
    }
    let mut ctl = StdioControl::new(lines, v);
    let ctx = zmq::Context::new();
    match run_node(&ctx, &spec, &mut ctl) {
        Ok(mut report) => {
            // A source's sockets are closed; terminating the context is where its linger is
            // honoured (or not), and the time after it is when it was truly done. Other
            // roles report at once: nothing of theirs is queued to leave.
            if spec.role == crate::roles::Role::Source {
                drop(ctx);
                report.closed_ns = Some(now_ns());
            }
            let _ = say(&ToRunner::Report {
                v,
                report: Box::new(report),
            });
            if v >= 2 {
                ctl.linger(LINGER);
            }
            0
        }
        Err(e) => {
            let _ = bad(e.to_string(), e.exit_code());
            e.exit_code()
        }
    }
}

/// The node's spec: `spec_arg`, or the first line on stdin within [`SPEC_WAIT_MS`]; the
/// message of a spec that did not come or does not read.
fn read_spec(lines: &mut Lines, spec_arg: Option<&str>) -> std::result::Result<NodeSpec, String> {
    let text = match spec_arg {
        Some(s) => s.to_string(),
        None => match lines.next(SPEC_WAIT_MS) {
            Some(l) => String::from_utf8_lossy(&l).into_owned(),
            None => return Err(
                "bad node spec: none arrived on stdin within 10 s (zmqperf __node reads its spec as the first line on stdin)".into(),
            ),
        },
    };
    serde_json::from_str(text.trim_end()).map_err(|e| format!("bad node spec: {e}"))
}

/// Says hello (version 2): the versions it speaks, its build, its pid and its machine.
fn say_hello(v: u32) {
    let _ = say(&ToRunner::Hello {
        v,
        hello: Hello {
            versions: vec![V1, VERSION],
            version: crate::VERSION.to_string(),
            build_id: crate::runner::build_id(),
            pid: std::process::id(),
            host: crate::host::hostname(),
            machine: Some(Box::new(crate::host::host_environment(""))),
        },
    });
}
