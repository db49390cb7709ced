//! `zmqperf diagnose`: its options; runs the diagnostic experiments with a progress line,
//! records the run and its findings in the history as they come, and prints the findings
//! (or the run as JSON). A sender process an experiment needs is a `__node` child (the
//! source role). Listening to a live stream (`--connect`/`--bind`) is in [`live`].

use super::output::PrintArgs;
use super::suite::DbArgs;
use clap::Args;
use std::time::Instant;
use zmqperf::error::{Error, Result};
use zmqperf::model::{Finding, RunStatus};
use zmqperf::parse::parse_duration;
use zmqperf::progress::{Eta, Live, Planned};
use zmqperf::runner;
use zmqperf::scenarios::diagnose::{self, Config, Experiment, Observer, Step};

mod live;

/// Examples shown by `zmqperf diagnose --help`.
pub const EXAMPLES: &str = "\
Examples:
  # every experiment over tcp, ipc, inproc (~10 s)
  zmqperf diagnose
  # smaller experiments (~5 s)
  zmqperf diagnose --quick
  zmqperf diagnose --only slow-joiner,hwm --transports tcp
  # the run, findings included, as JSON
  zmqperf diagnose --json > findings.json
  zmqperf diagnose --quick --format html -o diagnose.html
  zmqperf report last --format html -o diagnose.html

Experiments: slow-joiner, hwm, fast-quit, sender-stops, deep-queue (see docs/diagnose.md).

Listening to a live stream someone else sends (Ctrl-C ends it early and still reports):
  # a zmqperf stream, 10 s
  zmqperf diagnose --connect tcp://10.0.0.5:5556 --type SUB
  zmqperf diagnose --bind tcp://*:5557 --type PULL --count 1M --expect 1M
  zmqperf diagnose --connect tcp://10.0.0.5:5556 --type SUB \\
      --subscribe quotes. --seq frame=1,offset=4,width=4,endian=big \\
      --stream-id frame=1,offset=0,width=4
  zmqperf diagnose --connect ipc:///tmp/log.sock --type SUB \\
      --seq frame=0,text --duration 1m";

/// The shortest `--timeout` accepted.
const MIN_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(100);

/// Options of `zmqperf diagnose`.
#[derive(Args)]
pub struct DiagnoseArgs {
    /// Transports, comma-separated: tcp, ipc, inproc (default: all three). Experiments that
    /// need a sender process (fast-quit, the memory part of hwm) use the first of tcp or ipc.
    #[arg(long, value_name = "LIST")]
    transports: Option<String>,
    /// Run only these experiments, comma-separated: slow-joiner, hwm, fast-quit,
    /// sender-stops, deep-queue.
    #[arg(long, value_name = "LIST")]
    only: Option<String>,
    /// The findings as text (table), or the run in a report format: json (the findings with
    /// their evidence), markdown, html, csv; `-o FILE` writes it to a file.
    #[command(flatten)]
    print: PrintArgs,
    /// Smaller experiments: fewer messages, fewer high-water marks, shorter timeouts.
    #[arg(long)]
    quick: bool,
    /// Longest wait for any one event of an experiment (a peer, a message, a process).
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    timeout: String,
    #[command(flatten)]
    db: DbArgs,
    /// Do not record this run in the history.
    #[arg(long)]
    no_history: bool,
    /// Listen to a live stream: connect to ENDPOINT, where its sender is bound.
    #[arg(
        long,
        value_name = "ENDPOINT",
        help_heading = "Listening to a live stream"
    )]
    connect: Option<String>,
    /// Listen to a live stream: bind ENDPOINT (tcp://127.0.0.1:* picks a port, printed on
    /// stderr) for its senders to connect to.
    #[arg(
        long,
        value_name = "ENDPOINT",
        help_heading = "Listening to a live stream"
    )]
    bind: Option<String>,
    /// The listening socket: SUB (the stream is published) or PULL (it is pushed).
    #[arg(
        long = "type",
        value_name = "SUB|PULL",
        help_heading = "Listening to a live stream"
    )]
    kind: Option<String>,
    /// For SUB: subscribe to this prefix (default: everything).
    #[arg(
        long,
        value_name = "PREFIX",
        help_heading = "Listening to a live stream"
    )]
    subscribe: Option<String>,
    /// Listen this long at most (e.g. 10s, 2m).
    #[arg(
        long,
        default_value = "10s",
        value_name = "DURATION",
        help_heading = "Listening to a live stream"
    )]
    duration: String,
    /// Stop after this many messages (e.g. 100000, 1M).
    #[arg(long, value_name = "N", help_heading = "Listening to a live stream")]
    count: Option<String>,
    /// Where the sequence number is, for streams not written by zmqperf:
    /// frame=F,offset=O,width=1|2|4|8,endian=big|little, or frame=F,offset=O,text for
    /// decimal digits. Default: the zmqperf measurement header.
    #[arg(
        long,
        value_name = "FIELD",
        help_heading = "Listening to a live stream"
    )]
    seq: Option<String>,
    /// Where a stream id is (the same form as --seq), to tell several senders apart.
    /// Default: the header's stream id, or one stream.
    #[arg(
        long,
        value_name = "FIELD",
        help_heading = "Listening to a live stream"
    )]
    stream_id: Option<String>,
    /// Messages each run of a sender sends (numbers 0 to N-1), if known: a missing tail is
    /// then counted as lost at the end.
    #[arg(long, value_name = "N", help_heading = "Listening to a live stream")]
    expect: Option<String>,
    /// The largest message the listener takes (ZMQ_MAXMSGSIZE): a sender that declares a
    /// larger one is disconnected, so a stray peer cannot make the listener hold its size.
    #[arg(
        long,
        default_value = "64MiB",
        value_name = "BYTES",
        help_heading = "Listening to a live stream"
    )]
    max_size: String,
    /// A silence at least this long counts as an idle period, and at the end of the listen
    /// as a sender that stopped.
    #[arg(
        long,
        default_value = "1s",
        value_name = "DURATION",
        help_heading = "Listening to a live stream"
    )]
    idle: String,
}

fn list<T>(s: &Option<String>, f: impl Fn(&str) -> Result<T>) -> Result<Option<Vec<T>>> {
    s.as_ref()
        .map(|s| {
            s.split(',')
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(&f)
                .collect()
        })
        .transpose()
}

/// The validated configuration of the options.
fn config(a: &DiagnoseArgs) -> Result<Config> {
    let exe = zmqperf::runner::this_exe()?;
    let mut cfg = Config::new(exe);
    cfg.quick = a.quick;
    cfg.timeout = parse_duration("--timeout", &a.timeout)?;
    if cfg.timeout < MIN_TIMEOUT {
        return Err(Error::invalid(
            "--timeout",
            &a.timeout,
            "too short for the experiments (a sender process alone takes longer to start); give at least 100ms",
        ));
    }
    if let Some(mut ts) = list(&a.transports, runner::plan::parse_classic_transport)? {
        if ts.is_empty() {
            return Err(Error::invalid(
                "--transports",
                a.transports.as_deref().unwrap_or(""),
                "name at least one of tcp, ipc, inproc",
            ));
        }
        let mut seen = Vec::new();
        ts.retain(|t| {
            let first = !seen.contains(t);
            seen.push(*t);
            first
        });
        cfg.transports = ts;
    }
    if let Some(only) = list(&a.only, Experiment::parse)? {
        if only.is_empty() {
            return Err(Error::invalid(
                "--only",
                a.only.as_deref().unwrap_or(""),
                "name at least one experiment: slow-joiner, hwm, fast-quit, sender-stops, deep-queue",
            ));
        }
        cfg.experiments = Experiment::ALL
            .into_iter()
            .filter(|e| only.contains(e))
            .collect();
    }
    Ok(cfg)
}

/// Progress on stderr, and each finding to the history as soon as it is made. On a
/// terminal a live line: the step and, once a step is done, the time left at the pace of
/// the steps done so far; elsewhere a line per step.
struct Progress<'a> {
    live: Live,
    eta: Option<Eta>,
    step_started: Instant,
    on_finding: Box<dyn FnMut(&Finding) + 'a>,
}

impl Observer for Progress<'_> {
    fn started(&mut self, index: usize, total: usize, step: &Step) {
        let now = Instant::now();
        let eta = self.eta.get_or_insert_with(|| {
            // Steps differ, and nothing says by how much: each counts the same.
            let one = Planned {
                fixed_s: 0.0,
                guess_s: 1.0,
            };
            Eta::new(vec![one; total])
        });
        if index > 0 {
            eta.done(index - 1, (now - self.step_started).as_secs_f64());
        }
        eta.started(index);
        self.step_started = now;
        let line = format!(
            "[{}/{total}] {} over {}",
            index + 1,
            step.part.label(),
            step.transport
        );
        if self.live.is_live() {
            let end =
                (index > 0).then(|| now + std::time::Duration::from_secs_f64(eta.left_s(0.0)));
            self.live.set(line, end);
        } else {
            self.live.log(&line);
        }
    }

    fn finding(&mut self, finding: &Finding) {
        (self.on_finding)(finding);
    }
}

impl Drop for Progress<'_> {
    fn drop(&mut self) {
        self.live.finish();
    }
}

/// `zmqperf diagnose`.
pub fn run(a: &DiagnoseArgs, command: String) -> Result<()> {
    a.print.check("diagnose", true, Some(&a.db.path()))?;
    if let Some(listen) = live::listen_config(a)? {
        return live::run_listen(a, listen, command);
    }
    let cfg = config(a)?;
    let (steps, notes) = diagnose::plan(&cfg);
    for n in &notes {
        zmqperf::errln!("zmqperf: note: {n}");
    }
    if steps.is_empty() {
        return Err(Error::invalid(
            "--only",
            a.only.as_deref().unwrap_or(""),
            "nothing to run over these transports; add tcp or ipc to --transports",
        ));
    }
    let mut run = runner::new_run(command, None);
    let mut session = a.db.session(a.no_history, &run)?;
    runner::catch_signals();
    let started = Instant::now();
    let mut store_error = None;
    {
        let mut progress = Progress {
            live: Live::on_stderr(),
            eta: None,
            step_started: Instant::now(),
            on_finding: Box::new(|f: &Finding| {
                if let Err(e) = session.finding(f) {
                    store_error.get_or_insert(e);
                }
            }),
        };
        run.findings = diagnose::run(&cfg, &steps, &mut progress);
    }
    let status = if runner::interrupted() {
        RunStatus::Interrupted
    } else {
        RunStatus::Complete
    };
    runner::finish(&mut run, status);
    session.mark_end(&run)?;
    if let Some(e) = store_error {
        return Err(e.into());
    }
    let header = format!(
        "zmqperf diagnose: {} experiment step{} in {:.1} s\n\n",
        steps.len(),
        if steps.len() == 1 { "" } else { "s" },
        started.elapsed().as_secs_f64()
    );
    // The run is recorded whatever became of the printing (a -o that could not be written).
    let printed = print_run(a, &run, header);
    session.announce()?;
    printed?;
    if run.status == RunStatus::Interrupted {
        return Err(Error::Interrupted(format!(
            "{} findings made and recorded",
            run.findings.len()
        )));
    }
    Ok(())
}

/// The run as `--format` asks: the findings' text after `header` (table), else the run's
/// report in that format; to stdout or `-o`.
fn print_run(a: &DiagnoseArgs, run: &zmqperf::model::RunResult, header: String) -> Result<()> {
    let text = match a.print.chosen("diagnose", true)? {
        zmqperf::report::Format::Table => header + &zmqperf::report::table::findings_text(run),
        f => zmqperf::report::render(run, f),
    };
    a.print.print(&text, Some(&a.db.path()))
}
