//! `zmqperf compare`: the change of each figure from run A to run B, whether it is beyond
//! noise, and whether it regressed past a threshold (so the command can gate CI).
//!
//! A difference is beyond noise when the two 95% confidence intervals do not overlap. It is
//! a regression when, in addition, the figure got worse by more than the threshold.

use super::text::{count, table};
use super::StoreError;
use crate::model::{CaseResult, CaseSummary, Estimate, RunResult};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;

/// A figure `compare` looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Mean latency, us (lower is better).
    LatencyUs,
    /// 99th percentile latency, us (lower is better).
    P99Us,
    /// Delivered messages per second (higher is better).
    MsgsPerSec,
    /// Delivered megabits per second (higher is better).
    MbitPerSec,
}

impl Metric {
    /// Every metric, in the order the comparison lists them.
    pub const ALL: [Metric; 4] = [
        Metric::LatencyUs,
        Metric::P99Us,
        Metric::MsgsPerSec,
        Metric::MbitPerSec,
    ];

    /// The field name in [`CaseSummary`] (and in the JSON report).
    pub fn name(self) -> &'static str {
        match self {
            Metric::LatencyUs => "latency_us",
            Metric::P99Us => "p99_us",
            Metric::MsgsPerSec => "msgs_per_sec",
            Metric::MbitPerSec => "mbit_per_sec",
        }
    }

    /// Whether a smaller value is the better one.
    pub fn lower_is_better(self) -> bool {
        matches!(self, Metric::LatencyUs | Metric::P99Us)
    }

    /// The estimate of this metric in a case summary, if the case has one.
    pub fn of(self, s: &CaseSummary) -> Option<Estimate> {
        match self {
            Metric::LatencyUs => s.latency_us,
            Metric::P99Us => s.p99_us,
            Metric::MsgsPerSec => s.msgs_per_sec,
            Metric::MbitPerSec => s.mbit_per_sec,
        }
    }
}

/// Whether a difference stands out of the run-to-run noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Noise {
    /// The 95% confidence intervals overlap: the difference may be chance.
    Within,
    /// The 95% confidence intervals do not overlap.
    Beyond,
    /// One side has a single repetition, so no interval: the change is taken at face value.
    Unknown,
}

/// One figure of one case in both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricChange {
    /// The case's id.
    pub case_id: String,
    /// Which figure.
    pub metric: Metric,
    /// The estimate in run A.
    pub a: Estimate,
    /// The estimate in run B.
    pub b: Estimate,
    /// B's median over A's (1 when both are 0; infinite when only A's is 0).
    pub ratio: f64,
    /// (ratio - 1) in percent: positive when B's value is larger.
    pub change_pct: f64,
    /// How much worse B is, in percent of A: `change_pct` for lower-is-better figures, its
    /// opposite for higher-is-better ones; negative for an improvement.
    pub worse_pct: f64,
    /// Whether the difference is beyond noise.
    pub noise: Noise,
    /// Worse by more than the threshold and not within noise (never without a threshold).
    pub regressed: bool,
}

/// A case present in both runs that failed in at least one of them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseFailure {
    /// The case's id.
    pub case_id: String,
    /// Its error in run A.
    pub error_a: Option<String>,
    /// Its error in run B.
    pub error_b: Option<String>,
}

impl CaseFailure {
    /// Whether the case works in A and fails in B.
    pub fn newly_failing(&self) -> bool {
        self.error_a.is_none() && self.error_b.is_some()
    }
}

/// A run as the comparison names it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRef {
    /// The run's id.
    pub run_id: String,
    /// Start time, RFC 3339 UTC.
    pub started_at: String,
    /// "complete", "interrupted" or "running".
    pub status: String,
}

/// The result of comparing run A (the baseline) with run B.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The baseline.
    pub a: RunRef,
    /// The run compared to it.
    pub b: RunRef,
    /// The regression threshold in percent, if one was given.
    pub fail_above_pct: Option<f64>,
    /// Cases found in both runs.
    pub cases_compared: usize,
    /// Every figure present in both runs' summaries of a common case, in A's case order.
    pub changes: Vec<MetricChange>,
    /// Common cases that failed in A or B.
    pub failures: Vec<CaseFailure>,
    /// Ids of the cases only A has.
    pub only_in_a: Vec<String>,
    /// Ids of the cases only B has.
    pub only_in_b: Vec<String>,
    /// How the two runs' machines and software differ (differences there move the figures).
    pub environment_notes: Vec<String>,
}

impl Comparison {
    /// Whether the comparison fails: with a threshold, some figure regressed past it or a
    /// case that worked in A fails in B. Never without a threshold.
    pub fn regressed(&self) -> bool {
        self.fail_above_pct.is_some()
            && (self.changes.iter().any(|c| c.regressed)
                || self.failures.iter().any(CaseFailure::newly_failing))
    }

    /// The figures that regressed.
    pub fn regressions(&self) -> impl Iterator<Item = &MetricChange> {
        self.changes.iter().filter(|c| c.regressed)
    }
}

/// Compares run B with the baseline run A, case by case (matched by [`CaseResult::id`]; a
/// case id that appears several times in a run is matched in order of appearance).
pub fn compare(a: &RunResult, b: &RunResult, fail_above_pct: Option<f64>) -> Comparison {
    let mut in_b: HashMap<&str, VecDeque<usize>> = HashMap::new();
    for (i, case) in b.cases.iter().enumerate() {
        in_b.entry(case.id.as_str()).or_default().push_back(i);
    }
    let mut matched_b = vec![false; b.cases.len()];
    let mut out = Comparison {
        a: run_ref(a),
        b: run_ref(b),
        fail_above_pct,
        cases_compared: 0,
        changes: Vec::new(),
        failures: Vec::new(),
        only_in_a: Vec::new(),
        only_in_b: Vec::new(),
        environment_notes: environment_notes(a, b),
    };
    for ca in &a.cases {
        let Some(j) = in_b.get_mut(ca.id.as_str()).and_then(VecDeque::pop_front) else {
            out.only_in_a.push(ca.id.clone());
            continue;
        };
        matched_b[j] = true;
        let cb = &b.cases[j];
        out.cases_compared += 1;
        compare_case(ca, cb, fail_above_pct, &mut out.changes);
        if ca.error.is_some() || cb.error.is_some() {
            out.failures.push(CaseFailure {
                case_id: ca.id.clone(),
                error_a: ca.error.clone(),
                error_b: cb.error.clone(),
            });
        }
    }
    out.only_in_b = b
        .cases
        .iter()
        .zip(&matched_b)
        .filter(|(_, m)| !**m)
        .map(|(c, _)| c.id.clone())
        .collect();
    out
}

fn run_ref(r: &RunResult) -> RunRef {
    RunRef {
        run_id: r.run_id.clone(),
        started_at: r.started_at.clone(),
        status: r.status.clone(),
    }
}

fn compare_case(
    a: &CaseResult,
    b: &CaseResult,
    threshold: Option<f64>,
    out: &mut Vec<MetricChange>,
) {
    for metric in Metric::ALL {
        let (Some(ea), Some(eb)) = (metric.of(&a.summary), metric.of(&b.summary)) else {
            continue;
        };
        out.push(change(&a.id, metric, ea, eb, threshold));
    }
}

/// The change of one figure from `a` to `b`.
fn change(
    case_id: &str,
    metric: Metric,
    a: Estimate,
    b: Estimate,
    threshold: Option<f64>,
) -> MetricChange {
    let ratio = if a.median == b.median {
        1.0
    } else if a.median == 0.0 {
        f64::INFINITY.copysign(b.median)
    } else {
        b.median / a.median
    };
    let change_pct = (ratio - 1.0) * 100.0;
    let worse_pct = if metric.lower_is_better() {
        change_pct
    } else {
        -change_pct
    };
    let noise = if a.n < 2 || b.n < 2 {
        Noise::Unknown
    } else if a.ci_high < b.ci_low || b.ci_high < a.ci_low {
        Noise::Beyond
    } else {
        Noise::Within
    };
    let regressed = threshold.is_some_and(|t| worse_pct > t) && noise != Noise::Within;
    MetricChange {
        case_id: case_id.to_string(),
        metric,
        a,
        b,
        ratio,
        change_pct,
        worse_pct,
        noise,
        regressed,
    }
}

/// Differences between the machines and software of two runs.
fn environment_notes(a: &RunResult, b: &RunResult) -> Vec<String> {
    let (ea, eb) = (&a.environment, &b.environment);
    let fields: [(&str, String, String); 6] = [
        ("host", ea.hostname.clone(), eb.hostname.clone()),
        ("CPU", ea.cpu_model.clone(), eb.cpu_model.clone()),
        ("cores", ea.cores.to_string(), eb.cores.to_string()),
        ("kernel", ea.kernel.clone(), eb.kernel.clone()),
        (
            "libzmq",
            ea.libzmq_version.clone(),
            eb.libzmq_version.clone(),
        ),
        (
            "zmqperf",
            ea.zmqperf_version.clone(),
            eb.zmqperf_version.clone(),
        ),
    ];
    fields
        .into_iter()
        .filter(|(_, x, y)| x != y)
        .map(|(what, x, y)| format!("{what} differs: {x} (A), {y} (B)"))
        .collect()
}

/// Parses a threshold such as `5%`, `5` or `2.5%` into percent.
pub fn parse_percent(s: &str) -> Result<f64, StoreError> {
    let bad = |reason: &str| StoreError::InvalidPercent {
        value: s.to_string(),
        reason: reason.to_string(),
    };
    let t = s.trim();
    let t = t.strip_suffix('%').unwrap_or(t).trim_end();
    if t.is_empty() {
        return Err(bad("no number"));
    }
    let v: f64 = t.parse().map_err(|_| bad("not a number"))?;
    if !v.is_finite() {
        return Err(bad("not a finite number"));
    }
    if v < 0.0 {
        return Err(bad("a threshold cannot be negative"));
    }
    Ok(v.abs()) // -0 reads as 0
}

/// Formats `x` with about four significant digits, no exponent.
fn fmt_num(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        "n/a".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.to_string()
    } else {
        format!("{x:.decimals$}")
    }
}

/// Decimals that show about four significant digits of `x`.
fn decimals_for(x: f64) -> usize {
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    (3 - x.abs().log10().floor() as i32).clamp(0, 4) as usize
}

/// `median [ci_low, ci_high]`, all with the median's precision.
fn fmt_estimate(e: &Estimate) -> String {
    let d = decimals_for(e.median);
    if e.n < 2 {
        return format!("{} (n=1)", fmt_num(e.median, d));
    }
    format!(
        "{} [{}, {}]",
        fmt_num(e.median, d),
        fmt_num(e.ci_low, d),
        fmt_num(e.ci_high, d)
    )
}

fn fmt_pct(p: f64) -> String {
    if p.is_infinite() {
        return if p > 0.0 { "+inf%" } else { "-inf%" }.to_string();
    }
    format!("{p:+.1}%")
}

fn verdict(c: &MetricChange) -> String {
    let direction = if c.worse_pct > 0.0 {
        "worse"
    } else if c.worse_pct < 0.0 {
        "better"
    } else {
        "same"
    };
    match c.noise {
        Noise::Within => "within noise".to_string(),
        Noise::Beyond => format!("{direction}, beyond noise"),
        Noise::Unknown => format!("{direction}, noise unknown (n=1)"),
    }
}

/// The comparison as text: which runs, a table of the figures (median [95% CI] in each run,
/// change, noise verdict, REGRESSED marker), the cases that could not be compared, and a
/// summary line that starts with PASS or FAIL when a threshold was given.
pub fn format_comparison(c: &Comparison) -> String {
    let mut out = String::new();
    for (side, r) in [("A", &c.a), ("B", &c.b)] {
        let _ = writeln!(
            out,
            "{side}: {}  started {}  {}",
            r.run_id, r.started_at, r.status
        );
    }
    for note in &c.environment_notes {
        let _ = writeln!(out, "note: {note}");
    }
    out.push('\n');
    if c.changes.is_empty() {
        out.push_str("no figure to compare: the runs have no measured case in common\n");
    } else {
        let mut rows = vec![[
            "case",
            "metric",
            "A median [95% CI]",
            "B median [95% CI]",
            "change",
            "verdict",
            "",
        ]
        .map(String::from)
        .to_vec()];
        for ch in &c.changes {
            rows.push(vec![
                ch.case_id.clone(),
                ch.metric.name().to_string(),
                fmt_estimate(&ch.a),
                fmt_estimate(&ch.b),
                fmt_pct(ch.change_pct),
                verdict(ch),
                if ch.regressed { "REGRESSED" } else { "" }.to_string(),
            ]);
        }
        out.push_str(&table(&rows, &[4]));
    }
    let mut extra = String::new();
    for f in &c.failures {
        let side = match (&f.error_a, &f.error_b) {
            (Some(_), Some(e)) => format!("failed in both runs (B: {e})"),
            (None, Some(e)) => format!("FAILS in B: {e}"),
            (Some(e), None) => format!("failed in A ({e}), works in B"),
            (None, None) => continue,
        };
        let _ = writeln!(extra, "{}: {side}", f.case_id);
    }
    for (ids, side) in [(&c.only_in_a, "A"), (&c.only_in_b, "B")] {
        if !ids.is_empty() {
            let _ = writeln!(extra, "only in {side}: {}", ids.join(", "));
        }
    }
    if !extra.is_empty() {
        out.push('\n');
        out.push_str(&extra);
    }
    out.push('\n');
    out.push_str(&summary(c));
    out.push('\n');
    out
}

fn summary(c: &Comparison) -> String {
    let figures = format!(
        "{} in {} compared",
        count(c.changes.len(), "figure"),
        count(c.cases_compared, "case")
    );
    let Some(t) = c.fail_above_pct else {
        let by =
            |pred: &dyn Fn(&MetricChange) -> bool| c.changes.iter().filter(|x| pred(x)).count();
        let worse = by(&|x| x.noise == Noise::Beyond && x.worse_pct > 0.0);
        let better = by(&|x| x.noise == Noise::Beyond && x.worse_pct < 0.0);
        let within = by(&|x| x.noise == Noise::Within);
        let unknown = by(&|x| x.noise == Noise::Unknown);
        let mut s = format!(
            "{figures}: {worse} worse beyond noise, {better} better beyond noise, {within} within noise"
        );
        if unknown > 0 {
            let _ = write!(s, ", {unknown} without a confidence interval");
        }
        s.push_str(" (no threshold given: --fail-above PCT fails on regressions)");
        return s;
    };
    let regressed = c.regressions().count();
    let newly_failing = c.failures.iter().filter(|f| f.newly_failing()).count();
    if !c.regressed() {
        return format!("PASS: no figure worse by more than {t}% beyond noise ({figures})");
    }
    let mut parts = Vec::new();
    if regressed > 0 {
        parts.push(format!(
            "{} worse by more than {t}% beyond noise",
            count(regressed, "figure")
        ));
    }
    if newly_failing > 0 {
        parts.push(format!(
            "{} failing in B only",
            count(newly_failing, "case")
        ));
    }
    format!("FAIL: {} ({figures})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::Transport;
    use crate::model::{Environment, Kind, LoopMode};

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
}
