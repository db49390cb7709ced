//! Pairing the cases of two runs by id (repeated ids in order of appearance), and the
//! differences between the machines the runs were made on: the runner's, each host's of a
//! run across hosts, and the hosts each common case ran on.

use super::noise::change;
use super::types::{CaseFailure, Comparison, IncompleteCase, Metric, MetricChange, RunRef};
use crate::model::{CaseResult, Environment, HostEnvironment, RunResult};
use std::collections::{HashMap, VecDeque};

/// Compares run B with the baseline run A, case by case (matched by [`CaseResult::id`]; a
/// case id that appears several times in a run is matched in order of appearance).
pub fn compare(a: &RunResult, b: &RunResult, fail_above_pct: Option<f64>) -> Comparison {
    let mut in_b: HashMap<&str, VecDeque<usize>> = HashMap::new();
    for (i, case) in b.cases.iter().enumerate() {
        in_b.entry(case.id.as_str()).or_default().push_back(i);
    }
    let mut matched_b = vec![false; b.cases.len()];
    let mut pairs: Vec<(&CaseResult, &CaseResult)> = Vec::new();
    let mut out = Comparison {
        a: run_ref(a),
        b: run_ref(b),
        fail_above_pct,
        cases_compared: 0,
        changes: Vec::new(),
        failures: Vec::new(),
        only_in_a: Vec::new(),
        only_in_b: Vec::new(),
        environment_notes: environment_notes(a, b),
        incomplete_cases: Vec::new(),
        same_run: a.run_id == b.run_id,
        allow_incomplete: false,
        limits: Vec::new(),
    };
    if !a.limits.is_empty() || !b.limits.is_empty() {
        // Searches: their limits, not their steps.
        let (limits, only_a, only_b) = super::limits::compare_limits(a, b, fail_above_pct);
        out.cases_compared = limits.len();
        out.limits = limits;
        out.only_in_a = only_a;
        out.only_in_b = only_b;
        return out;
    }
    for ca in &a.cases {
        let Some(j) = in_b.get_mut(ca.id.as_str()).and_then(VecDeque::pop_front) else {
            out.only_in_a.push(ca.id.clone());
            continue;
        };
        matched_b[j] = true;
        let cb = &b.cases[j];
        pairs.push((ca, cb));
        out.cases_compared += 1;
        compare_case(ca, cb, fail_above_pct, &mut out.changes);
        if ca.error.is_some() || cb.error.is_some() {
            out.failures.push(CaseFailure {
                case_id: ca.id.clone(),
                error_a: ca.error.clone(),
                error_b: cb.error.clone(),
            });
        }
        for (run, case) in [("A", ca), ("B", cb)] {
            // A failed case is told of as a failure, not again here.
            if case.error.is_some() {
                continue;
            }
            let nothing = !Metric::compared().any(|m| m.of(&case.summary).is_some());
            let why = match (&case.incomplete, nothing) {
                (Some(why), false) => why.clone(),
                (Some(why), true) => format!("{why}; measured nothing (no figure)"),
                (None, true) => "measured nothing (no figure)".to_string(),
                (None, false) => continue,
            };
            out.incomplete_cases.push(IncompleteCase {
                case_id: ca.id.clone(),
                run: run.to_string(),
                why,
                measured_nothing: nothing,
            });
        }
    }
    if out.same_run {
        // A run compared with itself has nothing uncertain between its sides.
        for ch in &mut out.changes {
            ch.inconclusive = false;
            ch.repetitions_to_decide = None;
        }
    }
    out.only_in_b = b
        .cases
        .iter()
        .zip(&matched_b)
        .filter(|(_, m)| !**m)
        .map(|(c, _)| c.id.clone())
        .collect();
    out.environment_notes
        .extend(host_notes(&a.environment, &b.environment));
    if a.is_multi_host() || b.is_multi_host() {
        out.environment_notes.extend(case_host_notes(a, b, &pairs));
    }
    out
}

/// How the hosts of two runs differ, when either ran across hosts (records its hosts):
/// hosts only one run has, and for a host both have (by name) what differs of its
/// machine, CPU, cores, kernel, libzmq and network interfaces. The runner's own host is
/// left to the run-wide notes.
fn host_notes(ea: &Environment, eb: &Environment) -> Vec<String> {
    if ea.hosts.is_empty() && eb.hosts.is_empty() {
        return Vec::new();
    }
    let (la, lb) = (ea.host_list(), eb.host_list());
    let names = |l: &[HostEnvironment]| -> Vec<String> {
        let mut n: Vec<String> = l.iter().map(|h| h.name.clone()).collect();
        n.sort();
        n
    };
    let mut out = Vec::new();
    if names(&la) != names(&lb) {
        out.push(format!(
            "hosts differ: {} (A), {} (B)",
            names(&la).join(", "),
            names(&lb).join(", ")
        ));
    }
    let libzmq = |h: &HostEnvironment| {
        if h.libzmq_source.is_empty() {
            h.libzmq_version.clone()
        } else {
            format!("{} ({})", h.libzmq_version, h.libzmq_source)
        }
    };
    for ha in &la {
        let Some(hb) = lb.iter().find(|h| h.name == ha.name) else {
            continue;
        };
        let runner = ha.name == ea.hostname && hb.name == eb.hostname;
        // Interfaces are compared only between hosts that listed theirs (a run on one host
        // records only those its tcp addresses used).
        let listed = !ea.hosts.is_empty() && !eb.hosts.is_empty();
        let mut fields: Vec<(&str, String, String)> = Vec::new();
        if !runner {
            fields.extend([
                ("machine", ha.hostname.clone(), hb.hostname.clone()),
                ("CPU", ha.cpu_model.clone(), hb.cpu_model.clone()),
                ("cores", ha.cores.to_string(), hb.cores.to_string()),
                ("kernel", ha.kernel.clone(), hb.kernel.clone()),
                ("libzmq", libzmq(ha), libzmq(hb)),
            ]);
        }
        if listed {
            fields.push(("NIC", ha.wired_nics(), hb.wired_nics()));
        }
        out.extend(
            fields
                .into_iter()
                .filter(|(_, x, y)| x != y)
                .map(|(what, x, y)| format!("host {}: {what} differs: {x} (A), {y} (B)", ha.name)),
        );
    }
    out
}

/// The common cases that ran on other hosts in A than in B (`a->b` against `a->c`), one
/// note per pair of host paths naming its cases.
fn case_host_notes(
    a: &RunResult,
    b: &RunResult,
    pairs: &[(&CaseResult, &CaseResult)],
) -> Vec<String> {
    let mut groups: Vec<((String, String), Vec<&str>)> = Vec::new();
    for (ca, cb) in pairs {
        let pa = ca.host_path(&a.environment.hostname);
        let pb = cb.host_path(&b.environment.hostname);
        if pa == pb {
            continue;
        }
        match groups
            .iter_mut()
            .find(|(k, _)| *k == (pa.clone(), pb.clone()))
        {
            Some((_, ids)) => ids.push(&ca.id),
            None => groups.push(((pa, pb), vec![&ca.id])),
        }
    }
    groups
        .into_iter()
        .map(|((pa, pb), ids)| {
            let which = if ids.len() == pairs.len() && pairs.len() > 1 {
                "every case".to_string()
            } else {
                ids.join(", ")
            };
            format!("hosts of {which} differ: {pa} (A), {pb} (B)")
        })
        .collect()
}

fn run_ref(r: &RunResult) -> RunRef {
    RunRef {
        run_id: r.run_id.clone(),
        started_at: r.started_at.clone(),
        status: r.status.to_string(),
    }
}

fn compare_case(
    a: &CaseResult,
    b: &CaseResult,
    threshold: Option<f64>,
    out: &mut Vec<MetricChange>,
) {
    for metric in Metric::compared() {
        let (Some(ea), Some(eb)) = (metric.of(&a.summary), metric.of(&b.summary)) else {
            continue;
        };
        out.push(change(&a.id, metric, ea, eb, threshold));
    }
}

/// Differences between the machines and software of two runs.
fn environment_notes(a: &RunResult, b: &RunResult) -> Vec<String> {
    let (ea, eb) = (&a.environment, &b.environment);
    let file = |e: &crate::model::Environment| {
        e.libzmq
            .as_ref()
            .map(|l| format!("{} {}", l.source, l.path))
            .unwrap_or_default()
    };
    // Only when both runs say: a run on ipc alone, or one from before the field, has none.
    let network = |e: &crate::model::Environment, other: &crate::model::Environment| {
        if e.network.is_empty() || other.network.is_empty() {
            String::new()
        } else {
            let all: Vec<String> = e.network.iter().map(|n| n.describe()).collect();
            all.join("; ")
        }
    };
    let fields: [(&str, String, String); 8] = [
        ("host", ea.hostname.clone(), eb.hostname.clone()),
        ("CPU", ea.cpu_model.clone(), eb.cpu_model.clone()),
        ("cores", ea.cores.to_string(), eb.cores.to_string()),
        ("kernel", ea.kernel.clone(), eb.kernel.clone()),
        (
            "libzmq",
            ea.libzmq_version.clone(),
            eb.libzmq_version.clone(),
        ),
        ("libzmq library", file(ea), file(eb)),
        ("network", network(ea, eb), network(eb, ea)),
        (
            "zmqperf",
            ea.zmqperf_version.clone(),
            eb.zmqperf_version.clone(),
        ),
    ];
    fields
        .into_iter()
        .filter(|(_, x, y)| x != y)
        .map(|(what, x, y)| format!("{what} differs: {x} (A), {y} (B)"))
        .collect()
}
