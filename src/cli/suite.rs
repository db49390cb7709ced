//! `zmqperf run`: the suite, with a live progress line (suite/progress.rs), results stored
//! case by case, and the report at the end.

use clap::Args;
use std::time::Duration;
use zmqperf::endpoint::Transport;
use zmqperf::error::{Error, Result};
use zmqperf::model::{CaseResult, RunStatus, Workload};
use zmqperf::net::security::Mechanism;
use zmqperf::parse::{parse_count, parse_duration, parse_size};
use zmqperf::runner::plan::{self, Scope, Selection};
use zmqperf::runner::{self, CaseSpec, Settings};
use zmqperf::topology::builtin;

use super::output::list;
pub use super::output::{DbArgs, OutArgs};
pub use progress::{IntervalsShown, Progress};

mod progress;

/// Options of `zmqperf run`.
#[derive(Args)]
pub struct RunArgs {
    /// A workload file (TOML or JSON) listing cases and sweeps; see docs/suite.md.
    pub workload: Option<String>,
    /// A short suite: 64 B only, 2 repetitions, half the counts.
    #[arg(long, conflicts_with = "full")]
    pub quick: bool,
    /// The whole sweep: sizes 2 B .. 64 KiB in powers of two.
    #[arg(long)]
    pub full: bool,
    /// Patterns, comma-separated: reqrep, dealerrouter, pair-lat, pushpull, pubsub, pair-thr, fanin
    /// (three PUSH senders into one PULL), pubsub-lossy (see --lossy).
    #[arg(long, value_name = "LIST")]
    pub patterns: Option<String>,
    /// Transports, comma-separated: inproc, ipc, tcp.
    #[arg(long, value_name = "LIST")]
    pub transports: Option<String>,
    /// Message sizes, comma-separated (64,1KiB,64KiB).
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// Round trips (latency) or messages (throughput) per repetition.
    #[arg(long)]
    pub count: Option<String>,
    /// Unmeasured round trips or messages before each repetition.
    #[arg(long)]
    pub warmup: Option<String>,
    /// Repetitions per case (the median is reported).
    #[arg(long)]
    pub repetitions: Option<u32>,
    /// Open loop: send at these rates (msg/s, comma-separated) in the one-way patterns.
    #[arg(long, value_name = "LIST")]
    pub rate: Option<String>,
    /// Security mechanisms, comma-separated: null, plain, curve, gssapi. Each case runs once
    /// per mechanism, side by side (the non-NULL ones over ipc and tcp; inproc has no
    /// handshake), and the report compares each with its NULL twin. GSSAPI needs
    /// --libzmq system and a Kerberos realm with the service zmqperf/localhost
    /// (docs/libzmq.md). Example: --security null,curve
    #[arg(long, value_name = "LIST")]
    pub security: Option<String>,
    /// Implementations that play the measured roles, comma-separated: zmqperf (its own
    /// core) and peers in other languages (pyzmq, node, jeromq, zmq4-go, zmq4-cgo,
    /// ffi-rzmq, c, zeromq-rs; `zmqperf peers list`). Each case runs once per
    /// implementation, side by side, over ipc and tcp. Example: --impl zmqperf,pyzmq
    #[arg(long = "impl", value_name = "LIST")]
    pub implementations: Option<String>,
    /// What CURVE costs: REQ/REP latency and PUSH/PULL throughput over tcp, 64 B .. 64 KiB,
    /// each under NULL and CURVE side by side (the options above narrow or widen it).
    #[arg(long, conflicts_with_all = ["quick", "full", "workload"])]
    pub curve_cost: bool,
    /// Run the suite on this libzmq (A: --libzmq, bundled by default) and on LIB (B:
    /// system or a path), interleaved round by round, record both runs and print B / A
    /// per case with 95% intervals. --repetitions is the number of rounds.
    #[arg(long, value_name = "LIB")]
    pub vs_libzmq: Option<String>,
    /// PUB/SUB as the users' harnesses ran it, beside the lossless case: a plain PUB that
    /// starts without waiting for its subscriber and drops at its high-water mark (the
    /// pattern pubsub-lossy). Its loss is measured and placed: start (slow joiner), middle
    /// and end (high-water mark), with the send and delivered rates.
    #[arg(long)]
    pub lossy: bool,
    /// Free text recorded with the run and shown with its environment: what was special
    /// about it (e.g. "after the kernel upgrade", "NIC offloads off").
    #[arg(long, value_name = "TEXT")]
    pub note: Option<String>,
    /// Longest wait for a peer, per message.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub timeout: String,
    /// Longest a repetition may take before its roles are stopped.
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub case_timeout: String,
    /// Time-stamp every N-th message of a full-speed stream.
    #[arg(long, default_value = "16", value_name = "N")]
    pub stamp_every: String,
    /// Skip the raw-socket floor of latency cases.
    #[arg(long)]
    pub no_floor: bool,
    /// Hosts that topology nodes may be placed on (`host = "b"`): a TOML file of
    /// [hosts.NAME] tables, each a launcher (ssh, srun, exec, launch) and an addr
    /// (docs/hosts.md).
    #[arg(long, value_name = "FILE")]
    pub hosts: Option<String>,
    /// Run every case once per ordered pair of these hosts (of --hosts), the sending side
    /// (client, source) on the first and the answering side (server, sink) on the second:
    /// the host-pair table of `zmqperf show`. Example: --host-pairs a,b,c (six pairs).
    #[arg(long, value_name = "LIST", requires = "hosts")]
    pub host_pairs: Option<String>,
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not record this run in the history.
    #[arg(long)]
    pub no_history: bool,
    /// Check everything and print the cases it would run, each with its planned time, then
    /// stop: nothing is measured or recorded (the workload, the flags, the peers and the
    /// output file are checked as for a run).
    #[arg(long)]
    pub dry_run: bool,
    /// Figures per interval of this length (e.g. 1s): each receiving node's delivered
    /// rate, latency percentiles, loss and CPU, printed live (a line per interval and
    /// node) and stored with the case, with a verdict on whether latency or loss drift over
    /// the run. Latency needs the measurement header (messages of 24 B or more).
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<String>,
    /// Each case's length in time instead of --count: its messages are its offered rate
    /// (--rate) times this (e.g. 30s). Example: --rate 10000 --duration 30s --interval 1s
    #[arg(long, value_name = "DURATION", conflicts_with = "count")]
    pub duration: Option<String>,
    /// Search each throughput case for its limit instead of measuring it once: max-rate,
    /// the highest offered rate (open loop) that holds --slo; max-size, the largest
    /// message (at --rate if given, else at full speed). From --rate (or 1,000 msg/s) or
    /// --sizes the value doubles until a step breaks the service level, then bisects to
    /// 5%; at the boundary the value held last and the lowest broken run three times each
    /// (a limit holds every run). Each step runs 1 s of messages. docs/limits.md
    #[arg(long, value_name = "WHAT", value_parser = ["max-rate", "max-size"], conflicts_with_all = ["dry_run", "vs_libzmq", "curve"])]
    pub find: Option<String>,
    /// Latency under load instead of one measurement: each throughput case at an offered
    /// rate (open loop) that rises by half each step, from --rate (or 1,000 msg/s), 1 s of
    /// messages a step, until a step breaks --slo; the curve (offered vs delivered, p50,
    /// p99 and max) as a table with its knee marked, kept with the run and drawn in the
    /// HTML report. Example: --patterns pushpull --transports tcp --curve --slo
    /// "loss=0,p99<=5ms". docs/limits.md
    #[arg(long, conflicts_with_all = ["dry_run", "vs_libzmq"])]
    pub curve: bool,
    /// The service level a step of --find or --curve must hold: loss=N (messages lost, default 0),
    /// p99<=DURATION (not bound by default), delivered>=PERCENT% (of the offered rate,
    /// default 95%), comma-separated.
    #[arg(long, value_name = "LEVEL", default_value = "loss=0")]
    pub slo: String,
    /// After --find found a limit: try the settings that may move it (high-water marks,
    /// kernel socket buffers, ZMQ_XPUB_NODROP for a loss, poll vs blocking calls; over
    /// multicast also ZMQ_RATE, ZMQ_RECOVERY_IVL and ZMQ_MULTICAST_HOPS), one at a
    /// time and then the ones that helped together, each searched the same way; their
    /// gains on the limit with intervals, best first, and the tuned topology to save and
    /// run. docs/limits.md
    #[arg(long, requires = "find")]
    pub tune: bool,
}

/// The settings every case of `run` runs with.
fn settings(a: &RunArgs) -> Result<Settings> {
    Ok(Settings {
        timeout: parse_duration("--timeout", &a.timeout)?,
        case_timeout: parse_duration("--case-timeout", &a.case_timeout)?,
        exe: zmqperf::runner::this_exe()?,
        stamp_every: parse_count("--stamp-every", &a.stamp_every)?,
        floor: !a.no_floor,
        interval: a
            .interval
            .as_deref()
            .map(|i| parse_duration("--interval", i))
            .transpose()?,
        hosts: match &a.hosts {
            Some(f) => zmqperf::runner::hosts::Hosts::load(f)?,
            None => Default::default(),
        },
    })
}

/// The cases chosen by the options (before a workload file or the defaults fill them in).
fn selection(a: &RunArgs) -> Result<Selection> {
    Ok(Selection {
        patterns: list(&a.patterns, builtin::parse_name)?,
        transports: list(&a.transports, plan::parse_transport)?,
        sizes: list(&a.sizes, |s| parse_size("--sizes", s))?,
        security: list(&a.security, |m| Mechanism::parse("--security", m))?,
        impls: list(&a.implementations, |m| {
            zmqperf::peers::canonical_for("--impl", m)
        })?,
        count: a
            .count
            .as_deref()
            .map(|c| parse_count("--count", c))
            .transpose()?,
        warmup: a
            .warmup
            .as_deref()
            .map(|w| {
                if w == "0" {
                    Ok(0)
                } else {
                    parse_count("--warmup", w)
                }
            })
            .transpose()?,
        repetitions: match a.repetitions {
            Some(0) => return Err(Error::invalid("--repetitions", "0", "must be at least 1")),
            r => r,
        },
        rates: list(&a.rate, |r| {
            r.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x > 0.0)
                .ok_or_else(|| Error::invalid("--rate", r, "a rate in msg/s above 0, e.g. 10000"))
        })?,
    })
}

/// --lossy and --curve-cost: the patterns, transports, sizes and mechanisms they add.
fn widen(a: &RunArgs, sel: &mut Selection) {
    if a.lossy {
        let mut p = sel
            .patterns
            .take()
            .unwrap_or_else(|| builtin::SUITE.to_vec());
        if !p.contains(&"pubsub-lossy") {
            match p.iter().position(|&x| x == "pubsub") {
                Some(i) => p.insert(i + 1, "pubsub-lossy"),
                None => p.push("pubsub-lossy"),
            }
        }
        sel.patterns = Some(p);
    }
    if a.curve_cost {
        sel.patterns
            .get_or_insert_with(|| vec!["reqrep", "pushpull"]);
        sel.transports.get_or_insert_with(|| vec![Transport::Tcp]);
        sel.sizes
            .get_or_insert_with(|| vec![64, 1024, 16 * 1024, 64 * 1024]);
        sel.security
            .get_or_insert_with(|| vec![Mechanism::Null, Mechanism::Curve]);
    }
}

/// Builds the plan and settings from the options.
pub fn plan(a: &RunArgs) -> Result<(Vec<CaseSpec>, Option<Workload>, Settings)> {
    let settings = settings(a)?;
    let scope = if a.quick {
        Scope::Quick
    } else if a.full {
        Scope::Full
    } else {
        Scope::Default
    };
    let mut sel = selection(a)?;
    widen(a, &mut sel);
    if sel.security.as_ref().is_some_and(|m| {
        m.iter().any(|&x| x != Mechanism::Null)
            && sel
                .transports
                .as_ref()
                .is_some_and(|t| t.iter().all(|&t| t == Transport::Inproc))
    }) {
        return Err(Error::invalid(
            "--security",
            a.security.as_deref().unwrap_or("curve"),
            "inproc has no security handshake; add ipc or tcp to --transports",
        ));
    }
    if let Some(path) = &a.workload {
        let text = zmqperf::parse::read_text_file("workload file", path)?;
        let plan = plan::from_file_with(path, &text, &sel)?;
        let plan = match &a.host_pairs {
            Some(list) => plan::over_host_pairs(plan, &settings.hosts, list)?,
            None => plan,
        };
        return Ok((
            plan,
            // Kept with the run and shown in its reports: CURVE secrets redacted.
            Some(Workload {
                path: path.clone(),
                text: zmqperf::net::security::redact_secrets(&text),
            }),
            settings,
        ));
    }
    let plan = plan::from_selection(scope, &sel);
    // A transport none of the chosen patterns' socket types runs on is named, with where
    // it runs (tcp, ipc and inproc carry every type; a case left out for other reasons,
    // such as a peer's inproc, is said by the plan's own check).
    let classic = [Transport::Tcp, Transport::Ipc, Transport::Inproc];
    for t in sel
        .transports
        .iter()
        .flatten()
        .filter(|t| !classic.contains(t))
    {
        if !plan.iter().any(|c| c.transport == *t) {
            let why = match t {
                Transport::Udp => "udp:// carries only RADIO and DISH (the draft API): run a topology file of them (examples/topologies/radio-dish.toml)".to_string(),
                t if t.is_multicast() => format!("{t}:// carries only PUB, SUB, XPUB and XSUB: choose --patterns pubsub, or run a topology file (examples/topologies/pubsub-epgm.toml)"),
                _ => "the chosen patterns' socket types cannot use it".to_string(),
            };
            return Err(Error::invalid(
                "--transports",
                t.name(),
                format!("no pattern of the suite runs on {t}: {why}; see docs/transports.md"),
            ));
        }
    }
    let plan = match &a.host_pairs {
        Some(list) => plan::over_host_pairs(plan, &settings.hosts, list)?,
        None => plan,
    };
    Ok((plan, None, settings))
}

/// The plan of `run` and `run --find`, checked (what it measures, its peers, the output
/// file), with `--duration` applied; None once `--dry-run` has printed it.
pub fn checked_plan(a: &RunArgs, command: &str) -> Result<Option<Planned>> {
    let (mut plan, workload, settings) = plan(a)?;
    if let Some(d) = &a.duration {
        for_duration(&mut plan, parse_duration("--duration", d)?)?;
    }
    plan::check_measures(&plan, command)?;
    runner::check_peers(&plan)?;
    a.out.check(Some(&a.db.path()))?;
    if a.dry_run {
        print!(
            "{}",
            zmqperf::term::fit(&dry_run(&plan, a.vs_libzmq.as_deref()))
        );
        return Ok(None);
    }
    Ok(Some((plan, workload, settings)))
}

/// A run's cases, its workload file (if any) and its settings.
pub type Planned = (Vec<CaseSpec>, Option<Workload>, Settings);

/// `--duration`: each case's count is its offered rate times `d`; a case at full speed has
/// no rate to take it from, and is refused, naming it.
fn for_duration(plan: &mut [CaseSpec], d: Duration) -> Result<()> {
    for c in plan.iter_mut() {
        let Some(rate) = c.rate else {
            return Err(Error::invalid(
                "--duration",
                &zmqperf::error::fmt_duration(d),
                format!(
                    "case {} runs at full speed, whose length is its --count; give --rate (an offered rate, msg/s) to run for a time, or --count",
                    c.id()
                ),
            ));
        };
        c.count = ((rate * d.as_secs_f64()).round() as u64).max(1);
    }
    Ok(())
}

/// `run --dry-run`: the cases of `plan` in order, each with its kind and its planned time
/// ([`CaseSpec::planned`]: a paced case's count / rate, a guess for the rest), and the total;
/// with `--vs-libzmq`, every case runs on both libraries.
fn dry_run(plan: &[CaseSpec], vs: Option<&str>) -> String {
    use std::fmt::Write as _;
    let secs = |p: zmqperf::progress::Planned| p.fixed_s + p.guess_s;
    let both = if vs.is_some() { 2.0 } else { 1.0 };
    let total: f64 = plan.iter().map(|c| secs(c.planned())).sum::<f64>() * both;
    let mut out = format!(
        "dry run: {} case{}, about {} planned{}; nothing measured, nothing recorded\n",
        plan.len(),
        if plan.len() == 1 { "" } else { "s" },
        zmqperf::error::fmt_duration(Duration::from_secs_f64(total)),
        vs.map(|l| format!(" (each case on this libzmq and on {l}, alternating)"))
            .unwrap_or_default()
    );
    let width = plan.iter().map(|c| c.id().len()).max().unwrap_or(0);
    for (i, c) in plan.iter().enumerate() {
        let kind = if c.is_latency() {
            "latency"
        } else {
            "throughput"
        };
        let _ = writeln!(
            out,
            "{:>4}. {:<width$}  {kind:<10}  {} repetition{}, about {}",
            i + 1,
            c.id(),
            c.repetitions,
            if c.repetitions == 1 { "" } else { "s" },
            zmqperf::error::fmt_duration(Duration::from_secs_f64(secs(c.planned()) * both))
        );
    }
    out
}

/// `zmqperf run`: plans, runs, records each case in the history as soon as it is done,
/// and prints the report (a partial one after Ctrl-C).
pub fn run(a: &RunArgs, command: String) -> Result<()> {
    let Some((plan, workload, settings)) = checked_plan(a, &command)? else {
        return Ok(());
    };
    let mut run = runner::new_run(command, workload);
    run.environment.note = a.note.clone();
    run.environment.network = runner::network(&plan);
    let mut session = a.db.session(a.no_history, &run)?;
    runner::catch_signals();
    {
        let mut progress = Progress::new(&plan, |case: &CaseResult| session.case_done(case));
        let _shown = progress.show_intervals(settings.interval.is_some());
        runner::run_suite(&mut run, &plan, &settings, &mut progress);
    }
    let recorded = session.finish(&run);
    // The report is printed whatever became of the history: nothing measured is lost.
    let emitted = a.out.emit(&run, session.path());
    recorded?;
    emitted?;
    session.announce()?;
    if run.status == RunStatus::Interrupted {
        let partial = run.cases.iter().filter(|c| c.incomplete.is_some()).count();
        return Err(Error::Interrupted(format!(
            "by {}: {} of {} cases done and recorded{}",
            runner::interrupted_by(),
            run.cases.len() - partial,
            plan.len(),
            if partial > 0 {
                format!(", and {partial} kept in part (the repetitions finished before it)")
            } else {
                String::new()
            }
        )));
    }
    if !run.cases.is_empty() && run.cases.iter().all(|c| c.error.is_some()) {
        return Err(Error::AllFailed(format!(
            "every case failed ({}); the reasons are in the report",
            run.cases.len()
        )));
    }
    let failed: Vec<&str> = run
        .cases
        .iter()
        .filter(|c| c.error.is_some())
        .map(|c| c.id.as_str())
        .collect();
    if !failed.is_empty() {
        return Err(Error::SomeFailed(format!(
            "{} of {} cases failed ({}); the others are measured and recorded, the reasons are in the report",
            failed.len(),
            run.cases.len(),
            failed.join(", ")
        )));
    }
    Ok(())
}
