//! Placing nodes, behind one trait ([`Placed`]): on a thread of the runner (sharing its
//! context, needed for inproc) or in a child process (the same binary re-executed with the
//! hidden `__node` command). Both speak the control protocol of [`super::control`]; a peer
//! in another language or an agent on another host is one more implementation.

use super::control::{Hello, SentFacts, ToNode, ToRunner, V1, VERSION};
use super::hosts::Host;
use super::launch::{ProcessLaunch, SpecPassing};
use super::sync::{self, ClockEstimate, Exchange};
use crate::child::ChildProc;
use crate::clock::now_ns;
use crate::error::{Error, NodeFailure, Result};
use crate::roles::{run_node, Control, NodeSpec, RoleReport};
use crate::zmq;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What a node tells the runner.
#[derive(Debug)]
pub enum Event {
    /// Bound and connected, with the endpoints actually bound.
    Ready(Vec<String>),
    /// A source's or ping's last message has left (what it said with it:
    /// [`Placed::sent_facts`]).
    Sent,
    /// Done: its report, or why it failed.
    Done(Box<std::result::Result<RoleReport, NodeFailure>>),
}

/// A node started somewhere, driven by the runner.
pub trait Placed {
    /// The node's name, for errors.
    fn name(&self) -> &str;
    /// Sends a control message.
    fn send(&mut self, m: ToNode) -> Result<()>;
    /// The next event, waiting until `deadline`.
    fn next(&mut self, deadline: Instant) -> Result<Event>;
    /// The next event if one is waiting (never blocks); an error if the node is gone.
    fn try_next(&mut self) -> Result<Option<Event>>;
    /// The next event, waiting until `until`; None if none came by then (the node is left
    /// running); an error if the node is gone.
    fn wait_event(&mut self, until: Instant) -> Result<Option<Event>>;
    /// Ends it at once (a child process by its own handle).
    fn kill(&mut self);
    /// What a source said with its `sent` (send times on the runner's clock; in a process
    /// of its own, its memory), once [`Event::Sent`] has been handed out; None before, or
    /// from other roles.
    fn sent_facts(&self) -> Option<SentFacts> {
        None
    }
    /// The host it runs on, when not the runner's.
    fn host(&self) -> Option<&str> {
        None
    }
    /// Its clock against the runner's (a node on another host): before its start, and over
    /// the case once it has reported.
    fn clock(&self) -> Option<ClockEstimate> {
        None
    }
}

/// The facts of a node's `sent`, kept by whoever reads its messages for its handle.
type SentSlot = Arc<Mutex<Option<SentFacts>>>;

fn read_slot(slot: &SentSlot) -> Option<SentFacts> {
    *slot.lock().unwrap_or_else(|e| e.into_inner())
}

fn fill_slot(slot: &SentSlot, facts: SentFacts) {
    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(facts);
}

fn try_recv(events: &Receiver<Event>) -> std::result::Result<Option<Event>, ()> {
    match events.try_recv() {
        Ok(ev) => Ok(Some(ev)),
        Err(mpsc::TryRecvError::Empty) => Ok(None),
        Err(mpsc::TryRecvError::Disconnected) => Err(()),
    }
}

/// Why a node that passed its deadline was stopped.
pub const OVERRAN: &str =
    "did not answer in time and was stopped (a hang, or a count too large for --case-timeout)";

/// The failure of a node whose thread ended without a report.
fn thread_died(name: &str) -> Error {
    NodeFailure::lost(name, "died: its thread ended without a report").into()
}

fn recv(events: &Receiver<Event>, name: &str, deadline: Instant) -> Result<Option<Event>> {
    let left = deadline.saturating_duration_since(Instant::now());
    match events.recv_timeout(left) {
        Ok(ev) => Ok(Some(ev)),
        Err(RecvTimeoutError::Timeout) => Err(NodeFailure::lost(name, OVERRAN).into()),
        Err(RecvTimeoutError::Disconnected) => Ok(None),
    }
}

/// Why a node could not be told something: a node that has ended (its own timeout, an
/// error of its own) closed its end of the control channel, and what it said as it ended
/// is the cause, not the broken pipe. Waits briefly for its last words; `fallback` when it
/// said none.
fn own_failure(node: &mut dyn Placed, fallback: Error) -> Error {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        match node.wait_event(until) {
            Ok(Some(Event::Done(r))) => {
                return match *r {
                    Err(f) => f.into(),
                    Ok(_) => fallback,
                }
            }
            Ok(Some(_)) => continue,
            Ok(None) => return fallback,
            Err(died) => return died,
        }
    }
}

/// A node on a thread of this process.
struct OnThread {
    name: String,
    events: Receiver<Event>,
    control: Sender<ToNode>,
    sent: SentSlot,
}

impl Placed for OnThread {
    fn name(&self) -> &str {
        &self.name
    }

    fn send(&mut self, m: ToNode) -> Result<()> {
        if self.control.send(m).is_ok() {
            return Ok(());
        }
        let ended = Error::Io {
            op: format!("telling {}", self.name),
            source: std::io::Error::other("its thread has ended"),
        };
        Err(own_failure(self, ended))
    }

    fn next(&mut self, deadline: Instant) -> Result<Event> {
        recv(&self.events, &self.name, deadline)?.ok_or_else(|| thread_died(&self.name))
    }

    fn wait_event(&mut self, until: Instant) -> Result<Option<Event>> {
        let left = until.saturating_duration_since(Instant::now());
        match self.events.recv_timeout(left) {
            Ok(ev) => Ok(Some(ev)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(thread_died(&self.name)),
        }
    }

    fn try_next(&mut self) -> Result<Option<Event>> {
        try_recv(&self.events).map_err(|_| thread_died(&self.name))
    }

    fn kill(&mut self) {
        // A thread cannot be stopped from outside; its sockets' timeouts end it.
    }

    fn sent_facts(&self) -> Option<SentFacts> {
        read_slot(&self.sent)
    }
}

struct ThreadControl {
    events: Sender<Event>,
    control: Receiver<ToNode>,
    stop: bool,
    sent: SentSlot,
    offsets: Vec<(u32, i64)>,
}

impl Control for ThreadControl {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        self.events
            .send(Event::Ready(endpoints.to_vec()))
            .map_err(|_| Error::Protocol("the runner went away".into()))
    }

    fn wait_start(&mut self, timeout: Duration) -> Result<()> {
        match self.control.recv_timeout(timeout) {
            Ok(ToNode::Start { send_offsets, .. }) => {
                self.offsets = send_offsets;
                Ok(())
            }
            Ok(_) => Err(Error::Protocol("stopped before the start".into())),
            Err(_) => Err(Error::Protocol("no start signal from the runner".into())),
        }
    }

    fn sent_with(&mut self, facts: SentFacts) -> Result<()> {
        fill_slot(&self.sent, facts);
        let _ = self.events.send(Event::Sent);
        Ok(())
    }

    fn stop_requested(&mut self) -> bool {
        if let Ok(ToNode::Stop { .. }) = self.control.try_recv() {
            self.stop = true;
        }
        self.stop
    }

    fn send_offsets(&self) -> &[(u32, i64)] {
        &self.offsets
    }
}

/// Starts a node on a thread of this process, sharing `ctx`.
pub fn on_thread(ctx: &zmq::Context, spec: NodeSpec) -> Box<dyn Placed> {
    let (etx, erx) = mpsc::channel();
    let (ctx_tx, ctx_rx) = mpsc::channel();
    let ctx = ctx.clone();
    let name = format!("node {}", spec.name);
    let sent = SentSlot::default();
    let slot = sent.clone();
    let node = name.clone();
    thread::spawn(move || {
        let mut ctl = ThreadControl {
            events: etx.clone(),
            control: ctx_rx,
            stop: false,
            sent: slot,
            offsets: Vec::new(),
        };
        let r = run_node(&ctx, &spec, &mut ctl).map_err(|e| NodeFailure::failed(&node, &e));
        let _ = etx.send(Event::Done(Box::new(r)));
    });
    Box::new(OnThread {
        name,
        events: erx,
        control: ctx_tx,
        sent,
    })
}

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
enum Line {
    Hello(Hello),
    Event(Event),
}

/// A node in a process of its own: a child of the runner, or a process a launcher started
/// on another host.
struct InProcess {
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
}

impl InProcess {
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
    fn greet(&mut self, build_id: &str) -> Result<()> {
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
        let hello = match first {
            Line::Hello(h) => h,
            Line::Event(Event::Done(r)) => {
                return Err(match *r {
                    Err(f) => f.into(),
                    Ok(_) => Error::Protocol(format!("{} ended before it was ready", self.who())),
                })
            }
            _ => {
                self.kill();
                return Err(Error::Protocol(format!(
                    "{} did not say hello first: it is not zmqperf {} (control protocol 2); install the runner's build there, or set ship = true (docs/hosts.md)",
                    self.who(),
                    crate::VERSION
                )));
            }
        };
        self.v = if hello.versions.contains(&VERSION) {
            VERSION
        } else {
            V1
        };
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
        if self.host.is_some() {
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
        Ok(())
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

/// Starts a node in a child process of the runner: `exe __node`, its spec on stdin.
pub fn in_process(exe: &Path, spec: &NodeSpec) -> Result<Box<dyn Placed>> {
    launched(&ProcessLaunch::own(&exe.display().to_string()), None, spec)
}

/// Starts a node in a process of its own as `launch` says: zmqperf's own node (its spec as
/// the first line on its stdin; then its hello), on this host or, through `host`'s
/// launcher, on another; or a peer in another language (its command from its manifest, the
/// spec as its last argument; docs/peers.md).
pub fn launched(
    launch: &ProcessLaunch,
    host: Option<&Host>,
    spec: &NodeSpec,
) -> Result<Box<dyn Placed>> {
    let json = serde_json::to_string(spec).expect("specs serialise");
    if launch.spec == SpecPassing::LastArgument
        && crate::net::security::holds_secrets(
            &serde_json::to_value(spec).expect("specs serialise"),
        )
    {
        // A command line is readable by every local user (`ps`, /proc/PID/cmdline).
        return Err(Error::invalid(
            &format!("node {}", spec.name),
            "curve_keys",
            "its spec holds CURVE secret keys, which would go on the command line of a peer in another language, where any local user can read them; peers are given no CURVE security (docs/peers.md): place this node on zmqperf itself (its spec goes on stdin)",
        ));
    }
    let argv = launch.argv(&json);
    let (prog, args) = argv
        .split_first()
        .ok_or_else(|| Error::Protocol(format!("node {}: an empty command", spec.name)))?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (etx, erx) = mpsc::channel();
    let (ctx_clock, crx_clock) = mpsc::channel();
    let name = format!("node {}", spec.name);
    let sent = SentSlot::default();
    let slot = sent.clone();
    let node = name.clone();
    let born = Instant::now();
    let heard = Arc::new(AtomicU64::new(0));
    let heard_w = heard.clone();
    let mut child = ChildProc::spawn(
        Path::new(prog),
        &args,
        &[],
        &name,
        etx,
        move |line| {
            let t3 = now_ns();
            heard_w.store(born.elapsed().as_millis() as u64, Ordering::Relaxed);
            match ToRunner::read(&line) {
                Ok(ToRunner::Hello { hello, .. }) => Some(Line::Hello(hello)),
                Ok(ToRunner::Clock { t0, t1, t2, .. }) => {
                    let _ = ctx_clock.send(Exchange { t0, t1, t2, t3 });
                    None
                }
                Ok(ToRunner::Pong { .. }) => None,
                Ok(ToRunner::Ready { endpoints, .. }) => Some(Line::Event(Event::Ready(endpoints))),
                Ok(ToRunner::Sent { facts, .. }) => {
                    fill_slot(&slot, facts);
                    Some(Line::Event(Event::Sent))
                }
                Ok(ToRunner::Report { report, .. }) => {
                    let mut report = *report;
                    // A peer's swarm gives its process's usage once, as every node does.
                    if let (Some(sw), Some(u)) = (report.swarm.as_mut(), &report.usage) {
                        if sw.usage.cpu_user_ms == 0.0 && sw.usage.peak_rss_kib == 0 {
                            sw.usage.cpu_user_ms = u.cpu_user_ms;
                            sw.usage.cpu_sys_ms = u.cpu_sys_ms;
                            sw.usage.peak_rss_kib = u.peak_rss_kib;
                        }
                    }
                    Some(Line::Event(Event::Done(Box::new(Ok(report)))))
                }
                Ok(ToRunner::Error {
                    message, exit_code, ..
                }) => Some(Line::Event(Event::Done(Box::new(Err(
                    NodeFailure::reported(&node, &message, exit_code),
                ))))),
                // A line that is not a control message of this version: a protocol error.
                Err(why) => Some(Line::Event(Event::Done(Box::new(Err(
                    NodeFailure::reported(&node, &why, 9),
                ))))),
            }
        },
        None,
    )?;
    let stdin_spec = launch.spec == SpecPassing::Stdin;
    if stdin_spec {
        child.write_line(&json).map_err(|e| Error::Io {
            op: format!("giving {name} its spec"),
            source: e,
        })?;
    }
    let mut p = InProcess {
        name,
        events: erx,
        child,
        sent,
        v: V1,
        hello: None,
        host: host.filter(|h| !h.is_local()).cloned(),
        clocks: crx_clock,
        heard,
        born,
        beat_stop: Arc::new(AtomicBool::new(false)),
        clock_before: None,
        clock: None,
        finished: false,
    };
    if stdin_spec {
        p.greet(&crate::runner::build_id())?;
        if let (Some(h), Some(m)) = (host, p.hello.as_ref().and_then(|h| h.machine.as_deref())) {
            super::hosts::saw(h, m);
        }
    }
    Ok(Box::new(p))
}

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

/// Writes one line to the runner (whole, under stdout's lock: the role's thread and the
/// reader thread both write).
fn say(m: &ToRunner) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", m.line())
        .and_then(|_| out.flush())
        .map_err(|e| Error::Io {
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
                    eprintln!(
                        "zmqperf node: ignored a line from the runner that is not a control message of versions {V1} to {VERSION}: {}",
                        String::from_utf8_lossy(&line).trim_end()
                    );
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
            Ok(FromRunner::Stop) => Err(Error::Protocol("expected start, got stop".into())),
            Ok(FromRunner::Closed) => {
                self.closed = true;
                Err(Error::Protocol(
                    "expected start, but the runner closed the control channel".into(),
                ))
            }
            Err(_) => Err(Error::Protocol("no start signal from the runner".into())),
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

/// This host's name (uname's nodename).
pub fn hostname() -> String {
    // SAFETY: uname fills the struct we own.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    // SAFETY: nodename is a NUL-terminated C string inside the struct.
    unsafe { std::ffi::CStr::from_ptr(u.nodename.as_ptr()) }
        .to_string_lossy()
        .into_owned()
}

/// The hidden `__node` command: reads its spec (the first line on stdin, or `spec_arg`),
/// says hello (version 2, spec on stdin), loads the libzmq the spec names, plays the node
/// and prints its report.
pub fn child_main(spec_arg: Option<&str>) -> i32 {
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
    let text = match spec_arg {
        Some(s) => s.to_string(),
        None => match lines.next(SPEC_WAIT_MS) {
            Some(l) => String::from_utf8_lossy(&l).into_owned(),
            None => return bad(
                "bad node spec: none arrived on stdin within 10 s (zmqperf __node reads its spec as the first line on stdin)".into(),
                2,
            ),
        },
    };
    let spec: NodeSpec = match serde_json::from_str(text.trim_end()) {
        Ok(s) => s,
        Err(e) => return bad(format!("bad node spec: {e}"), 2),
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
        let _ = say(&ToRunner::Hello {
            v,
            hello: Hello {
                versions: vec![V1, VERSION],
                version: crate::VERSION.to_string(),
                build_id: crate::runner::build_id(),
                pid: std::process::id(),
                host: hostname(),
                machine: Some(Box::new(crate::host::host_environment(""))),
            },
        });
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
