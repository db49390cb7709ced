//! The compare gate's exit codes end to end: a gate that compared nothing, a case that
//! failed in both runs or measured less than asked, an interval too wide to decide, a run
//! compared with itself. Each under a watchdog, each on its own history file.

mod common;

use common::*;
use zmqperf::model::{CaseResult, Estimate, RunResult};

const T: u64 = 120;

/// Shapes the fixture's first case into the case of one run.
type Shape<'a> = &'a dyn Fn(&mut CaseResult);

/// Saves `runs` (built from the fixture's first case by their shape) into a fresh history.
fn history(name: &str, runs: &[(&str, Shape)]) -> String {
    let db = fresh_db(&format!("gate-{name}"));
    let mut store = zmqperf::store::Store::open(&db).unwrap();
    let fixture = zmqperf::report::fixture::sample_run();
    for (id, shape) in runs {
        let mut r: RunResult = fixture.clone();
        r.run_id = id.to_string();
        r.status = zmqperf::model::RunStatus::Complete;
        let mut case = fixture.cases[0].clone();
        shape(&mut case);
        r.cases = vec![case];
        store.save_run(&r).unwrap();
    }
    db
}

fn gate(db: &str, a: &str, b: &str, extra: &[&str]) -> Output {
    let mut args = vec!["compare", a, b, "--fail-above", "5%", "--db", db];
    args.extend_from_slice(extra);
    run(zp(&args), T)
}

/// A tight estimate (1% either side), so that nothing but what a test plants decides.
fn tight(median: f64) -> Estimate {
    Estimate {
        median,
        ci_low: median * 0.99,
        ci_high: median * 1.01,
        spread_pct: 2.0,
        n: 5,
    }
}

/// The fixture case with every figure tight around the same values.
fn steady(c: &mut CaseResult) {
    for x in [
        &mut c.summary.latency_us,
        &mut c.summary.p99_us,
        &mut c.summary.msgs_per_sec,
        &mut c.summary.mbit_per_sec,
    ]
    .into_iter()
    .flatten()
    {
        *x = tight(x.median);
    }
}

/// The audit's H19: the same failing case twice (a count far too long for its case
/// timeout: `topology check` now refuses the audit's own `rcvhwm = -1` before anything runs).
/// Nothing was compared: INCOMPLETE (exit 18), never PASS, and the reason said once.
#[test]
fn a_case_failed_in_both_runs_is_incomplete() {
    with_watchdog(T, || {
        let db = fresh_db("gate-h19");
        for _ in 0..2 {
            let o = run(
                zp(&[
                    "run",
                    "--patterns",
                    "pushpull",
                    "--transports",
                    "tcp",
                    "--sizes",
                    "64",
                    "--count",
                    "500M",
                    "--case-timeout",
                    "1s",
                    "--repetitions",
                    "1",
                    "--no-floor",
                    "--db",
                    &db,
                ]),
                T,
            );
            assert_eq!(o.code, Some(19), "every case fails: {o:?}");
        }
        let o = gate(&db, "last~1", "last", &[]);
        assert_eq!(o.code, Some(18), "{o:?}");
        assert!(!o.stdout.contains("PASS"), "{}", o.stdout);
        assert!(
            o.stdout
                .contains("INCOMPLETE: no figure was compared; 1 case failed in both runs"),
            "{}",
            o.stdout
        );
        let all = format!("{}{}", o.stdout, o.stderr);
        assert_eq!(
            all.matches("failed in both runs").count(),
            2,
            "the case line and the summary: {all}"
        );
        assert!(
            o.stderr
                .contains("the INCOMPLETE line (JSON: reasons) says why"),
            "{}",
            o.stderr
        );
        let _ = std::fs::remove_file(&db);
    });
}

/// The audit's H20 and B1: a case of B that measured nothing, or less than asked
/// (`incomplete`), fails the gate with exit 18 naming the case and why;
/// `--allow-incomplete` lets it pass on what it could compare.
#[test]
fn a_case_of_b_that_measured_nothing_or_less_fails_the_gate() {
    with_watchdog(T, || {
        let db = history(
            "b1",
            &[
                ("good", &steady),
                ("empty", &|c| {
                    c.summary = Default::default();
                    c.repetitions.clear();
                }),
                ("cut", &|c| {
                    steady(c);
                    c.incomplete = Some("cut short: 28 of 100 messages arrived".into());
                }),
            ],
        );
        let o = gate(&db, "good", "good-again-missing", &[]);
        assert_eq!(o.code, Some(14), "an unknown run: {o:?}");
        let o = gate(&db, "good", "empty", &[]);
        assert_eq!(o.code, Some(18), "{o:?}");
        assert!(!o.stdout.contains("PASS"), "{}", o.stdout);
        assert!(
            o.stdout
                .contains("incomplete in B: measured nothing (no figure)"),
            "{}",
            o.stdout
        );
        let o = gate(&db, "good", "cut", &[]);
        assert_eq!(o.code, Some(18), "{o:?}");
        assert!(
            o.stdout
                .contains("incomplete in B: cut short: 28 of 100 messages arrived"),
            "{}",
            o.stdout
        );
        assert!(
            o.stdout
                .contains("INCOMPLETE: 1 case of cut measured less than asked"),
            "{}",
            o.stdout
        );
        let o = gate(&db, "good", "cut", &["--format", "json"]);
        assert_eq!(o.code, Some(18), "{o:?}");
        let v = results(&o.stdout);
        assert_eq!(v["verdict"], "incomplete", "{}", o.stdout);
        assert_eq!(
            v["incomplete_cases"][0]["why"], "cut short: 28 of 100 messages arrived",
            "{}",
            o.stdout
        );
        let o = gate(&db, "good", "cut", &["--allow-incomplete"]);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout.contains("PASS") && o.stdout.contains("allowed although"),
            "{}",
            o.stdout
        );
        // The baseline measured short: said, and its figures are judged.
        let o = gate(&db, "cut", "good", &[]);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout.contains("incomplete in A: cut short"),
            "{}",
            o.stdout
        );
        let _ = std::fs::remove_file(&db);
    });
}

/// Two runs whose intervals are too wide to tell a 5% regression: INCONCLUSIVE, exit 22,
/// with the repetitions that would decide; never PASS.
#[test]
fn an_interval_too_wide_to_decide_is_inconclusive() {
    with_watchdog(T, || {
        let wide = |m: f64| zmqperf::stats::estimate(&[m / 4.0, m * 4.0]).unwrap();
        let db = history(
            "wide",
            &[
                ("a", &|c| {
                    steady(c);
                    c.summary.latency_us = Some(wide(30.0));
                }),
                ("b", &|c| {
                    steady(c);
                    c.summary.latency_us = Some(wide(60.0));
                }),
            ],
        );
        let o = gate(&db, "a", "b", &[]);
        assert_eq!(o.code, Some(22), "{o:?}");
        assert!(!o.stdout.contains("PASS"), "{}", o.stdout);
        assert!(
            o.stdout
                .contains("INCONCLUSIVE: 1 figure could be worse by more than 5%"),
            "{}",
            o.stdout
        );
        assert!(
            o.stdout.contains("repetitions per run would decide"),
            "{}",
            o.stdout
        );
        // The same verdict as JSON, with the same exit code.
        let o = gate(&db, "a", "b", &["--format", "json"]);
        assert_eq!(o.code, Some(22), "{o:?}");
        let v = results(&o.stdout);
        assert_eq!(v["verdict"], "inconclusive", "{}", o.stdout);
        // Without a threshold compare only reports.
        let o = run(zp(&["compare", "a", "b", "--db", &db]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let _ = std::fs::remove_file(&db);
    });
}

/// The audit's H10: `compare last last` says A and B are the same run, once, and its gate
/// judges nothing (exit 18).
#[test]
fn a_run_compared_with_itself_is_said_to_be_one() {
    with_watchdog(T, || {
        let db = history("same", &[("only", &steady)]);
        let o = gate(&db, "last", "last", &[]);
        assert_eq!(o.code, Some(18), "{o:?}");
        assert!(o.stdout.contains("(the same run as A)"), "{}", o.stdout);
        let all = format!("{}{}", o.stdout, o.stderr);
        assert_eq!(all.matches("A and B are the same run").count(), 1, "{all}");
        assert!(!all.contains("PASS"), "{all}");
        let _ = std::fs::remove_file(&db);
    });
}
