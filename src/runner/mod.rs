//! The runner: turns a plan of cases into results. Every case is a topology with its
//! parameters; for each repetition the engine places its nodes (threads or child processes,
//! per node), starts them behind a barrier and collects their reports; the runner repeats,
//! merges nodes and edges, and summarises with medians, confidence intervals and warnings.
//! A node that dies or hangs fails its case with the reason; the suite goes on.

pub mod busy;
mod case;
pub mod control;
pub mod engine;
pub mod floor;
pub mod hosts;
pub mod launch;
pub mod merge;
pub mod notice;
mod peer;
pub mod place;
pub mod plan;
pub mod remote;
pub mod replicas;
pub mod session;
pub mod ship;
mod summary;
pub mod sync;
mod watch;

pub use crate::interrupt::{
    catch_signals, interrupt, interrupted, interrupted_by, interrupted_code, WokenOnStop,
    STOP_SIGNALS,
};
pub use case::{CaseSpec, Settings};
use summary::{clock_notes, warnings};
pub use summary::{facts, sender_facts, summarise, SHORT_NS, SPREAD_WARN_PCT};

use crate::endpoint::Transport;
use crate::model::{CaseResult, Kind, LoopMode, RunResult, RunStatus, SCHEMA_VERSION};
use crate::topology::check::{check, Graph};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

/// What the runner tells whoever watches it.
pub trait Observer {
    /// A case is about to run (`index` from 0 of `total`).
    fn case_started(&mut self, index: usize, total: usize, spec: &CaseSpec);
    /// A repetition of the current case is about to run.
    fn repetition(&mut self, _rep: u32, _of: u32) {}
    /// A case is done (stored at once by the caller).
    fn case_done(&mut self, result: &CaseResult);
}

/// The cause of a UDP receiver's loss the kernel counted (udp, epgm, norm): datagrams
/// dropped at a full receive buffer, with the fix for its transport.
fn udp_drops(spec: &CaseSpec, n: &crate::model::NodeResult) -> Option<String> {
    let d = n.udp_drops.filter(|&d| d > 0)?;
    let node = spec.topology.nodes.iter().find(|t| t.name == n.name);
    let multicast = node
        .and_then(|t| t.all_sockets().first().copied())
        .is_some_and(|s| s.transports(spec.transport).any(Transport::is_multicast));
    let fix = if multicast {
        "fix: give the receiving socket a larger `rcvbuf` (ZMQ_RCVBUF reaches OpenPGM's and NORM's UDP socket; the kernel caps it at net.core.rmem_max), or pace the publisher (`rate`) below what the subscribers take"
    } else {
        "libzmq 4.3's udp takes no ZMQ_RCVBUF, so the buffer is the kernel's default; fix: pace the RADIO (`rate`) below what the DISH takes, or raise net.core.rmem_default"
    };
    Some(format!(
        "cause: the kernel's receive buffer: {d} datagrams were dropped in the network namespace of '{}' while it received (Udp RcvbufErrors in /proc/net/snmp, which counts every socket there); {fix}",
        n.name
    ))
}

/// This zmqperf executable's path (the program of every node placed in a process).
pub fn this_exe() -> crate::error::Result<PathBuf> {
    std::env::current_exe().map_err(|e| crate::error::Error::Io {
        op: "finding the zmqperf binary".into(),
        source: e,
    })
}

/// The zmqperf executable to run on `host`: its `zmqperf` if the hosts file names one, a
/// copy of this build shipped there (`ship = true`), else this executable's own path (the
/// same path there: a shared file system, or a namespace of this machine).
pub fn remote_exe(host: &hosts::Host) -> crate::error::Result<String> {
    let exe = this_exe()?;
    remote_exe_of(host, &exe)
}

/// [`remote_exe`] for the build `exe`, asked of each host once per run (a launcher call
/// per replica and repetition would cost a connection each).
pub fn remote_exe_of(host: &hosts::Host, exe: &std::path::Path) -> crate::error::Result<String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static KNOWN: OnceLock<Mutex<HashMap<(String, PathBuf), String>>> = OnceLock::new();
    let key = (format!("{:?}", host), exe.to_path_buf());
    let known = KNOWN.get_or_init(Default::default);
    if let Some(p) = known.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(p.clone());
    }
    let p = ship::ensure_binary_of(host, exe, Duration::from_secs(120))?;
    known
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, p.clone());
    Ok(p)
}

/// This build's identity (its GNU build-id), which every node of a run must share.
pub fn build_id() -> String {
    crate::build_id::own().to_string()
}

/// The network interface of every tcp host the plan's cases use (none for a plan on ipc
/// and inproc alone).
pub fn network(plan: &[CaseSpec]) -> Vec<crate::model::NetworkInterface> {
    let hosts: Vec<String> = plan.iter().flat_map(CaseSpec::tcp_hosts).collect();
    crate::net::iface::interfaces(hosts.iter().map(String::as_str))
}

/// A new, empty run.
pub fn new_run(command: String, workload: Option<crate::model::Workload>) -> RunResult {
    let now = SystemTime::now();
    RunResult {
        schema_version: SCHEMA_VERSION,
        run_id: crate::clock::run_id(now),
        started_at: crate::clock::rfc3339(now),
        finished_at: None,
        status: RunStatus::Running,
        command,
        workload,
        environment: crate::host::environment(),
        cases: Vec::new(),
        findings: Vec::new(),
        imported: None,
        limits: Vec::new(),
        curves: Vec::new(),
    }
}

/// Runs every case of `plan` into `run`, calling the observer as it goes. Stops early,
/// keeping what is done, when interrupted.
pub fn run_suite(
    run: &mut RunResult,
    plan: &[CaseSpec],
    settings: &Settings,
    obs: &mut dyn Observer,
) {
    for (i, spec) in plan.iter().enumerate() {
        if interrupted() {
            break;
        }
        obs.case_started(i, plan.len(), spec);
        let result = run_case(spec, settings, obs);
        let cut = result.repetitions.is_empty()
            && result
                .error
                .as_deref()
                .is_some_and(|e| e.starts_with("interrupted by"));
        if cut {
            // Interrupted before its first repetition was whole: not a result.
            break;
        }
        obs.case_done(&result);
        run.cases.push(result);
    }
    finish(
        run,
        if interrupted() {
            RunStatus::Interrupted
        } else {
            RunStatus::Complete
        },
    );
}

/// Ends `run` with `status`: its end time, and the machines of the hosts its nodes ran on
/// (as they described themselves) in `environment.hosts`.
pub fn finish(run: &mut RunResult, status: RunStatus) {
    run.status = status;
    run.finished_at = Some(crate::clock::rfc3339(SystemTime::now()));
    for m in hosts::take_seen() {
        match run.environment.hosts.iter_mut().find(|h| h.name == m.name) {
            Some(h) => *h = m,
            None => run.environment.hosts.push(m),
        }
    }
}

/// Checks every peer a plan names before anything runs: known, set up, and able to play
/// its node (the error names the case's topology, the node and the fix).
pub fn check_peers(plan: &[CaseSpec]) -> crate::error::Result<()> {
    for c in plan {
        let Ok(g) = check(&c.origin, &c.topology) else {
            continue;
        };
        for i in 0..g.topology.nodes.len() {
            if let Some(m) = engine::node_peer(&g, i, c)? {
                m.command()?;
            }
        }
    }
    Ok(())
}

/// Runs one case: its repetitions, the raw-socket floor, the summary and the warnings.
pub fn run_case(spec: &CaseSpec, settings: &Settings, obs: &mut dyn Observer) -> CaseResult {
    let started = Instant::now();
    let machine = busy::Watch::start();
    let mut reps = Vec::new();
    let mut edge_reps = Vec::new();
    let mut node_reps = Vec::new();
    let mut error = None;
    let graph: Option<Graph> = match check(&spec.origin, &spec.topology) {
        Ok(g) => Some(g),
        Err(e) => {
            error = Some(e.to_string());
            None
        }
    };
    let mut incomplete = None;
    for r in 0..spec.repetitions {
        let Some(g) = &graph else { break };
        if interrupted() {
            break;
        }
        obs.repetition(r + 1, spec.repetitions);
        match engine::repetition(g, spec, settings) {
            // A repetition that ends after the interruption is kept only if it is whole.
            Ok(reports) => {
                let edges = merge::edges(g, &reports);
                reps.push(merge::repetition(&reports, &edges));
                edge_reps.push(edges);
                node_reps.push(reports);
            }
            Err(_) if interrupted() => break,
            Err(e) => {
                error = Some(format!("repetition {} of {}: {e}", r + 1, spec.repetitions));
                break;
            }
        }
    }
    if interrupted() && error.is_none() && (reps.len() as u32) < spec.repetitions {
        // The repetitions done are kept as a partial case; none done: no case at all.
        if reps.is_empty() {
            error = Some(format!("interrupted by {}", interrupted_by()));
        } else {
            incomplete = Some(format!(
                "interrupted by {} after {} of {} repetitions",
                interrupted_by(),
                reps.len(),
                spec.repetitions
            ));
        }
    }
    let edges = merge::case_edges(&edge_reps);
    let intervals = merge::case_intervals(&node_reps, settings.interval);
    let nodes = match &graph {
        Some(g) if !node_reps.is_empty() => merge::case_nodes(g, &node_reps),
        _ => Vec::new(),
    };
    // The floor is a ping-pong on this host's loopback: beside a case whose nodes are on
    // other hosts it would compare with the wrong path, so it is left out there.
    let crosses_hosts = spec
        .topology
        .nodes
        .iter()
        .any(|n| n.host.is_some() || !n.hosts.is_empty());
    let floor =
        if settings.floor && spec.kind() == Kind::Latency && error.is_none() && !crosses_hosts {
            let n = spec.count.min(5_000);
            match spec.transport {
                Transport::Tcp => floor::tcp(spec.size, n).ok(),
                Transport::Ipc => floor::unix(spec.size, n).ok(),
                _ => None,
            }
        } else {
            None
        };
    let summary = summarise(&reps);
    let mut warnings = if error.is_none() {
        warnings(spec, &reps, &summary)
    } else {
        Vec::new()
    };
    if let Some(g) = &graph {
        warnings.extend(g.warnings.iter().cloned());
    }
    warnings.extend(clock_notes(&edges));
    warnings.extend(nodes.iter().filter_map(|n| udp_drops(spec, n)));
    let wall_s = started.elapsed().as_secs_f64();
    let machine = machine.end();
    warnings.extend(busy::warning(&machine.busy));
    CaseResult {
        id: spec.id(),
        kind: spec.kind(),
        pattern: spec.pattern(),
        transport: spec.transport,
        message_size: spec.measured_size(),
        count: spec.count,
        rate: spec.rate,
        loop_mode: if spec.rate.is_some() {
            LoopMode::Open
        } else {
            LoopMode::Closed
        },
        warmup: spec.warmup,
        repetitions: reps,
        summary,
        floor,
        warnings,
        error,
        incomplete,
        wall_s,
        nodes,
        edges,
        sender: Some(sender_facts(spec)),
        machine: Some(machine),
        intervals,
    }
}
