//! Placing nodes, behind one trait ([`Placed`]): on a thread of the runner (sharing its
//! context, needed for inproc) or in a child process (the same binary re-executed with the
//! hidden `__node` command). Both speak the control protocol of [`super::control`]; a peer
//! in another language or an agent on another host is one more implementation.

use super::control::{SentFacts, ToNode, ToRunner, VERSION};
use crate::child::ChildProc;
use crate::clock::now_ns;
use crate::error::{Error, NodeFailure, Result};
use crate::roles::{run_node, Control, NodeSpec, RoleReport, CHILD_ENV};
use crate::zmq;
use std::path::Path;
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
    /// What a source said with its `sent` (send times; in a process of its own, its
    /// memory), once [`Event::Sent`] has been handed out; None before, or from other roles.
    fn sent_facts(&self) -> Option<SentFacts> {
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
        self.control.send(m).map_err(|_| Error::Io {
            op: format!("telling {}", self.name),
            source: std::io::Error::other("its thread has ended"),
        })
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
}

impl Control for ThreadControl {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        self.events
            .send(Event::Ready(endpoints.to_vec()))
            .map_err(|_| Error::Protocol("the runner went away".into()))
    }

    fn wait_start(&mut self, timeout: Duration) -> Result<()> {
        match self.control.recv_timeout(timeout) {
            Ok(ToNode::Start { .. }) => Ok(()),
            Ok(ToNode::Stop { .. }) => Err(Error::Protocol("stopped before the start".into())),
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

/// A node in a child process.
struct InProcess {
    name: String,
    events: Receiver<Event>,
    child: ChildProc,
    sent: SentSlot,
}

impl InProcess {
    /// The failure of a child that ended without its report: how it ended (its exit code,
    /// or the signal that killed it) and the last lines it wrote on stderr.
    fn died(&mut self) -> Error {
        let why = self.child.exit_reason();
        NodeFailure::lost(&self.name, format!("(pid {}) died: {why}", self.child.id())).into()
    }
}

impl Placed for InProcess {
    fn name(&self) -> &str {
        &self.name
    }

    fn send(&mut self, m: ToNode) -> Result<()> {
        self.child.write_line(&m.line()).map_err(|e| Error::Io {
            op: format!("telling {}", self.name),
            source: e,
        })
    }

    fn next(&mut self, deadline: Instant) -> Result<Event> {
        match recv(&self.events, &self.name, deadline) {
            Ok(Some(ev)) => Ok(ev),
            Ok(None) => Err(self.died()),
            Err(e) => {
                self.child.kill();
                Err(e)
            }
        }
    }

    fn wait_event(&mut self, until: Instant) -> Result<Option<Event>> {
        let left = until.saturating_duration_since(Instant::now());
        match self.events.recv_timeout(left) {
            Ok(ev) => Ok(Some(ev)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(self.died()),
        }
    }

    fn try_next(&mut self) -> Result<Option<Event>> {
        match try_recv(&self.events) {
            Ok(ev) => Ok(ev),
            Err(()) => Err(self.died()),
        }
    }

    fn kill(&mut self) {
        self.child.kill();
    }

    fn sent_facts(&self) -> Option<SentFacts> {
        read_slot(&self.sent)
    }
}

/// Starts a node in a child process: `exe __node '<spec as JSON>'`.
pub fn in_process(exe: &Path, spec: &NodeSpec) -> Result<Box<dyn Placed>> {
    spawn_node(exe, &["__node"], &[(CHILD_ENV, "1")], spec)
}

/// Starts a node played by a peer in another language: its command (from its manifest)
/// with the spec as the last argument (docs/peers.md).
pub fn in_peer(command: &[String], spec: &NodeSpec) -> Result<Box<dyn Placed>> {
    let (prog, args) = command
        .split_first()
        .ok_or_else(|| Error::Protocol(format!("node {}: an empty peer command", spec.name)))?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    spawn_node(Path::new(prog), &args, &[], spec)
}

fn spawn_node(
    exe: &Path,
    first_args: &[&str],
    envs: &[(&str, &str)],
    spec: &NodeSpec,
) -> Result<Box<dyn Placed>> {
    let json = serde_json::to_string(spec).expect("specs serialise");
    let (etx, erx) = mpsc::channel();
    let name = format!("node {}", spec.name);
    let sent = SentSlot::default();
    let slot = sent.clone();
    let node = name.clone();
    let mut args = first_args.to_vec();
    args.push(&json);
    let child = ChildProc::spawn(
        exe,
        &args,
        envs,
        &name,
        etx,
        move |line| match ToRunner::read(&line) {
            Ok(ToRunner::Ready { endpoints, .. }) => Some(Event::Ready(endpoints)),
            Ok(ToRunner::Sent { facts, .. }) => {
                fill_slot(&slot, facts);
                Some(Event::Sent)
            }
            Ok(ToRunner::Report { report, .. }) => Some(Event::Done(Box::new(Ok(*report)))),
            Ok(ToRunner::Error {
                message, exit_code, ..
            }) => Some(Event::Done(Box::new(Err(NodeFailure::reported(
                &node, &message, exit_code,
            ))))),
            // A line that is not a control message of this version: a protocol error.
            Err(why) => Some(Event::Done(Box::new(Err(NodeFailure::reported(
                &node, &why, 9,
            ))))),
        },
        None,
    )?;
    Ok(Box::new(InProcess {
        name,
        events: erx,
        child,
        sent,
    }))
}

/// The child's side: control lines on stdin and stdout. Reads stdin itself (not through a
/// buffered reader) so that a poll of the descriptor never misses a line already read.
struct StdioControl {
    pending: Vec<u8>,
    stop: bool,
}

impl StdioControl {
    fn say(&self, m: &ToRunner) -> Result<()> {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", m.line())
            .and_then(|_| out.flush())
            .map_err(|e| Error::Io {
                op: "telling the runner".into(),
                source: e,
            })
    }

    /// The next whole line from the runner, waiting up to `ms` (0: do not wait).
    fn line(&mut self, ms: i32) -> Option<ToNode> {
        loop {
            if let Some(nl) = self.pending.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=nl).collect();
                match ToNode::parse(&line) {
                    Some(m) => return Some(m),
                    None => {
                        eprintln!(
                            "zmqperf node: ignored a line from the runner that is not a control message of version {VERSION}: {}",
                            String::from_utf8_lossy(&line).trim_end()
                        );
                        continue;
                    }
                }
            }
            let mut fds = libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one pollfd we own, for stdin.
            if unsafe { libc::poll(&mut fds, 1, ms) } <= 0 {
                return None;
            }
            let mut buf = [0u8; 4096];
            // SAFETY: reading into a buffer we own, at most its length.
            let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                // The runner closed our input: take it as a stop.
                return Some(ToNode::Stop { v: VERSION });
            }
            self.pending.extend_from_slice(&buf[..n as usize]);
        }
    }
}

impl Control for StdioControl {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        self.say(&ToRunner::Ready {
            v: VERSION,
            endpoints: endpoints.to_vec(),
        })
    }

    fn wait_start(&mut self, timeout: Duration) -> Result<()> {
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        match self.line(ms) {
            Some(ToNode::Start { .. }) => Ok(()),
            Some(other) => Err(Error::Protocol(format!("expected start, got {other:?}"))),
            None => Err(Error::Protocol("no start signal from the runner".into())),
        }
    }

    fn sent_with(&mut self, facts: SentFacts) -> Result<()> {
        self.say(&ToRunner::Sent { v: VERSION, facts })
    }

    fn stop_requested(&mut self) -> bool {
        if !self.stop {
            self.stop = matches!(self.line(0), Some(ToNode::Stop { .. }));
        }
        self.stop
    }
}

/// The hidden `__node` command: plays one node and prints its report.
pub fn child_main(spec_json: &str) -> i32 {
    let mut ctl = StdioControl {
        pending: Vec::new(),
        stop: false,
    };
    let spec: NodeSpec = match serde_json::from_str(spec_json) {
        Ok(s) => s,
        Err(e) => {
            let _ = ctl.say(&ToRunner::Error {
                v: VERSION,
                message: format!("bad node spec: {e}"),
                exit_code: 2,
            });
            return 2;
        }
    };
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
            let _ = ctl.say(&ToRunner::Report {
                v: VERSION,
                report: Box::new(report),
            });
            0
        }
        Err(e) => {
            let _ = ctl.say(&ToRunner::Error {
                v: VERSION,
                message: e.to_string(),
                exit_code: e.exit_code(),
            });
            e.exit_code()
        }
    }
}
