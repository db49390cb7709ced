//! Starting a node in a process of its own (a child of the runner, a peer in another
//! language, or a node on another host through its launcher), and the reader of its
//! output, which turns each control line into what the runner waits for.

use super::process::{InProcess, Line, Wires};
use super::{fill_slot, Event, Placed, SentSlot};
use crate::child::ChildProc;
use crate::clock::now_ns;
use crate::error::{Error, NodeFailure, Result};
use crate::roles::{NodeSpec, RoleReport};
use crate::runner::control::ToRunner;
use crate::runner::hosts::Host;
use crate::runner::launch::{ProcessLaunch, SpecPassing};
use crate::runner::sync::Exchange;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::time::Instant;

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
    refuse_secrets_on_command_line(launch, spec)?;
    let argv = launch.argv(&json);
    let (prog, args) = argv
        .split_first()
        .ok_or_else(|| Error::Internal(format!("node {}: an empty command", spec.name)))?;
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let name = format!("node {}", spec.name);
    let (reader, events, wires) = Reader::new(&name);
    let mut child = ChildProc::spawn(
        Path::new(prog),
        &args,
        &[],
        &name,
        events,
        move |line| reader.line(&line),
        None,
    )?;
    let stdin_spec = launch.spec == SpecPassing::Stdin;
    if stdin_spec {
        child.write_line(&json).map_err(|e| Error::Io {
            op: format!("giving {name} its spec"),
            source: e,
        })?;
    }
    let remote = host.filter(|h| !h.is_local()).cloned();
    let mut p = InProcess::new(name, child, remote, wires);
    if stdin_spec {
        p.greet(&crate::runner::build_id())?;
        if let (Some(h), Some(m)) = (host, p.machine()) {
            crate::runner::hosts::saw(h, m);
        }
    }
    Ok(Box::new(p))
}

/// A peer in another language is given its spec as its last argument: one that holds CURVE
/// secret keys is refused.
fn refuse_secrets_on_command_line(launch: &ProcessLaunch, spec: &NodeSpec) -> Result<()> {
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
    Ok(())
}

/// The reader of a node's output (on the thread that reads it): answers to the clock go to
/// their own channel, `sent` fills its slot, every line stamps when the node was last heard.
struct Reader {
    /// "node x", for the failures it reports.
    node: String,
    slot: SentSlot,
    clocks: Sender<Exchange>,
    heard: Arc<AtomicU64>,
    born: Instant,
}

impl Reader {
    /// A reader for node `name`, the sender its events go to, and the runner's ends.
    fn new(name: &str) -> (Reader, Sender<Line>, Wires) {
        let (etx, erx) = mpsc::channel();
        let (ctx_clock, crx_clock) = mpsc::channel();
        let sent = SentSlot::default();
        let born = Instant::now();
        let heard = Arc::new(AtomicU64::new(0));
        let reader = Reader {
            node: name.to_string(),
            slot: sent.clone(),
            clocks: ctx_clock,
            heard: heard.clone(),
            born,
        };
        let wires = Wires {
            events: erx,
            clocks: crx_clock,
            heard,
            born,
            sent,
        };
        (reader, etx, wires)
    }

    /// What one line of the node's output hands on, if anything.
    fn line(&self, line: &str) -> Option<Line> {
        let t3 = now_ns();
        self.heard
            .store(self.born.elapsed().as_millis() as u64, Ordering::Relaxed);
        let done = |r| Some(Line::Event(Event::Done(Box::new(r))));
        match ToRunner::read(line) {
            Ok(ToRunner::Hello { hello, .. }) => Some(Line::Hello(hello)),
            Ok(ToRunner::Clock { t0, t1, t2, .. }) => {
                let _ = self.clocks.send(Exchange { t0, t1, t2, t3 });
                None
            }
            Ok(ToRunner::Pong { .. }) => None,
            Ok(ToRunner::Interval { node, record, .. }) => {
                crate::roles::live::interval(&node, &record);
                None
            }
            Ok(ToRunner::Ready { endpoints, .. }) => Some(Line::Event(Event::Ready(endpoints))),
            Ok(ToRunner::Sent { facts, .. }) => {
                fill_slot(&self.slot, facts);
                Some(Line::Event(Event::Sent))
            }
            Ok(ToRunner::Report { report, .. }) => done(Ok(with_process_usage(*report))),
            Ok(ToRunner::Error {
                message, exit_code, ..
            }) => done(Err(NodeFailure::reported(&self.node, &message, exit_code))),
            // A line that is not a control message of this version: a protocol error.
            Err(why) => done(Err(NodeFailure::reported(&self.node, &why, 9))),
        }
    }
}

/// A peer's swarm gives its process's usage once, as every node does: the swarm's usage is
/// filled from the node's when the peer left it empty.
fn with_process_usage(mut report: RoleReport) -> RoleReport {
    if let (Some(sw), Some(u)) = (report.swarm.as_mut(), &report.usage) {
        if sw.usage.cpu_user_ms == 0.0 && sw.usage.peak_rss_kib == 0 {
            sw.usage.cpu_user_ms = u.cpu_user_ms;
            sw.usage.cpu_sys_ms = u.cpu_sys_ms;
            sw.usage.peak_rss_kib = u.peak_rss_kib;
        }
    }
    report
}
