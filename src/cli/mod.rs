//! The command line: clap definitions, turned into validated library configs at this
//! boundary, and the printing of results.

mod diagnose;
mod fanout;
mod suite;

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::time::Duration;
use zmqperf::compat::{self, EchoMode, LatConfig, Pattern, ThrConfig};
use zmqperf::endpoint::{Endpoint, Side, Transport};
use zmqperf::error::{Error, Result};
use zmqperf::parse::{parse_count, parse_duration, parse_size};
use zmqperf::report::compat as out;

const EXAMPLES: &str = "\
Examples (two terminals, as with libzmq's perf tools):
  zmqperf local_lat tcp://127.0.0.1:5555 64 100_000
  zmqperf remote_lat tcp://127.0.0.1:5555 64 100_000 --detail

  zmqperf local_thr tcp://127.0.0.1:5556 1KiB 1M
  zmqperf remote_thr tcp://127.0.0.1:5556 1KiB 1M

  zmqperf local_thr ipc:///tmp/zmqperf.sock 64 1M --pattern pubsub --detail
  zmqperf inproc_lat 64 100000 --json

Exit codes: 0 ok, 2 usage, 3 bad value, 4 bad endpoint, 5 address in use,
6 no peer within --timeout, 7 peer stopped part-way, 8 message of wrong size,
9 protocol error, 10 ZeroMQ error, 11 I/O error, 12 messages lost (the figures
are printed first), 17 stream cut short (the figures of what arrived are printed
first).";

/// zmqperf: how fast, how reliable, and why messages were lost.
#[derive(Parser)]
#[command(name = "zmqperf", version, about, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Echo side of the latency pair: binds a REP socket and echoes every message.
    #[command(name = "local_lat", alias = "local-lat", after_help = EXAMPLES)]
    LocalLat(LocalLat),
    /// Measuring side of the latency pair: connects a REQ socket and times round trips.
    #[command(name = "remote_lat", alias = "remote-lat", after_help = EXAMPLES)]
    RemoteLat(RemoteLat),
    /// Receiving side of the throughput pair: binds PULL (or SUB) and measures msg/s.
    #[command(name = "local_thr", alias = "local-thr", after_help = EXAMPLES)]
    LocalThr(LocalThr),
    /// Sending side of the throughput pair: connects PUSH (or PUB) and sends.
    #[command(name = "remote_thr", alias = "remote-thr", after_help = EXAMPLES)]
    RemoteThr(RemoteThr),
    /// Latency within one process: REQ and REP on two threads over inproc://.
    #[command(name = "inproc_lat", alias = "inproc-lat", after_help = EXAMPLES)]
    InprocLat(InprocLat),
    /// Throughput within one process: PUSH and PULL on two threads over inproc://.
    #[command(name = "inproc_thr", alias = "inproc-thr", after_help = EXAMPLES)]
    InprocThr(InprocThr),
    /// Run the benchmark suite (patterns x transports x sizes), store it, report it.
    #[command(after_help = RUN_EXAMPLES)]
    Run(suite::RunArgs),
    /// Run short experiments that find why messages are lost or late, with the remedies.
    #[command(after_help = diagnose::EXAMPLES)]
    Diagnose(diagnose::DiagnoseArgs),
    /// List the runs in the history.
    History {
        /// Show at most this many (newest first).
        #[arg(long, default_value = "20")]
        limit: usize,
        #[command(flatten)]
        db: suite::DbArgs,
    },
    /// Show a run from the history as a report (default: tables on the terminal).
    Show {
        /// Run id, a unique prefix of one, `last` or `last~N`.
        run: String,
        #[command(flatten)]
        out: suite::OutArgs,
        #[command(flatten)]
        db: suite::DbArgs,
    },
    /// Write a run's report in a format (html, markdown, csv, json, table).
    #[command(after_help = "Example:\n  zmqperf report last --format html -o report.html")]
    Report {
        /// Run id, a unique prefix of one, `last` or `last~N`.
        run: String,
        #[command(flatten)]
        out: suite::OutArgs,
        #[command(flatten)]
        db: suite::DbArgs,
    },
    /// Compare two runs case by case; exit 15 when a case regressed past --fail-above.
    #[command(after_help = "Example:\n  zmqperf compare last~1 last --fail-above 5%")]
    Compare {
        /// The baseline run.
        run_a: String,
        /// The run to judge.
        run_b: String,
        /// Fail (exit 15) when a case got worse by more than this, beyond noise (e.g. 5%).
        #[arg(long, value_name = "PERCENT")]
        fail_above: Option<String>,
        #[command(flatten)]
        db: suite::DbArgs,
    },
    /// Fan-out publisher: binds XPUB and sends -n messages every -t ms, -p times.
    #[command(name = "pub", disable_help_flag = true, after_help = fanout::PUB_EXAMPLES)]
    Pub(fanout::PubArgs),
    /// Fan-out subscribers: -c processes of -n SUB sockets each; reports delivery and latency.
    #[command(name = "sub-cluster", disable_help_flag = true, after_help = fanout::SUB_EXAMPLES)]
    SubCluster(fanout::SubClusterArgs),
    /// Fan-out on one host: a publisher and -c x -s subscribers, over tcp or ipc.
    #[command(disable_help_flag = true, after_help = fanout::FANOUT_EXAMPLES)]
    Fanout(fanout::FanoutArgs),
    /// Plays one node of a topology in a child process (used by `run`; speaks the control
    /// protocol of docs/control-protocol.md).
    #[command(name = "__node", hide = true)]
    Node {
        /// The node's spec as JSON.
        spec: String,
    },
    /// Check a topology file before running it: print its graph, or each mistake with the
    /// node and field at fault.
    #[command(subcommand)]
    Topology(TopologyCmd),
}

#[derive(Subcommand)]
enum TopologyCmd {
    /// Validate a topology file (TOML or JSON) and print its nodes, links and streams.
    #[command(
        after_help = "Examples:\n  zmqperf topology check topologies/fanin.toml\n  zmqperf topology check my-graph.json\n\nExit 3 names the file, node and field of the first mistake."
    )]
    Check {
        /// The topology file.
        file: String,
    },
}

/// `zmqperf topology check FILE`.
fn topology_check(path: &str) -> Result<()> {
    use zmqperf::topology::{check::check, load::load};
    let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
        op: format!("reading topology file {path}"),
        source: e,
    })?;
    let variants = load(path, &text)?;
    for v in &variants {
        let g = check(path, &v.topology)?;
        if !v.label.is_empty() {
            println!("variant {}", v.label);
        }
        print!("{}", g.describe());
    }
    println!(
        "{path}: ok ({} variant{})",
        variants.len(),
        if variants.len() == 1 { "" } else { "s" }
    );
    Ok(())
}

const RUN_EXAMPLES: &str = "\
Examples:
  zmqperf run                                  # default suite, about a minute
  zmqperf run --quick                          # a few seconds
  zmqperf run --full                           # sizes 2 B .. 64 KiB
  zmqperf run --patterns reqrep,pushpull --transports tcp --sizes 64,1KiB,64KiB
  zmqperf run --patterns pushpull --rate 10000,100000    # open loop
  zmqperf run workload.toml                    # cases and sweeps from a file
  zmqperf run my-graph.json                    # a topology file (nodes and sockets, docs/topology.md)
  zmqperf run topologies/fanout.toml --transports ipc";

#[derive(Args)]
struct Common {
    /// Longest wait for the peer, per message (e.g. 500ms, 30s, 2m).
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    timeout: String,
    /// Print one JSON object with every figure instead of the compatible lines.
    #[arg(long)]
    json: bool,
    /// After the compatible lines, print the full distribution, rates and timer cost.
    #[arg(long)]
    detail: bool,
}

#[derive(Args)]
struct EchoOpts {
    /// Echo the received message object without reading or copying its content.
    #[arg(long, conflicts_with = "copy")]
    zero_copy: bool,
    /// Copy the content into a new message before echoing (as most applications do).
    #[arg(long)]
    copy: bool,
}

#[derive(Args)]
struct LocalLat {
    /// Endpoint to bind, e.g. tcp://127.0.0.1:5555 (tcp://127.0.0.1:* picks a free port).
    bind_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    message_size: String,
    /// Round trips to serve (100_000, 1M).
    roundtrip_count: String,
    #[command(flatten)]
    echo: EchoOpts,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct RemoteLat {
    /// Endpoint to connect to, e.g. tcp://127.0.0.1:5555.
    connect_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    message_size: String,
    /// Round trips to make (100_000, 1M).
    roundtrip_count: String,
    /// Plain mode: no measurement header and no per-round-trip clock readings (libzmq's loop).
    #[arg(long)]
    plain: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Clone, Copy, ValueEnum)]
enum PatternArg {
    /// PUSH sends, PULL receives (libzmq's tools).
    Pushpull,
    /// PUB sends, SUB receives (SUB binds, PUB connects).
    Pubsub,
}

#[derive(Args)]
struct ThrOpts {
    /// Socket pattern of the pair.
    #[arg(long, value_enum, default_value = "pushpull")]
    pattern: PatternArg,
    /// High-water mark of the measured socket, in messages (libzmq's default is 1000; 0 = none).
    #[arg(long)]
    hwm: Option<i32>,
}

#[derive(Args)]
struct LocalThr {
    /// Endpoint to bind, e.g. tcp://127.0.0.1:5556 (tcp://127.0.0.1:* picks a free port).
    bind_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    message_size: String,
    /// Messages to receive (1_000_000, 1M).
    message_count: String,
    /// libzmq's optional <enable_curve>: only 0 is accepted for now.
    enable_curve: Option<String>,
    #[command(flatten)]
    thr: ThrOpts,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct SendOpts {
    /// Plain mode: send bytes without the measurement header (libzmq's loop).
    #[arg(long)]
    plain: bool,
    /// Put the send time in every N-th message (and the last); the others carry only
    /// their sequence number. 1 stamps every message.
    #[arg(long, default_value = "16", value_name = "N")]
    stamp_every: String,
}

#[derive(Args)]
struct RemoteThr {
    /// Endpoint to connect to, e.g. tcp://127.0.0.1:5556.
    connect_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    message_size: String,
    /// Messages to send (1_000_000, 1M).
    message_count: String,
    /// libzmq's optional <enable_curve>: only 0 is accepted for now.
    enable_curve: Option<String>,
    #[command(flatten)]
    thr: ThrOpts,
    /// PUB/SUB: act as a plain PUB (start at once, drop at the high-water mark) instead of
    /// waiting for the subscription and blocking at the high-water mark.
    #[arg(long)]
    lossy: bool,
    #[command(flatten)]
    send: SendOpts,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct InprocLat {
    /// Message size in bytes (64, 1KiB, 64MiB).
    message_size: String,
    /// Round trips (100_000, 1M).
    roundtrip_count: String,
    /// Plain mode: no measurement header and no per-round-trip clock readings.
    #[arg(long)]
    plain: bool,
    #[command(flatten)]
    echo: EchoOpts,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
struct InprocThr {
    /// Message size in bytes (64, 1KiB, 64MiB).
    message_size: String,
    /// Messages (1_000_000, 1M).
    message_count: String,
    #[command(flatten)]
    send: SendOpts,
    #[command(flatten)]
    common: Common,
}

fn endpoint(s: &str, side: Side, alternative: &str) -> Result<Endpoint> {
    let ep = Endpoint::parse(s, side)?;
    if ep.transport() == Transport::Inproc {
        return Err(Error::Endpoint {
            endpoint: s.to_string(),
            reason: format!(
                "inproc:// only reaches sockets in the same process; use `zmqperf {alternative}`, or ipc:// or tcp:// between two processes"
            ),
        });
    }
    Ok(ep)
}

fn echo_mode(e: &EchoOpts) -> EchoMode {
    if e.zero_copy {
        EchoMode::ZeroCopy
    } else if e.copy {
        EchoMode::Copy
    } else {
        EchoMode::Inspect
    }
}

fn timeout(c: &Common) -> Result<Duration> {
    parse_duration("--timeout", &c.timeout)
}

fn curve(arg: &Option<String>) -> Result<()> {
    match arg.as_deref() {
        None | Some("0") => Ok(()),
        Some(v) => Err(Error::invalid(
            "<enable_curve>",
            v,
            "CURVE encryption is not supported by zmqperf yet; pass 0 or leave the argument out",
        )),
    }
}

fn pattern(p: PatternArg) -> Pattern {
    match p {
        PatternArg::Pushpull => Pattern::PushPull,
        PatternArg::Pubsub => Pattern::PubSub,
    }
}

fn hwm(v: Option<i32>) -> Result<Option<i32>> {
    match v {
        Some(h) if h < 0 => Err(Error::invalid(
            "--hwm",
            &h.to_string(),
            "must be 0 (no limit) or more",
        )),
        other => Ok(other),
    }
}

fn print(
    c: &Common,
    json: impl FnOnce() -> String,
    lines: String,
    detail: impl FnOnce() -> String,
) {
    if c.json {
        println!("{}", json());
    } else {
        print!("{lines}");
        if c.detail {
            print!("{}", detail());
        }
    }
}

fn announce(command: &str, requested: &Endpoint, bound: &str) {
    if requested.is_wildcard() {
        eprintln!("zmqperf: {command} listening on {bound}");
    }
}

/// Runs the parsed command line, returning the exit code of a command that succeeded
/// (0) or found what it was asked to flag.
pub fn run(cli: Cli) -> Result<()> {
    if let Cmd::Node { spec } = &cli.cmd {
        std::process::exit(zmqperf::runner::place::child_main(spec));
    }
    match &cli.cmd {
        Cmd::Topology(TopologyCmd::Check { file }) => return topology_check(file),
        Cmd::Pub(a) => return fanout::run_pub(a),
        Cmd::SubCluster(a) => return fanout::run_sub_cluster(a),
        Cmd::Fanout(a) => return fanout::run_fanout(a),
        Cmd::Run(a) => {
            let command = std::env::args().collect::<Vec<_>>().join(" ");
            return suite::run(a, command);
        }
        Cmd::Diagnose(a) => {
            let command = std::env::args().collect::<Vec<_>>().join(" ");
            return diagnose::run(a, command);
        }
        Cmd::History { limit, db } => {
            let store = zmqperf::store::Store::open_existing(db.path())?;
            print!(
                "{}",
                zmqperf::store::format_history(&store.list_runs(Some(*limit))?)
            );
            return Ok(());
        }
        Cmd::Show { run, out, db } | Cmd::Report { run, out, db } => {
            let store = zmqperf::store::Store::open_existing(db.path())?;
            return out.emit(&store.load_run(run)?);
        }
        Cmd::Compare {
            run_a,
            run_b,
            fail_above,
            db,
        } => {
            let threshold = fail_above
                .as_deref()
                .map(zmqperf::store::parse_percent)
                .transpose()?;
            let store = zmqperf::store::Store::open_existing(db.path())?;
            let (a, b) = (store.load_run(run_a)?, store.load_run(run_b)?);
            let c = zmqperf::store::compare(&a, &b, threshold);
            print!("{}", zmqperf::store::format_comparison(&c));
            if c.regressed() {
                return Err(Error::Regressed(format!(
                    "{} regressed past {}% against {} (beyond noise)",
                    b.run_id,
                    threshold.unwrap_or(0.0),
                    a.run_id
                )));
            }
            return Ok(());
        }
        _ => {}
    }
    use std::io::IsTerminal;
    zmqperf::progress::enable(std::io::stderr().is_terminal());
    let ctx = zmq::Context::new();
    match cli.cmd {
        Cmd::LocalLat(a) => {
            let ep = endpoint(&a.bind_to, Side::Bind, "inproc_lat")?;
            let cfg = LatConfig {
                size: parse_size("<message-size>", &a.message_size)?,
                count: parse_count("<roundtrip-count>", &a.roundtrip_count)?,
                timeout: timeout(&a.common)?,
                side: Side::Bind,
                instrumented: false,
                echo: echo_mode(&a.echo),
                endpoint: ep.clone(),
            };
            let r = compat::local_lat(&ctx, &cfg, |b| announce("local_lat", &ep, b))?;
            print(
                &a.common,
                || out::json(&r),
                String::new(),
                || out::echo_detail(&r),
            );
        }
        Cmd::RemoteLat(a) => {
            let cfg = LatConfig {
                endpoint: endpoint(&a.connect_to, Side::Connect, "inproc_lat")?,
                size: parse_size("<message-size>", &a.message_size)?,
                count: parse_count("<roundtrip-count>", &a.roundtrip_count)?,
                timeout: timeout(&a.common)?,
                side: Side::Connect,
                instrumented: !a.plain,
                echo: EchoMode::Inspect,
            };
            let r = compat::remote_lat(&ctx, &cfg)?;
            print(
                &a.common,
                || out::json(&r),
                out::latency_lines(&r),
                || out::latency_detail(&r),
            );
        }
        Cmd::LocalThr(a) => {
            let ep = endpoint(&a.bind_to, Side::Bind, "inproc_thr")?;
            let cfg = ThrConfig {
                size: parse_size("<message-size>", &a.message_size)?,
                count: parse_count("<message-count>", &a.message_count)?,
                timeout: timeout(&a.common)?,
                side: Side::Bind,
                pattern: pattern(a.thr.pattern),
                instrumented: false,
                stamp_every: 1,
                hwm: hwm(a.thr.hwm)?,
                lossy: false,
                stream_id: 0,
                endpoint: ep.clone(),
            };
            curve(&a.enable_curve)?;
            let r = compat::local_thr(&ctx, &cfg, |b| announce("local_thr", &ep, b))?;
            print(
                &a.common,
                || out::json(&r),
                out::throughput_lines(&r),
                || out::receiver_detail(&r),
            );
            if let Some(detail) = &r.cut_short {
                let l = r.loss.clone().unwrap_or_default();
                return Err(Error::CutShort {
                    detail: detail.clone(),
                    received: r.message_count,
                    expected: cfg.count,
                    at_start: l.lost_at_start,
                    in_middle: l.lost_in_middle,
                    at_end: if r.loss.is_some() {
                        l.lost_at_end
                    } else {
                        cfg.count.saturating_sub(r.message_count)
                    },
                    cause: compat::cut_short_cause(cfg.pattern, r.loss.as_ref()),
                });
            }
            if let Some(l) = r.loss.as_ref().filter(|l| l.lost > 0) {
                return Err(Error::Lost {
                    lost: l.lost,
                    expected: l.expected,
                    at_start: l.lost_at_start,
                    in_middle: l.lost_in_middle,
                    at_end: l.lost_at_end,
                });
            }
        }
        Cmd::RemoteThr(a) => {
            let cfg = ThrConfig {
                endpoint: endpoint(&a.connect_to, Side::Connect, "inproc_thr")?,
                size: parse_size("<message-size>", &a.message_size)?,
                count: parse_count("<message-count>", &a.message_count)?,
                timeout: timeout(&a.common)?,
                side: Side::Connect,
                pattern: pattern(a.thr.pattern),
                instrumented: !a.send.plain,
                stamp_every: parse_count("--stamp-every", &a.send.stamp_every)?,
                hwm: hwm(a.thr.hwm)?,
                lossy: a.lossy,
                stream_id: std::process::id(),
            };
            curve(&a.enable_curve)?;
            let r = compat::remote_thr(&ctx, &cfg)?;
            print(
                &a.common,
                || out::json(&r),
                String::new(),
                || out::sender_detail(&r),
            );
            if r.peer_closed == Some(false) {
                eprintln!(
                    "zmqperf: warning: the receiver did not hang up within {} of the last message; closing anyway, so messages still queued may be lost (a receiver expecting fewer messages, or still running?)",
                    zmqperf::error::fmt_duration(cfg.timeout)
                );
            }
        }
        Cmd::InprocLat(a) => {
            let r = compat::inproc_lat(
                parse_size("<message-size>", &a.message_size)?,
                parse_count("<roundtrip-count>", &a.roundtrip_count)?,
                timeout(&a.common)?,
                !a.plain,
                echo_mode(&a.echo),
            )?;
            print(
                &a.common,
                || out::json(&r),
                out::latency_lines(&r),
                || out::latency_detail(&r),
            );
        }
        Cmd::InprocThr(a) => {
            let (r, s) = compat::inproc_thr(
                parse_size("<message-size>", &a.message_size)?,
                parse_count("<message-count>", &a.message_count)?,
                timeout(&a.common)?,
                !a.send.plain,
                parse_count("--stamp-every", &a.send.stamp_every)?,
            )?;
            print(
                &a.common,
                || {
                    let mut v = serde_json::to_value(
                        serde_json::from_str::<serde_json::Value>(&out::json(&r)).expect("valid"),
                    )
                    .expect("valid");
                    v["sender"] = serde_json::to_value(&s).expect("serialisable");
                    v.to_string()
                },
                out::throughput_lines(&r),
                || format!("{}{}", out::receiver_detail(&r), out::sender_detail(&s)),
            );
        }
        Cmd::Run(_)
        | Cmd::Diagnose(_)
        | Cmd::Node { .. }
        | Cmd::Topology(_)
        | Cmd::Pub(_)
        | Cmd::SubCluster(_)
        | Cmd::Fanout(_)
        | Cmd::History { .. }
        | Cmd::Show { .. }
        | Cmd::Report { .. }
        | Cmd::Compare { .. } => unreachable!("handled above"),
    }
    Ok(())
}
