//! What a fan-out report says went wrong: the causes of its losses (the one cause rule with
//! what the publisher did), a run that did not finish, a failed process, the raw-socket
//! floor's failure, and the loss that fails the command.

use super::FanoutReport;
use crate::error::Error;
use crate::stats::{loss_causes, Cause, Facts, SenderFacts};
use crate::units::grouped;

impl FanoutReport {
    /// What the publisher did, for the causes of the holes: with --lossy it dropped at its
    /// high-water mark and did not wait for its subscribers; it always waits for them to
    /// leave before it closes.
    pub fn sender_facts(&self) -> SenderFacts {
        SenderFacts {
            drops_at_hwm: self.lossy,
            waited_for_subscribers: !self.lossy,
            waited_at_end: true,
            ..SenderFacts::default()
        }
    }

    /// The facts the causes of its holes are decided from: the publisher's, and SUB
    /// subscribers.
    pub fn facts(&self) -> Facts {
        Facts {
            receiver: Some(crate::topology::SocketType::Sub),
            ..Facts::of_run(self.sender_facts())
        }
    }

    /// The causes of the holes, worst first, with the fanout flags that fix them.
    pub fn loss_cause(&self) -> String {
        loss_causes(&self.delivery, &self.facts(), |_, cause| {
            match cause {
            Cause::SlowJoiner => Some(
                "leave out --lossy (the publisher then waits for every subscription)".into(),
            ),
            Cause::HighWaterMark => Some(
                "a longer -t interval, --hwm 0 (no limit), or leave out --lossy (the publisher then blocks instead of dropping)"
                    .into(),
            ),
            _ => None,
        }
        })
    }

    /// The subscriber processes asked for: those that reported and those left out.
    pub fn requested_processes(&self) -> u32 {
        self.processes + self.failed_processes.len() as u32
    }

    /// Why the run measured less than it was asked to, if it did: subscriber processes left
    /// out, or a stream whose end never came (the publisher stopped or died part-way). Loss
    /// is not this: it is a figure of a whole run.
    pub fn incomplete(&self) -> Option<String> {
        if let Some(why) = self.publisher.as_ref().and_then(|p| p.interrupted.clone()) {
            return Some(why);
        }
        if crate::interrupt::interrupted() {
            return Some(format!(
                "interrupted by {}: the subscribers were told to stop and reported what had arrived",
                crate::interrupt::interrupted_by()
            ));
        }
        let cut = !self.failed_processes.is_empty() || !self.stream_ended;
        match self.loss_error().filter(|_| cut) {
            Some(e @ (Error::Shortfall(_) | Error::CutShort { .. })) => Some(format!(
                "{} of {} subscriber processes reported: {e}",
                self.processes,
                self.requested_processes()
            )),
            _ => None,
        }
    }

    /// How the command ends once its report is printed: the loss error, except that with
    /// `--lossy` loss is what was asked to be measured (a publisher that drops by design),
    /// so plain loss is not an error then; a subscriber left out, or a stream cut short,
    /// still is. The same rule as `run --lossy` (docs/commands.md, "Loss and the exit code").
    pub fn failure(&self) -> Option<Error> {
        match self.loss_error() {
            Some(Error::Lost { .. }) if self.lossy => None,
            other => other,
        }
    }

    /// The error for a run that lost messages (the report is printed first), if it did.
    pub fn loss_error(&self) -> Option<Error> {
        let d = &self.delivery;
        if !self.failed_processes.is_empty() {
            return Some(Error::Shortfall(format!(
                "{} subscriber process(es) did not report and were left out of the figures: {}",
                self.failed_processes.len(),
                self.failed_processes.join("; ")
            )));
        }
        if !self.stream_ended && d.received > 0 {
            return Some(Error::CutShort {
                detail: format!(
                    "no subscriber saw the end of the stream; the last message to arrive was number {} of the publisher's",
                    grouped(self.expected_per_subscriber)
                ),
                received: d.received,
                expected: d.expected,
                at_start: d.lost_at_start,
                in_middle: d.lost_in_middle,
                at_end: d.lost_at_end,
                cause: "the publisher stopped or died before its last message (loss at the end cannot be counted without knowing how many it meant to send: give --expect N)".into(),
            });
        }
        if d.lost > 0 {
            return Some(Error::Lost {
                lost: d.lost,
                expected: d.expected,
                at_start: d.lost_at_start,
                in_middle: d.lost_in_middle,
                at_end: d.lost_at_end,
                cause: self.loss_cause(),
            });
        }
        self.floor.as_ref().and_then(floor_error)
    }
}

/// The error for a raw-socket floor that did not deliver everything, if it did not.
fn floor_error(f: &crate::scenarios::fanout::FanoutFloor) -> Option<Error> {
    let d = &f.delivery;
    if !f.failed_processes.is_empty() {
        return Some(Error::Shortfall(format!(
            "in the raw-socket floor, {} subscriber process(es) did not report and were left out of its figures: {}",
            f.failed_processes.len(),
            f.failed_processes.join("; ")
        )));
    }
    if d.lost > 0 || !f.stream_ended {
        return Some(Error::Lost {
            lost: d.lost,
            expected: d.expected,
            at_start: d.lost_at_start,
            in_middle: d.lost_in_middle,
            at_end: d.lost_at_end,
            cause: "these were lost in the raw-socket floor run, and plain stream sockets lose nothing while both ends run: a subscriber process or the raw publisher stopped part-way".into(),
        });
    }
    None
}
