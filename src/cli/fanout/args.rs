//! The flags of `zmqperf pub`, `zmqperf sub-cluster` and `zmqperf fanout` (clap structs,
//! as the seed's Node harness spelled them) and the examples their `--help` ends with.

use crate::cli::output::PrintArgs;
use crate::cli::suite::DbArgs;
use clap::{ArgAction, Args, ValueEnum};

/// The seed's default endpoint.
const DEFAULT_HOST: &str = "tcp://127.0.0.1:2002";

/// Examples shown by `zmqperf pub --help`.
pub const PUB_EXAMPLES: &str = "\
Examples (two terminals, as with the Node harness):
  zmqperf sub-cluster -c 8 -n 100
  # waits for all 800, then 1 msg/s for 10 s
  zmqperf pub -t 1000 -n 1 -p 10 --subs 800

  # as fast as possible
  zmqperf pub -t 0 -n 100000 -p 1 -h ipc:///tmp/fan.sock";

/// Examples shown by `zmqperf sub-cluster --help`.
pub const SUB_EXAMPLES: &str = "\
Examples:
  # 8,000 subscribers on tcp://127.0.0.1:2002
  zmqperf sub-cluster -c 8 -n 1000
  zmqperf sub-cluster -c 2 -n 100 -h ipc:///tmp/fan.sock --json

It ends when every subscriber has the publisher's last message (or after --idle without
messages) and prints delivery and latency over all subscribers. Exit code 12 when messages
were lost, 6 when nothing arrived within --timeout.";

/// Examples shown by `zmqperf fanout --help`.
pub const FANOUT_EXAMPLES: &str = "\
Examples:
  # 8,000 subscribers, 1 msg/s, tcp
  zmqperf fanout -c 8 -s 1000 -t 1000 -n 1 -p 10
  zmqperf fanout -c 8 -s 1000 -t 1000 -n 1 -p 10 --transport ipc
  # 800 subscribers, 100 msg/s
  zmqperf fanout -c 8 -s 100 -t 1000 -n 100 -p 10
  # PUB/SUB throughput, 3 subscribers
  zmqperf fanout -c 1 -s 3 -t 0 -n 1000000 -p 1
  # and the raw-socket floor beside it
  zmqperf fanout -c 8 -s 1000 -t 1000 -n 1 -p 10 --floor
  # Node's subscribers against zmqperf's, side by side
  zmqperf fanout -c 2 -s 50 -t 10 -n 10 -p 20 \\
      --impl zmqperf,node --repetitions 3

Exit codes: 3 bad value (also: too many subscribers for the open-file limit), 4 bad
endpoint, 12 messages lost (the report is printed first), 16 subscribers missing.";

/// The publishing schedule, shared by `pub` and `fanout`.
#[derive(Args)]
pub struct Schedule {
    /// Time between ticks: milliseconds (1000), or a duration with its unit (1s, 250ms);
    /// 0 sends every message as fast as possible. Spaced ticks are measured per tick too:
    /// a line per tick as it is delivered (a second of ticks when they are closer) and a
    /// record of each in the report.
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
    /// Instead of -p: send ticks for this long (its passes: the duration over -t).
    /// Example: -t 1s --duration 30s
    #[arg(long, value_name = "DURATION", conflicts_with = "passes")]
    pub duration: Option<String>,
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
    /// table (the lines, the default) or json (one JSON object); `-o FILE` writes it to a
    /// file.
    #[command(flatten)]
    pub print: PrintArgs,
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
    /// The report: table (the default), json (one JSON object), or the run's report in
    /// markdown, html or csv; `-o FILE` writes it to a file.
    #[command(flatten)]
    pub print: PrintArgs,
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
    /// The report: table (the default), json (one JSON object), or the run's report in
    /// markdown, html or csv; `-o FILE` writes it to a file.
    #[command(flatten)]
    pub print: PrintArgs,
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
    #[arg(
        long = "repetitions",
        alias = "rounds",
        default_value = "1",
        value_name = "N"
    )]
    pub rounds: u32,
    /// Search for the most subscribers that hold --slo instead of one run: max-subscribers.
    /// With -c processes, the SUB sockets per process double from -s until a run breaks
    /// the service level, then bisect to 5% (or 1 apart); at the boundary the value held
    /// last and the lowest broken run three times each. Each step is a whole fan-out,
    /// recorded.
    /// docs/limits.md
    #[arg(long, value_name = "WHAT", value_parser = ["max-subscribers"], conflicts_with_all = ["floor", "implementations"])]
    pub find: Option<String>,
    /// The service level a step of --find must hold: loss=N (messages lost over all
    /// subscribers, default 0), p99<=DURATION (send to receipt, not bound by default),
    /// comma-separated.
    #[arg(
        long,
        value_name = "LEVEL",
        requires = "find",
        default_value = "loss=0"
    )]
    pub slo: String,
    /// After --find found the limit: try the flags that may move it (--io-threads 2; for a
    /// loss, --hwm 100000 and a publisher without --lossy), one at a time and then the
    /// ones that helped together, each searched the same way; their gains with intervals,
    /// best first, and the flags to add. docs/limits.md
    #[arg(long, requires = "find")]
    pub tune: bool,
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
