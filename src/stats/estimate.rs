//! Summaries over repetitions: the median, with a 95% confidence interval.

use crate::model::Estimate;

/// Two-sided 97.5% quantiles of Student's t for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

fn t975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        d if d <= 30 => T975[d - 1],
        _ => 1.96,
    }
}

/// The median of `xs` with a 95% confidence interval.
///
/// The interval is the t-interval of the mean (mean +- t * s / sqrt(n)), widened if needed
/// to contain the median; with one repetition it is the value itself. None for no values.
pub fn estimate(xs: &[f64]) -> Option<Estimate> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    let mean = v.iter().sum::<f64>() / n as f64;
    let (lo, hi) = if n == 1 {
        (median, median)
    } else {
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let half = t975(n - 1) * (var / n as f64).sqrt();
        // Every figure summarised here (a latency, a rate) is 0 or more: an interval
        // reaching below zero says only that the spread is large.
        let floor = if v[0] >= 0.0 { 0.0 } else { f64::NEG_INFINITY };
        (
            ((mean - half).min(median)).max(floor),
            (mean + half).max(median),
        )
    };
    Some(Estimate {
        median,
        ci_low: lo,
        ci_high: hi,
        spread_pct: if median != 0.0 {
            (v[n - 1] - v[0]) / median.abs() * 100.0
        } else {
            0.0
        },
        n: n as u32,
    })
}

#[cfg(test)]
mod tests {

    #[test]
    fn intervals_of_figures_that_cannot_be_negative_stop_at_zero() {
        let e = estimate(&[0.5, 10.0, 0.4]).unwrap();
        assert_eq!(e.ci_low, 0.0, "{e:?}");
        assert!(e.ci_high > 10.0);
    }

    use super::*;

    #[test]
    fn median_and_interval() {
        let e = estimate(&[10.0, 12.0, 11.0]).unwrap();
        assert_eq!(e.median, 11.0);
        // mean 11, s = 1, t(2) = 4.303: 11 +- 4.303 / sqrt(3)
        assert!((e.ci_low - (11.0 - 4.303 / 3f64.sqrt())).abs() < 1e-9);
        assert!((e.ci_high - (11.0 + 4.303 / 3f64.sqrt())).abs() < 1e-9);
        assert!((e.spread_pct - 2.0 / 11.0 * 100.0).abs() < 1e-9);
        assert_eq!(e.n, 3);
    }

    #[test]
    fn one_and_none() {
        let e = estimate(&[5.0]).unwrap();
        assert_eq!((e.median, e.ci_low, e.ci_high), (5.0, 5.0, 5.0));
        assert!(estimate(&[]).is_none());
        assert_eq!(estimate(&[1.0, 3.0]).unwrap().median, 2.0);
    }
}
