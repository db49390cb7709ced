//! What the source's send loop does around each message beyond writing it, chosen once
//! before the loop (as [`super::first::FirstFrame`] is), so each kind has a loop of its own:
//! nothing more ([`Plain`], every topology's source: the loop it always was); messages due
//! in batches on the open-loop schedule ([`Batched`], own field `batch`: diagnose's deep
//! queue, a batch every millisecond); or the time spent in the sends that found the socket
//! full ([`FullSends`], own field `time_full_sends`: diagnose's PUSH at its high-water
//! mark, which waits there). The source's own fields set here are written by the
//! [`NodeSpec`] methods at the end of this file.

use super::super::NodeSpec;
use crate::clock::now_ns;
use crate::zmq;
use std::time::Duration;

/// The source's own field: with a rate, messages are due this many at a time (each batch
/// at the due time of its first message), not one by one.
pub const BATCH: &str = "batch";
/// The source's own field: present, the time spent in send calls that found the socket
/// full (ZMQ_EVENTS without POLLOUT) is measured and reported.
pub const TIME_FULL_SENDS: &str = "time_full_sends";
/// The source's own field: after its stream, the source sends the end mark again every
/// this many ms until the runner's stop (or its timeout).
pub const RESEND_END_MS: &str = "resend_end_ms";

/// What the send loop does around each message.
pub(super) trait Around {
    /// The due time of message `i` of a schedule that starts at `start`, `iv` ns apart.
    fn due(&self, start: u64, i: u64, iv: f64) -> u64;

    /// What this kind notes before a send, for [`Around::after`].
    type Mark;

    /// Before a send on `s`.
    fn before(&mut self, s: &zmq::Socket) -> Self::Mark;

    /// After the send: what it measures of it.
    fn after(&mut self, mark: Self::Mark);

    /// The time spent in sends that found the socket full, ns, if this kind measures it.
    fn full_send_ns(&self) -> Option<u64> {
        None
    }
}

/// The plain loop: message by message, nothing measured around the send.
pub(super) struct Plain;

impl Around for Plain {
    #[inline(always)]
    fn due(&self, start: u64, i: u64, iv: f64) -> u64 {
        super::due_at(start, i, iv)
    }

    type Mark = ();

    #[inline(always)]
    fn before(&mut self, _s: &zmq::Socket) {}

    #[inline(always)]
    fn after(&mut self, _mark: ()) {}
}

/// Messages due `n` at a time: every message of a batch is due when its first is.
pub(super) struct Batched {
    pub n: u64,
}

impl Around for Batched {
    #[inline(always)]
    fn due(&self, start: u64, i: u64, iv: f64) -> u64 {
        super::due_at(start, i - i % self.n, iv)
    }

    type Mark = ();

    #[inline(always)]
    fn before(&mut self, _s: &zmq::Socket) {}

    #[inline(always)]
    fn after(&mut self, _mark: ()) {}
}

/// The sends that find the socket full (no room for a message: ZMQ_EVENTS without POLLOUT)
/// are timed, and their time adds up.
#[derive(Default)]
pub(super) struct FullSends {
    blocked_ns: u64,
}

impl Around for FullSends {
    #[inline(always)]
    fn due(&self, start: u64, i: u64, iv: f64) -> u64 {
        super::due_at(start, i, iv)
    }

    /// When the socket was full, the clock before the send.
    type Mark = Option<u64>;

    #[inline]
    fn before(&mut self, s: &zmq::Socket) -> Option<u64> {
        let full = s.get_events().is_ok_and(|e| !e.contains(zmq::POLLOUT));
        full.then(now_ns)
    }

    #[inline]
    fn after(&mut self, mark: Option<u64>) {
        if let Some(before) = mark {
            self.blocked_ns += now_ns() - before;
        }
    }

    fn full_send_ns(&self) -> Option<u64> {
        Some(self.blocked_ns)
    }
}

/// A loop other than the plain one, as a spec's own fields ask for it.
pub(super) enum OptIn {
    Batched(u64),
    FullSends,
}

impl OptIn {
    /// The loop `spec`'s own fields ask for; None for the plain one. Out of line: the
    /// lookups stay out of the function that holds the plain loops ([`super::send_all`]).
    #[inline(never)]
    pub fn of(spec: &NodeSpec) -> Option<OptIn> {
        match spec.own.get(BATCH) {
            Some(&n) if n > 1 => Some(OptIn::Batched(n)),
            _ if spec.own.contains_key(TIME_FULL_SENDS) => Some(OptIn::FullSends),
            _ => None,
        }
    }
}

/// How long to wait between the end marks sent again after the stream, when the spec asks
/// for that.
pub(super) fn resend_end(spec: &NodeSpec) -> Option<Duration> {
    spec.own
        .get(RESEND_END_MS)
        .map(|&ms| Duration::from_millis(ms.max(1)))
}

impl NodeSpec {
    /// A source with a rate whose messages are due `n` at a time (a batch every `n` /
    /// rate seconds), each batch sent as fast as the socket takes it.
    pub fn send_in_batches(&mut self, n: u64) {
        self.own.insert(BATCH.to_string(), n);
    }

    /// A source that measures the time it spends in sends that found the socket full
    /// (a PUSH held back by its high-water mark): [`super::super::RoleReport::full_send_ns`].
    pub fn time_full_sends(&mut self) {
        self.own.insert(TIME_FULL_SENDS.to_string(), 1);
    }

    /// A source on a PUB or XPUB that, after its stream, sends its end mark again every
    /// `every` until the runner's stop: a PUB drops what comes while the reader's queue is
    /// full, the end mark included, and the reader ends on it once one gets through (the
    /// runner stops the source when the reader has ended).
    pub fn resend_end_every(&mut self, every: Duration) {
        self.own
            .insert(RESEND_END_MS.to_string(), every.as_millis() as u64);
    }
}
