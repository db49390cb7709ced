//! Tests of the stream ledger, its summaries and the ledger of many streams.

use super::*;

fn ledger_of(seqs: &[u64]) -> StreamLedger {
    let mut l = StreamLedger::new();
    for &s in seqs {
        l.record(s);
    }
    l
}

#[test]
fn in_order_is_clean() {
    let l = ledger_of(&(0..1000).collect::<Vec<_>>());
    let s = l.summary(Some(1000));
    assert_eq!(
        (s.received, s.lost, s.duplicated, s.reordered),
        (1000, 0, 0, 0)
    );
    assert!(s.is_clean());
}

/// A ledger fed `seqs`, the k-th arriving at 1,000 x k + 500 ns.
fn timed_ledger_of(seqs: &[u64]) -> StreamLedger {
    let mut l = StreamLedger::new();
    for (k, &s) in seqs.iter().enumerate() {
        l.record_with(s, || 1_000 * k as u64 + 500);
    }
    l
}

#[test]
fn gaps_at_start_middle_end() {
    // 0..5 lost (start), 20..23 lost (middle), 90..100 lost (end).
    let seqs: Vec<u64> = (5..20).chain(23..90).collect();
    let s = timed_ledger_of(&seqs).summary(Some(100));
    assert_eq!(s.received, 82);
    assert_eq!(s.lost, 18);
    assert_eq!(
        (s.lost_at_start, s.lost_in_middle, s.lost_at_end),
        (5, 3, 10)
    );
    assert_eq!(s.gap_count, 3);
    assert_eq!(
        s.gaps,
        vec![
            Gap {
                first_seq: 0,
                count: 5,
                position: GapPosition::Start,
                after_ns: None,
            },
            Gap {
                first_seq: 20,
                count: 3,
                position: GapPosition::Middle,
                // 23 is the 16th arrival (k = 15), the first (k = 0) was 15,000 ns before.
                after_ns: Some(15_000),
            },
            Gap {
                first_seq: 90,
                count: 10,
                position: GapPosition::End,
                after_ns: None,
            },
        ]
    );
}

#[test]
fn the_clock_is_read_only_off_the_in_order_path() {
    use std::cell::Cell;
    let reads = Cell::new(0);
    let mut l = StreamLedger::new();
    for s in (0..1000).chain(1005..2000) {
        l.record_with(s, || {
            reads.set(reads.get() + 1);
            s
        });
    }
    // The first arrival and the jump over 1000..1005.
    assert_eq!(reads.get(), 2);
}

#[test]
fn a_hole_filled_out_of_order_has_no_time_and_merge_keeps_times() {
    // 3 and 4 arrive late: no hole at all.
    let s = timed_ledger_of(&[0, 1, 2, 5, 6, 3, 4]).summary(Some(7));
    assert!(s.gaps.is_empty());
    // Two receivers of one stream: the merged hole is timed from the earliest first
    // arrival of either.
    let a = timed_ledger_of(&[0, 1, 2]); // first arrival at 500 ns
    let mut b = StreamLedger::new();
    b.record_with(3, || 10_000);
    b.record_with(8, || 20_000);
    let mut m = a.clone();
    m.merge(&b);
    let s = m.summary(Some(9));
    assert_eq!(s.lost, 4);
    assert_eq!(s.gaps[0].first_seq, 4);
    assert_eq!(s.gaps[0].after_ns, Some(19_500));
    // Times survive serialisation (child processes send their ledgers as JSON).
    let back: StreamLedger = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
    assert_eq!(back.summary(Some(9)), s);
}

#[test]
fn duplicates_at_start_middle_end() {
    let l = ledger_of(&[0, 0, 1, 2, 3, 3, 4, 5, 5]);
    assert_eq!((l.distinct(), l.received()), (6, 6));
    let s = l.summary(Some(6));
    assert_eq!(
        (s.received, s.lost, s.duplicated, s.reordered),
        (6, 0, 3, 0)
    );
}

#[test]
fn reorders_at_start_middle_end() {
    // 1 before 0 (start), 5 before 4 (middle), 9 before 8 (end).
    let s = ledger_of(&[1, 0, 2, 3, 5, 4, 6, 7, 9, 8]).summary(Some(10));
    assert_eq!(
        (s.received, s.lost, s.duplicated, s.reordered),
        (10, 0, 0, 3)
    );
}

#[test]
fn a_late_arrival_fills_its_gap() {
    let s = ledger_of(&[0, 1, 3, 4, 2]).summary(Some(5));
    assert_eq!((s.lost, s.reordered), (0, 1));
    let s = ledger_of(&[0, 1, 3, 4, 2, 2]).summary(Some(5));
    assert_eq!((s.lost, s.reordered, s.duplicated), (0, 1, 1));
}

#[test]
fn without_expected_the_highest_marks_the_end() {
    let s = ledger_of(&[0, 1, 5]).summary(None);
    assert_eq!((s.expected, s.received, s.lost), (6, 3, 3));
    assert_eq!(s.lost_in_middle, 3);
}

#[test]
fn merge_of_two_receivers_equals_one_that_saw_everything() {
    // Round-robin split of 0..100 minus a few, as PUSH would load-balance.
    let all: Vec<u64> = (0..100).filter(|s| s % 17 != 3).collect();
    let a: Vec<u64> = all.iter().copied().filter(|s| s % 2 == 0).collect();
    let b: Vec<u64> = all.iter().copied().filter(|s| s % 2 == 1).collect();
    let mut la = ledger_of(&a);
    la.merge(&ledger_of(&b));
    let whole = ledger_of(&all).summary(Some(100));
    let merged = la.summary(Some(100));
    assert_eq!(merged.received, whole.received);
    assert_eq!(merged.lost, whole.lost);
    // The same holes (their times differ: each ledger read the clock itself).
    let holes = |v: &[Gap]| {
        v.iter()
            .map(|g| (g.first_seq, g.count, g.position))
            .collect::<Vec<_>>()
    };
    assert_eq!(holes(&merged.gaps), holes(&whole.gaps));
    assert_eq!(merged.duplicated, 0);
}

#[test]
fn an_expected_stream_that_never_arrived_is_lost_whole() {
    // Fan-in of three senders: stream 1 sent nothing that arrived.
    let mut l = Ledger::new();
    for s in 0..10 {
        l.record(0, s);
        l.record(2, s);
    }
    for id in 0..3 {
        l.expect_stream(id);
    }
    let s = l.summary(Some(10));
    assert_eq!((s.expected, s.received, s.lost), (30, 20, 10));
    assert_eq!(s.lost_at_start, 10);
    // Expecting a stream that is there changes nothing.
    l.expect_stream(2);
    assert_eq!(l.summary(Some(10)), s);
}

#[test]
fn merge_counts_overlap_as_duplicates() {
    let mut a = ledger_of(&[0, 1, 2, 3]);
    a.merge(&ledger_of(&[2, 3, 4]));
    let s = a.summary(Some(5));
    assert_eq!((s.received, s.duplicated, s.lost), (5, 2, 0));
}

#[test]
fn interleaved_streams_keep_apart() {
    let mut l = Ledger::new();
    for s in 0..100u64 {
        l.record((s % 3) as u32, s / 3);
    }
    let by_id = l.streams();
    assert_eq!(by_id.len(), 3);
    let s = l.summary(None);
    assert_eq!(
        (s.received, s.lost, s.duplicated, s.reordered),
        (100, 0, 0, 0)
    );
    let mut m = Ledger::new();
    m.merge(&l);
    assert_eq!(m, l);
}

#[test]
fn ledger_of_many_streams() {
    let mut l = Ledger::new();
    for s in 0..10 {
        l.record(1, s);
        if s != 4 {
            l.record(2, s);
        }
    }
    let s = l.summary(Some(10));
    assert_eq!((s.expected, s.received, s.lost), (20, 19, 1));
    let json = serde_json::to_string(&l).unwrap();
    let back: Ledger = serde_json::from_str(&json).unwrap();
    assert_eq!(back.summary(Some(10)), s);
}

#[test]
fn a_peers_arrival_runs_give_the_ledger_of_the_arrivals_themselves() {
    // Arrivals: 5..20, a duplicate of 7, 30..40, then 25 (late), then 40..50.
    let seqs: Vec<u64> = (5..20)
        .chain([7])
        .chain(30..40)
        .chain([25])
        .chain(40..50)
        .collect();
    let direct = ledger_of(&seqs).summary(Some(60));
    let runs = [
        (5, 15, 10),
        (7, 1, 20),
        (30, 10, 30),
        (25, 1, 40),
        (40, 10, 50),
    ];
    let replayed = StreamLedger::from_runs(&runs).summary(Some(60));
    assert_eq!(
        (
            replayed.received,
            replayed.lost,
            replayed.duplicated,
            replayed.reordered
        ),
        (
            direct.received,
            direct.lost,
            direct.duplicated,
            direct.reordered
        )
    );
    assert_eq!(
        (replayed.received, replayed.duplicated, replayed.reordered),
        (36, 1, 1)
    );
    let json = r#"{"runs": {"3": [[0, 10, 100], [12, 3, 200]]}}"#;
    let l: Ledger = serde_json::from_str(json).unwrap();
    let s = l.summary(Some(15));
    assert_eq!((s.received, s.lost), (13, 2));
}

#[test]
fn a_number_past_the_expected_length_is_counted_apart_not_as_a_hole() {
    // 0..100 with 40..50 missing, and two garbled numbers far past the stream's 100 (one
    // multicast run saw 3.7e14): the hole stays 10, the garbled arrivals are counted apart.
    let mut seqs: Vec<u64> = (0..40).chain(50..100).collect();
    seqs.push(369_822_458_673_153);
    seqs.push(100);
    let s = ledger_of(&seqs).summary(Some(100));
    assert_eq!((s.expected, s.received, s.lost), (100, 90, 10), "{s:?}");
    assert_eq!((s.lost_in_middle, s.lost_at_end), (10, 0), "{s:?}");
    assert_eq!(s.beyond, 2, "{s:?}");
    // A range that straddles the end is cut there.
    let s = ledger_of(&(0..120).collect::<Vec<_>>()).summary(Some(100));
    assert_eq!((s.received, s.lost, s.beyond), (100, 0, 20), "{s:?}");
    // Without an expected length the highest number is the end, as before.
    let s = ledger_of(&(0..120).collect::<Vec<_>>()).summary(None);
    assert_eq!((s.received, s.beyond), (120, 0), "{s:?}");
}
