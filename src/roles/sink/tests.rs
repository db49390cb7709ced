//! The sink's tests: one-way times from stamps sent on another host's clock, and ends of
//! transmission with flows still on their way.

use super::*;
use crate::header::{Header, FLAG_END, FLAG_TIMESTAMP};
use crate::roles::lean_tests::timeless;
use crate::roles::{SockPlan, TestRunner};
use crate::topology::Role;
use crate::topology::SocketType;
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
    let mut spec = pull_sink_of_20();
    spec.send_offsets = offsets;
    spec.send_offset_error_ns = errors;
    let msgs: Vec<_> = (0..20u64)
        .map(|seq| {
            (
                0,
                seq,
                FLAG_TIMESTAMP | if seq == 19 { FLAG_END } else { 0 },
            )
        })
        .collect();
    fed(spec, &msgs, shift)
}

/// Runs the sink of `spec` on its own thread, sends it `msgs` (stream, sequence, flags;
/// 64 B, stamped `shift` ns off this clock) from a PUSH over tcp, and returns its report.
fn fed(spec: NodeSpec, msgs: &[(u32, u64, u8)], shift: i64) -> RoleReport {
    let ctx = zmq::Context::new();
    let (tx, rx) = mpsc::channel();
    let sink_ctx = ctx.clone();
    let sink = std::thread::spawn(move || run(&sink_ctx, &spec, &mut TestRunner::new(tx, true)));
    let endpoint = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    let push = ctx.socket(zmq::PUSH).unwrap();
    push.set_linger(0).unwrap();
    push.set_sndtimeo(5000).unwrap();
    push.connect(&endpoint).unwrap();
    for &(stream_id, sequence, flags) in msgs {
        let mut buf = [0u8; 64];
        Header {
            flags,
            stream_id,
            sequence,
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
    let sink = std::thread::spawn(move || run(&sink_ctx, &spec, &mut TestRunner::new(tx, false)));
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

/// A sink stopped from the start (so a quiet spell of END_DRAIN may end it), fed 20
/// messages over tcp: 10, a pause of `first` ms, 9, a pause of `second` ms, the end.
fn stopped_sink_with_pauses(first: u64, second: u64) -> RoleReport {
    let ctx = zmq::Context::new();
    let spec = pull_sink_of_20();
    let (tx, rx) = mpsc::channel();
    let sink_ctx = ctx.clone();
    let sink = std::thread::spawn(move || run(&sink_ctx, &spec, &mut TestRunner::new(tx, true)));
    let endpoint = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    let push = ctx.socket(zmq::PUSH).unwrap();
    push.set_linger(0).unwrap();
    push.set_sndtimeo(5000).unwrap();
    push.connect(&endpoint).unwrap();
    for seq in 0..10 {
        send(&push, seq, 0);
    }
    std::thread::sleep(Duration::from_millis(first));
    for seq in 10..19 {
        send(&push, seq, 0);
    }
    std::thread::sleep(Duration::from_millis(second));
    send(&push, 19, FLAG_END | FLAG_TIMESTAMP);
    sink.join().unwrap().unwrap()
}

#[test]
fn a_stopped_sink_waits_for_a_stream_that_is_held_up_instead_of_counting_it_lost() {
    // Held up for four slices of the sink's receive: more than the one it used to
    // drain for, well under END_DRAIN.
    let report = stopped_sink_with_pauses(400, 0);
    assert_eq!(report.cut_short, None);
    let loss = report.ledger.unwrap().summary(Some(20));
    assert_eq!((loss.received, loss.lost), (20, 0), "{loss:?}");
}

/// A PULL sink of 64 B messages expecting `streams`, fed `msgs` (stream, sequence, flags).
fn sink_of(streams: Vec<(u32, u64)>, msgs: &[(u32, u64, u8)]) -> RoleReport {
    let mut spec = pull_sink_of_20();
    spec.count = streams.iter().map(|(_, n)| n).sum();
    spec.streams = streams;
    fed(spec, msgs, 0)
}

#[test]
fn the_lean_run_keeps_the_ledger_the_full_path_keeps() {
    // Long in-order stretches (past several progress lines of 256) broken by everything
    // the lean run leaves to the full path: stamps, a gap, a duplicate, a late number,
    // another stream, and the end marks.
    let mut msgs = Vec::new();
    for seq in 0..700u64 {
        let flags = if seq % 16 == 0 { FLAG_TIMESTAMP } else { 0 };
        if seq != 300 && seq != 301 && seq != 450 {
            msgs.push((0, seq, flags));
        }
        if seq == 460 {
            msgs.push((0, 450, 0));
            msgs.push((0, 455, 0));
        }
        if seq % 100 == 50 {
            msgs.push((1, seq / 100, 0));
        }
    }
    msgs.push((0, 700, FLAG_END | FLAG_TIMESTAMP));
    msgs.push((1, 7, FLAG_END));
    let r = sink_of(vec![(0, 701), (1, 8)], &msgs);
    assert_eq!(r.cut_short, None);
    let mut want = crate::stats::Ledger::new();
    for &(stream, seq, _) in &msgs {
        want.record(stream, seq);
    }
    let got = r.ledger.unwrap();
    assert_eq!(timeless(&got), timeless(&want));
    let s = got.summary(None);
    assert_eq!(
        (s.received, s.lost, s.duplicated, s.reordered),
        (707, 2, 1, 1),
        "{s:?}"
    );
    // Every stamped message was timed, on the lean stretches as well.
    assert_eq!(r.latency.unwrap().count(), 45);
}

#[test]
fn the_lean_run_ends_at_the_count_of_a_stream_without_an_end_mark() {
    let msgs: Vec<_> = (0..1000u64).map(|seq| (0, seq, 0)).collect();
    let r = sink_of(vec![(0, 1000)], &msgs);
    assert_eq!(
        r.cut_short, None,
        "the sink ends at its count, not at its timeout"
    );
    let s = r.ledger.unwrap().summary(Some(1000));
    assert_eq!((s.received, s.lost), (1000, 0), "{s:?}");
    assert_eq!(r.delivered.unwrap().messages, 1000);
}

#[test]
fn messages_the_lean_run_takes_after_a_quiet_spell_end_it() {
    // Two spells of 0.6 s, with in-order messages (the lean run's) between them: the
    // second counts from its own start, so the last message is still waited for.
    let report = stopped_sink_with_pauses(600, 600);
    assert_eq!(report.cut_short, None);
    let loss = report.ledger.unwrap().summary(Some(20));
    assert_eq!((loss.received, loss.lost), (20, 0), "{loss:?}");
}
