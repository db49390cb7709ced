//! The limit of a case: the highest value of one setting (the offered rate, the message
//! size, the subscribers) that holds a service level (`run --find max-rate --slo
//! "loss=0,p99<=5ms"`). A step runs the case at one value; the search doubles the value from
//! a start until a step breaks the service level, then bisects between the highest value
//! held and the lowest broken, and ends when the two are within a tolerance of each other.
//! At the boundary each value runs three times in all: the value held last (a limit holds
//! every run) and the lowest broken (does it break again?). Its uncertainty is the band of values
//! whose outcome the steps leave open ([`Search::band`]). A broken step's cause is named by
//! one rule ([`cause`]). The search is a state machine ([`Search`]) so the steps can be run
//! by anyone: `run` runs each as a case of the suite, `fanout` as a fan-out.
//!
//! The service level is slo.rs, the cause rule cause.rs; the search is here.

mod cause;
mod slo;
#[cfg(test)]
mod tests;

pub use cause::{cause, loss_of_case, pace_of, Busy, MACHINE_PCT, NOT_CPU, SATURATED_PCT};
pub use slo::{Figures, Slo};

/// Where the search stands. Its values are rates, sizes or counts: [`Search::next_rate`]
/// names them after the first kind.
#[derive(Debug, Clone)]
pub struct Search {
    /// The highest value held so far.
    pub held: Option<f64>,
    /// The lowest value broken so far.
    pub broke: Option<f64>,
    /// The last value asked for, not recorded yet.
    pending: Option<f64>,
    /// What the step asked for is at the boundary.
    stage: Stage,
    /// Runs of each boundary value: the value held last and the lowest broken each run
    /// this many times in all.
    pub boundary: u32,
    /// Runs of the current boundary value still to come.
    left: u32,
    /// Whether the value held last held at every run at the boundary.
    pub confirmed: bool,
    /// The value the search starts from.
    start: f64,
    /// The highest value it tries.
    ceiling: f64,
    /// Bisection ends when broken / held is at most 1 + this.
    tolerance: f64,
    /// Whole values only (sizes, counts): bisection also ends when they are 1 apart.
    whole: bool,
    /// Every step: its value and whether it held.
    pub history: Vec<(f64, bool)>,
    /// Every step that measured a figure the service level bounds continuously: its value
    /// and the share of the bound it used ([`Slo::usage`]).
    pub usage: Vec<(f64, f64)>,
    /// Steps run, and the most it runs.
    pub steps: u32,
    max_steps: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Stage {
    Searching,
    /// The value held last runs again: a limit holds every run at the boundary.
    Confirming,
    /// The lowest value broken runs again, once the limit held.
    Rechecking,
    Done,
}

/// How a search ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// The highest value held (at every run at the boundary), and the lowest value broken
    /// above it.
    Limit { held: f64, broke: f64 },
    /// Every value down to 1 broke the service level.
    BelowStart { broke: f64 },
    /// Every value up to the ceiling held.
    AboveCeiling { held: f64 },
    /// The steps ran out first: the values held and broken so far.
    OutOfSteps {
        held: Option<f64>,
        broke: Option<f64>,
    },
}

impl Search {
    /// A search from `start` up to `ceiling`, ending when the values held and broken are
    /// within `tolerance` (0.05: 5%) of each other, in at most `max_steps` steps.
    pub fn new(start: f64, ceiling: f64, tolerance: f64, max_steps: u32) -> Search {
        Search {
            held: None,
            broke: None,
            pending: None,
            stage: Stage::Searching,
            boundary: 3,
            left: 0,
            confirmed: false,
            history: Vec::new(),
            usage: Vec::new(),
            start,
            ceiling,
            tolerance,
            whole: false,
            steps: 0,
            max_steps,
        }
    }

    /// Each boundary value runs `n` times in all (at least 1; 3 by default).
    pub fn boundary(mut self, n: u32) -> Search {
        self.boundary = n.max(1);
        self
    }

    /// The same search over whole values (a size in bytes, a count of subscribers).
    pub fn whole(mut self) -> Search {
        self.whole = true;
        self.start = self.start.round().max(1.0);
        self
    }

    /// The next value to run, or None when the search is over ([`Search::found`]).
    pub fn next_rate(&mut self) -> Option<f64> {
        assert!(self.pending.is_none(), "a step asked for and not recorded");
        if self.steps >= self.max_steps || self.stage == Stage::Done {
            return None;
        }
        if self.stage == Stage::Confirming || self.stage == Stage::Rechecking {
            let v = if self.stage == Stage::Confirming {
                self.held?
            } else {
                self.broke?
            };
            self.pending = Some(v);
            return Some(v);
        }
        if self.confirmed {
            // The limit held at every run: the lowest value broken runs again as often.
            self.stage = Stage::Rechecking;
            self.left = self.boundary - 1;
            let b = self.broke?;
            self.pending = Some(b);
            return Some(b);
        }
        let close =
            |h: f64, b: f64| b <= h * (1.0 + self.tolerance) || (self.whole && b - h <= 1.0);
        let rate = match (self.held, self.broke) {
            (None, None) => self.start,
            // Below a broken value with nothing held yet: down by halves, to 1.
            (None, Some(_)) if self.start >= 1.0 => self.start,
            (None, Some(_)) => return None,
            (Some(h), None) if h >= self.ceiling => return None,
            (Some(h), None) => (h * 2.0).min(self.ceiling),
            (Some(h), Some(b)) if close(h, b) => {
                self.stage = Stage::Confirming;
                self.left = self.boundary - 1;
                h
            }
            (Some(h), Some(b)) if self.whole => (h * b).sqrt().round().clamp(h + 1.0, b - 1.0),
            (Some(h), Some(b)) => (h * b).sqrt(),
        };
        self.pending = Some(rate);
        Some(rate)
    }

    /// Records whether the value asked for held.
    pub fn record(&mut self, held: bool) {
        let rate = self.pending.take().expect("a value asked for");
        self.steps += 1;
        self.history.push((rate, held));
        match self.stage {
            Stage::Rechecking | Stage::Done => {
                self.left = self.left.saturating_sub(1);
                if self.left == 0 {
                    self.stage = Stage::Done;
                }
                return;
            }
            Stage::Confirming => {
                if held {
                    self.left -= 1;
                    if self.left == 0 {
                        self.stage = Stage::Searching;
                        self.confirmed = true;
                    }
                    return;
                }
                // Held, then broken on a run at the boundary: not a limit. The search goes
                // on below it, from the highest other value held (none: down from half).
                self.stage = Stage::Searching;
                self.broke = Some(rate);
                self.held = self
                    .history
                    .iter()
                    .filter(|&&(r, h)| h && r < rate)
                    .map(|&(r, _)| r)
                    .reduce(f64::max);
                self.start = self.halve(rate);
                return;
            }
            Stage::Searching => {}
        }
        if held {
            self.held = Some(self.held.map_or(rate, |h| h.max(rate)));
        } else {
            self.broke = Some(self.broke.map_or(rate, |b| b.min(rate)));
        }
        // Below a broken start, the search goes down: the start halves.
        if self.held.is_none() && self.broke.is_some() && rate <= self.start {
            self.start = self.halve(rate);
        }
    }

    fn halve(&self, v: f64) -> f64 {
        if self.whole {
            // Whole values go down to 1, then stop (0 is below every start).
            if v <= 1.0 {
                0.0
            } else {
                (v / 2.0).floor().max(1.0)
            }
        } else {
            v / 2.0
        }
    }

    /// The limit found, with its band: (lowest, limit, highest; None when the band has no
    /// upper bound or every value held up to the ceiling). None: no limit was found.
    pub fn limit(&self) -> Option<(f64, f64, Option<f64>)> {
        match self.found() {
            Found::Limit { held, .. } => {
                let (low, high, _) = self.uncertainty();
                Some((low.unwrap_or(held), held, high))
            }
            Found::AboveCeiling { held } => Some((held, held, None)),
            _ => None,
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

    /// Notes what the step at `value` used of the service level's continuous bounds (its
    /// [`Slo::usage`]), for [`Search::spread`].
    pub fn note_usage(&mut self, value: f64, usage: Option<f64>) {
        if let Some(u) = usage.filter(|u| u.is_finite() && *u > 0.0) {
            self.usage.push((value, u));
        }
    }

    /// How much the deciding figure moved between runs of one value: over the values that
    /// ran more than once (the boundary's), the largest ratio of the highest share of the
    /// bound used to the lowest, less 1 (0.12: 12%). None when no value ran twice with a
    /// figure to compare (a service level of loss only).
    pub fn spread(&self) -> Option<f64> {
        let mut values: Vec<f64> = self.usage.iter().map(|u| u.0).collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        values
            .iter()
            .filter_map(|&v| {
                let us: Vec<f64> = self
                    .usage
                    .iter()
                    .filter(|u| u.0 == v)
                    .map(|u| u.1)
                    .collect();
                (us.len() >= 2).then(|| {
                    let hi = us.iter().copied().fold(f64::MIN, f64::max);
                    let lo = us.iter().copied().fold(f64::MAX, f64::min);
                    hi / lo - 1.0
                })
            })
            .reduce(f64::max)
    }

    /// The limit's uncertainty ([`Search::band`]) widened by the figure's own noise: a
    /// figure that moves by a share `r` between runs of one value (its [`Search::spread`]),
    /// read as proportional to the value, moves the value where it meets its bound by as
    /// much, so the band reaches from the limit / (1 + r) to the lowest broken x (1 + r).
    /// Returns the band and the spread.
    pub fn uncertainty(&self) -> (Option<f64>, Option<f64>, Option<f64>) {
        let (lo, hi) = self.band();
        let Some(r) = self.spread() else {
            return (lo, hi, None);
        };
        let widen = |v: f64| if self.whole { v.round() } else { v };
        let lo = match (lo, self.held) {
            (Some(l), Some(h)) => Some(l.min(widen(h / (1.0 + r)))),
            (l, _) => l,
        };
        let hi = match (hi, self.broke) {
            (Some(x), Some(b)) => Some(x.max(widen(b * (1.0 + r)))),
            (x, _) => x,
        };
        (lo, hi, Some(r))
    }

    /// The limit's uncertainty from every step run: from the highest value held with no
    /// step at or below it broken, to the lowest value broken with no step at or above it
    /// held (None: a value above the highest broken held too, so no upper bound is known).
    /// A clean search gives the rates held and broken last; a noisy one, where a value
    /// broke below one that held, a wider band, as honest as the steps allow.
    pub fn band(&self) -> (Option<f64>, Option<f64>) {
        let lowest_broken = self
            .history
            .iter()
            .filter(|s| !s.1)
            .map(|s| s.0)
            .reduce(f64::min);
        let highest_held = self
            .history
            .iter()
            .filter(|s| s.1)
            .map(|s| s.0)
            .reduce(f64::max);
        let lo = self
            .history
            .iter()
            .filter(|s| s.1 && lowest_broken.is_none_or(|b| s.0 < b))
            .map(|s| s.0)
            .reduce(f64::max);
        let hi = self
            .history
            .iter()
            .filter(|s| !s.1 && highest_held.is_none_or(|h| s.0 > h))
            .map(|s| s.0)
            .reduce(f64::min);
        (lo, hi)
    }
}
