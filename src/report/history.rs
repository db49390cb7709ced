//! The text of `zmqperf history`: one line per run, most recent first.

use super::text_table::{table_within, truncate};
use crate::store::RunListing;

/// Longest command line shown in full.
const COMMAND_WIDTH: usize = 60;
/// Longest "host / CPU" shown in full.
const MACHINE_WIDTH: usize = 48;

/// The runs as a table: id, start time, status (`, imported` for a run `zmqperf import`
/// took in), cases (and how many failed, and the findings of a `zmqperf diagnose` run), host
/// and CPU (for an imported run, of the machine it was made on), command line. An empty
/// list says how runs get there.
pub fn format_history(runs: &[RunListing]) -> String {
    if runs.is_empty() {
        return "no runs recorded yet: `zmqperf run` records each run in the history\n".to_string();
    }
    let mut rows = vec![
        ["run", "started", "status", "cases", "host / CPU", "command"]
            .map(String::from)
            .to_vec(),
    ];
    for r in runs {
        let mut cases = if r.failed_cases > 0 {
            format!("{} ({} failed)", r.cases, r.failed_cases)
        } else {
            r.cases.to_string()
        };
        if r.findings > 0 {
            cases.push_str(&format!(
                ", {} finding{}",
                r.findings,
                if r.findings == 1 { "" } else { "s" }
            ));
        }
        let machine = match (r.hostname.is_empty(), r.cpu_model.is_empty()) {
            (false, false) => format!("{} / {}", r.hostname, r.cpu_model),
            (false, true) => r.hostname.clone(),
            (true, false) => r.cpu_model.clone(),
            (true, true) => "-".to_string(),
        };
        let status = if r.imported.is_some() {
            format!("{}, imported", r.status)
        } else {
            r.status.clone()
        };
        rows.push(vec![
            r.run_id.clone(),
            r.started_at.clone(),
            status,
            cases,
            truncate(&machine, MACHINE_WIDTH),
            truncate(&r.command, COMMAND_WIDTH),
        ]);
    }
    // On a terminal or with a width asked for, the table fits it: the command gives way
    // first, then the host, then the start time (the run id begins with it). Files and
    // pipes get every column (the command and host cut at their usual lengths).
    let width = match crate::term::resolved() {
        (_, crate::term::Source::Default) => usize::MAX,
        (w, _) => w,
    };
    let give = [(5, 24), (4, 12), (1, 0), (5, 12), (4, 0)];
    // Commands and host names come from other people's machines (imported runs).
    crate::report::terminal_safe(&table_within(&rows, &[], width, &give))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(id: &str, status: &str, cases: u64, failed: u64) -> RunListing {
        RunListing {
            run_id: id.into(),
            started_at: "2026-11-21T22:15:30Z".into(),
            finished_at: None,
            status: status.into(),
            command: "zmqperf run --suite quick".into(),
            cases,
            failed_cases: failed,
            findings: 0,
            cpu_model: "AMD EPYC 7763".into(),
            hostname: "alpha".into(),
            imported: None,
        }
    }

    #[test]
    fn snapshot() {
        let runs = [
            listing("20261121-221530-4f2a", "interrupted", 3, 1),
            listing("20261121-201000-0b1c", "complete", 12, 0),
        ];
        assert_eq!(
            format_history(&runs),
            "\
run                   started               status       cases         host / CPU             command
20261121-221530-4f2a  2026-11-21T22:15:30Z  interrupted  3 (1 failed)  alpha / AMD EPYC 7763  zmqperf run --suite quick
20261121-201000-0b1c  2026-11-21T22:15:30Z  complete     12            alpha / AMD EPYC 7763  zmqperf run --suite quick
"
        );
    }

    #[test]
    fn empty() {
        assert!(format_history(&[]).starts_with("no runs recorded yet"));
    }
}
