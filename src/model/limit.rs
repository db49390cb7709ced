//! What `--find` and `--curve` found, kept with the run beside its step cases: a case's
//! limit with its band, the step that broke it and its cause, the settings `--tune` tried;
//! and a latency-under-load curve with its knee (docs/limits.md).

use serde::{Deserialize, Serialize};

/// The limit of one case under one service level.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LimitResult {
    /// The case searched (its id at the first step's value is not it: the rate varies).
    pub case: String,
    /// What varied: `rate` (msg/s), `size` (bytes) or `subscribers` (in all).
    pub what: String,
    /// The service level, as given.
    pub slo: String,
    /// The highest value that held at every one of its runs (None: none held, or the
    /// search ran out of steps; `said` tells).
    pub held: Option<f64>,
    /// Its band: the lowest and highest the limit may be.
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// The outcome in words: the limit, or why there is none.
    pub said: String,
    /// The value of the step that broke it, and that step's cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broke_at: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// Steps run.
    pub steps: u32,
    /// `--tune`: each setting tried, best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tuned: Vec<TunedSetting>,
}

/// One try of `--tune`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TunedSetting {
    /// The settings, as in a topology file: `sndhwm = 10000`.
    pub settings: String,
    /// The limit with them, and its band (None: none found).
    pub held: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// The ratio to the limit without them, with its interval from the two bands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gain: Option<[f64; 3]>,
    /// Whether the whole interval lies above 1.
    pub helps: bool,
}

/// Latency under a rising offered load: one case, step by step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LoadCurve {
    pub case: String,
    /// The service level that ended it.
    pub slo: String,
    pub points: Vec<CurvePoint>,
    /// The knee: the index of the highest offered rate before latency turns up (p99 over
    /// twice its value at light load) or the service level breaks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee: Option<usize>,
}

/// One step of a curve.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CurvePoint {
    /// Offered and delivered rates, msg/s.
    pub offered: f64,
    pub delivered: f64,
    /// Latency percentiles, ns (None: no time-stamped message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_ns: Option<f64>,
    pub lost: u64,
    /// Whether the step held the service level.
    pub held: bool,
}

impl LoadCurve {
    /// The knee of `points`: the last step, before the first that broke, after which p99
    /// stays above twice its value at the lightest load (a spike that comes back down is
    /// noise, not a knee); with no such turn, the last step that held.
    pub fn knee_of(points: &[CurvePoint]) -> Option<usize> {
        let held = points.iter().take_while(|p| p.held).count();
        if held == 0 {
            return None;
        }
        let Some(base) = points[0].p99_ns else {
            return Some(held - 1);
        };
        let up = |p: &CurvePoint| p.p99_ns.is_some_and(|v| v > 2.0 * base);
        // The first step from which every held step is up.
        let mut turn = held;
        while turn > 1 && up(&points[turn - 1]) {
            turn -= 1;
        }
        Some(turn - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(offered: f64, p99_us: f64, held: bool) -> CurvePoint {
        CurvePoint {
            offered,
            delivered: offered,
            p50_ns: Some(p99_us * 500.0),
            p99_ns: Some(p99_us * 1e3),
            max_ns: Some(p99_us * 2e3),
            lost: 0,
            held,
        }
    }

    #[test]
    fn the_knee_is_where_latency_turns_up_or_the_level_breaks() {
        let flat_then_up = [
            point(1e3, 100.0, true),
            point(2e3, 120.0, true),
            point(4e3, 180.0, true),
            point(8e3, 900.0, true),
            point(16e3, 5000.0, false),
        ];
        assert_eq!(LoadCurve::knee_of(&flat_then_up), Some(2));
        // A spike that comes back down is not the knee.
        let spiky = [
            point(1e3, 100.0, true),
            point(2e3, 900.0, true),
            point(4e3, 110.0, true),
            point(8e3, 700.0, true),
            point(16e3, 800.0, true),
        ];
        assert_eq!(LoadCurve::knee_of(&spiky), Some(2));
        let flat = [
            point(1e3, 100.0, true),
            point(2e3, 110.0, true),
            point(4e3, 120.0, false),
        ];
        assert_eq!(LoadCurve::knee_of(&flat), Some(1));
        assert_eq!(LoadCurve::knee_of(&[point(1e3, 100.0, false)]), None);
    }
}
