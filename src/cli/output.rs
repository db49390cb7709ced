//! Where a run goes: the history (`--db`, recording with retries when it is busy) and the
//! report (`--format`, `-o`, checked before anything is measured).

use clap::Args;
use zmqperf::error::{Error, Result};
use zmqperf::model::CaseResult;

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
    /// After a run's last write: checks that the history still holds it (the file was not
    /// deleted, replaced or damaged during the run), then tells the user where the run was
    /// recorded and how to look at it. A history that lost the run is an error (exit 13)
    /// and nothing is announced.
    pub fn announce(&self, store: &zmqperf::store::Store, run_id: &str) -> Result<()> {
        store.check_kept()?;
        let path = self.path();
        let where_ = if self.db.is_none() && zmqperf::store::default_is_current_dir() {
            format!(
                "{} in the current folder (HOME is not set: set ZMQPERF_DB or pass --db PATH to keep the history elsewhere)",
                path.display()
            )
        } else {
            path.display().to_string()
        };
        eprintln!(
            "zmqperf: run {run_id} recorded in {where_} (zmqperf show {run_id}; zmqperf report {run_id} --format html -o report.html)"
        );
        Ok(())
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
        let _ = RECORDED_RUN.set(run.run_id.clone());
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
        match &self.output {
            Some(path) => {
                if let Err(e) = zmqperf::report::file::write_output("-o", path, text.as_bytes(), db)
                {
                    eprintln!(
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

/// How long the end of a run keeps trying to write to a history another process holds
/// locked.
const RECORD_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// Writes the cases the history did not take during the run, then the run's end (see
/// [`zmqperf::store::Store::record_rest`]): a lock is waited out for [`RECORD_PATIENCE`],
/// and the error names SQLite's reason, how many cases are missing and how the run is
/// marked (`partial`).
pub fn record_rest(
    s: &mut zmqperf::store::Store,
    run: &zmqperf::model::RunResult,
    pending: &mut Vec<CaseResult>,
) -> Result<()> {
    let n = pending.len();
    s.record_rest(run, pending, RECORD_PATIENCE, |e| {
        eprintln!(
            "zmqperf: {e}; retrying for up to {} s to record {n} case(s) and the end of the run",
            RECORD_PATIENCE.as_secs()
        )
    })?;
    Ok(())
}

/// A comma-separated option's values, each through `f` (None when the option is absent).
pub fn list<T>(s: &Option<String>, f: impl Fn(&str) -> Result<T>) -> Result<Option<Vec<T>>> {
    s.as_ref()
        .map(|s| s.split(',').map(|x| f(x.trim())).collect())
        .transpose()
}
