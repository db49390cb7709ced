//! One repetition of a case: the topology's nodes expanded into replicas with their specs,
//! placed in dependency order (each connects to endpoints already bound), started behind
//! one barrier, ended in order (sources and pings end by themselves; sinks, echoes and
//! proxies that cannot know their end are stopped once the senders are done), and their
//! reports collected.

use super::hosts::{Host, Hosts};
use super::launch::{Launch, ProcessLaunch};
use super::place::{launched, on_thread, Event, Placed};
use super::sync::{self, ClockEstimate};
use super::watch::Watch;
use super::{CaseSpec, Settings};
use crate::endpoint::Transport;
use crate::error::{Error, NodeFailure, Result};
use crate::net::auto_endpoint_for;
use crate::net::security::{CurveKeys, Mechanism};
use crate::roles::swarm::SwarmSpec;
use crate::roles::{EchoMode, HeaderUse, NodeSpec, RoleReport, SockPlan};
use crate::runner::control::{ToNode, VERSION};
use crate::topology::check::Graph;
use crate::topology::{IoMode, Placement, Role, SocketType};
use crate::zmq;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

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

/// The peer that plays node `i`, if its `impl` names one: checked against what the peer
/// plays and against what no peer is given (docs/peers.md).
pub(crate) fn node_peer(
    g: &Graph,
    i: usize,
    case: &CaseSpec,
) -> Result<Option<crate::peers::Manifest>> {
    let t = &g.topology;
    let n = &t.nodes[i];
    let name = match n.implementation.as_deref() {
        None | Some(crate::peers::CORE) => return Ok(None),
        Some(x) => x,
    };
    let at = format!("topology {}: node '{}': impl", case.origin, n.name);
    let m = crate::peers::get(name).map_err(|e| match e {
        Error::InvalidValue { reason, .. } => Error::invalid(&at, name, reason),
        other => other,
    })?;
    let refuse = |what: &str| {
        Err(Error::invalid(
            &at,
            name,
            format!("a peer is not given {what} (docs/peers.md); play this node with zmqperf's own core (leave out impl)"),
        ))
    };
    let socks = n.all_sockets();
    if n.message.is_some() {
        return refuse("typed frames (message)");
    }
    if n.log.is_some() {
        return refuse("log lines (log)");
    }
    if n.stream.is_some() {
        return refuse("streams with an end-of-transmission channel (stream)");
    }
    if n.ticks.is_some() {
        return refuse("a tick schedule (ticks)");
    }
    if n.io
        .or(t.params.io)
        .is_some_and(|io| io != IoMode::Blocking)
        && IoMode::applies_to(n.role)
    {
        return refuse("an I/O mode other than blocking (io)");
    }
    if socks
        .iter()
        .any(|s| s.options.security.is_some_and(|m| m != Mechanism::Null))
    {
        return refuse("CURVE or PLAIN security");
    }
    if matches!(n.placement, Placement::Thread | Placement::Process) {
        return Err(Error::invalid(
            &format!("topology {}: node '{}': placement", case.origin, n.name),
            if n.placement == Placement::Thread {
                "thread"
            } else {
                "process"
            },
            "a node played by a peer runs in a process of its own (foreign); leave out placement",
        ));
    }
    // The transport it uses: its literal endpoints', else the case's.
    let mut transport = case.transport;
    for s in &socks {
        for e in s.bind.iter().chain(&s.connect) {
            if let Some(scheme) = e.split("://").next().filter(|_| e.contains("://")) {
                transport = match scheme {
                    "tcp" => Transport::Tcp,
                    "ipc" => Transport::Ipc,
                    _ => Transport::Inproc,
                };
            }
        }
    }
    if transport == Transport::Inproc {
        return Err(Error::invalid(
            &at,
            name,
            "a peer runs in a process of its own, which inproc:// cannot reach; run the case over tcp or ipc (--transports tcp,ipc)",
        ));
    }
    m.plays(n.role, &g.types[i], transport)?;
    Ok(Some(m))
}

fn replica_name(name: &str, replicas: u32, i: u32) -> String {
    if replicas > 1 {
        format!("{name}[{i}]")
    } else {
        name.to_string()
    }
}

/// The node's own count and size, where it overrides the case's.
fn node_count_size(g: &Graph, i: usize, case: &CaseSpec) -> Result<(u64, usize)> {
    let n = &g.topology.nodes[i];
    let at = |f: &str| format!("node '{}': {f}", n.name);
    let count = crate::topology::value_u64(&n.count, &at("count"), crate::parse::parse_count)?
        .unwrap_or(case.count);
    let size = crate::topology::value_u64(&n.size, &at("size"), |w, s| {
        crate::parse::parse_size(w, s).map(|x| x as u64)
    })?
    .map(|s| s as usize)
    .unwrap_or(case.size);
    // Typed frames: the message is all of them.
    let (frames, _, _) = node_shape(g, i)?;
    if !frames.is_empty() {
        return Ok((count, frames.iter().sum()));
    }
    Ok((count, size))
}

/// A node's message shape: its typed frames (sizes) and type id, and its log levels.
fn node_shape(g: &Graph, i: usize) -> Result<(Vec<usize>, u32, Vec<String>)> {
    let n = &g.topology.nodes[i];
    let mut frames = Vec::new();
    let mut type_id = 0;
    if let Some(m) = &n.message {
        type_id = m.type_id;
        for (k, v) in m.frames.iter().enumerate() {
            let what = format!("node '{}': message.frames[{k}]", n.name);
            let size = crate::topology::value_u64(&Some(v.clone()), &what, |w, s| {
                crate::parse::parse_size(w, s).map(|x| x as u64)
            })?
            .unwrap_or(0) as usize;
            frames.push(size);
        }
        if frames[0] < crate::roles::shape::FIRST_FRAME_MIN {
            return Err(Error::invalid(
                &format!("topology: node '{}': message.frames[0]", n.name),
                &frames[0].to_string(),
                format!(
                    "the first frame holds the {}-byte header and the 4-byte type id; make it at least {} bytes",
                    crate::header::HEADER_LEN,
                    crate::roles::shape::FIRST_FRAME_MIN
                ),
            ));
        }
    }
    let levels = n
        .log
        .as_ref()
        .map(|l| {
            l.levels.clone().unwrap_or_else(|| {
                crate::roles::shape::DEFAULT_LEVELS
                    .iter()
                    .map(|s| s.to_string())
                    .collect()
            })
        })
        .unwrap_or_default();
    Ok((frames, type_id, levels))
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

/// The transport a socket uses: its literal endpoints' scheme, else the case's.
fn socket_transport(s: &crate::topology::SocketSpec, case: &CaseSpec) -> Transport {
    s.bind
        .iter()
        .chain(&s.connect)
        .find_map(|e| match e.split_once("://") {
            Some(("tcp", _)) => Some(Transport::Tcp),
            Some(("ipc", _)) => Some(Transport::Ipc),
            Some(("inproc", _)) => Some(Transport::Inproc),
            _ => None,
        })
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
        if tr != Transport::Tcp {
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
        _ => auto_endpoint_for(case.transport, abstract_ipc),
    }
}

/// A node process ends itself this long after the case timeout (a launcher that died may
/// leave it running on its host).
const DEADLINE_GRACE: Duration = Duration::from_secs(10);

/// Expands the topology into replicas, in placement order.
pub fn replicas(g: &Graph, case: &CaseSpec, settings: &Settings) -> Result<Vec<Replica>> {
    let t = &g.topology;
    let hosts = case_hosts(case, settings)?;
    check_hosts(g, case, &hosts)?;
    let remote_any = (0..t.nodes.len()).any(|i| {
        (0..t.nodes[i].replicas.max(1))
            .any(|r| matches!(replica_host(&hosts, g, i, r, case), Ok(Some(_))))
    });
    let local_addr = hosts.local().filter(|_| remote_any).map(|h| h.addr.clone());
    // Stream ids: one per source replica, in node order.
    let mut first_stream = vec![0u32; t.nodes.len()];
    let mut next = 0u32;
    for (i, n) in t.nodes.iter().enumerate() {
        first_stream[i] = next;
        if n.role == Role::Source {
            next += n.replicas;
        }
    }
    let flows = g.flows();
    // CURVE keys for this run, shared by every CURVE socket that was given none.
    let needs_keys = t.nodes.iter().any(|n| {
        n.all_sockets()
            .iter()
            .any(|s| s.options.security == Some(Mechanism::Curve) && s.options.curve_keys.is_none())
    });
    let keys = if needs_keys {
        Some(CurveKeys::generate()?)
    } else {
        None
    };
    // A peer without abstract ipc sockets gets ipc paths in the file system, as do the
    // nodes it talks to: every auto ipc endpoint of the case is a path then.
    let peers = (0..t.nodes.len())
        .map(|i| node_peer(g, i, case))
        .collect::<Result<Vec<_>>>()?;
    let abstract_ipc = peers.iter().flatten().all(|m| m.abstract_ipc);
    let mut out = Vec::new();
    for &i in &g.order {
        let n = &t.nodes[i];
        let (count, size) = node_count_size(g, i, case)?;
        let socks = n.all_sockets();
        let peer_replicas =
            |si: usize| -> u32 { g.peers((i, si)).iter().map(|p| t.nodes[p.0].replicas).sum() };
        // Streams into a sink, and whether it gets a share of any.
        let mut streams = Vec::new();
        let mut shared = false;
        let mut sizes = Vec::new();
        // A sink in a stream takes flows of that stream only.
        if let (Role::Sink, Some(st)) = (n.role, &n.stream) {
            for f in flows.iter().filter(|f| f.sink == i) {
                let src = &t.nodes[f.source];
                if src.stream.as_deref() != Some(st.as_str()) {
                    return Err(Error::invalid(
                        &format!("topology {}: node '{}': stream", case.origin, n.name),
                        st,
                        format!(
                            "its source '{}' is not in stream '{st}'; give the flow's source `stream = \"{st}\"` too",
                            src.name
                        ),
                    ));
                }
            }
        }
        // The message shape of the streams into a sink: one for all of them.
        let mut shape: Option<(Vec<usize>, u32, Vec<String>)> = None;
        for f in flows.iter().filter(|f| f.sink == i) {
            // (A swarm takes one stream: the first that reaches it.)
            let (mut c, s) = node_count_size(g, f.source, case)?;
            let this = node_shape(g, f.source)?;
            match &shape {
                Some(other) if *other != this => {
                    return Err(Error::invalid(
                        &format!("topology {}: node '{}'", case.origin, n.name),
                        "its streams",
                        "the sources that reach this sink send messages of different shapes (frames or log lines); give each shape its own sink",
                    ))
                }
                _ => shape = Some(this.clone()),
            }
            // Log lines behind a SUB filter: the sink expects only the lines it lets through.
            if !this.2.is_empty() {
                let prefixes = socks[0].options.subscribe.clone().unwrap_or_default();
                c = crate::roles::shape::LogFilter::new(&this.2, &prefixes).passed_of(c);
            }
            sizes.push(s);
            shared |= f.shared;
            for r in 0..t.nodes[f.source].replicas {
                streams.push((first_stream[f.source] + r, c));
            }
        }
        let (frames, type_id, log_levels) = match n.role {
            Role::Sink => shape.unwrap_or_default(),
            Role::Source => node_shape(g, i)?,
            _ => Default::default(),
        };
        if n.role == Role::Source && !log_levels.is_empty() && size < crate::header::HEADER_LEN {
            return Err(Error::invalid(
                &format!("topology {}: node '{}': size", case.origin, n.name),
                &size.to_string(),
                format!(
                    "a log line carries the {}-byte header before its text; give size {} or more",
                    crate::header::HEADER_LEN,
                    crate::header::HEADER_LEN
                ),
            ));
        }
        let sink_size = if sizes
            .iter()
            .all(|&s| s == sizes.first().copied().unwrap_or(size))
        {
            sizes.first().copied().unwrap_or(size)
        } else {
            0
        };
        // What an echo answers.
        let pings: Vec<usize> = g
            .peers((i, 0))
            .iter()
            .map(|p| p.0)
            .filter(|&p| t.nodes[p].role == Role::Ping)
            .collect();
        let mut expect = 0;
        for &p in &pings {
            let (c, _) = node_count_size(g, p, case)?;
            expect += (c + case.warmup) * t.nodes[p].replicas as u64;
        }
        // The socket that publishes (a source's, or a proxy's sending side) waits for its
        // subscribers before the first message.
        let out_sock = if n.role == Role::Proxy { 1 } else { 0 };
        let subscriptions: u32 = if matches!(n.role, Role::Source | Role::Proxy)
            && n.wait_subscriptions != Some(false)
            && matches!(g.types[i][out_sock], SocketType::Pub | SocketType::Xpub)
        {
            g.peers((i, out_sock))
                .iter()
                .map(|p| {
                    let topics = t.nodes[p.0].all_sockets()[p.1]
                        .options
                        .subscribe
                        .as_ref()
                        .map(|v| v.len().max(1))
                        .unwrap_or(1) as u32;
                    let per = if g.types[p.0][p.1] == SocketType::Sub {
                        topics
                    } else {
                        1
                    };
                    per * t.nodes[p.0].replicas * t.nodes[p.0].subs.unwrap_or(1)
                })
                .sum()
        } else {
            0
        };
        let delimiter = n.role == Role::Ping
            && g.types[i][0] == SocketType::Dealer
            && g.peers((i, 0))
                .iter()
                .any(|p| g.types[p.0][p.1] == SocketType::Rep);
        let uses_inproc = socks.iter().any(|s| {
            s.bind.iter().chain(&s.connect).any(|e| {
                e.starts_with("inproc://")
                    || (!e.contains("://") && case.transport == Transport::Inproc)
            })
        });
        if n.role == Role::Swarm && uses_inproc {
            return Err(Error::invalid(
                &format!("topology {}: node '{}': socket.connect", case.origin, n.name),
                "inproc",
                "a swarm opens its own ZeroMQ context, which inproc:// cannot cross; run it over ipc or tcp (--transports ipc)",
            ));
        }
        let peer = &peers[i];
        let placement = match n.placement {
            _ if peer.is_some() => Placement::Foreign,
            Placement::Auto if uses_inproc => Placement::Thread,
            Placement::Auto => Placement::Process,
            p => p,
        };
        let peer_command = peer.as_ref().map(|m| m.command()).transpose()?;
        let implementation = peer
            .as_ref()
            .map(|m| m.label())
            .unwrap_or_else(|| crate::peers::CORE.to_string());
        for r in 0..n.replicas {
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
            let sockets = socks
                .iter()
                .map(|s| SockPlan {
                    kind: SocketType::parse(&s.kind).expect("checked"),
                    bind: s
                        .bind
                        .iter()
                        .map(|b| {
                            if b == "auto" {
                                auto_bind(case, abstract_ipc, host, local_addr.as_deref())
                            } else {
                                b.clone()
                            }
                        })
                        .collect(),
                    connect: Vec::new(),
                    options: {
                        let mut o = s.options.clone();
                        if o.security == Some(Mechanism::Curve) && o.curve_keys.is_none() {
                            o.curve_keys = keys.clone();
                        }
                        o
                    },
                })
                .collect();
            let rate = n.rate.or(case.rate);
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
                spec: NodeSpec {
                    name: replica_name(&n.name, n.replicas, r),
                    role: n.role,
                    sockets,
                    size: if n.role == Role::Sink {
                        sink_size
                    } else {
                        size
                    },
                    count,
                    warmup: case.warmup,
                    rate,
                    // Log lines are time-stamped each (a filtered reader gets only some
                    // of them, so a stamp every n-th line could miss every one it gets).
                    stamp_every: if rate.is_some() || !log_levels.is_empty() {
                        1
                    } else {
                        settings.stamp_every
                    },
                    timeout_ms: settings.timeout.as_millis() as u64,
                    stream_id: first_stream[i] + r,
                    streams: streams.clone(),
                    ends_itself: match n.role {
                        Role::Sink => !shared,
                        Role::Echo => n.replicas == 1 && !pings.is_empty(),
                        _ => false,
                    },
                    expect,
                    peers: peer_replicas(0),
                    subscriptions,
                    delimiter,
                    header: HeaderUse::Always,
                    echo: EchoMode::ZeroCopy,
                    full_rtt: false,
                    ticks: n.ticks.clone(),
                    frames: frames.clone(),
                    type_id,
                    log_levels: log_levels.clone(),
                    eot: None,
                    libzmq: zmq::library::choice(),
                    deadline_ms: Some((settings.case_timeout + DEADLINE_GRACE).as_millis() as u64),
                    send_offsets: Vec::new(),
                    send_offset_error_ns: Vec::new(),
                    io: if IoMode::applies_to(n.role) && n.ticks.is_none() {
                        n.io.or(t.params.io).unwrap_or_default()
                    } else {
                        IoMode::Blocking
                    },
                    swarm: (n.role == Role::Swarm).then(|| SwarmSpec {
                        process: r,
                        subs: n.subs.unwrap_or(1),
                        first_timeout_ms: n
                            .first_timeout_ms
                            .unwrap_or(settings.timeout.as_millis() as u64),
                        idle_ms: n.idle_ms.unwrap_or(settings.timeout.as_millis() as u64),
                        expect: n
                            .count
                            .is_some()
                            .then_some(count)
                            .or(streams.first().map(|(_, c)| *c)),
                        // A swarm connected to a raw publisher reads plain stream sockets.
                        raw: g
                            .peers((i, 0))
                            .iter()
                            .any(|p| t.nodes[p.0].ticks.as_ref().is_some_and(|tk| tk.raw)),
                    }),
                    peer_label: None,
                    keep_partial: false,
                    // A swarm reached by the case's publisher knows its size (a sub-cluster
                    // alone does not: it takes any).
                    max_frame: (n.role == Role::Swarm && !sizes.is_empty())
                        .then(|| sizes.iter().copied().max().unwrap_or(0)),
                    // A peer's source keeps its socket until the runner's stop, which
                    // comes once every receiver has reported.
                    quit: if peer.is_some() {
                        crate::roles::Quit::WaitForStop
                    } else {
                        Default::default()
                    },
                },
            });
        }
    }
    Ok(out)
}

/// The connect endpoints of a replica: literal ones as written; a node name becomes every
/// endpoint the named node's replicas bound on the socket the link chose (as reached from
/// elsewhere: a wildcard bind at its host's address).
fn resolve_connects(g: &Graph, rep: &mut Replica, bound: &BTreeMap<(usize, usize), Vec<String>>) {
    let n = &g.topology.nodes[rep.node];
    for (si, s) in n.all_sockets().iter().enumerate() {
        let mut eps = Vec::new();
        for (ci, c) in s.connect.iter().enumerate() {
            if c.contains("://") {
                eps.push(c.clone());
                continue;
            }
            if let Some(l) = g
                .links
                .iter()
                .find(|l| l.conn == (rep.node, si) && l.entry == ci)
            {
                let to = bound.get(&l.bind).cloned().unwrap_or_default();
                eps.extend(to);
            }
        }
        rep.spec.sockets[si].connect = eps;
    }
}

/// A repetition's outcome per replica.
pub type Reports = Vec<(Replica, RoleReport)>;

/// Each host's clock against the runner's (the runner's own: exactly 0), from the best
/// estimate among the nodes placed there.
fn host_clocks(reps: &[Replica], placed: &[Box<dyn Placed>]) -> BTreeMap<String, ClockEstimate> {
    let mut by_host: BTreeMap<String, ClockEstimate> = BTreeMap::new();
    for (r, p) in reps.iter().zip(placed) {
        if let (Some(h), Some(c)) = (&r.host, p.clock()) {
            let e = by_host.entry(h.name.clone()).or_insert(c);
            *e = sync::best_of([*e, c]).expect("two estimates");
        }
    }
    by_host
}

/// The clock of replica `r`'s host against the runner's: (offset, error) ns.
fn clock_of(r: &Replica, clocks: &BTreeMap<String, ClockEstimate>) -> (i64, u64) {
    r.host
        .as_ref()
        .and_then(|h| clocks.get(&h.name))
        .map(|c| (c.offset_ns, c.error_ns))
        .unwrap_or((0, 0))
}

/// For each replica, the offsets to add to the send stamps of the streams it receives from
/// sources on other hosts (stream id, ns): its clock minus the source's.
fn send_offsets(reps: &[Replica], placed: &[Box<dyn Placed>]) -> Vec<Vec<(u32, i64)>> {
    let clocks = host_clocks(reps, placed);
    let source_clock: BTreeMap<u32, (Option<String>, i64)> = reps
        .iter()
        .filter(|r| r.spec.role == Role::Source)
        .map(|r| {
            (
                r.spec.stream_id,
                (
                    r.host.as_ref().map(|h| h.name.clone()),
                    clock_of(r, &clocks).0,
                ),
            )
        })
        .collect();
    reps.iter()
        .map(|r| {
            if !matches!(r.spec.role, Role::Sink | Role::Swarm) {
                return Vec::new();
            }
            let mine = r.host.as_ref().map(|h| h.name.clone());
            let (off, _) = clock_of(r, &clocks);
            let ids: Vec<u32> = if r.spec.streams.is_empty() {
                source_clock.keys().copied().collect()
            } else {
                r.spec.streams.iter().map(|(id, _)| *id).collect()
            };
            ids.into_iter()
                .filter_map(|id| {
                    let (h, src) = source_clock.get(&id)?;
                    (*h != mine).then_some((id, off - src))
                })
                .collect()
        })
        .collect()
}

/// The bound on the one-way times a receiver measured from streams of other hosts: the two
/// clocks' errors over the case (None: every stream it got was sent on its own host).
pub fn one_way_error(reps: &[Replica], placed: &[Box<dyn Placed>], i: usize) -> Option<u64> {
    let clocks = host_clocks(reps, placed);
    let r = &reps[i];
    let mine = r.host.as_ref().map(|h| h.name.clone());
    let (_, err) = clock_of(r, &clocks);
    reps.iter()
        .filter(|s| s.spec.role == Role::Source)
        .filter(|s| s.host.as_ref().map(|h| h.name.clone()) != mine)
        .filter(|s| {
            r.spec.streams.is_empty()
                || r.spec.streams.iter().any(|(id, _)| *id == s.spec.stream_id)
        })
        .map(|s| err + clock_of(s, &clocks).1)
        .max()
}

/// Runs one repetition: place, barrier, run, end in order, collect.
pub fn repetition(g: &Graph, case: &CaseSpec, settings: &Settings) -> Result<Reports> {
    repetition_with(g, case, settings, &mut || {})
}

/// [`repetition`], calling `placed` once every replica is ready, just before the start.
pub fn repetition_with(
    g: &Graph,
    case: &CaseSpec,
    settings: &Settings,
    placed_all: &mut dyn FnMut(),
) -> Result<Reports> {
    let (reports, failed) = run_repetition(g, case, settings, placed_all, false)?;
    debug_assert!(failed.is_empty());
    Ok(reports)
}

/// A replica that failed without ending the repetition: its name and why.
pub type Failure = (String, NodeFailure);

/// [`repetition_with`] for a fan-out: a swarm that fails, dies or overruns is stopped and
/// named, and the other replicas are still reported.
pub fn repetition_tolerant(
    g: &Graph,
    case: &CaseSpec,
    settings: &Settings,
    placed_all: &mut dyn FnMut(),
) -> Result<(Reports, Vec<Failure>)> {
    run_repetition(g, case, settings, placed_all, true)
}

fn run_repetition(
    g: &Graph,
    case: &CaseSpec,
    settings: &Settings,
    placed_all: &mut dyn FnMut(),
    tolerant: bool,
) -> Result<(Reports, Vec<Failure>)> {
    let ctx = zmq::Context::new();
    let deadline = Instant::now() + settings.case_timeout;
    let mut reps = replicas(g, case, settings)?;
    // Streams of flows: their end-of-transmission channels, bound before the sinks start.
    let stream_of = |r: &Replica| g.topology.nodes[r.node].stream.clone();
    let mut sinks: BTreeMap<String, u32> = BTreeMap::new();
    for r in reps.iter().filter(|r| r.spec.role == Role::Sink) {
        if let Some(st) = stream_of(r) {
            *sinks.entry(st).or_default() += 1;
        }
    }
    // A stream whose sinks are on other hosts has its channel on the runner's address.
    let remote_sink = reps
        .iter()
        .any(|r| r.spec.role == Role::Sink && r.host.is_some() && stream_of(r).is_some());
    let eot_addr = if remote_sink {
        let hosts = case_hosts(case, settings)?;
        Some(hosts.local().map(|h| h.addr.clone()).ok_or_else(|| {
            Error::invalid(
                &format!("topology {}: stream", case.origin),
                "(sinks on other hosts)",
                "a stream's end of transmission goes out from the runner's host, which needs an address the sinks reach: add it to the hosts file with local = true and addr = \"IP\" (docs/hosts.md)",
            )
        })?)
    } else {
        None
    };
    let mut channels = super::eot::open(&ctx, &sinks, eot_addr.as_deref())?;
    for r in reps.iter_mut().filter(|r| r.spec.role == Role::Sink) {
        if let Some(c) = channels
            .iter()
            .find(|c| Some(&c.name) == stream_of(r).as_ref())
        {
            r.spec.eot = Some(c.endpoint().to_string());
        }
    }
    // Where a node of the runner's host is reached from the others (its wildcard binds).
    let local_reach = if reps.iter().any(|r| r.host.is_some()) {
        case_hosts(case, settings)?.local().map(|h| h.addr.clone())
    } else {
        None
    };
    let mut bound: BTreeMap<(usize, usize), Vec<String>> = BTreeMap::new();
    let mut placed: Vec<Box<dyn Placed>> = Vec::new();
    for rep in reps.iter_mut() {
        resolve_connects(g, rep, &bound);
        let mut p = match &rep.launch {
            Launch::Thread => on_thread(&ctx, rep.spec.clone()),
            Launch::Process(l) => launched(l, rep.host.as_ref(), &rep.spec)?,
        };
        let eps = match p.next(deadline)? {
            Event::Ready(eps) => eps,
            Event::Done(r) => {
                return Err(match *r {
                    Err(f) => f.into(),
                    Ok(_) => Error::Protocol(format!("{} ended before it was ready", p.name())),
                })
            }
            Event::Sent => {
                return Err(Error::Protocol(format!(
                    "{} sent before it was ready",
                    p.name()
                )))
            }
        };
        let mut at = 0;
        let addr = rep
            .host
            .as_ref()
            .map(|h| h.addr.as_str())
            .or(local_reach.as_deref());
        for (si, s) in rep.spec.sockets.iter().enumerate() {
            let k = s.bind.len();
            bound.entry((rep.node, si)).or_default().extend(
                eps.iter()
                    .skip(at)
                    .take(k)
                    .map(|e| crate::net::connect_endpoint_on(e, addr)),
            );
            at += k;
        }
        placed.push(p);
    }
    // Streams sent on one host and received on another: each receiver adds the difference
    // of the two clocks to the stream's send stamps.
    let offsets = send_offsets(&reps, &placed);
    for c in channels.iter_mut() {
        c.wait_subscribers(settings.timeout)?;
    }
    placed_all();
    for (i, p) in placed.iter_mut().enumerate() {
        p.send(ToNode::Start {
            v: VERSION,
            send_offsets: offsets[i].clone(),
        })?;
    }
    let n = reps.len();
    let mut w = Watch {
        placed,
        done: vec![None; n],
        sent: vec![false; n],
        deadline,
        failed: false,
        tolerated: reps
            .iter()
            .map(|r| tolerant && r.spec.role == Role::Swarm)
            .collect(),
        interruptible: !tolerant,
    };
    // 1. Sources and pings send to their end.
    let mut actives = false;
    for (i, rep) in reps.iter().enumerate() {
        if rep.spec.role.is_active() {
            actives = true;
            w.wait(i, true);
        }
    }
    // When the stream is over (the sources are done, or, without sources here, the first
    // swarm has finished), every swarm has its idle time and a grace to finish too: one that
    // is frozen or hung is stopped then, bounded by the job's own length.
    let swarms: Vec<(usize, Duration)> = reps
        .iter()
        .enumerate()
        .filter(|(_, r)| r.spec.role == Role::Swarm)
        .map(|(i, r)| {
            let idle = r.spec.swarm.as_ref().map(|s| s.idle_ms).unwrap_or(0);
            (i, Duration::from_millis(idle))
        })
        .collect();
    w.wait_swarms(&swarms, actives.then(Instant::now));
    // Every source has sent: each stream's end of transmission goes out on its channel.
    if !w.failed {
        for c in channels.iter_mut() {
            let flows: Vec<(u32, u64)> = reps
                .iter()
                .filter(|r| r.spec.role == Role::Source && stream_of(r).as_ref() == Some(&c.name))
                .map(|r| (r.spec.stream_id, r.spec.count))
                .collect();
            c.publish(&flows)?;
        }
    }
    // 2. Sinks, echoes and proxies that end by themselves are waited for, the others told
    //    to stop (and drain) first. A sink that ends by itself is told too: it takes the
    //    stop only after a quiet spell, so a stream whose end mark was dropped (a PUB at
    //    its high-water mark) ends with what arrived instead of waiting out the whole
    //    timeout.
    for r in [Role::Sink, Role::Echo, Role::Proxy] {
        for (i, rep) in reps.iter().enumerate() {
            if rep.spec.role != r || w.done[i].is_some() {
                continue;
            }
            if !rep.spec.ends_itself || r == Role::Sink {
                w.stop(i);
            }
            w.wait(i, false);
        }
    }
    for (i, rep) in reps.iter().enumerate() {
        if rep.spec.role == Role::Swarm && w.done[i].is_none() {
            w.stop(i);
        }
    }
    // 3. The senders' final reports (after their receivers hung up); a source that holds
    //    its socket until told (a peer's) is told now.
    for (i, rep) in reps.iter().enumerate() {
        if rep.spec.role == Role::Source
            && rep.spec.quit == crate::roles::Quit::WaitForStop
            && w.done[i].is_none()
        {
            w.stop(i);
        }
    }
    for i in 0..n {
        w.wait(i, false);
    }
    let Watch {
        mut placed,
        done,
        tolerated,
        ..
    } = w;
    let mut first_err: Option<Error> = None;
    let mut out = Vec::new();
    let mut failures = Vec::new();
    for (i, d) in done.into_iter().enumerate() {
        match d {
            Some(Ok(mut r)) => {
                if matches!(reps[i].spec.role, Role::Sink | Role::Swarm) {
                    r.clock_error_ns = one_way_error(&reps, &placed, i);
                    // The bound over the whole case goes with the converted figures.
                    if let Some(e) = r.clock_error_ns {
                        let bound = |h: &mut crate::stats::LatencyHistogram| {
                            let mut c = *h.clock();
                            if c.converted > 0 {
                                c.error_ns = Some(c.error_ns.unwrap_or(0).max(e));
                                h.set_clock(c);
                            }
                        };
                        r.latency.iter_mut().for_each(bound);
                        r.stream_latency.iter_mut().for_each(|(_, h)| bound(h));
                        if let Some(sw) = r.swarm.as_mut() {
                            bound(&mut sw.latency);
                        }
                    }
                }
                if let Some(sw) = r.swarm.as_mut() {
                    sw.host = reps[i].host.as_ref().map(|h| h.name.clone());
                    sw.clock_error_ns = r.clock_error_ns;
                }
                out.push((reps[i].clone(), r))
            }
            // Cut off by another replica's failure.
            None => placed[i].kill(),
            Some(Err(e)) if tolerated[i] => {
                placed[i].kill();
                failures.push((reps[i].spec.name.clone(), e));
            }
            Some(Err(e)) => {
                placed[i].kill();
                if first_err.is_none() {
                    first_err = Some(e.into());
                }
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok((out, failures)),
    }
}
