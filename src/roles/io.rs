//! The I/O modes of the roles: one send and one receive that the source, sink, ping and
//! echo loops call for every frame. Blocking is a direct `zmq_msg_send` / `zmq_msg_recv`
//! (one predictable branch in front of it); poll and timeout wait in slices, count every
//! wait, and give up with EAGAIN at the role's timeout.
//!
//! - poll: every call carries ZMQ_DONTWAIT; on EAGAIN the role waits in `zmq_poll` on that
//!   socket (POLLOUT to send, POLLIN to receive) for at most one slice, then tries again.
//! - timeout: the socket's ZMQ_SNDTIMEO and ZMQ_RCVTIMEO are one slice (set when it
//!   opens, see [`socket_timeouts`]); a call that times out is tried again.
//!
//! A blocking role may wait without ZMQ_RCVTIMEO ([`Io::watch_stalls`]): a stall watch
//! ([`super::stall`]) keeps the bound, and a receive it wakes returns EAGAIN as one that
//! timed out did.

use super::control::STOP_POLL;
use crate::msg::RawMsg;
pub use crate::topology::IoMode;
use crate::zmq;
use std::time::{Duration, Instant};

/// The longest single wait of the poll and timeout modes (a passive role looks for the
/// runner's stop between slices, so it is the same as [`STOP_POLL`]).
pub(crate) const SLICE: Duration = STOP_POLL;

type ZResult = std::result::Result<(), zmq::Error>;

/// How a call goes: the first test of every send and receive.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    /// Blocking, bounded by the socket's timeouts: the call itself.
    Direct,
    /// Blocking, bounded by a stall watch: the call, then a beat.
    Watched,
    /// Poll or timeout mode: the call in slices ([`Io::waiting`]).
    Slices,
}

/// A role's way of sending and receiving, with the waits it counted.
pub(crate) struct Io {
    mode: IoMode,
    way: Way,
    /// The role's own timeout: the longest a send or a receive may wait in all.
    limit: Duration,
    /// Poll: `zmq_poll` calls after an EAGAIN; timeout: calls that hit their timeout.
    waits: u64,
    /// Blocking mode without ZMQ_RCVTIMEO: the watch that bounds the receives.
    stall: Option<super::stall::StallWatch>,
    /// Where every message sent goes, for a socket whose messages each carry it.
    to: Option<Address>,
}

/// What a message carries to reach its receiver, set before each send.
enum Address {
    /// A RADIO's group.
    Group(std::ffi::CString),
    /// A connecting PEER's peer (the routing id `zmq_connect_peer` gave).
    RoutingId(u32),
}

impl Io {
    pub fn new(mode: IoMode, limit: Duration) -> Self {
        Io {
            mode,
            way: if mode == IoMode::Blocking {
                Way::Direct
            } else {
                Way::Slices
            },
            limit,
            waits: 0,
            stall: None,
            to: None,
        }
    }

    /// Sends every message to `group` (a RADIO's messages each carry it). Such sends take
    /// the out-of-line way, so the other sockets' loops keep their one test.
    pub fn send_to_group(&mut self, group: &str) -> crate::error::Result<()> {
        let g = std::ffi::CString::new(group)
            .map_err(|_| crate::error::Error::invalid("group", group, "no zero byte"))?;
        self.address(Address::Group(g));
        Ok(())
    }

    /// A connecting PEER sends every message to the peer `zmq_connect_peer` gave it (each
    /// message carries its routing id), the out-of-line way as [`Io::send_to_group`];
    /// other sockets are left as they are.
    pub fn sending_to_peer_of(mut self, s: &zmq::Socket) -> Self {
        if let Some(id) = s.peer_routing_id() {
            self.address(Address::RoutingId(id));
        }
        self
    }

    fn address(&mut self, to: Address) {
        self.to = Some(to);
        self.way = Way::Slices;
    }

    /// In blocking mode, takes ZMQ_RCVTIMEO off `s` and bounds its receives with a stall
    /// watch instead: a receive that waits `step` with no frame taken returns EAGAIN, as
    /// the socket's timeout of `step` made it do (libzmq reads no clock per message then,
    /// as its own perf tools). Other modes keep their waits as they are. Ended by
    /// [`Io::end_watch`] (or when the Io drops), before the role's other blocking calls.
    pub fn watch_stalls(
        &mut self,
        s: &mut zmq::Socket,
        step: Duration,
    ) -> crate::error::Result<()> {
        // A thread-safe socket (the draft API's) waits on a condition variable, which no
        // signal interrupts: it keeps its ZMQ_RCVTIMEO.
        if self.mode != IoMode::Blocking || s.get_int(zmq::ZMQ_THREAD_SAFE).unwrap_or(0) == 1 {
            return Ok(());
        }
        let watch =
            super::stall::StallWatch::start(step).map_err(|source| crate::error::Error::Io {
                op: "starting the stall watch of a blocking receive".into(),
                source,
            })?;
        s.set_rcvtimeo(-1)
            .map_err(crate::error::zmq_err("setting ZMQ_RCVTIMEO"))?;
        self.stall = Some(watch);
        self.way = Way::Watched;
        Ok(())
    }

    /// Ends the stall watch (the socket keeps waiting without a timeout: no receive after
    /// this one).
    pub fn end_watch(&mut self) {
        self.stall = None;
        if self.way == Way::Watched {
            self.way = Way::Direct;
        }
    }

    /// Whether a receive is the call itself (blocking, bounded by the socket's timeout).
    #[inline(always)]
    pub fn is_direct(&self) -> bool {
        self.way == Way::Direct
    }

    /// The waits counted, or None in blocking mode (which does not count).
    pub fn waits(&self) -> Option<u64> {
        (self.mode != IoMode::Blocking).then_some(self.waits)
    }

    /// Sends one frame; EAGAIN after the role's timeout.
    #[inline(always)]
    pub fn send(&mut self, m: &mut RawMsg, s: &mut zmq::Socket, flags: i32) -> ZResult {
        if self.way != Way::Slices {
            return m.send(s, flags);
        }
        self.send_waiting(m, s, flags)
    }

    /// Receives one frame; EAGAIN after the role's timeout (blocking: after the socket's
    /// ZMQ_RCVTIMEO, which the role set to its timeout).
    #[inline(always)]
    pub fn recv(&mut self, m: &mut RawMsg, s: &mut zmq::Socket) -> ZResult {
        if self.way == Way::Direct {
            return m.recv(s, 0);
        }
        if self.way == Way::Watched {
            return self.recv_watched(m, s);
        }
        self.recv_waiting(m, s, self.limit)
    }

    /// Receives one frame, waiting at most about one slice (a passive role's receive, which
    /// looks for the runner's stop between slices; blocking: the socket's ZMQ_RCVTIMEO,
    /// which such a role sets to the slice).
    #[inline(always)]
    pub fn recv_slice(&mut self, m: &mut RawMsg, s: &mut zmq::Socket) -> ZResult {
        if self.way == Way::Direct {
            return m.recv(s, 0);
        }
        if self.way == Way::Watched {
            return self.recv_watched(m, s);
        }
        self.recv_waiting(m, s, SLICE)
    }

    /// A watched blocking receive: a beat for the stall watch, and its wake-up turned into
    /// the EAGAIN of a timeout.
    #[inline(always)]
    fn recv_watched(&mut self, m: &mut RawMsg, s: &mut zmq::Socket) -> ZResult {
        let r = m.recv(s, 0);
        if let Some(w) = &self.stall {
            if r.is_err() {
                return self.woken(r);
            }
            w.beat();
        }
        r
    }

    /// A watched receive that failed: EINTR from the watch (a tick to take, and no stop
    /// signal, which keeps its EINTR) is the EAGAIN of a timeout.
    #[cold]
    #[inline(never)]
    fn woken(&mut self, r: ZResult) -> ZResult {
        if r == Err(zmq::Error::EINTR) && !crate::interrupt::interrupted() {
            if let Some(w) = &mut self.stall {
                if w.take_tick() {
                    return Err(zmq::Error::EAGAIN);
                }
            }
        }
        r
    }

    #[inline(never)]
    fn send_waiting(&mut self, m: &mut RawMsg, s: &mut zmq::Socket, flags: i32) -> ZResult {
        match &self.to {
            Some(Address::Group(g)) => m.set_group(g)?,
            Some(Address::RoutingId(id)) => m.set_routing_id(*id)?,
            None => {}
        }
        let limit = self.limit;
        self.waiting(s, zmq::POLLOUT, limit, |s, f| m.send(s, flags | f))
    }

    #[inline(never)]
    fn recv_waiting(&mut self, m: &mut RawMsg, s: &mut zmq::Socket, budget: Duration) -> ZResult {
        self.waiting(s, zmq::POLLIN, budget, |s, f| m.recv(s, f))
    }

    /// Tries `call` until it does something other than EAGAIN, or `budget` has passed.
    #[inline(always)]
    fn waiting(
        &mut self,
        s: &mut zmq::Socket,
        event: zmq::PollEvents,
        budget: Duration,
        mut call: impl FnMut(&mut zmq::Socket, i32) -> ZResult,
    ) -> ZResult {
        match self.mode {
            IoMode::Poll => {
                // The clock is read only once a call would have blocked.
                let mut until: Option<Instant> = None;
                loop {
                    match call(s, zmq::DONTWAIT) {
                        Err(zmq::Error::EAGAIN) => {}
                        done => return done,
                    }
                    let now = Instant::now();
                    let end = *until.get_or_insert(now + budget);
                    if now >= end {
                        return Err(zmq::Error::EAGAIN);
                    }
                    self.waits += 1;
                    let ms = (end - now).min(SLICE).as_millis().max(1) as i64;
                    match s.poll(event, ms) {
                        Ok(_) | Err(zmq::Error::EINTR) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            IoMode::Timeout => {
                // Every call that times out has waited one slice.
                let tries = budget.as_nanos().div_ceil(SLICE.as_nanos()).max(1);
                let mut n = 0;
                loop {
                    match call(s, 0) {
                        Err(zmq::Error::EAGAIN) => {}
                        done => return done,
                    }
                    self.waits += 1;
                    n += 1;
                    if n >= tries {
                        return Err(zmq::Error::EAGAIN);
                    }
                }
            }
            IoMode::Blocking => call(s, 0),
        }
    }
}

/// The ZMQ_SNDTIMEO and ZMQ_RCVTIMEO a role's socket opens with in `mode`, ms: the
/// timeout mode's slice, else None (the role's own timeouts stay).
pub(crate) fn socket_timeouts(mode: IoMode, recv_timeout: Duration) -> Option<(i32, i32)> {
    (mode == IoMode::Timeout).then(|| {
        let slice = SLICE.as_millis() as i32;
        let recv = recv_timeout.min(SLICE).as_millis().max(1) as i32;
        (slice, recv)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PUSH/PULL pair over inproc with linger 0 and a short HWM.
    fn pair(ctx: &zmq::Context, name: &str) -> (zmq::Socket, zmq::Socket) {
        let push = ctx.socket(zmq::PUSH).unwrap();
        let pull = ctx.socket(zmq::PULL).unwrap();
        for s in [&push, &pull] {
            s.set_linger(0).unwrap();
            s.set_sndtimeo(SLICE.as_millis() as i32).unwrap();
            s.set_rcvtimeo(SLICE.as_millis() as i32).unwrap();
        }
        pull.bind(&format!("inproc://io-{name}")).unwrap();
        push.connect(&format!("inproc://io-{name}")).unwrap();
        (push, pull)
    }

    #[test]
    fn every_mode_moves_messages_in_order() {
        let ctx = zmq::Context::new();
        for mode in [IoMode::Blocking, IoMode::Poll, IoMode::Timeout] {
            let (mut push, mut pull) = pair(&ctx, mode.name());
            let mut tx = Io::new(mode, Duration::from_secs(5));
            let mut rx = Io::new(mode, Duration::from_secs(5));
            let mut m = RawMsg::new();
            for i in 0..100u8 {
                let mut out = RawMsg::copy_of(&[i; 3]).unwrap();
                tx.send(&mut out, &mut push, 0).unwrap();
                rx.recv(&mut m, &mut pull).unwrap();
                assert_eq!(m.bytes(), &[i; 3], "{mode:?}");
            }
            assert_eq!(tx.waits().is_some(), mode != IoMode::Blocking);
        }
    }

    #[test]
    fn waiting_modes_count_their_waits_and_give_up_at_the_budget() {
        let ctx = zmq::Context::new();
        for mode in [IoMode::Poll, IoMode::Timeout] {
            let (_push, mut pull) = pair(&ctx, &format!("idle-{}", mode.name()));
            // Nothing is ever sent: the receive waits its whole budget, then says EAGAIN.
            let mut rx = Io::new(mode, Duration::from_millis(250));
            let mut m = RawMsg::new();
            let t = Instant::now();
            assert_eq!(rx.recv(&mut m, &mut pull), Err(zmq::Error::EAGAIN));
            let took = t.elapsed();
            assert!(
                took >= Duration::from_millis(200) && took < Duration::from_secs(3),
                "{mode:?}: {took:?}"
            );
            // 250 ms in slices of 100 ms: three waits (poll: a fourth of 1 ms if
            // zmq_poll's own clock ended a slice a hair before ours).
            let w = rx.waits().unwrap();
            assert!(w == 3 || (mode == IoMode::Poll && w == 4), "{mode:?}: {w}");
            // One slice only for a passive role's receive.
            let mut one = Io::new(mode, Duration::from_secs(5));
            assert_eq!(one.recv_slice(&mut m, &mut pull), Err(zmq::Error::EAGAIN));
            let w = one.waits().unwrap();
            assert!(w == 1 || (mode == IoMode::Poll && w == 2), "{mode:?}: {w}");
        }
    }

    #[test]
    fn only_the_timeout_mode_changes_the_socket_timeouts() {
        let long = Duration::from_secs(10);
        assert_eq!(socket_timeouts(IoMode::Blocking, long), None);
        assert_eq!(socket_timeouts(IoMode::Poll, long), None);
        assert_eq!(socket_timeouts(IoMode::Timeout, long), Some((100, 100)));
        assert_eq!(
            socket_timeouts(IoMode::Timeout, Duration::from_millis(20)),
            Some((100, 20))
        );
    }

    /// Blocking with a stall watch: the socket loses ZMQ_RCVTIMEO, frames that come are
    /// taken, and a receive with nothing to take ends with EAGAIN after about one step of
    /// quiet, every time, as the socket's timeout ended it.
    #[test]
    fn a_watched_blocking_receive_gives_up_after_its_step() {
        crate::roles::stall::tests::within(20, a_watched_receive_gives_up);
    }

    fn a_watched_receive_gives_up() {
        let ctx = zmq::Context::new();
        let (mut push, mut pull) = pair(&ctx, "watched");
        let mut rx = Io::new(IoMode::Blocking, Duration::from_secs(5));
        rx.watch_stalls(&mut pull, Duration::from_millis(200))
            .unwrap();
        assert_eq!(pull.get_int(zmq::ZMQ_RCVTIMEO).unwrap(), -1);
        let mut tx = Io::new(IoMode::Blocking, Duration::from_secs(5));
        let mut m = RawMsg::new();
        for round in 0..2 {
            for i in 0..50u8 {
                let mut out = RawMsg::copy_of(&[i; 5]).unwrap();
                tx.send(&mut out, &mut push, 0).unwrap();
                rx.recv(&mut m, &mut pull).unwrap();
                assert_eq!(m.bytes(), &[i; 5]);
            }
            let t = Instant::now();
            assert_eq!(rx.recv_slice(&mut m, &mut pull), Err(zmq::Error::EAGAIN));
            let took = t.elapsed();
            assert!(
                took >= Duration::from_millis(150) && took < Duration::from_secs(3),
                "round {round}: {took:?}"
            );
        }
        // Another mode keeps its own waits: no watch, the socket's timeout stays.
        let mut poll = Io::new(IoMode::Poll, Duration::from_secs(5));
        poll.watch_stalls(&mut push, Duration::from_millis(200))
            .unwrap();
        assert!(poll.stall.is_none());
        assert_eq!(
            push.get_int(zmq::ZMQ_RCVTIMEO).unwrap(),
            SLICE.as_millis() as i32
        );
    }
}
