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
        incomplete: None,
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
        status: crate::model::RunStatus::Complete,
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

#[test]
fn runs_from_two_machines_name_what_differs() {
    let runs = crate::report::fixture::machine_runs();
    let (hal, haiku) = (&runs[0], &runs[1]);
    let c = compare(hal, haiku, None);
    assert_eq!(c.cases_compared, 5);
    assert_eq!(
        c.environment_notes,
        [
            "host differs: hal (A), haiku (B)",
            "CPU differs: Intel(R) Core(TM) i5-2520M CPU @ 2.50GHz (A), Intel(R) Core(TM) i7-4770K CPU @ 3.50GHz (B)",
            "cores differs: 4 (A), 8 (B)",
        ]
    );
    let text = format_comparison(&c);
    let table = text.find("case ").expect("the table");
    for note in &c.environment_notes {
        let at = text.find(&format!("note: {note}")).expect(note);
        assert!(at < table, "the differences come before the table");
    }
}

#[test]
fn runs_across_hosts_name_each_hosts_differences_and_the_cases_moved() {
    let a = crate::report::fixture::host_pairs_run();
    let mut b = a.clone();
    b.run_id = "B".into();
    // Host c is another machine in B, with jumbo frames; host b is gone, and its cases
    // ran on a new host d.
    let c_host = &mut b.environment.hosts[2];
    c_host.hostname = "ns-c2".into();
    c_host.kernel = "6.12.0".into();
    c_host.nics[1].mtu = Some(9000);
    b.environment.hosts[1].name = "d".into();
    for case in &mut b.cases {
        for n in &mut case.nodes {
            if n.host == "b" {
                n.host = "d".into();
            }
        }
    }
    let c = compare(&a, &b, None);
    let notes = &c.environment_notes;
    assert!(
        notes.contains(&"hosts differ: a, b, c (A), a, c, d (B)".to_string()),
        "{notes:?}"
    );
    assert!(
        notes.contains(&"host c: machine differs: ns-c (A), ns-c2 (B)".to_string()),
        "{notes:?}"
    );
    assert!(
        notes.contains(&"host c: kernel differs: 6.1.0-27-amd64 (A), 6.12.0 (B)".to_string()),
        "{notes:?}"
    );
    assert!(
        notes.contains(
            &"host c: NIC differs: veth-c mtu 1500 10000 Mb/s (A), veth-c mtu 9000 10000 Mb/s (B)"
                .to_string()
        ),
        "{notes:?}"
    );
    assert!(
        notes.contains(
            &"hosts of latency/reqrep[a->b]/tcp/64 differ: a->b (A), a->d (B)".to_string()
        ),
        "{notes:?}"
    );
    assert!(
        notes.contains(&"hosts of latency/reqrep[b->b]/tcp/64 differ: b (A), d (B)".to_string()),
        "{notes:?}"
    );
    // Host a is the same machine in both: nothing said of it.
    assert!(!notes.iter().any(|n| n.starts_with("host a")), "{notes:?}");
    // A run on one host against one across hosts: the hosts differ.
    let one = &crate::report::fixture::machine_runs()[1];
    let c = compare(one, &a, None);
    assert!(
        c.environment_notes
            .contains(&"hosts differ: haiku (A), a, b, c (B)".to_string()),
        "{:?}",
        c.environment_notes
    );
}

#[test]
fn every_case_moved_is_said_once() {
    let a = crate::report::fixture::host_pairs_run();
    let mut b = a.clone();
    for case in &mut b.cases {
        case.nodes[0].host = "z".into();
        case.nodes[1].host = "z".into();
    }
    let notes = compare(&a, &b, None).environment_notes;
    assert!(!notes.iter().any(|n| n.contains("every case")), "{notes:?}");
    // The same pair everywhere: one line for every case.
    let mut a1 = a.clone();
    a1.cases.retain(|c| c.host_path("") == "a->b");
    a1.cases.push(a1.cases[0].clone());
    a1.cases[1].id = "x".into();
    let mut b1 = a1.clone();
    for case in &mut b1.cases {
        case.nodes[1].host = "c".into();
    }
    let notes = compare(&a1, &b1, None).environment_notes;
    assert_eq!(notes, ["hosts of every case differ: a->b (A), a->c (B)"]);
}

#[test]
fn machine_columns() {
    let runs = crate::report::fixture::machine_runs();
    let (cols, tables) = by_host(&runs);
    let labels: Vec<&str> = cols.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["hal", "haiku", "yobox"]);
    assert_eq!(cols[0].cpu, "Intel Core i5-2520M");
    assert_eq!(tables.len(), 1);
    let t = &tables[0];
    assert_eq!(t.title, "throughput at 64 B, closed loop: delivered msg/s");
    let rows: Vec<(&str, &str)> = t
        .rows
        .iter()
        .map(|(p, tr, _)| (p.as_str(), tr.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("pubsub", "inproc"),
            ("pubsub", "ipc"),
            ("pubsub", "tcp"),
            ("pushpull", "inproc"),
            ("pushpull", "tcp")
        ]
    );
    // Each cell is that machine's median with its interval.
    let want = crate::report::numbers::estimate_whole(
        runs[1].cases[2].summary.msgs_per_sec.as_ref().unwrap(),
    );
    assert_eq!(t.rows[2].2[1], want);
    let text = format_by_host(&runs);
    let expected_head = "\
  pattern   transport                  hal                haiku               yobox
                       Intel Core i5-2520M  Intel Core i7-4770K  Intel Core i5-7500
";
    assert!(text.contains(expected_head), "{text}");
    assert!(text.contains("  hal: run 20261123-110000-hal; Intel(R) Core(TM) i5-2520M CPU @ 2.50GHz, 4 cores, kernel 6.1.0-27-amd64, libzmq 4.3.5"), "{text}");
}

#[test]
fn machine_columns_of_a_run_across_hosts_and_of_repeated_hosts() {
    // One run across hosts: a column per host pair.
    let run = crate::report::fixture::host_pairs_run();
    let (cols, tables) = by_host(std::slice::from_ref(&run));
    assert_eq!(cols.len(), 9);
    assert_eq!(cols[1].label, "a->b");
    assert_eq!(cols[1].cpu, "Intel Xeon Gold 6248R");
    assert_eq!(
        cols[2].cpu,
        "Intel Xeon Gold 6248R -> AMD EPYC 7763 64-Core"
    );
    assert_eq!(tables.len(), 1);
    // Each pattern (reqrep[a->b], ...) has a value only in its own column.
    let row = &tables[0].rows[1];
    assert_eq!(row.0, "reqrep[a->b]");
    assert!(row.2[1] != "-");
    assert_eq!(row.2.iter().filter(|c| *c == "-").count(), 8);
    // Two runs on the same machine: the run says which column is which; a failed case.
    let mut runs = crate::report::fixture::machine_runs();
    let mut again = runs[1].clone();
    again.run_id = "R2".into();
    again.cases[0].summary = Default::default();
    again.cases[0].error = Some("peer stopped".into());
    runs.push(again);
    let (cols, tables) = by_host(&runs);
    assert_eq!(cols[1].label, "haiku (20261123-110001-haiku)");
    assert_eq!(cols[3].label, "haiku (R2)");
    assert_eq!(tables[0].rows[0].2[3], "failed");
    assert!(format_by_host(&[]).contains("no case"));
}

#[test]
fn cpu_names_are_shortened() {
    assert_eq!(
        short_cpu("Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz"),
        "Intel Xeon Gold 6248R"
    );
    assert_eq!(
        short_cpu("AMD EPYC 7763 64-Core Processor"),
        "AMD EPYC 7763 64-Core"
    );
    assert_eq!(short_cpu(""), "-");
}

/// A case that failed in both runs: nothing of it was compared, so the gate cannot pass.
#[test]
fn a_case_failed_in_both_runs_is_incomplete_not_pass() {
    let mut failed = latency_case(64, est(30.0, 0.5));
    failed.error = Some("every node failed".into());
    failed.summary = CaseSummary::default();
    let a = run("A", vec![failed.clone()]);
    let b = run("B", vec![failed]);
    let c = compare(&a, &b, Some(5.0));
    assert!(c.changes.is_empty());
    assert_eq!(c.verdict(), Some(Verdict::Incomplete));
    let text = format_comparison(&c);
    assert!(!text.contains("PASS"), "{text}");
    assert!(
        text.contains("INCOMPLETE: no figure was compared; 1 case failed in both runs"),
        "{text}"
    );
    assert_eq!(text.matches("every node failed").count(), 1, "{text}");
    // Failed in A only: nothing to judge B's case against.
    let a = run(
        "A",
        vec![{
            let mut f = latency_case(64, est(30.0, 0.5));
            f.error = Some("peer stopped".into());
            f.summary = CaseSummary::default();
            f
        }],
    );
    let b = run("B", vec![latency_case(64, est(30.0, 0.5))]);
    let c = compare(&a, &b, Some(5.0));
    assert_eq!(
        c.verdict(),
        Some(Verdict::Incomplete),
        "{}",
        format_comparison(&c)
    );
    assert!(c
        .gaps()
        .iter()
        .any(|g| g.contains("failed in the baseline A")));
}

/// Run B's case measured nothing (a workload case of 0 repetitions): no figure to judge.
#[test]
fn a_case_of_b_that_measured_nothing_is_incomplete() {
    let a = run("A", vec![latency_case(64, est(30.0, 0.5))]);
    let mut empty = latency_case(64, est(30.0, 0.5));
    empty.summary = CaseSummary::default();
    let b = run("B", vec![empty]);
    let c = compare(&a, &b, Some(5.0));
    assert_eq!(c.verdict(), Some(Verdict::Incomplete));
    let text = format_comparison(&c);
    assert!(!text.contains("PASS"), "{text}");
    assert!(
        text.contains("latency/reqrep/tcp/64: incomplete in B: measured nothing (no figure)"),
        "{text}"
    );
    assert!(text.contains("1 case of B measured nothing"), "{text}");
    assert!(
        text.contains("no common case has figures in both runs"),
        "{text}"
    );
}

/// A case of B that measured less than asked (`incomplete`) fails the gate even when its
/// figures look fine; `--allow-incomplete` lets it pass and says what it allowed. A
/// baseline case measured short is told of, but its figures are judged.
#[test]
fn an_incomplete_case_of_b_fails_the_gate() {
    let a = baseline();
    let mut b = a.clone();
    b.run_id = "B1".into();
    b.cases[1].incomplete = Some("cut short: 28 of 100 messages arrived".into());
    let mut c = compare(&a, &b, Some(1000.0));
    assert!(!c.regressed());
    assert_eq!(c.verdict(), Some(Verdict::Incomplete));
    let text = format_comparison(&c);
    assert!(!text.contains("PASS"), "{text}");
    assert!(
        text.contains(
            "throughput/pushpull/tcp/64: incomplete in B: cut short: 28 of 100 messages arrived"
        ),
        "{text}"
    );
    assert!(
        text.contains("INCOMPLETE: 1 case of B1 measured less than asked (incomplete)"),
        "{text}"
    );
    c.allow_incomplete = true;
    assert_eq!(c.verdict(), Some(Verdict::Pass));
    assert!(format_comparison(&c).contains("allowed although 1 case of B1 measured less"));
    // The baseline's case cut short: said, not a gap.
    let mut a2 = a.clone();
    a2.cases[0].incomplete = Some("interrupted after 2 of 3 repetitions".into());
    let mut b2 = b.clone();
    b2.cases[1].incomplete = None;
    let c = compare(&a2, &b2, Some(5.0));
    assert_eq!(
        c.verdict(),
        Some(Verdict::Pass),
        "{}",
        format_comparison(&c)
    );
    assert!(format_comparison(&c)
        .contains("latency/reqrep/tcp/64: incomplete in A: interrupted after 2 of 3 repetitions"));
}

/// `compare last last`: a run compared with itself judges nothing; the reason is given once.
#[test]
fn a_run_compared_with_itself_is_said_to_be_one() {
    let a = run("A", vec![latency_case(64, est(30.0, 3.0))]);
    let c = compare(&a, &a, Some(5.0));
    assert!(c.same_run);
    assert_eq!(c.verdict(), Some(Verdict::Incomplete));
    let text = format_comparison(&c);
    assert!(
        text.contains("B: A  started 2026-11-21T22:15:30Z  complete  (the same run as A)"),
        "{text}"
    );
    assert_eq!(
        text.matches("A and B are the same run (A)").count(),
        1,
        "{text}"
    );
    assert!(
        !text.contains("INCONCLUSIVE") && !text.contains("PASS"),
        "{text}"
    );
    // An interrupted run compared with itself: its status is said once, not for A and B.
    let mut r = a.clone();
    r.status = crate::model::RunStatus::Interrupted;
    let c = compare(&r, &r, Some(5.0));
    assert_eq!(
        c.gaps()
            .iter()
            .filter(|g| g.contains("interrupted"))
            .count(),
        1
    );
}

/// The JSON of a comparison carries what the text says: the verdict, the reasons, each
/// incomplete case with why, the undecided figures with the repetitions that would decide.
#[test]
fn the_json_has_the_verdict_and_its_reasons() {
    let a = run("A", vec![latency_case(64, est(30.0, 3.0))]);
    let mut b = run("B", vec![latency_case(64, est(33.0, 3.0))]);
    let v: serde_json::Value =
        serde_json::from_str(&comparison_json(&compare(&a, &b, Some(5.0)))).unwrap();
    assert_eq!(v["verdict"], "inconclusive");
    assert_eq!(v["changes"][0]["inconclusive"], true);
    assert!(v["changes"][0]["repetitions_to_decide"].as_u64().unwrap() > 3);
    assert!(v["changes"][0]["ratio_low"].as_f64().unwrap() > 0.0);
    b.cases[0].incomplete = Some("interrupted after 2 of 3 repetitions".into());
    let v: serde_json::Value =
        serde_json::from_str(&comparison_json(&compare(&a, &b, Some(5.0)))).unwrap();
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
