//! The runner: turns a plan of cases into results. Every case is a topology with its
//! parameters; for each repetition the engine places its nodes (threads or child processes,
//! per node), starts them behind a barrier and collects their reports; the runner repeats,
//! merges nodes and edges, and summarises with medians, confidence intervals and warnings.
//! A node that dies or hangs fails its case with the reason; the suite goes on.

pub mod control;
pub mod engine;
pub mod env;
mod eot;
pub mod floor;
pub mod hosts;
pub mod launch;
pub mod merge;
pub mod place;
pub mod plan;
pub mod remote;
pub mod replicas;
pub mod ship;
pub mod sync;
mod watch;

use crate::endpoint::Transport;
use crate::model::{
    CaseResult, CaseSummary, Estimate, Kind, LoopMode, Repetition, RunResult, SCHEMA_VERSION,
};
use crate::stats::{estimate, loss_causes, Cause, Facts, SenderFacts};
use crate::topology::check::{check, Graph};
use crate::topology::{Latency, StreamPart, Topology};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

/// One case to run: a topology and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseSpec {
    /// The topology (a built-in shape, or a user's file).
    pub topology: Topology,
    /// Where the topology came from, for errors (a file path or `built-in NAME`).
    pub origin: String,
    /// The swept values that made this case, beyond size, transport and rate.
    pub label: String,
    /// Transport.
    pub transport: Transport,
    /// Payload bytes.
    pub size: usize,
    /// Measured round trips or messages per repetition.
    pub count: u64,
    /// Unmeasured round trips or messages before each repetition.
    pub warmup: u64,
    /// Repetitions.
    pub repetitions: u32,
    /// Open loop at this many msg/s (throughput patterns only).
    pub rate: Option<f64>,
}

impl CaseSpec {
    /// The pattern column: the topology's name, with the swept node values if any.
    pub fn pattern(&self) -> String {
        if self.label.is_empty() {
            self.topology.name.clone()
        } else {
            format!("{}[{}]", self.topology.name, self.label)
        }
    }

    /// The case's stable id.
    pub fn id(&self) -> String {
        CaseResult::make_id(
            self.kind(),
            &self.pattern(),
            self.transport,
            self.measured_size(),
            self.rate,
        )
    }

    /// The message size the case measures: its sources' own `size` where every source
    /// gives the same one (a node's size overrides the case's), else the case's.
    pub fn measured_size(&self) -> usize {
        let mut own = None;
        for n in self
            .topology
            .nodes
            .iter()
            .filter(|n| n.role.info().stream == StreamPart::Sends)
        {
            let size = crate::topology::value_u64(&n.size, "size", |w, s| {
                crate::parse::parse_size(w, s).map(|x| x as u64)
            })
            .ok()
            .flatten();
            match (size, own) {
                (None, _) => return self.size,
                (Some(s), None) => own = Some(s),
                (Some(s), Some(o)) if s != o => return self.size,
                _ => {}
            }
        }
        own.map_or(self.size, |s| s as usize)
    }

    /// The hosts of the tcp endpoints the case binds and connects to, in node order:
    /// `auto` binds on tcp are `127.0.0.1`; connects that name a node reach its binds.
    pub fn tcp_hosts(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in self.topology.nodes.iter().flat_map(|n| n.all_sockets()) {
            for b in &s.bind {
                if b == "auto" {
                    if self.transport == Transport::Tcp {
                        out.push("127.0.0.1".to_string());
                    }
                } else if let Some(h) = crate::net::iface::tcp_host(b) {
                    out.push(h);
                }
            }
            out.extend(
                s.connect
                    .iter()
                    .filter_map(|c| crate::net::iface::tcp_host(c)),
            );
        }
        out
    }

    /// Whether the topology measures round trips (it has a ping).
    pub fn is_latency(&self) -> bool {
        self.topology
            .nodes
            .iter()
            .any(|n| n.role.info().latency == Latency::RoundTrip)
    }

    /// Latency or throughput.
    pub fn kind(&self) -> Kind {
        if self.is_latency() {
            Kind::Latency
        } else {
            Kind::Throughput
        }
    }
}

/// Settings that hold for every case of a run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Longest wait for a peer, per message.
    pub timeout: Duration,
    /// Longest a repetition may take before its roles are stopped.
    pub case_timeout: Duration,
    /// The binary to re-execute for child roles.
    pub exe: PathBuf,
    /// Time-stamp every n-th message of a full-speed stream.
    pub stamp_every: u64,
    /// Measure the raw-socket floor of latency cases.
    pub floor: bool,
    /// The hosts nodes may be placed on (`--hosts FILE`); a topology may add its own.
    pub hosts: hosts::Hosts,
}

/// What the runner tells whoever watches it.
pub trait Observer {
    /// A case is about to run (`index` from 0 of `total`).
    fn case_started(&mut self, index: usize, total: usize, spec: &CaseSpec);
    /// A repetition of the current case is about to run.
    fn repetition(&mut self, _rep: u32, _of: u32) {}
    /// A case is done (stored at once by the caller).
    fn case_done(&mut self, result: &CaseResult);
}

/// The zmqperf executable to run on `host`: its `zmqperf` if the hosts file names one, a
/// copy of this build shipped there (`ship = true`), else this executable's own path (the
/// same path there: a shared file system, or a namespace of this machine).
pub fn remote_exe(host: &hosts::Host) -> crate::error::Result<String> {
    let exe = std::env::current_exe().map_err(|e| crate::error::Error::Io {
        op: "finding the zmqperf binary".into(),
        source: e,
    })?;
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

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The signal that interrupted the run (0: none, or [`interrupt`] called directly).
static SIGNAL: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Marks the run as interrupted (from a signal handler: only an atomic store).
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether the run was interrupted.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The signals that end a measurement cleanly: Ctrl-C, and what `timeout`, systemd, CI
/// cancellations (SIGTERM) and a closed terminal (SIGHUP) send.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The write end of the pipe that tells the waker thread a stop signal came (-1: none).
static WAKE_FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);
/// The threads running a role now, which the waker interrupts out of blocking calls.
static ROLE_THREADS: std::sync::Mutex<Vec<libc::pthread_t>> = std::sync::Mutex::new(Vec::new());
/// The signal the waker sends to role threads: its handler does nothing, and without
/// SA_RESTART a blocking ZeroMQ call it lands in returns EINTR.
const WAKE_SIGNAL: libc::c_int = libc::SIGURG;

extern "C" fn on_stop_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
    interrupt();
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: write(2) is async-signal-safe; the byte is ours.
        unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) };
    }
}

extern "C" fn on_wake(_: libc::c_int) {}

/// A role's thread, registered for as long as the guard lives: a stop signal (which the
/// kernel gives to any one thread of the process) wakes it out of a blocking ZeroMQ call,
/// so that it ends with what it measured instead of waiting out its timeout.
pub struct WokenOnStop(libc::pthread_t);

impl WokenOnStop {
    /// Registers the calling thread.
    pub fn register() -> WokenOnStop {
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() };
        ROLE_THREADS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(me);
        WokenOnStop(me)
    }
}

impl Drop for WokenOnStop {
    fn drop(&mut self) {
        let mut v = ROLE_THREADS.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = v.iter().position(|t| *t == self.0) {
            v.swap_remove(i);
        }
    }
}

/// The waker: blocks until a stop signal writes to its pipe, then interrupts every role
/// thread a few times (a thread between two calls when the first one lands is caught by
/// the next), 50 ms apart, at most 20 times.
fn start_waker() {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    // SAFETY: a handler that does nothing; the struct is ours and initialised.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_wake as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(WAKE_SIGNAL, &sa, std::ptr::null_mut());
    }
    WAKE_FD.store(fds[1], Ordering::SeqCst);
    let read_fd = fds[0];
    let _ = std::thread::Builder::new()
        .name("stop-waker".into())
        .spawn(move || {
            let mut b = [0u8; 1];
            // SAFETY: reading one byte into our buffer from our pipe.
            while unsafe { libc::read(read_fd, b.as_mut_ptr().cast(), 1) } < 0 {}
            for _ in 0..20 {
                {
                    // Held while signalling: a thread removes itself under this lock
                    // before it ends, so every one signalled is alive.
                    let threads = ROLE_THREADS.lock().unwrap_or_else(|p| p.into_inner());
                    if threads.is_empty() {
                        break;
                    }
                    for &t in threads.iter() {
                        // SAFETY: the thread is alive (above); the handler does nothing.
                        unsafe { libc::pthread_kill(t, WAKE_SIGNAL) };
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        });
}

/// Makes SIGINT, SIGTERM and SIGHUP end the run cleanly: what was measured is kept,
/// printed and recorded, and the process exits with 128 + the signal. A second signal of
/// the same kind ends the process at once (the handler is reset after the first).
pub fn catch_signals() {
    static WAKER: std::sync::Once = std::sync::Once::new();
    WAKER.call_once(start_waker);
    for sig in STOP_SIGNALS {
        // SAFETY: the handler only stores to atomics, which is async-signal-safe; the
        // struct is ours and fully initialised.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The name of the signal that interrupted the run ("SIGTERM"), or "Ctrl-C" when none is
/// known.
pub fn interrupted_by() -> &'static str {
    match SIGNAL.load(Ordering::SeqCst) {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT (Ctrl-C)",
        _ => "Ctrl-C",
    }
}

/// The exit code of an interrupted run: 128 + the signal, as shells report it (130 when
/// none is known).
pub fn interrupted_code() -> i32 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => 130,
        s => 128 + s,
    }
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
        run_id: env::run_id(now),
        started_at: env::rfc3339(now),
        finished_at: None,
        status: "running".into(),
        command,
        workload,
        environment: env::environment(),
        cases: Vec::new(),
        findings: Vec::new(),
        imported: None,
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
            "interrupted"
        } else {
            "complete"
        },
    );
}

/// Ends `run` with `status`: its end time, and the machines of the hosts its nodes ran on
/// (as they described themselves) in `environment.hosts`.
pub fn finish(run: &mut RunResult, status: &str) {
    run.status = status.into();
    run.finished_at = Some(env::rfc3339(SystemTime::now()));
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
                Transport::Inproc => None,
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
        wall_s: started.elapsed().as_secs_f64(),
        nodes,
        edges,
        sender: Some(sender_facts(&spec.topology)),
    }
}

/// What a one-way figure across hosts is worth: its clocks' error bound beside it (the
/// clock check of its histogram says when the bound is too coarse for the figure).
fn clock_notes(edges: &[crate::model::EdgeResult]) -> Vec<String> {
    let mut out = Vec::new();
    for e in edges {
        let (Some(err), Some(l)) = (e.clock_error_ns, &e.latency) else {
            continue;
        };
        out.push(format!(
            "one-way {} -> {} across hosts: p50 {:.1} us, mean {:.1} us, on one clock to within ±{:.1} us (the two hosts' clock offsets, measured over the control channel before the start and after the report)",
            e.from,
            e.to,
            l.p50_ns as f64 / 1e3,
            l.mean_ns / 1e3,
            err as f64 / 1e3
        ));
    }
    out
}

fn est(reps: &[Repetition], f: impl Fn(&Repetition) -> Option<f64>) -> Option<Estimate> {
    let xs: Vec<f64> = reps.iter().filter_map(f).collect();
    estimate(&xs)
}

/// Medians with confidence intervals over the repetitions.
pub fn summarise(reps: &[Repetition]) -> CaseSummary {
    let us = |ns: f64| ns / 1000.0;
    CaseSummary {
        latency_us: est(reps, |r| {
            r.latency.filter(|l| l.count > 0).map(|l| us(l.mean_ns))
        }),
        p50_us: est(reps, |r| {
            r.latency
                .filter(|l| l.count > 0)
                .map(|l| us(l.p50_ns as f64))
        }),
        p99_us: est(reps, |r| {
            r.latency
                .filter(|l| l.count > 0)
                .map(|l| us(l.p99_ns as f64))
        }),
        msgs_per_sec: est(reps, |r| r.delivered.map(|t| t.msgs_per_sec())),
        mbit_per_sec: est(reps, |r| r.delivered.map(|t| t.mbit_per_sec())),
        send_msgs_per_sec: est(reps, |r| r.send.map(|t| t.msgs_per_sec())),
        send_delay_p50_us: est(reps, |r| r.send_delay.map(|d| us(d.p50_ns as f64))),
        lost: reps
            .iter()
            .filter_map(|r| r.loss.as_ref())
            .map(|l| l.lost)
            .sum(),
        duplicated: reps
            .iter()
            .filter_map(|r| r.loss.as_ref())
            .map(|l| l.duplicated)
            .sum(),
        reordered: reps
            .iter()
            .filter_map(|r| r.loss.as_ref())
            .map(|l| l.reordered)
            .sum(),
    }
}

/// Spread above this (percent of the median) makes a result suspect.
pub const SPREAD_WARN_PCT: f64 = 10.0;
/// A repetition shorter than this is too short to trust.
pub const SHORT_NS: u64 = 20_000_000;

fn warnings(spec: &CaseSpec, reps: &[Repetition], s: &CaseSummary) -> Vec<String> {
    let mut w = Vec::new();
    let main = match spec.kind() {
        Kind::Latency => s.latency_us.map(|e| ("latency", e)),
        Kind::Throughput => s.msgs_per_sec.map(|e| ("msg/s", e)),
    };
    if let Some((what, e)) = main {
        if e.n > 1 && e.spread_pct > SPREAD_WARN_PCT {
            w.push(format!(
                "high spread: {what} varies by {:.0}% between repetitions (> {SPREAD_WARN_PCT:.0}%); run more repetitions or on a quieter machine",
                e.spread_pct
            ));
        }
    }
    let span = |r: &Repetition| match spec.kind() {
        Kind::Latency => r.latency.map(|l| (l.mean_ns * 2.0 * l.count as f64) as u64),
        Kind::Throughput => r.delivered.map(|t| t.elapsed_ns()),
    };
    if let Some(min) = reps.iter().filter_map(span).min() {
        if min < SHORT_NS {
            w.push(format!(
                "too short: a repetition measured only {:.1} ms; raise --count for steadier figures",
                min as f64 / 1e6
            ));
        }
    }
    if let (Some(rate), Some(got)) = (spec.rate, s.msgs_per_sec) {
        if got.median < rate * 0.95 {
            w.push(format!(
                "rate not reached: asked for {rate:.0} msg/s, delivered {:.0} msg/s",
                got.median
            ));
        }
    }
    if s.lost > 0 || s.duplicated > 0 || s.reordered > 0 {
        let mut at = (0, 0, 0);
        for l in reps.iter().filter_map(|r| r.loss.as_ref()) {
            at.0 += l.lost_at_start;
            at.1 += l.lost_in_middle;
            at.2 += l.lost_at_end;
        }
        w.push(format!(
            "delivery: {} lost (start {}, middle {}, end {}), {} duplicated, {} reordered",
            s.lost, at.0, at.1, at.2, s.duplicated, s.reordered
        ));
        if s.lost > 0 {
            let mut total = crate::stats::LossSummary::default();
            for l in reps.iter().filter_map(|r| r.loss.as_ref()) {
                total.add(l);
            }
            let causes = loss_causes(&total, &facts(&spec.topology), |_, cause| {
                match cause {
                    Cause::SlowJoiner => Some("let the PUB wait for its subscribers (remove `wait_subscriptions = false`), or start the subscribers first".into()),
                    Cause::HighWaterMark => Some("give the PUB xpub_nodrop = true (an XPUB), a larger sndhwm, or a rate".into()),
                    _ => None,
                }
            });
            w.push(format!("cause: {causes}"));
        }
    }
    w
}

/// What the senders of the topology do, for the causes of loss: whether one publishes
/// without flow control, whether every publisher waits for its subscriptions, and that
/// sources keep their sockets until the receivers hang up.
pub fn sender_facts(t: &crate::topology::Topology) -> SenderFacts {
    let publishers = t.nodes.iter().filter(|n| n.role.info().publishes.is_some());
    let waits = publishers
        .clone()
        .all(|n| n.wait_subscriptions != Some(false));
    SenderFacts {
        drops_at_hwm: drops_at_hwm(t),
        waited_for_subscribers: waits,
        waited_at_end: true,
    }
}

/// The facts the causes of a case's loss are decided from: its senders' (all known to the
/// runner) and, when every receiver is a SUB (or XSUB), that.
pub fn facts(t: &crate::topology::Topology) -> Facts {
    let receivers: Vec<String> = t
        .nodes
        .iter()
        .filter(|n| n.role.info().stream == StreamPart::Receives)
        .filter_map(|n| n.all_sockets().first().map(|s| s.kind.to_ascii_uppercase()))
        .collect();
    let subs = !receivers.is_empty() && receivers.iter().all(|k| k == "SUB" || k == "XSUB");
    Facts {
        receiver: subs.then_some(crate::topology::SocketType::Sub),
        ..Facts::of_run(sender_facts(t))
    }
}

/// Whether a source (or a proxy's sending side) of the topology publishes without flow
/// control (PUB, or XPUB without xpub_nodrop), so that loss is messages dropped at its
/// high-water mark.
fn drops_at_hwm(t: &crate::topology::Topology) -> bool {
    t.nodes.iter().any(|n| {
        let out = n
            .role
            .info()
            .publishes
            .and_then(|i| n.all_sockets().get(i).copied());
        out.is_some_and(|s| {
            let kind = s.kind.to_ascii_uppercase();
            kind == "PUB" || (kind == "XPUB" && s.options.xpub_nodrop != Some(true))
        })
    })
}
