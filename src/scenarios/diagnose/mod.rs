//! `zmqperf diagnose`: short experiments that reproduce the ways ZeroMQ loses or delays
//! messages (slow joiner, high-water mark, fast quit, a sender that stops, deep queues)
//! and turn each into a [`Finding`]: what happened in words with the measured numbers,
//! the evidence, the cause and the remedy.
//!
//! Every experiment runs on loopback with ephemeral endpoints, in bounded time: sockets
//! live on threads of this process, except where the phenomenon needs a process of its
//! own (a sender that exits, a sender whose memory is measured): there the source role
//! runs in a child process (`zmqperf __node`), driven over the control protocol.

pub mod cause;
mod deep_queue;
mod fast_quit;
mod hwm;
pub mod listen;
mod nodes;
mod sender;
mod sender_stops;
mod slow_joiner;
mod stream;

use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::model::{Finding, Measure, Severity, TimedGap, Triage};
use crate::units::grouped;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The experiments, as `--only` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Experiment {
    /// Messages lost at the start of PUB/SUB, and the remedies.
    SlowJoiner,
    /// PUB drops vs PUSH blocks at the high-water mark; memory with no high-water mark.
    Hwm,
    /// Messages lost when the sender exits right after sending (PUSH/PULL and PAIR).
    FastQuit,
    /// A receiver noticing, by its timeout, that its sender went quiet.
    SenderStops,
    /// Latency growth as a slower consumer falls behind.
    DeepQueue,
}

impl Experiment {
    /// Every experiment, in the order they run.
    pub const ALL: [Experiment; 5] = [
        Experiment::SlowJoiner,
        Experiment::Hwm,
        Experiment::FastQuit,
        Experiment::SenderStops,
        Experiment::DeepQueue,
    ];

    /// The name used by `--only` and in finding ids.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::SlowJoiner => "slow-joiner",
            Experiment::Hwm => "hwm",
            Experiment::FastQuit => "fast-quit",
            Experiment::SenderStops => "sender-stops",
            Experiment::DeepQueue => "deep-queue",
        }
    }

    /// An experiment by name (`slow_joiner` and `slowjoiner` are accepted too).
    pub fn parse(s: &str) -> Result<Experiment> {
        let want: String = s
            .trim()
            .to_ascii_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect();
        Experiment::ALL
            .into_iter()
            .find(|e| e.name().replace('-', "") == want)
            .ok_or_else(|| {
                let names: Vec<&str> = Experiment::ALL.iter().map(|e| e.name()).collect();
                Error::invalid(
                    "experiment",
                    s,
                    format!("use one or more of {}", names.join(", ")),
                )
            })
    }
}

/// What `zmqperf diagnose` runs, and how.
#[derive(Debug, Clone)]
pub struct Config {
    /// The experiments to run, in [`Experiment::ALL`] order.
    pub experiments: Vec<Experiment>,
    /// The transports, in the order given (default tcp, ipc, inproc). Experiments that run
    /// once use the first suitable one.
    pub transports: Vec<Transport>,
    /// Smaller experiments (fewer messages, fewer variants, shorter timeouts).
    pub quick: bool,
    /// The zmqperf binary, re-executed for the experiments that need a sender process.
    pub exe: PathBuf,
    /// Longest wait for any one event of an experiment (a peer, a message, a process).
    pub timeout: Duration,
}

impl Config {
    /// All experiments over tcp, ipc and inproc.
    pub fn new(exe: PathBuf) -> Config {
        Config {
            experiments: Experiment::ALL.to_vec(),
            transports: vec![Transport::Tcp, Transport::Ipc, Transport::Inproc],
            quick: false,
            exe,
            timeout: Duration::from_secs(5),
        }
    }
}

/// What one step of the plan does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// [`Experiment::SlowJoiner`] over one transport.
    SlowJoiner,
    /// [`Experiment::Hwm`]: PUB drops vs PUSH blocks over one transport.
    HwmDropOrBlock,
    /// [`Experiment::Hwm`]: the memory of a sender with no high-water mark (a process).
    HwmMemory,
    /// [`Experiment::FastQuit`] with PUSH/PULL (a sender process).
    FastQuitPushPull,
    /// [`Experiment::FastQuit`] with PAIR (a sender process).
    FastQuitPair,
    /// [`Experiment::SenderStops`] over one transport.
    SenderStops,
    /// [`Experiment::DeepQueue`] over one transport.
    DeepQueue,
}

impl Part {
    /// The experiment this part belongs to.
    pub fn experiment(self) -> Experiment {
        match self {
            Part::SlowJoiner => Experiment::SlowJoiner,
            Part::HwmDropOrBlock | Part::HwmMemory => Experiment::Hwm,
            Part::FastQuitPushPull | Part::FastQuitPair => Experiment::FastQuit,
            Part::SenderStops => Experiment::SenderStops,
            Part::DeepQueue => Experiment::DeepQueue,
        }
    }

    /// A short label for progress lines.
    pub fn label(self) -> &'static str {
        match self {
            Part::SlowJoiner => "slow joiner",
            Part::HwmDropOrBlock => "high-water mark: PUB drops, PUSH blocks",
            Part::HwmMemory => "high-water mark: sender memory",
            Part::FastQuitPushPull => "fast quit: PUSH/PULL",
            Part::FastQuitPair => "fast quit: PAIR",
            Part::SenderStops => "sender stops",
            Part::DeepQueue => "deep queue",
        }
    }
}

/// One step: a part of an experiment over a transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// What it does.
    pub part: Part,
    /// Over which transport.
    pub transport: Transport,
}

/// The steps of `cfg`, and a note for each experiment part left out (a part that needs a
/// sender process cannot use inproc).
pub fn plan(cfg: &Config) -> (Vec<Step>, Vec<String>) {
    let mut steps = Vec::new();
    let mut notes = Vec::new();
    let process_transport = cfg
        .transports
        .iter()
        .copied()
        .find(|t| *t != Transport::Inproc);
    let each = |part: Part, steps: &mut Vec<Step>| {
        for &transport in &cfg.transports {
            steps.push(Step { part, transport });
        }
    };
    let needs_process = |part: Part, steps: &mut Vec<Step>, notes: &mut Vec<String>| {
        match process_transport {
            Some(transport) => steps.push(Step { part, transport }),
            None => notes.push(format!(
                "{} left out: it needs a sender process, which inproc cannot reach; add tcp or ipc to --transports",
                part.label()
            )),
        }
    };
    for e in Experiment::ALL {
        if !cfg.experiments.contains(&e) {
            continue;
        }
        match e {
            Experiment::SlowJoiner => each(Part::SlowJoiner, &mut steps),
            Experiment::Hwm => {
                each(Part::HwmDropOrBlock, &mut steps);
                needs_process(Part::HwmMemory, &mut steps, &mut notes);
            }
            Experiment::FastQuit => {
                needs_process(Part::FastQuitPushPull, &mut steps, &mut notes);
                needs_process(Part::FastQuitPair, &mut steps, &mut notes);
            }
            Experiment::SenderStops => each(Part::SenderStops, &mut steps),
            Experiment::DeepQueue => {
                if let Some(&transport) = cfg.transports.first() {
                    steps.push(Step {
                        part: Part::DeepQueue,
                        transport,
                    });
                }
            }
        }
    }
    (steps, notes)
}

/// What `run` tells whoever watches it.
pub trait Observer {
    /// Step `index` (from 0) of `total` is about to run.
    fn started(&mut self, index: usize, total: usize, step: &Step);
    /// A finding is ready (recorded at once by the caller).
    fn finding(&mut self, finding: &Finding);
}

/// Runs the steps in order, handing each finding to the observer as soon as it is made.
/// Stops early, keeping what is done, when the run is interrupted (Ctrl-C).
pub fn run(cfg: &Config, steps: &[Step], obs: &mut dyn Observer) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if crate::interrupt::interrupted() {
            break;
        }
        obs.started(i, steps.len(), step);
        for f in run_step(cfg, step) {
            obs.finding(&f);
            out.push(f);
        }
    }
    out
}

/// Runs one step. An experiment that cannot run to its end gives a finding that says why.
pub fn run_step(cfg: &Config, step: &Step) -> Vec<Finding> {
    let started = Instant::now();
    let t = step.transport;
    let result = match step.part {
        Part::SlowJoiner => slow_joiner::run(cfg, t).map(|f| vec![f]),
        Part::HwmDropOrBlock => hwm::drop_or_block(cfg, t).map(|f| vec![f]),
        Part::HwmMemory => hwm::memory(cfg, t).map(|f| vec![f]),
        Part::FastQuitPushPull => {
            fast_quit::run(cfg, t, fast_quit::Pattern::PushPull).map(|f| vec![f])
        }
        Part::FastQuitPair => fast_quit::run(cfg, t, fast_quit::Pattern::Pair).map(|f| vec![f]),
        Part::SenderStops => sender_stops::run(cfg, t).map(|f| vec![f]),
        Part::DeepQueue => deep_queue::run(cfg, t).map(|f| vec![f]),
    };
    let wall_s = started.elapsed().as_secs_f64();
    match result {
        Ok(mut fs) => {
            for f in &mut fs {
                f.wall_s = wall_s;
            }
            fs
        }
        Err(e) => vec![failed(step, &e.to_string(), wall_s)],
    }
}

/// The finding of a step that could not run to its end.
fn failed(step: &Step, why: &str, wall_s: f64) -> Finding {
    let e = step.part.experiment();
    let mut f = FindingDraft::new(
        &format!("{}/{}", id_of(step.part), step.transport),
        step.part,
        step.transport,
    );
    f.severity = Severity::Warning;
    f.title = format!(
        "{} over {}: the experiment could not finish",
        step.part.label(),
        step.transport
    );
    f.observed = format!("The {} experiment stopped early: {why}", e.name());
    f.cause = "The experiment itself failed (a socket error, a timeout, or a sender process \
               that could not start); no conclusion about ZeroMQ can be drawn from it."
        .to_string();
    f.remedy = "Run it again alone (zmqperf diagnose --only NAME); if it keeps failing, raise \
                --timeout or report the message."
        .to_string();
    let mut f = f.finish();
    f.error = Some(why.to_string());
    f.wall_s = wall_s;
    f
}

/// The id prefix of a part's findings.
fn id_of(part: Part) -> &'static str {
    match part {
        Part::HwmMemory => "hwm-memory",
        Part::FastQuitPushPull => "fast-quit/pushpull",
        Part::FastQuitPair => "fast-quit/pair",
        other => other.experiment().name(),
    }
}

/// A finding being written: the experiments fill it in, [`FindingDraft::finish`] seals it.
pub(crate) struct FindingDraft {
    pub id: String,
    pub experiment: &'static str,
    pub transport: Transport,
    pub severity: Severity,
    pub title: String,
    pub observed: String,
    pub cause: String,
    pub remedy: String,
    pub evidence: BTreeMap<String, Measure>,
    pub gaps: Vec<TimedGap>,
    pub triage: Option<Triage>,
}

impl FindingDraft {
    /// An empty finding with its id, experiment and transport.
    pub fn new(id: &str, part: Part, transport: Transport) -> FindingDraft {
        let experiment = match part {
            Part::HwmMemory => "hwm-memory",
            other => other.experiment().name(),
        };
        FindingDraft::of(id, experiment, transport)
    }

    /// An empty finding of `experiment` (a name the JSON schema lists).
    pub fn of(id: &str, experiment: &'static str, transport: Transport) -> FindingDraft {
        FindingDraft {
            id: id.to_string(),
            experiment,
            transport,
            severity: Severity::Info,
            title: String::new(),
            observed: String::new(),
            cause: String::new(),
            remedy: String::new(),
            evidence: BTreeMap::new(),
            gaps: Vec::new(),
            triage: None,
        }
    }

    /// Sets the finding's triage line: its cause, the messages lost to it, how often it was
    /// seen (in `unit`s) and the fix in one line.
    pub fn triage(&mut self, cause: &str, lost: u64, count: u64, unit: &str, fix: &str) {
        self.triage = Some(Triage {
            cause: cause.to_string(),
            lost,
            count,
            unit: unit.to_string(),
            fix: fix.to_string(),
        });
    }

    /// Adds a measured value.
    pub fn put(&mut self, name: &str, value: impl Into<Measure>) {
        self.evidence.insert(name.to_string(), value.into());
    }

    /// Adds the loss ledger of a stream: received, lost (and where), duplicated, reordered,
    /// each name prefixed with `prefix` (empty for the main stream).
    pub fn put_ledger(&mut self, prefix: &str, s: &crate::stats::LossSummary) {
        self.put(&format!("{prefix}received"), s.received);
        self.put(&format!("{prefix}lost_at_start"), s.lost_at_start);
        self.put(&format!("{prefix}lost_in_middle"), s.lost_in_middle);
        self.put(&format!("{prefix}lost_at_end"), s.lost_at_end);
        self.put(&format!("{prefix}duplicated"), s.duplicated);
        self.put(&format!("{prefix}reordered"), s.reordered);
    }

    /// The finished finding (wall time and error are set by the runner).
    pub fn finish(self) -> Finding {
        Finding {
            id: self.id,
            experiment: self.experiment.to_string(),
            transport: self.transport,
            severity: self.severity,
            title: self.title,
            observed: self.observed,
            cause: self.cause,
            remedy: self.remedy,
            evidence: self.evidence,
            gaps: self.gaps,
            wall_s: 0.0,
            error: None,
            triage: self.triage,
        }
    }
}

/// `1,797 messages` / `1 message`.
pub(crate) fn messages(n: u64) -> String {
    format!("{} message{}", grouped(n), if n == 1 { "" } else { "s" })
}

/// A duration in ms as a person reads it: `0.21 ms`, `2.7 ms`, `561 ms`, `1.2 s`.
pub(crate) fn ms(v: f64) -> String {
    if !v.is_finite() {
        "-".to_string()
    } else if v >= 1000.0 {
        format!("{:.1} s", v / 1000.0)
    } else if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

/// Nanoseconds to milliseconds, rounded to a microsecond (the evidence keeps ms).
pub(crate) fn ns_to_ms(ns: u64) -> f64 {
    (ns as f64 / 1000.0).round() / 1000.0
}

/// Rounds a figure to three decimals for the evidence.
pub(crate) fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests;
