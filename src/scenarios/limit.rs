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

/// How busy a node was in a step: its name, its role and its CPU as a share of one core, %.
#[derive(Debug, Clone)]
pub struct Busy {
    pub node: String,
    pub role: String,
    pub core_pct: f64,
}

impl Busy {
    /// The nodes of a run's case that say their CPU share.
    pub fn of_case(case: &CaseResult) -> Vec<Busy> {
        case.nodes
            .iter()
            .filter_map(|n| {
                n.cpu_core_pct.map(|p| Busy {
                    node: n.name.clone(),
                    role: n.role.clone(),
                    core_pct: p / (n.replicas.max(1) as f64),
                })
            })
            .collect()
    }
}

/// A node at this share of one core (or more) is saturated: it could go no faster.
pub const SATURATED_PCT: f64 = 90.0;

/// The nodes together at this share of all the machine's cores (or more) filled them.
pub const MACHINE_PCT: f64 = 80.0;

/// Where a run's case lost its messages and why, by the one cause rule with what its
/// sender did (None: it kept no loss ledger).
pub fn loss_of_case(case: &CaseResult) -> Option<String> {
    let mut total: Option<crate::stats::LossSummary> = None;
    for l in case.repetitions.iter().filter_map(|r| r.loss.as_ref()) {
        total.get_or_insert_with(Default::default).add(l);
    }
    let facts = match case.sender {
        Some(f) => crate::stats::Facts::of_run(f),
        None => crate::stats::Facts {
            placed: true,
            ..Default::default()
        },
    };
    total.map(|l| crate::stats::loss_causes(&l, &facts, |_, _| None))
}

/// Why a step broke the service level, by one rule, in a line: a failure by its error (the
/// open-files limit named as such); loss by `loss` (the one cause rule of `stats::cause`
/// on where the holes fell, as the caller words it); latency or a rate not kept up by the
/// busiest node when it saturated a core (a slow consumer, the sender's or a proxy's CPU),
/// else by the machine's cores when the nodes together filled them, else said to be
/// outside what the nodes' CPU shows (`cores`: the machine's).
pub fn cause(f: &Figures, slo: &Slo, busy: &[Busy], cores: usize, loss: Option<String>) -> String {
    if let Some(e) = &f.error {
        if e.contains("Too many open files") || e.contains("open files") || e.contains("EMFILE") {
            return format!(
                "file descriptors: a process reached its limit of open files (raise it with ulimit -n, or spread the sockets over more processes): {}",
                first_sentence(e)
            );
        }
        return format!("the step failed: {}", first_sentence(e));
    }
    if f.lost > slo.max_lost {
        return loss.unwrap_or_else(|| {
            format!("{} lost; where they fell was not recorded", grouped(f.lost))
        });
    }
    if slo.max_p99_ns.is_some() && f.p99_ns.is_none() {
        return format!(
            "no latency was measured: a message shorter than the measurement header ({} B) carries no time stamp, and a stream without samples has no p99",
            crate::header::HEADER_LEN
        );
    }
    let top = busy.iter().max_by(|a, b| a.core_pct.total_cmp(&b.core_pct));
    if let Some(b) = top.filter(|b| b.core_pct >= SATURATED_PCT) {
        let what = match b.role.as_str() {
            "slow_sink" | "sink" | "swarm" => "a slow consumer",
            "source" | "publisher" => "the sender's CPU",
            "proxy" => "the proxy's CPU",
            _ => "CPU",
        };
        return format!(
            "{what}: {} ({}) used {:.0}% of a core",
            b.node, b.role, b.core_pct
        );
    }
    let sum: f64 = busy.iter().map(|b| b.core_pct).sum();
    if cores > 0 && sum >= MACHINE_PCT * cores as f64 {
        return format!(
            "the machine's CPUs: the nodes together used {sum:.0}% of its {cores} cores"
        );
    }
    format!(
        "not the nodes' CPU (the busiest, {}, used {}): a queue between them (a high-water mark's back-pressure, the kernel's socket buffers) or a node's own pace",
        top.map_or("none".into(), |b| b.node.clone()),
        top.map_or("-".into(), |b| format!("{:.0}% of a core", b.core_pct))
    )
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
fn first_sentence(e: &str) -> &str {
    let line = e.lines().next().unwrap_or("");
    match line.find(". ") {
        Some(i) => &line[..i],
        None => line.trim_end_matches('.'),
    }
}

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
    fn the_limit_is_bracketed_then_bisected_to_the_tolerance_and_held_at_the_boundary() {
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
    fn whole_values_are_bisected_to_one_apart_and_the_boundary_runs_three_times() {
        let mut s = Search::new(1.0, 100_000.0, 0.05, 40).whole();
        while let Some(v) = s.next_rate() {
            assert_eq!(v, v.round(), "{v}");
            s.record(v <= 37.0);
        }
        assert_eq!(
            s.found(),
            Found::Limit {
                held: 37.0,
                broke: 38.0
            }
        );
        // The last four steps: 37 twice more (held three times), then 38 twice more.
        let tail: Vec<_> = s.history.iter().rev().take(4).copied().collect();
        assert_eq!(
            tail,
            [(38.0, false), (38.0, false), (37.0, true), (37.0, true)]
        );
        assert_eq!(s.history.iter().filter(|h| h.0 == 37.0).count(), 3);
        assert_eq!(s.band(), (Some(37.0), Some(38.0)));
    }

    #[test]
    fn the_band_widens_where_the_steps_disagree() {
        let mut s = Search::new(1_000.0, 1e7, 0.05, 40);
        s.history = vec![
            (1_000.0, true),
            (2_000.0, true),
            (4_000.0, false),
            (3_000.0, true),
        ];
        assert_eq!(s.band(), (Some(3_000.0), Some(4_000.0)));
        // 2,000 broke once although 3,000 held: the band goes down to what held below it.
        s.history.push((2_000.0, false));
        s.history.push((3_500.0, true));
        assert_eq!(s.band(), (Some(1_000.0), Some(4_000.0)));
        // The lowest broken held when run again: no upper bound is known.
        s.history.push((4_000.0, true));
        assert_eq!(s.band(), (Some(1_000.0), None));
    }

    #[test]
    fn a_broken_step_is_put_down_to_its_error_its_loss_or_the_busiest_node() {
        let slo = Slo::parse("loss=0,p99<=5ms").unwrap();
        let node = |n: &str, r: &str, p: f64| Busy {
            node: n.into(),
            role: r.into(),
            core_pct: p,
        };
        let failed = Figures {
            error: Some("zmq_socket: Too many open files".into()),
            ..Figures::default()
        };
        assert!(cause(&failed, &slo, &[], 2, None).starts_with("file descriptors"));
        let lost = Figures {
            lost: 7,
            ..Figures::default()
        };
        let said = cause(
            &lost,
            &slo,
            &[],
            2,
            Some("in the middle (7 lost), the high-water mark".into()),
        );
        assert!(said.starts_with("in the middle"), "{said}");
        let late = Figures {
            p99_ns: Some(9e6),
            ..Figures::default()
        };
        let nodes = [node("src", "source", 40.0), node("slow", "slow_sink", 99.0)];
        let said = cause(&late, &slo, &nodes, 2, None);
        assert!(
            said.starts_with("a slow consumer: slow (slow_sink) used 99%"),
            "{said}"
        );
        let nodes = [node("a", "source", 85.0), node("b", "sink", 80.0)];
        let said = cause(&late, &slo, &nodes, 2, None);
        assert!(
            said.starts_with("the machine's CPUs: the nodes together used 165%"),
            "{said}"
        );
        let said = cause(&late, &slo, &nodes, 4, None);
        assert!(
            said.starts_with("not the nodes' CPU (the busiest, a, used 85%"),
            "{said}"
        );
    }

    #[test]
    fn the_figure_s_own_noise_at_the_boundary_widens_the_band() {
        let mut s = Search::new(1.0, 1e5, 0.05, 40).whole();
        s.history = vec![(100.0, true), (100.0, true), (104.0, false), (104.0, false)];
        s.held = Some(100.0);
        s.broke = Some(104.0);
        assert_eq!(s.uncertainty(), (Some(100.0), Some(104.0), None));
        // p99 at 0.90 and 0.99 of its bound at 100, 1.02 and 1.10 at 104: 10% apart at
        // most, so the band is 100 / 1.1 .. 104 x 1.1.
        for (v, u) in [(100.0, 0.9), (100.0, 0.99), (104.0, 1.02), (104.0, 1.10)] {
            s.note_usage(v, Some(u));
        }
        let (lo, hi, r) = s.uncertainty();
        assert!((r.unwrap() - 0.1).abs() < 1e-9, "{r:?}");
        assert_eq!((lo, hi), (Some(91.0), Some(114.0)));
        let slo = Slo::parse("p99<=1ms,delivered>=90%").unwrap();
        let f = Figures {
            p99_ns: Some(500_000.0),
            delivered: Some(900.0),
            offered: Some(1000.0),
            ..Figures::default()
        };
        assert_eq!(slo.usage(&f), Some(1.0));
    }

    #[test]
    fn service_levels_parse_and_say_what_is_wrong() {
        assert_eq!(Slo::parse("").unwrap(), Slo::default());
        let s = Slo::parse("loss=0,p99<=5ms").unwrap();
        assert_eq!((s.max_lost, s.max_p99_ns), (0, Some(5_000_000)));
        for (text, ns) in [
            ("250us", 250_000),
            ("1.5ms", 1_500_000),
            ("800ns", 800),
            ("2s", 2_000_000_000),
        ] {
            assert_eq!(
                Slo::parse(&format!("p99<={text}")).unwrap().max_p99_ns,
                Some(ns),
                "{text}"
            );
        }
        let s = Slo::parse("loss=10, delivered>=90%").unwrap();
        assert_eq!((s.max_lost, s.min_delivered), (10, 0.9));
        for (bad, says) in [
            ("p99<5ms", "is not a part of a service level"),
            ("loss=x", "loss= takes a count"),
            ("p99<=soon", "p99<= takes a latency"),
            ("p99<=5", "p99<= takes a latency"),
            ("p99<=0us", "p99<= takes a latency"),
            ("delivered>=150%", "delivered>= takes a percentage"),
        ] {
            let e = Slo::parse(bad).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("--slo"), "{bad}: {e}");
        }
    }
}
