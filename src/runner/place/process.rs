//! A node in a process of its own, as the runner drives it: its hello and build check,
//! the clock exchanges and heartbeats of a node on another host, how it died or went
//! silent, and its report moved onto the runner's clock.

use super::{own_failure, read_slot, Event, Placed, SentSlot, OVERRAN};
use crate::child::ChildProc;
use crate::clock::now_ns;
use crate::error::{Error, NodeFailure, Result};
use crate::roles::RoleReport;
use crate::runner::control::{Hello, SentFacts, ToNode, V1, VERSION};
use crate::runner::hosts::Host;
use crate::runner::sync::{self, ClockEstimate, Exchange};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// Heartbeats to a node on another host: one a second; this long without a line from it
/// (three missed) and its host is taken for gone.
const HEARTBEAT: Duration = Duration::from_secs(1);
const SILENCE: Duration = Duration::from_millis(3_500);
/// Clock exchanges with a node on another host before its start and after its report,
/// this far apart.
const CLOCK_BEFORE: usize = 128;
const CLOCK_AFTER: usize = 64;
const CLOCK_GAP: Duration = Duration::from_micros(500);
/// How long a node has to say `hello` (a launcher such as ssh takes its time to connect).
const HELLO_WAIT: Duration = Duration::from_secs(20);

/// What a node process's output reader hands on: its hello (taken where it is placed), or
/// an event.
pub(super) enum Line {
    Hello(Hello),
    Event(Event),
}

/// The runner's ends of what the thread reading a node's output fills: its events, its
/// clock answers, when it was last heard from (ms since `born`), and its `sent`.
pub(super) struct Wires {
    pub(super) events: Receiver<Line>,
    pub(super) clocks: Receiver<Exchange>,
    pub(super) heard: Arc<AtomicU64>,
    pub(super) born: Instant,
    pub(super) sent: SentSlot,
}

/// A node in a process of its own: a child of the runner, or a process a launcher started
/// on another host.
pub(super) struct InProcess {
    name: String,
    events: Receiver<Line>,
    child: ChildProc,
    sent: SentSlot,
    /// The protocol version spoken with it (2 once it said hello).
    v: u32,
    /// What it said in its hello.
    hello: Option<Hello>,
    /// Its host, when not the runner's.
    host: Option<Host>,
    /// Its clock's answers: (t0, t1, t2, t3).
    clocks: Receiver<Exchange>,
    /// When its last line came (ms since `born`).
    heard: Arc<AtomicU64>,
    born: Instant,
    /// Set to end the heartbeat thread.
    beat_stop: Arc<AtomicBool>,
    /// Its clock against the runner's before the start, and over the case once reported.
    clock_before: Option<ClockEstimate>,
    clock: Option<ClockEstimate>,
    /// Whether it has ended (report or failure) and was let go.
    finished: bool,
    /// An event taken early and put back ([`Placed::keep`]).
    kept: Option<Event>,
}

impl InProcess {
    /// A node process just started, on `host` when not the runner's: `wires` are the
    /// runner's ends of what the reader of its output hands on. It speaks version 1 until
    /// it says hello.
    pub(super) fn new(name: String, child: ChildProc, host: Option<Host>, wires: Wires) -> Self {
        InProcess {
            name,
            events: wires.events,
            child,
            sent: wires.sent,
            v: V1,
            hello: None,
            host,
            clocks: wires.clocks,
            heard: wires.heard,
            born: wires.born,
            beat_stop: Arc::new(AtomicBool::new(false)),
            clock_before: None,
            clock: None,
            finished: false,
            kept: None,
        }
    }

    /// The machine it described in its hello (a node that said hello).
    pub(super) fn machine(&self) -> Option<&crate::model::HostEnvironment> {
        self.hello.as_ref().and_then(|h| h.machine.as_deref())
    }

    /// Where it runs, for errors: "node x" or "node x on host b".
    fn who(&self) -> String {
        match &self.host {
            Some(h) => format!("{} on host {}", self.name, h.name),
            None => self.name.clone(),
        }
    }

    /// The failure of a node that ended without its report: how it ended (its exit code,
    /// or the signal that killed it) and the last lines it wrote on stderr; for a node on
    /// another host, whether its launcher failed or the node itself.
    fn died(&mut self) -> Error {
        let why = self.child.exit_reason();
        let code = self.child.exit_code();
        let Some(h) = &self.host else {
            return NodeFailure::lost(&self.name, format!("(pid {}) died: {why}", self.child.id()))
                .into();
        };
        let launcher = h.launch.first().cloned().unwrap_or_default();
        let pid = self
            .hello
            .as_ref()
            .map(|x| format!("pid {} there", x.pid))
            .unwrap_or_else(|| "never started".into());
        let cause = match (h.kind, code, &self.hello) {
            ("ssh", Some(255), None) => format!("ssh could not start it: {why}"),
            ("ssh", Some(255), Some(_)) => {
                format!("ssh lost the connection (its exit 255): {why}")
            }
            (_, Some(c), Some(_)) if c > 128 && c < 160 => format!(
                "{why} (a remote exit above 128: killed by signal {} there, as {launcher} reports it)",
                c - 128
            ),
            (_, _, None) => format!("{launcher} could not start it: {why}"),
            _ => why,
        };
        NodeFailure::lost(&self.who(), format!("({pid}) died: {cause}")).into()
    }

    /// How long it has been silent, if it is watched by heartbeats.
    fn silence(&self) -> Option<Duration> {
        if self.host.is_none() || self.hello.is_none() || self.finished {
            return None;
        }
        let heard = Duration::from_millis(self.heard.load(Ordering::Relaxed));
        Some(self.born.elapsed().saturating_sub(heard))
    }

    /// The failure of a host that stopped answering its heartbeats.
    fn gone(&mut self, silent: Duration) -> Error {
        self.kill();
        NodeFailure::lost(
            &self.who(),
            format!(
                "stopped answering: no line for {:.1} s ({} heartbeats missed, 1 s apart); the host or its link is down, or the node is frozen",
                silent.as_secs_f64(),
                silent.as_secs()
            ),
        )
        .into()
    }

    /// Exchanges `n` clock lines with the node; its estimate, or None if it did not answer.
    fn exchange(&mut self, n: usize) -> Option<ClockEstimate> {
        let mut got = Vec::new();
        for i in 0..n {
            if i > 0 {
                thread::sleep(CLOCK_GAP);
            }
            let t0 = now_ns();
            let line = ToNode::Clock { v: self.v, t0 }.line();
            if self.child.write_line(&line).is_err() {
                break;
            }
            // Answers to an earlier, late exchange are dropped: only this t0 counts.
            let until = Instant::now() + Duration::from_secs(1);
            loop {
                match self
                    .clocks
                    .recv_timeout(until.saturating_duration_since(Instant::now()))
                {
                    Ok(e) if e.t0 == t0 => {
                        got.push(e);
                        break;
                    }
                    Ok(_) => continue,
                    Err(_) => break,
                }
            }
        }
        sync::estimate(&got)
    }

    /// Takes an event: once the node has reported, the clock after it (a remote node), then
    /// its input is closed (it exits), and its report is moved onto the runner's clock.
    fn take(&mut self, ev: Event) -> Event {
        let Event::Done(r) = ev else {
            return ev;
        };
        self.finished = true;
        self.beat_stop.store(true, Ordering::Relaxed);
        let mut r = *r;
        if let (Ok(report), Some(before)) = (&mut r, self.clock_before) {
            let after = self.exchange(CLOCK_AFTER);
            let c = sync::over_case(before, after);
            self.clock = Some(c);
            onto_runner_clock(report, c.offset_ns);
        }
        self.child.close_stdin();
        Event::Done(Box::new(r))
    }

    /// Waits for its hello (version 2) and, on another host, checks its build, measures
    /// its clock and starts its heartbeats.
    pub(super) fn greet(&mut self, build_id: &str) -> Result<()> {
        let hello = self.await_hello()?;
        self.v = if hello.versions.contains(&VERSION) {
            VERSION
        } else {
            V1
        };
        self.check_build(hello, build_id)?;
        if self.host.is_some() {
            self.measure_clock()?;
            self.start_heartbeats();
        }
        Ok(())
    }

    /// Its first line, which must be its hello, within [`HELLO_WAIT`].
    fn await_hello(&mut self) -> Result<Hello> {
        let deadline = Instant::now() + HELLO_WAIT;
        let first = match self.events.recv_timeout(deadline - Instant::now()) {
            Ok(ev) => ev,
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                return Err(NodeFailure::lost(
                    &self.who(),
                    format!("said nothing within {} s of its start (no hello): its launcher hangs or asks for something (ssh runs in batch mode: check its keys)", HELLO_WAIT.as_secs()),
                )
                .into());
            }
            Err(RecvTimeoutError::Disconnected) => return Err(self.died()),
        };
        match first {
            Line::Hello(h) => Ok(h),
            Line::Event(Event::Done(r)) => Err(match *r {
                Err(f) => f.into(),
                Ok(_) => Error::NodeGone(format!("{} ended before it was ready", self.who())),
            }),
            _ => {
                self.kill();
                Err(Error::NodeGone(format!(
                    "{} did not say hello first: it is not zmqperf {} (control protocol 2); install the runner's build there, or set ship = true (docs/hosts.md)",
                    self.who(),
                    crate::VERSION
                )))
            }
        }
    }

    /// Keeps its hello; a node on another host must run the runner's build (else it is
    /// stopped).
    fn check_build(&mut self, hello: Hello, build_id: &str) -> Result<()> {
        if self.host.is_some() && hello.build_id != build_id {
            let theirs = format!(
                "zmqperf {} build {}",
                hello.version,
                if hello.build_id.is_empty() {
                    "(none)"
                } else {
                    &hello.build_id
                }
            );
            self.hello = Some(hello);
            self.kill();
            return Err(Error::invalid(
                &format!("{}: its zmqperf", self.who()),
                &theirs,
                format!(
                    "not the runner's build (zmqperf {} build {}); every host must run the same build: set ship = true for that host, or point its zmqperf = \"PATH\" at a copy of this one (docs/hosts.md)",
                    crate::VERSION,
                    if build_id.is_empty() { "(none)" } else { build_id }
                ),
            ));
        }
        self.hello = Some(hello);
        Ok(())
    }

    /// Its clock against the runner's before the start (a node on another host; stopped
    /// if it does not answer).
    fn measure_clock(&mut self) -> Result<()> {
        self.clock_before = self.exchange(CLOCK_BEFORE);
        if self.clock_before.is_none() {
            self.kill();
            return Err(NodeFailure::lost(
                &self.who(),
                "did not answer the clock exchange within 1 s",
            )
            .into());
        }
        self.clock = self.clock_before;
        Ok(())
    }

    /// A thread that pings it every [`HEARTBEAT`] until it has ended or its input closed.
    fn start_heartbeats(&self) {
        let input = self.child.input();
        let stop = self.beat_stop.clone();
        let v = self.v;
        thread::spawn(move || {
            let mut seq = 0u64;
            while !stop.load(Ordering::Relaxed) && !input.is_closed() {
                thread::sleep(HEARTBEAT);
                seq += 1;
                if stop.load(Ordering::Relaxed)
                    || input.write_line(&ToNode::Ping { v, seq }.line()).is_err()
                {
                    return;
                }
            }
        });
    }

    /// One best-effort stop of the node on its host, through its launcher (a node whose
    /// launcher died may live on there until its own deadline). In the background, bounded
    /// by 5 s: a host that stopped answering must not hold the runner up.
    fn stop_remote(&self) {
        let (Some(h), Some(hello)) = (&self.host, &self.hello) else {
            return;
        };
        let argv = h.command(&["kill".to_string(), hello.pid.to_string()]);
        thread::spawn(move || {
            let Some((prog, args)) = argv.split_first() else {
                return;
            };
            if let Ok(mut c) = std::process::Command::new(prog)
                .args(args)
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
            {
                let until = Instant::now() + Duration::from_secs(5);
                while Instant::now() < until {
                    if !matches!(c.try_wait(), Ok(None)) {
                        return;
                    }
                    thread::sleep(Duration::from_millis(20));
                }
                let _ = c.kill();
                let _ = c.wait();
            }
        });
    }
}

/// Moves what a node on another host reported on its own clock onto the runner's:
/// `offset_ns` is its clock minus the runner's.
fn onto_runner_clock(r: &mut RoleReport, offset_ns: i64) {
    let shift = |t: &mut u64| *t = (*t as i128 - offset_ns as i128).max(0) as u64;
    for span in [&mut r.send, &mut r.delivered, &mut r.round_trips]
        .into_iter()
        .flatten()
    {
        shift(&mut span.start_ns);
        shift(&mut span.end_ns);
    }
    if let Some(t) = r.closed_ns.as_mut() {
        shift(t);
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.beat_stop.store(true, Ordering::Relaxed);
    }
}

impl Placed for InProcess {
    fn name(&self) -> &str {
        &self.name
    }

    fn send(&mut self, m: ToNode) -> Result<()> {
        let m = m.in_version(self.v);
        match self.child.write_line(&m.line()) {
            Ok(()) => Ok(()),
            Err(e) => {
                let pipe = Error::Io {
                    op: format!("telling {}", self.who()),
                    source: e,
                };
                Err(own_failure(self, pipe))
            }
        }
    }

    fn next(&mut self, deadline: Instant) -> Result<Event> {
        loop {
            let slice = (Instant::now() + Duration::from_millis(250)).min(deadline);
            match self.wait_event(slice)? {
                Some(ev) => return Ok(ev),
                None if Instant::now() >= deadline => {
                    self.kill();
                    return Err(NodeFailure::lost(&self.who(), OVERRAN).into());
                }
                None => {}
            }
        }
    }

    fn wait_event(&mut self, until: Instant) -> Result<Option<Event>> {
        if let Some(ev) = self.kept.take() {
            return Ok(Some(ev));
        }
        if let Some(s) = self.silence().filter(|s| *s > SILENCE) {
            return Err(self.gone(s));
        }
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(Line::Event(ev)) => return Ok(Some(self.take(ev))),
                // A second hello is not part of the protocol; it changes nothing.
                Ok(Line::Hello(_)) => continue,
                Err(RecvTimeoutError::Timeout) => return Ok(None),
                Err(RecvTimeoutError::Disconnected) => return Err(self.died()),
            }
        }
    }

    fn try_next(&mut self) -> Result<Option<Event>> {
        if let Some(ev) = self.kept.take() {
            return Ok(Some(ev));
        }
        if let Some(s) = self.silence().filter(|s| *s > SILENCE) {
            return Err(self.gone(s));
        }
        loop {
            match self.events.try_recv() {
                Ok(Line::Event(ev)) => return Ok(Some(self.take(ev))),
                Ok(Line::Hello(_)) => continue,
                Err(mpsc::TryRecvError::Empty) => return Ok(None),
                Err(mpsc::TryRecvError::Disconnected) => return Err(self.died()),
            }
        }
    }

    fn kill(&mut self) {
        self.beat_stop.store(true, Ordering::Relaxed);
        let alive = !self.child.exited();
        self.child.kill();
        if alive && !self.finished {
            self.stop_remote();
        }
    }

    fn keep(&mut self, ev: Event) {
        self.kept = Some(ev);
    }

    fn sent_facts(&self) -> Option<SentFacts> {
        let mut f = read_slot(&self.sent)?;
        if let Some(c) = self.clock_before {
            for t in [&mut f.first_send_ns, &mut f.last_send_ns]
                .into_iter()
                .flatten()
            {
                *t = (*t as i128 - c.offset_ns as i128).max(0) as u64;
            }
        }
        Some(f)
    }

    fn host(&self) -> Option<&str> {
        self.host.as_ref().map(|h| h.name.as_str())
    }

    fn clock(&self) -> Option<ClockEstimate> {
        self.clock
    }
}
