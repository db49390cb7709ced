//! `zmqperf history`, `show`, `report` and `compare`: commands that read the history (and
//! never load libzmq), from their options to what they print.

use super::output::{DbArgs, OutArgs, PrintArgs};
use clap::Args;
use zmqperf::error::{Error, Result};

/// Options of `zmqperf compare`.
#[derive(Args)]
pub struct CompareArgs {
    /// The baseline run.
    pub run_a: String,
    /// The run to judge (with --by-host: a second run; more may follow).
    #[arg(required_unless_present = "by_host")]
    pub run_b: Option<String>,
    /// With --by-host: more runs.
    #[arg(requires = "by_host", value_name = "RUN")]
    pub more: Vec<String>,
    /// One table per kind, size and load: a row per pattern and transport, a column per
    /// host the runs' cases ran on (a case across hosts is a column `a->b`), each cell
    /// the case's median with its 95% interval. No verdict, no gate.
    #[arg(long, conflicts_with_all = ["fail_above", "allow_incomplete"])]
    pub by_host: bool,
    /// Fail (exit 15) when a case got worse by more than this, beyond noise (e.g. 5%).
    /// The gate also fails (exit 18) when it cannot judge everything: no figure compared,
    /// baseline cases missing, a case failed or measured less than asked, a run
    /// interrupted; and (exit 22) when a figure's interval is too wide to tell whether it
    /// got worse by more than this (it says how many repetitions would).
    #[arg(long, value_name = "PERCENT")]
    pub fail_above: Option<String>,
    /// Let the gate pass on what it could compare, even with cases missing or a run
    /// interrupted.
    #[arg(long, requires = "fail_above")]
    pub allow_incomplete: bool,
    /// text, or json: the comparison with the gate's verdict and its reasons (the exit
    /// code is the same).
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "table", "json"], conflicts_with = "by_host")]
    pub format: String,
    /// Write it to this file instead of standard output (the exit code is the same).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

/// `zmqperf history`: the newest `limit` runs.
pub fn history(limit: usize, print: &PrintArgs, db: &DbArgs) -> Result<()> {
    print.check("history", false, Some(&db.path()))?;
    if limit == 0 {
        return Err(Error::invalid(
            "--limit",
            "0",
            "show at least 1 run (the newest first), e.g. --limit 20",
        ));
    }
    let store = zmqperf::store::Store::open_existing(db.path())?;
    let runs = store.list_runs(Some(limit))?;
    let text = match print.chosen("history", false)? {
        zmqperf::report::Format::Json => zmqperf::report::json::envelope::<(), _>(
            "history",
            None,
            None,
            &serde_json::json!({ "runs": runs }),
            true,
        ),
        _ => zmqperf::report::history::format_history(&runs),
    };
    print.print(&text, Some(&db.path()))
}

/// `zmqperf show` and `zmqperf report`: one run of the history as a report.
pub fn show(run: &str, out: &OutArgs, db: &DbArgs) -> Result<()> {
    out.check(Some(&db.path()))?;
    let store = zmqperf::store::Store::open_existing(db.path())?;
    out.emit(&store.load_run(run)?, Some(&db.path()))
}

/// `zmqperf compare`: two runs case by case with the gate's verdict, or (`--by-host`) a
/// table of several runs with a column per host.
pub fn compare(args: &CompareArgs) -> Result<()> {
    let CompareArgs {
        run_a,
        run_b,
        more,
        by_host,
        fail_above,
        allow_incomplete,
        format,
        output,
        db,
    } = args;
    super::output::check_output(output.as_deref(), Some(&db.path()))?;
    let deliver = |text: &str| super::output::deliver(output.as_deref(), text, Some(&db.path()));
    let fit = |text: String| {
        super::output::fitted(zmqperf::report::Format::Table, output.as_deref(), text)
    };
    let threshold = fail_above
        .as_deref()
        .map(zmqperf::compare::parse_percent)
        .transpose()?;
    let store = zmqperf::store::Store::open_existing(db.path())?;
    if *by_host {
        let selectors = std::iter::once(run_a).chain(run_b).chain(more);
        let runs = selectors
            .map(|s| store.load_run(s))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        return deliver(&fit(zmqperf::report::terminal_safe(
            &zmqperf::report::compare::format_by_host(&runs),
        )));
    }
    let run_b = run_b
        .as_deref()
        .expect("clap requires RUN_B without --by-host");
    let (a, b) = (store.load_run(run_a)?, store.load_run(run_b)?);
    let mut c = zmqperf::compare::compare(&a, &b, threshold);
    c.allow_incomplete = *allow_incomplete;
    if format == "json" {
        deliver(&zmqperf::report::compare::comparison_json(&c))?;
    } else {
        deliver(&fit(zmqperf::report::terminal_safe(
            &zmqperf::report::compare::format_comparison(&c),
        )))?;
    }
    // The comparison's last line (or `reasons`) says why; the error names the runs.
    let (x, y) = (&a.run_id, &b.run_id);
    use zmqperf::compare::Verdict;
    match c.verdict() {
        Some(Verdict::Fail) => Err(Error::Regressed(format!(
            "{y} regressed past {}% against {x} (beyond noise)",
            threshold.unwrap_or(0.0),
        ))),
        Some(Verdict::Incomplete) => Err(Error::Incomplete(format!(
            "the gate could not judge {y} against {x}: the INCOMPLETE line (JSON: reasons) says why"
        ))),
        Some(Verdict::Inconclusive) => Err(Error::Inconclusive(format!(
            "the gate could not decide {y} against {x} at {}%: the INCONCLUSIVE line (JSON: repetitions_to_decide) says how many repetitions would",
            threshold.unwrap_or(0.0),
        ))),
        Some(Verdict::Pass) | None => Ok(()),
    }
}
