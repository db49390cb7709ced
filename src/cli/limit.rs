//! One search of `--find` (`run --find max-rate|max-size`, `fanout --find
//! max-subscribers`): the highest value of one setting that holds `--slo`
//! (scenarios::limit). Every step is a case of the run, printed as it ends and recorded;
//! the limit is printed with its uncertainty, the step that broke it and that step's cause.
//! `cli::searches` runs them over a plan, with `--tune` and `--curve`.

use super::suite::Progress;
use zmqperf::model::{CaseResult, RunStatus};
use zmqperf::runner::{self, CaseSpec, Settings};
use zmqperf::scenarios::limit::{self, Busy, Figures, Found, Search, Slo};
use zmqperf::units::grouped;

/// Seconds of messages a step sends.
const STEP_S: f64 = 1.0;

/// The most steps one search runs.
pub const MAX_STEPS: u32 = 32;

/// A step that broke the service level: its value, its number, what broke and its cause.
pub type Broken = (f64, u32, String, String);

/// What is searched: its name, its unit and how a step sets it.
#[derive(Clone, Copy, PartialEq)]
pub enum Find {
    /// The offered rate, msg/s.
    Rate,
    /// The message size, bytes.
    Size,
    /// A fan-out's subscribers: SUB sockets per process, in this many processes.
    Subscribers { processes: u32 },
}

impl Find {
    /// `max-size` or `max-rate`, as `run --find` takes them.
    pub fn parse(what: &str) -> Find {
        if what == "max-size" {
            Find::Size
        } else {
            Find::Rate
        }
    }

    /// What varies, as the run keeps it: `rate`, `size`, `subscribers`.
    pub fn name(self) -> &'static str {
        match self {
            Find::Rate => "rate",
            Find::Size => "size",
            Find::Subscribers { .. } => "subscribers",
        }
    }

    /// A value with its unit: `245,146 msg/s`, `65,536 B`.
    pub fn show(self, v: f64) -> String {
        match self {
            Find::Rate => format!("{} msg/s", grouped(v.round() as u64)),
            Find::Size => format!("{} B", grouped(v.round() as u64)),
            Find::Subscribers { processes } => format!(
                "{} ({processes} x {})",
                grouped(v.round() as u64 * processes as u64),
                grouped(v.round() as u64)
            ),
        }
    }

    /// The case at value `v`: a step of 1 s of messages at its rate (at least 500), or at
    /// full speed the case's count, at most 256 MiB of messages (at least 100).
    fn step(self, case: &CaseSpec, v: f64, rate: Option<f64>) -> CaseSpec {
        let mut step = case.clone();
        step.repetitions = 1;
        match self {
            Find::Rate => step.rate = Some(v),
            Find::Size => {
                step.size = v.round() as usize;
                step.rate = rate;
            }
            Find::Subscribers { .. } => unreachable!("a fan-out's search runs fan-outs"),
        }
        step.count = match step.rate {
            Some(r) => ((r * STEP_S) as u64).max(500),
            None => case
                .count
                .min((256 << 20) / step.size.max(1) as u64)
                .max(100),
        };
        step
    }
}

/// The step at `v` measured `f`: judged by `slo`, its line printed, kept among `broken`
/// with its cause (`cause`, asked only of a step that broke), and recorded in the search.
pub fn step_done(
    search: &mut Search,
    slo: &Slo,
    what: Find,
    v: f64,
    f: &Figures,
    broken: &mut Vec<Broken>,
    cause: impl FnOnce(&Figures) -> String,
) {
    let (held, why) = slo.judge(f);
    search.note_usage(v, slo.usage(f));
    let n = search.steps + 1;
    println!(
        "  step {n:>2}: {:>14}  {}  {why}",
        what.show(v),
        if held { "holds" } else { "broke" }
    );
    if !held {
        broken.retain(|b| b.0 != v);
        broken.push((v, n, why, cause(f)));
    }
    search.record(held);
}

/// What every search of one `--find` shares: what is searched, the service level, the
/// run the steps go into and where they are recorded.
pub struct Searching<'a> {
    pub what: Find,
    pub slo: &'a Slo,
    pub settings: &'a Settings,
    /// The run's `--rate`, for `max-size`.
    pub rate: Option<f64>,
    pub ceiling: f64,
    pub cores: usize,
    pub run: &'a mut zmqperf::model::RunResult,
    pub session: &'a mut zmqperf::runner::session::Session,
}

impl Searching<'_> {
    /// Whether a signal ended the run.
    pub fn interrupted(&self) -> bool {
        self.run.status == RunStatus::Interrupted
    }

    /// Searches `case` from `start`: every step run, printed and recorded; the search and
    /// the steps that broke.
    pub fn search(&mut self, case: &CaseSpec, start: f64) -> (Search, Vec<Broken>) {
        let what = self.what;
        let mut search = Search::new(start, self.ceiling, 0.05, MAX_STEPS);
        if what != Find::Rate {
            search = search.whole();
        }
        // The last step at each value that broke: its figures, its cause and its number.
        let mut broken: Vec<Broken> = Vec::new();
        while let Some(v) = search.next_rate() {
            let Some((done, figures)) = self.measure(case, v) else {
                break;
            };
            let (slo, cores) = (self.slo, self.cores);
            step_done(&mut search, slo, what, v, &figures, &mut broken, |f| {
                let said = limit::cause(
                    f,
                    slo,
                    &Busy::of_case(&done),
                    cores,
                    limit::loss_of_case(&done),
                );
                // Not the nodes' CPU: the case may name what held it.
                match limit::pace_of(&done.warnings) {
                    Some(pace) if said.starts_with(limit::NOT_CPU) => pace,
                    _ => said,
                }
            });
        }
        (search, broken)
    }

    /// Runs `case` at value `v` once, recorded: the step's case and its figures (None: a
    /// signal ended the run).
    pub fn measure(&mut self, case: &CaseSpec, v: f64) -> Option<(CaseResult, Figures)> {
        let steps = [self.what.step(case, v, self.rate)];
        {
            let session = &mut *self.session;
            let mut progress = Progress::new(&steps, |c: &CaseResult| session.case_done(c));
            runner::run_suite(self.run, &steps, self.settings, &mut progress);
        }
        if self.interrupted() {
            return None;
        }
        let done = self.run.cases.last().expect("the step's case").clone();
        let figures = Figures::of_case(&done, steps[0].rate);
        Some((done, figures))
    }
}

/// The step that broke a search's limit: at the top of its band (a value that broke and
/// never held), else the lowest value broken above the limit.
pub fn breaking<'a>(search: &Search, broken: &'a [Broken]) -> Option<&'a Broken> {
    let limit = search.band().1.unwrap_or(search.held.unwrap_or(0.0));
    broken
        .iter()
        .filter(|b| b.0 >= limit)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .or_else(|| broken.iter().min_by(|a, b| a.0.total_cmp(&b.0)))
}

/// What a search found, as the run keeps it.
pub fn limit_result(
    case: &str,
    what: Find,
    slo: &str,
    search: &Search,
    broken: &[Broken],
) -> zmqperf::model::LimitResult {
    let found = search.limit();
    let (low, held, high) = (
        found.map(|f| f.0),
        found.map(|f| f.1),
        found.and_then(|f| f.2),
    );
    let b = breaking(search, broken);
    let said = outcome(case, what, search, broken);
    zmqperf::model::LimitResult {
        case: case.to_string(),
        what: what.name().to_string(),
        slo: slo.to_string(),
        held,
        low,
        high,
        said: said.lines().next().unwrap_or("").to_string(),
        broke_at: b.map(|b| b.0),
        cause: b.map(|b| b.3.clone()),
        steps: search.steps,
        tuned: Vec::new(),
    }
}

/// The lines that end a search: the limit (or why there is none), its uncertainty, the step
/// that broke it and that step's cause.
pub fn outcome(id: &str, what: Find, search: &Search, broken: &[Broken]) -> String {
    let show = |v: f64| what.show(v);
    let mut out = match search.found() {
        Found::Limit { held, .. } => format!(
            "{id}: max {} {}, held at all {} of its runs\n",
            what.name(),
            show(held),
            search.boundary
        ),
        Found::BelowStart { broke } => format!(
            "{id}: no {} holds the service level: even {} broke it\n",
            what.name(),
            show(broke)
        ),
        Found::AboveCeiling { held } => format!(
            "{id}: every {} held, up to {} (the search's ceiling)\n",
            what.name(),
            show(held)
        ),
        Found::OutOfSteps { held, broke } => format!(
            "{id}: no limit within {} steps (held {}, broke {})\n",
            search.steps,
            held.map_or("none".into(), show),
            broke.map_or("none".into(), show)
        ),
    };
    if let Found::Limit { held, .. } = search.found() {
        let (lo, hi, spread) = search.uncertainty();
        let lo = lo.unwrap_or(held);
        let from = match spread {
            Some(r) if r > 0.0 => format!(
                "the steps leave the values between open, and the deciding figure moved {:.0}% between runs of one value",
                100.0 * r
            ),
            _ => "the steps leave the values between open".into(),
        };
        out.push_str(&match hi {
            Some(hi) => format!(
                "  uncertainty: between {} and {} ({}+{:.1}%): {from}\n",
                show(lo),
                show(hi),
                if lo < held {
                    format!("-{:.1}% / ", 100.0 * (1.0 - lo / held))
                } else {
                    String::new()
                },
                100.0 * (hi / held - 1.0)
            ),
            None => format!(
                "  uncertainty: from {} up, with no upper bound: every value that broke also held in another step\n",
                show(lo)
            ),
        });
    }
    if let Some((v, n, why, cause)) = breaking(search, broken) {
        out.push_str(&format!(
            "  broke at {} (step {n}): {why}\n  cause: {cause}\n",
            show(*v)
        ));
    }
    out
}
