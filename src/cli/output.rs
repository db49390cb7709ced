//! Where a run goes: the history (`--db`, recording with retries when it is busy) and the
//! report (`--format`, `-o`, checked before anything is measured).

use clap::Args;
use zmqperf::error::{Error, Result};
use zmqperf::model::CaseResult;

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

/// How long the end of a run keeps trying to write to a busy history.
const RECORD_PATIENCE: std::time::Duration = std::time::Duration::from_secs(30);

/// Writes the cases a busy history did not take during the run, then the run's end,
/// retrying for [`RECORD_PATIENCE`]. If some cases still cannot be written, the run is
/// marked `partial` when that at least can be written, and the error says how many.
pub fn record_rest(
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
            match s.finish(run, status) {
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

/// A comma-separated option's values, each through `f` (None when the option is absent).
pub fn list<T>(s: &Option<String>, f: impl Fn(&str) -> Result<T>) -> Result<Option<Vec<T>>> {
    s.as_ref()
        .map(|s| s.split(',').map(|x| f(x.trim())).collect())
        .transpose()
}
