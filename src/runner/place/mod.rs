//! Placing nodes, behind one trait ([`Placed`]): on a thread of the runner (sharing its
//! context, needed for inproc; [`thread`]) or in a process of its own (the same binary
//! re-executed with the hidden `__node` command, a peer in another language, or a node on
//! another host through its launcher; [`spawn`] starts it, [`process`] drives it). Both
//! speak the control protocol of [`super::control`]; [`node`] is the node process's side of
//! it.

mod node;
mod process;
mod spawn;
mod thread;

pub use node::{child_main, DEADLINE_EXIT};
pub use spawn::{in_process, launched};
pub use thread::on_thread;

use super::control::{SentFacts, ToNode};
use super::sync::ClockEstimate;
use crate::error::{Error, NodeFailure, Result};
use crate::roles::RoleReport;
use std::sync::{Arc, Mutex};
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
    /// Puts back an event taken early (the report [`own_failure`] read to explain a failed
    /// send): the next call of `next`, `try_next` or `wait_event` hands it out first.
    fn keep(&mut self, ev: Event);
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

/// Why a node that passed its deadline was stopped.
pub const OVERRAN: &str =
    "did not answer in time and was stopped (a hang, or a count too large for --case-timeout)";

/// Why a node could not be told something: a node that has ended (its own timeout, an
/// error of its own) closed its end of the control channel, and what it said as it ended
/// is the cause, not the broken pipe. Waits briefly for its last words; `fallback` when it
/// said none. The report read is put back ([`Placed::keep`]): a node that ended by itself
/// just before it was told to stop still hands its report to the wait for it.
fn own_failure(node: &mut dyn Placed, fallback: Error) -> Error {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        match node.wait_event(until) {
            Ok(Some(Event::Done(r))) => {
                let e = match &*r {
                    Err(f) => f.clone().into(),
                    Ok(_) => fallback,
                };
                node.keep(Event::Done(r));
                return e;
            }
            Ok(Some(_)) => continue,
            Ok(None) => return fallback,
            Err(died) => return died,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// A node whose control channel is closed (it ended by itself) and whose events are
    /// `events`: what a thread or a process that finished a moment ago looks like.
    struct Ended {
        events: VecDeque<Event>,
        kept: Option<Event>,
    }

    impl Placed for Ended {
        fn name(&self) -> &str {
            "node sink"
        }
        fn send(&mut self, _m: ToNode) -> Result<()> {
            let ended = Error::Internal("its thread has ended".into());
            Err(own_failure(self, ended))
        }
        fn next(&mut self, _deadline: Instant) -> Result<Event> {
            self.wait_event(Instant::now())?
                .ok_or_else(|| Error::Internal("died: its thread ended without a report".into()))
        }
        fn try_next(&mut self) -> Result<Option<Event>> {
            self.wait_event(Instant::now())
        }
        fn wait_event(&mut self, _until: Instant) -> Result<Option<Event>> {
            Ok(self.kept.take().or_else(|| self.events.pop_front()))
        }
        fn kill(&mut self) {}
        fn keep(&mut self, ev: Event) {
            self.kept = Some(ev);
        }
    }

    #[test]
    fn a_stop_sent_to_a_node_that_just_ended_leaves_its_report_to_the_wait() {
        let report = RoleReport {
            forwarded: Some(7),
            ..Default::default()
        };
        let mut node = Ended {
            events: VecDeque::from([Event::Done(Box::new(Ok(report)))]),
            kept: None,
        };
        // The stop cannot be told (the node has ended): that send fails, as before...
        let e = node.send(ToNode::Stop { v: 2 }).unwrap_err();
        assert!(e.to_string().contains("its thread has ended"), "{e}");
        // ...and the report it read to explain that is still there for the wait (it was
        // thrown away, and the case failed with "its thread ended without a report").
        match node.next(Instant::now()).unwrap() {
            Event::Done(r) => assert_eq!(r.unwrap().forwarded, Some(7)),
            _ => panic!("not the report"),
        }
        // A node that failed: the send says its own failure, and the wait gets it too.
        let failure = NodeFailure::lost("node sink", "its socket closed");
        let mut node = Ended {
            events: VecDeque::from([Event::Done(Box::new(Err(failure.clone())))]),
            kept: None,
        };
        let e = node.send(ToNode::Stop { v: 2 }).unwrap_err();
        assert!(e.to_string().contains("its socket closed"), "{e}");
        match node.next(Instant::now()).unwrap() {
            Event::Done(r) => assert_eq!(r.unwrap_err(), failure),
            _ => panic!("not the failure"),
        }
    }
}
