//! `zmqperf compare --by-host`: the figures of several runs (or of one run whose cases ran on
//! several hosts) side by side, a column per host, as users tabulate their machines
//! (seed 004: pattern x transport rows, a column per machine with its CPU under its name).

use crate::model::{CaseResult, Estimate, Kind, LoopMode, RunResult};
use crate::report::estimate;
use crate::report::text_table::table;
use crate::units;
use std::fmt::Write as _;

/// One column: where the cases ran (a host, or `a->b` for a case across hosts), in one run.
#[derive(Debug, Clone, PartialEq)]
pub struct HostColumn {
    /// The host (or host path) as the head of the column; with the run's id when the same
    /// host is in several of the runs.
    pub label: String,
    /// The CPU model(s), shortened (`Intel Xeon Gold 6248R`; `A -> B` across hosts).
    pub cpu: String,
    /// The run the column's cases come from.
    pub run_id: String,
    host_path: String,
}

/// One table: the cases of one kind, load and size; a row per pattern and transport.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTable {
    /// What the cells are: `throughput at 64 B, closed loop: delivered msg/s`.
    pub title: String,
    /// Rows: pattern, transport, then one cell per column (`-` where a host has no such
    /// case, `failed` where it failed).
    pub rows: Vec<(String, String, Vec<String>)>,
}

/// The machine columns of `runs` and their tables.
pub fn by_host(runs: &[RunResult]) -> (Vec<HostColumn>, Vec<HostTable>) {
    let cols = columns(runs);
    let tables = tables(runs, &cols);
    (cols, tables)
}

/// The columns, in run order then case order; a host met in several runs says which run.
fn columns(runs: &[RunResult]) -> Vec<HostColumn> {
    // Columns, in run order then case order.
    let mut cols: Vec<HostColumn> = Vec::new();
    for r in runs {
        for c in &r.cases {
            let path = c.host_path(&r.environment.hostname);
            if !cols
                .iter()
                .any(|x| x.run_id == r.run_id && x.host_path == path)
            {
                cols.push(HostColumn {
                    label: path.clone(),
                    cpu: cpu_of(r, &path),
                    run_id: r.run_id.clone(),
                    host_path: path,
                });
            }
        }
    }
    // A host met in several runs: its columns say which run.
    let labels: Vec<String> = cols.iter().map(|c| c.host_path.clone()).collect();
    for c in &mut cols {
        if labels.iter().filter(|l| **l == c.host_path).count() > 1 {
            c.label = format!("{} ({})", c.host_path, c.run_id);
        }
    }
    cols
}

/// The tables by kind, load and size, in the order first met: a row per pattern and
/// transport, a cell per column.
fn tables(runs: &[RunResult], cols: &[HostColumn]) -> Vec<HostTable> {
    // Tables by kind, load and size, in the order first met.
    type Key = (Kind, String, usize);
    let mut keys: Vec<Key> = Vec::new();
    for r in runs {
        for c in &r.cases {
            let k = (c.kind, load(c), c.message_size);
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let mut tables = Vec::new();
    for (kind, load_name, size) in keys {
        let in_table =
            |c: &CaseResult| c.kind == kind && load(c) == load_name && c.message_size == size;
        let mut row_keys: Vec<(String, String)> = Vec::new();
        for r in runs {
            for c in r.cases.iter().filter(|c| in_table(c)) {
                let k = (c.pattern.clone(), c.transport.to_string());
                if !row_keys.contains(&k) {
                    row_keys.push(k);
                }
            }
        }
        let rows = row_keys
            .into_iter()
            .map(|(pattern, transport)| {
                let cells = cols
                    .iter()
                    .map(|col| {
                        let run = runs.iter().find(|r| r.run_id == col.run_id);
                        let case = run.and_then(|r| {
                            r.cases.iter().find(|c| {
                                in_table(c)
                                    && c.pattern == pattern
                                    && c.transport.to_string() == transport
                                    && c.host_path(&r.environment.hostname) == col.host_path
                            })
                        });
                        match case {
                            None => "-".to_string(),
                            Some(c) => match (figure(c), &c.error) {
                                (Some(e), _) => fmt(kind, &e),
                                (None, Some(_)) => "failed".to_string(),
                                (None, None) => "-".to_string(),
                            },
                        }
                    })
                    .collect();
                (pattern, transport, cells)
            })
            .collect();
        let what = match kind {
            Kind::Latency => "mean one-way latency, us (round trip / 2)",
            Kind::Throughput => "delivered msg/s",
        };
        tables.push(HostTable {
            title: format!(
                "{} at {}, {load_name}: {what}",
                match kind {
                    Kind::Latency => "latency",
                    Kind::Throughput => "throughput",
                },
                units::bytes(size as u64)
            ),
            rows,
        });
    }
    tables
}

/// `closed loop` or `open loop at 10,000 msg/s`.
fn load(c: &CaseResult) -> String {
    match (c.loop_mode, c.rate) {
        (LoopMode::Closed, _) => "closed loop".to_string(),
        (LoopMode::Open, Some(r)) => format!("open loop at {} msg/s", units::rate(r)),
        (LoopMode::Open, None) => "open loop".to_string(),
    }
}

/// The figure a cell shows: mean latency for latency cases, delivered msg/s otherwise.
fn figure(c: &CaseResult) -> Option<Estimate> {
    match c.kind {
        Kind::Latency => c.summary.latency_us,
        Kind::Throughput => c.summary.msgs_per_sec,
    }
}

fn fmt(kind: Kind, e: &Estimate) -> String {
    match kind {
        Kind::Latency => estimate::estimate_value(e),
        Kind::Throughput => estimate::estimate_whole(e),
    }
}

/// A CPU model without its trade marks, `CPU` and clock: `Intel(R) Xeon(R) Gold 6248R CPU @
/// 3.00GHz` -> `Intel Xeon Gold 6248R`.
pub fn short_cpu(model: &str) -> String {
    let cut = model.split(" @ ").next().unwrap_or(model);
    let words: Vec<&str> = cut
        .split_whitespace()
        .map(|w| {
            w.trim_end_matches("(R)")
                .trim_end_matches("(r)")
                .trim_end_matches("(TM)")
                .trim_end_matches("(tm)")
        })
        .filter(|w| !w.is_empty() && !matches!(*w, "CPU" | "Processor" | "processor"))
        .collect();
    if words.is_empty() {
        "-".to_string()
    } else {
        words.join(" ")
    }
}

/// The CPU of a column: of its host, or `A -> B` across hosts.
fn cpu_of(run: &RunResult, path: &str) -> String {
    let env = &run.environment;
    let cpu = |h: &str| {
        env.host(h)
            .map(|x| short_cpu(&x.cpu_model))
            .unwrap_or_else(|| "-".to_string())
    };
    match path.split_once("->") {
        None => cpu(path),
        Some((from, to)) => {
            let side = |hs: &str| {
                let mut all: Vec<String> = hs.split('+').map(cpu).collect();
                all.dedup();
                all.join(" + ")
            };
            let (a, b) = (side(from), side(to));
            if a == b {
                a
            } else {
                format!("{a} -> {b}")
            }
        }
    }
}

/// The machine columns as text: the runs and their hosts, then per table a row per
/// pattern and transport, a column per host with its CPU under its name.
pub fn format_by_host(runs: &[RunResult]) -> String {
    let (cols, tables) = by_host(runs);
    let mut out = String::new();
    out.push_str("Hosts:\n");
    for col in &cols {
        let run = runs.iter().find(|r| r.run_id == col.run_id);
        let facts = run
            .filter(|_| !col.host_path.contains("->") && !col.host_path.contains('+'))
            .and_then(|r| r.environment.host(&col.host_path))
            .map(|h| {
                let mut f = format!("{}, {} cores, kernel {}", h.cpu_model, h.cores, h.kernel);
                let _ = write!(f, ", libzmq {}", h.libzmq_version);
                if !h.libzmq_source.is_empty() {
                    let _ = write!(f, " ({})", h.libzmq_source);
                }
                f
            });
        let _ = writeln!(
            out,
            "  {}: run {}{}",
            col.label,
            col.run_id,
            facts.map(|f| format!("; {f}")).unwrap_or_default()
        );
    }
    if tables.is_empty() {
        out.push_str("\nno case in these runs\n");
        return out;
    }
    out.push_str(
        "\nEach cell is the case's median over its repetitions, ± half its 95% confidence \
         interval.\n",
    );
    for t in &tables {
        let _ = writeln!(out, "\n{}", t.title);
        let mut rows = vec![
            ["pattern", "transport"]
                .into_iter()
                .map(String::from)
                .chain(cols.iter().map(|c| c.label.clone()))
                .collect::<Vec<String>>(),
            ["", ""]
                .into_iter()
                .map(String::from)
                .chain(cols.iter().map(|c| c.cpu.clone()))
                .collect(),
        ];
        for (p, tr, cells) in &t.rows {
            rows.push(
                [p.clone(), tr.clone()]
                    .into_iter()
                    .chain(cells.iter().cloned())
                    .collect(),
            );
        }
        let right: Vec<usize> = (2..2 + cols.len()).collect();
        for line in table(&rows, &right).lines() {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}
