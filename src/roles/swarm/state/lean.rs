//! A subscriber's lean delivery: the common message of a fan-out (the next number of the
//! subscriber's stream, no flag but the time stamp, a stamp the clock takes as it is)
//! changes only counts and the latency figures. [`SubState::take_lean`] checks the header's
//! first eight bytes as one word and its sequence as another, and records such a message
//! without decoding the header; anything else is left to the full path
//! ([`SubState::record`]) before anything changed. The swarm's histogram takes the shape
//! of each latency only: its extremes and sum are the subscribers' ([`SwarmLatency`]).

use super::SubState;
use crate::header::{first_word, FLAG_TIMESTAMP};
use crate::roles::swarm::SwarmLatency;

/// The time stamp flag's bit in the header's first word.
const STAMP_BIT: u64 = (FLAG_TIMESTAMP as u64) << 24;

/// A lean stretch of one subscriber's messages: the header word it takes and the numbers
/// it took, kept out of the ledger until [`SubState::end_lean`] (one add for the stretch).
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeanRun {
    word: u64,
    first: u64,
    /// The number it takes next.
    pub(super) next: u64,
}

impl SubState {
    /// A lean stretch from this subscriber's next message, when the lean path may take it:
    /// its stream is known, its run of numbers has begun, it has a latency (so the first
    /// one's figures are set) and no end yet.
    pub(crate) fn lean_run(&self) -> Option<LeanRun> {
        let id = self.stream?;
        let next = self.ledger.next_in_order()?;
        if self.end_seq.is_some() || self.count == 0 {
            return None;
        }
        Some(LeanRun {
            // The header's first eight bytes with no flag, as one word.
            word: first_word(id, 0),
            first: next,
            next,
        })
    }

    /// Records a message whose header starts with the words `[first, seq, send]`, received
    /// at `now`, when it is the next one of `run`'s stream with at most the stamp flag, and
    /// its stamp (if any) needs no check: as [`SubState::record`] and the swarm's histogram
    /// would, its number kept in `run`. Returns false, with nothing changed, for any other
    /// message.
    #[inline(always)]
    pub(crate) fn take_lean(
        &mut self,
        run: &mut LeanRun,
        [first, seq, send]: [u64; 3],
        now: u64,
        lat: &mut SwarmLatency,
    ) -> bool {
        let flags = first ^ run.word;
        if flags & !STAMP_BIT != 0 || seq != run.next {
            return false;
        }
        if flags != 0 {
            let Some(ns) = lat.clock.as_mut().and_then(|c| c.settled_delay(send, now)) else {
                return false;
            };
            self.count += 1;
            self.sum_ns += ns as u128;
            self.min_ns = self.min_ns.min(ns);
            self.max_ns = self.max_ns.max(ns);
            lat.hist.record_shape(ns);
        }
        run.next += 1;
        self.last_recv_ns = now;
        true
    }

    /// Gives the ledger the numbers `run` took: before anything else reads or records it.
    #[inline(always)]
    pub(crate) fn end_lean(&mut self, run: LeanRun) {
        self.ledger.record_in_order(run.next - run.first);
    }
}
