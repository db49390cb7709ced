//! Where a run goes: the history (`--db`: the recording session of
//! [`zmqperf::runner::session`], and the words of its notices) and the report (`--format`,
//! `-o`, checked before anything is measured).

use clap::Args;
use zmqperf::error::{Error, Result};
use zmqperf::model::RunResult;
use zmqperf::runner::notice::Notice;
use zmqperf::runner::session::{History, Session};

/// The run this process began in the history, if any (what a failure to print the report
/// may point the user to).
pub static RECORDED_RUN: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Where the history lives.
#[derive(Args, Clone)]
pub struct DbArgs {
    /// History database (default: $ZMQPERF_DB, else the user's data folder).
    #[arg(long, value_name = "PATH")]
    pub db: Option<String>,
}

impl DbArgs {
    /// The recording session of `run`: begun in the history, or one that records nothing
    /// with `--no-history`.
    pub fn session(&self, no_history: bool, run: &RunResult) -> Result<Session> {
        if no_history {
            return Session::begin(None, run);
        }
        let history = History {
            path: self.path(),
            by_default: self.db.is_none(),
        };
        let session = Session::begin(Some(history), run)?;
        let _ = RECORDED_RUN.set(run.run_id.clone());
        Ok(session)
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
    /// Report format: table, json, csv, markdown, html, or hlog (HdrHistogram's interval log of the latency histograms).
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
        check_output(self.output.as_deref(), db)
    }

    /// Renders `run` in the chosen format to stdout or the file (written whole, never over
    /// the history `db`: see [`zmqperf::report::file`]). If the file cannot be written
    /// after all (the disk filled up during the run), the report goes to standard output
    /// and the reason to standard error: nothing measured is thrown away.
    pub fn emit(
        &self,
        run: &zmqperf::model::RunResult,
        db: Option<&std::path::Path>,
    ) -> Result<()> {
        let format = zmqperf::report::Format::parse(&self.format)?;
        let text = zmqperf::report::render(run, format);
        let text = fitted(format, self.output.as_deref(), text);
        deliver(self.output.as_deref(), &text, db)
    }
}

/// Checks, before anything is measured or read, that `-o` (if given) names a file that can
/// be written and is not the history database `db`.
pub(crate) fn check_output(output: Option<&str>, db: Option<&std::path::Path>) -> Result<()> {
    let Some(out) = output else {
        return Ok(());
    };
    let p = std::path::Path::new(out);
    let bad = |why: String| Error::invalid("-o", out, why);
    if db.is_some_and(|db| zmqperf::report::file::is_same_file(p, db)) {
        return Err(zmqperf::report::file::names_the_history("-o", out));
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

/// Writes `text` to stdout or the file `-o` names (written whole, never over the history
/// `db`). If the file cannot be written after all (the disk filled up during the run), the
/// text goes to standard output and the reason to standard error: nothing measured is
/// thrown away.
pub(crate) fn deliver(
    output: Option<&str>,
    text: &str,
    db: Option<&std::path::Path>,
) -> Result<()> {
    match output {
        Some(path) => {
            if let Err(e) = zmqperf::report::file::write_output("-o", path, text.as_bytes(), db) {
                zmqperf::errln!(
                    "zmqperf: could not write the report to {path} ({e}); it follows on standard output"
                );
                print!("{text}");
                return Err(e);
            }
        }
        None => print!("{text}"),
    }
    Ok(())
}

/// `--format` and `-o` of a command with a text and a JSON of its own (fanout, sub-cluster,
/// pub, diagnose, history): `table` and `json` are the command's own; `markdown`, `html`
/// and `csv` are the report of the run it recorded, as `zmqperf report` writes it.
#[derive(Args, Clone)]
pub struct PrintArgs {
    /// table (the default), json, or, for a command that records its run, markdown, html or
    /// csv: the run's report, as `zmqperf report` writes it.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Write it to this file instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,
    /// The same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub json: bool,
}

impl PrintArgs {
    /// The format asked for; `of_run`: whether `command` records a run (markdown, html and
    /// csv are that run's report).
    pub fn chosen(&self, command: &str, of_run: bool) -> Result<zmqperf::report::Format> {
        use zmqperf::report::Format;
        let f = match (&self.format, self.json) {
            (_, true) => Format::Json,
            (Some(f), false) => Format::parse(f)?,
            (None, false) => Format::Table,
        };
        if !of_run && !matches!(f, Format::Table | Format::Json) {
            return Err(Error::invalid(
                "--format",
                self.format.as_deref().unwrap_or_default(),
                format!("{command} prints table or json"),
            ));
        }
        Ok(f)
    }

    /// Checks the format and `-o` before anything is measured or read.
    pub fn check(&self, command: &str, of_run: bool, db: Option<&std::path::Path>) -> Result<()> {
        self.chosen(command, of_run)?;
        check_output(self.output.as_deref(), db)
    }

    /// Writes `text` to stdout or `-o` (a table on stdout fitted to the width).
    pub fn print(&self, text: &str, db: Option<&std::path::Path>) -> Result<()> {
        let format = match (&self.format, self.json) {
            (_, true) => zmqperf::report::Format::Json,
            (Some(f), false) => zmqperf::report::Format::parse(f)?,
            (None, false) => zmqperf::report::Format::Table,
        };
        let text = fitted(format, self.output.as_deref(), text.to_string());
        deliver(self.output.as_deref(), &text, db)
    }
}

/// `text` fitted to the width ([`zmqperf::term::fit`]) when it is a table for standard
/// output; other formats and files as they are.
pub(crate) fn fitted(
    format: zmqperf::report::Format,
    output: Option<&str>,
    text: String,
) -> String {
    if format == zmqperf::report::Format::Table && output.is_none() {
        zmqperf::term::fit(&text)
    } else {
        text
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

/// The words of the library's notices, on stderr (installed in `main` as the printer of
/// `zmqperf::runner::notice`).
pub fn say(notice: &Notice) {
    match notice {
        Notice::CaseKept { case_id, error } => zmqperf::errln!(
            "\nzmqperf: cannot record case {case_id} now ({error}); it and the cases after it are kept and written at the end of the run"
        ),
        Notice::Waiting {
            error,
            cases,
            patience,
        } => zmqperf::errln!(
            "zmqperf: {error}; retrying for up to {} s to record {cases} case(s) and the end of the run",
            patience.as_secs()
        ),
        Notice::Recorded {
            run_id,
            path,
            in_current_folder,
        } => {
            let where_ = if *in_current_folder {
                format!(
                    "{} in the current folder (HOME is not set: set ZMQPERF_DB or pass --db PATH to keep the history elsewhere)",
                    path.display()
                )
            } else {
                path.display().to_string()
            };
            zmqperf::errln!(
                "zmqperf: run {run_id} recorded in {where_} (zmqperf show {run_id}; zmqperf report {run_id} --format html -o report.html)"
            );
        }
        Notice::RunWithout {
            case_id,
            implementation,
            why,
        } => zmqperf::errln!("zmqperf: {case_id} is run without {implementation}: {why}"),
        Notice::LeftOutOfHostPairs { case_id, transport } => zmqperf::errln!(
            "zmqperf: {case_id} is left out of --host-pairs: {transport} cannot cross hosts (use --transports tcp)"
        ),
        Notice::Shipping { host, bytes } => zmqperf::errln!(
            "shipping zmqperf ({:.1} MB) to host {host} ...",
            *bytes as f64 / 1e6
        ),
        Notice::Shipped { host, remote, took } => zmqperf::errln!(
            "shipped zmqperf to host {host}: {remote} ({:.1} s)",
            took.as_secs_f64()
        ),
        Notice::ShippingUnstripped { exe } => zmqperf::errln!(
            "zmqperf: neither strip nor objcopy (binutils) is on PATH: shipping {} with its debug information",
            exe.display()
        ),
        Notice::StillWaiting { since, late } => {
            let late: Vec<String> = late
                .iter()
                .map(|(name, at)| format!("{name} (stopped at {at} s)"))
                .collect();
            zmqperf::errln!(
                "zmqperf: the stream ended {} s ago; still waiting for {}",
                since.as_secs(),
                late.join(", ")
            )
        }
        Notice::IgnoredLine {
            line,
            versions: (v1, v),
        } => zmqperf::errln!(
            "zmqperf node: ignored a line from the runner that is not a control message of versions {v1} to {v}: {line}"
        ),
    }
}

/// A comma-separated option's values, each through `f` (None when the option is absent).
pub fn list<T>(s: &Option<String>, f: impl Fn(&str) -> Result<T>) -> Result<Option<Vec<T>>> {
    s.as_ref()
        .map(|s| s.split(',').map(|x| f(x.trim())).collect())
        .transpose()
}
