//! `run --find`, `--tune` and `--curve` over a plan: the plan checked as `run` checks it,
//! then each throughput case searched (cli::limit), tuned (cli::tune) or drawn as a curve
//! under a rising load (cli::curve), all its steps in one recorded run with the limits and
//! curves found.

use super::limit::{limit_result, outcome, Find, Searching};
use super::suite::RunArgs;
use zmqperf::error::{Error, Result};
use zmqperf::model::{RunStatus, Workload};
use zmqperf::runner::{self, CaseSpec, Settings};
use zmqperf::scenarios::limit::Slo;

/// `run --find`: the plan checked as `run` checks it, then searched.
pub fn run(a: &RunArgs, command: String) -> Result<()> {
    let Some((plan, workload, settings)) = super::suite::checked_plan(a, &command)? else {
        return Ok(());
    };
    find(a, &plan, workload, &settings, command)
}

/// Runs the search of `--find` over each throughput case of `plan`, recording every step.
fn find(
    a: &RunArgs,
    plan: &[CaseSpec],
    workload: Option<Workload>,
    settings: &Settings,
    command: String,
) -> Result<()> {
    let what = Find::parse(a.find.as_deref().unwrap_or("max-rate"));
    let slo = Slo::parse(&a.slo)?;
    let cases: Vec<&CaseSpec> = plan.iter().filter(|c| !c.is_latency()).collect();
    if cases.is_empty() {
        let (flag, value) = match &a.find {
            Some(f) => ("--find", f.as_str()),
            None => ("--curve", "on"),
        };
        return Err(Error::invalid(
            flag,
            value,
            "a round trip's rate and size are not offered but answered; search (or draw the \
             curve of) a throughput pattern, e.g. --patterns pushpull or pubsub",
        ));
    }
    let rate = plan.iter().find_map(|c| c.rate);
    let (start, ceiling) = match what {
        Find::Rate => (rate.unwrap_or(1000.0), 10_000_000.0),
        Find::Size | Find::Subscribers { .. } => (plan[0].size as f64, (64u64 << 20) as f64),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut run = runner::new_run(command, workload);
    run.environment.note = a.note.clone();
    run.environment.network = runner::network(plan);
    let mut session = a.db.session(a.no_history, &run)?;
    runner::catch_signals();
    let mut ctx = Searching {
        what,
        slo: &slo,
        settings,
        rate,
        ceiling,
        cores,
        run: &mut run,
        session: &mut session,
    };
    for case in cases {
        let id = case.id();
        if a.curve {
            println!(
                "{id}: latency under a rising load, until a step breaks {}",
                a.slo
            );
            let c = super::curve::curve(&mut ctx, case, start, &a.slo);
            ctx.run.curves.push(c);
            if ctx.interrupted() {
                break;
            }
            continue;
        }
        println!("{id}: the highest {} that holds {}", what.name(), a.slo);
        let first = ctx.search(case, start);
        if ctx.interrupted() {
            break;
        }
        print!("{}", outcome(&id, what, &first.0, &first.1));
        // Kept under the case without the rate it started from (the rate is what varied),
        // so that searches from different rates compare.
        let key = match what {
            Find::Rate => {
                let mut c = (*case).clone();
                c.rate = None;
                c.id()
            }
            _ => id.clone(),
        };
        let mut found = limit_result(&key, what, &a.slo, &first.0, &first.1);
        if a.tune {
            found.tuned = super::tune::tune_case(&mut ctx, case, &first, &a.slo);
        }
        ctx.run.limits.push(found);
        if ctx.interrupted() {
            break;
        }
    }
    let recorded = session.finish(&run);
    recorded?;
    session.announce()?;
    if run.status == RunStatus::Interrupted {
        return Err(Error::Interrupted(format!(
            "by {}: the steps so far are printed and recorded",
            runner::interrupted_by()
        )));
    }
    Ok(())
}
