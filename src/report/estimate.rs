//! A median with its 95% interval as a person reads it (`48.43 ±1.2`, `2,467,308 ±100,000`),
//! and a ratio of two medians with its interval (`1.92 [1.70, 2.17]`).

use crate::stats::Estimate;
use crate::units::{grouped_f, plusminus, value, value_step};

/// `m ±pm`, or just `m` when the half-width is below half the step `m` is shown with.
fn with_plusminus(m: String, e: &Estimate, step: f64) -> String {
    let half = (e.ci_high - e.ci_low) / 2.0;
    if m == "-" || half.is_nan() || half < step / 2.0 {
        return m;
    }
    match plusminus(half) {
        Some(pm) => format!("{m} ±{pm}"),
        None => m,
    }
}

/// A median with its 95% interval in the compact form `48.43 ±1.2`, the median as by
/// [`value`]. The `±` is half the interval's width, left out when the interval is
/// narrower than the precision shown.
pub fn estimate_value(e: &Estimate) -> String {
    with_plusminus(value(e.median), e, value_step(e.median))
}

/// A median with its 95% interval as whole numbers: `2,467,308 ±100,000`.
pub fn estimate_whole(e: &Estimate) -> String {
    with_plusminus(grouped_f(e.median), e, 1.0)
}

/// `with / base` with its 95% interval on the log scale (`stats::estimate::ratio_interval`:
/// never 0 or below): `1.92 [1.70, 2.17]`; `1.92 (n=1: no interval)` when a side has a
/// single repetition; `-` without a positive base.
pub fn ratio_ci(with: &Estimate, base: &Estimate) -> String {
    if base.median <= 0.0 || with.median < 0.0 {
        return "-".into();
    }
    let fmt = |x: f64| {
        if x > 0.0 && x < 0.005 {
            format!("{x:.1e}")
        } else {
            format!("{x:.2}")
        }
    };
    match crate::stats::estimate::ratio_interval(with, base) {
        Some(r) => format!("{} [{}, {}]", fmt(r.value), fmt(r.low), fmt(r.high)),
        None if with.n < 2 || base.n < 2 => {
            format!("{} (n=1: no interval)", fmt(with.median / base.median))
        }
        None => format!(
            "{} (no interval: a figure of 0)",
            fmt(with.median / base.median)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_intervals_never_reach_zero_and_say_when_there_is_none() {
        let e = |xs: &[f64]| crate::stats::estimate(xs).unwrap();
        // A base spread over a factor of 25: it was "[wide]", and its other side [0.00, ...].
        let wide = ratio_ci(&e(&[30.0, 31.0, 29.0]), &e(&[1.0, 25.0, 3.0]));
        assert!(!wide.contains("wide") && !wide.contains("[0.00"), "{wide}");
        let back = ratio_ci(&e(&[1.0, 25.0, 3.0]), &e(&[30.0, 31.0, 29.0]));
        assert!(!back.contains("[0.00"), "{back}");
        assert_eq!(
            ratio_ci(&e(&[20.0, 20.0, 20.0]), &e(&[10.0, 10.0, 10.0])),
            "2.00 [2.00, 2.00]"
        );
        assert_eq!(
            ratio_ci(&e(&[20.0]), &e(&[10.0, 11.0, 9.0])),
            "2.00 (n=1: no interval)"
        );
        assert_eq!(ratio_ci(&e(&[20.0]), &e(&[0.0, 0.0])), "-");
    }

    #[test]
    fn medians_with_their_intervals() {
        let e = Estimate {
            median: 48.431,
            ci_low: 47.2,
            ci_high: 49.6,
            spread_pct: 3.0,
            n: 3,
        };
        assert_eq!(estimate_value(&e), "48.43 ±1.2");
        let point = Estimate {
            ci_low: 48.431,
            ci_high: 48.431,
            ..e
        };
        assert_eq!(estimate_value(&point), "48.43");
        let rate = Estimate {
            median: 9_999.96,
            ci_low: 9_999.95,
            ci_high: 9_999.97,
            ..e
        };
        assert_eq!(estimate_whole(&rate), "10,000");
    }
}
