//! `run`'s progress: the live line on a terminal (the case, its repetition, the time the
//! plan has left), a line per case in a log, and the intervals printed above it.

use std::time::Instant;
use zmqperf::model::CaseResult;
use zmqperf::progress::{Eta, Live};
use zmqperf::runner::busy::WARNING as BUSY;
use zmqperf::runner::{CaseSpec, Observer};

/// Prints progress on stderr and hands each finished case to `on_case`. On a terminal, a
/// line redrawn four times a second: the case, the repetition and the time left from the
/// plan ([`CaseSpec::planned`]: paced cases at count / rate, guesses corrected by the cases
/// done). Elsewhere (a log) a line per case, the repetitions done every [`LOG_EVERY`],
/// and failures; no time left.
pub struct Progress<'a> {
    eta: Eta,
    current: usize,
    case_started: Instant,
    /// Whether a busy machine was said on stderr already.
    busy_said: bool,
    live: Live,
    label: String,
    /// When the last line was written (not live: a log gets a line per repetition done
    /// at most every [`LOG_EVERY`]).
    last_line: Instant,
    on_case: Box<dyn FnMut(&CaseResult) + 'a>,
}

/// While it lives, intervals are printed ([`Progress::show_intervals`]).
pub struct IntervalsShown;

impl Drop for IntervalsShown {
    fn drop(&mut self) {
        zmqperf::roles::live::set_interval_hook(None);
    }
}

/// How often a log (stderr not a terminal) is told of the repetitions done in a case.
const LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

impl<'a> Progress<'a> {
    /// Watches a plan.
    pub fn new(plan: &[CaseSpec], on_case: impl FnMut(&CaseResult) + 'a) -> Self {
        Progress {
            eta: Eta::new(plan.iter().map(CaseSpec::planned).collect()),
            current: 0,
            busy_said: false,
            case_started: Instant::now(),
            live: Live::on_stderr(),
            label: String::new(),
            last_line: Instant::now(),
            on_case: Box::new(on_case),
        }
    }

    /// With `--interval` (`on`): each interval a receiving node closes is printed as a line
    /// above the progress line, until what this returns is dropped.
    pub fn show_intervals(&self, on: bool) -> Option<IntervalsShown> {
        if !on {
            return None;
        }
        let live = self.live.clone();
        zmqperf::roles::live::set_interval_hook(Some(std::sync::Arc::new(move |node, r| {
            live.log(&zmqperf::report::intervals::line(node, r))
        })));
        Some(IntervalsShown)
    }

    /// Shows `text` with the time the plan has left.
    fn show(&mut self, text: String) {
        let left = self.eta.left_s(self.case_started.elapsed().as_secs_f64());
        let end = Instant::now() + std::time::Duration::from_secs_f64(left);
        self.live.set(text, Some(end));
    }
}

impl Observer for Progress<'_> {
    fn case_started(&mut self, index: usize, total: usize, spec: &CaseSpec) {
        self.eta.started(index);
        self.current = index;
        self.case_started = Instant::now();
        let rate = spec
            .rate
            .map(|r| format!(" at {r:.0} msg/s"))
            .unwrap_or_default();
        self.label = format!(
            "[{}/{}] {} {} {} B{rate}",
            index + 1,
            total,
            spec.pattern(),
            spec.transport,
            spec.size
        );
        if self.live.is_live() {
            self.show(self.label.clone());
        } else {
            self.live.log(&self.label);
        }
        self.last_line = Instant::now();
    }

    fn repetition(&mut self, rep: u32, of: u32) {
        if self.live.is_live() {
            self.show(format!("{} rep {rep}/{of}", self.label));
        } else if rep > 1 && self.last_line.elapsed() >= LOG_EVERY {
            self.last_line = Instant::now();
            let l = format!("{}  {} of {of} repetitions done", self.label, rep - 1);
            self.live.log(&l);
        }
    }

    fn case_done(&mut self, result: &CaseResult) {
        self.eta
            .done(self.current, self.case_started.elapsed().as_secs_f64());
        if let Some(e) = &result.error {
            let l = format!("{}  FAILED: {e}", self.label);
            self.live.log(&l);
        }
        // The first busy machine is said as it happens; the others are in the report.
        if let Some(w) = result.warnings.iter().find(|w| w.starts_with(BUSY)) {
            if !self.busy_said {
                self.busy_said = true;
                self.live.log(&format!(
                    "{}  {w} (the report names it for every case)",
                    self.label
                ));
            }
        }
        (self.on_case)(result);
    }
}

impl Drop for Progress<'_> {
    fn drop(&mut self) {
        self.live.finish();
    }
}
