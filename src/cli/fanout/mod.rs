//! `zmqperf pub`, `zmqperf sub-cluster` and `zmqperf fanout`: the fan-out commands, with
//! the flags of seed 002's Node harness (`-t -n -p -h`, `-c -n`), turned into validated
//! library configs, run, and printed.

mod args;
mod check;
mod find;

pub use args::{FanoutArgs, PubArgs, SubClusterArgs, FANOUT_EXAMPLES, PUB_EXAMPLES, SUB_EXAMPLES};

use super::output::PrintArgs;
use super::suite::DbArgs;
use args::TransportArg;
use check::{endpoint, exe, number, procs, pub_config, small, spread};
use std::sync::Arc;
use std::time::Duration;
use zmqperf::endpoint::{Endpoint, Side, Transport};
use zmqperf::error::{Error, Result};
use zmqperf::parse::{parse_duration, parse_hwm};
use zmqperf::progress::Live;
use zmqperf::scenarios::fanout::{self, ClusterConfig, FanoutConfig, FanoutReport};

fn note(line: String) {
    zmqperf::errln!("zmqperf: {line}");
}

/// The notes of a fan-out run, written through the live progress line.
fn live_notes(live: &Live) -> fanout::Note {
    let live = live.clone();
    Arc::new(move |l: String| live.log(&format!("zmqperf: fanout: {l}")))
}

/// When `runs` fan-out runs planned as `planned` end, from now.
fn planned_end(planned: zmqperf::progress::Planned, runs: u32) -> std::time::Instant {
    let p = planned.times(runs);
    std::time::Instant::now() + Duration::from_secs_f64(p.fixed_s + p.guess_s)
}

/// A fan-out report as a run of one case: what the history keeps, and what `--format`
/// markdown, html and csv print.
fn as_run(r: &FanoutReport, wall_s: f64) -> zmqperf::model::RunResult {
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let mut run = zmqperf::runner::new_run(command, None);
    run.cases.push(fanout::to_case(r, wall_s));
    zmqperf::runner::finish(&mut run, zmqperf::model::RunStatus::Complete);
    run
}

/// Records the run in the history (unless `--no-history`), so `zmqperf show` and
/// `zmqperf compare` work on it.
fn record(db: &DbArgs, no_history: bool, run: &zmqperf::model::RunResult) -> Result<()> {
    if no_history {
        return Ok(());
    }
    // Begun as it was when the fan-out ended: running, no case yet.
    let mut begun = run.clone();
    begun.cases.clear();
    begun.finished_at = None;
    begun.status = zmqperf::model::RunStatus::Running;
    let mut session = db.session(false, &begun)?;
    // As `run` records: a lock is waited out, a full disk is named, the run marked partial.
    session.keep(&run.cases);
    session.finish(run)?;
    session.announce()
}

/// Prints a fan-out's report as `--format` asks (its text, its JSON, or the run's report)
/// to stdout or `-o`; then the exit its delivery calls for.
fn emit(
    r: &FanoutReport,
    run: &zmqperf::model::RunResult,
    print: &PrintArgs,
    db: &DbArgs,
) -> Result<()> {
    use zmqperf::report::Format;
    let text = match print.chosen("fanout", true)? {
        Format::Table => zmqperf::report::fanout::text(r),
        Format::Json => zmqperf::report::json::envelope(
            &r.command,
            Some(&zmqperf::report::json::RunInfo::of(run)),
            Some(&run.environment),
            r,
            false,
        ),
        f => zmqperf::report::render(run, f),
    };
    print.print(&text, Some(&db.path()))?;
    if zmqperf::runner::interrupted() {
        // A signal: what arrived is printed and recorded above; the exit says why it ended.
        return Err(Error::Interrupted(
            r.incomplete()
                .unwrap_or_else(|| "the stream was over before the signal".into()),
        ));
    }
    if r.lossy && r.delivery.lost > 0 && r.failure().is_none() {
        zmqperf::errln!(
            "zmqperf: note: --lossy: {} of {} messages were dropped, as measured above (exit 0: loss is what --lossy measures; without it a loss is exit 12). Likely cause: {}",
            zmqperf::units::grouped(r.delivery.lost),
            zmqperf::units::grouped(r.delivery.expected),
            r.loss_cause()
        );
    }
    match r.failure() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// `zmqperf pub`.
pub fn run_pub(a: &PubArgs) -> Result<()> {
    a.print.check("pub", false, None)?;
    zmqperf::runner::catch_signals();
    let ep = endpoint(&a.host, Side::Bind)?;
    let mut cfg = pub_config(&a.schedule, ep, &a.timeout)?;
    cfg.subscribers = a
        .subs
        .as_deref()
        .map(|s| {
            number(
                "--subs",
                s,
                false,
                "wait for at least 1 subscriber, or leave --subs out",
            )
        })
        .transpose()?;
    cfg.wait = parse_duration("--wait", &a.wait)?;
    cfg.linger = parse_duration("--linger", &a.linger)?;
    cfg.hwm = a.hwm.as_deref().map(parse_hwm).transpose()?;
    let r = fanout::publish(cfg, &mut |l| note(format!("pub: {l}")))?;
    let text = match a.print.chosen("pub", false)? {
        zmqperf::report::Format::Json => zmqperf::report::json::envelope(
            "pub",
            None,
            Some(&zmqperf::report::compat::CompatEnvironment::here(None)),
            &r,
            false,
        ),
        _ => zmqperf::report::fanout::publisher_text(&r),
    };
    a.print.print(&text, None)?;
    if let Some(why) = &r.interrupted {
        return Err(Error::Interrupted(why.clone()));
    }
    if r.subscribers == 0 {
        return Err(Error::Shortfall(format!(
            "no subscriber had subscribed to {} when the first tick went out (after --wait {}): the {} messages went nowhere. Start the subscribers first, or give --subs N to wait for them",
            r.endpoint,
            zmqperf::error::fmt_duration(parse_duration("--wait", &a.wait)?),
            r.messages
        )));
    }
    if r.left_early > 0 {
        return Err(Error::Shortfall(format!(
            "{} of {} subscribers left {} before the last message (died, stopped or gave up part-way); the subscriber side knows what each got",
            r.left_early,
            r.subscribers,
            r.endpoint
        )));
    }
    Ok(())
}

/// `zmqperf sub-cluster`.
pub fn run_sub_cluster(a: &SubClusterArgs) -> Result<()> {
    a.print.check("sub-cluster", true, Some(&a.db.path()))?;
    zmqperf::runner::catch_signals();
    let cfg = ClusterConfig {
        endpoint: endpoint(&a.host, Side::Connect)?,
        processes: procs(&a.procs)?,
        subs_per_process: small(
            "-n",
            &a.subs,
            fanout::MAX_SUBS_PER_PROCESS,
            "give at least 1 subscriber per process",
        )?,
        first_timeout: parse_duration("--timeout", &a.timeout)?,
        idle: parse_duration("--idle", &a.idle)?,
        expect: a
            .expect
            .as_deref()
            .map(|s| number("--expect", s, false, "expect at least 1 message"))
            .transpose()?,
        hwm: a.hwm.as_deref().map(parse_hwm).transpose()?,
        exe: exe()?,
        subs_flag: "-n",
        implementation: None,
        spread: spread(&a.spread)?,
    };
    let started = std::time::Instant::now();
    let r = fanout::sub_cluster(&cfg, &mut |l| note(format!("sub-cluster: {l}")))?;
    // The report is printed whatever became of the history: nothing measured is lost.
    let run = as_run(&r, started.elapsed().as_secs_f64());
    let recorded = record(&a.db, a.no_history, &run);
    let printed = emit(&r, &run, &a.print, &a.db);
    recorded?;
    printed
}

/// Where the fan-out's publisher binds: the endpoint given (its transport checked against
/// --transport), else one on this host of the transport asked for, and the socket file of
/// an ipc endpoint made up here (removed at the end).
fn fanout_endpoint(a: &FanoutArgs) -> Result<(Endpoint, Option<std::path::PathBuf>)> {
    let mut ipc_file = None;
    let ep = match &a.host {
        Some(h) => {
            let ep = endpoint(h, Side::Bind)?;
            let wanted = a.transport.map(|t| match t {
                TransportArg::Tcp => Transport::Tcp,
                TransportArg::Ipc => Transport::Ipc,
            });
            if let Some(w) = wanted.filter(|w| *w != ep.transport()) {
                return Err(Error::invalid(
                    "--transport",
                    &w.to_string(),
                    format!(
                        "the endpoint {h} is {}; give one or the other",
                        ep.transport()
                    ),
                ));
            }
            ep
        }
        None => match a.transport.unwrap_or(TransportArg::Tcp) {
            TransportArg::Tcp => endpoint("tcp://127.0.0.1:*", Side::Bind)?,
            TransportArg::Ipc => {
                let path = std::env::temp_dir()
                    .join(format!("zmqperf-fanout-{}.sock", std::process::id()));
                let ep = endpoint(&format!("ipc://{}", path.display()), Side::Bind)?;
                ipc_file = Some(path);
                ep
            }
        },
    };
    Ok((ep, ipc_file))
}

/// `zmqperf fanout`.
pub fn run_fanout(a: &FanoutArgs) -> Result<()> {
    zmqperf::runner::catch_signals();
    let (cfg, ipc_file) = fanout_config(a)?;
    if a.find.is_some() {
        let r = find::max_subscribers(&cfg, a);
        if let Some(p) = ipc_file {
            let _ = std::fs::remove_file(p);
        }
        return r;
    }
    let impls = implementations(a)?;
    let several = impls.len() > 1 || a.rounds > 1;
    // Side by side, the runs are several: their table or JSON (each run's report is in the
    // history).
    a.print.check(
        "fanout with --impl of several or --repetitions",
        !several,
        Some(&a.db.path()),
    )?;
    if several {
        if a.floor {
            return Err(Error::invalid(
                "--floor",
                "with --impl of several or --repetitions",
                "the floor is measured beside one run; leave out --floor or give one --impl",
            ));
        }
        let r = side_by_side(&cfg, &impls, a);
        if let Some(p) = ipc_file {
            let _ = std::fs::remove_file(p);
        }
        return r;
    }
    let mut cfg = cfg;
    cfg.implementation = impls
        .first()
        .filter(|n| *n != zmqperf::peers::CORE)
        .cloned();
    one_run(&cfg, a, ipc_file)
}

/// The fan-out's settings from the flags, and the socket file of an ipc endpoint made up
/// here (see [`fanout_endpoint`]).
fn fanout_config(a: &FanoutArgs) -> Result<(FanoutConfig, Option<std::path::PathBuf>)> {
    let processes = procs(&a.procs)?;
    let subs = small(
        "-s",
        &a.subs,
        fanout::MAX_SUBS_PER_PROCESS,
        "give at least 1 subscriber per process",
    )?;
    let (ep, ipc_file) = fanout_endpoint(a)?;
    let mut publisher = pub_config(&a.schedule, ep, &a.timeout)?;
    let hwm = a.hwm.as_deref().map(parse_hwm).transpose()?;
    publisher.hwm = hwm;
    let cfg = FanoutConfig {
        publisher,
        processes,
        subs_per_process: subs,
        idle: match &a.idle {
            Some(v) => parse_duration("--idle", v)?,
            None if a.schedule.lossy => Duration::from_secs(1),
            None => Duration::from_secs(10),
        },
        hwm,
        exe: exe()?,
        implementation: None,
        spread: spread(&a.spread)?,
    };
    Ok((cfg, ipc_file))
}

/// The implementations of `--impl` (zmqperf's own swarm without it), after checking
/// `--repetitions` (the rounds of the implementations in turn).
fn implementations(a: &FanoutArgs) -> Result<Vec<String>> {
    let impls: Vec<String> = match &a.implementations {
        None => vec![zmqperf::peers::CORE.to_string()],
        Some(l) => l
            .split(',')
            .map(|n| zmqperf::peers::canonical_for("--impl", n.trim()))
            .collect::<Result<_>>()?,
    };
    if a.rounds == 0 {
        return Err(Error::invalid("--repetitions", "0", "run at least 1 round"));
    }
    Ok(impls)
}

/// While it lives, each tick is printed above the progress line once every subscriber
/// process has closed it.
fn show_ticks(live: &Live, processes: u32) -> super::suite::IntervalsShown {
    let live = live.clone();
    let ticks = std::sync::Mutex::new(fanout::LiveTicks::new(processes));
    zmqperf::roles::live::set_interval_hook(Some(Arc::new(move |_node, r| {
        let whole = ticks.lock().unwrap_or_else(|e| e.into_inner()).add(r);
        if let Some((tick, so_far)) = whole {
            live.log(&zmqperf::report::intervals::tick_line(&tick, &so_far));
        }
    })));
    super::suite::IntervalsShown
}

/// One fan-out run, then the floor beside it with `--floor`: recorded and printed; the
/// socket file of a made-up ipc endpoint removed once the run is over.
fn one_run(cfg: &FanoutConfig, a: &FanoutArgs, ipc_file: Option<std::path::PathBuf>) -> Result<()> {
    let started = std::time::Instant::now();
    let live = Live::on_stderr();
    let notes = live_notes(&live);
    let planned = fanout::planned(cfg);
    let what = format!(
        "fanout: {} subscribers in {} processes",
        cfg.processes * cfg.subs_per_process,
        cfg.processes
    );
    live.set(what, Some(planned_end(planned, 1)));
    let shown = show_ticks(&live, cfg.processes);
    let r = fanout::fanout(cfg, notes.clone());
    drop(shown);
    if let Some(p) = ipc_file {
        let _ = std::fs::remove_file(p);
    }
    let mut r = r?;
    // The floor runs after the libzmq run, never beside it; when it fails, the libzmq
    // report is still printed and recorded, and the exit code is the floor's.
    let mut floor_failed = None;
    if a.floor {
        live.set(
            "fanout: the raw-socket floor".into(),
            Some(planned_end(planned, 1)),
        );
        match fanout::floor(cfg, &r, notes) {
            Ok(f) => r.floor = Some(f),
            Err(e) => floor_failed = Some(e),
        }
    }
    live.finish();
    let run = as_run(&r, started.elapsed().as_secs_f64());
    let recorded = record(&a.db, a.no_history, &run);
    let printed = emit(&r, &run, &a.print, &a.db);
    recorded?;
    match floor_failed {
        Some(e) if printed.is_ok() => {
            note(
                "the raw-socket floor (--floor) failed; the report above is the libzmq run's"
                    .into(),
            );
            Err(e)
        }
        _ => printed,
    }
}

/// `fanout --impl A,B[,...]`: the same fan-out with each implementation's subscribers, in
/// turn for every round; each run recorded; the figures side by side with the ratios to
/// the first implementation.
fn side_by_side(cfg: &FanoutConfig, impls: &[String], a: &FanoutArgs) -> Result<()> {
    let mut sbs = zmqperf::report::fanout::SideBySide::new(impls, a.rounds);
    let mut lost = None;
    let live = Live::on_stderr();
    let planned = fanout::planned(cfg);
    let runs = a.rounds as usize * impls.len();
    for round in 0..a.rounds {
        for (k, name) in impls.iter().enumerate() {
            let mut c = cfg.clone();
            c.implementation = (name != zmqperf::peers::CORE).then(|| name.clone());
            let what = format!(
                "fanout: round {} of {}: subscribers played by {name}",
                round + 1,
                a.rounds
            );
            live.log(&format!("zmqperf: {what}"));
            let left = runs - (round as usize * impls.len() + k);
            live.set(what, Some(planned_end(planned, left as u32)));
            let started = std::time::Instant::now();
            let r = fanout::fanout(&c, live_notes(&live))?;
            record(
                &a.db,
                a.no_history,
                &as_run(&r, started.elapsed().as_secs_f64()),
            )?;
            if lost.is_none() {
                lost = r.failure();
            }
            sbs.add(k, r);
        }
    }
    live.finish();
    let text = match a
        .print
        .chosen("fanout with --impl of several or --repetitions", false)?
    {
        zmqperf::report::Format::Json => sbs.json(),
        _ => sbs.text(),
    };
    a.print.print(&text, Some(&a.db.path()))?;
    match lost {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
