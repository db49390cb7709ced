//! Tests of `compare`: matching, noise and thresholds, and the text of the verdict.

use super::noise::change;
use super::*;
use crate::endpoint::Transport;
use crate::model::{CaseResult, CaseSummary, Environment, Estimate, Kind, LoopMode, RunResult};

fn est(median: f64, half: f64) -> Estimate {
    Estimate {
        median,
        ci_low: median - half,
        ci_high: median + half,
        spread_pct: 2.0 * half / median * 100.0,
        n: 3,
    }
}

fn latency_case(size: usize, lat: Estimate) -> CaseResult {
    CaseResult {
        id: CaseResult::make_id(Kind::Latency, "reqrep", Transport::Tcp, size, None),
        kind: Kind::Latency,
        pattern: "reqrep".into(),
        transport: Transport::Tcp,
        message_size: size,
        count: 10_000,
        rate: None,
        loop_mode: LoopMode::Closed,
        warmup: 1000,
        repetitions: Vec::new(),
        summary: CaseSummary {
            latency_us: Some(lat),
            p99_us: Some(Estimate {
                median: lat.median * 2.0,
                ci_low: lat.ci_low * 2.0,
                ci_high: lat.ci_high * 2.0,
                ..lat
            }),
            ..CaseSummary::default()
        },
        floor: None,
        warnings: Vec::new(),
        error: None,
        wall_s: 1.5,
        nodes: Vec::new(),
        edges: Vec::new(),
        sender: None,
    }
}

fn throughput_case(size: usize, rate: Estimate) -> CaseResult {
    let mut c = latency_case(size, rate);
    c.id = CaseResult::make_id(Kind::Throughput, "pushpull", Transport::Tcp, size, None);
    c.kind = Kind::Throughput;
    c.pattern = "pushpull".into();
    c.summary = CaseSummary {
        msgs_per_sec: Some(rate),
        ..CaseSummary::default()
    };
    c
}

fn run(id: &str, cases: Vec<CaseResult>) -> RunResult {
    RunResult {
        schema_version: crate::model::SCHEMA_VERSION,
        run_id: id.into(),
        started_at: "2026-11-21T22:15:30Z".into(),
        finished_at: Some("2026-11-21T22:16:00Z".into()),
        status: "complete".into(),
        command: "zmqperf run".into(),
        workload: None,
        environment: Environment {
            hostname: "alpha".into(),
            ..Environment::default()
        },
        cases,
        findings: Vec::new(),
        imported: None,
    }
}

fn baseline() -> RunResult {
    run(
        "A1",
        vec![
            latency_case(64, est(30.0, 0.5)),
            throughput_case(64, est(1_000_000.0, 10_000.0)),
        ],
    )
}

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
fn within_noise_is_not_flagged() {
    // 10% worse, but the intervals [27, 33] and [30, 36] overlap.
    let a = run("A", vec![latency_case(64, est(30.0, 3.0))]);
    let b = run("B", vec![latency_case(64, est(33.0, 3.0))]);
    let c = compare(&a, &b, Some(5.0));
    let lat = &c.changes[0];
    assert_eq!(lat.noise, Noise::Within);
    assert!(lat.worse_pct > 5.0);
    assert!(!lat.regressed && !c.regressed());
    assert!(format_comparison(&c).contains("PASS"));
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
fn unmatched_failed_and_duplicate_cases() {
    let works = throughput_case(128, est(1.0, 0.1));
    let mut fails = works.clone();
    fails.error = Some("peer stopped".into());
    fails.summary = CaseSummary::default();
    let mut a = baseline();
    a.cases.push(works);
    let mut b = run("B", vec![latency_case(64, est(30.0, 0.5)), fails]);
    b.cases.push(latency_case(64, est(30.0, 0.5))); // the same case a second time
    b.environment.hostname = "beta".into();
    let c = compare(&a, &b, Some(5.0));
    assert_eq!(c.cases_compared, 2);
    assert_eq!(c.only_in_a, ["throughput/pushpull/tcp/64"]);
    assert_eq!(c.only_in_b, ["latency/reqrep/tcp/64"]);
    assert_eq!(c.failures.len(), 1);
    assert!(c.failures[0].newly_failing());
    assert!(c.regressed());
    assert_eq!(c.environment_notes, ["host differs: alpha (A), beta (B)"]);
    let text = format_comparison(&c);
    assert!(
        text.contains("throughput/pushpull/tcp/128: FAILS in B: peer stopped"),
        "{text}"
    );
    assert!(
        text.contains("only in A: throughput/pushpull/tcp/64"),
        "{text}"
    );
    assert!(text.contains("FAIL: 1 case failing in B only"), "{text}");
    assert!(text.contains("note: host differs"), "{text}");
    // Without a threshold a failing case is shown but fails nothing.
    assert!(!compare(&a, &b, None).regressed());
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

case                        metric        A median [95% CI]          B median [95% CI]           change  verdict
latency/reqrep/tcp/64       latency_us    30.00 [29.50, 30.50]       60.00 [59.50, 60.50]       +100.0%  worse, beyond noise  REGRESSED
latency/reqrep/tcp/64       p99_us        60.00 [59.00, 61.00]       120.0 [119.0, 121.0]       +100.0%  worse, beyond noise  REGRESSED
throughput/pushpull/tcp/64  msgs_per_sec  1000000 [990000, 1010000]  1000000 [990000, 1010000]    +0.0%  within noise

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

#[test]
fn network_differences_are_noted_only_when_both_runs_record_one() {
    let nic = |name: &str, mtu: u32, loopback: bool| crate::model::NetworkInterface {
        address: "10.0.0.5".into(),
        local_address: "10.0.0.2".into(),
        interface: name.into(),
        loopback,
        mtu: Some(mtu),
        speed_mbps: None,
        driver: None,
    };
    let mut a = baseline();
    let mut b = baseline();
    a.environment.network = vec![nic("eth0", 1500, false)];
    // B ran on ipc alone (or before the field existed): nothing to compare.
    assert!(compare(&a, &b, None).environment_notes.is_empty());
    b.environment.network = vec![nic("eth0", 9000, false)];
    assert_eq!(
        compare(&a, &b, None).environment_notes,
        ["network differs: eth0 mtu 1500 for 10.0.0.5 (from 10.0.0.2) (A), eth0 mtu 9000 for 10.0.0.5 (from 10.0.0.2) (B)"]
    );
    b.environment.network = a.environment.network.clone();
    assert!(compare(&a, &b, None).environment_notes.is_empty());
}
