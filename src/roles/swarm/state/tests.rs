//! Tests of a swarm's state: recording messages, per-subscriber figures and the child report.

use super::*;
use crate::header::FLAG_TIMESTAMP;

/// A reading on this clock, stamps older than 10 s impossible.
fn ow() -> OneWay {
    OneWay::same_clock(std::time::Duration::from_secs(10))
}

fn h(seq: u64, send_ns: u64, end: bool) -> Header {
    Header {
        flags: FLAG_TIMESTAMP | if end { FLAG_END } else { 0 },
        stream_id: 7,
        sequence: seq,
        send_ns,
    }
}

#[test]
fn a_full_stream_is_clean_with_its_latency() {
    let mut s = SubState::default();
    for i in 0..10u64 {
        let lat = s
            .record(&h(i, 1_000 * i, i == 9), 1_000 * i + 500 + i, &mut ow())
            .unwrap();
        assert_eq!(lat, Some(500 + i));
    }
    assert!(s.ended());
    let r = s.report(2, 5, 10);
    assert_eq!((r.process, r.sub), (2, 5));
    assert_eq!((r.loss.expected, r.loss.received, r.loss.lost), (10, 10, 0));
    assert_eq!(r.latency_count, 10);
    assert_eq!((r.latency_min_ns, r.latency_max_ns), (500, 509));
    assert!((r.latency_mean_ns - 504.5).abs() < 1e-9);
    // 10 messages from the first send (0) to the last receipt (9509 ns).
    assert!((r.delivered_per_sec - 10.0 * 1e9 / 9509.0).abs() < 1e-3);
}

#[test]
fn a_publisher_on_another_clock_gives_no_latency_and_a_rate_from_the_first_receipt() {
    // The publisher's clock 5,000 s ahead and no offset known: stamps from the future.
    let ahead = 5_000_000_000_000u64;
    let mut s = SubState::default();
    let mut c = ow();
    for i in 0..10u64 {
        let at = 1_000_000 + 1_000 * i;
        let lat = s.record(&h(i, ahead + at - 500, i == 9), at, &mut c);
        assert_eq!(lat.unwrap(), None);
    }
    assert_eq!((c.check().future, c.check().converted), (10, 0));
    let r = s.report(0, 0, 10);
    assert_eq!((r.loss.received, r.latency_count), (10, 0));
    // 10 messages from the first receipt to the last (9,000 ns), not from a send time
    // on another clock.
    assert!((r.delivered_per_sec - 10.0 * 1e9 / 9_000.0).abs() < 1e-3);
    // With the offset the runner estimated: the figures of one clock, converted.
    let mut s = SubState::default();
    let mut c = OneWay::converted(
        -(ahead as i64),
        Some(2_000),
        std::time::Duration::from_secs(10),
    );
    for i in 0..10u64 {
        let at = 1_000_000 + 1_000 * i;
        let lat = s.record(&h(i, ahead + at - 500, i == 9), at, &mut c);
        assert_eq!(lat.unwrap(), Some(500));
    }
    assert_eq!((c.check().future, c.check().converted), (0, 10));
    let r = s.report(0, 0, 10);
    assert_eq!((r.latency_count, r.latency_max_ns), (10, 500));
    assert!((r.delivered_per_sec - 10.0 * 1e9 / 9_500.0).abs() < 1e-3);
}

#[test]
fn losses_are_placed_and_a_silent_subscriber_lost_all() {
    let mut s = SubState::default();
    for i in [2u64, 3, 5] {
        s.record(&h(i, 0, false), 10, &mut ow()).unwrap();
    }
    let r = s.report(0, 0, 8);
    assert_eq!(r.loss.lost, 5);
    assert_eq!(
        (
            r.loss.lost_at_start,
            r.loss.lost_in_middle,
            r.loss.lost_at_end
        ),
        (2, 1, 2)
    );
    assert!(!r.ended);
    let silent = SubState::default().report(0, 1, 8);
    assert_eq!((silent.loss.lost, silent.loss.lost_at_start), (8, 8));
    assert_eq!(silent.latency_count, 0);
}

#[test]
fn warm_up_messages_are_not_counted() {
    let mut s = SubState::default();
    let mut w = h(0, 5, false);
    w.flags = FLAG_WARMUP;
    assert_eq!(s.record(&w, 10, &mut ow()).unwrap(), None);
    s.record(&h(0, 5, true), 10, &mut ow()).unwrap();
    let r = s.report(0, 0, 1);
    assert_eq!((r.warmup, r.loss.received, r.latency_count), (1, 1, 1));
}

#[test]
fn a_peers_compact_swarm_report_gives_the_same_figures() {
    let json = r#"{"process": 1, "pid": 42, "stop": "all-ended", "connect_ns": 5,
            "subscribers": [
              {"runs": [[0, 10, 100]], "warmup": 2, "end_seq": 9, "stream_id": 7,
               "latency": {"buckets": [[500, 4], [700, 6]]}, "first_send_ns": 0,
               "last_recv_ns": 1000},
              {"runs": [[0, 3, 100], [5, 4, 200]], "warmup": 0, "end_seq": null, "stream_id": 7,
               "latency": {"buckets": []}, "first_send_ns": null, "last_recv_ns": 0}
            ]}"#;
    let r: ChildReport = serde_json::from_str(json).unwrap();
    assert_eq!((r.process, r.pid, r.stop), (1, 42, StopReason::AllEnded));
    let a = &r.subscribers[0];
    assert_eq!((a.loss.expected, a.loss.received, a.loss.lost), (10, 10, 0));
    assert_eq!((a.warmup, a.latency_count, a.ended), (2, 10, true));
    assert_eq!((a.latency_min_ns, a.latency_max_ns), (500, 700));
    assert!((a.latency_mean_ns - 620.0).abs() < 1e-9);
    assert!((a.delivered_per_sec - 1e7).abs() < 1e-3);
    let b = &r.subscribers[1];
    // 10 due (the end mark of the first), 7 came: 2 in the middle, 1 at the end.
    assert_eq!(
        (b.loss.received, b.loss.lost_in_middle, b.loss.lost_at_end),
        (7, 2, 1)
    );
    assert!(!b.ended);
    assert_eq!(r.latency.count(), 10);
    // The full form reads back as written.
    let back: ChildReport = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back.subscribers, r.subscribers);
}

#[test]
fn another_stream_is_refused() {
    let mut s = SubState::default();
    s.record(&h(0, 0, false), 1, &mut ow()).unwrap();
    let mut other = h(1, 0, false);
    other.stream_id = 8;
    assert!(s
        .record(&other, 2, &mut ow())
        .unwrap_err()
        .contains("two streams"));
}

#[test]
fn stream_length_comes_from_the_end_or_the_highest() {
    let mut s = SubState::default();
    assert_eq!(s.stream_length(), None);
    s.record(&h(4, 0, false), 1, &mut ow()).unwrap();
    assert_eq!(s.stream_length(), Some(5));
    s.record(&h(6, 0, true), 1, &mut ow()).unwrap();
    assert_eq!(s.stream_length(), Some(7));
}

/// A fan-out's messages for two subscribers, in drains of a few messages each (as the
/// swarm reads a socket until it has nothing), through the swarm's step ([`take`]: the
/// lean path where it applies) and, beside it, through the full record alone. `offset`:
/// the publisher's clock against the swarm's (None: one clock). Returns how many messages
/// the lean path took.
fn lean_beside_full(offset: Option<i64>) -> u64 {
    use crate::header::FLAG_WARMUP;
    use crate::msg::RawMsg;
    use crate::roles::swarm::{take, SwarmLatency};
    const S: u64 = 1_000_000_000;
    let timeout = std::time::Duration::from_secs(10);
    let mut lat = SwarmLatency {
        hist: LatencyHistogram::new(),
        offsets: offset.map(|o| (7, o)).into_iter().collect(),
        errors: offset.map(|_| (7, 2_000)).into_iter().collect(),
        timeout,
        clock: None,
    };
    let mut clock = match offset {
        Some(o) => OneWay::converted(o, Some(2_000), timeout),
        None => OneWay::same_clock(timeout),
    };
    let (mut states, mut full) = (vec![SubState::default(); 2], vec![SubState::default(); 2]);
    let mut hist = LatencyHistogram::new();
    let mut lean: [Option<LeanRun>; 2] = [None, None];
    let (mut seqs, mut taken, mut x) = ([0u64; 2], 0, 88u64);
    let to_sender = |t: u64| t.wrapping_add_signed(-offset.unwrap_or(0));
    for drain in 0..400u64 {
        let j = (drain % 2) as usize;
        let now0 = 1_000 * S + drain * 1_000_000;
        lean[j] = states[j].lean_run();
        for k in 0..drain % 9 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let now = now0 + k * 1_000;
            // Mostly the next number stamped a few us before; now and then a warm-up, no
            // stamp, a gap, a repeat, a stamp from the future (within the tolerance and
            // beyond it) or older than the timeout, and the end mark at last.
            let mut hd = Header {
                flags: FLAG_TIMESTAMP,
                stream_id: 7,
                sequence: seqs[j],
                send_ns: to_sender(now - 3_000 - (x >> 54)),
            };
            match (seqs[j], x >> 59) {
                (0..=2, _) => hd.flags |= FLAG_WARMUP,
                (_, 0) => hd.flags = 0,
                (_, 1) => hd.sequence += 2,
                (_, 2) => hd.sequence = hd.sequence.saturating_sub(3),
                (_, 3) => hd.send_ns = to_sender(now + 500),
                (_, 4) => hd.send_ns = to_sender(now + 5 * S),
                (_, 5) => hd.send_ns = to_sender(now - 11 * S),
                _ => {}
            }
            if drain >= 396 {
                hd.flags |= FLAG_END;
            }
            seqs[j] = seqs[j].max(hd.sequence + 1);
            let mut bytes = hd.to_bytes().to_vec();
            bytes.resize(64, 0xa5);
            let mut msg = RawMsg::copy_of(&bytes).unwrap();
            let before = lean[j].map(|r| r.next);
            let ended = take(
                &mut msg,
                now,
                &mut states[j],
                &mut lean[j],
                &mut lat,
                None,
                (j, 0),
                "swarm",
            )
            .unwrap();
            taken +=
                u64::from(before.is_some() && lean[j].map(|r| r.next) == before.map(|n| n + 1));
            if let Some(ns) = full[j].record(&hd, now, &mut clock).unwrap() {
                hist.record(ns);
            }
            assert_eq!(ended, full[j].ended());
            if ended {
                break;
            }
        }
        if let Some(run) = lean[j].take() {
            states[j].end_lean(run);
        }
    }
    // The same figures, the gaps' arrival times aside (the ledger reads the clock then).
    let timeless = |s: &SubState, j: u32| {
        let mut r = s.report(0, j, 2_000);
        r.loss.gaps.iter_mut().for_each(|g| g.after_ns = None);
        r
    };
    for j in 0..2 {
        assert_eq!(timeless(&states[j], j as u32), timeless(&full[j], j as u32));
    }
    hist.set_clock(clock.check());
    let swarm = lat.histogram(&states);
    assert!(hist.count() > 500, "{}", hist.count());
    assert_eq!(swarm, hist);
    let c = clock.check();
    assert!(c.future > 0 && c.stale > 0, "{c:?}");
    taken
}

#[test]
fn the_lean_path_keeps_the_figures_the_full_path_keeps() {
    // On one clock, and from a publisher 5,000 s ahead with the offset known.
    for offset in [None, Some(-5_000_000_000_000i64)] {
        let taken = lean_beside_full(offset);
        assert!(taken > 800, "{offset:?}: the lean path took {taken}");
    }
}
