//! Facts about the run as a whole: its environment, the warnings and failures of its cases,
//! and the resources each role used.

use crate::model::RunResult;
use crate::units;

/// The header facts of a run, as (label, value) pairs.
pub fn environment(run: &RunResult) -> Vec<(&'static str, String)> {
    let e = &run.environment;
    let or_unknown = |s: &str| {
        if s.is_empty() {
            "unknown".to_string()
        } else {
            s.to_string()
        }
    };
    let mut v = vec![
        ("run id", run.run_id.clone()),
        ("status", run.status.to_string()),
        ("command", run.command.clone()),
        ("started", run.started_at.clone()),
        (
            "finished",
            run.finished_at.clone().unwrap_or_else(|| "-".to_string()),
        ),
    ];
    if let Some(w) = &run.workload {
        v.push(("workload", w.path.clone()));
    }
    if let Some(i) = &run.imported {
        v.push((
            "imported",
            format!(
                "run {} of {}, from {} at {}",
                i.original_run_id,
                if i.from_host.is_empty() {
                    "an unnamed host"
                } else {
                    &i.from_host
                },
                i.file,
                i.imported_at,
            ),
        ));
    }
    v.extend([
        ("host", or_unknown(&e.hostname)),
        ("CPU", or_unknown(&e.cpu_model)),
        ("cores", e.cores.to_string()),
        (
            "memory",
            if e.memory_bytes == 0 {
                "unknown".to_string()
            } else {
                units::bytes(e.memory_bytes)
            },
        ),
        ("OS", or_unknown(&e.os)),
        ("kernel", or_unknown(&e.kernel)),
        (
            "libzmq",
            match &e.libzmq {
                Some(l) => format!("{} ({}: {})", l.version, l.source, l.path),
                None => or_unknown(&e.libzmq_version),
            },
        ),
        ("zmqperf", or_unknown(&e.zmqperf_version)),
    ]);
    v.extend(e.network.iter().map(|n| ("network", n.describe())));
    if let Some(n) = &e.note {
        v.push(("note", n.clone()));
    }
    v
}

/// Every warning, as (case id, warning), in run order; each case's note on the clocks of
/// its one-way figures (clocks that differ, or converted ones) after its own warnings.
pub fn warnings(run: &RunResult) -> Vec<(&str, String)> {
    run.cases
        .iter()
        .flat_map(|c| {
            c.incomplete
                .iter()
                .map(|why| format!("incomplete: {why}"))
                .chain(c.warnings.iter().cloned())
                .chain(super::clock_note(c))
                .map(move |w| (c.id.as_str(), w))
        })
        .collect()
}

/// Every failed case, as (case id, error).
pub fn failures(run: &RunResult) -> Vec<(&str, &str)> {
    run.cases
        .iter()
        .filter_map(|c| c.error.as_deref().map(|e| (c.id.as_str(), e)))
        .collect()
}

/// Heads of the resource table.
pub const RESOURCE_HEADS: [&str; 7] = [
    "case",
    "role",
    "placement",
    "user CPU (ms)",
    "sys CPU (ms)",
    "%CPU",
    "RSS/VIRT (MiB)",
];

/// CPU time, CPU as % of one core from the start to the report (`-` where not recorded)
/// and peak memory, resident/virtual, of each role in each case's last repetition; the
/// case id is written on the first of its rows only.
pub fn resources(run: &RunResult) -> Vec<[String; 7]> {
    let mut out = Vec::new();
    for c in &run.cases {
        let Some(last) = c.repetitions.last() else {
            continue;
        };
        for (i, r) in last.roles.iter().enumerate() {
            let pct = if r.run_ms > 0.0 {
                format!("{:.0}", r.run_cpu_ms / r.run_ms * 100.0)
            } else {
                "-".to_string()
            };
            let virt = if r.peak_virt_kib > 0 {
                format!("{:.0}", r.peak_virt_kib as f64 / 1024.0)
            } else {
                "-".to_string()
            };
            out.push([
                if i == 0 { c.id.clone() } else { String::new() },
                r.role.clone(),
                r.placement.clone(),
                format!("{:.1}", r.cpu_user_ms),
                format!("{:.1}", r.cpu_sys_ms),
                pct,
                format!("{:.1}/{virt}", r.peak_rss_kib as f64 / 1024.0),
            ]);
        }
    }
    out
}
