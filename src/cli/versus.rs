//! `zmqperf run --vs-libzmq LIB`: the same suite on two libzmq libraries, interleaved (one
//! repetition of every case on each library per round, the order alternating A B, B A, ...),
//! so drift on a busy machine falls on both. Each library runs in its own child process
//! (`--libzmq`), so inproc cases measure the chosen library too. The two runs are recorded
//! like any other (so `zmqperf compare` shows them again), and the ratios B / A are printed
//! with their confidence intervals.

use super::suite::RunArgs;
use std::path::PathBuf;
use std::process::Command;
use zmqperf::error::{Error, Result};
use zmqperf::model::{Kind, RunResult, RunStatus};
use zmqperf::zmq::{self, LibraryInfo, LIBZMQ_ENV};

/// The options of `run` a child repeats (everything that shapes the plan and its timing).
fn child_args(a: &RunArgs) -> Vec<String> {
    let mut v = vec!["run".to_string()];
    let mut opt = |name: &str, val: &Option<String>| {
        if let Some(x) = val {
            v.push(name.into());
            v.push(x.clone());
        }
    };
    opt("--patterns", &a.patterns);
    opt("--transports", &a.transports);
    opt("--sizes", &a.sizes);
    opt("--count", &a.count);
    opt("--warmup", &a.warmup);
    opt("--rate", &a.rate);
    opt("--security", &a.security);
    for (flag, on) in [
        ("--quick", a.quick),
        ("--full", a.full),
        ("--curve-cost", a.curve_cost),
        ("--no-floor", a.no_floor),
    ] {
        if on {
            v.push(flag.into());
        }
    }
    v.extend([
        "--timeout".into(),
        a.timeout.clone(),
        "--case-timeout".into(),
        a.case_timeout.clone(),
        "--stamp-every".into(),
        a.stamp_every.clone(),
        "--repetitions".into(),
        "1".into(),
        "--no-history".into(),
        "--format".into(),
        "json".into(),
    ]);
    if let Some(w) = &a.workload {
        v.push(w.clone());
    }
    v
}

/// How a child is told to load a library (the path absolute, so any folder works).
fn choice(l: &LibraryInfo) -> String {
    if l.source == "path" {
        l.path.clone()
    } else {
        l.source.clone()
    }
}

/// What `zmqperf --libzmq LIB --version` says, so a library that cannot be loaded is
/// refused before anything is measured.
fn probe(exe: &PathBuf, lib: &str) -> Result<String> {
    let o = Command::new(exe)
        .env(LIBZMQ_ENV, lib)
        .arg("--version")
        .output()
        .map_err(|e| Error::Io {
            op: "starting zmqperf to load the other libzmq".into(),
            source: e,
        })?;
    if !o.status.success() {
        let why = String::from_utf8_lossy(&o.stderr);
        return Err(Error::invalid(
            "--vs-libzmq",
            lib,
            why.trim().trim_start_matches("zmqperf: error: "),
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout)
        .lines()
        .nth(1)
        .unwrap_or("")
        .to_string())
}

/// Adds the repetitions of `more` to `into`, case by case (a case new to `into` is added).
fn merge(into: &mut Option<RunResult>, more: RunResult) {
    let Some(run) = into else {
        *into = Some(more);
        return;
    };
    for c in more.cases {
        match run.cases.iter_mut().find(|x| x.id == c.id) {
            Some(x) => {
                x.repetitions.extend(c.repetitions);
                x.summary = zmqperf::runner::summarise(&x.repetitions);
                x.wall_s += c.wall_s;
                for w in c.warnings {
                    if !x.warnings.contains(&w) {
                        x.warnings.push(w);
                    }
                }
                if x.error.is_none() {
                    x.error = c.error;
                }
            }
            None => run.cases.push(c),
        }
    }
    if more.status != RunStatus::Complete {
        run.status = more.status;
    }
    run.finished_at = more.finished_at;
}

/// The rounds: in each, one child run of `args` on each library of `libs`, the order
/// alternating; each library's runs merged into one (reports passed through `dir`).
fn interleave(
    exe: &std::path::Path,
    args: &[String],
    libs: [&str; 2],
    rounds: u32,
    dir: &std::path::Path,
) -> Result<[Option<RunResult>; 2]> {
    let mut runs: [Option<RunResult>; 2] = [None, None];
    for round in 0..rounds {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            zmqperf::errln!(
                "round {}/{rounds}: {} ({})",
                round + 1,
                ["A", "B"][i],
                libs[i]
            );
            let file = dir.join(format!("{round}-{i}.json"));
            let status = Command::new(exe)
                .env(LIBZMQ_ENV, libs[i])
                .args(args)
                .arg("-o")
                .arg(&file)
                .status()
                .map_err(|e| Error::Io {
                    op: "starting a child run".into(),
                    source: e,
                })?;
            let text = std::fs::read_to_string(&file).map_err(|e| Error::Io {
                op: format!(
                    "reading the report of round {} on {} (the child exited {status})",
                    round + 1,
                    libs[i]
                ),
                source: e,
            })?;
            let run: RunResult =
                zmqperf::store::import::parse_export(text.as_bytes(), &file.display().to_string())
                    .map_err(|e| {
                        Error::Protocol(format!(
                            "the child's report {} is not a run: {e}",
                            file.display()
                        ))
                    })?;
            merge(&mut runs[i], run);
            let _ = std::fs::remove_file(&file);
        }
    }
    Ok(runs)
}

/// Runs the suite on this process's libzmq (A) and on `other` (B), interleaved.
pub fn run(a: &RunArgs, other: &str, command: String) -> Result<()> {
    if a.out.format != "table" || a.out.output.is_some() {
        return Err(Error::invalid(
            "--vs-libzmq",
            other,
            "prints its comparison as a table; the two runs are recorded, so show or report each with `zmqperf report RUN --format ...`",
        ));
    }
    let exe = zmqperf::runner::this_exe()?;
    let a_lib = choice(zmq::library());
    let b_line = probe(&exe, other)?;
    let a_line = probe(&exe, &a_lib)?;
    let rounds = a.repetitions.unwrap_or(if a.quick { 2 } else { 3 }).max(2);
    zmqperf::errln!("A: {a_line}\nB: {b_line}\n{rounds} rounds, each one repetition of every case on A and on B, alternating which goes first");
    let dir = std::env::temp_dir().join(format!("zmqperf-vs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::Io {
        op: format!("creating {}", dir.display()),
        source: e,
    })?;
    let libs = [a_lib.as_str(), other];
    let runs = interleave(&exe, &child_args(a), libs, rounds, &dir)?;
    let _ = std::fs::remove_dir(&dir);
    let [Some(mut ra), Some(mut rb)] = runs else {
        return Err(Error::Protocol("a library produced no run".into()));
    };
    for (r, lib) in [(&mut ra, "A"), (&mut rb, "B")] {
        r.command = format!("{command} [{lib}]");
        r.environment.note = a.note.clone();
    }
    if !a.no_history {
        let mut store = zmqperf::store::Store::open(a.db.path())?;
        store.save_run(&ra)?;
        store.save_run(&rb)?;
    }
    print!("{}", zmqperf::term::fit(&ratios(&ra, &rb)));
    if !a.no_history {
        zmqperf::outln!(
            "\nrecorded: A = {}, B = {} (zmqperf compare {} {})",
            ra.run_id,
            rb.run_id,
            ra.run_id,
            rb.run_id
        );
    }
    Ok(())
}

/// The table of B / A per case: mean latency (lower is better) and delivered msg/s (higher
/// is better), medians over the rounds with their 95% intervals.
pub fn ratios(a: &RunResult, b: &RunResult) -> String {
    let name = |r: &RunResult| {
        r.environment
            .libzmq
            .as_ref()
            .map(|l| format!("libzmq {} ({}: {})", l.version, l.source, l.path))
            .unwrap_or_else(|| format!("libzmq {}", r.environment.libzmq_version))
    };
    let mut rows = vec![[
        "case".to_string(),
        "figure".into(),
        "A".into(),
        "B".into(),
        "B / A [95% CI]".into(),
    ]];
    for ca in &a.cases {
        let Some(cb) = b.cases.iter().find(|c| c.id == ca.id) else {
            continue;
        };
        let (figure, ea, eb) = match ca.kind {
            Kind::Latency => (
                "mean latency (us)",
                &ca.summary.latency_us,
                &cb.summary.latency_us,
            ),
            Kind::Throughput => ("msg/s", &ca.summary.msgs_per_sec, &cb.summary.msgs_per_sec),
        };
        let (Some(ea), Some(eb)) = (ea, eb) else {
            continue;
        };
        rows.push([
            ca.id.clone(),
            figure.into(),
            zmqperf::report::estimate::estimate_value(ea),
            zmqperf::report::estimate::estimate_value(eb),
            zmqperf::report::estimate::ratio_ci(eb, ea),
        ]);
    }
    let widths: Vec<usize> = (0..5)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!("A: {}\nB: {}\n\n", name(a), name(b));
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i < 2 {
                    format!("{c:<w$}", w = widths[i])
                } else {
                    format!("{c:>w$}", w = widths[i])
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out.push_str("\nlatency: a ratio below 1 is B faster; msg/s: above 1 is B faster. An interval that holds 1 is within noise.\n");
    out
}
