//! The ping role: a closed-loop client (REQ, DEALER or PAIR) that sends a request, waits
//! for the echo and times the round trip. Records round trip / 2, libzmq's one-way latency,
//! and on request the full round trips (remote_lat's figure). In plain mode it reads no
//! clock per round trip, as libzmq's own loop (with `--interval` it reads one, to close the
//! intervals: their round trips per second, without latency).

use super::interval::Intervals;
use super::{node_usage, open_all, Control, HeaderUse, Io, NodeSpec, RoleReport};
use crate::clock::now_ns;
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_TIMESTAMP, FLAG_WARMUP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::net::{check_size, Waiting};
use crate::progress::Progress;
use crate::stats::{LatencyHistogram, Throughput};
use crate::zmq;

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let mut opened = open_all(ctx, spec, ctl, spec.timeout())?;
    let o = &mut opened[0];
    ctl.wait_start(spec.timeout())?;
    let wait = Waiting {
        endpoint: o.endpoint.as_str(),
        peer: spec.peer_or("the echo node"),
        timeout: spec.timeout(),
        expected: spec.count + spec.warmup,
        unit: "round trips",
        watch: o.watch.as_ref(),
    };
    let s = &mut o.sock;
    let mut io = Io::new(spec.io, spec.timeout()).sending_to_peer_of(s);
    io.watch_stalls(s, spec.timeout())?;
    // A request still queued when the peer never answered must not hold the close for the
    // linger as well: the wait for the peer is the timeout, once.
    let fail = |s: &zmq::Socket, e: zmq::Error, i: u64| {
        let _ = s.set_linger(0);
        wait.error(e, i, String::new())
    };
    let mut msg = RawMsg::zeroed(spec.size)?;
    let mut delim = RawMsg::new();
    let plain = spec.header == HeaderUse::Never;
    // Whether replies still carry our header (an echo that rewrites the payload ends that
    // when the header is only detected).
    let mut header = spec.size >= HEADER_LEN && !plain;
    let mut timed = Timed::new(spec);
    let mut progress = Progress::new("round trips", spec.count);
    let total = spec.warmup + spec.count;
    let skip_first = spec.warmup == 0 && spec.count > 1;
    let mut start = now_ns();
    let mut first_reply_ns = None;
    let mut stopped = None;
    let lean_from = timed.lean_from(header, skip_first);
    let mut i = 0;
    while i < total {
        // A signal that ends the run: the round trips so far are the report.
        if crate::interrupt::interrupted() {
            stopped = Some((zmq::Error::EINTR, i));
            break;
        }
        let warm = i < spec.warmup;
        if i == spec.warmup {
            start = now_ns();
            timed.begin(start);
        }
        if i == lean_from && header {
            let lean = Lean::new(&mut io, &mut msg, &mut timed, &mut progress);
            (i, stopped) = lean.round_trips(s, spec, i)?;
            if stopped.is_some() || i == total {
                break;
            }
        }
        let t0 = if plain { 0 } else { now_ns() };
        if header {
            stamp(&mut msg, spec, warm, i, t0);
        }
        let sent = request(&mut io, &mut msg, &mut delim, s, spec.delimiter);
        if let Err(e) = sent.and_then(|()| io.recv(&mut msg, s)) {
            stopped = Some((e, i));
            break;
        }

        check_size(&mut msg, spec.size, i)?;
        if i == 0 && spec.warmup == 0 {
            // One clock reading, plain mode too: what the first round trip waited.
            first_reply_ns = Some(now_ns());
        }
        progress.tick(i);
        if plain {
            timed.untimed(i);
            i += 1;
            continue;
        }
        let t1 = now_ns();
        if header {
            check_echo(&mut msg, i, spec, &mut header)?;
        }
        // Without a warm-up, the first round trip carries the connection's handshake (four
        // hops before the request): it is kept out of the distribution, not out of the
        // elapsed time of libzmq's average.
        let handshake = i == 0 && skip_first;
        timed.round_trip(i, t0, t1, !(warm || handshake));
        i += 1;
    }
    let mut end = now_ns();
    io.end_watch();
    let (done, cut_short) = match stopped {
        None => (spec.count, None),
        Some((e, i)) => {
            let (d, why) = partial(spec, e, i).ok_or_else(|| fail(s, e, i))?;
            let why = why.unwrap_or_else(|| {
                // The last reply came about one timeout before the failed wait gave up.
                end = end.saturating_sub(spec.timeout_ms * 1_000_000).max(start);
                fail(s, e, i).to_string()
            });
            (d, Some(why))
        }
    };
    progress.finish();
    ctl.sent()?;
    let (hist, rtt, intervals) = timed.finish(end, done);
    Ok(RoleReport {
        intervals,
        latency: (!plain).then_some(hist),
        rtt: (spec.full_rtt && !plain).then_some(rtt),
        first_round_trip_ns: first_reply_ns.map(|t: u64| t.saturating_sub(start)),
        cut_short,
        round_trips: Some(spanned(done, spec.size, start, end)),
        header,
        usage: Some(node_usage(spec)),
        io_waits: io.waits(),
        ..Default::default()
    })
}

/// What the ping records of its round trips: round trip / 2, the full round trips (on
/// request), and with `--interval` the intervals, from the first measured round trip.
struct Timed<'a> {
    spec: &'a NodeSpec,
    hist: LatencyHistogram,
    rtt: LatencyHistogram,
    intervals: Option<Intervals>,
    /// When the current interval ends (u64::MAX without intervals).
    next_tick: u64,
}

impl<'a> Timed<'a> {
    fn new(spec: &'a NodeSpec) -> Timed<'a> {
        Timed {
            spec,
            hist: LatencyHistogram::new(),
            rtt: LatencyHistogram::new(),
            intervals: None,
            next_tick: u64::MAX,
        }
    }

    /// The first round trip [`Lean::round_trips`] may take: past the warm-up and the
    /// handshake, with the header and no delimiter (u64::MAX: none).
    fn lean_from(&self, header: bool, skip_first: bool) -> u64 {
        if header && !self.spec.delimiter {
            self.spec.warmup.max(skip_first as u64)
        } else {
            u64::MAX
        }
    }

    /// The measured round trips start at `start` (after the warm-up).
    fn begin(&mut self, start: u64) {
        if let Some(ms) = self.spec.interval_ms.filter(|&ms| ms > 0) {
            let iv = Intervals::new(ms * 1_000_000, start).of_round_trips();
            self.next_tick = iv.next_end();
            self.intervals = Some(iv);
        }
    }

    /// Round trip `i`, sent at `t0` and answered at `t1`; `counted` when it belongs in the
    /// distribution (not a warm-up's, not the handshake's).
    #[inline(always)]
    fn round_trip(&mut self, i: u64, t0: u64, t1: u64, counted: bool) {
        if counted {
            self.hist.record((t1 - t0) / 2);
            if self.spec.full_rtt {
                self.rtt.record(t1 - t0);
            }
        }
        if t1 >= self.next_tick {
            self.close(t1, i);
        }
    }

    /// Round trip `i` in plain mode: no clock reading unless intervals need one.
    #[inline(always)]
    fn untimed(&mut self, i: u64) {
        if self.next_tick != u64::MAX {
            let now = now_ns();
            if now >= self.next_tick {
                self.close(now, i);
            }
        }
    }

    /// Closes the intervals that ended by `now`, round trip `i` done.
    #[cold]
    #[inline(never)]
    fn close(&mut self, now: u64, i: u64) {
        if let Some(iv) = self.intervals.as_mut() {
            let done = (i + 1).saturating_sub(self.spec.warmup);
            let hists = std::slice::from_ref(&self.hist);
            self.next_tick = iv.close_until(now, &self.spec.name, done, None, hists);
        }
    }

    /// The distributions and the intervals, the last one ending at `end` with `done` round
    /// trips.
    fn finish(
        self,
        end: u64,
        done: u64,
    ) -> (
        LatencyHistogram,
        LatencyHistogram,
        Vec<crate::model::IntervalRecord>,
    ) {
        let hists = std::slice::from_ref(&self.hist);
        let intervals = self.intervals.map_or_else(Vec::new, |iv| {
            iv.finish(end, &self.spec.name, done, None, hists)
        });
        (self.hist, self.rtt, intervals)
    }
}

/// What the ping's lean loop ([`Lean::round_trips`]) works on.
struct Lean<'r, 's> {
    io: &'r mut Io,
    msg: &'r mut RawMsg,
    timed: &'r mut Timed<'s>,
    progress: &'r mut Progress,
}

impl<'r, 's> Lean<'r, 's> {
    fn new(
        io: &'r mut Io,
        msg: &'r mut RawMsg,
        timed: &'r mut Timed<'s>,
        progress: &'r mut Progress,
    ) -> Self {
        Lean {
            io,
            msg,
            timed,
            progress,
        }
    }

    /// The round trips from `from` on, once nothing is left to settle (past the warm-up
    /// and the handshake, with the header and no delimiter): the loop of [`run`] with its
    /// settled questions out of it. Each request's header changes only in its sequence and
    /// stamp, and a reply is compared with its request's first sixteen bytes (the full
    /// checks word an error). The round trip after the last one taken, and why the run
    /// stopped, if it did.
    #[inline(never)]
    fn round_trips(
        self,
        s: &mut zmq::Socket,
        spec: &NodeSpec,
        from: u64,
    ) -> Result<(u64, Option<(zmq::Error, u64)>)> {
        let Lean {
            io,
            msg,
            timed,
            progress,
        } = self;
        let total = spec.warmup + spec.count;
        stamp(msg, spec, false, from, 0);
        let Some([word, _]) = msg.head_words() else {
            return Ok((from, None));
        };
        for i in from..total {
            if crate::interrupt::interrupted() {
                return Ok((i, Some((zmq::Error::EINTR, i))));
            }
            let t0 = now_ns();
            msg.write_words_at(8, [i, t0]);
            if let Err(e) = io.send(msg, s, 0).and_then(|()| io.recv(msg, s)) {
                return Ok((i, Some((e, i))));
            }
            if msg.len() != spec.size || msg.head_words() != Some([word, i]) {
                check_size(msg, spec.size, i)?;
                check_echo(msg, i, spec, &mut true)?;
                // An echo that changed what the checks allow: the next request's header
                // is written whole, as run() writes each.
                stamp(msg, spec, false, i, 0);
            }
            progress.tick(i);
            let t1 = now_ns();
            timed.round_trip(i, t0, t1, true);
        }
        Ok((total, None))
    }
}

/// The round trips' rate: `done` of `size` B from `start` to `end`.
fn spanned(done: u64, size: usize, start: u64, end: u64) -> Throughput {
    Throughput {
        messages: done,
        payload_bytes: done * size as u64,
        start_ns: start,
        end_ns: end,
    }
}

/// Writes request `i`'s header, stamped `t0`, into the start of `msg`.
#[inline(always)]
fn stamp(msg: &mut RawMsg, spec: &NodeSpec, warm: bool, i: u64, t0: u64) {
    let h = Header {
        flags: FLAG_TIMESTAMP | if warm { FLAG_WARMUP } else { 0 },
        stream_id: spec.stream_id,
        sequence: i,
        send_ns: t0,
    };
    msg.write_array(&h.to_bytes());
}

/// Sends the request: after an empty delimiter frame, whose echo is read back first, when
/// `delimiter` (a DEALER talking to a REP).
#[inline(always)]
fn request(
    io: &mut Io,
    msg: &mut RawMsg,
    delim: &mut RawMsg,
    s: &mut zmq::Socket,
    delimiter: bool,
) -> zmq::Result<()> {
    if delimiter {
        io.send(delim, s, zmq::SNDMORE)
            .and_then(|()| io.send(msg, s, 0))
            .and_then(|()| io.recv(delim, s))
    } else {
        io.send(msg, s, 0)
    }
}

/// Checks that reply `i` carries request `i`'s header back; `header` turns false when the
/// first reply shows an echo side that answers with bytes of its own (when the spec only
/// detects the header).
#[inline(always)]
fn check_echo(msg: &mut RawMsg, i: u64, spec: &NodeSpec, header: &mut bool) -> Result<()> {
    match Header::decode(msg.prefix(HEADER_LEN)) {
        Ok(Some(h)) if h.sequence == i => Ok(()),
        Ok(Some(h)) => Err(Error::Protocol(format!(
            "reply #{i} carries sequence {}; the echo side answered out of order",
            h.sequence
        ))),
        // The first reply tells whether the echo side sends the bytes back: one that
        // answers with bytes of its own is measured on without the check (and the
        // front-end says so). After that, a reply without its request's header is
        // a corrupted reply, not a kind of echo.
        Ok(None) if spec.header == HeaderUse::Detect && i == 0 => {
            *header = false;
            Ok(())
        }
        Ok(None) if i > 0 => Err(Error::Protocol(format!(
            "reply #{i} does not carry request #{i}'s bytes back, although the replies before it did: the echo side corrupted it"
        ))),
        other => Err(Error::Protocol(format!(
            "reply #{i} does not carry request #{i}'s header ({})",
            match other {
                Ok(_) => "the bytes are not a measurement header".to_string(),
                Err(e) => e.to_string(),
            }
        ))),
    }
}

/// A run stopped at round trip `i` by `e`: the round trips it keeps, and why it was cut
/// short when a signal ended it (None: the peer stopped, which the caller words); None
/// when the error ends the node at once. A compatible command keeps what was measured
/// when its peer stopped part-way or a signal ended it (it prints it, then fails).
fn partial(spec: &NodeSpec, e: zmq::Error, i: u64) -> Option<(u64, Option<String>)> {
    let by_signal = e == zmq::Error::EINTR && crate::interrupt::interrupted();
    if !(spec.keep_partial && (e == zmq::Error::EAGAIN || by_signal) && i > spec.warmup) {
        return None;
    }
    let done = i - spec.warmup;
    let why = by_signal.then(|| super::sink::interrupted_after(done, "round trips"));
    Some((done, why))
}
