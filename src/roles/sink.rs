//! The sink role: takes streams (PULL, SUB, XSUB, PAIR, DEALER or ROUTER), keeps the loss
//! ledger and the one-way latency of the time-stamped messages of each stream, and ends
//! when every stream it expects has ended, when the runner stops it (a share of a
//! load-balanced stream), or after being idle for the timeout (cut short: it reports what
//! arrived).

use super::control::{Control, END_DRAIN, STOP_POLL};
use super::eot::EotWatch;
use super::shape::{LogFilter, FIRST_FRAME_MIN};
use super::{node_usage, open_all, HeaderUse, Io, Next, NodeSpec, Patience, RoleReport};
use crate::clock::now_ns;
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_END, FLAG_WARMUP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::net::{check_size, Waiting};
use crate::progress::Progress;
use crate::stats::{LatencyHistogram, Ledger, OneWay, Throughput};
use crate::topology::SocketType;
use crate::zmq;
use std::time::Duration;

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let mut opened = open_all(ctx, spec, ctl, STOP_POLL)?;
    let o = &mut opened[0];
    // A sink in a stream: its end comes on the stream's end-of-transmission channel.
    let mut eot = spec
        .eot
        .as_deref()
        .map(|ep| EotWatch::open(ctx, ep))
        .transpose()?;
    ctl.wait_start(spec.timeout())?;
    let spec = &*spec.started(ctl.send_offsets());
    let total: u64 = spec.streams.iter().map(|(_, n)| n).sum();
    let warm_total: u64 = spec.warmup * spec.streams.len() as u64;
    let wait = Waiting {
        endpoint: o.endpoint.as_str(),
        peer: spec.peer_or("the sending node"),
        timeout: spec.timeout(),
        expected: total,
        unit: "messages",
        watch: o.watch.as_ref(),
    };
    let routed = spec.sockets[0].kind == SocketType::Router;
    let s = &mut o.sock;
    // Stream id -> index of its latency histogram.
    let top = spec.streams.iter().map(|(id, _)| *id).max().unwrap_or(0) as usize;
    let mut slot = vec![usize::MAX; top + 1];
    for (i, (id, _)) in spec.streams.iter().enumerate() {
        slot[*id as usize] = i;
    }
    // One histogram per expected stream, and one more for streams nobody announced (a
    // sender outside the topology, such as a compatible command's peer).
    let mut hists: Vec<LatencyHistogram> = (0..=spec.streams.len())
        .map(|_| LatencyHistogram::new())
        .collect();
    let other = spec.streams.len();
    // How each stream's send stamps become delays on this clock (its offset when its sender
    // is on another host), and what the check of them finds. A stream nobody announced has
    // no offset: it is read on this clock.
    let mut clocks: Vec<OneWay> = spec
        .streams
        .iter()
        .map(|(id, _)| spec.one_way(*id, spec.timeout()))
        .chain(std::iter::once(OneWay::same_clock(spec.timeout())))
        .collect();
    // With a channel to watch, the receive gives up every STOP_POLL to look at it, and the
    // idle time is added up here.
    let slice = if eot.is_some() {
        STOP_POLL
    } else {
        spec.timeout()
    };
    // A sender in another process goes on sending after a signal here: the sink stops at
    // once. One in this process (inproc) stops sending itself, and the sink then drains what
    // it sent (its quiet slice ends the wait): a sink that stopped reading would leave that
    // sender blocked at its high-water mark.
    let at_once = !spec
        .sockets
        .iter()
        .flat_map(|p| p.bind.iter().chain(&p.connect))
        .any(|e| e.starts_with("inproc://"));
    let mut patience = Patience::new(slice).draining_after_signal(!at_once);
    let mut idle_total = Duration::ZERO;
    // When the current quiet spell began, kept across the slices of a sink in a stream
    // (each starts a new Patience): the end of its rate is the last arrival, not the
    // moment the end of transmission was read.
    let mut quiet_at: Option<u64> = None;
    // Messages received when the end of transmission had covered every flow.
    let mut at_eot: Option<u64> = None;
    let mut io = Io::new(spec.io, spec.timeout());
    let mut ends = 0usize;
    let mut header = spec.size >= HEADER_LEN;
    let mut progress = Progress::new("messages", total);
    let mut ledger = Ledger::new();
    let mut msg = RawMsg::new();
    let mut id = RawMsg::new();
    // Typed frames and log lines: what to check, and which lines a SUB filter lets through.
    let first_len = spec.frames.first().copied().unwrap_or(spec.size);
    let log = (!spec.log_levels.is_empty()).then(|| {
        let prefixes = spec.sockets[0]
            .options
            .subscribe
            .clone()
            .unwrap_or_default();
        LogFilter::new(&spec.log_levels, &prefixes)
    });
    let mut level = Vec::new();
    let mut frame_error: Option<String> = None;
    let mut received = 0u64;
    let mut seen = 0u64;
    let mut start = 0;
    // The latest clock reading at an arrival (the first and the time-stamped ones).
    let mut last_read_ns = 0;
    let mut cut_short = None;
    let mut protocol_error = None;
    loop {
        // A signal that ends the run (a relaxed load per message: one instruction); the
        // messages so far are the report.
        if at_once && crate::runner::interrupted() {
            cut_short = Some(interrupted_after(received, "messages"));
            break;
        }
        let first = if routed { &mut id } else { &mut msg };
        let next = patience
            .recv(first, s, ctl, &mut io)
            .map_err(|e| wait.error(e, received, String::new()))?;
        match next {
            Next::Got => {
                idle_total = Duration::ZERO;
                quiet_at = None;
            }
            Next::Interrupted => {
                cut_short = Some(interrupted_after(received, "messages"));
                break;
            }
            Next::Stopped if eot.is_some() => {
                let w = eot.as_mut().expect("checked");
                w.poll();
                let short = !w.covers(&spec.streams) || received < w.total(&spec.streams);
                if short && quiet_for(&patience) < END_DRAIN {
                    continue;
                }
                if w.covers(&spec.streams) {
                    at_eot.get_or_insert(received);
                    let want = w.total(&spec.streams);
                    if received < want {
                        cut_short = Some(format!(
                            "the end of transmission announced {want} messages; {received} arrived before the senders finished and the queue ran dry"
                        ));
                    }
                } else {
                    cut_short = Some(format!(
                        "the end of transmission never came; {received} messages arrived before the senders finished and the queue ran dry"
                    ));
                }
                break;
            }
            Next::Idle if eot.is_some() => {
                let w = eot.as_mut().expect("checked");
                w.poll();
                idle_total += patience.idle();
                quiet_at = quiet_at.or(patience.quiet_since_ns());
                patience = Patience::new(slice).draining_after_signal(!at_once);
                if w.covers(&spec.streams) {
                    let want = w.total(&spec.streams);
                    at_eot.get_or_insert(received);
                    if received >= want {
                        break;
                    }
                    if idle_total >= END_DRAIN {
                        cut_short = Some(format!(
                            "the end of transmission announced {want} messages; {received} arrived, and nothing more for {:.1} s after it",
                            idle_total.as_secs_f64()
                        ));
                        break;
                    }
                    continue;
                }
                if idle_total < spec.timeout() {
                    continue;
                }
                if received == 0 {
                    return Err(wait.error(zmq::Error::EAGAIN, 0, String::new()));
                }
                cut_short = Some(format!(
                    "the end of transmission never came: nothing arrived for {:.1} s after {received} messages",
                    idle_total.as_secs_f64()
                ));
                break;
            }
            Next::Stopped => {
                // Short of what it expects (or, sharing a stream, unable to know): the
                // queue may only be held up, so it takes END_DRAIN of quiet to give up.
                let short = !spec.ends_itself || (ends < spec.streams.len() && received < total);
                if short && quiet_for(&patience) < END_DRAIN {
                    continue;
                }
                if spec.ends_itself && ends < spec.streams.len() && received < total {
                    cut_short = Some(format!(
                        "the end of the stream never came: {received} of {total} messages arrived before the senders finished and the queue ran dry"
                    ));
                }
                break;
            }
            Next::Idle if received == 0 && spec.ends_itself => {
                return Err(wait.error(zmq::Error::EAGAIN, 0, String::new()))
            }
            Next::Idle => {
                let holes = if header {
                    format!(
                        " ({} missing by sequence number so far)",
                        ledger.summary(None).lost
                    )
                } else {
                    String::new()
                };
                cut_short = Some(format!(
                    "nothing arrived for {:.1} s after {received} of {total} messages{holes}",
                    patience.idle().as_secs_f64()
                ));
                break;
            }
        }
        if routed {
            io.recv(&mut msg, s)
                .map_err(|e| wait.error(e, received, String::new()))?;
        }
        if log.is_some() {
            // The first frame was the level (the topic); the line follows.
            level.clear();
            level.extend_from_slice(msg.bytes());
            io.recv(&mut msg, s)
                .map_err(|e| wait.error(e, received, String::new()))?;
        }
        if !spec.frames.is_empty() {
            if let Some(why) = check_frames(&mut msg, &mut id, s, spec, &mut io) {
                frame_error.get_or_insert(format!("message {}: {why}", seen + 1));
            }
        }
        if first_len > 0 {
            check_size(&mut msg, first_len, seen)?;
        }
        if seen == 0 && header && spec.header == HeaderUse::Detect {
            // A peer without the header (libzmq's C tools): count only. A header this
            // build cannot read is not "no header": the ledger would be silently off.
            header = match Header::decode(msg.prefix(HEADER_LEN)) {
                Ok(h) => h.is_some(),
                Err(e) => return Err(Error::Protocol(format!("the first message: {e}"))),
            };
        }
        seen += 1;
        progress.tick(seen);
        if !header {
            // Too small for the header: count, as libzmq's local_thr does.
            if seen <= warm_total {
                continue;
            }
            if received == 0 {
                start = now_ns();
            }
            received += 1;
            if let Some(w) = eot.as_mut() {
                if eot_done(w, &spec.streams, received, &mut at_eot) {
                    break;
                }
            } else if spec.ends_itself && received == total {
                break;
            }
            continue;
        }
        let h = match Header::decode(msg.prefix(HEADER_LEN)) {
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
                protocol_error = Some(format!("after {received} messages: {why}"));
                break;
            }
        };
        if h.flags & FLAG_WARMUP != 0 {
            continue;
        }
        // The clock is read only where a figure needs it (as in local_thr): on the first
        // message and on the time-stamped ones.
        let stamped = h.has_timestamp();
        let now = if stamped || received == 0 {
            now_ns()
        } else {
            0
        };
        if received == 0 {
            start = now;
        }
        last_read_ns = last_read_ns.max(now);
        received += 1;
        // A log line behind a filter: its rank among the lines the filter lets through
        // is the sequence the ledger keeps, so a hole is a line that should have come.
        let seq = match &log {
            Some(f) => {
                let want = &spec.log_levels[(h.sequence % spec.log_levels.len() as u64) as usize];
                if level != want.as_bytes() {
                    frame_error.get_or_insert(format!(
                        "line {} of stream {} came with level '{}', but it was written as {want}",
                        h.sequence,
                        h.stream_id,
                        String::from_utf8_lossy(&level)
                    ));
                } else if !f.passes(h.sequence) {
                    frame_error.get_or_insert(format!(
                        "line {} ({want}) of stream {} came through a filter that should have stopped it",
                        h.sequence, h.stream_id
                    ));
                }
                f.rank(h.sequence)
            }
            None => h.sequence,
        };
        ledger.record(h.stream_id, seq);
        if stamped {
            let i = match slot.get(h.stream_id as usize) {
                Some(&i) if i != usize::MAX => i,
                _ => other,
            };
            // An impossible stamp (another clock) is counted by its check, never recorded.
            if let Some(d) = clocks[i].delay(h.send_ns, now) {
                hists[i].record(d);
            }
        }
        match &log {
            // A filtered stream ends at the last line the filter lets through.
            Some(_) => {
                let want = slot
                    .get(h.stream_id as usize)
                    .and_then(|&i| spec.streams.get(i))
                    .map(|(_, n)| *n);
                if want == Some(seq + 1) {
                    ends += 1;
                }
            }
            None if h.flags & FLAG_END != 0 => ends += 1,
            None => {}
        }
        // With the header, a stream ends at its end mark, not after `total` arrivals:
        // duplicates would use up the count and leave real messages unread.
        if let Some(w) = eot.as_mut() {
            if eot_done(w, &spec.streams, received, &mut at_eot) {
                break;
            }
            continue;
        }
        if spec.ends_itself && ends == spec.streams.len() {
            break;
        }
        // Or at the count: every message the streams were to carry has arrived once (an
        // end mark that never comes must not cost the timeout, and a longer stream is not
        // read past it). Duplicates do not count: the distinct figure is taken only once
        // the arrivals reach the count, so the common path costs one comparison.
        if spec.ends_itself && received >= total && ledger.summary(None).received >= total {
            break;
        }
    }
    progress.finish();
    let end = if received == 0 {
        // Nothing arrived: no span (a merge of replicas leaves it out).
        start
    } else if cut_short.is_some() || !spec.ends_itself || eot.is_some() {
        // Rate over the time messages were arriving, not the idle wait, the wait for the
        // runner's stop (a share of a load-balanced stream), the drain after it, or the
        // wait for a stream's end of transmission.
        // The quiet spell's start is an estimate (one receive timeout back); the last
        // clock reading at an arrival bounds it from below.
        quiet_at
            .or(patience.quiet_since_ns())
            .unwrap_or_else(now_ns)
            .max(last_read_ns)
            .max(start)
    } else {
        now_ns()
    };
    let mut all = LatencyHistogram::new();
    for (h, c) in hists.iter_mut().zip(&clocks) {
        h.set_clock(c.check());
        all.merge(h);
    }
    Ok(RoleReport {
        latency: header.then_some(all),
        stream_latency: if header {
            spec.streams
                .iter()
                .map(|(id, _)| *id)
                .zip(hists)
                .collect::<Vec<_>>()
        } else {
            Vec::new()
        },
        delivered: Some(Throughput {
            messages: received,
            payload_bytes: received * spec.size as u64,
            start_ns: start,
            end_ns: end,
        }),
        ledger: header.then_some(ledger),
        cut_short,
        protocol_error: protocol_error.or(frame_error),
        eot_ahead: at_eot
            .zip(eot.as_ref())
            .map(|(r, w)| w.total(&spec.streams).saturating_sub(r)),
        header,
        usage: Some(node_usage(spec)),
        io_waits: io.waits(),
        ..Default::default()
    })
}

/// A sink's own fields from the graph: the streams that flow into it (of its stream only,
/// when it belongs to one), their size and shape; it ends by itself unless it gets a share.
pub(super) fn fill(p: &super::fill::Place, spec: &mut NodeSpec) -> Result<()> {
    let n = p.node();
    // A sink in a stream takes flows of that stream only.
    if let Some(st) = &n.stream {
        for f in p.flows.iter().filter(|f| f.sink == p.node) {
            let src = &p.g.topology.nodes[f.source];
            if src.stream.as_deref() != Some(st.as_str()) {
                return Err(Error::invalid(
                    &format!("topology {}: node '{}': stream", p.origin, n.name),
                    st,
                    format!(
                        "its source '{}' is not in stream '{st}'; give the flow's source `stream = \"{st}\"` too",
                        src.name
                    ),
                ));
            }
        }
    }
    let inflow = p.inflow()?;
    spec.size = inflow.size(spec.size);
    spec.ends_itself = !inflow.shared;
    super::fill::set_shape(spec, inflow.shape.unwrap_or_default());
    spec.streams = inflow.streams;
    Ok(())
}

/// How long the sink has had no message (0 while messages arrive).
fn quiet_for(p: &Patience) -> Duration {
    p.quiet_since_ns()
        .map(|t| Duration::from_nanos(now_ns().saturating_sub(t)))
        .unwrap_or_default()
}

/// Whether a sink in a stream has everything its end of transmission announced. The
/// channel is looked at every 1,024 messages while they flow; `at_eot` keeps the count
/// when it first covered every flow.
#[inline]
fn eot_done(
    w: &mut EotWatch,
    streams: &[(u32, u64)],
    received: u64,
    at_eot: &mut Option<u64>,
) -> bool {
    if received & 1023 == 0 {
        w.poll();
    }
    if !w.covers(streams) {
        return false;
    }
    at_eot.get_or_insert(received);
    received >= w.total(streams)
}

/// Checks a typed message: the type id after the header in its first frame (`msg`), and
/// its frame count (the other frames are read into `scratch`). Returns what is wrong.
fn check_frames(
    msg: &mut RawMsg,
    scratch: &mut RawMsg,
    s: &mut zmq::Socket,
    spec: &NodeSpec,
    io: &mut Io,
) -> Option<String> {
    let mut frames = 1;
    let mut more = msg.more();
    while more {
        if io.recv(scratch, s).is_err() {
            return Some("the rest of its frames never came".into());
        }
        frames += 1;
        more = scratch.more();
    }
    let mut why = Vec::new();
    if frames != spec.frames.len() {
        why.push(format!("{frames} frames, {} sent", spec.frames.len()));
    }
    let t = msg.prefix(FIRST_FRAME_MIN);
    if t.len() == FIRST_FRAME_MIN {
        let got = u32::from_le_bytes([t[24], t[25], t[26], t[27]]);
        if got != spec.type_id {
            why.push(format!("type id {got}, {} sent", spec.type_id));
        }
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// The cut-short note of a role ended by a signal: "interrupted by SIGTERM after 1234
/// messages".
pub(crate) fn interrupted_after(n: u64, what: &str) -> String {
    format!(
        "interrupted by {} after {n} {what}",
        crate::runner::interrupted_by()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::FLAG_TIMESTAMP;
    use crate::roles::{SockPlan, TestRunner};
    use crate::topology::Role;
    use std::sync::mpsc;

    /// A PULL sink on a loopback port for one stream of 20 messages of 64 B.
    fn pull_sink_of_20() -> NodeSpec {
        let plan = SockPlan {
            kind: SocketType::Pull,
            bind: vec!["tcp://127.0.0.1:*".into()],
            connect: Vec::new(),
            options: Default::default(),
        };
        let mut spec = NodeSpec::single("sink", Role::Sink, plan, Duration::from_secs(5));
        spec.size = 64;
        spec.count = 20;
        spec.streams = vec![(0, 20)];
        spec
    }

    fn send(push: &zmq::Socket, seq: u64, flags: u8) {
        let mut buf = [0u8; 64];
        Header {
            flags,
            stream_id: 0,
            sequence: seq,
            send_ns: now_ns(),
        }
        .encode(&mut buf);
        push.send(&buf[..], 0).unwrap();
    }

    /// A sink of 20 stamped messages of stream 0 over tcp whose send stamps are `shift` ns
    /// off this clock (a sender on another host), with `offsets` and `errors` in its spec.
    fn sink_of_shifted_stamps(
        shift: i64,
        offsets: Vec<(u32, i64)>,
        errors: Vec<(u32, u64)>,
    ) -> RoleReport {
        let ctx = zmq::Context::new();
        let mut spec = pull_sink_of_20();
        spec.send_offsets = offsets;
        spec.send_offset_error_ns = errors;
        let (tx, rx) = mpsc::channel();
        let sink_ctx = ctx.clone();
        let sink =
            std::thread::spawn(move || run(&sink_ctx, &spec, &mut TestRunner::new(tx, true)));
        let endpoint = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        let push = ctx.socket(zmq::PUSH).unwrap();
        push.set_linger(0).unwrap();
        push.set_sndtimeo(5000).unwrap();
        push.connect(&endpoint).unwrap();
        for seq in 0..20u64 {
            let mut buf = [0u8; 64];
            Header {
                flags: FLAG_TIMESTAMP | if seq == 19 { FLAG_END } else { 0 },
                stream_id: 0,
                sequence: seq,
                send_ns: now_ns().saturating_add_signed(shift),
            }
            .encode(&mut buf);
            push.send(&buf[..], 0).unwrap();
        }
        sink.join().unwrap().unwrap()
    }

    const AHEAD: i64 = 5_000_000_000_000;

    #[test]
    fn a_sender_on_another_clock_gives_no_latency_and_its_check_says_why() {
        // The sender's clock 5,000 s ahead and no offset: every stamp from the future.
        let r = sink_of_shifted_stamps(AHEAD, Vec::new(), Vec::new());
        let all = r.latency.unwrap();
        assert_eq!(all.count(), 0, "no impossible stamp is recorded");
        let c = *all.clock();
        assert_eq!((c.future, c.stale, c.converted), (20, 0, 0), "{c:?}");
        assert!(c.future_max_ns > 4_999_000_000_000, "{c:?}");
        assert_eq!(r.stream_latency[0].1.clock(), &c);
        // Everything else is still measured.
        let loss = r.ledger.unwrap().summary(Some(20));
        assert_eq!((loss.received, loss.lost), (20, 0));
    }

    #[test]
    fn the_specs_offset_brings_the_stamps_onto_this_clock() {
        let r = sink_of_shifted_stamps(AHEAD, vec![(0, -AHEAD)], vec![(0, 30_000)]);
        let all = r.latency.unwrap();
        assert_eq!(all.count(), 20);
        assert!(all.summary().max_ns < 1_000_000_000, "{:?}", all.summary());
        let c = *all.clock();
        assert_eq!((c.converted, c.error_ns, c.future), (20, Some(30_000), 0));
        assert_eq!(c.provenance(), "converted, error <= 30.00 us");
        // An offset that is wrong by a minute (beyond the 5 s timeout): stale, not a
        // minute of latency.
        let r = sink_of_shifted_stamps(0, vec![(0, -60_000_000_000)], Vec::new());
        let all = r.latency.unwrap();
        assert_eq!((all.count(), all.clock().stale), (0, 20));
    }

    #[test]
    fn a_sink_in_a_stream_ends_its_rate_at_the_last_arrival_not_at_the_end_of_transmission() {
        let ctx = zmq::Context::new();
        // The stream's end-of-transmission channel, as the runner binds it.
        let chan = ctx.socket(zmq::XPUB).unwrap();
        chan.set_linger(0).unwrap();
        chan.set_rcvtimeo(5000).unwrap();
        chan.bind("tcp://127.0.0.1:*").unwrap();
        let chan_ep = chan.get_last_endpoint().unwrap().unwrap();
        let mut spec = pull_sink_of_20();
        spec.eot = Some(chan_ep);
        let (tx, rx) = mpsc::channel();
        let sink_ctx = ctx.clone();
        let sink =
            std::thread::spawn(move || run(&sink_ctx, &spec, &mut TestRunner::new(tx, false)));
        let endpoint = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        // The sink's subscription to the channel.
        chan.recv_bytes(0)
            .expect("the sink subscribes to the channel");
        let push = ctx.socket(zmq::PUSH).unwrap();
        push.set_linger(0).unwrap();
        push.set_sndtimeo(5000).unwrap();
        push.connect(&endpoint).unwrap();
        for seq in 0..20 {
            send(&push, seq, FLAG_TIMESTAMP);
        }
        // The end of transmission comes well after the last message has arrived.
        std::thread::sleep(Duration::from_millis(500));
        let eot_sent = now_ns();
        let mut m = crate::roles::eot::EOT_TAG.to_vec();
        m.extend_from_slice(&0u32.to_le_bytes());
        m.extend_from_slice(&20u64.to_le_bytes());
        chan.send(&m[..], 0).unwrap();
        let report = sink.join().unwrap().unwrap();
        assert_eq!(report.cut_short, None);
        let d = report.delivered.unwrap();
        assert_eq!(d.messages, 20);
        assert!(
            d.end_ns < eot_sent,
            "the delivered span ends {} ns after the end of transmission was sent; it should end at the last arrival",
            d.end_ns - eot_sent
        );
    }

    #[test]
    fn a_stopped_sink_waits_for_a_stream_that_is_held_up_instead_of_counting_it_lost() {
        let ctx = zmq::Context::new();
        let spec = pull_sink_of_20();
        let (tx, rx) = mpsc::channel();
        let sink_ctx = ctx.clone();
        let sink =
            std::thread::spawn(move || run(&sink_ctx, &spec, &mut TestRunner::new(tx, true)));
        let endpoint = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        let push = ctx.socket(zmq::PUSH).unwrap();
        push.set_linger(0).unwrap();
        push.set_sndtimeo(5000).unwrap();
        push.connect(&endpoint).unwrap();
        for seq in 0..10 {
            send(&push, seq, 0);
        }
        // Held up for four slices of the sink's receive: more than the one it used to
        // drain for, well under END_DRAIN.
        std::thread::sleep(Duration::from_millis(400));
        for seq in 10..19 {
            send(&push, seq, 0);
        }
        send(&push, 19, FLAG_END | FLAG_TIMESTAMP);
        let report = sink.join().unwrap().unwrap();
        assert_eq!(report.cut_short, None);
        let loss = report.ledger.unwrap().summary(Some(20));
        assert_eq!((loss.received, loss.lost), (20, 0), "{loss:?}");
    }
}
