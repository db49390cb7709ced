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
