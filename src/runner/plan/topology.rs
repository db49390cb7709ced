//! The cases of a topology file: one per sweep variant and per value of the command line's
//! lists, parameters from the command line first, then the file, then the defaults.

use super::workload::in_file;
use super::{default_count, is_latency, parse_transport, Scope, Selection};
use crate::endpoint::Transport;
use crate::error::Result;
use crate::parse::{parse_count, parse_size};
use crate::runner::CaseSpec;
use crate::topology::load::{self as topo_load, PARAMS};
use crate::topology::Topology;

fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The cases of a topology file: one per sweep variant, its parameters from the file, the
/// command line, then the defaults.
pub(super) fn from_topology_file(path: &str, text: &str, sel: &Selection) -> Result<Vec<CaseSpec>> {
    let mut plan = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut counter = crate::progress::Planning::on_stderr();
    for v in topo_load::load(path, text)? {
        // Every mistake is found before any socket opens.
        let graph = crate::topology::check::check(path, &v.topology)?;
        let t = v.topology;
        let p = &t.params;
        let at = |f: &str| format!("topology file {path}: params.{f}");
        // The command line's values replace the file's, and each list is swept.
        let transports = match (&sel.transports, &p.transport) {
            (Some(ts), _) => ts.clone(),
            (None, Some(s)) => {
                vec![parse_transport(s).map_err(|e| in_file(path, "params.transport", e))?]
            }
            (None, None) => vec![literal_transport(&t).unwrap_or(Transport::Tcp)],
        };
        let sizes = match (&sel.sizes, &p.size) {
            (Some(s), _) => s.clone(),
            (None, Some(v)) => vec![parse_size(&at("size"), &json_text(v))?],
            (None, None) => vec![64],
        };
        let rates: Vec<Option<f64>> = match &sel.rates {
            Some(r) => r.iter().map(|x| Some(*x)).collect(),
            None => vec![p.rate],
        };
        let latency = is_latency(&t);
        let label = swept_label(&v.label);
        let mut topology = t.clone();
        topology.name = topology_name(path, &t);
        for &transport in &transports {
            for &size in &sizes {
                crate::topology::check::check_case(path, &graph, transport, size)?;
                for &rate in &rates {
                    let count = match (sel.count, &p.count) {
                        (Some(c), _) => c,
                        (None, Some(v)) => parse_count(&at("count"), &json_text(v))?,
                        (None, None) => default_count(latency, size, Scope::Default),
                    };
                    let warmup = match (sel.warmup, &p.warmup) {
                        (Some(w), _) => w,
                        (None, Some(v)) if json_text(v) == "0" => 0,
                        (None, Some(v)) => parse_count(&at("warmup"), &json_text(v))?,
                        (None, None) => (count / 10).clamp(1, 1000),
                    };
                    let case = CaseSpec {
                        topology: topology.clone(),
                        origin: path.to_string(),
                        label: label.clone(),
                        transport,
                        size,
                        count,
                        warmup,
                        repetitions: sel.repetitions.or(p.repetitions).unwrap_or(3),
                        rate: rate.filter(|_| !latency),
                    };
                    // A file's sweep and the command line can name the same case twice
                    // (a set: a sweep of 10,000 variants must not compare every pair).
                    if seen.insert(case.id()) {
                        plan.push(case);
                        counter.planned(plan.len());
                    }
                }
            }
        }
    }
    counter.done();
    Ok(plan)
}

/// The part of a sweep variant's label that names the node values it swept (size,
/// transport and rate have columns of their own).
fn swept_label(label: &str) -> String {
    let kept: Vec<&str> = label
        .split(' ')
        .filter(|kv| {
            let k = kv.split('=').next().unwrap_or("");
            !k.is_empty()
                && !["size", "transport", "rate"].contains(&k)
                && (k.contains('.') || PARAMS.contains(&k))
        })
        .collect();
    kept.join(" ")
}

/// The topology's name, or its file's when it has none.
fn topology_name(path: &str, t: &Topology) -> String {
    if t.name.is_empty() {
        std::path::Path::new(path)
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "topology".into())
    } else {
        t.name.clone()
    }
}

/// The transport of a topology's first literal endpoint, if it has one.
fn literal_transport(t: &Topology) -> Option<Transport> {
    t.nodes
        .iter()
        .flat_map(|n| n.all_sockets())
        .flat_map(|s| s.bind.iter().chain(&s.connect))
        .find_map(|e| {
            let scheme = e.split_once("://")?.0;
            parse_transport(scheme).ok()
        })
}
