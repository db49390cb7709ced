//! The source role: a stream of messages with the measurement header (PUSH, PUB, XPUB,
//! PAIR or DEALER), as fast as the socket takes them (closed loop) or on a fixed schedule
//! (open loop).
//!
//! In open loop, message i is due at start + i / rate; its header carries the due time, so
//! the sink's latency counts from when the message should have left (no coordinated
//! omission), and the delay between due and actual send is recorded apart.

use super::control::Control;
use super::shape::Shape;
use super::{
    node_usage, open_all, placement, rss_kib, wait_until, HeaderUse, Io, NodeSpec, Quit,
    RoleReport, SentFacts,
};
use crate::clock::now_ns;
use crate::error::{zmq_err, Result};
use crate::header::{Header, FLAG_END, FLAG_TIMESTAMP, FLAG_WARMUP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::net::Waiting;
use crate::stats::{LatencyHistogram, Throughput};
use crate::zmq;

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
    let mut io = Io::new(spec.io, spec.timeout());
    ctl.wait_start(spec.timeout())?;
    let subscription_wait_ns = wait_subscriptions(spec, &mut io, s, &wait)?;
    let header = spec.size >= HEADER_LEN && spec.header != HeaderUse::Never;
    let shape = shape_of(spec);
    let first_len = spec.frames.first().copied().unwrap_or(spec.size);
    let every = spec.stamp_every.max(1);
    let mut m = RawMsg::new();
    let interval_ns = spec.rate.map(|r| 1e9 / r);
    // In open loop the warm-up keeps the schedule too: sent at once, it would fill a PUB's
    // queue and make it drop the first measured messages.
    let warm_start = now_ns();
    for i in 0..spec.warmup {
        if let Some(iv) = interval_ns {
            wait_until(due_at(warm_start, i, iv));
        }
        m.reset_uninit(first_len)?;
        if header {
            let h = Header {
                flags: FLAG_WARMUP,
                stream_id: spec.stream_id,
                sequence: i,
                send_ns: 0,
            };
            m.write_array(&h.to_bytes());
        }
        send_one(&shape, &mut io, s, &mut m, i).map_err(|e| wait.error(e, 0, String::new()))?;
    }
    let mut delay = LatencyHistogram::new();
    // In a process of its own, the process's memory around the loop is the source's.
    let own_process = placement() == "process";
    let rss_before_kib = own_process.then(|| rss_kib().0);
    // The measured stream goes on with the warm-up's schedule: its first message is due one
    // interval after the last warm-up message.
    let start = match interval_ns {
        Some(iv) if spec.warmup > 0 => due_at(warm_start, spec.warmup, iv),
        _ => now_ns(),
    };
    let stream = Stream {
        spec,
        shape: &shape,
        header,
        first_len,
        interval_ns,
        start,
        every,
    };
    let (sent, cut_short) = send_stream(&stream, &mut io, s, &mut m, &mut delay, &wait)?;
    let end = now_ns();
    let (rss_after_kib, rss_peak_kib) = if own_process {
        let (now, peak) = rss_kib();
        (Some(now), Some(peak))
    } else {
        (None, None)
    };
    ctl.sent_with(SentFacts {
        first_send_ns: Some(start),
        last_send_ns: Some(end),
        rss_before_kib,
        rss_after_kib,
        rss_peak_kib,
    })?;
    let peer_closed = quit(spec, o.watch.as_ref(), &o.sock, ctl)?;
    Ok(RoleReport {
        header,
        subscription_wait_ns,
        peer_closed,
        send_delay: interval_ns.map(|_| delay),
        cut_short,
        send: Some(Throughput {
            messages: sent,
            payload_bytes: sent * spec.size as u64,
            start_ns: start,
            end_ns: end,
        }),
        usage: Some(node_usage(spec)),
        io_waits: io.waits(),
        ..Default::default()
    })
}

/// What the measured send loop needs, set once before it.
struct Stream<'a> {
    spec: &'a NodeSpec,
    shape: &'a Option<Shape>,
    header: bool,
    first_len: usize,
    interval_ns: Option<f64>,
    start: u64,
    every: u64,
}

/// The measured messages: each filled (its header time-stamped every `every` messages at
/// full speed, or at its due time in open loop, whose lateness goes in `delay`) and sent.
/// The messages sent, and why the loop ended early (a signal).
#[inline(always)]
fn send_stream(
    st: &Stream,
    io: &mut Io,
    s: &mut zmq::Socket,
    m: &mut RawMsg,
    delay: &mut LatencyHistogram,
    wait: &Waiting,
) -> Result<(u64, Option<String>)> {
    let last = st.spec.count.saturating_sub(1);
    // Counts down to the next time-stamped message (no division on the hot path).
    let mut until_stamp = 0u64;
    let mut sent = st.spec.count;
    let mut cut_short = None;
    for i in 0..st.spec.count {
        // A signal that ends the run: what was sent so far is the report. With a header,
        // this message goes as the last (the end mark), so a receiver that drains knows the
        // stream's length; without one, the stream ends here.
        let stop = crate::interrupt::interrupted();
        if stop && !(st.header && st.shape.is_none()) {
            sent = i;
            cut_short = Some(super::sink::interrupted_after(i, "messages sent"));
            break;
        }
        m.reset_uninit(st.first_len)?;
        if st.header {
            let (flags, stamp) = match st.interval_ns {
                Some(iv) => {
                    let due = st.start + (i as f64 * iv) as u64;
                    wait_until(due);
                    delay.record(now_ns() - due);
                    (FLAG_TIMESTAMP, due)
                }
                None if until_stamp == 0 || i == last || stop => {
                    until_stamp = st.every;
                    (FLAG_TIMESTAMP, now_ns())
                }
                None => (0, 0),
            };
            until_stamp = until_stamp.wrapping_sub(1);
            let h = Header {
                flags: flags | if i == last || stop { FLAG_END } else { 0 },
                stream_id: st.spec.stream_id,
                sequence: i,
                send_ns: stamp,
            };
            m.write_array(&h.to_bytes());
        } else if let Some(iv) = st.interval_ns {
            let due = st.start + (i as f64 * iv) as u64;
            wait_until(due);
            delay.record(now_ns() - due);
        }
        match send_one(st.shape, io, s, m, i) {
            Ok(()) if stop => {
                sent = i + 1;
                cut_short = Some(super::sink::interrupted_after(sent, "messages sent"));
                break;
            }
            Ok(()) => {}
            // A signal that ends the run interrupted a blocked send: what left is the report.
            Err(zmq::Error::EINTR) if crate::interrupt::interrupted() => {
                sent = i;
                cut_short = Some(super::sink::interrupted_after(i, "messages sent"));
                break;
            }
            Err(e) => {
                return Err(wait.error(
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

/// No slow joiner: the first message leaves once every subscription is in. The time that
/// took, ns, when there were any to wait for.
fn wait_subscriptions(
    spec: &NodeSpec,
    io: &mut Io,
    s: &mut zmq::Socket,
    wait: &Waiting,
) -> Result<Option<u64>> {
    let mut sub = RawMsg::new();
    let t_sub = now_ns();
    for _ in 0..spec.subscriptions {
        io.recv(&mut sub, s)
            .map_err(|e| wait.error(e, 0, String::new()))?;
    }
    Ok((spec.subscriptions > 0).then(|| now_ns() - t_sub))
}

/// Typed frames or log lines: the loop fills the header frame, the shape sends the rest.
fn shape_of(spec: &NodeSpec) -> Option<Shape> {
    if !spec.frames.is_empty() {
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

/// How the source ends once its last message has left (its spec's `quit`); whether every
/// peer hung up, when it waited for that.
fn quit(
    spec: &NodeSpec,
    watch: Option<&crate::net::PeerWatch>,
    s: &zmq::Socket,
    ctl: &mut dyn Control,
) -> Result<Option<bool>> {
    Ok(match spec.quit {
        // Keep the connection up until the receivers have everything and hang up.
        Quit::WaitForPeer => watch
            .filter(|_| !crate::interrupt::interrupted())
            .map(|w| w.wait_gone_n(spec.peers.max(1), spec.timeout())),
        // Closing throws the queue away.
        Quit::LingerZero => set_linger(s, 0)?,
        // Terminating the context (when the node ends) waits for the queue, without bound.
        Quit::DefaultLinger => set_linger(s, -1)?,
        Quit::WaitForStop => {
            let until = std::time::Instant::now() + spec.timeout();
            while !ctl.stop_requested() && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            set_linger(s, 0)?
        }
    })
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

/// Sets the linger the socket closes with; no peer was watched.
fn set_linger(s: &zmq::Socket, ms: i32) -> Result<Option<bool>> {
    s.set_linger(ms).map_err(zmq_err("setting ZMQ_LINGER"))?;
    Ok(None)
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roles::{SockPlan, TestRunner};
    use crate::topology::{Role, SocketType};
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_paced_source_keeps_its_schedule_through_the_warm_up() {
        let ctx = zmq::Context::new();
        let plan = SockPlan {
            kind: SocketType::Push,
            bind: vec!["tcp://127.0.0.1:*".into()],
            connect: Vec::new(),
            options: Default::default(),
        };
        let mut spec = NodeSpec::single("src", Role::Source, plan, Duration::from_secs(5));
        spec.size = 64;
        spec.count = 20;
        spec.warmup = 200;
        spec.rate = Some(1000.0);
        spec.quit = Quit::LingerZero;
        let (tx, rx) = mpsc::channel();
        let c2 = ctx.clone();
        let t0 = now_ns();
        let h = std::thread::spawn(move || run(&c2, &spec, &mut TestRunner::new(tx, true)));
        let ep = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        let pull = ctx.socket(zmq::PULL).unwrap();
        pull.set_linger(0).unwrap();
        pull.set_rcvtimeo(5000).unwrap();
        pull.connect(&ep).unwrap();
        for _ in 0..220 {
            pull.recv_bytes(0).expect("every message arrives");
        }
        let r = h.join().unwrap().unwrap();
        let send = r.send.unwrap();
        // 200 warm-up messages at 1 ms each are due before the first measured one (sent at
        // once, the warm-up took a few ms).
        assert!(
            send.start_ns >= t0 + 199_000_000,
            "the measured stream began {} ms after the start: the warm-up was not paced",
            (send.start_ns - t0) / 1_000_000
        );
        // The measured messages keep the pace too, and none left before its time.
        assert!(send.end_ns - send.start_ns >= 19_000_000);
        assert_eq!(r.send_delay.unwrap().count(), 20);
    }

    #[test]
    fn a_wait_never_ends_before_its_time() {
        let mut due = now_ns();
        for i in 0..200u64 {
            // Gaps of 10 us (spun) and 2 ms (slept), in turn.
            due += if i % 2 == 0 { 10_000 } else { 2_000_000 };
            wait_until(due);
            assert!(now_ns() >= due, "wait {i} ended early");
        }
    }
}
