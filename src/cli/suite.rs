//! `zmqperf run`: the suite, with a live progress line, results stored case by case, and
//! the report at the end.

use clap::Args;
use std::io::IsTerminal;
use std::time::Instant;
use zmqperf::error::{Error, Result};
use zmqperf::model::{CaseResult, Workload};
use zmqperf::parse::{parse_count, parse_duration, parse_size};
use zmqperf::runner::plan::{self, Scope, Selection};
use zmqperf::runner::{self, CaseSpec, Observer, Settings};
use zmqperf::topology::builtin;

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
    /// (three PUSH senders into one PULL).
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
    #[command(flatten)]
    pub out: OutArgs,
    #[command(flatten)]
    pub db: DbArgs,
    /// Do not record this run in the history.
    #[arg(long)]
    pub no_history: bool,
}

/// Where the history lives.
#[derive(Args, Clone)]
pub struct DbArgs {
    /// History database (default: $ZMQPERF_DB, else the user's data folder).
    #[arg(long, value_name = "PATH")]
    pub db: Option<String>,
}

impl DbArgs {
    /// Tells the user where a run was recorded and how to look at it.
    pub fn announce(&self, run_id: &str) {
        eprintln!(
            "zmqperf: run {run_id} recorded in {} (zmqperf show {run_id}; zmqperf report {run_id} --format html -o report.html)",
            self.path().display()
        );
    }

    /// The history with `run` begun in it, or None with `--no-history`.
    pub fn begin(
        &self,
        no_history: bool,
        run: &zmqperf::model::RunResult,
    ) -> Result<Option<zmqperf::store::Store>> {
        if no_history {
            return Ok(None);
        }
        let mut s = zmqperf::store::Store::open(self.path())?;
        s.begin_run(run)?;
        Ok(Some(s))
    }

    /// The database path in force.
    pub fn path(&self) -> std::path::PathBuf {
        self.db
            .as_ref()
            .map(std::path::PathBuf::from)
            .unwrap_or_else(zmqperf::store::default_db_path)
    }
}

/// How to print a report.
#[derive(Args, Clone)]
pub struct OutArgs {
    /// Report format: table, json, csv, markdown, html.
    #[arg(long, default_value = "table", value_name = "FORMAT")]
    pub format: String,
    /// Write the report to this file instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,
}

impl OutArgs {
    /// Checks, before anything is measured or read, that the format is known and that `-o`
    /// names a file that can be written and is not the history database `db`.
    pub fn check(&self, db: Option<&std::path::Path>) -> Result<()> {
        zmqperf::report::Format::parse(&self.format)?;
        let Some(out) = &self.output else {
            return Ok(());
        };
        let p = std::path::Path::new(out);
        let bad = |why: String| Error::invalid("-o", out, why);
        if let Some(db) = db {
            let same = match (p.canonicalize(), db.canonicalize()) {
                (Ok(a), Ok(b)) => a == b,
                _ => p == db,
            };
            if same {
                return Err(bad(
                    "that is the history database; writing the report there would destroy every run recorded in it. Name another file, e.g. -o report.html".into(),
                ));
            }
        }
        if p.is_dir() {
            return Err(bad(
                "that is a folder; name a file in it, e.g. -o report.html".into(),
            ));
        }
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        };
        if !dir.is_dir() {
            return Err(bad(format!(
                "the folder {} does not exist; create it or write somewhere else",
                dir.display()
            )));
        }
        let target = if p.exists() { p } else { dir };
        if !writable(target) {
            return Err(bad(format!(
                "{} is not writable here; pick a file you may write",
                target.display()
            )));
        }
        Ok(())
    }

    /// Renders `run` in the chosen format to stdout or the file. If the file cannot be
    /// written after all (the disk filled up during the run), the report goes to standard
    /// output and the reason to standard error: nothing measured is thrown away.
    pub fn emit(&self, run: &zmqperf::model::RunResult) -> Result<()> {
        let format = zmqperf::report::Format::parse(&self.format)?;
        let text = zmqperf::report::render(run, format);
        match &self.output {
            Some(path) => {
                if let Err(e) = std::fs::write(path, &text) {
                    eprintln!(
                        "zmqperf: could not write the report to {path} ({e}); it follows on standard output"
                    );
                    print!("{text}");
                    return Err(Error::Io {
                        op: format!("writing the report to {path}"),
                        source: e,
                    });
                }
            }
            None => print!("{text}"),
        }
        Ok(())
    }
}

/// Whether this process may write `p` (a file, or a folder to create a file in).
fn writable(p: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(p.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid NUL-terminated path; access only reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

fn list<T>(s: &Option<String>, f: impl Fn(&str) -> Result<T>) -> Result<Option<Vec<T>>> {
    s.as_ref()
        .map(|s| s.split(',').map(|x| f(x.trim())).collect())
        .transpose()
}

/// Builds the plan and settings from the options.
pub fn plan(a: &RunArgs) -> Result<(Vec<CaseSpec>, Option<Workload>, Settings)> {
    let settings = Settings {
        timeout: parse_duration("--timeout", &a.timeout)?,
        case_timeout: parse_duration("--case-timeout", &a.case_timeout)?,
        exe: std::env::current_exe().map_err(|e| Error::Io {
            op: "finding the zmqperf binary".into(),
            source: e,
        })?,
        stamp_every: parse_count("--stamp-every", &a.stamp_every)?,
        floor: !a.no_floor,
    };
    let scope = if a.quick {
        Scope::Quick
    } else if a.full {
        Scope::Full
    } else {
        Scope::Default
    };
    let sel = Selection {
        patterns: list(&a.patterns, builtin::parse_name)?,
        transports: list(&a.transports, plan::parse_transport)?,
        sizes: list(&a.sizes, |s| parse_size("--sizes", s))?,
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
    };
    if let Some(path) = &a.workload {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
            op: format!("reading workload file {path}"),
            source: e,
        })?;
        let plan = plan::from_file_with(path, &text, &sel)?;
        return Ok((
            plan,
            Some(Workload {
                path: path.clone(),
                text,
            }),
            settings,
        ));
    }
    Ok((plan::from_selection(scope, &sel), None, settings))
}

/// Estimated seconds a case takes, from the time of the ones done so far per unit.
fn weight(c: &CaseSpec) -> f64 {
    let per = if c.is_latency() { 60e-6 } else { 1e-6 } * (1.0 + c.size as f64 / 8192.0);
    let base = if c.transport == zmqperf::endpoint::Transport::Inproc {
        0.01
    } else {
        0.06
    };
    c.repetitions as f64 * (base + (c.count + c.warmup) as f64 * per)
}

/// Prints progress on stderr and hands each finished case to `on_case`.
pub struct Progress<'a> {
    plan_weights: Vec<f64>,
    started: Instant,
    done_weight: f64,
    current: usize,
    live: bool,
    label: String,
    on_case: Box<dyn FnMut(&CaseResult) + 'a>,
}

impl<'a> Progress<'a> {
    /// Watches a plan.
    pub fn new(plan: &[CaseSpec], on_case: impl FnMut(&CaseResult) + 'a) -> Self {
        Progress {
            plan_weights: plan.iter().map(weight).collect(),
            started: Instant::now(),
            done_weight: 0.0,
            current: 0,
            live: std::io::stderr().is_terminal(),
            label: String::new(),
            on_case: Box::new(on_case),
        }
    }

    fn eta(&self) -> String {
        let total: f64 = self.plan_weights.iter().sum();
        let spent = self.started.elapsed().as_secs_f64();
        let left = if self.done_weight > 0.0 {
            spent / self.done_weight * (total - self.done_weight)
        } else {
            total - self.done_weight
        };
        format!("ETA {:.0} s", left.max(0.0))
    }

    fn line(&self, text: &str) {
        if self.live {
            eprint!("\r\x1b[2K{text}");
        } else {
            eprintln!("{text}");
        }
    }
}

impl Observer for Progress<'_> {
    fn case_started(&mut self, index: usize, total: usize, spec: &CaseSpec) {
        self.current = index;
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
        let l = format!("{}  {}", self.label, self.eta());
        self.line(&l);
    }

    fn repetition(&mut self, rep: u32, of: u32) {
        if self.live {
            let l = format!("{} rep {rep}/{of}  {}", self.label, self.eta());
            self.line(&l);
        }
    }

    fn case_done(&mut self, result: &CaseResult) {
        self.done_weight += self.plan_weights.get(self.current).copied().unwrap_or(0.0);
        if let Some(e) = &result.error {
            let l = format!("{}  FAILED: {e}", self.label);
            if self.live {
                eprintln!("\r\x1b[2K{l}");
            } else {
                eprintln!("{l}");
            }
        }
        (self.on_case)(result);
    }
}

impl Drop for Progress<'_> {
    fn drop(&mut self) {
        if self.live {
            eprint!("\r\x1b[2K");
        }
    }
}

extern "C" fn on_sigint(_: libc::c_int) {
    runner::interrupt();
}

/// Makes Ctrl-C end the run cleanly after the current repetition (a second one kills).
pub fn catch_ctrl_c() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// How long the end of a run keeps trying to write to a busy history.
const RECORD_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// Writes the cases a busy history did not take during the run, then the run's end,
/// retrying for [`RECORD_PATIENCE`]. If some cases still cannot be written, the run is
/// marked `partial` when that at least can be written, and the error says how many.
fn record_rest(
    s: &mut zmqperf::store::Store,
    run: &zmqperf::model::RunResult,
    pending: &mut Vec<CaseResult>,
) -> Result<()> {
    let give_up = std::time::Instant::now() + RECORD_PATIENCE;
    let mut last_err = None;
    let mut said = false;
    loop {
        while let Some(case) = pending.first() {
            match s.add_case(&run.run_id, case) {
                Ok(()) => {
                    pending.remove(0);
                }
                Err(e) => {
                    last_err = Some(e);
                    break;
                }
            }
        }
        let status = if pending.is_empty() {
            run.status.as_str()
        } else {
            "partial"
        };
        if pending.is_empty() || std::time::Instant::now() >= give_up {
            match s.finish_run(&run.run_id, status, run.finished_at.as_deref()) {
                Ok(()) if pending.is_empty() => return Ok(()),
                Ok(()) => {}
                Err(e) if std::time::Instant::now() < give_up => {
                    last_err = Some(e);
                    std::thread::sleep(std::time::Duration::from_millis(500));
                    continue;
                }
                Err(e) => last_err = Some(e),
            }
            let e = last_err.expect("a write failed");
            eprintln!(
                "zmqperf: {} of {} cases could not be recorded in {} within {} s (the report below has them all): {e}",
                pending.len(),
                run.cases.len(),
                s.path().display(),
                RECORD_PATIENCE.as_secs()
            );
            return Err(e.into());
        }
        if !said {
            eprintln!(
                "zmqperf: the history is busy; retrying for up to {} s to record {} case(s)",
                RECORD_PATIENCE.as_secs(),
                pending.len()
            );
            said = true;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// `zmqperf run`: plans, runs, records each case in the history as soon as it is done,
/// and prints the report (a partial one after Ctrl-C).
pub fn run(a: &RunArgs, command: String) -> Result<()> {
    let (plan, workload, settings) = plan(a)?;
    a.out.check(Some(&a.db.path()))?;
    let mut run = runner::new_run(command, workload);
    let mut store = a.db.begin(a.no_history, &run)?;
    catch_ctrl_c();
    // Cases not yet in the history, in order: a write that fails (the database locked by
    // another process) keeps them here, and they are written at the end.
    let mut pending: Vec<CaseResult> = Vec::new();
    {
        let run_id = run.run_id.clone();
        let mut progress = Progress::new(&plan, |case: &CaseResult| {
            let Some(s) = store.as_mut() else { return };
            pending.push(case.clone());
            if pending.len() == 1 {
                // Once a write failed, the others wait for the end: the run goes on.
                if s.add_case(&run_id, case).is_ok() {
                    pending.clear();
                } else {
                    eprintln!(
                        "\nzmqperf: the history {} is busy (locked by another process?); the cases are kept and will be recorded at the end",
                        s.path().display()
                    );
                }
            }
        });
        runner::run_suite(&mut run, &plan, &settings, &mut progress);
    }
    let recorded = match store.as_mut() {
        Some(s) => record_rest(s, &run, &mut pending),
        None => Ok(()),
    };
    // The report is printed whatever became of the history: nothing measured is lost.
    let emitted = a.out.emit(&run);
    recorded?;
    emitted?;
    if run.status == "interrupted" {
        eprintln!(
            "zmqperf: interrupted: {} of {} cases done and recorded",
            run.cases.len(),
            plan.len()
        );
    }
    if store.is_some() {
        a.db.announce(&run.run_id);
    }
    Ok(())
}
