//! `zmqperf diagnose`: runs the diagnostic experiments with a progress line, records the
//! run and its findings in the history as they come, and prints the findings (or the run
//! as JSON). A sender process an experiment needs is a `__node` child (the source role).

use super::suite::{catch_ctrl_c, DbArgs};
use clap::Args;
use std::io::IsTerminal;
use std::time::Instant;
use zmqperf::diagnose::{self, Config, Experiment, Observer, Step};
use zmqperf::error::{Error, Result};
use zmqperf::model::Finding;
use zmqperf::parse::parse_duration;
use zmqperf::runner;

/// Examples shown by `zmqperf diagnose --help`.
pub const EXAMPLES: &str = "\
Examples:
  zmqperf diagnose                               # every experiment over tcp, ipc, inproc (~10 s)
  zmqperf diagnose --quick                       # smaller experiments (~5 s)
  zmqperf diagnose --only slow-joiner,hwm --transports tcp
  zmqperf diagnose --json > findings.json        # the run, findings included, as JSON
  zmqperf report last --format html -o diagnose.html

Experiments: slow-joiner, hwm, fast-quit, sender-stops, deep-queue (see docs/diagnose.md).";

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
    /// Print the run as JSON (the findings with their evidence) instead of text.
    #[arg(long)]
    json: bool,
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
    let exe = std::env::current_exe().map_err(|e| Error::Io {
        op: "finding the zmqperf binary".into(),
        source: e,
    })?;
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
    if let Some(mut ts) = list(&a.transports, runner::plan::parse_transport)? {
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

/// Progress on stderr, and each finding to the history as soon as it is made.
struct Progress<'a> {
    live: bool,
    on_finding: Box<dyn FnMut(&Finding) + 'a>,
}

impl Observer for Progress<'_> {
    fn started(&mut self, index: usize, total: usize, step: &Step) {
        let line = format!(
            "[{}/{total}] {} over {}",
            index + 1,
            step.part.label(),
            step.transport
        );
        if self.live {
            eprint!("\r\x1b[2K{line}");
        } else {
            eprintln!("{line}");
        }
    }

    fn finding(&mut self, finding: &Finding) {
        (self.on_finding)(finding);
    }
}

impl Drop for Progress<'_> {
    fn drop(&mut self) {
        if self.live {
            eprint!("\r\x1b[2K");
        }
    }
}

/// `zmqperf diagnose`.
pub fn run(a: &DiagnoseArgs, command: String) -> Result<()> {
    let cfg = config(a)?;
    let (steps, notes) = diagnose::plan(&cfg);
    for n in &notes {
        eprintln!("zmqperf: note: {n}");
    }
    if steps.is_empty() {
        return Err(Error::invalid(
            "--only",
            a.only.as_deref().unwrap_or(""),
            "nothing to run over these transports; add tcp or ipc to --transports",
        ));
    }
    let mut run = runner::new_run(command, None);
    let mut store = a.db.begin(a.no_history, &run)?;
    catch_ctrl_c();
    let started = Instant::now();
    let mut store_error = None;
    {
        let run_id = run.run_id.clone();
        let mut progress = Progress {
            live: std::io::stderr().is_terminal(),
            on_finding: Box::new(|f: &Finding| {
                if let Some(s) = store.as_mut() {
                    if let Err(e) = s.add_finding(&run_id, f) {
                        store_error.get_or_insert(e);
                    }
                }
            }),
        };
        run.findings = diagnose::run(&cfg, &steps, &mut progress);
    }
    run.status = if runner::interrupted() {
        "interrupted"
    } else {
        "complete"
    }
    .into();
    run.finished_at = Some(runner::env::rfc3339(std::time::SystemTime::now()));
    if let Some(s) = store.as_mut() {
        s.finish_run(&run.run_id, &run.status, run.finished_at.as_deref())?;
    }
    if let Some(e) = store_error {
        return Err(e.into());
    }
    if a.json {
        print!(
            "{}",
            zmqperf::report::render(&run, zmqperf::report::Format::Json)
        );
    } else {
        println!(
            "zmqperf diagnose: {} experiment step{} in {:.1} s\n",
            steps.len(),
            if steps.len() == 1 { "" } else { "s" },
            started.elapsed().as_secs_f64()
        );
        print!("{}", zmqperf::report::table::findings_text(&run));
    }
    if store.is_some() {
        a.db.announce(&run.run_id);
    }
    if run.status == "interrupted" {
        return Err(Error::Interrupted(format!(
            "{} findings made and recorded",
            run.findings.len()
        )));
    }
    Ok(())
}
