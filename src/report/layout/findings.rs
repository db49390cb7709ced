//! The findings of `zmqperf diagnose` as the human reports show them: measures, gaps and
//! the count of findings by severity written out.

use super::delivery::ms;
use crate::model::{Finding, Measure, RunResult, TimedGap};
use crate::report::numbers::{self, grouped};
use crate::stats::GapPosition;

/// A finding as the human reports show it, its numbers already written out.
pub struct FindingView<'a> {
    /// The finding itself (id, severity, title, observed, cause, remedy, error).
    pub finding: &'a Finding,
    /// Its evidence as (name, value) pairs, in name order.
    pub evidence: Vec<(String, String)>,
    /// One sentence per hole in the stream, with its times.
    pub gaps: Vec<String>,
}

/// A measured value as a person reads it: counts with thousands separators, numbers with
/// a few significant digits.
pub fn measure(m: &Measure) -> String {
    match m {
        Measure::Count(v) => grouped(*v),
        Measure::Number(v) => numbers::value(*v),
        Measure::Text(t) => t.clone(),
    }
}

/// One hole of a diagnosed stream in words, e.g. `1,797 lost at the start (seq 0 to
/// 1,796); the first message after it arrived at 2.81 ms`.
pub fn timed_gap(g: &TimedGap) -> String {
    let last = g.first_seq + g.count.saturating_sub(1);
    let span = if g.count == 1 {
        format!("seq {}", grouped(g.first_seq))
    } else {
        format!("seq {} to {}", grouped(g.first_seq), grouped(last))
    };
    let place = match g.position {
        GapPosition::Start => "at the start",
        GapPosition::Middle => "in the middle",
        GapPosition::End => "at the end",
    };
    let mut s = format!("{} lost {place} ({span})", grouped(g.count));
    match (g.before_ms, g.after_ms) {
        (Some(b), Some(a)) => s.push_str(&format!("; between arrivals at {} and {}", ms(b), ms(a))),
        (None, Some(a)) => s.push_str(&format!(
            "; the first message after it arrived at {}",
            ms(a)
        )),
        (Some(b), None) => s.push_str(&format!(
            "; the last message before it arrived at {}",
            ms(b)
        )),
        (None, None) => {}
    }
    s
}

/// The findings of a run, in the order the experiments ran.
pub fn findings(run: &RunResult) -> Vec<FindingView<'_>> {
    run.findings
        .iter()
        .map(|f| FindingView {
            finding: f,
            evidence: f
                .evidence
                .iter()
                .map(|(k, v)| (k.clone(), measure(v)))
                .collect(),
            gaps: f.gaps.iter().map(timed_gap).collect(),
        })
        .collect()
}

/// A line counting the findings: `5 findings: 3 warnings, 2 info`.
pub fn findings_count(run: &RunResult) -> String {
    let n = run.findings.len();
    let warnings = run
        .findings
        .iter()
        .filter(|f| f.severity == crate::model::Severity::Warning)
        .count();
    format!(
        "{n} finding{}: {warnings} warning{}, {} info.",
        if n == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
        n - warnings
    )
}
