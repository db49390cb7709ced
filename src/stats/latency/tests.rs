//! The latency histogram: its summary, merging, the interval since a copy, and its clock check.

use super::*;

#[test]
fn an_interval_is_what_was_recorded_since_an_earlier_copy() {
    let mut h = LatencyHistogram::new();
    for ns in [1_000, 2_000, 3_000] {
        h.record(ns);
    }
    let before = h.clone();
    for ns in [10_000, 20_000] {
        h.record(ns);
    }
    let d = h.since(&before);
    assert_eq!(d.count(), 2);
    let s = d.summary();
    assert!((9_990..=10_010).contains(&s.min_ns), "{s:?}");
    assert!((19_980..=20_020).contains(&s.max_ns), "{s:?}");
    assert_eq!(s.mean_ns, 15_000.0);
    let empty = h.since(&h.clone());
    assert_eq!(empty.summary().count, 0);
}

#[test]
fn known_samples_give_known_percentiles() {
    let mut h = LatencyHistogram::new();
    for v in 1..=1000u64 {
        h.record(v * 1000); // 1 us .. 1000 us
    }
    let s = h.summary();
    assert_eq!(s.count, 1000);
    assert_eq!(s.min_ns, 1000);
    assert_eq!(s.max_ns, 1_000_000);
    let close = |got: u64, want: u64| (got as f64 - want as f64).abs() <= want as f64 * 0.001;
    assert!(close(s.p50_ns, 500_000), "{}", s.p50_ns);
    assert!(close(s.p90_ns, 900_000), "{}", s.p90_ns);
    assert!(close(s.p99_ns, 990_000), "{}", s.p99_ns);
    assert!(close(s.p99_9_ns, 999_000), "{}", s.p99_9_ns);
    assert_eq!(s.mean_ns, 500_500.0);
    // Population stddev of 1..=1000 is sqrt((1000^2 - 1) / 12) = 288.6749..., in us.
    assert!((s.stddev_ns - 288_674.9).abs() < 1.0, "{}", s.stddev_ns);
}

#[test]
fn a_peers_compact_buckets_give_the_same_figures_as_the_samples() {
    let compact = r#"{"buckets": [[2000, 1], [1000, 2], [4000, 1]]}"#;
    let h: LatencyHistogram = serde_json::from_str(compact).unwrap();
    let mut want = LatencyHistogram::new();
    for v in [1000, 1000, 2000, 4000] {
        want.record(v);
    }
    assert_eq!(h, want);
    assert_eq!(h.summary().mean_ns, 2000.0);
    assert!(serde_json::from_str::<LatencyHistogram>(r#"{"buckets": "x"}"#).is_err());
}

#[test]
fn harmonic_mean_is_exact() {
    let mut h = LatencyHistogram::new();
    h.record(1_000);
    h.record(2_000);
    h.record(4_000);
    // 3 / (1/1000 + 1/2000 + 1/4000) = 3 / 0.00175
    let want = 3.0 / 0.00175;
    assert!((h.summary().harmonic_mean_ns - want).abs() < 1e-6);
    h.record(0);
    assert!(
        (h.summary().harmonic_mean_ns - want).abs() < 1e-6,
        "zeros are left out"
    );
}

#[test]
fn merge_of_two_halves_equals_the_whole() {
    let mut whole = LatencyHistogram::new();
    let mut a = LatencyHistogram::new();
    let mut b = LatencyHistogram::new();
    let mut x: u64 = 12345;
    for i in 0..20_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let v = (x >> 40) % 5_000_000 + 1;
        whole.record(v);
        if i % 3 == 0 {
            a.record(v);
        } else {
            b.record(v);
        }
    }
    a.merge(&b);
    assert_eq!(a.summary(), whole.summary());
    assert_eq!(a, whole);
}

#[test]
fn the_shape_with_each_parts_extremes_and_sum_is_the_whole() {
    // Three parts, one of them empty; zeros and the wide inverses among the samples.
    let mut whole = LatencyHistogram::new();
    let mut shape = LatencyHistogram::new();
    let mut parts = [(u64::MAX, 0u64, 0u128); 3];
    let mut x: u64 = 99;
    for i in 0..30_000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let v = match i % 7 {
            0 => 0,
            1 => x >> 58,
            _ => (x >> 30) % 9_000_000,
        };
        whole.record(v);
        shape.record_shape(v);
        let p = &mut parts[(i % 2) as usize];
        *p = (p.0.min(v), p.1.max(v), p.2 + v as u128);
    }
    assert_ne!(shape, whole);
    for (min, max, sum) in parts.into_iter().filter(|p| p.2 > 0) {
        shape.add_extremes_and_sum(min, max, sum);
    }
    assert_eq!(shape, whole);
    assert_eq!(shape.summary(), whole.summary());
}

#[test]
fn serialises_and_reads_back() {
    let mut h = LatencyHistogram::new();
    for v in [5u64, 70, 900, 12_000, 3_000_000_000] {
        h.record(v);
    }
    let json = serde_json::to_string(&h).unwrap();
    let back: LatencyHistogram = serde_json::from_str(&json).unwrap();
    assert_eq!(back, h);
    assert_eq!(back.summary(), h.summary());
}

#[test]
fn the_clock_check_travels_with_the_samples() {
    let mut a = LatencyHistogram::new();
    a.record(5_000);
    a.set_clock(ClockCheck {
        converted: 1,
        error_ns: Some(20_000),
        ..Default::default()
    });
    let mut b = LatencyHistogram::new();
    b.set_clock(ClockCheck {
        future: 7,
        future_max_ns: 9,
        ..Default::default()
    });
    a.merge(&b);
    let c = *a.clock();
    assert_eq!((c.converted, c.future, c.error_ns), (1, 7, Some(20_000)));
    assert_eq!(a.summary().clock, c);
    let json = serde_json::to_string(&a).unwrap();
    let back: LatencyHistogram = serde_json::from_str(&json).unwrap();
    assert_eq!(back, a);
    // A peer's compact form may say it too; one on one clock says nothing.
    let compact: LatencyHistogram =
        serde_json::from_str(r#"{"buckets": [], "clock": {"stale": 3}}"#).unwrap();
    assert_eq!(compact.clock().stale, 3);
    let plain = serde_json::to_string(&LatencyHistogram::new()).unwrap();
    assert!(!plain.contains("clock"), "{plain}");
    let s = serde_json::to_string(&LatencyHistogram::new().summary()).unwrap();
    assert!(!s.contains("clock"), "{s}");
}

#[test]
fn empty_summary_is_zero() {
    assert_eq!(LatencyHistogram::new().summary().count, 0);
}

/// The u64 shortcut gives the u128 conversion's integer for every sample it takes (from
/// [`WIDE_BELOW`] up), and the samples below it need the u128 (their inverse is past u64).
#[test]
fn the_scaled_inverse_is_the_same_integer_by_either_conversion() {
    let wide = |ns: u64| (INV_SCALE as f64 / ns as f64) as u128;
    assert!(wide(WIDE_BELOW - 1) > u64::MAX as u128);
    assert!(wide(WIDE_BELOW) <= u64::MAX as u128);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut values: Vec<u64> = (1..200_000).collect();
    values.extend((0..64).flat_map(|k| {
        let p = 1u64 << k;
        [p.saturating_sub(1), p, p.saturating_add(1)]
    }));
    for _ in 0..200_000 {
        // xorshift: large samples of every magnitude
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        values.push(x >> (x % 64));
    }
    for ns in values.into_iter().filter(|&v| v > 0) {
        assert_eq!(scaled_inverse(ns), wide(ns), "{ns} ns");
    }
}
