//! The arithmetic of a change: its ratio and percentage, whether the confidence intervals
//! part (beyond noise), whether it regressed past the threshold, and the threshold itself.

use super::types::{Metric, MetricChange, Noise};
use crate::model::Estimate;
use crate::store::StoreError;

/// The change of one figure from `a` to `b`.
pub(crate) fn change(
    case_id: &str,
    metric: Metric,
    a: Estimate,
    b: Estimate,
    threshold: Option<f64>,
) -> MetricChange {
    let ratio = ratio_of(&a, &b);
    let change_pct = (ratio - 1.0) * 100.0;
    let worse_pct = if metric.lower_is_better() {
        change_pct
    } else {
        -change_pct
    };
    let noise = noise_of(&a, &b);
    let interval = crate::stats::estimate::ratio_interval(&b, &a);
    let (best, worst) = worse_ends(metric, interval);
    let mut regressed = false;
    let mut inconclusive = false;
    let mut repetitions_to_decide = None;
    if let Some(t) = threshold {
        regressed = (worse_pct > t && noise != Noise::Within) || best.is_some_and(|x| x > t);
        inconclusive = !regressed && worst.is_some_and(|x| x > t);
        // The ratio B/A at which a figure is worse by exactly t (a rate can never be
        // worse by 100% or more).
        let bound = if metric.lower_is_better() {
            1.0 + t / 100.0
        } else {
            1.0 - t / 100.0
        };
        if inconclusive && bound > 0.0 {
            repetitions_to_decide = crate::stats::estimate::repetitions_to_exclude(
                &a,
                &b,
                ratio,
                bound,
                MAX_REPETITIONS,
            );
        }
    }
    MetricChange {
        case_id: case_id.to_string(),
        metric,
        a,
        b,
        ratio,
        change_pct,
        worse_pct,
        noise,
        ratio_low: interval.map(|r| r.low),
        ratio_high: interval.map(|r| r.high),
        regressed,
        inconclusive,
        repetitions_to_decide,
    }
}

/// B/A of the medians: 1 when equal, infinite (with B's sign) when A's is 0.
fn ratio_of(a: &Estimate, b: &Estimate) -> f64 {
    if a.median == b.median {
        1.0
    } else if a.median == 0.0 {
        f64::INFINITY.copysign(b.median)
    } else {
        b.median / a.median
    }
}

/// Whether the 95% intervals of `a` and `b` part: unknown with fewer than 2 repetitions.
fn noise_of(a: &Estimate, b: &Estimate) -> Noise {
    if a.n < 2 || b.n < 2 {
        Noise::Unknown
    } else if a.ci_high < b.ci_low || b.ci_high < a.ci_low {
        Noise::Beyond
    } else {
        Noise::Within
    }
}

/// How much worse than A (in percent of A, as `worse_pct`) the ends of B/A's `interval`
/// are: the better end and the worse end.
fn worse_ends(
    metric: Metric,
    interval: Option<crate::stats::estimate::Ratio>,
) -> (Option<f64>, Option<f64>) {
    let worse_at = |r: f64| {
        if metric.lower_is_better() {
            (r - 1.0) * 100.0
        } else {
            (1.0 - r) * 100.0
        }
    };
    match interval {
        Some(r) if metric.lower_is_better() => (Some(worse_at(r.low)), Some(worse_at(r.high))),
        Some(r) => (Some(worse_at(r.high)), Some(worse_at(r.low))),
        None => (None, None),
    }
}

/// The most repetitions per run the gate suggests; beyond it, it says "more than".
pub(crate) const MAX_REPETITIONS: u32 = 1000;
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
