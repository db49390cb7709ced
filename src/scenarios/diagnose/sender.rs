//! The sender process of the experiments that need one (fast quit: the process exits;
//! memory: its resident set is measured): the source role in a child process of its own
//! (`zmqperf __node`, placed by [`crate::runner::place::in_process`]), driven over the
//! control protocol like any node: start, wait for `sent` (with the send times and the
//! process's memory), maybe `stop`, then its report (with the time its context ended).

use crate::error::{Error, NodeFailure, Result};
use crate::roles::{NodeSpec, Quit, Role, RoleReport, SentFacts, SockPlan};
use crate::runner::control::{ToNode, VERSION};
use crate::runner::place::{in_process, Event, Placed};
use crate::topology::{SocketOptions, SocketType};
use std::path::Path;
use std::time::{Duration, Instant};

/// How often a wait for the sender looks at its messages (and runs the caller's tick).
const POLL: Duration = Duration::from_millis(2);

/// The node spec of a sender: a source on a `kind` socket (PUSH, PAIR, or an XPUB that
/// waits for the subscription first) connected to `endpoint`, sending `count` messages of
/// `size` bytes (the last with the end-of-stream mark) with ZMQ_SNDHWM `sndhwm` (0: no
/// limit), then ending as `quit` says.
pub fn spec(
    endpoint: &str,
    kind: SocketType,
    count: u64,
    size: usize,
    sndhwm: i32,
    quit: Quit,
    timeout: Duration,
) -> NodeSpec {
    // Linger is the quit's to set; as on the experiments' own sockets, messages queue on
    // a connection still being made.
    let options = SocketOptions {
        sndhwm: Some(sndhwm),
        immediate: Some(false),
        ..Default::default()
    };
    let socket = SockPlan {
        kind,
        bind: Vec::new(),
        connect: vec![endpoint.to_string()],
        options,
    };
    let mut s = NodeSpec::single("sender", Role::Source, socket, timeout);
    s.count = count;
    s.size = size;
    s.subscriptions = u32::from(kind == SocketType::Xpub);
    s.quit = quit;
    s.peer_label = Some("the experiment's receiver".into());
    s
}

/// The experiment's handle on its sender process.
pub struct Sender {
    node: Box<dyn Placed>,
    report: Option<std::result::Result<RoleReport, NodeFailure>>,
}

impl Sender {
    /// Starts the sender process and, once it is connected, gives it the start.
    pub fn start(exe: &Path, spec: &NodeSpec, deadline: Instant) -> Result<Sender> {
        let mut s = Sender {
            node: in_process(exe, spec)?,
            report: None,
        };
        match s.node.next(deadline)? {
            Event::Ready(_) => {}
            Event::Done(r) => return Err(failed("before it was connected", *r)),
            Event::Sent => {
                return Err(Error::NodeGone(
                    "the sender process sent before it was connected".into(),
                ))
            }
        }
        s.node.send(ToNode::start(VERSION))?;
        Ok(s)
    }

    /// Waits until `deadline` for the sender's last message to leave and returns what it
    /// said with it, calling `tick` every few milliseconds meanwhile (a socket of this
    /// thread must handle its commands to attach a new connection).
    pub fn sent(&mut self, deadline: Instant, tick: &mut dyn FnMut()) -> Result<SentFacts> {
        loop {
            match self.node.try_next()? {
                Some(Event::Sent) => {
                    return self.node.sent_facts().ok_or_else(|| {
                        Error::NodeGone("the sender process said sent without its figures".into())
                    })
                }
                Some(Event::Done(r)) => return Err(failed("before its last message left", *r)),
                Some(Event::Ready(_)) => {}
                None if Instant::now() >= deadline => {
                    self.node.kill();
                    return Err(Error::NodeGone(
                        "the sender process did not send everything in time and was stopped".into(),
                    ));
                }
                None => {
                    tick();
                    std::thread::sleep(POLL);
                }
            }
        }
    }

    /// Tells a sender whose quit is [`Quit::WaitForStop`] to close (ignored if it has gone).
    pub fn stop(&mut self) {
        let _ = self.node.send(ToNode::Stop { v: VERSION });
    }

    /// Waits until `deadline` for the sender's report; stops the process if it does not
    /// come.
    pub fn report(&mut self, deadline: Instant) -> Result<RoleReport> {
        while self.report.is_none() {
            match self.node.next(deadline)? {
                Event::Done(r) => self.report = Some(*r),
                Event::Ready(_) | Event::Sent => {}
            }
        }
        match self.report.clone() {
            Some(Ok(r)) => Ok(r),
            Some(Err(e)) => Err(failed("", Err(e))),
            None => unreachable!("the loop above ends with a report"),
        }
    }
}

/// The error of a sender that ended (with `when` saying at which point, if early).
fn failed(when: &str, r: std::result::Result<RoleReport, NodeFailure>) -> Error {
    match r {
        Err(f) => Error::Node(NodeFailure {
            what: format!("the sender process: {}", f.what),
            code: f.code,
        }),
        Ok(_) => Error::NodeGone(format!("the sender process ended {when}")),
    }
}

/// A figure the sender's `sent` must carry.
pub fn figure(v: Option<u64>, what: &str) -> Result<u64> {
    v.ok_or_else(|| Error::NodeGone(format!("the sender process did not report {what}")))
}
