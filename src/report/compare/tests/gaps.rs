//! Tests of what `compare` cannot judge: unmatched, failed, incomplete and identical runs.

use super::*;

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
