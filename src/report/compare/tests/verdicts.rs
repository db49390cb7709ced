//! Tests of `compare`'s verdicts: noise, thresholds, the gate, the table and the JSON.

use super::*;

#[test]
fn identical_runs_pass() {
    let a = baseline();
    let mut b = a.clone();
    b.run_id = "B1".into();
    let c = compare(&a, &b, Some(5.0));
    assert!(!c.regressed());
    assert_eq!(c.cases_compared, 2);
    assert_eq!(c.changes.len(), 3); // latency_us and p99_us, msgs_per_sec
    for ch in &c.changes {
        assert_eq!(ch.ratio, 1.0);
        assert_eq!(ch.noise, Noise::Within);
        assert!(!ch.regressed);
    }
    assert!(c.only_in_a.is_empty() && c.only_in_b.is_empty());
    assert!(c.environment_notes.is_empty());
    assert!(format_comparison(&c).contains("PASS: no figure worse by more than 5%"));
}

#[test]
fn planted_regression_is_flagged() {
    let a = baseline();
    let mut b = a.clone();
    b.run_id = "B1".into();
    b.cases[0] = latency_case(64, est(60.0, 0.5)); // latency twice as bad, tight CIs
    let c = compare(&a, &b, Some(5.0));
    assert!(c.regressed());
    let lat = &c.changes[0];
    assert_eq!(lat.metric, Metric::LatencyUs);
    assert_eq!(lat.ratio, 2.0);
    assert!((lat.change_pct - 100.0).abs() < 1e-9);
    assert_eq!(lat.noise, Noise::Beyond);
    assert!(lat.regressed);
    let names: Vec<_> = c.regressions().map(|x| x.metric).collect();
    assert_eq!(names, [Metric::LatencyUs, Metric::P99Us]);
    let text = format_comparison(&c);
    assert!(text.contains("REGRESSED"), "{text}");
    assert!(
        text.contains("FAIL: 2 figures worse by more than 5% beyond noise"),
        "{text}"
    );
    // Without a threshold nothing fails, but the change is reported.
    let c = compare(&a, &b, None);
    assert!(!c.regressed());
    assert!(format_comparison(&c).contains("2 worse beyond noise"));
}

#[test]
fn lower_throughput_is_a_regression_and_higher_is_not() {
    let a = baseline();
    let mut b = a.clone();
    b.cases[1] = throughput_case(64, est(800_000.0, 10_000.0));
    let c = compare(&a, &b, Some(5.0));
    let thr = c
        .changes
        .iter()
        .find(|x| x.metric == Metric::MsgsPerSec)
        .unwrap();
    assert!((thr.worse_pct - 20.0).abs() < 1e-9);
    assert!(thr.regressed && c.regressed());
    // The other way round it is an improvement.
    let c = compare(&b, &a, Some(5.0));
    assert!(!c.regressed());
    assert!(format_comparison(&c).contains("better, beyond noise"));
}

#[test]
fn within_noise_over_the_threshold_is_inconclusive_not_pass() {
    // 10% worse, but the intervals [27, 33] and [30, 36] overlap: the runs cannot tell
    // whether it is worse by more than 5%, so the gate neither passes nor fails on it.
    let a = run("A", vec![latency_case(64, est(30.0, 3.0))]);
    let b = run("B", vec![latency_case(64, est(33.0, 3.0))]);
    let c = compare(&a, &b, Some(5.0));
    let lat = &c.changes[0];
    assert_eq!(lat.noise, Noise::Within);
    assert!(lat.worse_pct > 5.0);
    assert!(!lat.regressed && !c.regressed());
    assert!(lat.inconclusive);
    let n = lat.repetitions_to_decide.expect("a number of repetitions");
    assert!(n > 3, "{n}");
    assert_eq!(c.verdict(), Some(Verdict::Inconclusive));
    let text = format_comparison(&c);
    assert!(!text.contains("PASS"), "{text}");
    assert!(
        text.contains("INCONCLUSIVE: 2 figures could be worse by more than 5%"),
        "{text}"
    );
    assert!(text.contains("the gate fails (exit 22)"), "{text}");
    assert!(
        text.contains(
            "latency/reqrep/tcp/64 latency_us: undecided at 5%: +10.0% could be as much as"
        ),
        "{text}"
    );
    // The example of docs/history.md.
    assert!(
        text.contains("INCONCLUSIVE: 2 figures could be worse by more than 5%, their 95% intervals too wide to tell (2 figures in 1 case compared); the gate fails (exit 22): about 7 repetitions per run would decide (estimated from the spread seen)"),
        "{text}"
    );
    assert!(
        text.contains(
            "+10.0% could be as much as 21.6% worse; about 7 repetitions per run would decide"
        ),
        "{text}"
    );
    // Without a threshold nothing is undecided: compare only reports.
    let c = compare(&a, &b, None);
    assert!(c.verdict().is_none() && c.inconclusive().next().is_none());
}

#[test]
fn two_quick_runs_far_apart_within_noise_do_not_pass() {
    // Two repetitions each, spread over a factor of ten: "+3254.6% within noise".
    let a = run(
        "A",
        vec![latency_case(
            64,
            crate::stats::estimate(&[3.0, 40.0]).unwrap(),
        )],
    );
    let b = run(
        "B",
        vec![latency_case(
            64,
            crate::stats::estimate(&[30.0, 1100.0]).unwrap(),
        )],
    );
    let c = compare(&a, &b, Some(5.0));
    assert_eq!(c.changes[0].noise, Noise::Within, "{:?}", c.changes[0]);
    assert_eq!(c.verdict(), Some(Verdict::Inconclusive));
    let text = format_comparison(&c);
    assert!(
        text.contains("INCONCLUSIVE") && !text.contains("PASS"),
        "{text}"
    );
    // The interval ends are shown, however far from the median (never as 0).
    assert!(
        !text.contains("[0.00,") && !text.contains("[0.0,"),
        "{text}"
    );
    // More repetitions than the runs have would decide it.
    assert!(c.changes[0].repetitions_to_decide.is_some_and(|n| n > 2));
}

#[test]
fn a_change_whose_whole_interval_is_past_the_threshold_regresses() {
    // The intervals of A and B overlap (within noise), but B/A's interval is all above 1.2.
    let a = run("A", vec![latency_case(64, est(30.0, 4.0))]);
    let b = run("B", vec![latency_case(64, est(39.0, 6.0))]);
    let c = compare(&a, &b, Some(5.0));
    let lat = &c.changes[0];
    assert_eq!(lat.noise, Noise::Within);
    assert!(lat.ratio_low.unwrap() > 1.05, "{lat:?}");
    assert!(lat.regressed && c.verdict() == Some(Verdict::Fail));
}

#[test]
fn beyond_noise_but_under_threshold_passes() {
    // 5% worse and beyond noise, under a 6% threshold.
    let a = run("A", vec![latency_case(64, est(30.0, 0.2))]);
    let b = run("B", vec![latency_case(64, est(31.5, 0.2))]);
    let c = compare(&a, &b, Some(6.0));
    assert_eq!(c.changes[0].noise, Noise::Beyond);
    assert!(!c.regressed());
    assert!(compare(&a, &b, Some(4.0)).regressed());
}

#[test]
fn single_repetitions_fall_back_to_the_threshold() {
    let one = |m: f64| Estimate {
        median: m,
        ci_low: m,
        ci_high: m,
        spread_pct: 0.0,
        n: 1,
    };
    let a = run("A", vec![latency_case(64, one(30.0))]);
    let b = run("B", vec![latency_case(64, one(40.0))]);
    let c = compare(&a, &b, Some(5.0));
    assert_eq!(c.changes[0].noise, Noise::Unknown);
    assert!(c.regressed());
    assert!(format_comparison(&c).contains("worse, noise unknown (n=1)"));
}

#[test]
fn zero_baseline() {
    let z = Estimate {
        median: 0.0,
        ci_low: 0.0,
        ci_high: 0.0,
        spread_pct: 0.0,
        n: 3,
    };
    let c = change("x", Metric::MsgsPerSec, z, est(10.0, 1.0), Some(5.0));
    assert!(c.ratio.is_infinite() && !c.regressed);
    let c = change("x", Metric::MsgsPerSec, z, z, Some(5.0));
    assert_eq!((c.ratio, c.change_pct), (1.0, 0.0));
}

#[test]
fn table_snapshot() {
    let a = baseline();
    let mut b = a.clone();
    b.run_id = "B1".into();
    b.started_at = "2026-11-22T08:00:00Z".into();
    b.cases[0] = latency_case(64, est(60.0, 0.5));
    let text = format_comparison(&compare(&a, &b, Some(5.0)));
    let expected = "\
A: A1  started 2026-11-21T22:15:30Z  complete
B: B1  started 2026-11-22T08:00:00Z  complete

case                        metric        A median [95% CI]          B median [95% CI]                    change [95% CI]  verdict
latency/reqrep/tcp/64       latency_us    30.00 [29.50, 30.50]       60.00 [59.50, 60.50]       +100.0% [+96.3%, +103.8%]  worse, beyond noise  REGRESSED
latency/reqrep/tcp/64       p99_us        60.00 [59.00, 61.00]       120.0 [119.0, 121.0]       +100.0% [+96.3%, +103.8%]  worse, beyond noise  REGRESSED
throughput/pushpull/tcp/64  msgs_per_sec  1000000 [990000, 1010000]  1000000 [990000, 1010000]       +0.0% [-0.9%, +0.9%]  within noise

FAIL: 2 figures worse by more than 5% beyond noise (3 figures in 2 cases compared)
";
    assert_eq!(text, expected);
}

#[test]
fn percentages() {
    assert_eq!(parse_percent("5%").unwrap(), 5.0);
    assert_eq!(parse_percent("5").unwrap(), 5.0);
    assert_eq!(parse_percent(" 2.5 % ").unwrap(), 2.5);
    assert_eq!(parse_percent("0").unwrap(), 0.0);
    for bad in ["-5%", "", "%", "five", "5%%", "inf", "NaN"] {
        let e = parse_percent(bad).unwrap_err();
        assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        assert_eq!(e.exit_code(), 3);
    }
}

/// The JSON of a comparison carries what the text says: the verdict, the reasons, each
/// incomplete case with why, the undecided figures with the repetitions that would decide.
#[test]
fn the_json_has_the_verdict_and_its_reasons() {
    let a = run("A", vec![latency_case(64, est(30.0, 3.0))]);
    let mut b = run("B", vec![latency_case(64, est(33.0, 3.0))]);
    let v: serde_json::Value =
        serde_json::from_str(&comparison_json(&compare(&a, &b, Some(5.0)))).unwrap();
    assert_eq!(v["kind"], "compare");
    let v = &v["results"];
    assert_eq!(v["verdict"], "inconclusive");
    assert_eq!(v["changes"][0]["inconclusive"], true);
    assert!(v["changes"][0]["repetitions_to_decide"].as_u64().unwrap() > 3);
    assert!(v["changes"][0]["ratio_low"].as_f64().unwrap() > 0.0);
    b.cases[0].incomplete = Some("interrupted after 2 of 3 repetitions".into());
    let v: serde_json::Value =
        serde_json::from_str(&comparison_json(&compare(&a, &b, Some(5.0)))).unwrap();
    let v = &v["results"];
    assert_eq!(v["verdict"], "incomplete");
    assert_eq!(v["incomplete_cases"][0]["run"], "B");
    assert_eq!(
        v["incomplete_cases"][0]["why"],
        "interrupted after 2 of 3 repetitions"
    );
    assert_eq!(
        v["reasons"][0],
        "1 case of B measured less than asked (incomplete)"
    );
    let v: serde_json::Value =
        serde_json::from_str(&comparison_json(&compare(&a, &b, None))).unwrap();
    assert!(v["verdict"].is_null());
}

/// For a rate, "worse by PCT" means B below A by PCT percent of A, the same measure as
/// `worse_pct`: at 100% or more a rate can never be worse by more, so nothing is undecided;
/// the worst end of the interval is told the same way.
#[test]
fn rates_are_undecided_on_the_same_measure_as_worse_pct() {
    let a = run("A", vec![throughput_case(64, est(1000.0, 300.0))]);
    let b = run("B", vec![throughput_case(64, est(800.0, 300.0))]);
    let c = compare(&a, &b, Some(5.0));
    let thr = &c.changes[0];
    assert!(thr.inconclusive, "{thr:?}");
    let worst = (1.0 - thr.ratio_low.unwrap()) * 100.0;
    assert!(worst < 100.0, "{worst}");
    let text = format_comparison(&c);
    assert!(
        text.contains(&format!("-20.0% could be as much as {worst:.1}% worse")),
        "{text}"
    );
    let c = compare(&a, &b, Some(100.0));
    assert_eq!(
        c.verdict(),
        Some(Verdict::Pass),
        "{}",
        format_comparison(&c)
    );
}
