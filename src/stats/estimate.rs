//! Summaries over repetitions: the median with a 95% confidence interval, the interval of a
//! ratio of two such summaries, and how many repetitions a comparison would need.
//!
//! The method (docs/statistics.md, "Intervals over repetitions"): every figure summarised
//! here (a latency, a rate, a ratio of them) is positive and varies by a factor from one
//! repetition to the next, so the interval is Student's t on the logarithms of the values,
//! taken back to the figure's own scale. It never reaches 0 or below, it is wider above the
//! median than below (as the spread of such figures is), and for 2 to 5 repetitions it holds
//! its 95% coverage where a bootstrap (too narrow with so few values) or an interval between
//! two ranks (at most 75% at 3 values, 94% at 5) cannot. The test
//! `coverage_of_the_95_interval_at_3_and_5_repetitions` measures it on simulated
//! populations of known truth.

use serde::{Deserialize, Serialize};

/// A point estimate over repetitions with its 95% confidence interval.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    /// Median of the repetitions.
    pub median: f64,
    /// Lower end of the 95% confidence interval.
    pub ci_low: f64,
    /// Upper end of the 95% confidence interval.
    pub ci_high: f64,
    /// (max - min) / median over the repetitions, in percent.
    pub spread_pct: f64,
    /// Repetitions it comes from.
    pub n: u32,
}

/// Two-sided 97.5% quantiles of Student's t for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The 97.5% quantile of Student's t with `df` degrees of freedom (a fractional `df`, as
/// Welch's gives, is rounded down: the wider interval). Infinite below 1.
pub fn t975(df: f64) -> f64 {
    if df.is_nan() || df < 1.0 {
        return f64::INFINITY;
    }
    let d = df.floor();
    if d <= 30.0 {
        return T975[d as usize - 1];
    }
    // Beyond the table: the Cornish-Fisher expansion around the normal quantile (within
    // 0.001 of the exact value from 30 degrees of freedom on).
    let z: f64 = 1.959_964;
    z + (z.powi(3) + z) / (4.0 * d)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
}

/// The median of `xs` with a 95% confidence interval.
///
/// With every value above 0 (latencies, rates, ratios): Student's t interval of the mean of
/// the logarithms, exp(mean(ln x) +- t(n-1) * s(ln x) / sqrt(n)). Otherwise (a figure that
/// was 0 in some repetition) the same interval on the values themselves, stopped at 0 when
/// no value is below it. Either is widened if needed to contain the median. One
/// repetition gives the value itself (no interval: `n` says so). None for no values.
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
    let (lo, hi) = if n == 1 {
        (median, median)
    } else if v[0] > 0.0 {
        let logs: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        let (m, half) = t_interval(&logs);
        ((m - half).exp().min(median), (m + half).exp().max(median))
    } else {
        let (m, half) = t_interval(&v);
        let floor = if v[0] >= 0.0 { 0.0 } else { f64::NEG_INFINITY };
        (((m - half).min(median)).max(floor), (m + half).max(median))
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

/// The mean of `xs` and the half width of its 95% t interval (at least two values).
fn t_interval(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, t975(n - 1.0) * (var / n).sqrt())
}

/// The standard error of the log of a figure, read back from its stored 95% interval:
/// ln(high / low) / (2 t(n-1)), which undoes [`estimate`]'s interval exactly when it was
/// not widened to hold the median. For intervals recorded before the log scale (linear,
/// possibly stopped at 0) it is the linear interval's half width over the median, the
/// same to first order. None with one repetition or a median not above 0.
pub fn log_se(e: &Estimate) -> Option<f64> {
    if e.n < 2 || e.median <= 0.0 || !e.ci_high.is_finite() {
        return None;
    }
    let t = t975(f64::from(e.n) - 1.0);
    let se = if e.ci_low > 0.0 {
        (e.ci_high / e.ci_low).ln() / (2.0 * t)
    } else {
        (e.ci_high - e.ci_low) / (2.0 * t * e.median)
    };
    Some(se.max(0.0))
}

/// The ratio of two summaries, `num` over `den`, with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    /// `num.median / den.median`.
    pub value: f64,
    /// Lower end of the 95% interval (above 0).
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

/// The ratio of two independent summaries with a 95% interval on the log scale (Welch:
/// ln ratio +- t(df) * sqrt(se_num^2 + se_den^2), df by Welch-Satterthwaite), so it is
/// never clipped at 0 and is symmetric in the sense that B/A's interval is the inverse of
/// A/B's. None when either side has a single repetition (no spread to go on) or a median
/// not above 0.
pub fn ratio_interval(num: &Estimate, den: &Estimate) -> Option<Ratio> {
    if num.median <= 0.0 || den.median <= 0.0 {
        return None;
    }
    let (sn, sd) = (log_se(num)?, log_se(den)?);
    let value = num.median / den.median;
    let half = welch_t(sn, num.n, sd, den.n) * (sn * sn + sd * sd).sqrt();
    Some(Ratio {
        value,
        low: value * (-half).exp(),
        high: value * half.exp(),
    })
}

/// The t quantile for two standard errors `s1`, `s2` of means of `n1`, `n2` values
/// (Welch-Satterthwaite degrees of freedom; the smaller side's when both are 0).
fn welch_t(s1: f64, n1: u32, s2: f64, n2: u32) -> f64 {
    let (v1, v2) = (s1 * s1, s2 * s2);
    let (d1, d2) = (f64::from(n1) - 1.0, f64::from(n2) - 1.0);
    let df = if v1 + v2 == 0.0 {
        d1.min(d2)
    } else {
        (v1 + v2).powi(2) / (v1 * v1 / d1 + v2 * v2 / d2)
    };
    t975(df)
}

/// The fewest repetitions per run (the same in both, more than either has) at which a
/// ratio's 95% interval would leave `bound` out, if the spread of each run stayed what it
/// is and the ratio stayed `value`: the smallest n with
/// t(df) * sqrt((s_a^2 + s_b^2) / n) < |ln(value / bound)|, where s_a, s_b are the
/// per-repetition standard deviations of the logs (each run's standard error times the
/// square root of its repetitions) and df is Welch's for n and n. None when no number up
/// to `max` would (the ratio sits on the bound) or a side has no spread to go on.
pub fn repetitions_to_exclude(
    a: &Estimate,
    b: &Estimate,
    value: f64,
    bound: f64,
    max: u32,
) -> Option<u32> {
    let sa = log_se(a)? * f64::from(a.n).sqrt();
    let sb = log_se(b)? * f64::from(b.n).sqrt();
    let distance = (value / bound).ln().abs();
    if !distance.is_finite() || distance == 0.0 {
        return None;
    }
    (a.n.max(b.n) + 1..=max).find(|&n| projected_half(sa, sb, n) < distance)
}

/// The half width, on the log scale, of a ratio's interval with `n` repetitions a side of
/// per-repetition log spreads `sa` and `sb`.
fn projected_half(sa: f64, sb: f64, n: u32) -> f64 {
    let root = f64::from(n).sqrt();
    let (ea, eb) = (sa / root, sb / root);
    welch_t(ea, n, eb, n) * (ea * ea + eb * eb).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_interval_on_the_log_scale() {
        let e = estimate(&[10.0, 12.0, 11.0]).unwrap();
        assert_eq!(e.median, 11.0);
        let logs = [10f64.ln(), 12f64.ln(), 11f64.ln()];
        let m = logs.iter().sum::<f64>() / 3.0;
        let s = (logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 2.0).sqrt();
        let half = 4.303 * s / 3f64.sqrt();
        assert!((e.ci_low - (m - half).exp()).abs() < 1e-9, "{e:?}");
        assert!((e.ci_high - (m + half).exp()).abs() < 1e-9, "{e:?}");
        assert!((e.spread_pct - 2.0 / 11.0 * 100.0).abs() < 1e-9);
        assert_eq!(e.n, 3);
    }

    #[test]
    fn a_wide_spread_stays_above_zero() {
        // The linear t interval of these three is [-5.5, 12.8], which used to be cut at 0.
        let e = estimate(&[0.5, 10.0, 0.4]).unwrap();
        assert!(e.ci_low > 0.0, "{e:?}");
        assert!(e.ci_low < 0.4 && e.ci_high > 10.0, "{e:?}");
    }

    #[test]
    fn a_zero_among_the_values_falls_back_to_the_linear_interval() {
        let e = estimate(&[0.0, 10.0, 0.4]).unwrap();
        assert_eq!(e.ci_low, 0.0, "{e:?}");
        assert!(e.ci_high > 10.0, "{e:?}");
    }

    #[test]
    fn one_and_none() {
        let e = estimate(&[5.0]).unwrap();
        assert_eq!((e.median, e.ci_low, e.ci_high), (5.0, 5.0, 5.0));
        assert!(estimate(&[]).is_none());
        assert_eq!(estimate(&[1.0, 3.0]).unwrap().median, 2.0);
    }

    #[test]
    fn t_quantiles() {
        assert_eq!(t975(0.5), f64::INFINITY);
        assert_eq!(t975(2.0), 4.303);
        assert_eq!(t975(2.9), 4.303);
        assert!((t975(40.0) - 2.021).abs() < 1e-3, "{}", t975(40.0));
        assert!((t975(120.0) - 1.980).abs() < 1e-3, "{}", t975(120.0));
    }

    #[test]
    fn the_log_se_comes_back_from_the_interval() {
        let xs = [100.0, 104.0, 97.0, 101.0];
        let e = estimate(&xs).unwrap();
        let logs: Vec<f64> = xs.iter().map(|x: &f64| x.ln()).collect();
        let m = logs.iter().sum::<f64>() / 4.0;
        let s = (logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 3.0).sqrt();
        assert!((log_se(&e).unwrap() - s / 2.0).abs() < 1e-12);
        let one = estimate(&[5.0]).unwrap();
        assert!(log_se(&one).is_none());
    }

    #[test]
    fn ratio_intervals_are_never_clipped_and_invert() {
        let a = estimate(&[0.5, 10.0, 0.4]).unwrap();
        let b = estimate(&[5.0, 6.0, 5.5]).unwrap();
        let r = ratio_interval(&b, &a).unwrap();
        assert!(r.low > 0.0 && r.low < r.value && r.value < r.high, "{r:?}");
        let inv = ratio_interval(&a, &b).unwrap();
        assert!((inv.low * r.high - 1.0).abs() < 1e-9 && (inv.high * r.low - 1.0).abs() < 1e-9);
        let one = estimate(&[5.0]).unwrap();
        assert!(
            ratio_interval(&one, &b).is_none(),
            "one repetition: no interval"
        );
    }

    #[test]
    fn repetitions_that_would_decide() {
        let a = estimate(&[100.0, 110.0, 90.0]).unwrap();
        let b = estimate(&[120.0, 132.0, 108.0]).unwrap();
        // The ratio 1.2 against a bound of 1.05, with about 10% spread per repetition.
        let n = repetitions_to_exclude(&a, &b, 1.2, 1.05, 1000).unwrap();
        let sa = log_se(&a).unwrap() * 3f64.sqrt();
        let sb = log_se(&b).unwrap() * 3f64.sqrt();
        let d = (1.2f64 / 1.05).ln();
        assert!(n > 3, "more than the runs have: {n}");
        assert!(
            projected_half(sa, sb, n) < d && projected_half(sa, sb, n - 1) >= d,
            "n = {n}"
        );
        // The projection at the runs' own size is the interval they gave.
        let r = ratio_interval(&b, &a).unwrap();
        assert!((projected_half(sa, sb, 3) - (r.high / r.value).ln()).abs() < 1e-9);
        assert!(repetitions_to_exclude(&a, &b, 1.05, 1.05, 1000).is_none());
        // Two repetitions a factor of ten apart: the interval is far too wide at 2.
        let wide = estimate(&[3.0, 40.0]).unwrap();
        let n = repetitions_to_exclude(&wide, &wide, 26.0, 1.05, 1000).unwrap();
        assert!(n > 2, "{n}");
    }

    /// A deterministic generator of normal deviates (SplitMix64 and Box-Muller).
    struct Normal(u64);

    impl Normal {
        fn uniform(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            ((z >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        }

        fn next(&mut self) -> f64 {
            let (u, v) = (self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
    }

    /// How often, out of `trials`, the 95% interval of `n` draws holds `truth` (in percent),
    /// and how many of the intervals reached 0.
    fn coverage(
        trials: u32,
        n: usize,
        seed: u64,
        draw: impl Fn(f64) -> f64,
        truth: f64,
    ) -> (f64, u32) {
        let mut g = Normal(seed);
        let (mut held, mut at_zero) = (0, 0);
        for _ in 0..trials {
            let xs: Vec<f64> = (0..n).map(|_| draw(g.next())).collect();
            let e = estimate(&xs).expect("values");
            if e.ci_low <= truth && truth <= e.ci_high {
                held += 1;
            }
            if e.ci_low <= 0.0 {
                at_zero += 1;
            }
        }
        (f64::from(held) / f64::from(trials) * 100.0, at_zero)
    }

    /// The figures of docs/statistics.md: `cargo test --lib stats::estimate -- --nocapture`
    /// prints them. Populations whose median is known: latencies or rates whose logs are
    /// normal (spread 3% and 30% per repetition), and normal values (5% spread).
    #[test]
    fn coverage_of_the_95_interval_at_3_and_5_repetitions() {
        const TRIALS: u32 = 2000;
        // Each population: its name, its value for a standard normal deviate, its median.
        type Draw = fn(f64) -> f64;
        let populations: [(&str, Draw, f64); 3] = [
            ("log-normal, sd 3%", |z| 50.0 * (0.03 * z).exp(), 50.0),
            ("log-normal, sd 30%", |z| 50.0 * (0.3 * z).exp(), 50.0),
            ("normal, sd 5%", |z| 1e6 * (1.0 + 0.05 * z), 1e6),
        ];
        for (i, &(name, draw, truth)) in populations.iter().enumerate() {
            for n in [3, 5] {
                let (c, at_zero) = coverage(TRIALS, n, 19 + i as u64 * 7 + n as u64, draw, truth);
                println!("coverage of the 95% interval, {name}, n = {n}: {c:.1}% of {TRIALS}");
                assert!((93.0..=97.0).contains(&c), "{name}, n = {n}: {c:.1}%");
                // Positive figures get positive intervals (a t interval on the values
                // themselves reached 0 in 15% of the 30% ones at n = 3).
                assert_eq!(at_zero, 0, "{name}, n = {n}: intervals down to 0");
            }
        }
    }
}
