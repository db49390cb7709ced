//! Whether a run's figures drift over its intervals: the verdict that answers seed 002's "no
//! performance degradation over time". One rule for every series of intervals:
//!
//! - **Out of line.** An interval (not the last, partial one) that delivered under a quarter
//!   of the median interval's messages, or whose p99 is over four times the median p99: a
//!   stall or a spike, named with its time.
//! - **Trend.** Over the other intervals, the p99 against time: Theil–Sen's slope (the median
//!   of the slopes between every pair of intervals) with its 95% interval from Kendall's
//!   rank statistic. A trend is a change over the run whose whole interval lies beyond
//!   ±20% of the median p99 (so noise on a busy machine, which moves p99 by more than that
//!   from one second to the next, is not a trend unless it persists).
//! - **Loss.** Intervals that lost messages, with the first.
//!
//! With fewer than 5 intervals there is too little to tell.

use serde::{Deserialize, Serialize};

/// One interval as the verdict reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Its start from the series' start, s.
    pub at_s: f64,
    /// Its length, s.
    pub dur_s: f64,
    /// Messages delivered in it.
    pub messages: u64,
    /// Messages lost in it.
    pub lost: u64,
    /// Its p99 latency, ns (None: no sample in it).
    pub p99_ns: Option<f64>,
}

/// What the verdict found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DriftKind {
    /// No trend, nothing out of line, nothing lost.
    Steady,
    /// The p99 rose over the run beyond noise.
    Rising,
    /// The p99 fell over the run beyond noise (a warm-up that lasted).
    Falling,
    /// Some intervals were out of line (a stall or a spike), or lost messages.
    Irregular,
    /// Too few intervals to tell.
    TooShort,
}

/// The verdict on a series of intervals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    pub kind: DriftKind,
    /// The change of p99 over the run, % of the median p99, with its 95% interval
    /// (Theil–Sen; None: too few intervals with latency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_change_pct: Option<[f64; 3]>,
    /// The intervals out of line (indices from 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub out_of_line: Vec<usize>,
    /// The intervals that lost messages (indices from 0).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lossy: Vec<usize>,
    /// The verdict in a sentence.
    pub said: String,
}

/// Fewest intervals the verdict reads.
pub const MIN_INTERVALS: usize = 5;

/// A change of p99 over the run counts as a trend when its whole 95% interval lies beyond
/// this share of the median p99.
pub const TREND_PCT: f64 = 20.0;

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Theil–Sen's slope of `y` over `x` and its 95% interval from Kendall's statistic (the
/// slopes ranked (N - C) / 2 and (N + C) / 2 among the N pairs, C = 1.96 sd of S).
fn theil_sen(x: &[f64], y: &[f64]) -> Option<[f64; 3]> {
    let n = x.len();
    let mut slopes = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            if x[j] != x[i] {
                slopes.push((y[j] - y[i]) / (x[j] - x[i]));
            }
        }
    }
    if slopes.len() < 3 {
        return None;
    }
    let m = median(&mut slopes);
    let nf = n as f64;
    let sd = (nf * (nf - 1.0) * (2.0 * nf + 5.0) / 18.0).sqrt();
    let c = 1.96 * sd;
    let big_n = slopes.len() as f64;
    let lo_i = (((big_n - c) / 2.0).floor().max(0.0) as usize).min(slopes.len() - 1);
    let hi_i = (((big_n + c) / 2.0).ceil() as usize).min(slopes.len() - 1);
    Some([m, slopes[lo_i], slopes[hi_i]])
}

/// The verdict on `points` (in time order; the last may be a partial interval).
pub fn verdict(points: &[Point]) -> Drift {
    let n = points.len();
    if n < MIN_INTERVALS {
        return Drift {
            kind: DriftKind::TooShort,
            p99_change_pct: None,
            out_of_line: Vec::new(),
            lossy: Vec::new(),
            said: format!("too few intervals to tell ({n}; at least {MIN_INTERVALS})"),
        };
    }
    // The last interval is partial: its rate is not compared.
    let whole = &points[..n - 1];
    let rate = |p: &Point| p.messages as f64 / p.dur_s.max(1e-9);
    let med_rate = median(&mut whole.iter().map(rate).collect::<Vec<_>>());
    let mut p99s: Vec<f64> = points.iter().filter_map(|p| p.p99_ns).collect();
    let med_p99 = median(&mut p99s);
    let mut out = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let starved = i < n - 1 && rate(p) < 0.25 * med_rate;
        let spiked = p.p99_ns.is_some_and(|v| med_p99 > 0.0 && v > 4.0 * med_p99);
        if starved || spiked {
            out.push(i);
        }
    }
    let lossy: Vec<usize> = (0..n).filter(|&i| points[i].lost > 0).collect();
    // The trend, over the intervals in line that have latency.
    let (x, y): (Vec<f64>, Vec<f64>) = points
        .iter()
        .enumerate()
        .filter(|(i, _)| !out.contains(i))
        .filter_map(|(_, p)| p.p99_ns.map(|v| (p.at_s, v)))
        .unzip();
    let span = match (x.first(), x.last()) {
        (Some(a), Some(b)) => b - a,
        _ => 0.0,
    };
    let change = (x.len() >= MIN_INTERVALS && med_p99 > 0.0)
        .then(|| theil_sen(&x, &y))
        .flatten()
        .map(|s| s.map(|v| 100.0 * v * span / med_p99));
    let kind = match change {
        _ if !out.is_empty() || !lossy.is_empty() => DriftKind::Irregular,
        Some([_, lo, _]) if lo > TREND_PCT => DriftKind::Rising,
        Some([_, _, hi]) if hi < -TREND_PCT => DriftKind::Falling,
        _ => DriftKind::Steady,
    };
    let mut parts = Vec::new();
    match change {
        Some([m, lo, hi]) => parts.push(format!(
            "p99 {} {:+.0}% over the run [95% CI {:+.0}% .. {:+.0}%]",
            match kind {
                DriftKind::Rising => "rose",
                DriftKind::Falling => "fell",
                _ => "changed",
            },
            m,
            lo,
            hi
        )),
        None => parts.push("no trend can be read (too few intervals with latency)".into()),
    }
    if !out.is_empty() {
        let shown: Vec<String> = out
            .iter()
            .take(6)
            .map(|&i| {
                let p = &points[i];
                let mut s = format!("{:.0}-{:.0} s", p.at_s, p.at_s + p.dur_s);
                if i < n - 1 && rate(p) < 0.25 * med_rate {
                    s.push_str(&format!(
                        " delivered {:.0} msg/s (median {:.0})",
                        rate(p),
                        med_rate
                    ));
                }
                if let Some(v) = p.p99_ns.filter(|v| med_p99 > 0.0 && *v > 4.0 * med_p99) {
                    s.push_str(&format!(" p99 {:.1}x the median", v / med_p99));
                }
                s
            })
            .collect();
        parts.push(format!(
            "{} interval{} out of line: {}{}",
            out.len(),
            if out.len() == 1 { "" } else { "s" },
            shown.join("; "),
            if out.len() > 6 { "; ..." } else { "" }
        ));
    }
    if !lossy.is_empty() {
        let lost: u64 = points.iter().map(|p| p.lost).sum();
        parts.push(format!(
            "{lost} lost in {} interval{} (the first at {:.0} s)",
            lossy.len(),
            if lossy.len() == 1 { "" } else { "s" },
            points[lossy[0]].at_s
        ));
    }
    let head = match kind {
        DriftKind::Steady => "steady",
        DriftKind::Rising => "drifts: latency rises",
        DriftKind::Falling => "drifts: latency falls",
        DriftKind::Irregular => "irregular",
        DriftKind::TooShort => unreachable!(),
    };
    Drift {
        kind,
        p99_change_pct: change,
        out_of_line: out,
        lossy,
        said: format!("{head}: {}", parts.join("; ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(p99: impl Fn(usize) -> f64, messages: impl Fn(usize) -> u64, n: usize) -> Vec<Point> {
        (0..n)
            .map(|i| Point {
                at_s: i as f64,
                dur_s: 1.0,
                messages: messages(i),
                lost: 0,
                p99_ns: Some(p99(i)),
            })
            .collect()
    }

    #[test]
    fn a_noisy_but_level_run_is_steady() {
        // p99 around 100 us, +-30% at random-looking places, no trend.
        let noise = [
            1.0, 1.3, 0.8, 1.1, 0.7, 1.2, 0.9, 1.0, 1.3, 0.75, 1.1, 0.95, 1.25, 0.8, 1.0,
        ];
        let d = verdict(&series(|i| 100_000.0 * noise[i % 15], |_| 1000, 30));
        assert_eq!(d.kind, DriftKind::Steady, "{}", d.said);
        assert!(d.said.starts_with("steady: p99 changed"), "{}", d.said);
    }

    #[test]
    fn a_latency_that_doubles_over_the_run_rises() {
        let d = verdict(&series(
            |i| 100_000.0 * (1.0 + i as f64 / 29.0),
            |_| 1000,
            30,
        ));
        assert_eq!(d.kind, DriftKind::Rising, "{}", d.said);
        let [m, lo, _] = d.p99_change_pct.unwrap();
        // From 100 to 200 us: +100 us over a median of 150 us.
        assert!(
            (60.0..=72.0).contains(&m) && lo > TREND_PCT,
            "{:?}",
            d.p99_change_pct
        );
    }

    #[test]
    fn a_stall_is_out_of_line_with_its_time() {
        // Nothing for two seconds at 12-14 s, then the backlog with a high p99.
        let d = verdict(&series(
            |i| if i == 14 { 2e9 } else { 100_000.0 },
            |i| if i == 12 || i == 13 { 0 } else { 1000 },
            30,
        ));
        assert_eq!(d.kind, DriftKind::Irregular, "{}", d.said);
        assert_eq!(d.out_of_line, [12, 13, 14]);
        assert!(d.said.contains("12-13 s delivered 0 msg/s"), "{}", d.said);
        assert!(
            d.said.contains("14-15 s p99 20000.0x the median"),
            "{}",
            d.said
        );
    }

    #[test]
    fn a_short_run_cannot_tell_and_losses_are_named() {
        assert_eq!(
            verdict(&series(|_| 1.0, |_| 1, 4)).kind,
            DriftKind::TooShort
        );
        let mut s = series(|_| 100_000.0, |_| 1000, 10);
        s[6].lost = 12;
        let d = verdict(&s);
        assert_eq!((d.kind, d.lossy.clone()), (DriftKind::Irregular, vec![6]));
        assert!(
            d.said.contains("12 lost in 1 interval (the first at 6 s)"),
            "{}",
            d.said
        );
    }
}
