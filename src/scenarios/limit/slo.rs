//! A service level (`--slo "loss=0,p99<=5ms"`): what a step must hold, and the figures of a
//! step it judges.

use crate::error::{Error, Result};
use crate::model::CaseResult;
use crate::units::grouped;

/// What a step must hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Slo {
    /// Messages lost at most (over the step).
    pub max_lost: u64,
    /// The p99 latency at most, ns (none: not bound).
    pub max_p99_ns: Option<u64>,
    /// The delivered rate at least this share of the offered one (it keeps up).
    pub min_delivered: f64,
}

impl Default for Slo {
    fn default() -> Self {
        Slo {
            max_lost: 0,
            max_p99_ns: None,
            min_delivered: 0.95,
        }
    }
}

impl Slo {
    /// A service level from `loss=N,p99<=DURATION,delivered>=PERCENT%`, each part optional
    /// (by default: no loss, delivered at least 95% of the offered rate, p99 not bound).
    pub fn parse(text: &str) -> Result<Slo> {
        let bad = |why: String| Error::invalid("--slo", text, why);
        let mut slo = Slo::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(v) = part.strip_prefix("loss=") {
                slo.max_lost = v
                    .trim()
                    .replace('_', "")
                    .parse()
                    .map_err(|_| bad("loss= takes a count of messages, e.g. loss=0".into()))?;
            } else if let Some(v) = part.strip_prefix("p99<=") {
                slo.max_p99_ns = Some(latency_ns(v.trim()).ok_or_else(|| {
                    bad("p99<= takes a latency above 0 with its unit (ns, us, ms, s), e.g. p99<=5ms or p99<=250us".into())
                })?);
            } else if let Some(v) = part.strip_prefix("delivered>=") {
                let pct: f64 = v
                    .trim()
                    .trim_end_matches('%')
                    .parse()
                    .ok()
                    .filter(|p: &f64| *p > 0.0 && *p <= 100.0)
                    .ok_or_else(|| {
                        bad("delivered>= takes a percentage, e.g. delivered>=95%".into())
                    })?;
                slo.min_delivered = pct / 100.0;
            } else {
                return Err(bad(format!(
                    "'{part}' is not a part of a service level; use loss=N, p99<=DURATION \
                     and delivered>=PERCENT%, comma-separated, e.g. \"loss=0,p99<=5ms\""
                )));
            }
        }
        Ok(slo)
    }

    /// Whether a step holds the service level, and why: what it measured, or what broke.
    pub fn judge(&self, f: &Figures) -> (bool, String) {
        if let Some(e) = &f.error {
            return (false, format!("failed: {}", first_sentence(e)));
        }
        let mut broke = Vec::new();
        if f.lost > self.max_lost {
            broke.push(format!("{} lost", grouped(f.lost)));
        }
        if let (Some(d), Some(o)) = (f.delivered, f.offered) {
            if d < o * self.min_delivered {
                broke.push(format!(
                    "delivered {} msg/s, {:.0}% of the offered rate",
                    grouped(d.round() as u64),
                    100.0 * d / o
                ));
            }
        }
        match (self.max_p99_ns, f.p99_ns) {
            (Some(max), Some(p)) if p > max as f64 => {
                broke.push(format!(
                    "p99 {} above {}",
                    crate::units::latency(p),
                    crate::units::latency(max as f64)
                ));
            }
            // A bound on latency is not held by a step that measured none (a message too
            // small for the time stamp, a stream with no sample).
            (Some(_), None) => broke.push("no latency measured to hold p99 to".into()),
            _ => {}
        }
        if !broke.is_empty() {
            return (false, broke.join(", "));
        }
        let mut measured = Vec::new();
        if let Some(d) = f.delivered {
            measured.push(format!("delivered {} msg/s", grouped(d.round() as u64)));
        }
        measured.push(format!(
            "p99 {}",
            f.p99_ns
                .map(crate::units::latency)
                .unwrap_or_else(|| "-".into())
        ));
        measured.push(format!("{} lost", grouped(f.lost)));
        (true, measured.join(", "))
    }
}

impl Slo {
    /// The largest share of a continuous bound a step used: its p99 over the p99 bound,
    /// the delivered rate it needed over the one it got (1.0: just at the bound; above:
    /// broken). None when no such bound applies (a failure, or a bound on loss alone).
    pub fn usage(&self, f: &Figures) -> Option<f64> {
        if f.error.is_some() {
            return None;
        }
        let p99 = self.max_p99_ns.zip(f.p99_ns).map(|(max, p)| p / max as f64);
        let kept_up = match (f.delivered, f.offered) {
            (Some(d), Some(o)) if d > 0.0 => Some(o * self.min_delivered / d),
            _ => None,
        };
        match (p99, kept_up) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }
}

/// What a step measured, as far as a service level judges it.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    /// Why the step failed, if it did.
    pub error: Option<String>,
    /// Messages lost.
    pub lost: u64,
    /// The p99 latency, ns.
    pub p99_ns: Option<f64>,
    /// The delivered rate, msg/s (None: not judged, as for a fan-out's subscribers).
    pub delivered: Option<f64>,
    /// The offered rate, msg/s.
    pub offered: Option<f64>,
}

impl Figures {
    /// A run's case offered at `rate` msg/s (None: at full speed, the delivered rate not
    /// judged).
    pub fn of_case(case: &CaseResult, rate: Option<f64>) -> Figures {
        let s = &case.summary;
        Figures {
            error: case.error.clone(),
            lost: s.lost,
            p99_ns: s.p99_us.map(|e| e.median * 1e3),
            delivered: rate.map(|_| s.msgs_per_sec.map(|e| e.median).unwrap_or(0.0)),
            offered: rate,
        }
    }
}

/// A latency bound in ns from `250us`, `1.5ms`, `2s`, `800ns` (µs too); None when it is
/// not one, or not above 0.
fn latency_ns(text: &str) -> Option<u64> {
    let at = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (num, unit) = text.split_at(at);
    let v: f64 = num.parse().ok()?;
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    let ns = (v * scale).round();
    (1.0..1e15).contains(&ns).then_some(ns as u64)
}

/// An error's first sentence: what happened, without the fixes that follow.
pub(super) fn first_sentence(e: &str) -> &str {
    let line = e.lines().next().unwrap_or("");
    match line.find(". ") {
        Some(i) => &line[..i],
        None => line.trim_end_matches('.'),
    }
}
