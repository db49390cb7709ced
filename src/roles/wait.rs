//! Waiting in the roles: a passive role's receive that looks for the runner's stop between
//! slices, and the precise wait for an open-loop send time.

use super::control::{Control, STOP_POLL};
use super::Io;
use crate::clock::now_ns;
use crate::msg::RawMsg;
use crate::zmq;
use std::time::Duration;

/// How a passive role's wait for the next message ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// A message arrived.
    Got,
    /// The runner said stop and the queue is drained.
    Stopped,
    /// Nothing arrived for the whole timeout.
    Idle,
    /// The process was told to end (SIGINT, SIGTERM, SIGHUP): the role reports what it had.
    Interrupted,
}

/// A passive role's receive: waits in slices of [`STOP_POLL`], looking for the runner's
/// stop between them; after the stop, drains until a slice passes with nothing.
pub(crate) struct Patience {
    limit: Duration,
    /// The socket's receive timeout: one slice of the wait.
    step: Duration,
    idle: Duration,
    stopping: bool,
    /// When the current quiet spell began: the start of the first slice that timed out
    /// since the last message (None while messages arrive).
    quiet_since_ns: Option<u64>,
    /// After a stop signal, read on until [`SIGNAL_DRAIN`] passes with nothing (a sender in
    /// this process stops itself and marks its last message; what it sent is read).
    drain_after_signal: bool,
}

/// How long a receiver that drains after a stop signal waits for more before it ends.
const SIGNAL_DRAIN: Duration = Duration::from_secs(1);

impl Patience {
    pub fn new(limit: Duration) -> Self {
        Patience {
            limit,
            step: STOP_POLL,
            idle: Duration::ZERO,
            stopping: false,
            quiet_since_ns: None,
            drain_after_signal: false,
        }
    }

    /// The same, for a socket whose receive timeout is `step` (see [`slice_for`]) instead
    /// of [`STOP_POLL`].
    pub fn in_steps_of(mut self, step: Duration) -> Self {
        self.step = step;
        self
    }

    /// The same, reading on after a stop signal until [`SIGNAL_DRAIN`] passes quiet.
    pub fn draining_after_signal(mut self, on: bool) -> Self {
        self.drain_after_signal = on;
        self
    }

    /// Receives into `msg` the role's way (`io`, one slice at a time); zmq errors other
    /// than a timeout are returned.
    #[inline(always)]
    pub fn recv(
        &mut self,
        msg: &mut RawMsg,
        s: &mut zmq::Socket,
        ctl: &mut dyn Control,
        io: &mut Io,
    ) -> std::result::Result<Next, zmq::Error> {
        let first = io.recv_slice(msg, s);
        self.recv_after(first, msg, s, ctl, io)
    }

    /// The same, for a wait whose first receive was made already (by a loop of the role's
    /// own) and ended in `first`.
    #[inline(always)]
    pub fn recv_after(
        &mut self,
        first: std::result::Result<(), zmq::Error>,
        msg: &mut RawMsg,
        s: &mut zmq::Socket,
        ctl: &mut dyn Control,
        io: &mut Io,
    ) -> std::result::Result<Next, zmq::Error> {
        let mut got = first;
        loop {
            match got {
                Ok(()) => {
                    self.took();
                    return Ok(Next::Got);
                }
                // A signal interrupts a blocking receive; one that ends the run ends it.
                Err(zmq::Error::EINTR)
                    if crate::interrupt::interrupted() && !self.drain_after_signal =>
                {
                    return Ok(Next::Interrupted)
                }
                Err(zmq::Error::EINTR) => {}
                Err(zmq::Error::EAGAIN) => {
                    if let Some(next) = self.timed_out(ctl) {
                        return Ok(next);
                    }
                }
                Err(e) => return Err(e),
            }
            got = io.recv_slice(msg, s);
        }
    }

    /// A message was taken (by this wait, or by a loop of the role's own between waits):
    /// a quiet spell (which every idle slice starts first) ends. One test per message
    /// instead of two stores.
    #[inline(always)]
    pub fn took(&mut self) {
        if self.quiet_since_ns.is_some() {
            self.idle = Duration::ZERO;
            self.quiet_since_ns = None;
        }
    }

    /// A slice passed with nothing: how the wait ends, or None to wait another slice.
    fn timed_out(&mut self, ctl: &mut dyn Control) -> Option<Next> {
        // The slice that just timed out began one slice ago, after the last message: no
        // clock read per message on the hot path.
        self.quiet_since_ns
            .get_or_insert_with(|| now_ns().saturating_sub(self.step.as_nanos() as u64));
        if crate::interrupt::interrupted() {
            let quiet = self
                .quiet_since_ns
                .map_or(0, |t| now_ns().saturating_sub(t));
            if !self.drain_after_signal || quiet >= SIGNAL_DRAIN.as_nanos() as u64 {
                return Some(Next::Interrupted);
            }
            return None;
        }
        if self.stopping {
            return Some(Next::Stopped);
        }
        if ctl.stop_requested() {
            self.stopping = true;
            return None;
        }
        self.idle += self.step;
        (self.idle >= self.limit).then_some(Next::Idle)
    }

    /// How long the role had been idle (for the cut-short note).
    pub fn idle(&self) -> Duration {
        self.idle
    }

    /// When the last message had been taken, to within the precision of one receive
    /// timeout (the end of a rate, without the idle wait, the stop and the drain); None
    /// while messages were still arriving.
    pub fn quiet_since_ns(&self) -> Option<u64> {
        self.quiet_since_ns
    }
}

/// A receive timeout that divides `limit` into whole slices of at most [`STOP_POLL`], so
/// that a role idle for `limit` notices it then, not at the next multiple of STOP_POLL
/// (250 ms: 3 slices of 84 ms, not 300 ms); whole milliseconds, as ZMQ_RCVTIMEO takes,
/// rounded up, so the slices end at most a millisecond per slice after `limit`.
pub(crate) fn slice_for(limit: Duration) -> Duration {
    let ms = limit.as_millis().max(1);
    let n = ms.div_ceil(STOP_POLL.as_millis());
    Duration::from_millis(ms.div_ceil(n) as u64)
}

/// The last stretch before a send time that is always spun, ns: a sleep never ends closer
/// to the send time than this plus the expected oversleep.
const SPIN_NS: u64 = 15_000;
/// Bounds of the oversleep estimate, ns.
const OVERSLEEP_MIN_NS: u64 = 2_000;
const OVERSLEEP_MAX_NS: u64 = 500_000;
/// The estimate before the first sleep of a thread (with its timer slack at 1 ns).
const OVERSLEEP_START_NS: u64 = 60_000;

std::thread_local! {
    /// How much longer than asked this thread's sleeps last, ns (0: not set up yet).
    static OVERSLEEP_NS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Waits until the monotonic clock reaches `due_ns` (an open-loop send time) without
/// spinning where the gap allows: it sleeps until shortly before the time (by the thread's
/// measured oversleep plus [`SPIN_NS`]) and spins only that last stretch. The oversleep is
/// learnt from every sleep: it rises after a late wake-up (at most doubling) and decays
/// slowly, also while gaps are too short to sleep, so one preemption does not make a thread
/// spin for good. The first call sets the thread's timer slack to 1 ns (Linux), so a sleep ends
/// within a few microseconds of its time instead of libc's default 50.
#[inline]
pub(crate) fn wait_until(due_ns: u64) {
    let mut over = OVERSLEEP_NS.with(|c| c.get());
    if over == 0 {
        over = first_pacing_on_this_thread();
    }
    let mut slept = false;
    loop {
        let now = now_ns();
        if now >= due_ns {
            break;
        }
        let left = due_ns - now;
        if left > over + SPIN_NS {
            slept = true;
            let want = left - over - SPIN_NS;
            std::thread::sleep(Duration::from_nanos(want));
            let late = now_ns().saturating_sub(now + want);
            // A late wake-up at most doubles the estimate: one preemption of milliseconds
            // must not turn the next thousand waits into spins.
            over = if late > over {
                late.min(over * 2)
            } else {
                over - (over - late) / 8
            };
        } else {
            std::hint::spin_loop();
        }
    }
    if !slept {
        over -= over / 64;
    }
    OVERSLEEP_NS.with(|c| c.set(over.clamp(OVERSLEEP_MIN_NS, OVERSLEEP_MAX_NS)));
}

#[cold]
fn first_pacing_on_this_thread() -> u64 {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and changes only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
    OVERSLEEP_START_NS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_add_up_to_the_limit() {
        let ms = Duration::from_millis;
        assert_eq!(slice_for(ms(250)), ms(84));
        assert_eq!(slice_for(ms(100)), ms(100));
        assert_eq!(slice_for(ms(30_000)), ms(100));
        assert_eq!(slice_for(ms(40)), ms(40));
        assert_eq!(slice_for(Duration::ZERO), ms(1));
        for limit in [1u64, 99, 101, 250, 999, 1001, 30_050] {
            let s = slice_for(ms(limit));
            let step = s.as_millis() as u64;
            // The slices a wait of `limit` takes, and how far past it they end: under one
            // millisecond a slice (whole slices of STOP_POLL would end up to 99 ms late).
            let n = limit.div_ceil(step);
            assert!(s <= STOP_POLL, "{limit}: {s:?}");
            assert!(n * step - limit < n, "{limit}: {n} x {step} ms");
        }
    }
}
