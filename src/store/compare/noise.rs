//! The arithmetic of a change: its ratio and percentage, whether the confidence intervals
//! part (beyond noise), whether it regressed past the threshold, and the threshold itself.

use super::types::{Metric, MetricChange, Noise};
use crate::model::Estimate;
use crate::store::error::StoreError;

/// The change of one figure from `a` to `b`.
pub(super) fn change(
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
    let interval = crate::stats::estimate::ratio_interval(&b, &a);
    // The ratio's interval in "worse" terms (B over A for lower-is-better figures, A over
    // B for the others): its better and worse ends.
    let worse_of = |r: f64| {
        if metric.lower_is_better() {
            r
        } else {
            1.0 / r
        }
    };
    let (best, worst) = match interval {
        Some(r) if metric.lower_is_better() => (Some(r.low), Some(r.high)),
        Some(r) => (Some(1.0 / r.high), Some(1.0 / r.low)),
        None => (None, None),
    };
    let mut regressed = false;
    let mut inconclusive = false;
    let mut repetitions_to_decide = None;
    if let Some(t) = threshold {
        let bound = 1.0 + t / 100.0;
        regressed = (worse_pct > t && noise != Noise::Within) || best.is_some_and(|x| x > bound);
        inconclusive = !regressed && worst.is_some_and(|x| x > bound);
        if inconclusive {
            repetitions_to_decide = crate::stats::estimate::repetitions_to_exclude(
                &a,
                &b,
                worse_of(ratio),
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

/// The most repetitions per run the gate suggests; beyond it, it says "more than".
pub(super) const MAX_REPETITIONS: u32 = 1000;
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
