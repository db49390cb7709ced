//! A node on a thread of the runner: it shares the runner's context (which inproc needs)
//! and hears the control protocol over two channels instead of a pipe.

use super::{fill_slot, own_failure, read_slot, Event, Placed, SentSlot, OVERRAN};
use crate::error::{Error, NodeFailure, Result};
use crate::roles::{run_node, Control, NodeSpec};
use crate::runner::control::{SentFacts, ToNode};
use crate::zmq;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

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

fn try_recv(events: &Receiver<Event>) -> std::result::Result<Option<Event>, ()> {
    match events.try_recv() {
        Ok(ev) => Ok(Some(ev)),
        Err(mpsc::TryRecvError::Empty) => Ok(None),
        Err(mpsc::TryRecvError::Disconnected) => Err(()),
    }
}

/// A node on a thread of this process.
struct OnThread {
    name: String,
    /// An event taken early and put back ([`Placed::keep`]).
    kept: Option<Event>,
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
        if let Some(ev) = self.kept.take() {
            return Ok(ev);
        }
        recv(&self.events, &self.name, deadline)?.ok_or_else(|| thread_died(&self.name))
    }

    fn wait_event(&mut self, until: Instant) -> Result<Option<Event>> {
        if let Some(ev) = self.kept.take() {
            return Ok(Some(ev));
        }
        let left = until.saturating_duration_since(Instant::now());
        match self.events.recv_timeout(left) {
            Ok(ev) => Ok(Some(ev)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(thread_died(&self.name)),
        }
    }

    fn try_next(&mut self) -> Result<Option<Event>> {
        if let Some(ev) = self.kept.take() {
            return Ok(Some(ev));
        }
        try_recv(&self.events).map_err(|_| thread_died(&self.name))
    }

    fn kill(&mut self) {
        // A thread cannot be stopped from outside; its sockets' timeouts end it.
    }

    fn keep(&mut self, ev: Event) {
        self.kept = Some(ev);
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
            .map_err(|_| Error::RunnerGone("the runner went away".into()))
    }

    fn wait_start(&mut self, timeout: Duration) -> Result<()> {
        match self.control.recv_timeout(timeout) {
            Ok(ToNode::Start { send_offsets, .. }) => {
                self.offsets = send_offsets;
                Ok(())
            }
            Ok(_) => Err(Error::RunnerGone("stopped before the start".into())),
            Err(_) => Err(Error::RunnerGone("no start signal from the runner".into())),
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
        kept: None,
        events: erx,
        control: ctx_tx,
        sent,
    })
}
