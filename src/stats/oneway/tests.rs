//! Tests of the one-way delay's reading of send stamps and of its clock check.
use super::*;

const S: u64 = 1_000_000_000;
const T: Duration = Duration::from_secs(10);

#[test]
fn on_one_clock_the_delay_is_receipt_minus_send() {
    let mut w = OneWay::same_clock(T);
    assert_eq!(w.delay(100 * S, 100 * S + 5_326), Some(5_326));
    assert_eq!(w.delay(101 * S, 101 * S), Some(0));
    // Within the tolerance of two cores' readings: 0, not impossible.
    assert_eq!(w.delay(102 * S + 400, 102 * S), Some(0));
    assert!(w.check().is_same_clock());
    assert_eq!(w.check().provenance(), "same host clock");
    assert_eq!(w.check().not_shown(), None);
}

#[test]
fn stamps_from_the_future_are_counted_never_recorded() {
    // The receiver's clock is 5,000 s behind the sender's.
    let mut w = OneWay::same_clock(T);
    for i in 0..10u64 {
        assert_eq!(w.delay(5_100 * S + i, 100 * S + i + 5_326), None);
    }
    let c = w.check();
    assert_eq!((c.future, c.stale, c.converted), (10, 0, 0));
    assert_eq!(c.future_max_ns, 5_000 * S - 5_326);
    assert!(c.differs());
    assert_eq!(c.provenance(), "clocks differ: 10 stamps from the future");
    let line = c.not_shown().unwrap();
    assert!(
        line.starts_with("clocks differ (10 send stamps up to 5,000 s in this host's future): one-way latency not shown; use round trips (local_lat/remote_lat)"),
        "{line}"
    );
}

#[test]
fn stamps_older_than_the_timeout_are_counted_never_recorded() {
    // The receiver's clock is 5,000 s ahead: every delay would read 5,000 s.
    let mut w = OneWay::same_clock(T);
    assert_eq!(w.delay(100 * S, 5_100 * S + 5_326), None);
    assert_eq!(w.delay(100 * S + 1, 5_100 * S + 9_000), None);
    let c = w.check();
    assert_eq!((c.future, c.stale), (0, 2));
    assert_eq!(c.stale_max_ns, 5_000 * S + 8_999);
    assert_eq!(
        c.provenance(),
        "clocks differ: 2 stamps older than the timeout"
    );
    assert!(c
        .not_shown()
        .unwrap()
        .contains("2 send stamps older than the timeout, up to 5,000 s old"));
}

#[test]
fn a_long_stream_on_one_clock_is_never_stale() {
    // Stamps must not be older than the timeout at the first arrival; a stream that
    // runs longer than the timeout (each message on time) is fine.
    let mut w = OneWay::same_clock(T);
    for i in 0..100u64 {
        let sent = 1_000 * S + i * S;
        assert_eq!(w.delay(sent, sent + 2_000), Some(2_000));
    }
    // A backlog: messages sent 9 s before the first arrival (within the timeout) and
    // read later still, behind a queue.
    let mut w = OneWay::same_clock(T);
    assert_eq!(w.delay(1_000 * S, 1_009 * S), Some(9 * S));
    assert_eq!(w.delay(1_000 * S + 1, 1_030 * S), Some(30 * S - 1));
    assert!(w.check().is_same_clock());
    // A receiver that just booted: the floor cannot go below 0.
    let mut w = OneWay::same_clock(T);
    assert_eq!(w.delay(0, 2 * S), Some(2 * S));
}

#[test]
fn an_offset_brings_the_stamps_onto_the_receivers_clock() {
    // The sender's clock is 5,000 s ahead of the receiver's: add -5,000 s.
    let off = -(5_000 * S as i64);
    let mut w = OneWay::converted(off, Some(24_000), T);
    assert_eq!(w.delay(5_100 * S, 100 * S + 60_000), Some(60_000));
    // Up to the error bound in the future reads as 0 ...
    assert_eq!(w.delay(5_101 * S + 20_000, 101 * S), Some(0));
    // ... beyond it (and the tolerance), impossible.
    assert_eq!(w.delay(5_102 * S + 30_000, 102 * S), None);
    let c = w.check();
    assert_eq!((c.converted, c.future, c.error_ns), (2, 1, Some(24_000)));
    assert!(c.differs());
    // The sender behind: a positive offset; one that takes a stamp below 0 is stale.
    let mut w = OneWay::converted(3 * S as i64, Some(5_000), T);
    assert_eq!(w.delay(97 * S, 100 * S + 7_000), Some(7_000));
    let mut w = OneWay::converted(-(10 * S as i64), None, T);
    assert_eq!(w.delay(5 * S, 20 * S), None);
    assert_eq!(w.check().stale, 1);
}

#[test]
fn the_settled_delay_is_the_delay_where_it_answers_and_changes_nothing_elsewhere() {
    // Stamps around every edge: before the first stamp, at the floor, at now, in the
    // future within and beyond the tolerance, stale, and offsets that overflow.
    let offsets = [0i64, -(5 * S as i64), 3 * S as i64, i64::MAX, i64::MIN];
    let now = 100 * S;
    let sends = [
        0,
        now,
        now - 1,
        now + 1,
        now + 400,
        now - T.as_nanos() as u64,
        now - T.as_nanos() as u64 - 1,
        95 * S,
        97 * S,
        105 * S,
        u64::MAX,
    ];
    let mut answered = 0;
    for &off in &offsets {
        for first in [false, true] {
            for &send in &sends {
                let mut full = OneWay::converted(off, Some(1_000), T);
                if first {
                    full.delay(now.saturating_add_signed(off.saturating_neg()), now);
                }
                let mut lean = full.clone();
                let before = lean.check();
                match lean.settled_delay(send, now + 50) {
                    Some(ns) => {
                        assert!(first, "before the first stamp: {off} {send}");
                        answered += 1;
                        assert_eq!(full.delay(send, now + 50), Some(ns), "{off} {send}");
                        assert_eq!(lean.check(), full.check());
                    }
                    None => assert_eq!(lean.check(), before, "{off} {send}"),
                }
            }
        }
    }
    // Only after the first stamp, and only for the stamps delay takes as they are.
    assert!((10..40).contains(&answered), "{answered}");
}

#[test]
fn offsets_come_from_the_spec_by_stream() {
    let offsets = [(3u32, 1_000i64), (9, -2_000)];
    let errors = [(9u32, 300u64)];
    let mut a = OneWay::for_stream(&offsets, &errors, 9, T);
    assert_eq!(a.delay(10_000, 9_000), Some(1_000));
    assert_eq!(a.check().error_ns, Some(300));
    let mut b = OneWay::for_stream(&offsets, &errors, 3, T);
    assert_eq!(b.delay(10_000, 12_000), Some(1_000));
    assert_eq!(b.check().error_ns, None);
    assert_eq!(b.check().provenance(), "converted, error bound not given");
    let mut c = OneWay::for_stream(&offsets, &errors, 4, T);
    assert_eq!(c.delay(10_000, 12_000), Some(2_000));
    assert!(c.check().is_same_clock());
}

#[test]
fn checks_merge_and_say_where_the_figure_comes_from() {
    let mut a = ClockCheck {
        converted: 10,
        error_ns: Some(24_000),
        ..Default::default()
    };
    let b = ClockCheck {
        converted: 5,
        error_ns: Some(11_000),
        ..Default::default()
    };
    a.merge(&b);
    assert_eq!((a.converted, a.error_ns), (15, Some(24_000)));
    assert_eq!(a.provenance(), "converted, error <= 24.00 us");
    // A bound of 24 us beside a 60 us figure is 40%: said, with round trips named.
    let note = a.error_note(60_000.0).unwrap();
    assert!(
        note.contains("more than 10% of the figure (60.00 us)"),
        "{note}"
    );
    assert!(note.contains("RTT/2"), "{note}");
    assert_eq!(a.error_note(1_000_000.0), None);
    // One converted sample without a bound leaves the whole without one.
    let mut c = a;
    c.merge(&ClockCheck {
        converted: 1,
        ..Default::default()
    });
    assert_eq!(c.error_ns, None);
    assert!(c
        .error_note(1e9)
        .unwrap()
        .contains("without an error bound"));
    // Impossible stamps win over everything.
    c.merge(&ClockCheck {
        future: 2,
        future_max_ns: 7,
        stale: 1,
        stale_max_ns: 9,
        ..Default::default()
    });
    assert_eq!(
        c.provenance(),
        "clocks differ: 2 stamps from the future, 1 stamp older than the timeout"
    );
    assert_eq!(c.error_note(1.0), None);
    // Nothing to say: the default, left out of the JSON.
    assert_eq!(serde_json::to_string(&ClockCheck::default()).unwrap(), "{}");
    let back: ClockCheck = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
    assert_eq!(back, c);
}
