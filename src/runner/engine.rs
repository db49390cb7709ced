//! One repetition of a case: the topology's replicas (runner/replicas.rs) placed in
//! dependency order (each connects to endpoints already bound), started behind
//! one barrier, ended in order (sources and pings end by themselves; sinks, echoes and
//! proxies that cannot know their end are stopped once the senders are done), and their
//! reports collected.

use super::case::{CaseSpec, Settings};
use super::place::{launched, on_thread, Event, Placed};
pub(crate) use super::replicas::node_peer;
pub use super::replicas::{case_hosts, replicas, Replica};
use super::sync::{self, ClockEstimate};
use super::watch::Watch;
use crate::error::{Error, NodeFailure, Result};
use crate::roles::RoleReport;
use crate::runner::control::{ToNode, VERSION};
use crate::runner::launch::Launch;
use crate::topology::check::Graph;
use crate::topology::{Ends, StreamPart};
use crate::zmq;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

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
        .filter(|r| r.spec.role.info().stream == StreamPart::Sends)
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
            if !r.spec.role.info().ends_flows() {
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
        .filter(|s| s.spec.role.info().stream == StreamPart::Sends)
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
    let mut channels = open_eot(&ctx, g, &mut reps, case, settings)?;
    let placed = place_all(&ctx, g, &mut reps, case, settings, deadline)?;
    // Streams sent on one host and received on another: each receiver adds the difference
    // of the two clocks to the stream's send stamps.
    let offsets = send_offsets(&reps, &placed);
    for c in channels.iter_mut() {
        c.wait_subscribers(settings.timeout)?;
    }
    placed_all();
    let mut placed = placed;
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
            .map(|r| tolerant && r.spec.role.info().stream == StreamPart::Subscribes)
            .collect(),
        interruptible: !tolerant,
    };
    end_in_order(&mut w, g, &reps, &mut channels)?;
    collect(w, &reps)
}

/// The stream of replica `r`'s node, if it belongs to one.
fn stream_of(g: &Graph, r: &Replica) -> Option<String> {
    g.topology.nodes[r.node].stream.clone()
}

/// Whether replica `r` receives streams as a sink does (its end can come on a channel).
fn receives(r: &Replica) -> bool {
    r.spec.role.info().stream == StreamPart::Receives
}

/// The streams' end-of-transmission channels, bound before the sinks start; each sink in a
/// stream gets its channel's endpoint.
fn open_eot(
    ctx: &zmq::Context,
    g: &Graph,
    reps: &mut [Replica],
    case: &CaseSpec,
    settings: &Settings,
) -> Result<Vec<crate::roles::eot::Channel>> {
    let mut sinks: BTreeMap<String, u32> = BTreeMap::new();
    for r in reps.iter().filter(|r| receives(r)) {
        if let Some(st) = stream_of(g, r) {
            *sinks.entry(st).or_default() += 1;
        }
    }
    // A stream whose sinks are on other hosts has its channel on the runner's address.
    let remote_sink = reps
        .iter()
        .any(|r| receives(r) && r.host.is_some() && stream_of(g, r).is_some());
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
    let channels = crate::roles::eot::open(ctx, &sinks, eot_addr.as_deref())?;
    for r in reps.iter_mut().filter(|r| receives(r)) {
        if let Some(c) = channels
            .iter()
            .find(|c| Some(&c.name) == stream_of(g, r).as_ref())
        {
            r.spec.eot = Some(c.endpoint().to_string());
        }
    }
    Ok(channels)
}

/// Places every replica in order, each connecting to the endpoints the ones before bound,
/// and waits for each to be ready.
fn place_all(
    ctx: &zmq::Context,
    g: &Graph,
    reps: &mut [Replica],
    case: &CaseSpec,
    settings: &Settings,
    deadline: Instant,
) -> Result<Vec<Box<dyn Placed>>> {
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
            Launch::Thread => on_thread(ctx, rep.spec.clone()),
            Launch::Process(l) => launched(l, rep.host.as_ref(), &rep.spec)?,
        };
        let eps = match p.next(deadline)? {
            Event::Ready(eps) => eps,
            Event::Done(r) => {
                return Err(match *r {
                    Err(f) => f.into(),
                    Ok(_) => Error::NodeGone(format!("{} ended before it was ready", p.name())),
                })
            }
            Event::Sent => {
                return Err(Error::NodeGone(format!(
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
    Ok(placed)
}

/// Ends the replicas in their roles' order: those that end by themselves first, then the
/// swarms' idle time, the streams' ends of transmission, the roles the runner stops (by
/// rank), the swarms, and last the senders' final reports.
fn end_in_order(
    w: &mut Watch,
    g: &Graph,
    reps: &[Replica],
    channels: &mut [crate::roles::eot::Channel],
) -> Result<()> {
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
    let idle = |r: &Replica| r.spec.role.info().ends == Ends::Idle;
    let swarms: Vec<(usize, Duration)> = reps
        .iter()
        .enumerate()
        .filter(|(_, r)| idle(r))
        .map(|(i, r)| {
            let idle = r.spec.swarm.as_ref().map(|s| s.idle_ms).unwrap_or(0);
            (i, Duration::from_millis(idle))
        })
        .collect();
    w.wait_swarms(&swarms, actives.then(Instant::now));
    let sends = |r: &Replica| r.spec.role.info().stream == StreamPart::Sends;
    // Every source has sent: each stream's end of transmission goes out on its channel.
    if !w.failed {
        for c in channels.iter_mut() {
            let flows: Vec<(u32, u64)> = reps
                .iter()
                .filter(|r| sends(r) && stream_of(g, r).as_ref() == Some(&c.name))
                .map(|r| (r.spec.stream_id, r.spec.count))
                .collect();
            c.publish(&flows)?;
        }
    }
    // 2. Sinks, echoes and proxies (in their roles' rank) that end by themselves are
    //    waited for, the others told to stop (and drain) first. A sink that ends by itself
    //    is told too: it takes the stop only after a quiet spell, so a stream whose end mark
    //    was dropped (a PUB at its high-water mark) ends with what arrived instead of
    //    waiting out the whole timeout.
    let mut stopped: Vec<(u8, usize, bool)> = reps
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match r.spec.role.info().ends {
            Ends::Stopped { rank, always_stop } => Some((rank, i, always_stop)),
            _ => None,
        })
        .collect();
    stopped.sort();
    for (_, i, always_stop) in stopped {
        if w.done[i].is_some() {
            continue;
        }
        if !reps[i].spec.ends_itself || always_stop {
            w.stop(i);
        }
        w.wait(i, false);
    }
    for (i, rep) in reps.iter().enumerate() {
        if idle(rep) && w.done[i].is_none() {
            w.stop(i);
        }
    }
    // 3. The senders' final reports (after their receivers hung up); a source that holds
    //    its socket until told (a peer's) is told now.
    for (i, rep) in reps.iter().enumerate() {
        if sends(rep) && rep.spec.quit == crate::roles::Quit::WaitForStop && w.done[i].is_none() {
            w.stop(i);
        }
    }
    for i in 0..reps.len() {
        w.wait(i, false);
    }
    Ok(())
}

/// The reports of a repetition's replicas, with the bound of the one-way times of each
/// receiver of streams from other hosts; replicas cut off are killed, and a tolerated
/// failure is named.
fn collect(w: Watch, reps: &[Replica]) -> Result<(Reports, Vec<Failure>)> {
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
                if reps[i].spec.role.info().ends_flows() {
                    r.clock_error_ns = one_way_error(reps, &placed, i);
                    bound_clock_error(&mut r);
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

/// The bound over the whole case goes with the converted figures of a receiver.
fn bound_clock_error(r: &mut RoleReport) {
    let Some(e) = r.clock_error_ns else { return };
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
