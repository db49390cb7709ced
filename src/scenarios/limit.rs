//! The limit of a case: the highest offered rate it holds under a service level
//! (`run --find max-rate --slo "loss=0,p99<=5ms"`). A step runs the case open loop at one
//! rate; the search doubles the rate from a start until a step breaks the service level,
//! then bisects between the highest rate held and the lowest broken, and ends when the two
//! are within a tolerance of each other. The rate held last is run once more at the end:
//! a limit is a rate held twice. The search is a state machine ([`Search`]) so the steps
//! can be run by anyone: the CLI runs each as a case of the suite.

use crate::error::{Error, Result};
use crate::model::CaseResult;

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
                let d = crate::parse::parse_duration("p99<=", v.trim())
                    .map_err(|_| bad("p99<= takes a duration, e.g. p99<=5ms".into()))?;
                slo.max_p99_ns = Some(d.as_nanos() as u64);
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

    /// Whether the step `case`, offered at `rate` msg/s, holds the service level, and why
    /// (what it measured, or what broke).
    pub fn judge(&self, case: &CaseResult, rate: f64) -> (bool, String) {
        if let Some(e) = &case.error {
            return (false, format!("failed: {e}"));
        }
        let s = &case.summary;
        let delivered = s.msgs_per_sec.map(|e| e.median).unwrap_or(0.0);
        let p99 = s.p99_us.map(|e| e.median * 1e3);
        let mut broke = Vec::new();
        if s.lost > self.max_lost {
            broke.push(format!("{} lost", crate::units::grouped(s.lost)));
        }
        if delivered < rate * self.min_delivered {
            broke.push(format!(
                "delivered {} msg/s, {:.0}% of the offered rate",
                crate::units::grouped(delivered.round() as u64),
                100.0 * delivered / rate
            ));
        }
        if let (Some(max), Some(p)) = (self.max_p99_ns, p99) {
            if p > max as f64 {
                broke.push(format!("p99 {} above {}", us(p), us(max as f64)));
            }
        }
        let measured = format!(
            "delivered {} msg/s, p99 {}, {} lost",
            crate::units::grouped(delivered.round() as u64),
            p99.map(us).unwrap_or_else(|| "-".into()),
            crate::units::grouped(s.lost)
        );
        if broke.is_empty() {
            (true, measured)
        } else {
            (false, broke.join(", "))
        }
    }
}

fn us(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.0} us", ns / 1e3)
    }
}

/// Where the search stands.
#[derive(Debug, Clone)]
pub struct Search {
    /// The highest rate held so far.
    pub held: Option<f64>,
    /// The lowest rate broken so far.
    pub broke: Option<f64>,
    /// The last rate asked for, not recorded yet.
    pending: Option<f64>,
    /// Whether the final run of the rate held last was asked for.
    confirming: bool,
    /// Whether the rate held last was held twice.
    pub confirmed: bool,
    /// The rate the search starts from.
    start: f64,
    /// The highest rate it tries.
    ceiling: f64,
    /// Bisection ends when broken / held is at most 1 + this.
    tolerance: f64,
    /// Every rate held once, for a step back when the rate held last breaks on its second
    /// run.
    held_all: Vec<f64>,
    /// Steps run, and the most it runs.
    pub steps: u32,
    max_steps: u32,
}

/// How a search ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// The highest rate held (twice), and the lowest rate broken above it.
    Limit { held: f64, broke: f64 },
    /// Every rate down to 1 msg/s broke the service level.
    BelowStart { broke: f64 },
    /// Every rate up to the ceiling held.
    AboveCeiling { held: f64 },
    /// The steps ran out first: the rates held and broken so far.
    OutOfSteps {
        held: Option<f64>,
        broke: Option<f64>,
    },
}

impl Search {
    /// A search from `start` msg/s up to `ceiling`, ending when the rates held and broken
    /// are within `tolerance` (0.05: 5%) of each other, in at most `max_steps` steps.
    pub fn new(start: f64, ceiling: f64, tolerance: f64, max_steps: u32) -> Search {
        Search {
            held: None,
            broke: None,
            pending: None,
            confirming: false,
            confirmed: false,
            held_all: Vec::new(),
            start,
            ceiling,
            tolerance,
            steps: 0,
            max_steps,
        }
    }

    /// The next rate to run, or None when the search is over ([`Search::found`]).
    pub fn next_rate(&mut self) -> Option<f64> {
        assert!(self.pending.is_none(), "a step asked for and not recorded");
        if self.steps >= self.max_steps || self.confirmed {
            return None;
        }
        let rate = match (self.held, self.broke) {
            (None, None) => self.start,
            // Below a broken rate with nothing held yet: down by halves, to 1 msg/s.
            (None, Some(_)) if self.start >= 1.0 => self.start,
            (None, Some(_)) => return None,
            (Some(h), None) if h >= self.ceiling => return None,
            (Some(h), None) => (h * 2.0).min(self.ceiling),
            (Some(h), Some(b)) if b <= h * (1.0 + self.tolerance) => {
                self.confirming = true;
                h
            }
            (Some(h), Some(b)) => (h * b).sqrt(),
        };
        self.pending = Some(rate);
        Some(rate)
    }

    /// Records whether the rate asked for held.
    pub fn record(&mut self, held: bool) {
        let rate = self.pending.take().expect("a rate asked for");
        self.steps += 1;
        if self.confirming {
            self.confirming = false;
            if held {
                self.confirmed = true;
                return;
            }
            // Held once, broken the second time: not a limit. The search goes on below it,
            // from the highest other rate held (none: down from half of it).
            self.broke = Some(rate);
            self.held_all.retain(|&h| h < rate);
            self.held = self.held_all.iter().copied().reduce(f64::max);
            self.start = rate / 2.0;
            return;
        }
        if held {
            self.held_all.push(rate);
            self.held = Some(self.held.map_or(rate, |h| h.max(rate)));
        } else {
            self.broke = Some(self.broke.map_or(rate, |b| b.min(rate)));
        }
        // Below a broken start, the search goes down: the start halves.
        if self.held.is_none() && self.broke.is_some() && rate <= self.start {
            self.start = rate / 2.0;
        }
    }

    /// The outcome, once [`Search::next_rate`] said the search is over.
    pub fn found(&self) -> Found {
        match (self.held, self.broke) {
            (Some(held), Some(broke)) if self.confirmed => Found::Limit { held, broke },
            (Some(held), None) if held >= self.ceiling => Found::AboveCeiling { held },
            (None, Some(broke)) if self.start < 1.0 => Found::BelowStart { broke },
            (held, broke) => Found::OutOfSteps { held, broke },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search against a system that holds every rate up to `limit`.
    fn against(limit: f64, start: f64) -> (Found, u32) {
        let mut s = Search::new(start, 10_000_000.0, 0.05, 40);
        while let Some(r) = s.next_rate() {
            s.record(r <= limit);
        }
        (s.found(), s.steps)
    }

    #[test]
    fn the_limit_is_bracketed_then_bisected_to_the_tolerance_and_held_twice() {
        for limit in [1_500.0, 37_000.0, 123_456.0, 2_000_000.0] {
            let (found, steps) = against(limit, 1_000.0);
            let Found::Limit { held, broke } = found else {
                panic!("{limit}: {found:?}")
            };
            assert!(held <= limit && broke > limit, "{limit}: {held} {broke}");
            assert!(broke <= held * 1.05, "{limit}: {held} {broke}");
            assert!(held >= limit * 0.95, "{limit}: {held}");
            // Doubling then bisection: a handful of steps, not a sweep.
            assert!(steps <= 20, "{limit}: {steps} steps");
        }
    }

    #[test]
    fn a_start_that_breaks_goes_down_and_one_that_never_breaks_stops_at_the_ceiling() {
        let (found, _) = against(300.0, 1_000.0);
        let Found::Limit { held, .. } = found else {
            panic!("{found:?}")
        };
        assert!((285.0..=300.0).contains(&held), "{held}");
        let (found, _) = against(1e12, 1_000.0);
        assert_eq!(found, Found::AboveCeiling { held: 10_000_000.0 });
    }

    #[test]
    fn a_rate_held_once_and_broken_on_its_second_run_is_not_the_limit() {
        // Holds up to 50k, except that 49k-50k flakes the second time it runs.
        let mut s = Search::new(1_000.0, 1e7, 0.05, 60);
        let mut runs = std::collections::HashMap::new();
        while let Some(r) = s.next_rate() {
            let n = runs.entry((r as u64) / 1000).or_insert(0);
            *n += 1;
            let flaky = (49_000.0..=50_000.0).contains(&r) && *n > 1;
            s.record(r <= 50_000.0 && !flaky);
        }
        let Found::Limit { held, .. } = s.found() else {
            panic!("{:?}", s.found())
        };
        assert!(held < 49_000.0, "{held}");
    }

    #[test]
    fn service_levels_parse_and_say_what_is_wrong() {
        assert_eq!(Slo::parse("").unwrap(), Slo::default());
        let s = Slo::parse("loss=0,p99<=5ms").unwrap();
        assert_eq!((s.max_lost, s.max_p99_ns), (0, Some(5_000_000)));
        let s = Slo::parse("loss=10, delivered>=90%").unwrap();
        assert_eq!((s.max_lost, s.min_delivered), (10, 0.9));
        for (bad, says) in [
            ("p99<5ms", "is not a part of a service level"),
            ("loss=x", "loss= takes a count"),
            ("p99<=soon", "p99<= takes a duration"),
            ("delivered>=150%", "delivered>= takes a percentage"),
        ] {
            let e = Slo::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("--slo"), "{bad}: {e}");
        }
    }
}
