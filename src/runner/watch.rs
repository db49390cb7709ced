//! Watching the placed replicas of a repetition: waiting on one while looking at the
//! others, so that a failure ends the repetition at once, and bounding each wait (a swarm
//! by the end of the stream plus its idle time and a grace).

use super::place::{Event, Placed};
use crate::error::NodeFailure;
use crate::roles::RoleReport;
use crate::runner::control::{ToNode, VERSION};
use std::time::{Duration, Instant};

/// A swarm has this long beyond its idle time to end its measurement once the stream is
/// over (its sources are done, or another swarm has finished).
pub(super) const SWARM_GRACE: Duration = Duration::from_secs(5);
/// How long a swarm told to stop has to answer with its report.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// A replica's end: its report or why it failed (None while it runs).
pub(super) type Outcome = Option<std::result::Result<RoleReport, NodeFailure>>;

/// The placed replicas of a repetition and what each has said so far.
pub(super) struct Watch {
    pub placed: Vec<Box<dyn Placed>>,
    pub done: Vec<Outcome>,
    pub sent: Vec<bool>,
    pub deadline: Instant,
    /// A replica failed: the repetition ends at once.
    pub failed: bool,
    /// Swarms whose failure does not end the repetition (the others are still reported).
    pub tolerated: Vec<bool>,
    /// A signal ends the repetition at once, unkept (`run`); false for a fan-out, whose
    /// publisher ends its stream early and whose swarms are told to stop and report.
    pub interruptible: bool,
}

/// How often a stalled wait for a swarm is shown.
const NOTE_EVERY: Duration = Duration::from_secs(2);

/// How long a wait on one replica lasts before the others are looked at.
const WATCH_SLICE: Duration = Duration::from_millis(50);

impl Watch {
    fn take(&mut self, i: usize, ev: Event) {
        match ev {
            Event::Done(r) => {
                self.failed |= r.is_err() && !self.tolerated[i];
                self.done[i] = Some(*r);
            }
            Event::Sent => self.sent[i] = true,
            Event::Ready(_) => {}
        }
    }

    /// Waits for replica `i`'s report (or, with `until_sent`, for its measurement or its
    /// sending to be over), looking at the others between slices: when one fails, the wait
    /// ends and so does the repetition.
    pub fn wait(&mut self, i: usize, until_sent: bool) {
        self.wait_until(i, until_sent, self.deadline, None);
    }

    /// [`Watch::wait`] with a deadline of its own; `overrun` says why a replica that passes
    /// it was stopped (default: a hang or a count too large for the case timeout).
    fn wait_until(&mut self, i: usize, until_sent: bool, deadline: Instant, overrun: Option<&str>) {
        let deadline = deadline.min(self.deadline);
        while self.done[i].is_none() && !(until_sent && self.sent[i]) && !self.failed {
            let now = Instant::now();
            if self.interruptible && super::interrupted() {
                self.stop_interrupted(i);
                return;
            }
            if now >= deadline {
                self.overrun(i, overrun);
                return;
            }
            self.slice(i, (now + WATCH_SLICE).min(deadline));
        }
    }

    /// Stops replica `i` because the run was interrupted (a signal): the repetition ends
    /// at once and is not kept.
    fn stop_interrupted(&mut self, i: usize) {
        self.placed[i].kill();
        let why = format!(
            "stopped: the run was interrupted by {}",
            super::interrupted_by()
        );
        self.done[i] = Some(Err(NodeFailure::lost(self.placed[i].name(), &why)));
        self.failed = true;
    }

    /// Stops replica `i`, which passed its deadline, saying why.
    fn overrun(&mut self, i: usize, why: Option<&str>) {
        self.placed[i].kill();
        let why = why.unwrap_or(super::place::OVERRAN);
        self.done[i] = Some(Err(NodeFailure::lost(self.placed[i].name(), why)));
        self.failed |= !self.tolerated[i];
    }

    /// Waits on replica `i` until `until` at most, then takes what the others said.
    fn slice(&mut self, i: usize, until: Instant) {
        match self.placed[i].wait_event(until) {
            Ok(Some(ev)) => self.take(i, ev),
            Ok(None) => {}
            Err(e) => {
                self.done[i] = Some(Err(NodeFailure::failed(self.placed[i].name(), &e)));
                self.failed |= !self.tolerated[i];
            }
        }
        for j in 0..self.placed.len() {
            if j == i || self.done[j].is_some() {
                continue;
            }
            match self.placed[j].try_next() {
                Ok(Some(ev)) => self.take(j, ev),
                Ok(None) => {}
                Err(e) => {
                    self.done[j] = Some(Err(NodeFailure::failed(self.placed[j].name(), &e)));
                    self.failed |= !self.tolerated[j];
                }
            }
        }
    }

    /// Waits until every swarm in `swarms` has ended its measurement (or failed). Once the
    /// stream is over (`stream_over`, or when the first swarm finishes), each has its idle
    /// time and a grace more; one that passes it is told to stop, and killed if it does
    /// not answer (frozen or hung).
    pub fn wait_swarms(&mut self, swarms: &[(usize, Duration)], mut stream_over: Option<Instant>) {
        let mut last_note: Option<Instant> = None;
        // When each swarm past its bound was told to stop: one that answers reports what
        // arrived (a subscriber of a lossy publisher may have had nothing at all); one that
        // does not within STOP_GRACE is frozen or hung, and is killed.
        let mut told: Vec<Option<Instant>> = vec![None; self.placed.len()];
        loop {
            let pending: Vec<(usize, Duration)> = swarms
                .iter()
                .copied()
                .filter(|(i, _)| self.done[*i].is_none() && !self.sent[*i])
                .collect();
            if pending.is_empty() || self.failed {
                return;
            }
            if stream_over.is_none() && swarms.iter().any(|(i, _)| self.sent[*i]) {
                stream_over = Some(Instant::now());
            }
            let now = Instant::now();
            self.note_waiting(&pending, stream_over, now, &mut last_note);
            let mut next = self.deadline;
            for &(i, idle) in &pending {
                let bound = stream_over.map_or(self.deadline, |t| {
                    (t + idle + SWARM_GRACE).min(self.deadline)
                });
                // Interrupted (a signal) with no publisher here to end the stream: each
                // swarm is told to stop now and reports what arrived.
                let bound = if super::interrupted() && stream_over.is_none() {
                    now.min(bound)
                } else {
                    bound
                };
                match told[i] {
                    _ if now < bound => next = next.min(bound),
                    None if bound < self.deadline => {
                        self.stop(i);
                        told[i] = Some(now);
                        next = next.min(now + STOP_GRACE);
                    }
                    Some(t) if now < t + STOP_GRACE => next = next.min(t + STOP_GRACE),
                    _ => {
                        let why = format!(
                            "did not end its measurement within {} s of the end of the stream, nor when told to stop (frozen or hung?), and was killed",
                            (idle + SWARM_GRACE + STOP_GRACE).as_secs()
                        );
                        self.overrun(i, Some(&why));
                    }
                }
            }
            if let Some(&(i, _)) = pending.iter().find(|(i, _)| self.done[*i].is_none()) {
                self.slice(i, (now + WATCH_SLICE).min(next));
            }
        }
    }

    /// Once the stream is over, a swarm still measuring past its idle time is shown every
    /// few seconds on stderr, with when it will be stopped: a wait that stalls says so.
    fn note_waiting(
        &self,
        pending: &[(usize, Duration)],
        stream_over: Option<Instant>,
        now: Instant,
        last: &mut Option<Instant>,
    ) {
        let Some(over) = stream_over else { return };
        if last.is_some_and(|t| now < t + NOTE_EVERY) {
            return;
        }
        let late: Vec<(String, u64)> = pending
            .iter()
            .filter(|(i, idle)| self.done[*i].is_none() && now >= over + *idle)
            .map(|(i, idle)| {
                (
                    self.placed[*i].name().to_string(),
                    (*idle + SWARM_GRACE).as_secs(),
                )
            })
            .collect();
        if late.is_empty() {
            return;
        }
        *last = Some(now);
        super::notice::tell(&super::notice::Notice::StillWaiting {
            since: now.saturating_duration_since(over),
            late: &late,
        });
    }

    pub fn stop(&mut self, i: usize) {
        let _ = self.placed[i].send(ToNode::Stop { v: VERSION });
    }
}
