//! The source role: a stream of messages with the measurement header (PUSH, PUB, XPUB,
//! PAIR or DEALER), as fast as the socket takes them (closed loop) or on a fixed schedule
//! (open loop).
//!
//! In open loop, message i is due at start + i / rate; its header carries the due time, so
//! the sink's latency counts from when the message should have left (no coordinated
//! omission), and the delay between due and actual send is recorded apart.
//!
//! PTMP's sender (check_send, check_sendrecv) is this role with a few of its own fields
//! (`own`): a start delay, a hold before closing, and PTMP's trailer after the header
//! (first.rs). `zmqperf diagnose`'s senders use others: messages due in batches, the time
//! of the sends that found the socket full (around.rs), and the end mark sent again until
//! the stop (end.rs, with the quit). Each is chosen before the loop.

use super::control::Control;
use super::shape::Shape;
use super::{
    node_usage, open_all, placement, rss_kib, wait_until, HeaderUse, Io, NodeSpec, Quit,
    RoleReport, SentFacts,
};
use crate::clock::now_ns;
use crate::error::Result;
use crate::header::{Header, FLAG_END, FLAG_TIMESTAMP, FLAG_WARMUP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::net::Waiting;
use crate::stats::{LatencyHistogram, Throughput};
use crate::zmq;
use around::{Around, Batched, FullSends, OptIn, Plain};
use first::{FirstFrame, HeaderOnly, Trailer};
use std::time::{Duration, Instant};

mod around;
mod end;
mod first;
mod join;
pub(crate) use join::senders_pause_ms;
#[cfg(test)]
mod tests;

pub use first::{opened_ns, quit_delay_ms, TRAILER_END};

/// The source's own field (in its spec's `own`): ms to sleep between the start and the
/// first message (PTMP's START_DELAY_MS; a stop signal cuts it short).
pub const START_DELAY_MS: &str = "start_delay_ms";
/// The source's own field: ms to keep the socket after the last message under
/// [`Quit::Hold`] (PTMP's QUIT_DELAY_MS), unless the runner's stop comes first.
pub const HOLD_MS: &str = "hold_ms";
/// The source's own field: present, every message carries PTMP's trailer after the header
/// (the clock when the socket opened).
pub const OPENED_TRAILER: &str = "opened_trailer";
/// The source's own field: QUIT_DELAY_MS, written in the trailer's second part.
pub const TRAILER_QUIT_MS: &str = "trailer_quit_ms";
/// The source's own field: present, every message is PTMP's (the type frame, then a
/// TPSet whose count is the sequence) in place of the header (check_send --wire ptmp).
pub const PTMP_WIRE: &str = "ptmp_wire";

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    if let Some(t) = &spec.ticks {
        // The fan-out floor writes the same ticks to plain sockets.
        if t.raw {
            return super::swarm::raw::writer::run_node(spec, t, ctl);
        }
        return super::publisher::run_node(spec, t, ctl);
    }
    let mut opened = open_all(ctx, spec, ctl, spec.timeout())?;
    let opened_ns = now_ns();
    let o = &mut opened[0];
    let wait = Waiting {
        endpoint: o.endpoint.as_str(),
        peer: spec.peer_or("the receiving node"),
        timeout: spec.timeout(),
        expected: spec.count,
        unit: "messages",
        watch: o.watch.as_ref(),
    };
    let s = &mut o.sock;
    let mut io = Io::new(spec.io, spec.timeout()).sending_to_peer_of(s);
    if let Some(sock) = spec
        .sockets
        .first()
        .filter(|p| p.kind == crate::topology::SocketType::Radio)
    {
        io.send_to_group(
            sock.options
                .group
                .as_deref()
                .unwrap_or(crate::topology::DEFAULT_GROUP),
        )?;
    }
    ctl.wait_start(spec.timeout())?;
    if let Some(&ms) = spec.own.get(START_DELAY_MS) {
        sleep_unless_stopped(Duration::from_millis(ms));
    }
    if let Some(&ms) = spec.own.get(join::JOIN_MS) {
        sleep_unless_stopped(Duration::from_millis(ms));
    }
    let subscription_wait_ns = join::wait_subscriptions(spec, &mut io, s, &wait)?;
    let shape = shape_of(spec);
    let mut m = RawMsg::new();
    let mut stream = Stream::of(spec, &shape, &wait);
    let warm_start = warm_up(&stream, &mut io, s, &mut m)?;
    let mut delay = LatencyHistogram::new();
    let rss = RssAround::before();
    // The measured stream goes on with the warm-up's schedule: its first message is due one
    // interval after the last warm-up message.
    let start = match stream.interval_ns {
        Some(iv) if spec.warmup > 0 => due_at(warm_start, spec.warmup, iv),
        _ => now_ns(),
    };
    stream.start = start;
    let (sent, cut_short, full_send_ns) = send_all(
        &stream,
        trailer(spec, opened_ns),
        &mut io,
        s,
        &mut m,
        &mut delay,
    )?;
    let end = now_ns();
    ctl.sent_with(rss.facts(start, end))?;
    let peer_closed = end::finish(&stream, &mut io, s, &mut m, o.watch.as_ref(), ctl)?;
    // What the watch saw by the time a held socket closes (PTMP's sender says from it
    // whether a receiver was there).
    let sightings = (spec.quit == Quit::Hold)
        .then(|| o.watch.as_ref().map(|w| w.sightings()))
        .flatten();
    Ok(RoleReport {
        header: stream.header,
        subscription_wait_ns,
        peer_closed,
        send_delay: stream.interval_ns.map(|_| delay),
        cut_short,
        send: Some(Throughput {
            messages: sent,
            payload_bytes: sent * spec.size as u64,
            start_ns: start,
            end_ns: end,
        }),
        usage: Some(node_usage(spec)),
        io_waits: io.waits(),
        sightings,
        full_send_ns,
        ..Default::default()
    })
}

/// The warm-up messages, unmeasured; in open loop they keep the schedule too: sent at
/// once, they would fill a PUB's queue and make it drop the first measured messages. The
/// clock when the warm-up began (its schedule's base).
fn warm_up(st: &Stream, io: &mut Io, s: &mut zmq::Socket, m: &mut RawMsg) -> Result<u64> {
    let warm_start = now_ns();
    for i in 0..st.spec.warmup {
        if let Some(iv) = st.interval_ns {
            wait_until(due_at(warm_start, i, iv));
        }
        m.reset_uninit(st.first_len)?;
        if st.header {
            let h = Header {
                flags: FLAG_WARMUP,
                stream_id: st.spec.stream_id,
                sequence: i,
                send_ns: 0,
            };
            m.write_array(&h.to_bytes());
        }
        send_one(st.shape, io, s, m, i).map_err(|e| st.wait.error(e, 0, String::new()))?;
    }
    Ok(warm_start)
}

/// In a process of its own, the process's memory around the send loop is the source's:
/// taken before it, and after it for the `sent` message.
struct RssAround {
    before_kib: Option<u64>,
}

impl RssAround {
    fn before() -> Self {
        RssAround {
            before_kib: (placement() == "process").then(|| rss_kib().0),
        }
    }

    /// What the source says with its `sent`: the loop's times, and the memory after it.
    fn facts(&self, start: u64, end: u64) -> SentFacts {
        let after = self.before_kib.map(|_| rss_kib());
        SentFacts {
            first_send_ns: Some(start),
            last_send_ns: Some(end),
            rss_before_kib: self.before_kib,
            rss_after_kib: after.map(|(now, _)| now),
            rss_peak_kib: after.map(|(_, peak)| peak),
        }
    }
}

/// PTMP's trailer, when the spec asks for it.
fn trailer(spec: &NodeSpec, opened_ns: u64) -> Option<Trailer> {
    spec.own.contains_key(OPENED_TRAILER).then(|| Trailer {
        opened_ns,
        quit_ms: spec
            .own
            .get(TRAILER_QUIT_MS)
            .map(|&ms| u32::try_from(ms).unwrap_or(u32::MAX)),
        size: spec.size,
    })
}

/// Sleeps for `d`, or less when a stop signal comes (checked every 10 ms).
pub(crate) fn sleep_unless_stopped(d: Duration) {
    let until = Instant::now() + d;
    while !crate::interrupt::interrupted() {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(Duration::from_millis(10)));
    }
}

/// What the measured send loop needs, set once before it.
struct Stream<'a> {
    spec: &'a NodeSpec,
    shape: &'a Option<Shape>,
    /// What a failed send says.
    wait: &'a Waiting<'a>,
    header: bool,
    first_len: usize,
    interval_ns: Option<f64>,
    start: u64,
    every: u64,
}

impl<'a> Stream<'a> {
    /// The stream of `spec` in `shape` (a failed send says `wait`); its start is set when
    /// the warm-up is over.
    fn of(spec: &'a NodeSpec, shape: &'a Option<Shape>, wait: &'a Waiting<'a>) -> Self {
        Stream {
            spec,
            shape,
            wait,
            header: spec.size >= HEADER_LEN && spec.header != HeaderUse::Never,
            first_len: spec.frames.first().copied().unwrap_or(spec.size),
            interval_ns: spec.rate.map(|r| 1e9 / r),
            start: 0,
            every: spec.stamp_every.max(1),
        }
    }
}

/// The measured messages of a loop of the kind the spec asks for (its trailer, and what
/// it does around each send): the messages sent, why the loop ended early (a signal), and
/// the time spent in sends that found the socket full, when measured. The plain loops are
/// here, in a function of their own rather than in `run`, and the opt-in ones in another:
/// the loops' helpers (the header's encoding, the message calls) stay inlined into a
/// small function however `run` grows (callgrind, dev build: inlined into `run` next to
/// the opt-in features, the header's encoding no longer was).
#[inline(never)]
fn send_all(
    st: &Stream,
    trailer: Option<Trailer>,
    io: &mut Io,
    s: &mut zmq::Socket,
    m: &mut RawMsg,
    delay: &mut LatencyHistogram,
) -> Result<(u64, Option<String>, Option<u64>)> {
    let (sent, cut_short) = match (trailer, OptIn::of(st.spec)) {
        (Some(t), _) => send_stream(st, &t, &mut Plain, io, s, m, delay)?,
        (None, None) => send_stream(st, &HeaderOnly, &mut Plain, io, s, m, delay)?,
        (None, Some(kind)) => return send_opted_in(kind, st, io, s, m, delay),
    };
    Ok((sent, cut_short, None))
}

/// The loops of the kinds a spec opts in to (diagnose's senders), as [`send_all`].
#[inline(never)]
fn send_opted_in(
    kind: OptIn,
    st: &Stream,
    io: &mut Io,
    s: &mut zmq::Socket,
    m: &mut RawMsg,
    delay: &mut LatencyHistogram,
) -> Result<(u64, Option<String>, Option<u64>)> {
    Ok(match kind {
        OptIn::Batched(n) => {
            let mut batched = Batched { n };
            let (sent, cut_short) = send_stream(st, &HeaderOnly, &mut batched, io, s, m, delay)?;
            (sent, cut_short, None)
        }
        OptIn::FullSends => {
            let mut full = FullSends::default();
            let (sent, cut_short) = send_stream(st, &HeaderOnly, &mut full, io, s, m, delay)?;
            (sent, cut_short, full.full_send_ns())
        }
    })
}

/// The measured messages: each filled (its header time-stamped every `every` messages at
/// full speed, or at its due time in open loop, whose lateness goes in `delay`) and sent,
/// with what `around` does around each send. The messages sent, and why the loop ended
/// early (a signal).
#[inline(always)]
fn send_stream<W: FirstFrame, A: Around>(
    st: &Stream,
    first: &W,
    around: &mut A,
    io: &mut Io,
    s: &mut zmq::Socket,
    m: &mut RawMsg,
    delay: &mut LatencyHistogram,
) -> Result<(u64, Option<String>)> {
    // The stream's settings in locals of the loop (kept in registers, not read again from
    // the spec and the stream after each send).
    let (count, stream_id, shape) = (st.spec.count, st.spec.stream_id, st.shape);
    let (header, first_len, interval_ns) = (st.header, st.first_len, st.interval_ns);
    let (start, every) = (st.start, st.every);
    let last = count.saturating_sub(1);
    // The next time-stamped message at full speed (no division on the hot path): every
    // `every`-th, and the last, which also carries the end mark. So a message that is not
    // stamped is not the last either: one comparison.
    let mut next_stamp = 0u64;
    let mut sent = count;
    let mut cut_short = None;
    for i in 0..count {
        // A signal that ends the run: what was sent so far is the report. With a header,
        // this message goes as the last (the end mark), so a receiver that drains knows the
        // stream's length; without one, the stream ends here.
        let stop = crate::interrupt::interrupted();
        if stop && !(header && shape.is_none()) {
            sent = i;
            cut_short = Some(super::sink::interrupted_after(i, "messages sent"));
            break;
        }
        m.reset_uninit(first_len)?;
        if header {
            let end = || if i == last || stop { FLAG_END } else { 0 };
            let (flags, stamp) = match interval_ns {
                Some(iv) => {
                    let due = around.due(start, i, iv);
                    wait_until(due);
                    delay.record(now_ns() - due);
                    (FLAG_TIMESTAMP | end(), due)
                }
                None if i == next_stamp || stop => {
                    next_stamp = i.saturating_add(every).min(last);
                    (FLAG_TIMESTAMP | end(), now_ns())
                }
                None => (0, 0),
            };
            let h = Header {
                flags,
                stream_id,
                sequence: i,
                send_ns: stamp,
            };
            first.write(m, &h);
        } else if let Some(iv) = interval_ns {
            let due = around.due(start, i, iv);
            wait_until(due);
            delay.record(now_ns() - due);
        }
        let mark = around.before(s);
        let sent_one = send_msg::<W>(shape, io, s, m, i);
        around.after(mark);
        match sent_one {
            Ok(()) if stop => {
                sent = i + 1;
                cut_short = Some(super::sink::interrupted_after(sent, "messages sent"));
                break;
            }
            Ok(()) => {}
            // A signal that ends the run interrupted a blocked send: what left is the report.
            // PTMP's sender gives this message, with the end mark, a last second to go.
            Err(zmq::Error::EINTR) if crate::interrupt::interrupted() => {
                sent = i + first.last_try(s, m) as u64;
                cut_short = Some(super::sink::interrupted_after(sent, "messages sent"));
                break;
            }
            Err(e) => {
                return Err(st.wait.error(
                    e,
                    i,
                    " (sending blocked: the receiver stopped taking messages)".into(),
                ))
            }
        }
    }
    Ok((sent, cut_short))
}

/// The due time of message `i` of a schedule that starts at `base`, `iv` ns apart.
fn due_at(base: u64, i: u64, iv: f64) -> u64 {
    base + (i as f64 * iv) as u64
}

/// Typed frames or log lines: the loop fills the header frame, the shape sends the rest.
fn shape_of(spec: &NodeSpec) -> Option<Shape> {
    if spec.own.contains_key(PTMP_WIRE) {
        Some(Shape::Ptmp {
            detid: spec.stream_id,
        })
    } else if !spec.frames.is_empty() {
        Some(Shape::Typed {
            type_id: spec.type_id.to_le_bytes(),
            rest: spec.frames[1..].to_vec(),
        })
    } else if !spec.log_levels.is_empty() {
        Some(Shape::Log {
            levels: spec.log_levels.clone(),
            writer: spec.name.clone(),
        })
    } else {
        None
    }
}

/// Sends one message; a source whose [`FirstFrame`] retries sends it again after a
/// signal that is not a stop (the plain source's loop has no such test).
#[inline(always)]
fn send_msg<W: FirstFrame>(
    shape: &Option<Shape>,
    io: &mut Io,
    s: &mut zmq::Socket,
    m: &mut RawMsg,
    seq: u64,
) -> std::result::Result<(), zmq::Error> {
    let r = send_one(shape, io, s, m, seq);
    if W::RETRIES && r == Err(zmq::Error::EINTR) {
        return resend(shape, io, s, m, seq);
    }
    r
}

/// A send a signal interrupted, tried again until it goes, fails otherwise, or a stop
/// signal comes (EINTR then).
#[cold]
fn resend(
    shape: &Option<Shape>,
    io: &mut Io,
    s: &mut zmq::Socket,
    m: &mut RawMsg,
    seq: u64,
) -> std::result::Result<(), zmq::Error> {
    loop {
        if crate::interrupt::interrupted() {
            return Err(zmq::Error::EINTR);
        }
        match send_one(shape, io, s, m, seq) {
            Err(zmq::Error::EINTR) => {}
            r => return r,
        }
    }
}

/// Sends one message: the frame the loop filled, or the whole shape around it.
#[inline(always)]
fn send_one(
    shape: &Option<Shape>,
    io: &mut Io,
    s: &mut zmq::Socket,
    m: &mut RawMsg,
    seq: u64,
) -> std::result::Result<(), zmq::Error> {
    match shape {
        None => io.send(m, s, 0),
        Some(sh) => sh.send(s, m, seq, io),
    }
}

/// A source's own fields: its message shape; log lines need room for the header.
pub(super) fn fill(p: &super::fill::Place, spec: &mut NodeSpec) -> Result<()> {
    let shape = p.shape(p.node)?;
    if !shape.2.is_empty() && spec.size < HEADER_LEN {
        return Err(crate::error::Error::invalid(
            &format!("topology {}: node '{}': size", p.origin, p.node().name),
            &spec.size.to_string(),
            format!(
                "a log line carries the {HEADER_LEN}-byte header before its text; give size {HEADER_LEN} or more",
            ),
        ));
    }
    super::fill::set_shape(spec, shape);
    if let Some(ms) = join::pause_ms(p) {
        spec.own.insert(join::JOIN_MS.to_string(), ms);
    }
    join::hold_when_one_way(p, spec);
    Ok(())
}
