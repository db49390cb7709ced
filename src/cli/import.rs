//! `zmqperf import FILE`: a run exported on another machine, recorded in this history.

use clap::Args;
use zmqperf::error::Result;
use zmqperf::store::{import, Store};

pub const EXAMPLES: &str = "\
Examples:
  # on machine b: export a run
  zmqperf report last --format json -o b-run.json
  # here: take it into this history, then compare it with a run made here
  zmqperf import b-run.json
  zmqperf compare last last~1
  # straight through ssh
  ssh b zmqperf report last --format json | zmqperf import -

The run keeps its original id, times and environment; it gets a new id in this history,
and `show` and `history` say where it came from. A file that is not a zmqperf run's JSON, is cut short
or damaged, or holds a newer schema is refused (exit 3); a run this history already holds
is refused naming the run that has it (exit 21); a file that cannot be read, exit 11.";

/// `zmqperf import FILE`.
#[derive(Args)]
pub struct ImportArgs {
    /// The run's JSON, as `zmqperf report RUN --format json` writes it; `-` for standard
    /// input.
    pub file: String,
    #[command(flatten)]
    pub db: super::suite::DbArgs,
}

/// Reads the file, records its run under a new id, and says so.
pub fn run(a: &ImportArgs) -> Result<()> {
    let file = import::display_name(&a.file);
    let exported = import::read_export(&a.file)?;
    let mut store = Store::open(a.db.path())?;
    let local = store.import_run(&exported, &file, std::time::SystemTime::now())?;
    let imported = local
        .imported
        .as_ref()
        .expect("an imported run has its mark");
    zmqperf::outln!(
        "imported run {} (from {}, started {}, {} case{}{}) as {} in {}",
        imported.original_run_id,
        if imported.from_host.is_empty() {
            "an unnamed host"
        } else {
            &imported.from_host
        },
        local.started_at,
        local.cases.len(),
        if local.cases.len() == 1 { "" } else { "s" },
        match local.findings.len() {
            0 => String::new(),
            1 => ", 1 finding".to_string(),
            n => format!(", {n} findings"),
        },
        local.run_id,
        store.path().display()
    );
    zmqperf::outln!(
        "see it with `zmqperf show {}`; compare it with `zmqperf compare {} RUN`",
        local.run_id,
        local.run_id
    );
    Ok(())
}
