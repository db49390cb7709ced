//! What a comparison is made of: the figures compared, the noise verdict of each change,
//! the cases that failed, and the two runs named.

use crate::model::Estimate;
pub use crate::model::Metric;
use crate::units::count;
use serde::Serialize;

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
    /// Lower end of the 95% interval of `ratio` (on the log scale: Welch's t over the two
    /// runs' intervals); absent when a run has a single repetition or a median of 0.
    pub ratio_low: Option<f64>,
    /// Upper end of the 95% interval of `ratio`.
    pub ratio_high: Option<f64>,
    /// Worse by more than the threshold and not within noise, or worse by more than the
    /// threshold even at the better end of the ratio's interval (never without a threshold).
    pub regressed: bool,
    /// Not regressed, but the ratio's interval reaches worse than the threshold: the runs
    /// cannot tell whether the figure got worse by more than it (never without a threshold).
    pub inconclusive: bool,
    /// For an inconclusive figure: the repetitions per run that would decide it, if the
    /// spread of each run and the change stayed what they are (absent when no number up to
    /// 1000 would).
    pub repetitions_to_decide: Option<u32>,
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

/// A common case that measured less than it was asked to in one run (its `incomplete`
/// reason), or nothing at all (no figure) without an error.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IncompleteCase {
    /// The case's id.
    pub case_id: String,
    /// "A" or "B".
    pub run: String,
    /// Why: the case's own reason, or "measured nothing (no figure)".
    pub why: String,
    /// Whether the case has no figure in that run (so nothing of it was compared).
    pub measured_nothing: bool,
}

/// What a gate (`--fail-above`) concludes, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// A figure regressed past the threshold, or a case that worked in A fails in B (exit 15).
    Fail,
    /// The gate could not judge run B whole (exit 18), and `--allow-incomplete` was not given.
    Incomplete,
    /// Some figure's interval is too wide to tell whether it regressed past the threshold
    /// (exit 22).
    Inconclusive,
    /// Every figure compared is within the threshold.
    Pass,
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
    /// Common cases that measured less than asked (`incomplete`) or nothing, in A or B.
    pub incomplete_cases: Vec<IncompleteCase>,
    /// A and B are one and the same run (`compare last last`): nothing to judge.
    pub same_run: bool,
    /// The gate accepts a comparison that could not judge everything (`--allow-incomplete`).
    pub allow_incomplete: bool,
    /// Runs of `--find`: each limit in both runs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub limits: Vec<super::LimitChange>,
}

impl Comparison {
    /// Whether the comparison fails: with a threshold, some figure regressed past it or a
    /// case that worked in A fails in B. Never without a threshold.
    pub fn regressed(&self) -> bool {
        self.fail_above_pct.is_some()
            && (self.changes.iter().any(|c| c.regressed)
                || self.limits.iter().any(|l| l.regressed)
                || self.failures.iter().any(CaseFailure::newly_failing))
    }

    /// Why a gate could not judge run B whole, each reason once: A and B the same run,
    /// nothing in common or no figure compared, baseline cases missing from B, cases that
    /// failed in A (nothing to judge B's against) or in both runs, cases of B cut short or
    /// that measured nothing, a case of A that measured nothing, a run that did not
    /// complete. Empty when everything could be compared.
    pub fn gaps(&self) -> Vec<String> {
        let mut g = Vec::new();
        if self.same_run {
            g.push(format!(
                "A and B are the same run ({}): a gate needs two runs",
                self.b.run_id
            ));
        }
        if self.cases_compared == 0 {
            g.push("the runs have no case in common".to_string());
        } else if self.changes.is_empty() && self.limits.is_empty() {
            g.push("no figure was compared".to_string());
        }
        if self.cases_compared > 0 && !self.only_in_a.is_empty() {
            g.push(format!(
                "{} of the baseline's cases are missing from {}",
                self.only_in_a.len(),
                self.b.run_id
            ));
        }
        let both = self
            .failures
            .iter()
            .filter(|f| f.error_a.is_some() && f.error_b.is_some())
            .count();
        if both > 0 {
            g.push(format!("{} failed in both runs", count(both, "case")));
        }
        let a_only = self
            .failures
            .iter()
            .filter(|f| f.error_a.is_some() && f.error_b.is_none())
            .count();
        if a_only > 0 {
            g.push(format!(
                "{} failed in the baseline A (nothing to judge B's against)",
                count(a_only, "case")
            ));
        }
        let of = |run: &str, nothing: bool| {
            self.incomplete_cases
                .iter()
                .filter(|i| i.run == run && i.measured_nothing == nothing)
                .count()
        };
        let cut = of("B", false);
        if cut > 0 {
            g.push(format!(
                "{} of {} measured less than asked (incomplete)",
                count(cut, "case"),
                self.b.run_id
            ));
        }
        for run in ["A", "B"] {
            let nothing = of(run, true);
            if nothing > 0 {
                g.push(format!(
                    "{} of {} measured nothing",
                    count(nothing, "case"),
                    if run == "A" {
                        &self.a.run_id
                    } else {
                        &self.b.run_id
                    }
                ));
            }
        }
        for r in [&self.a, &self.b] {
            if r.status != "complete" && !(self.same_run && std::ptr::eq(r, &self.b)) {
                g.push(format!("run {} is {}, not complete", r.run_id, r.status));
            }
        }
        g
    }

    /// Whether a gate (a threshold) stands on an incomplete comparison, not allowed.
    pub fn incomplete(&self) -> bool {
        self.fail_above_pct.is_some() && !self.allow_incomplete && !self.gaps().is_empty()
    }

    /// The figures whose interval is too wide to judge at the threshold.
    pub fn inconclusive(&self) -> impl Iterator<Item = &MetricChange> {
        self.changes.iter().filter(|c| c.inconclusive)
    }

    /// The gate's conclusion; None without a threshold (compare only reports).
    pub fn verdict(&self) -> Option<Verdict> {
        self.fail_above_pct?;
        Some(if self.regressed() {
            Verdict::Fail
        } else if self.incomplete() {
            Verdict::Incomplete
        } else if self.inconclusive().next().is_some() {
            Verdict::Inconclusive
        } else {
            Verdict::Pass
        })
    }

    /// The figures that regressed.
    pub fn regressions(&self) -> impl Iterator<Item = &MetricChange> {
        self.changes.iter().filter(|c| c.regressed)
    }
}
