//! `zmqperf pub`, `zmqperf sub-cluster` and `zmqperf fanout`: the fan-out commands, with
//! the flags of seed 002's Node harness (`-t -n -p -h`, `-c -n`), turned into validated
//! library configs, run, and printed.

use super::suite::DbArgs;
use clap::{ArgAction, Args, ValueEnum};
use std::sync::Arc;
use std::time::Duration;
use zmqperf::endpoint::{Endpoint, Side, Transport};
use zmqperf::error::{Error, Result};
use zmqperf::fanout::{self, ClusterConfig, FanoutConfig, FanoutReport, PubConfig};
use zmqperf::header::HEADER_LEN;
use zmqperf::parse::{parse_count, parse_duration, parse_hwm, parse_size};

/// The longest interval between ticks, ms: a week.
const MAX_INTERVAL_MS: u64 = 7 * 24 * 3600 * 1000;

/// The seed's default endpoint.
const DEFAULT_HOST: &str = "tcp://127.0.0.1:2002";

/// Examples shown by `zmqperf pub --help`.
pub const PUB_EXAMPLES: &str = "\
Examples (two terminals, as with the Node harness):
  zmqperf sub-cluster -c 8 -n 100
  zmqperf pub -t 1000 -n 1 -p 10 --subs 800     # waits for all 800, then 1 msg/s for 10 s

  zmqperf pub -t 0 -n 100000 -p 1 -h ipc:///tmp/fan.sock   # as fast as possible";

/// Examples shown by `zmqperf sub-cluster --help`.
pub const SUB_EXAMPLES: &str = "\
Examples:
  zmqperf sub-cluster -c 8 -n 1000                       # 8,000 subscribers on tcp://127.0.0.1:2002
  zmqperf sub-cluster -c 2 -n 100 -h ipc:///tmp/fan.sock --json

It ends when every subscriber has the publisher's last message (or after --idle without
messages) and prints delivery and latency over all subscribers. Exit code 12 when messages
were lost, 6 when nothing arrived within --timeout.";

/// Examples shown by `zmqperf fanout --help`.
pub const FANOUT_EXAMPLES: &str = "\
Examples:
  zmqperf fanout -c 8 -s 1000 -t 1000 -n 1 -p 10              # 8,000 subscribers, 1 msg/s, tcp
  zmqperf fanout -c 8 -s 1000 -t 1000 -n 1 -p 10 --transport ipc
  zmqperf fanout -c 8 -s 100 -t 1000 -n 100 -p 10             # 800 subscribers, 100 msg/s
  zmqperf fanout -c 1 -s 3 -t 0 -n 1000000 -p 1               # PUB/SUB throughput, 3 subscribers
  zmqperf fanout -c 8 -s 1000 -t 1000 -n 1 -p 10 --floor      # and the raw-socket floor beside it
  zmqperf fanout -c 2 -s 50 -t 10 -n 10 -p 20 --impl zmqperf,node --rounds 3
                                        # Node's subscribers against zmqperf's, side by side

Exit codes: 3 bad value (also: too many subscribers for the open-file limit), 4 bad
endpoint, 12 messages lost (the report is printed first), 16 subscribers missing.";

/// The publishing schedule, shared by `pub` and `fanout`.
#[derive(Args)]
pub struct Schedule {
    /// Milliseconds between ticks; 0 sends every message as fast as possible.
    #[arg(
        short = 't',
        long = "interval",
        value_name = "MS",
        default_value = "1000",
        allow_negative_numbers = true
    )]
    pub interval: String,
    /// Messages per tick.
    #[arg(
        short = 'n',
        long = "messages",
        value_name = "N",
        default_value = "1",
        allow_negative_numbers = true
    )]
    pub per_tick: String,
    /// Ticks (passes) to send.
    #[arg(
        short = 'p',
        long = "passes",
        value_name = "N",
        default_value = "10",
        allow_negative_numbers = true
    )]
    pub passes: String,
    /// Warm-up ticks sent first on the same schedule and not counted (first-use costs).
    #[arg(
        long,
        default_value = "1",
        value_name = "TICKS",
        allow_negative_numbers = true
    )]
    pub warmup: String,
    /// Message size in bytes (at least 24, the measurement header).
    #[arg(long, default_value = "64", value_name = "BYTES")]
    pub size: String,
    /// libzmq io threads of the publisher.
    #[arg(long, default_value = "1", value_name = "N")]
    pub io_threads: String,
    /// Publish as the users' harnesses did: a PUB that drops at its high-water mark
    /// (no ZMQ_XPUB_NODROP) and starts without waiting for the subscribers. The loss is
    /// measured: where it fell (start: slow joiners; middle: the high-water mark) and the
    /// send vs delivered rates.
    #[arg(long)]
    pub lossy: bool,
}

/// Options of `zmqperf pub`.
#[derive(Args)]
pub struct PubArgs {
    #[command(flatten)]
    pub schedule: Schedule,
    /// Endpoint to bind (tcp://HOST:PORT or ipc:///path).
    #[arg(short = 'h', long = "host", value_name = "ENDPOINT", default_value = DEFAULT_HOST)]
    pub host: String,
    /// Wait until this many subscribers have subscribed before the first tick.
    #[arg(long, value_name = "N")]
    pub subs: Option<String>,
    /// Without --subs: time to let subscribers join before the first tick.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub wait: String,
    /// Longest wait for --subs subscribers, and for a send blocked by a full queue.
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub timeout: String,
    /// After the last message, longest wait for the subscribers to leave before closing.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub linger: String,
    /// Send high-water mark per subscriber, in messages (libzmq's default is 1000; 0 = none).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub hwm: Option<String>,
    /// Print one JSON object instead of the lines.
    #[arg(long)]
    pub json: bool,
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
}

/// Options of `zmqperf sub-cluster`.
#[derive(Args)]
pub struct SubClusterArgs {
    /// Subscriber processes (default: one per CPU).
    #[arg(
        short = 'c',
        long = "procs",
        value_name = "PROCS",
        allow_negative_numbers = true
    )]
    pub procs: Option<String>,
    /// Subscribers (SUB sockets) per process.
    #[arg(
        short = 'n',
        long = "subs",
        value_name = "SUBS_PER_PROC",
        default_value = "100",
        allow_negative_numbers = true
    )]
    pub subs: String,
    /// Endpoint to connect to (where `zmqperf pub` binds).
    #[arg(short = 'h', long = "host", value_name = "ENDPOINT", default_value = DEFAULT_HOST)]
    pub host: String,
    /// Longest wait for the first message.
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub timeout: String,
    /// After the first message, stop when nothing arrived for this long (keep it above the
    /// publisher's interval).
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub idle: String,
    /// Messages each subscriber should get (default: up to the publisher's last message).
    #[arg(long, value_name = "N")]
    pub expect: Option<String>,
    /// Receive high-water mark per subscriber, in messages (0 = none).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub hwm: Option<String>,
    /// Print the whole report as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not record this run in the history.
    #[arg(long)]
    pub no_history: bool,
    #[command(flatten)]
    pub spread: SpreadArgs,
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
}

/// The transport of `zmqperf fanout` when no endpoint is given.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TransportArg {
    /// tcp://127.0.0.1 on a free port.
    Tcp,
    /// A socket file in the temp folder.
    Ipc,
}

/// Options of `zmqperf fanout`.
#[derive(Args)]
pub struct FanoutArgs {
    /// Subscriber processes (default: one per CPU).
    #[arg(
        short = 'c',
        long = "procs",
        value_name = "PROCS",
        allow_negative_numbers = true
    )]
    pub procs: Option<String>,
    /// Subscribers (SUB sockets) per process.
    #[arg(
        short = 's',
        long = "subs",
        value_name = "SUBS_PER_PROC",
        default_value = "100",
        allow_negative_numbers = true
    )]
    pub subs: String,
    #[command(flatten)]
    pub schedule: Schedule,
    /// Endpoint for the publisher to bind (default: by --transport).
    #[arg(short = 'h', long = "host", value_name = "ENDPOINT")]
    pub host: Option<String>,
    /// Transport when no endpoint is given (default tcp).
    #[arg(long, value_enum)]
    pub transport: Option<TransportArg>,
    /// Longest wait for all subscribers to subscribe, and for a send blocked by a full queue.
    #[arg(long, default_value = "60s", value_name = "DURATION")]
    pub timeout: String,
    /// A subscriber process stops when nothing arrived for this long (at least twice the
    /// interval is used). Default 10s; 1s with --lossy, whose end mark may be dropped.
    #[arg(long, value_name = "DURATION")]
    pub idle: Option<String>,
    /// High-water mark per subscriber, in messages, on both sides (0 = none).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub hwm: Option<String>,
    /// Then run the raw-socket floor: the same fan-out over plain TCP or Unix sockets
    /// (written by one process, read with epoll), reported beside the libzmq figures.
    #[arg(long)]
    pub floor: bool,
    /// Print the whole report as one JSON object.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not record this run in the history.
    #[arg(long)]
    pub no_history: bool,
    #[command(flatten)]
    pub spread: SpreadArgs,
    /// Who plays the subscribers, comma-separated: zmqperf (its own swarm) and peers that
    /// play the swarm role (node, pyzmq). With more than one, the fan-out runs once per
    /// implementation in turn and the figures are printed side by side, as ratios to the
    /// first. Example: --impl zmqperf,node
    #[arg(long = "impl", value_name = "LIST")]
    pub implementations: Option<String>,
    /// With --impl: rounds of the implementations in turn (medians and 95% intervals over
    /// the rounds).
    #[arg(long, default_value = "1", value_name = "N")]
    pub rounds: u32,
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
}

/// Subscriber processes on other hosts.
#[derive(Args)]
pub struct SpreadArgs {
    /// Hosts the subscriber processes may run on: a TOML file of [hosts.NAME] tables, each
    /// a launcher and an addr (docs/hosts.md).
    #[arg(long, value_name = "FILE", requires = "sub_hosts")]
    pub hosts: Option<String>,
    /// Spread the subscriber processes over these hosts of --hosts, in turn (process i on
    /// the i-th modulo their number). Example: --hosts hosts.toml --sub-hosts a,b
    #[arg(long, value_name = "LIST", requires = "hosts")]
    pub sub_hosts: Option<String>,
}

/// The hosts of `--hosts` and `--sub-hosts`, checked.
fn spread(a: &SpreadArgs) -> Result<fanout::Spread> {
    let (Some(file), Some(list)) = (&a.hosts, &a.sub_hosts) else {
        return Ok(Default::default());
    };
    let hosts = zmqperf::runner::hosts::Hosts::load(file)?;
    let names: Vec<String> = list.split(',').map(|n| n.trim().to_string()).collect();
    for n in &names {
        hosts.get("--sub-hosts", n)?;
    }
    Ok(fanout::Spread { hosts, names })
}

/// A whole number for `flag`, at least 1 (or 0 when `zero` is allowed), with a message
/// that says what the number is for.
fn number(flag: &str, s: &str, zero: bool, what: &str) -> Result<u64> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(Error::invalid(
            flag,
            s,
            format!("cannot be negative; {what}"),
        ));
    }
    let digits: String = t.chars().filter(|c| *c != '_' && *c != ',').collect();
    if zero && !digits.is_empty() && digits.chars().all(|c| c == '0') {
        return Ok(0);
    }
    parse_count(flag, s).map_err(|e| match e {
        Error::InvalidValue { reason, .. } => Error::invalid(flag, s, format!("{reason}; {what}")),
        other => other,
    })
}

fn small(flag: &str, s: &str, max: u32, what: &str) -> Result<u32> {
    let n = number(flag, s, false, what)?;
    if n > max as u64 {
        return Err(Error::invalid(flag, s, format!("at most {max}; {what}")));
    }
    Ok(n as u32)
}

fn procs(v: &Option<String>) -> Result<u32> {
    match v {
        Some(s) => small(
            "-c",
            s,
            fanout::MAX_PROCESSES,
            "run at least 1 subscriber process, e.g. one per CPU",
        ),
        None => Ok(std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1)),
    }
}

fn endpoint(s: &str, side: Side) -> Result<Endpoint> {
    // The subscribers run in other processes: only tcp:// and ipc:// reach them.
    let scheme = s.split_once("://").map(|(t, _)| t.to_ascii_lowercase());
    if let Some(t) = scheme.filter(|t| !matches!(t.as_str(), "tcp" | "ipc" | "inproc")) {
        return Err(Error::Endpoint {
            endpoint: s.to_string(),
            reason: format!(
                "fanout does not run over {t}://; use tcp:// (e.g. tcp://127.0.0.1:*) or ipc:// (e.g. ipc:///tmp/fan.sock)"
            ),
        });
    }
    let ep = Endpoint::parse(s, side)?;
    if ep.transport() == Transport::Inproc {
        return Err(Error::Endpoint {
            endpoint: s.to_string(),
            reason: "inproc:// reaches only sockets of one process; the subscribers run in other processes, so use ipc:// or tcp://".into(),
        });
    }
    Ok(ep)
}

fn exe() -> Result<std::path::PathBuf> {
    std::env::current_exe().map_err(|e| Error::Io {
        op: "finding the zmqperf binary".into(),
        source: e,
    })
}

/// The publisher's settings from the schedule and the endpoint.
fn pub_config(s: &Schedule, ep: Endpoint, timeout: &str) -> Result<PubConfig> {
    let interval = number(
        "-t",
        &s.interval,
        true,
        "the interval is in milliseconds: 0 sends as fast as possible, 1000 is one tick a second",
    )?;
    if interval > MAX_INTERVAL_MS {
        return Err(Error::invalid(
            "-t",
            &s.interval,
            format!("at most {MAX_INTERVAL_MS} ms (a week) between ticks"),
        ));
    }
    let per_tick = number("-n", &s.per_tick, false, "send at least 1 message per tick")?;
    let passes = number("-p", &s.passes, false, "run at least 1 pass")?;
    let warmup = number("--warmup", &s.warmup, true, "give 0 or more warm-up ticks")?;
    if per_tick
        .checked_mul(passes)
        .is_none_or(|t| t > i64::MAX as u64)
    {
        return Err(Error::invalid(
            "-n x -p",
            &format!("{per_tick} x {passes}"),
            "too many messages",
        ));
    }
    let size = parse_size("--size", &s.size)?;
    if size < HEADER_LEN {
        return Err(Error::invalid(
            "--size",
            &s.size,
            format!("every message carries the {HEADER_LEN}-byte measurement header; use --size {HEADER_LEN} or more"),
        ));
    }
    let io_threads = small("--io-threads", &s.io_threads, 64, "use 1 to 64 io threads")?;
    Ok(PubConfig {
        endpoint: ep,
        interval: Duration::from_millis(interval),
        per_tick,
        passes,
        warmup,
        size,
        subscribers: None,
        wait: Duration::from_secs(1),
        timeout: parse_duration("--timeout", timeout)?,
        linger: Duration::from_secs(10),
        hwm: None,
        io_threads: io_threads as i32,
        stream_id: std::process::id(),
        lossy: s.lossy,
    })
}

fn note(line: String) {
    eprintln!("zmqperf: {line}");
}

/// Records a fan-out report as a run of one case in the history (unless `--no-history`),
/// so `zmqperf show` and `zmqperf compare` work on it.
fn record(db: &DbArgs, no_history: bool, r: &FanoutReport, wall_s: f64) -> Result<()> {
    if no_history {
        return Ok(());
    }
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let mut run = zmqperf::runner::new_run(command, None);
    let case = fanout::to_case(r, wall_s);
    let mut session = db.session(false, &run)?;
    run.cases.push(case);
    zmqperf::runner::finish(&mut run, zmqperf::model::RunStatus::Complete);
    // As `run` records: a lock is waited out, a full disk is named, the run marked partial.
    session.keep(&run.cases);
    session.finish(&run)?;
    session.announce()
}

fn emit(r: &FanoutReport, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string(r).expect("reports serialise"));
    } else {
        print!("{}", zmqperf::report::fanout::text(r));
    }
    if zmqperf::runner::interrupted() {
        // A signal: what arrived is printed and recorded above; the exit says why it ended.
        return Err(Error::Interrupted(
            r.incomplete()
                .unwrap_or_else(|| "the stream was over before the signal".into()),
        ));
    }
    if r.lossy && r.delivery.lost > 0 && r.failure().is_none() {
        eprintln!(
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
    if a.json {
        println!("{}", serde_json::to_string(&r).expect("results serialise"));
    } else {
        print!("{}", zmqperf::report::fanout::publisher_text(&r));
    }
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
    let recorded = record(&a.db, a.no_history, &r, started.elapsed().as_secs_f64());
    let printed = emit(&r, a.json);
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
    let impls: Vec<String> = match &a.implementations {
        None => vec![zmqperf::peers::CORE.to_string()],
        Some(l) => l
            .split(',')
            .map(|n| zmqperf::peers::canonical_for("--impl", n.trim()))
            .collect::<Result<_>>()?,
    };
    if a.rounds == 0 {
        return Err(Error::invalid("--rounds", "0", "run at least 1 round"));
    }
    if impls.len() > 1 || a.rounds > 1 {
        if a.floor {
            return Err(Error::invalid(
                "--floor",
                "with --impl of several or --rounds",
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
    let started = std::time::Instant::now();
    let notes: fanout::Note = Arc::new(|l: String| note(format!("fanout: {l}")));
    let r = fanout::fanout(&cfg, notes.clone());
    if let Some(p) = ipc_file {
        let _ = std::fs::remove_file(p);
    }
    let mut r = r?;
    // The floor runs after the libzmq run, never beside it; when it fails, the libzmq
    // report is still printed and recorded, and the exit code is the floor's.
    let mut floor_failed = None;
    if a.floor {
        match fanout::floor(&cfg, &r, notes) {
            Ok(f) => r.floor = Some(f),
            Err(e) => floor_failed = Some(e),
        }
    }
    let recorded = record(&a.db, a.no_history, &r, started.elapsed().as_secs_f64());
    let printed = emit(&r, a.json);
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
    for round in 0..a.rounds {
        for (k, name) in impls.iter().enumerate() {
            let mut c = cfg.clone();
            c.implementation = (name != zmqperf::peers::CORE).then(|| name.clone());
            note(format!(
                "fanout: round {} of {}: subscribers played by {name}",
                round + 1,
                a.rounds
            ));
            let started = std::time::Instant::now();
            let notes: fanout::Note = Arc::new(|l: String| note(format!("fanout: {l}")));
            let r = fanout::fanout(&c, notes)?;
            record(&a.db, a.no_history, &r, started.elapsed().as_secs_f64())?;
            if lost.is_none() {
                lost = r.failure();
            }
            sbs.add(k, r);
        }
    }
    print!("{}", if a.json { sbs.json() } else { sbs.text() });
    match lost {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
