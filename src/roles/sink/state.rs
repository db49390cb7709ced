//! The sink's loop state: what it has received and measured so far, and what a message
//! that arrives does to it ([`SinkState::on_message`]; its record, the lean path and the
//! count of a stream without the header are in record.rs). The wait that ends without one
//! and the report are in end.rs.

use super::super::eot::EotWatch;
use super::super::shape::LogFilter;
use super::super::{slice_for, HeaderUse, Io, NodeSpec, Patience, STOP_POLL};
use super::{check_frames, eot_done, interrupted_after, Lean, Taker};
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_WARMUP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::net::{check_size, Waiting};
use crate::progress::Progress;
use crate::roles::interval::Intervals;
use crate::roles::Next;
use crate::stats::{LatencyHistogram, Ledger, OneWay};
use crate::topology::SocketType;
use crate::transport::Transport;
use crate::zmq;
use std::time::Duration;

/// What the loop does next.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Then {
    /// Reads on.
    Read,
    /// Ends: the report follows.
    End,
}

/// A sink between its start and its report.
pub(super) struct SinkState<'a> {
    pub(super) spec: &'a NodeSpec,
    /// A sink in a stream: its end comes on the stream's end-of-transmission channel.
    pub(super) eot: Option<EotWatch>,
    /// Every message the streams carry, and the warm-up messages before them.
    pub(super) total: u64,
    pub(super) warm_total: u64,
    /// On a ROUTER: a routing id frame comes first.
    pub(super) routed: bool,
    /// Stream id -> index of its latency histogram.
    pub(super) slot: Vec<usize>,
    /// One histogram per expected stream, and one more (`other`) for streams nobody
    /// announced (a sender outside the topology, such as a compatible command's peer).
    pub(super) hists: Vec<LatencyHistogram>,
    pub(super) other: usize,
    /// How each stream's send stamps become delays on this clock (its offset when its
    /// sender is on another host), and what the check of them finds. A stream nobody
    /// announced has no offset: it is read on this clock.
    pub(super) clocks: Vec<OneWay>,
    /// The receive's slice: with a channel to watch, it gives up every STOP_POLL to look at
    /// it, and the idle time is added up here.
    pub(super) slice: Duration,
    /// A sender in another process goes on sending after a signal here: the sink stops at
    /// once. One in this process (inproc) stops sending itself, and the sink then drains
    /// what it sent (its quiet slice ends the wait): a sink that stopped reading would leave
    /// that sender blocked at its high-water mark.
    pub(super) at_once: bool,
    pub(super) patience: Patience,
    /// The quiet that ends a sink short of its messages once its senders are done:
    /// [`END_DRAIN`](super::super::control::END_DRAIN), or longer over multicast, whose
    /// repairs arrive late ([`drain_for`]).
    pub(super) drain: Duration,
    pub(super) idle_total: Duration,
    /// When the current quiet spell began, kept across the slices of a sink in a stream
    /// (each starts a new Patience): the end of its rate is the last arrival, not the
    /// moment the end of transmission was read.
    pub(super) quiet_at: Option<u64>,
    /// `seen` when `idle_total` and `quiet_at` began to add up: a message since makes them
    /// stale (reset on the cold path, [`SinkState::fresh_quiet`], not for every message).
    pub(super) quiet_mark: u64,
    /// Messages received when the end of transmission had covered every flow.
    pub(super) at_eot: Option<u64>,
    pub(super) io: Io,
    pub(super) ends: usize,
    /// `received` from which [`SinkState::after_record`] asks whether the sink has
    /// everything: the count for a sink that ends by itself, 0 once an end mark came (or
    /// with no streams), never for one that does not end by itself.
    pub(super) end_check_from: u64,
    pub(super) header: bool,
    pub(super) progress: Progress,
    pub(super) ledger: Ledger,
    pub(super) msg: RawMsg,
    pub(super) id: RawMsg,
    /// Typed frames and log lines: what to check, and which lines a SUB filter lets
    /// through.
    pub(super) first_len: usize,
    pub(super) log: Option<LogFilter>,
    pub(super) level: Vec<u8>,
    pub(super) frame_error: Option<String>,
    pub(super) received: u64,
    pub(super) seen: u64,
    pub(super) start: u64,
    /// The latest clock reading at an arrival (the first and the time-stamped ones).
    pub(super) last_read_ns: u64,
    pub(super) cut_short: Option<String>,
    pub(super) protocol_error: Option<String>,
    /// With `--interval`: the intervals, and when the current one ends (u64::MAX without:
    /// the one comparison per time-stamped message never holds).
    pub(super) intervals: Option<Intervals>,
    pub(super) next_tick_ns: u64,
    /// Counting only, from the second message of a stream without the header (libzmq's C
    /// sender) into a plain sink that ends at its count: each message is checked for its
    /// size and counted, and nothing else is asked of it (libzmq's local_thr loop).
    pub(super) counting: bool,
    /// From the second message of a plain stream with the header (no routing id, log
    /// level, typed frames or end-of-transmission channel): each message is checked for its
    /// size and read through [`SinkState::on_stream_message`], which skips the questions
    /// whose answers the first message settled.
    pub(super) lean: bool,
}

/// How long the sink waits before it looks again: its whole timeout, or [`STOP_POLL`] with a
/// stream's end-of-transmission channel to watch between waits.
pub(super) fn wait_slice(spec: &NodeSpec) -> Duration {
    if spec.eot.is_some() {
        STOP_POLL
    } else {
        spec.timeout()
    }
}

/// How long a sink short of its messages waits in quiet once its senders are done: over
/// multicast (pgm, epgm, norm) a message lost on the way comes back only after a repair
/// round (a NAK, then the repair data, timed from the group's round trip, which NORM
/// starts from an estimate of 0.5 s): a NORM stream at 2,000 msg/s had 638 messages still
/// on their way when 1 s of quiet ended it.
pub(super) fn drain_for(spec: &NodeSpec) -> Duration {
    let multicast = spec
        .sockets
        .iter()
        .any(|s| s.transports().any(Transport::is_multicast));
    if multicast {
        MULTICAST_DRAIN
    } else {
        super::super::control::END_DRAIN
    }
}

/// The quiet that ends a multicast sink short of its messages.
pub const MULTICAST_DRAIN: Duration = Duration::from_secs(5);

/// The receive of one wait of `slice`, in socket timeouts that add up to it
/// ([`slice_for`], the receive timeout the sink's socket is opened with).
pub(super) fn patience(slice: Duration, at_once: bool) -> Patience {
    Patience::new(slice)
        .in_steps_of(slice_for(slice))
        .draining_after_signal(!at_once)
}

impl<'a> SinkState<'a> {
    /// The state at the start, for `spec` (as started) and its channel.
    pub fn new(spec: &'a NodeSpec, eot: Option<EotWatch>) -> Self {
        let total: u64 = spec.streams.iter().map(|(_, n)| n).sum();
        let top = spec.streams.iter().map(|(id, _)| *id).max().unwrap_or(0) as usize;
        let mut slot = vec![usize::MAX; top + 1];
        for (i, (id, _)) in spec.streams.iter().enumerate() {
            slot[*id as usize] = i;
        }
        let clocks = spec
            .streams
            .iter()
            .map(|(id, _)| spec.one_way(*id, spec.timeout()))
            .chain(std::iter::once(OneWay::same_clock(spec.timeout())))
            .collect();
        let slice = wait_slice(spec);
        let at_once = !spec
            .sockets
            .iter()
            .flat_map(|p| p.bind.iter().chain(&p.connect))
            .any(|e| e.starts_with("inproc://"));
        let log = (!spec.log_levels.is_empty()).then(|| {
            let prefixes = spec.sockets[0]
                .options
                .subscribe
                .clone()
                .unwrap_or_default();
            LogFilter::new(&spec.log_levels, &prefixes)
        });
        SinkState {
            spec,
            eot,
            total,
            warm_total: spec.warmup * spec.streams.len() as u64,
            routed: spec.sockets[0].kind == SocketType::Router,
            slot,
            hists: (0..=spec.streams.len())
                .map(|_| LatencyHistogram::new())
                .collect(),
            other: spec.streams.len(),
            clocks,
            slice,
            at_once,
            patience: patience(slice, at_once),
            drain: drain_for(spec),
            idle_total: Duration::ZERO,
            quiet_at: None,
            quiet_mark: 0,
            at_eot: None,
            io: Io::new(spec.io, spec.timeout()),
            ends: 0,
            end_check_from: match (spec.ends_itself, spec.streams.is_empty()) {
                (false, _) => u64::MAX,
                (true, true) => 0,
                (true, false) => total,
            },
            header: spec.size >= HEADER_LEN,
            progress: Progress::new("messages", total),
            ledger: Ledger::new(),
            msg: RawMsg::new(),
            id: RawMsg::new(),
            first_len: spec.frames.first().copied().unwrap_or(spec.size),
            log,
            level: Vec::new(),
            frame_error: None,
            received: 0,
            seen: 0,
            start: 0,
            last_read_ns: 0,
            cut_short: None,
            protocol_error: None,
            intervals: None,
            next_tick_ns: u64::MAX,
            counting: false,
            lean: false,
        }
    }

    /// Closes the intervals that ended by `now` (`--interval`).
    #[cold]
    #[inline(never)]
    pub(super) fn tick(&mut self, now: u64) {
        if let Some(iv) = self.intervals.as_mut() {
            self.next_tick_ns = iv.close_until(
                now,
                &self.spec.name,
                self.received,
                Some(&self.ledger),
                &self.hists,
            );
        }
    }

    /// The first message came at `now`: with `--interval`, the intervals start.
    #[cold]
    #[inline(never)]
    pub(super) fn begin_intervals(&mut self, now: u64) {
        if let Some(ms) = self.spec.interval_ms.filter(|&ms| ms > 0) {
            let iv = Intervals::new(ms * 1_000_000, now);
            self.next_tick_ns = iv.next_end();
            self.intervals = Some(iv);
        }
    }

    /// A signal ended the run: the messages so far are the report.
    pub fn interrupted(&mut self) {
        self.cut_short = Some(interrupted_after(self.received, "messages"));
    }

    /// The idle time and quiet spell added up since the last message: reset when a
    /// message came after they began.
    pub(super) fn fresh_quiet(&mut self) {
        if self.quiet_mark != self.seen {
            self.idle_total = Duration::ZERO;
            self.quiet_at = None;
            self.quiet_mark = self.seen;
        }
    }

    /// A message arrived (its first frame in `id` on a ROUTER (`ROUTED`, the same as
    /// `self.routed`), else in `msg`): the rest of its frames are read, it is checked and
    /// recorded, and the sink ends once everything it expects has come.
    #[inline(always)]
    pub fn on_message<const ROUTED: bool>(
        &mut self,
        s: &mut zmq::Socket,
        wait: &Waiting,
    ) -> Result<Then> {
        if !ROUTED && self.counting {
            check_size(&mut self.msg, self.first_len, self.seen)?;
            self.seen += 1;
            self.progress.tick(self.seen);
            self.received += 1;
            return Ok(if self.received == self.total {
                Then::End
            } else {
                Then::Read
            });
        }
        if !ROUTED && self.lean {
            if let Some(then) = self.on_stream_message()? {
                return Ok(then);
            }
        }
        let spec = self.spec;
        let received = self.received;
        if ROUTED {
            self.io
                .recv(&mut self.msg, s)
                .map_err(|e| wait.error(e, received, String::new()))?;
        }
        if self.log.is_some() {
            // The first frame was the level (the topic); the line follows.
            self.level.clear();
            self.level.extend_from_slice(self.msg.bytes());
            self.io
                .recv(&mut self.msg, s)
                .map_err(|e| wait.error(e, received, String::new()))?;
        }
        if !spec.frames.is_empty() {
            if let Some(why) = check_frames(&mut self.msg, &mut self.id, s, spec, &mut self.io) {
                self.frame_error
                    .get_or_insert(format!("message {}: {why}", self.seen + 1));
            }
        }
        if self.first_len > 0 {
            check_size(&mut self.msg, self.first_len, self.seen)?;
        }
        if self.seen == 0 && self.header && spec.header == HeaderUse::Detect {
            // A peer without the header (libzmq's C tools): count only. A header this
            // build cannot read is not "no header": the ledger would be silently off.
            self.header = match Header::decode(self.msg.prefix(HEADER_LEN)) {
                Ok(h) => h.is_some(),
                Err(e) => return Err(Error::Protocol(format!("the first message: {e}"))),
            };
        }
        self.seen += 1;
        self.progress.tick(self.seen);
        if !self.header {
            return Ok(self.count_only());
        }
        let h = match Header::decode(self.msg.prefix(HEADER_LEN)) {
            Ok(Some(h)) => h,
            other => {
                let why = match other {
                    Err(e) => e.to_string(),
                    _ => "a message without the measurement header".to_string(),
                };
                if received == 0 {
                    return Err(Error::Protocol(why));
                }
                // Part-way: what did arrive is measured; the error comes with it.
                self.protocol_error = Some(format!("after {received} messages: {why}"));
                return Ok(Then::End);
            }
        };
        if h.flags & FLAG_WARMUP != 0 {
            return Ok(Then::Read);
        }
        self.record(&h);
        // With the header, a stream ends at its end mark, not after `total` arrivals:
        // duplicates would use up the count and leave real messages unread.
        if let Some(w) = self.eot.as_mut() {
            return Ok(
                if eot_done(w, &spec.streams, self.received, &mut self.at_eot) {
                    Then::End
                } else {
                    Then::Read
                },
            );
        }
        Ok(self.after_record())
    }
}

impl Taker for SinkState<'_> {
    #[inline(always)]
    fn at_once(&self) -> bool {
        self.at_once
    }

    #[inline(always)]
    fn next_parts<const ROUTED: bool>(&mut self) -> (&mut Patience, &mut RawMsg, &mut Io) {
        let first = if ROUTED { &mut self.id } else { &mut self.msg };
        (&mut self.patience, first, &mut self.io)
    }

    #[inline(always)]
    fn on_message<const ROUTED: bool>(
        &mut self,
        s: &mut zmq::Socket,
        wait: &Waiting,
    ) -> Result<Then> {
        SinkState::on_message::<ROUTED>(self, s, wait)
    }

    #[inline(always)]
    fn on_wait(&mut self, next: Next, wait: &Waiting) -> Result<Then> {
        SinkState::on_wait(self, next, wait)
    }

    fn interrupted(&mut self) {
        SinkState::interrupted(self)
    }

    #[inline(always)]
    fn taken(&mut self) -> &mut RawMsg {
        &mut self.msg
    }

    #[cold]
    fn recv_failed(&self, e: zmq::Error, wait: &Waiting) -> Error {
        wait.error(e, self.received, String::new())
    }

    #[inline(always)]
    fn lean_run(&mut self, s: &mut zmq::Socket, work: &mut impl FnMut(&mut RawMsg)) -> Lean {
        SinkState::lean_run(self, s, work)
    }
}
