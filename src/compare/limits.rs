//! Two runs of `--find` compared: each limit of A beside B's limit of the same case, search
//! and service level. A limit dropped beyond noise when B's whole band lies below A's (B's
//! highest possible value under A's lowest); with a threshold, it regresses when it also
//! dropped by more than the threshold. The steps of the searches are not compared one by
//! one: their values differ between runs by design.

use crate::model::{LimitResult, RunResult};
use serde::Serialize;

/// One limit in both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LimitChange {
    /// The case searched.
    pub case: String,
    /// What varied: rate, size or subscribers.
    pub what: String,
    /// The service level.
    pub slo: String,
    /// A's limit and band, and B's (None: no limit found).
    pub a: [Option<f64>; 3],
    pub b: [Option<f64>; 3],
    /// B's limit over A's.
    pub ratio: Option<f64>,
    /// B's band lies wholly below A's.
    pub dropped_beyond_noise: bool,
    /// B's band lies wholly above A's.
    pub rose_beyond_noise: bool,
    /// Dropped beyond noise and by more than the threshold.
    pub regressed: bool,
}

fn key(l: &LimitResult) -> (String, String, String) {
    (l.case.clone(), l.what.clone(), l.slo.clone())
}

/// A limit's band: its lowest, itself, its highest (with no upper bound, itself).
fn band(l: &LimitResult) -> [Option<f64>; 3] {
    [l.low.or(l.held), l.held, l.high.or(l.held)]
}

/// Each limit of `a` against the same in `b`; and the limits of `a` that `b` lacks, and
/// those only `b` has (as `case (what, slo)`).
pub fn compare_limits(
    a: &RunResult,
    b: &RunResult,
    fail_above_pct: Option<f64>,
) -> (Vec<LimitChange>, Vec<String>, Vec<String>) {
    let name = |l: &LimitResult| format!("{} (max {}, {})", l.case, l.what, l.slo);
    let mut changes = Vec::new();
    let mut only_a = Vec::new();
    let mut used = vec![false; b.limits.len()];
    for la in &a.limits {
        let Some(j) = (0..b.limits.len()).find(|&j| !used[j] && key(&b.limits[j]) == key(la))
        else {
            only_a.push(name(la));
            continue;
        };
        used[j] = true;
        let lb = &b.limits[j];
        let (ba, bb) = (band(la), band(lb));
        let ratio = match (la.held, lb.held) {
            (Some(x), Some(y)) if x > 0.0 => Some(y / x),
            _ => None,
        };
        // No limit in B where A had one: it broke from the start, a drop beyond any noise.
        let dropped = match (ba[0], bb[2]) {
            (Some(a_low), Some(b_high)) => b_high < a_low,
            (Some(_), None) => true,
            _ => false,
        };
        let rose = match (ba[2], bb[0]) {
            (Some(a_high), Some(b_low)) => b_low > a_high,
            (None, Some(_)) => true,
            _ => false,
        };
        let past = |t: f64| ratio.is_none_or(|r| r < 1.0 - t / 100.0);
        changes.push(LimitChange {
            case: la.case.clone(),
            what: la.what.clone(),
            slo: la.slo.clone(),
            a: ba,
            b: bb,
            ratio,
            dropped_beyond_noise: dropped,
            rose_beyond_noise: rose,
            regressed: dropped && fail_above_pct.is_some_and(past),
        });
    }
    let only_b = b
        .limits
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(l, _)| name(l))
        .collect();
    (changes, only_a, only_b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(held: f64, low: f64, high: f64) -> LimitResult {
        LimitResult {
            case: "throughput/pubsub/tcp/64/1000".into(),
            what: "rate".into(),
            slo: "loss=0".into(),
            held: Some(held),
            low: Some(low),
            high: Some(high),
            said: String::new(),
            broke_at: None,
            cause: None,
            steps: 10,
            tuned: Vec::new(),
        }
    }

    fn runs(a: LimitResult, b: LimitResult) -> (RunResult, RunResult) {
        let mut ra = crate::runner::new_run("a".into(), None);
        let mut rb = crate::runner::new_run("b".into(), None);
        ra.limits.push(a);
        rb.limits.push(b);
        (ra, rb)
    }

    #[test]
    fn a_limit_regresses_only_when_its_band_fell_below_and_past_the_threshold() {
        let (a, b) = runs(limit(100.0, 95.0, 110.0), limit(60.0, 55.0, 70.0));
        let (c, only_a, only_b) = compare_limits(&a, &b, Some(5.0));
        assert!(only_a.is_empty() && only_b.is_empty());
        assert!(c[0].dropped_beyond_noise && c[0].regressed);
        assert!((c[0].ratio.unwrap() - 0.6).abs() < 1e-9);
        // Within the bands: no verdict either way.
        let (a, b) = runs(limit(100.0, 95.0, 110.0), limit(92.0, 90.0, 100.0));
        let (c, _, _) = compare_limits(&a, &b, Some(5.0));
        assert!(!c[0].dropped_beyond_noise && !c[0].regressed);
        // Beyond noise but by less than the threshold.
        let (a, b) = runs(limit(100.0, 99.0, 101.0), limit(97.0, 96.0, 98.0));
        let (c, _, _) = compare_limits(&a, &b, Some(5.0));
        assert!(c[0].dropped_beyond_noise && !c[0].regressed);
        // A rise.
        let (a, b) = runs(limit(100.0, 95.0, 110.0), limit(200.0, 190.0, 210.0));
        let (c, _, _) = compare_limits(&a, &b, Some(5.0));
        assert!(c[0].rose_beyond_noise && !c[0].regressed);
    }

    #[test]
    fn limits_of_other_cases_are_told_apart() {
        let mut other = limit(100.0, 95.0, 110.0);
        other.slo = "loss=0,p99<=5ms".into();
        let (a, b) = runs(limit(100.0, 95.0, 110.0), other);
        let (c, only_a, only_b) = compare_limits(&a, &b, None);
        assert!(c.is_empty());
        assert_eq!((only_a.len(), only_b.len()), (1, 1));
    }
}
