//! Plans: the default suite, the options of `zmqperf run`, and workload files (TOML or
//! JSON) that list cases and cartesian sweeps.

mod topology;
mod workload;

use super::CaseSpec;
use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::net::security::Mechanism;
use crate::topology::builtin;
use crate::topology::load as topo_load;
use crate::topology::{Role, Topology};

/// How much to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One size, two repetitions: a smoke test in seconds.
    Quick,
    /// The default suite: 64 B and 1 KiB, three repetitions, about a minute.
    Default,
    /// The whole sweep: 2 B to 64 KiB in powers of two.
    Full,
}

/// What the options of `zmqperf run` select (None: the scope's default).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Patterns: names of built-in topologies.
    pub patterns: Option<Vec<&'static str>>,
    /// Transports.
    pub transports: Option<Vec<Transport>>,
    /// Message sizes.
    pub sizes: Option<Vec<usize>>,
    /// Round trips or messages per repetition.
    pub count: Option<u64>,
    /// Warm-up per repetition.
    pub warmup: Option<u64>,
    /// Repetitions.
    pub repetitions: Option<u32>,
    /// Open-loop rates for the throughput patterns.
    pub rates: Option<Vec<f64>>,
    /// Security mechanisms: every case once per mechanism (the non-NULL ones over ipc and
    /// tcp only: inproc has no handshake), labelled with the mechanism.
    pub security: Option<Vec<Mechanism>>,
    /// Implementations that play the measured roles (sources, sinks, pings, echoes): every
    /// case once per implementation, `zmqperf` (its own core) unlabelled, a peer labelled
    /// with its name (over ipc and tcp only: a peer is a process of its own).
    pub impls: Option<Vec<String>>,
}

/// The default count for a kind and size: enough for a steady figure, short on 2 cores.
pub fn default_count(latency: bool, size: usize, scope: Scope) -> u64 {
    let n: u64 = match (latency, size) {
        (true, s) if s <= 4096 => 2_000,
        (true, s) if s <= 65_536 => 1_000,
        (true, _) => 100,
        (false, s) if s <= 256 => 200_000,
        (false, s) if s <= 4096 => 100_000,
        (false, s) if s <= 65_536 => 10_000,
        (false, _) => 500,
    };
    if scope == Scope::Quick {
        n / 2
    } else {
        n
    }
}

pub(super) fn is_latency(t: &Topology) -> bool {
    t.nodes.iter().any(|n| n.role == Role::Ping)
}

/// A case of a built-in topology.
#[allow(clippy::too_many_arguments)]
pub fn builtin_case(
    name: &str,
    transport: Transport,
    size: usize,
    count: u64,
    warmup: u64,
    repetitions: u32,
    rate: Option<f64>,
) -> CaseSpec {
    CaseSpec {
        topology: builtin::get(name).expect("built-in topologies load"),
        origin: format!("built-in {name}"),
        label: String::new(),
        transport,
        size,
        count,
        warmup,
        repetitions,
        rate,
    }
}

/// The plan for `zmqperf run` without a workload file.
pub fn from_selection(scope: Scope, sel: &Selection) -> Vec<CaseSpec> {
    let patterns = sel
        .patterns
        .clone()
        .unwrap_or_else(|| builtin::SUITE.to_vec());
    let transports = sel
        .transports
        .clone()
        .unwrap_or_else(|| vec![Transport::Inproc, Transport::Ipc, Transport::Tcp]);
    let sizes = sel.sizes.clone().unwrap_or_else(|| match scope {
        Scope::Quick => vec![64],
        Scope::Default => vec![64, 1024],
        Scope::Full => (1..=16).map(|p| 1usize << p).collect(),
    });
    let reps = sel
        .repetitions
        .unwrap_or(if scope == Scope::Quick { 2 } else { 3 });
    let mut plan = Vec::new();
    for &pattern in &patterns {
        let latency = is_latency(&builtin::get(pattern).expect("built-in topologies load"));
        for &transport in &transports {
            for &size in &sizes {
                let rates: Vec<Option<f64>> = match (&sel.rates, latency) {
                    (Some(r), false) => r.iter().map(|x| Some(*x)).collect(),
                    _ => vec![None],
                };
                for rate in rates {
                    let count = sel
                        .count
                        .unwrap_or_else(|| default_count(latency, size, scope));
                    let case = builtin_case(
                        pattern,
                        transport,
                        size,
                        count,
                        sel.warmup.unwrap_or((count / 10).clamp(1, 1000)),
                        reps,
                        rate,
                    );
                    // A pattern libzmq refuses on the transport (REQ on udp, PUSH over
                    // multicast) is left out of the suite; `fits` says why.
                    if fits(&case).is_err() {
                        continue;
                    }
                    for c in with_security(case, sel.security.as_deref()) {
                        plan.extend(with_impls(c, sel.impls.as_deref()));
                    }
                }
            }
        }
    }
    plan
}

/// Whether libzmq takes the case's socket types on its transport (and its size there):
/// the error of the topology check otherwise.
pub fn fits(case: &CaseSpec) -> Result<()> {
    let g = crate::topology::check::check(&case.origin, &case.topology)?;
    crate::topology::check::check_case(&case.origin, &g, case.transport, case.size)
}

/// Adds `what` to a case's label (comma-separated).
fn add_label(c: &mut CaseSpec, what: &str) {
    c.label = if c.label.is_empty() {
        what.to_string()
    } else {
        format!("{},{what}", c.label)
    };
}

/// A case once per mechanism, side by side (NULL first, as it is: no label); the others
/// carry the mechanism on every socket and as their label. Inproc cases run under NULL
/// only: inproc has no handshake, so a mechanism would change nothing.
pub fn with_security(case: CaseSpec, mechanisms: Option<&[Mechanism]>) -> Vec<CaseSpec> {
    let Some(ms) = mechanisms else {
        return vec![case];
    };
    let mut out = Vec::new();
    for &m in ms {
        if m == Mechanism::Null {
            out.push(case.clone());
            continue;
        }
        if case.transport == Transport::Inproc {
            continue;
        }
        let mut c = case.clone();
        for n in &mut c.topology.nodes {
            for s in n.socket.iter_mut().chain(n.sockets.iter_mut()) {
                s.options.security = Some(m);
            }
        }
        add_label(&mut c, m.name());
        out.push(c);
    }
    out
}

/// A case once per implementation (docs/peers.md): `zmqperf` as it is; a peer plays every
/// source, sink, ping and echo that names no `impl` of its own, and labels the case. Inproc
/// cases, and cases with a node the peer does not play, run under zmqperf only (the skip is
/// said on stderr).
pub fn with_impls(case: CaseSpec, impls: Option<&[String]>) -> Vec<CaseSpec> {
    let Some(impls) = impls else {
        return vec![case];
    };
    let mut out = Vec::new();
    for name in impls {
        if name == crate::peers::CORE {
            out.push(case.clone());
            continue;
        }
        if case.transport == Transport::Inproc {
            continue;
        }
        let mut c = case.clone();
        for n in &mut c.topology.nodes {
            let measured = matches!(n.role, Role::Source | Role::Sink | Role::Ping | Role::Echo);
            if measured && n.implementation.is_none() && n.ticks.is_none() {
                n.implementation = Some(name.clone());
            }
        }
        if let Some(why) = peer_gap(&c) {
            super::notice::tell(&super::notice::Notice::RunWithout {
                case_id: &case.id(),
                implementation: name,
                why: &why,
            });
            continue;
        }
        add_label(&mut c, name);
        out.push(c);
    }
    out
}

/// Every case once per ordered pair of the hosts in `list` (comma-separated names of
/// `hosts`), the sending side (ping, source) on the first host and the answering side
/// (echo, sink, proxy, swarm) on the second; labelled `a->b`. Inproc and ipc cannot cross
/// hosts: such cases are left out, and said on stderr.
pub fn over_host_pairs(
    plan: Vec<CaseSpec>,
    hosts: &super::hosts::Hosts,
    list: &str,
) -> Result<Vec<CaseSpec>> {
    let names: Vec<String> = list.split(',').map(|n| n.trim().to_string()).collect();
    for n in &names {
        hosts.get("--host-pairs", n)?;
    }
    let mut uniq = names.clone();
    uniq.sort();
    uniq.dedup();
    if uniq.len() < 2 || uniq.len() != names.len() {
        return Err(Error::invalid(
            "--host-pairs",
            list,
            "two or more different hosts of --hosts, e.g. a,b,c",
        ));
    }
    let mut out = Vec::new();
    for case in plan {
        if case.transport != Transport::Tcp {
            super::notice::tell(&super::notice::Notice::LeftOutOfHostPairs {
                case_id: &case.id(),
                transport: case.transport,
            });
            continue;
        }
        for src in &names {
            for dst in names.iter().filter(|d| *d != src) {
                let mut c = case.clone();
                for n in &mut c.topology.nodes {
                    n.host = Some(if n.role.is_active() {
                        src.clone()
                    } else {
                        dst.clone()
                    });
                }
                add_label(&mut c, &format!("{src}->{dst}"));
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// Why a peer named by a node of `case` cannot play it (its role, socket types or the
/// case's transport, as its manifest says), or None.
pub fn peer_gap(case: &CaseSpec) -> Option<String> {
    for n in &case.topology.nodes {
        let Some(name) = n.implementation.as_deref() else {
            continue;
        };
        if name == crate::peers::CORE {
            continue;
        }
        let kinds: Vec<crate::topology::SocketType> = n
            .all_sockets()
            .iter()
            .filter_map(|s| crate::topology::SocketType::parse(&s.kind))
            .collect();
        if let Err(e) =
            crate::peers::get(name).and_then(|m| m.plays(n.role, &kinds, case.transport))
        {
            return Some(match e {
                crate::error::Error::InvalidValue { reason, .. } => reason,
                other => other.to_string(),
            });
        }
    }
    None
}

/// Parses a transport name.
pub fn parse_transport(s: &str) -> Result<Transport> {
    Transport::parse(s).ok_or_else(|| {
        let all: Vec<&str> = Transport::ALL.iter().map(|t| t.name()).collect();
        Error::invalid("transport", s, format!("use one of {}", all.join(", ")))
    })
}

/// A transport of the commands whose own experiments run over tcp, ipc and inproc only
/// (diagnose, the matrix): the others are refused with where they do run.
pub fn parse_classic_transport(s: &str) -> Result<Transport> {
    match parse_transport(s)? {
        t @ (Transport::Tcp | Transport::Ipc | Transport::Inproc) => Ok(t),
        t => Err(Error::invalid(
            "transport",
            s,
            format!("this command's experiments run over tcp, ipc and inproc; {t}:// runs from topology files (`zmqperf run FILE`, docs/transports.md)"),
        )),
    }
}

/// Reads a workload file or a topology file (`.toml` or `.json`); errors name the file and
/// the field or line. `sel` overrides a topology file's own parameters.
pub fn from_file(path: &str, text: &str) -> Result<Vec<CaseSpec>> {
    from_file_with(path, text, &Selection::default())
}

/// [`from_file`] with the command line's overrides for topology files.
pub fn from_file_with(path: &str, text: &str, sel: &Selection) -> Result<Vec<CaseSpec>> {
    let parsed = topo_load::parse(path, text)?;
    if parsed.as_object().is_some_and(|o| o.is_empty()) {
        return Err(Error::invalid(
            &format!("file {path}"),
            "",
            "is empty: a topology lists its [[node]]s (docs/topology.md), a workload its [[case]]s or [[sweep]]s (docs/suite.md)",
        ));
    }
    let cases = if topo_load::is_topology(&parsed) {
        topology::from_topology_file(path, text, sel)?
    } else {
        workload::workload_file(path, text)?
    };
    Ok(cases
        .into_iter()
        .flat_map(|c| with_security(c, sel.security.as_deref()))
        .flat_map(|c| with_impls(c, sel.impls.as_deref()))
        .collect())
}

/// Refuses a plan that would measure nothing before anything runs: no case at all (what
/// was selected left none), or a case of no repetitions.
pub fn check_measures(plan: &[CaseSpec], what: &str) -> Result<()> {
    if plan.is_empty() {
        return Err(Error::invalid(
            "the run",
            what,
            "leaves no case to run: nothing would be measured. Check --patterns, --transports, --sizes and --impl (a peer in another language runs in a process of its own, so it has no inproc cases)",
        ));
    }
    if let Some(c) = plan.iter().find(|c| c.repetitions == 0) {
        return Err(Error::invalid(
            &format!("case {} ({}): repetitions", c.id(), c.origin),
            "0",
            "must be at least 1: a case of no repetitions measures nothing",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod measured {
    use super::*;

    #[test]
    fn a_case_is_labelled_by_the_size_its_sources_send() {
        let mut c = builtin_case("pushpull", Transport::Tcp, 64, 1000, 10, 1, None);
        assert_eq!(
            (c.measured_size(), c.id()),
            (64, "throughput/pushpull/tcp/64".into())
        );
        for n in c
            .topology
            .nodes
            .iter_mut()
            .filter(|n| n.role == Role::Source)
        {
            n.size = Some(serde_json::Value::from("256"));
        }
        assert_eq!(c.measured_size(), 256);
        assert_eq!(c.id(), "throughput/pushpull/tcp/256");
    }
}

#[cfg(test)]
mod tests;
