//! Pairing the cases of two runs by id (repeated ids in order of appearance), and the
//! differences between the machines the runs were made on.

use super::noise::change;
use super::types::{CaseFailure, Comparison, Metric, MetricChange, RunRef};
use crate::model::{CaseResult, RunResult};
use std::collections::{HashMap, VecDeque};

/// Compares run B with the baseline run A, case by case (matched by [`CaseResult::id`]; a
/// case id that appears several times in a run is matched in order of appearance).
pub fn compare(a: &RunResult, b: &RunResult, fail_above_pct: Option<f64>) -> Comparison {
    let mut in_b: HashMap<&str, VecDeque<usize>> = HashMap::new();
    for (i, case) in b.cases.iter().enumerate() {
        in_b.entry(case.id.as_str()).or_default().push_back(i);
    }
    let mut matched_b = vec![false; b.cases.len()];
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
        allow_incomplete: false,
    };
    for ca in &a.cases {
        let Some(j) = in_b.get_mut(ca.id.as_str()).and_then(VecDeque::pop_front) else {
            out.only_in_a.push(ca.id.clone());
            continue;
        };
        matched_b[j] = true;
        let cb = &b.cases[j];
        out.cases_compared += 1;
        compare_case(ca, cb, fail_above_pct, &mut out.changes);
        if ca.error.is_some() || cb.error.is_some() {
            out.failures.push(CaseFailure {
                case_id: ca.id.clone(),
                error_a: ca.error.clone(),
                error_b: cb.error.clone(),
            });
        }
    }
    out.only_in_b = b
        .cases
        .iter()
        .zip(&matched_b)
        .filter(|(_, m)| !**m)
        .map(|(c, _)| c.id.clone())
        .collect();
    out
}

fn run_ref(r: &RunResult) -> RunRef {
    RunRef {
        run_id: r.run_id.clone(),
        started_at: r.started_at.clone(),
        status: r.status.clone(),
    }
}

fn compare_case(
    a: &CaseResult,
    b: &CaseResult,
    threshold: Option<f64>,
    out: &mut Vec<MetricChange>,
) {
    for metric in Metric::ALL {
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
