//! A fan-out as a topology: the publisher (a source on ticks) and the swarms (subscriber
//! processes) as nodes, run by the engine like any other topology, and the engine's
//! reports split back into the fan-out's pieces.

use super::{ChildReport, ClusterConfig, PubConfig, PubResult};
use crate::endpoint::Endpoint;
use crate::error::Result;
use crate::runner::engine::{repetition_tolerant, Failure, Reports};
use crate::runner::{CaseSpec, Settings};
use crate::topology::check::check;
use crate::topology::{Node, Placement, Role, SocketOptions, SocketSpec, Ticks, Topology};
use std::path::Path;
use std::time::Duration;

fn ms(d: Duration) -> u64 {
    d.as_millis().min(u64::MAX as u128) as u64
}

/// The swarm node of a cluster: `processes` replicas of `subs_per_process` SUB sockets,
/// connecting to `connect` (a node name or an endpoint).
pub(super) fn swarm_node(cfg: &ClusterConfig, connect: &str) -> Node {
    Node {
        name: "subs".into(),
        role: Role::Swarm,
        replicas: cfg.processes,
        // A peer's swarm is placed as a foreign process by its impl.
        placement: if cfg.implementation.is_some() {
            Placement::Auto
        } else {
            Placement::Process
        },
        implementation: cfg.implementation.clone(),
        socket: Some(SocketSpec {
            kind: "SUB".into(),
            bind: Vec::new(),
            connect: vec![connect.to_string()],
            options: SocketOptions {
                rcvhwm: cfg.hwm,
                subscribe: Some(vec![String::new()]),
                ..Default::default()
            },
        }),
        sockets: Vec::new(),
        count: cfg.expect.map(serde_json::Value::from),
        size: None,
        rate: None,
        subs: Some(cfg.subs_per_process),
        ticks: None,
        idle_ms: Some(ms(cfg.idle)),
        first_timeout_ms: Some(ms(cfg.first_timeout)),
        hosts: cfg.spread.names.clone(),
        ..Default::default()
    }
}

/// The publisher node: an XPUB that blocks rather than drops, sending on ticks, on a
/// thread of this process; with `raw`, the raw-socket floor's publisher (plain stream
/// sockets, one per subscriber) in the same place.
pub(super) fn publisher_node(p: &PubConfig, raw: bool) -> Node {
    Node {
        name: "pub".into(),
        role: Role::Source,
        replicas: 1,
        placement: Placement::Thread,
        socket: Some(SocketSpec {
            kind: "XPUB".into(),
            bind: vec![p.endpoint.as_str().to_string()],
            connect: Vec::new(),
            options: SocketOptions {
                sndhwm: p.hwm,
                xpub_nodrop: Some(!p.lossy),
                ..Default::default()
            },
        }),
        sockets: Vec::new(),
        count: Some(serde_json::Value::from(p.total())),
        size: Some(serde_json::Value::from(p.size as u64)),
        rate: None,
        subs: None,
        ticks: Some(Ticks {
            interval_ms: p.interval.as_secs_f64() * 1000.0,
            per_tick: p.per_tick,
            passes: p.passes,
            warmup: p.warmup,
            wait_ms: if p.lossy { 0 } else { ms(p.wait) },
            linger_ms: ms(p.linger),
            io_threads: p.io_threads,
            raw,
        }),
        idle_ms: None,
        first_timeout_ms: None,
        wait_subscriptions: p.lossy.then_some(false),
        ..Default::default()
    }
}

/// Runs `nodes` once on the engine: `timeout` is the per-wait timeout of every node,
/// `case_timeout` the bound on the whole run; `placed` is called once every node is ready.
/// A subscriber process that fails or overruns is stopped and returned among the failures;
/// the others are still reported.
#[allow(clippy::too_many_arguments)]
pub(super) fn topology(
    nodes: Vec<Node>,
    endpoint: &Endpoint,
    size: usize,
    count: u64,
    timeout: Duration,
    case_timeout: Duration,
    exe: &Path,
    hosts: &crate::runner::hosts::Hosts,
    placed: &mut dyn FnMut(),
) -> Result<(Reports, Vec<Failure>)> {
    let topology = Topology {
        name: "fanout".into(),
        description: String::new(),
        params: Default::default(),
        sweep: Default::default(),
        nodes,
        hosts: Default::default(),
    };
    let graph = check("fanout", &topology)?;
    let case = CaseSpec {
        topology,
        origin: "fanout".into(),
        label: String::new(),
        transport: endpoint.transport(),
        size,
        count,
        warmup: 0,
        repetitions: 1,
        rate: None,
    };
    let settings = Settings {
        timeout,
        case_timeout,
        exe: exe.to_path_buf(),
        stamp_every: 1,
        interval: None,
        floor: false,
        hosts: hosts.clone(),
    };
    repetition_tolerant(&graph, &case, &settings, placed)
}

/// The swarms' reports, in process order, and the publisher's result.
pub(super) fn split(reports: Reports) -> (Vec<ChildReport>, Option<PubResult>) {
    let mut children = Vec::new();
    let mut publisher = None;
    for (rep, r) in reports {
        if let Some(mut c) = r.swarm {
            c.host = rep.host.map(|h| h.name);
            c.clock_error_ns = r.clock_error_ns;
            children.push(*c);
        }
        if let Some(p) = r.publisher {
            publisher = Some(*p);
        }
    }
    children.sort_by_key(|c| c.process);
    (children, publisher)
}
