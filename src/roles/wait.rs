//! Waiting in the roles: a passive role's receive that looks for the runner's stop between
//! slices, and the precise wait for an open-loop send time.

use super::{Control, Io, STOP_POLL};
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
}

/// A passive role's receive: waits in slices of [`STOP_POLL`], looking for the runner's
/// stop between them; after the stop, drains until a slice passes with nothing.
pub(crate) struct Patience {
    limit: Duration,
    idle: Duration,
    stopping: bool,
    /// When the current quiet spell began: the start of the first slice that timed out
    /// since the last message (None while messages arrive).
    quiet_since_ns: Option<u64>,
}

impl Patience {
    pub fn new(limit: Duration) -> Self {
        Patience {
            limit,
            idle: Duration::ZERO,
            stopping: false,
            quiet_since_ns: None,
        }
    }

    /// Receives into `msg` the role's way (`io`, one slice at a time); zmq errors other
    /// than a timeout are returned.
    #[inline]
    pub fn recv(
        &mut self,
        msg: &mut RawMsg,
        s: &mut zmq::Socket,
        ctl: &mut dyn Control,
        io: &mut Io,
    ) -> std::result::Result<Next, zmq::Error> {
        loop {
            match io.recv_slice(msg, s) {
                Ok(()) => {
                    self.idle = Duration::ZERO;
                    self.quiet_since_ns = None;
                    return Ok(Next::Got);
                }
                Err(zmq::Error::EAGAIN) => {
                    // The slice that just timed out began one slice ago, after the last
                    // message: no clock read per message on the hot path.
                    self.quiet_since_ns.get_or_insert_with(|| {
                        now_ns().saturating_sub(STOP_POLL.as_nanos() as u64)
                    });
                    if self.stopping {
                        return Ok(Next::Stopped);
                    }
                    if ctl.stop_requested() {
                        self.stopping = true;
                        continue;
                    }
                    self.idle += STOP_POLL;
                    if self.idle >= self.limit {
                        return Ok(Next::Idle);
                    }
                }
                Err(e) => return Err(e),
            }
        }
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

/// Waits until the monotonic clock reaches `due_ns`: sleeps while far, spins when close.
#[inline]
pub(crate) fn wait_until(due_ns: u64) {
    loop {
        let now = now_ns();
        if now >= due_ns {
            return;
        }
        let left = due_ns - now;
        if left > 200_000 {
            std::thread::sleep(Duration::from_nanos(left - 100_000));
        } else {
            std::hint::spin_loop();
        }
    }
}
