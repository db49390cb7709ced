//! Tests of the sink's record of what it took, kept by a slow sink (with or without a
//! pause after every batch).

use super::super::super::{run_node, SockPlan, TestRunner};
use super::*;
use crate::header::{FLAG_END, FLAG_TIMESTAMP};
use crate::topology::{Role, SocketType};
use std::sync::mpsc;
use std::time::Duration;

/// A `role` on a PULL bound to a loopback port, for one stream of 20 messages of 64 B,
/// fed by a PUSH that sends them at once: its report.
fn take_20(role: Role, set: impl FnOnce(&mut NodeSpec)) -> (RoleReport, Vec<u64>) {
    let plan = SockPlan {
        kind: SocketType::Pull,
        bind: vec!["tcp://127.0.0.1:*".into()],
        connect: Vec::new(),
        options: Default::default(),
    };
    let mut spec = NodeSpec::single("sink", role, plan, Duration::from_secs(5));
    spec.size = 64;
    spec.streams = vec![(0, 20)];
    set(&mut spec);
    let ctx = zmq::Context::new();
    let (tx, rx) = mpsc::channel();
    let c2 = ctx.clone();
    let sink = std::thread::spawn(move || run_node(&c2, &spec, &mut TestRunner::new(tx, false)));
    let endpoint = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    let push = ctx.socket(zmq::PUSH).unwrap();
    push.set_linger(0).unwrap();
    push.set_sndtimeo(5000).unwrap();
    push.connect(&endpoint).unwrap();
    let mut stamps = Vec::new();
    for seq in 0..20u64 {
        let mut buf = [0u8; 64];
        let send_ns = now_ns();
        stamps.push(send_ns);
        Header {
            flags: FLAG_TIMESTAMP | if seq == 19 { FLAG_END } else { 0 },
            stream_id: 0,
            sequence: seq,
            send_ns,
        }
        .encode(&mut buf);
        push.send(&buf[..], 0).unwrap();
    }
    (sink.join().unwrap().unwrap(), stamps)
}

#[test]
fn a_slow_sink_keeps_a_record_of_what_it_took_up_to_its_most_and_none_unasked() {
    let (r, stamps) = take_20(Role::SlowSink, |s| s.trace_arrivals(15));
    let kept = r.arrivals.expect("a record");
    assert_eq!(kept.len(), 15);
    for (i, a) in kept.iter().enumerate() {
        assert_eq!((a.sequence, a.send_ns), (i as u64, stamps[i]));
        assert!(a.arrival_ns >= a.send_ns);
        assert_eq!(a.flags, FLAG_TIMESTAMP);
    }
    assert!(kept.windows(2).all(|w| w[0].arrival_ns <= w[1].arrival_ns));
    assert_eq!(r.ledger.unwrap().summary(Some(20)).received, 20);
    let (plain, _) = take_20(Role::SlowSink, |_| {});
    assert!(plain.arrivals.is_none());
}

#[test]
fn a_slow_sink_pauses_after_every_batch() {
    let (r, _) = take_20(Role::SlowSink, |s| {
        s.pause_every(5, Duration::from_millis(20));
        s.trace_arrivals(20);
    });
    let kept = r.arrivals.expect("a record");
    assert_eq!(kept.len(), 20);
    assert_eq!(kept[19].flags & FLAG_END, FLAG_END);
    // The 5th, 10th and 15th messages are each followed by a pause.
    let gap = |i: usize| kept[i].arrival_ns - kept[i - 1].arrival_ns;
    for i in [5, 10, 15] {
        assert!(gap(i) >= 20_000_000, "no pause before message {i}");
    }
    assert!(kept[19].arrival_ns - kept[0].arrival_ns >= 60_000_000);
}
