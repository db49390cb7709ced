//! PTMP's receiver (check_recv's, and check_sendrecv's receiving thread) on the sink's loop:
//! a state with PTMP's rules in place of the plain sink's. Any message size is taken and a
//! message's further frames are read and not counted; the streams are not known before
//! they arrive, so it ends when COUNT distinct messages came, when every stream it has seen
//! sent its end mark, or after TIMEOUT of silence; it wakes every 100 ms to say how the wait
//! stands and whether its sender has left; a message without the measurement header stops
//! it with the figures of what came before. The front-end sees every arrival (its sequence
//! and time, for PTMP's gap lines) and every wait through its observers.

use super::super::control::Here;
use super::super::{Io, Next, Patience};
use super::state::Then;
use super::Taker;
use crate::clock::now_ns;
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_END, FLAG_TIMESTAMP};
use crate::msg::RawMsg;
use crate::net::{PeerWatch, Waiting};
use crate::ptmp_wire::{self, Wire};
use crate::roles::{opened_ns, quit_delay_ms, TRAILER_END};
use crate::topology::IoMode;
use crate::zmq;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub use super::received::{Ended, Received};

/// The longest slice of a wait: how often a quiet receiver says how it stands.
const WAKE: Duration = Duration::from_millis(100);

/// What the receiver is waiting for, for a progress line.
#[derive(Debug, Clone, Copy)]
pub struct WaitStatus {
    /// Messages received so far.
    pub received: u64,
    /// How long nothing has arrived.
    pub silent: Duration,
    /// When the wait gives up.
    pub timeout: Duration,
    /// Whether the sender has disconnected (None: not known, inproc).
    pub disconnected: Option<bool>,
}

/// When PTMP's receiver ends, besides every seen stream's end mark.
#[derive(Clone, Copy)]
pub struct Limits<'a> {
    /// COUNT distinct messages (None: no count, check_sendrecv).
    pub count: Option<u64>,
    /// The longest silence.
    pub timeout: Duration,
    /// Set by check_sendrecv's sender when it is done; after it, this much silence ends.
    pub sender_done: Option<(&'a AtomicBool, Duration)>,
}

/// Receives on `sock` (opened by [`crate::roles::open_all`]; `watch` sees its peers over
/// tcp and ipc) with PTMP's rules until the limits, every seen stream's end mark or a stop
/// signal. `on_arrival` gets each message's sequence number and arrival, ns after the start;
/// `on_wait` the state of a wait that lasts (about every 100 ms).
pub fn take(
    sock: &mut zmq::Socket,
    watch: Option<&PeerWatch>,
    limits: Limits<'_>,
    on_arrival: impl FnMut(u64, u64),
    on_wait: impl FnMut(&WaitStatus),
) -> Result<Received> {
    let slice = limits.timeout.min(WAKE);
    sock.set_rcvtimeo(slice.as_millis().max(1) as i32)
        .map_err(crate::error::zmq_err("setting ZMQ_RCVTIMEO"))?;
    let mut st = PtmpState {
        limits,
        watch,
        patience: Patience::new(slice).in_steps_of(slice),
        io: Io::new(IoMode::Blocking, limits.timeout),
        msg: RawMsg::new(),
        part: RawMsg::new(),
        extra: RawMsg::new(),
        streams_seen: 0,
        r: Received::starting(now_ns(), watch.is_some()),
        on_arrival,
        on_wait,
    };
    if !st.count_reached() {
        let wait = Waiting {
            endpoint: "",
            peer: "check_send",
            timeout: limits.timeout,
            expected: limits.count.unwrap_or(0),
            unit: "messages",
            watch,
        };
        // Nobody supervises it: nothing to announce, no start to wait for, no stop but a
        // signal.
        let mut alone = Here {
            on_ready: |_: &[String]| {},
        };
        super::receive::<_, false>(&mut st, sock, &mut alone, &wait, |_| {})?;
    }
    let mut r = st.r;
    if let (Some(w), Some(d)) = (watch, r.disconnected.as_mut()) {
        let seen = w.sightings();
        *d = seen.disconnections > 0 && seen.disconnections >= seen.connections;
        r.sightings = Some(seen);
    }
    Ok(r)
}

/// PTMP's receiver between its start and its figures.
struct PtmpState<'a, A, W> {
    limits: Limits<'a>,
    watch: Option<&'a PeerWatch>,
    patience: Patience,
    io: Io,
    msg: RawMsg,
    part: RawMsg,
    extra: RawMsg,
    streams_seen: usize,
    r: Received,
    on_arrival: A,
    on_wait: W,
}

impl<A: FnMut(u64, u64), W: FnMut(&WaitStatus)> PtmpState<'_, A, W> {
    /// COUNT distinct messages: a duplicate does not stand for one still missing.
    fn count_reached(&mut self) -> bool {
        let r = &self.r;
        let done = self
            .limits
            .count
            .is_some_and(|c| r.arrivals >= c && r.ledger.distinct() >= c);
        if done {
            self.r.ended = Ended::Count;
        }
        done
    }

    /// Reads the frames after the first: the second into `part` (PTMP's TPSet), any
    /// further ones read and dropped. The message's frame count.
    fn rest_of_message(&mut self, s: &mut zmq::Socket) -> usize {
        if !self.msg.more() {
            return 1;
        }
        if self.part.recv(s, 0).is_err() {
            return 1;
        }
        let mut frames = 2;
        let mut more = self.part.more();
        while more && self.extra.recv(s, 0).is_ok() {
            frames += 1;
            more = self.extra.more();
        }
        frames
    }

    /// The sequence (and what else the message says) of a message of `frames` frames, in
    /// the stream's format; the first message tells the format: zmqperf's measurement
    /// header, or PTMP's type and TPSet. Why it breaks the protocol otherwise.
    fn header(&mut self, frames: usize) -> std::result::Result<Header, String> {
        let n = self.r.arrivals;
        match self.r.wire {
            Some(Wire::Zmqperf) => decode(&mut self.msg, n),
            Some(Wire::Ptmp) => ptmp_header(&mut self.msg, &mut self.part, frames).map_err(|why| {
                format!(
                    "message #{n} is not PTMP's TPSet message, as the stream's first was: {why}"
                )
            }),
            None => match Header::decode(self.msg.prefix(TRAILER_END)) {
                Ok(Some(h)) => {
                    self.r.wire = Some(Wire::Zmqperf);
                    Ok(h)
                }
                Err(e) => Err(format!("message #{n}: {e}")),
                Ok(None) => match ptmp_header(&mut self.msg, &mut self.part, frames) {
                    Ok(h) => {
                        self.r.wire = Some(Wire::Ptmp);
                        Ok(h)
                    }
                    Err(why) => Err(neither(&mut self.msg, &mut self.part, frames, &why)),
                },
            },
        }
    }

    /// Whether the sender has left, as far as the watch has seen.
    fn look_at_sender(&mut self) {
        if let (Some(w), Some(d)) = (self.watch, self.r.disconnected.as_mut()) {
            let seen = w.sightings();
            *d = seen.disconnections > 0 && seen.disconnections >= seen.connections;
        }
    }
}

impl<A: FnMut(u64, u64), W: FnMut(&WaitStatus)> Taker for PtmpState<'_, A, W> {
    fn at_once(&self) -> bool {
        true
    }

    fn next_parts<const ROUTED: bool>(&mut self) -> (&mut Patience, &mut RawMsg, &mut Io) {
        (&mut self.patience, &mut self.msg, &mut self.io)
    }

    fn on_message<const ROUTED: bool>(
        &mut self,
        s: &mut zmq::Socket,
        _wait: &Waiting,
    ) -> Result<Then> {
        let now = now_ns();
        let frames = self.rest_of_message(s);
        let h = match self.header(frames) {
            Ok(h) => h,
            Err(why) => {
                self.r.protocol_error = Some(why);
                return Ok(Then::End);
            }
        };
        let r = &mut self.r;
        if r.arrivals == 0 && h.has_timestamp() && r.wire == Some(Wire::Zmqperf) {
            let trailer = self.msg.prefix(TRAILER_END);
            r.first_sent = opened_ns(trailer).map(|o| (h.send_ns, o));
            r.quit_delay_ms = quit_delay_ms(trailer);
        }
        if frames > 1 && r.wire == Some(Wire::Ptmp) {
            r.payload_bytes += self.part.len() as u64;
        }
        r.arrivals += 1;
        r.payload_bytes += self.msg.len() as u64;
        r.first_ns.get_or_insert(now);
        r.last_ns = now;
        let before = r.ledger.streams().len();
        r.ledger.record(h.stream_id, h.sequence);
        if r.ledger.streams().len() != before {
            self.streams_seen += 1;
        }
        (self.on_arrival)(h.sequence, now - r.start_ns);
        if h.has_timestamp() {
            let stamp = (h.sequence, h.send_ns);
            r.stamps = Some(match r.stamps {
                None => (stamp, stamp),
                Some((first, _)) => (first, stamp),
            });
        }
        if h.flags & FLAG_END != 0 {
            r.ends.insert(h.stream_id, h.sequence);
            if r.ends.len() == self.streams_seen {
                r.ended = Ended::EndMark;
                return Ok(Then::End);
            }
        }
        Ok(if self.count_reached() {
            Then::End
        } else {
            Then::Read
        })
    }

    /// A slice passed quiet: the wait is over after the timeout (or the idle time after
    /// the sender is done); else the front-end hears how it stands.
    fn on_wait(&mut self, next: Next, _wait: &Waiting) -> Result<Then> {
        if next == Next::Interrupted {
            self.interrupted();
            return Ok(Then::End);
        }
        let silent = Duration::from_nanos(now_ns() - self.r.last_ns);
        self.look_at_sender();
        let idle_done = self
            .limits
            .sender_done
            .is_some_and(|(done, idle)| done.load(Ordering::Acquire) && silent >= idle);
        if silent >= self.limits.timeout || idle_done {
            self.r.ended = Ended::Timeout;
            return Ok(Then::End);
        }
        (self.on_wait)(&WaitStatus {
            received: self.r.arrivals,
            silent,
            timeout: self.limits.timeout,
            disconnected: self.r.disconnected,
        });
        Ok(Then::Read)
    }

    fn interrupted(&mut self) {
        self.r.ended = Ended::Interrupted;
    }

    fn taken(&mut self) -> &mut RawMsg {
        &mut self.msg
    }

    fn recv_failed(&self, e: zmq::Error, _wait: &Waiting) -> Error {
        Error::Zmq {
            op: "receiving".into(),
            source: e,
        }
    }
}

/// The header of message number `arrivals`, or why it breaks the protocol.
#[inline]
fn decode(msg: &mut RawMsg, arrivals: u64) -> std::result::Result<Header, String> {
    match Header::decode(msg.prefix(TRAILER_END)) {
        Ok(Some(h)) => Ok(h),
        Ok(None) => Err(format!(
            "message #{} ({} B) carries no zmqperf measurement header, where the stream's first message had one: check_recv reads one format per stream, told from its first message (zmqperf check_send's header, or PTMP's TPSet messages)",
            arrivals,
            msg.len()
        )),
        Err(e) => Err(format!("message #{arrivals}: {e}")),
    }
}

/// A PTMP message's TPSet as the header check_recv's ledger reads: `count` is the
/// sequence, `detid` the stream, `created` (wall clock, us) the send time, whose
/// differences give the sender's pace (no one-way time is taken from it).
fn ptmp_header(
    first: &mut RawMsg,
    second: &mut RawMsg,
    frames: usize,
) -> std::result::Result<Header, String> {
    let second = if frames >= 2 { second.bytes() } else { &[] };
    let set = ptmp_wire::decode_message(frames, first.bytes(), second)?;
    let created = set.created_us.filter(|&c| c > 0);
    Ok(Header {
        flags: if created.is_some() { FLAG_TIMESTAMP } else { 0 },
        stream_id: set.detid.unwrap_or(0),
        sequence: u64::from(set.count),
        send_ns: created.map_or(0, |c| (c as u64).saturating_mul(1000)),
    })
}

/// The error of a first message in neither format, naming what was seen.
fn neither(first: &mut RawMsg, second: &mut RawMsg, frames: usize, why_not_ptmp: &str) -> String {
    let mut sizes = vec![format!("{} B", first.len())];
    if frames >= 2 {
        sizes.push(format!("{} B", second.len()));
    }
    if frames > 2 {
        sizes.push("...".into());
    }
    format!(
        "message #0 is neither zmqperf's nor PTMP's: {frames} frame{} ({}), the first starting {}; it has no zmqperf measurement header (which starts with \"ZP\"), and it is not PTMP's TPSet message: {why_not_ptmp}. Point check_recv at zmqperf check_send (either --wire) or a PTMP sender",
        if frames == 1 { "" } else { "s" },
        sizes.join(", "),
        if first.is_empty() { "empty".to_string() } else { ptmp_wire::hex_start(first.bytes()) }
    )
}

#[cfg(test)]
mod tests;
