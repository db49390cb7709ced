//! A case's topology expanded into replicas: each node's replicas with their specs (the
//! fields every role has set here, the role's own filled in by the role from the graph),
//! their host, launch and sockets; and the checks that need the case (peers in other
//! languages, nodes on other hosts).

use super::case::{CaseSpec, Settings};
use super::hosts::{Host, Hosts};
use super::launch::{Launch, ProcessLaunch};
pub(crate) use super::peer::node_peer;
use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::net::auto_endpoint_for;
use crate::net::security::{CurveKeys, Mechanism};
use crate::roles::{self, fill::Place, EchoMode, HeaderUse, NodeSpec, SockPlan};
use crate::topology::check::Graph;
use crate::topology::{IoMode, Placement, SocketType, StreamPart};
use crate::zmq;
use std::time::Duration;

/// A replica of a node with what it needs.
#[derive(Debug, Clone)]
pub struct Replica {
    /// The node's index in the topology.
    pub node: usize,
    /// Its spec (connect endpoints filled in when it is placed).
    pub spec: NodeSpec,
    /// Thread, process, or foreign (a peer in another language): the label reports show.
    pub placement: Placement,
    /// Where it runs and how it is started, decided once here.
    pub launch: Launch,
    /// The host it runs on, when not the runner's own (a name of the run's hosts).
    pub host: Option<Host>,
    /// Who plays it: `zmqperf`, or the peer with its versions.
    pub implementation: String,
}

fn replica_name(name: &str, replicas: u32, i: u32) -> String {
    if replicas > 1 {
        format!("{name}[{i}]")
    } else {
        name.to_string()
    }
}

/// The hosts of a case: the run's (`--hosts`) and its topology's own `[hosts]`.
pub fn case_hosts(case: &CaseSpec, settings: &Settings) -> Result<Hosts> {
    let mut hosts = settings.hosts.clone();
    if !case.topology.hosts.is_empty() {
        let origin = format!("topology {}", case.origin);
        let mine = Hosts::from_entries(&origin, &case.topology.hosts)?;
        hosts.merge(&mine, &origin)?;
    }
    Ok(hosts)
}

/// The host of replica `r` of node `i` (None: the runner's own), checked against `hosts`.
fn replica_host<'h>(
    hosts: &'h Hosts,
    g: &Graph,
    i: usize,
    r: u32,
    case: &CaseSpec,
) -> Result<Option<&'h Host>> {
    let n = &g.topology.nodes[i];
    let (name, field) = match (&n.host, n.hosts.as_slice()) {
        (Some(_), [_, ..]) => {
            return Err(Error::invalid(
                &format!("topology {}: node '{}': hosts", case.origin, n.name),
                &n.hosts.join(", "),
                "give host (one) or hosts (its replicas spread over them), not both",
            ))
        }
        (Some(h), []) => (h.as_str(), "host"),
        (None, []) => return Ok(None),
        (None, list) => (list[r as usize % list.len()].as_str(), "hosts"),
    };
    let h = hosts.get(
        &format!("topology {}: node '{}': {field}", case.origin, n.name),
        name,
    )?;
    Ok((!h.is_local()).then_some(h))
}

/// The transport a socket uses: its first literal endpoint's, else the case's.
fn socket_transport(s: &crate::topology::SocketSpec, case: &CaseSpec) -> Transport {
    s.transports(case.transport)
        .next()
        .unwrap_or(case.transport)
}

/// Refuses what cannot work across hosts: ipc and inproc between nodes on different hosts,
/// a peer in another language on another host, a loopback bind reached from another host.
fn check_hosts(g: &Graph, case: &CaseSpec, hosts: &Hosts) -> Result<()> {
    let t = &g.topology;
    let hosts_of = |i: usize| -> Result<Vec<Option<String>>> {
        let mut v = Vec::new();
        for r in 0..t.nodes[i].replicas.max(1) {
            let h = replica_host(hosts, g, i, r, case)?.map(|h| h.name.clone());
            if !v.contains(&h) {
                v.push(h);
            }
        }
        Ok(v)
    };
    let placed: Vec<Vec<Option<String>>> =
        (0..t.nodes.len()).map(hosts_of).collect::<Result<_>>()?;
    let show = |h: &Option<String>| h.clone().unwrap_or_else(|| "the runner's".into());
    for (i, n) in t.nodes.iter().enumerate() {
        if n.implementation.is_some()
            && n.implementation.as_deref() != Some(crate::peers::CORE)
            && placed[i].iter().any(Option::is_some)
        {
            return Err(Error::invalid(
                &format!("topology {}: node '{}': host", case.origin, n.name),
                &placed[i].iter().flatten().cloned().collect::<Vec<_>>().join(", "),
                "a peer in another language runs on the runner's host only (its setup is per machine); leave out host, or play the node with zmqperf's core",
            ));
        }
    }
    for l in &g.links {
        let (c, b) = (l.conn.0, l.bind.0);
        let all: Vec<&Option<String>> = placed[c].iter().chain(&placed[b]).collect();
        if all.iter().all(|h| *h == all[0]) {
            continue;
        }
        let bs = &t.nodes[b].all_sockets()[l.bind.1];
        let tr = socket_transport(bs, case);
        let (cn, bn) = (&t.nodes[c].name, &t.nodes[b].name);
        if matches!(tr, Transport::Ipc | Transport::Inproc) {
            return Err(Error::invalid(
                &format!("topology {}: node '{cn}': socket.connect", case.origin),
                bn,
                format!(
                    "'{cn}' (host {}) and '{bn}' (host {}) are on different hosts, which {tr} cannot cross; use tcp (--transports tcp)",
                    show(&placed[c][0]),
                    show(&placed[b][0])
                ),
            ));
        }
        if let Some(lit) = bs.bind.iter().find(|e| {
            e.starts_with("tcp://127.")
                || e.starts_with("tcp://localhost:")
                || e.starts_with("tcp://[::1]")
        }) {
            return Err(Error::invalid(
                &format!("topology {}: node '{bn}': socket.bind", case.origin),
                lit,
                format!(
                    "a loopback address, which '{cn}' on another host cannot reach; bind \"auto\" or tcp://*:PORT (the host's addr is used)"
                ),
            ));
        }
    }
    let remote_any = placed.iter().flatten().any(Option::is_some);
    if remote_any && hosts.local().is_none() {
        // A node on the runner's host that a remote node connects to needs an address.
        for l in &g.links {
            let (c, b) = (l.conn.0, l.bind.0);
            if placed[b].iter().any(Option::is_none) && placed[c].iter().any(Option::is_some) {
                return Err(Error::invalid(
                    &format!("topology {}: node '{}': host", case.origin, t.nodes[b].name),
                    "(the runner's)",
                    format!(
                        "'{}' on another host connects to it, but the runner's host has no address: add it to the hosts file with local = true and addr = \"IP\" (docs/hosts.md)",
                        t.nodes[c].name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The bind endpoint of an `auto` bind of a replica on `host` (None: the runner's host,
/// reached at `local_addr` when other hosts take part).
fn auto_bind(
    case: &CaseSpec,
    abstract_ipc: bool,
    host: Option<&Host>,
    local_addr: Option<&str>,
) -> String {
    let addr = host.map(|h| h.addr.as_str()).or(local_addr);
    match (case.transport, addr) {
        // A name (a Kubernetes pod's DNS name) cannot be bound: every interface is, and
        // the others reach it by the name.
        (Transport::Tcp, Some(a)) if a.parse::<std::net::IpAddr>().is_err() => "tcp://*:*".into(),
        (Transport::Tcp, Some(a)) if a.contains(':') => format!("tcp://[{a}]:*"),
        (Transport::Tcp, Some(a)) => format!("tcp://{a}:*"),
        // A DISH on another host binds its host's address (udp has no wildcard port: the
        // runner's free port is taken there too, unlikely to be in use).
        (Transport::Udp, Some(a)) if a.parse::<std::net::Ipv4Addr>().is_ok() => {
            let auto = auto_endpoint_for(Transport::Udp, abstract_ipc);
            let port = auto.rsplit(':').next().unwrap_or("5556").to_string();
            format!("udp://{a}:{port}")
        }
        // Multicast leaves by the host's own interface (its address).
        (t, Some(a)) if t.is_multicast() && a.parse::<std::net::Ipv4Addr>().is_ok() => {
            let auto = auto_endpoint_for(t, abstract_ipc);
            let group = auto.split_once(';').map_or("", |(_, g)| g).to_string();
            format!("{t}://{a};{group}")
        }
        _ => auto_endpoint_for(case.transport, abstract_ipc),
    }
}

/// A node process ends itself this long after the case timeout (a launcher that died may
/// leave it running on its host).
const DEADLINE_GRACE: Duration = Duration::from_secs(10);

/// Expands the topology into replicas, in placement order: each node's replicas get the
/// fields every role has here, their role fills in its own ([`roles::fill_spec`]), and
/// then each gets its launch and its sockets.
pub fn replicas(g: &Graph, case: &CaseSpec, settings: &Settings) -> Result<Vec<Replica>> {
    let t = &g.topology;
    let hosts = case_hosts(case, settings)?;
    check_hosts(g, case, &hosts)?;
    let remote_any = (0..t.nodes.len()).any(|i| {
        (0..t.nodes[i].replicas.max(1))
            .any(|r| matches!(replica_host(&hosts, g, i, r, case), Ok(Some(_))))
    });
    let local_addr = hosts.local().filter(|_| remote_any).map(|h| h.addr.clone());
    let first_stream = first_streams(g);
    let flows = g.flows();
    let keys = curve_keys(g)?;
    // A peer without abstract ipc sockets gets ipc paths in the file system, as do the
    // nodes it talks to: every auto ipc endpoint of the case is a path then.
    let peers = (0..t.nodes.len())
        .map(|i| node_peer(g, i, case))
        .collect::<Result<Vec<_>>>()?;
    let abstract_ipc = peers.iter().flatten().all(|m| m.abstract_ipc);
    let mut out = Vec::new();
    for &i in &g.order {
        let n = &t.nodes[i];
        let place = |replica| Place {
            g,
            node: i,
            replica,
            origin: &case.origin,
            count: case.count,
            size: case.size,
            warmup: case.warmup,
            timeout_ms: settings.timeout.as_millis() as u64,
            transport: case.transport,
            first_stream: &first_stream,
            flows: &flows,
        };
        let peer = &peers[i];
        let specs = (0..n.replicas)
            .map(|r| {
                let p = place(r);
                let mut spec = common_spec(&p, case, settings, peer.is_some())?;
                roles::fill_spec(&p, &mut spec)?;
                Ok(spec)
            })
            .collect::<Result<Vec<_>>>()?;
        let placement = match n.placement {
            _ if peer.is_some() => Placement::Foreign,
            Placement::Auto if place(0).uses_inproc() => Placement::Thread,
            Placement::Auto => Placement::Process,
            p => p,
        };
        let peer_command = peer.as_ref().map(|m| m.command()).transpose()?;
        let implementation = peer
            .as_ref()
            .map(|m| m.label())
            .unwrap_or_else(|| crate::peers::CORE.to_string());
        for (r, mut spec) in (0..n.replicas).zip(specs) {
            let host = replica_host(&hosts, g, i, r, case)?;
            if host.is_some() && placement == Placement::Thread {
                return Err(Error::invalid(
                    &format!("topology {}: node '{}': placement", case.origin, n.name),
                    "thread",
                    "a node on another host runs in a process there; leave out placement (and use tcp between hosts)",
                ));
            }
            let launch = match (placement, &peer_command, host) {
                (Placement::Thread, _, _) => Launch::Thread,
                (_, Some(cmd), _) => Launch::Process(ProcessLaunch::peer(cmd.clone())),
                (_, None, Some(h)) => {
                    Launch::Process(h.node_launch(&super::remote_exe_of(h, &settings.exe)?))
                }
                (_, None, None) => {
                    Launch::Process(ProcessLaunch::own(&settings.exe.display().to_string()))
                }
            };
            let bind = |b: &String| {
                if b == "auto" {
                    auto_bind(case, abstract_ipc, host, local_addr.as_deref())
                } else {
                    b.clone()
                }
            };
            spec.sockets = sock_plans(n, &bind, &keys);
            out.push(Replica {
                node: i,
                placement: if host.is_some() {
                    Placement::Remote
                } else {
                    placement
                },
                launch,
                host: host.cloned(),
                implementation: implementation.clone(),
                spec,
            });
        }
    }
    Ok(out)
}

/// Each node's first stream id: one per replica of a role that sends streams, in node
/// order.
fn first_streams(g: &Graph) -> Vec<u32> {
    let mut first = Vec::new();
    let mut next = 0u32;
    for n in &g.topology.nodes {
        first.push(next);
        if n.role.info().stream == StreamPart::Sends {
            next += n.replicas;
        }
    }
    first
}

/// CURVE keys for this run, shared by every CURVE socket that was given none.
fn curve_keys(g: &Graph) -> Result<Option<CurveKeys>> {
    let needs_keys = g.topology.nodes.iter().any(|n| {
        n.all_sockets()
            .iter()
            .any(|s| s.options.security == Some(Mechanism::Curve) && s.options.curve_keys.is_none())
    });
    Ok(if needs_keys {
        Some(CurveKeys::generate()?)
    } else {
        None
    })
}

/// A node's sockets as planned for one replica: `bind` turns its binds into endpoints
/// (`auto` on the replica's host), and CURVE sockets without keys get the run's.
fn sock_plans(
    n: &crate::topology::Node,
    bind: &dyn Fn(&String) -> String,
    keys: &Option<CurveKeys>,
) -> Vec<SockPlan> {
    n.all_sockets()
        .iter()
        .map(|s| SockPlan {
            kind: SocketType::parse(&s.kind).expect("checked"),
            bind: s.bind.iter().map(bind).collect(),
            connect: Vec::new(),
            options: {
                let mut o = s.options.clone();
                if o.security == Some(Mechanism::Curve) && o.curve_keys.is_none() {
                    o.curve_keys = keys.clone();
                }
                o
            },
        })
        .collect()
}

/// A replica's spec with the fields every role has (its sockets come with its launch);
/// its role fills in the rest.
fn common_spec(p: &Place, case: &CaseSpec, settings: &Settings, peer: bool) -> Result<NodeSpec> {
    let n = p.node();
    let (count, size) = p.count_size(p.node)?;
    let rate = n.rate.or(case.rate);
    let info = n.role.info();
    Ok(NodeSpec {
        name: replica_name(&n.name, n.replicas, p.replica),
        role: n.role,
        sockets: Vec::new(),
        size,
        count,
        warmup: case.warmup,
        rate,
        stamp_every: if rate.is_some() {
            1
        } else {
            settings.stamp_every
        },
        // A receiver of a source that pauses for its receivers' joins waits that much longer
        // for its first message.
        timeout_ms: settings.timeout.as_millis() as u64 + crate::roles::senders_pause_ms(p),
        stream_id: p.first_stream[p.node] + p.replica,
        streams: Vec::new(),
        ends_itself: false,
        expect: 0,
        peers: p
            .g
            .peers((p.node, 0))
            .iter()
            .map(|q| p.g.topology.nodes[q.0].replicas)
            .sum(),
        subscriptions: p.subscriptions(),
        delimiter: false,
        header: HeaderUse::Always,
        echo: EchoMode::ZeroCopy,
        full_rtt: false,
        ticks: n.ticks.clone(),
        frames: Vec::new(),
        type_id: 0,
        log_levels: Vec::new(),
        eot: None,
        libzmq: zmq::library::choice(),
        deadline_ms: Some((settings.case_timeout + DEADLINE_GRACE).as_millis() as u64),
        send_offsets: Vec::new(),
        send_offset_error_ns: Vec::new(),
        io: if info.takes_io && n.ticks.is_none() {
            n.io.or(p.g.topology.params.io).unwrap_or_default()
        } else {
            IoMode::Blocking
        },
        swarm: None,
        peer_label: None,
        keep_partial: false,
        max_frame: None,
        // A peer's source keeps its socket until the runner's stop, which comes once every
        // receiver has reported.
        quit: if peer {
            crate::roles::Quit::WaitForStop
        } else {
            Default::default()
        },
        own: Default::default(),
        interval_ms: settings.interval.map(|d| d.as_millis() as u64),
    })
}
