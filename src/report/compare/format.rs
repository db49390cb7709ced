//! The comparison as text: the runs, the table of figures with their verdicts, the cases
//! that could not be compared, and the PASS or FAIL summary line.

use crate::compare::{Comparison, MetricChange, Noise, Verdict, MAX_REPETITIONS};
use crate::model::Estimate;
use crate::report::text_table::{count, table};
use std::fmt::Write as _;

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

/// An end of an interval with the median's `decimals`, or two significant digits with an
/// exponent when those would show a value that is not 0 as 0.
fn fmt_bound(x: f64, decimals: usize) -> String {
    if x != 0.0 && x.is_finite() && x.abs() < 0.5 * 10f64.powi(-(decimals as i32)) {
        format!("{x:.1e}")
    } else {
        fmt_num(x, decimals)
    }
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
        fmt_bound(e.ci_low, d),
        fmt_bound(e.ci_high, d)
    )
}

fn fmt_pct(p: f64) -> String {
    if p.is_infinite() {
        return if p > 0.0 { "+inf%" } else { "-inf%" }.to_string();
    }
    if p.abs() >= 1e5 {
        return format!("{}{:.1e}%", if p > 0.0 { "+" } else { "-" }, p.abs());
    }
    format!("{p:+.1}%")
}

/// The change with its 95% interval: `+12.0% [+3.1%, +21.7%]`; the change alone when a run
/// has one repetition.
fn fmt_change(c: &MetricChange) -> String {
    match (c.ratio_low, c.ratio_high) {
        (Some(lo), Some(hi)) => format!(
            "{} [{}, {}]",
            fmt_pct(c.change_pct),
            fmt_pct((lo - 1.0) * 100.0),
            fmt_pct((hi - 1.0) * 100.0)
        ),
        _ => fmt_pct(c.change_pct),
    }
}

/// How much worse than A the ratio's interval reaches, in percent of A (as `worse_pct`).
fn worst_pct(c: &MetricChange) -> Option<f64> {
    Some(if c.metric.lower_is_better() {
        (c.ratio_high? - 1.0) * 100.0
    } else {
        (1.0 - c.ratio_low?) * 100.0
    })
}

/// "about N repetitions per run would decide", or that more than the most it suggests would.
fn repetitions_text(n: Option<u32>) -> String {
    match n {
        Some(n) => format!("about {n} repetitions per run would decide"),
        None => format!("more than {MAX_REPETITIONS} repetitions per run would be needed"),
    }
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
    runs(&mut out, c);
    out.push('\n');
    if c.limits.is_empty() {
        figures(&mut out, c);
    } else {
        out.push_str(&super::limits::table(c));
    }
    let extra = left_over(c);
    if !extra.is_empty() {
        out.push('\n');
        out.push_str(&extra);
    }
    out.push('\n');
    out.push_str(&summary(c));
    out.push('\n');
    out
}

/// The two runs, one line each, and the notes on their environments.
fn runs(out: &mut String, c: &Comparison) {
    for (side, r) in [("A", &c.a), ("B", &c.b)] {
        let same = if side == "B" && c.same_run {
            "  (the same run as A)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{side}: {}  started {}  {}{same}",
            r.run_id, r.started_at, r.status
        );
    }
    for note in &c.environment_notes {
        let _ = writeln!(out, "note: {note}");
    }
}

/// The table of figures, one row per change, or a line that says why there is none.
fn figures(out: &mut String, c: &Comparison) {
    if c.changes.is_empty() {
        out.push_str(if c.cases_compared == 0 {
            "no figure to compare: the runs have no case in common\n"
        } else {
            "no figure to compare: no common case has figures in both runs\n"
        });
        return;
    }
    let mut rows = vec![[
        "case",
        "metric",
        "A median [95% CI]",
        "B median [95% CI]",
        "change [95% CI]",
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
            fmt_change(ch),
            verdict(ch),
            if ch.regressed {
                "REGRESSED"
            } else if ch.inconclusive {
                "INCONCLUSIVE"
            } else {
                ""
            }
            .to_string(),
        ]);
    }
    out.push_str(&table(&rows, &[4]));
}

/// What the table leaves out, a line each: failed and incomplete cases, figures left
/// undecided at the threshold, and the cases found in one run only.
fn left_over(c: &Comparison) -> String {
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
    for i in &c.incomplete_cases {
        let _ = writeln!(extra, "{}: incomplete in {}: {}", i.case_id, i.run, i.why);
    }
    if let Some(t) = c.fail_above_pct {
        for ch in c.inconclusive() {
            let _ = writeln!(
                extra,
                "{} {}: undecided at {t}%: {} could be as much as {} worse; {}",
                ch.case_id,
                ch.metric.name(),
                fmt_pct(ch.change_pct),
                fmt_pct(worst_pct(ch).unwrap_or(f64::NAN)).trim_start_matches('+'),
                repetitions_text(ch.repetitions_to_decide)
            );
        }
    }
    for (ids, side) in [(&c.only_in_a, "A"), (&c.only_in_b, "B")] {
        if !ids.is_empty() {
            let _ = writeln!(extra, "only in {side}: {}", ids.join(", "));
        }
    }
    extra
}

fn summary(c: &Comparison) -> String {
    let figures = if c.limits.is_empty() {
        format!(
            "{} in {} compared",
            count(c.changes.len(), "figure"),
            count(c.cases_compared, "case")
        )
    } else {
        format!("{} compared", count(c.limits.len(), "limit"))
    };
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
    let gaps = c.gaps();
    let allowed = if gaps.is_empty() {
        String::new()
    } else {
        format!(" (allowed although {})", gaps.join("; "))
    };
    match c.verdict() {
        Some(Verdict::Incomplete) => {
            return format!(
                "INCOMPLETE: {} ({figures}); the gate fails (exit 18): compare complete runs of the same cases, or pass --allow-incomplete",
                gaps.join("; ")
            );
        }
        Some(Verdict::Inconclusive) => {
            let undecided: Vec<&MetricChange> = c.inconclusive().collect();
            let most = undecided
                .iter()
                .map(|x| x.repetitions_to_decide)
                .try_fold(0, |m, n| n.map(|n| m.max(n)));
            return format!(
                "INCONCLUSIVE: {} could be worse by more than {t}%, {} too wide to tell ({figures}){allowed}; the gate fails (exit 22): {} (estimated from the spread seen), or give a larger --fail-above",
                count(undecided.len(), "figure"),
                if undecided.len() == 1 { "its 95% interval" } else { "their 95% intervals" },
                repetitions_text(most)
            );
        }
        Some(Verdict::Pass) => {
            return format!(
                "PASS: no figure worse by more than {t}% beyond noise ({figures}){allowed}"
            );
        }
        Some(Verdict::Fail) | None => {}
    }
    let mut parts = Vec::new();
    if regressed > 0 {
        parts.push(format!(
            "{} worse by more than {t}% beyond noise",
            count(regressed, "figure")
        ));
    }
    let dropped = super::limits::regressed(c);
    if dropped > 0 {
        parts.push(format!(
            "{} dropped by more than {t}% beyond noise",
            count(dropped, "limit")
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

/// The comparison as JSON: every field of [`Comparison`], with the gate's `verdict`
/// ("fail", "incomplete", "inconclusive", "pass"; null without a threshold) and its
/// `reasons` (why it could not judge B whole, each once; empty when it could).
pub fn comparison_json(c: &Comparison) -> String {
    #[derive(serde::Serialize)]
    struct WithVerdict<'a> {
        #[serde(flatten)]
        comparison: &'a Comparison,
        verdict: Option<Verdict>,
        reasons: Vec<String>,
    }
    let v = WithVerdict {
        comparison: c,
        verdict: c.verdict(),
        reasons: c.gaps(),
    };
    super::super::json::envelope::<(), _>("compare", None, None, &v, true)
}
