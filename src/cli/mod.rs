//! The command line: clap definitions, turned into validated library configs at this
//! boundary, and the printing of results.

use zmqperf::zmq;

mod compat;
mod curve;
mod diagnose;
mod fanout;
mod history;
mod import;
mod install;
mod k8s;
mod limit;
mod matrix;
pub(crate) mod output;
mod peers;
mod ptmp;
mod searches;
mod suite;
mod tune;
mod versus;

use clap::{Parser, Subcommand};
use zmqperf::error::Result;

const EXAMPLES: &str = "\
Examples (two terminals, as with libzmq's perf tools):
  zmqperf local_lat tcp://127.0.0.1:5555 64 100_000
  zmqperf remote_lat tcp://127.0.0.1:5555 64 100_000 --detail

  zmqperf local_thr tcp://127.0.0.1:5556 1KiB 1M
  zmqperf remote_thr tcp://127.0.0.1:5556 1KiB 1M

  zmqperf local_thr ipc:///tmp/zmqperf.sock 64 1M --pattern pubsub --detail
  zmqperf inproc_lat 64 100000 --json

Exit codes: 0 ok, 2 usage, 3 bad value, 4 bad endpoint, 5 address in use,
6 no peer within --timeout (or a peer that sent nothing), 7 peer stopped
part-way (or a receiver that never hung up), 8 message of wrong size, 9 protocol
error (a wrong pairing, a failed handshake, a corrupted reply), 10 ZeroMQ error,
11 I/O error, 12 messages lost, 17 stream cut short (the figures are printed
first for both). Every code of every command: docs/commands.md.";

/// The end of `zmqperf --help`: the examples, then the global options explained once.
pub fn root_long_help() -> String {
    format!(
        "{EXAMPLES}

Global options (every command takes them):
  --libzmq bundled|system|PATH
      The libzmq to measure, for every role of the run: `bundled` (the libzmq 4.3.5
      built into zmqperf, the default), `system` (the distribution's libzmq.so.5, e.g.
      Debian's libzmq5) or the path of a libzmq shared library. Also ZMQPERF_LIBZMQ
      (docs/libzmq.md).
  --width N
      Lay text out for N columns (40 at least): tables give way column by column and
      other lines wrap between words. Default: $COLUMNS, else the terminal's width, else
      120 (files and pipes)."
    )
}

/// zmqperf: how fast, how reliable, and why messages were lost.
#[derive(Parser)]
#[command(name = "zmqperf", version, about, after_help = EXAMPLES)]
pub struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// libzmq to measure: bundled (the default), system or a PATH (see `zmqperf --help`).
    #[arg(
        long,
        global = true,
        value_name = "bundled|system|PATH",
        help_heading = "Global options"
    )]
    libzmq: Option<String>,
    /// Lay text out for N columns (default: $COLUMNS, else the terminal's, else 120).
    #[arg(long, global = true, value_name = "N", help_heading = "Global options")]
    width: Option<usize>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Echo side of the latency pair: binds a REP socket and echoes every message.
    #[command(name = "local_lat", alias = "local-lat", after_help = EXAMPLES)]
    LocalLat(compat::LocalLat),
    /// Measuring side of the latency pair: connects a REQ socket and times round trips.
    #[command(
        name = "remote_lat",
        alias = "remote-lat",
        after_help = EXAMPLES,
        override_usage = "zmqperf remote_lat <CONNECT_TO> <MESSAGE_SIZE> <ROUNDTRIP_COUNT>\n       [OPTIONS]"
    )]
    RemoteLat(compat::RemoteLat),
    /// Receiving side of the throughput pair: binds PULL (or SUB) and measures msg/s.
    #[command(
        name = "local_thr",
        alias = "local-thr",
        after_help = EXAMPLES,
        override_usage = "zmqperf local_thr <BIND_TO> <MESSAGE_SIZE> <MESSAGE_COUNT>\n       [ENABLE_CURVE] [OPTIONS]"
    )]
    LocalThr(compat::LocalThr),
    /// Sending side of the throughput pair: connects PUSH (or PUB) and sends.
    #[command(
        name = "remote_thr",
        alias = "remote-thr",
        after_help = EXAMPLES,
        override_usage = "zmqperf remote_thr <CONNECT_TO> <MESSAGE_SIZE> <MESSAGE_COUNT>\n       [ENABLE_CURVE] [OPTIONS]"
    )]
    RemoteThr(compat::RemoteThr),
    /// Latency within one process: REQ and REP on two threads over inproc://.
    #[command(name = "inproc_lat", alias = "inproc-lat", after_help = EXAMPLES)]
    InprocLat(compat::InprocLat),
    /// Throughput within one process: PUSH and PULL on two threads over inproc://.
    #[command(name = "inproc_thr", alias = "inproc-thr", after_help = EXAMPLES)]
    InprocThr(compat::InprocThr),
    /// PTMP's sender: COUNT TYPE(PAIR|PUB|PUSH) bind|connect ADDR [START_DELAY_MS] [QUIT_DELAY_MS].
    #[command(
        name = "check_send",
        alias = "check-send",
        after_help = ptmp::EXAMPLES,
        override_usage = "zmqperf check_send <COUNT> <TYPE> <bind|connect> <ADDR>\n       [START_DELAY_MS] [QUIT_DELAY_MS] [OPTIONS]"
    )]
    CheckSend(ptmp::CheckSend),
    /// PTMP's receiver: COUNT TYPE(PAIR|SUB|PULL) bind|connect ADDR [TIMEOUT]; gap lines, ledger, cause.
    #[command(
        name = "check_recv",
        alias = "check-recv",
        after_help = ptmp::EXAMPLES,
        override_usage = "zmqperf check_recv <COUNT> <TYPE> <bind|connect> <ADDR> [TIMEOUT]\n       [OPTIONS]"
    )]
    CheckRecv(ptmp::CheckRecv),
    /// PTMP's pattern test in one process: N bind|connect pubsub|pipe|pushpull ADDR.
    #[command(name = "check_sendrecv", alias = "check-sendrecv", after_help = ptmp::EXAMPLES)]
    CheckSendrecv(ptmp::CheckSendrecv),
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
        /// table (the default) or json (the runs as a JSON array); `-o FILE` writes it to a
        /// file.
        #[command(flatten)]
        print: output::PrintArgs,
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
    /// Write a run's report in a format (html, markdown, csv, json, table, hlog: HdrHistogram's interval log).
    #[command(after_help = "Example:\n  zmqperf report last --format html -o report.html")]
    Report {
        /// Run id, a unique prefix of one, `last` or `last~N`.
        run: String,
        #[command(flatten)]
        out: suite::OutArgs,
        #[command(flatten)]
        db: suite::DbArgs,
    },
    /// Take a run exported on another machine (`report --format json`) into this history.
    #[command(after_help = import::EXAMPLES)]
    Import(import::ImportArgs),
    /// Compare two runs case by case; exit 15 when a case regressed past --fail-above, 18
    /// when the gate could not judge B whole, 22 when it could not decide.
    /// With --by-host: one table of the runs' figures with a column per host.
    #[command(
        after_help = "Examples:\n  zmqperf compare last~1 last --fail-above 5%\n  zmqperf compare --by-host hal-run haiku-run yobox-run   # a column per machine"
    )]
    Compare(history::CompareArgs),
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
        /// The node's spec as JSON (absent: the first line on stdin, as the runner sends it).
        spec: Option<String>,
    },
    /// Check a topology file before running it: print its graph, or each mistake with the
    /// node and field at fault.
    #[command(subcommand)]
    Topology(TopologyCmd),
    /// Every implementation against every other: the interop grid (works, or why not) and
    /// the performance grid as ratios to libzmq's C on both sides, with 95% intervals.
    #[command(after_help = matrix::EXAMPLES)]
    Matrix(matrix::MatrixArgs),
    /// Peers in other languages (pyzmq, node, jeromq, Go, Ruby, C, pure Rust): set them
    /// up, list them. Nodes name them with `impl`; `run --impl` plays the suite with them.
    #[command(subcommand)]
    Peers(peers::PeersCmd),
    /// Print fresh CURVE keys (a server and a client key pair, from libzmq) as the TOML that
    /// `--curve-keys FILE` and a topology's `curve_keys` take.
    #[command(
        name = "curve-keys",
        after_help = "Example:\n  zmqperf curve-keys > keys.toml\n  zmqperf local_thr tcp://127.0.0.1:5556 64 1M --security curve --curve-keys keys.toml\n  zmqperf remote_thr tcp://127.0.0.1:5556 64 1M --security curve --curve-keys keys.toml"
    )]
    CurveKeys,
    /// Kubernetes: manifests of idle zmqperf pods, one per node, and their hosts file.
    #[command(subcommand)]
    K8s(k8s::K8sCmd),
    /// Print the shell completions of every command and flag, for bash, zsh, fish, elvish or
    /// PowerShell.
    #[command(after_help = install::COMPLETIONS_EXAMPLES)]
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print zmqperf's manual page (roff), or write one page per command into a folder.
    #[command(after_help = install::MAN_EXAMPLES)]
    Man {
        /// Write zmqperf.1 and a zmqperf-COMMAND.1 per command into this folder instead.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
    /// The main process of a zmqperf pod: idles until SIGTERM or SIGINT.
    #[command(name = "__idle", hide = true)]
    Idle,
    /// The table of every flag by command, as docs/commands.md has it (Markdown).
    #[command(name = "__flag-table", hide = true)]
    FlagTable,
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
    let text = zmqperf::parse::read_text_file("topology file", path)?;
    let variants = load(path, &text)?;
    for v in &variants {
        let g = check(path, &v.topology)?;
        if !v.label.is_empty() {
            zmqperf::outln!("variant {}", v.label);
        }
        print!(
            "{}",
            zmqperf::term::fit(&zmqperf::report::checked::checked_topology(&g))
        );
    }
    zmqperf::outln!(
        "{path}: ok ({} variant{})",
        variants.len(),
        if variants.len() == 1 { "" } else { "s" }
    );
    Ok(())
}

const RUN_EXAMPLES: &str = "\
Examples:
  # default suite, about a minute
  zmqperf run
  # a few seconds
  zmqperf run --quick
  # sizes 2 B .. 64 KiB
  zmqperf run --full
  zmqperf run --patterns reqrep,pushpull --transports tcp --sizes 64,1KiB,64KiB
  # open loop
  zmqperf run --patterns pushpull --rate 10000,100000
  # cases and sweeps from a file
  zmqperf run workload.toml
  # a topology file (nodes and sockets, docs/topology.md)
  zmqperf run my-graph.json
  zmqperf run topologies/fanout.toml --transports ipc";

/// Runs the parsed command line, returning the exit code of a command that succeeded
/// (0) or found what it was asked to flag.
pub fn run(cli: Cli) -> Result<()> {
    zmqperf::term::set_width(cli.width);
    let command = || std::env::args().collect::<Vec<_>>().join(" ");
    match &cli.cmd {
        Cmd::Node { spec } => {
            std::process::exit(zmqperf::runner::place::child_main(spec.as_deref()))
        }
        Cmd::Topology(TopologyCmd::Check { file }) => topology_check(file),
        Cmd::Peers(c) => peers::run(c),
        Cmd::Matrix(a) => matrix::run(a, command()),
        Cmd::CurveKeys => curve_keys(),
        Cmd::Completions { shell } => install::completions(*shell),
        Cmd::Man { dir } => install::man(dir.as_deref()),
        Cmd::FlagTable => {
            print!("{}", install::flag_table());
            Ok(())
        }
        Cmd::K8s(c) => k8s::run(c),
        Cmd::Idle => std::process::exit(zmqperf::k8s::idle(|| {
            zmqperf::errln!("zmqperf {}: idle until SIGTERM", zmqperf::VERSION)
        })),
        Cmd::CheckSendrecv(a) => {
            compat::json_on_failure("check_sendrecv", a.json, ptmp::check_sendrecv(a))
        }
        Cmd::Pub(a) => fanout::run_pub(a),
        Cmd::SubCluster(a) => fanout::run_sub_cluster(a),
        Cmd::Fanout(a) => fanout::run_fanout(a),
        Cmd::Run(a) => match &a.vs_libzmq {
            Some(other) if !a.dry_run => versus::run(a, other, command()),
            _ if a.find.is_some() || a.curve => searches::run(a, command()),
            // A service level judges the steps of a search or a curve, nothing else.
            _ if a.slo != "loss=0" => Err(zmqperf::error::Error::invalid(
                "--slo",
                &a.slo,
                "it judges the steps of --find or --curve; add one of them, or leave --slo out",
            )),
            _ => suite::run(a, command()),
        },
        Cmd::Diagnose(a) => diagnose::run(a, command()),
        Cmd::History { limit, print, db } => history::history(*limit, print, db),
        Cmd::Show { run, out, db } | Cmd::Report { run, out, db } => history::show(run, out, db),
        Cmd::Import(a) => import::run(a),
        Cmd::Compare(a) => history::compare(a),
        Cmd::LocalLat(_)
        | Cmd::RemoteLat(_)
        | Cmd::LocalThr(_)
        | Cmd::RemoteThr(_)
        | Cmd::InprocLat(_)
        | Cmd::InprocThr(_)
        | Cmd::CheckSend(_)
        | Cmd::CheckRecv(_) => run_compatible(&cli.cmd),
    }
}

/// `zmqperf curve-keys`.
fn curve_keys() -> Result<()> {
    let k = zmqperf::net::security::CurveKeys::generate()?;
    print!(
        "server_public = {:?}\nserver_secret = {:?}\nclient_public = {:?}\nclient_secret = {:?}\n",
        k.server_public, k.server_secret, k.client_public, k.client_secret
    );
    Ok(())
}

/// The compatible commands (libzmq's perf tools and PTMP's sender and receiver), with the
/// progress line of their measuring loops on when stderr is a terminal, in one context.
fn run_compatible(cmd: &Cmd) -> Result<()> {
    use std::io::IsTerminal;
    zmqperf::progress::enable(std::io::stderr().is_terminal());
    let ctx = zmq::Context::new();
    use compat::json_on_failure as j;
    match cmd {
        Cmd::LocalLat(a) => j("local_lat", a.common.json, compat::local_lat(a, &ctx)),
        Cmd::RemoteLat(a) => j("remote_lat", a.common.json, compat::remote_lat(a, &ctx)),
        Cmd::LocalThr(a) => j("local_thr", a.common.json, compat::local_thr(a, &ctx)),
        Cmd::RemoteThr(a) => j("remote_thr", a.common.json, compat::remote_thr(a, &ctx)),
        Cmd::InprocLat(a) => j("inproc_lat", a.common.json, compat::inproc_lat(a)),
        Cmd::InprocThr(a) => j("inproc_thr", a.common.json, compat::inproc_thr(a)),
        Cmd::CheckSend(a) => j("check_send", a.json, ptmp::check_send(a, &ctx)),
        Cmd::CheckRecv(a) => j("check_recv", a.json, ptmp::check_recv(a, &ctx)),
        _ => unreachable!("run_compatible takes the compatible commands only"),
    }
}
