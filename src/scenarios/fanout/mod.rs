//! Fan-out: one publisher, thousands of subscribers spread over several processes, every
//! message stamped at publish. Reports delivery per subscriber and in total, and the
//! latency over all subscribers (what the Node.js harness of seed 002 measured, without its
//! slow joiners, drops and guesswork).
//!
//! - [`publish`]: the publisher on its own (`zmqperf pub`).
//! - [`sub_cluster`]: the subscriber processes on their own (`zmqperf sub-cluster`).
//! - [`fanout`]: both together on one host (`zmqperf fanout`).
//! - [`floor`]: the same fan-out over plain stream sockets (`zmqperf fanout --floor`).
//!
//! The fan-out is a topology (`run`): the publisher and the swarm nodes (each a process of
//! SUB sockets, `crate::roles::swarm`) are run by the engine like any other topology. A
//! swarm process is this binary re-executed with the hidden `__node` command
//! ([`crate::runner::place`]), or a peer in another language; it talks to the runner in the
//! control protocol's lines on its stdin and stdout, never on the measured sockets.

mod floor;
mod record;
mod run;
mod summary;
mod ticks;

pub use crate::net::{connect_endpoint, limits};
pub use crate::roles::publisher::{dur_ns, PubConfig, PubResult, Publisher};
pub use crate::roles::swarm::{ChildReport, ProcessUsage, StopReason, SubReport, SwarmSpec};
pub use floor::{FanoutFloor, FloorFigures, FloorRatios};
pub use record::to_case;
pub use summary::{merge, FanoutReport, ProcessSummary, RateSpread};
pub use ticks::LiveTicks;

use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use limits::FdNeed;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Default idle time of a subscriber process: it stops when nothing arrived for this long
/// after the first message (the end of the stream normally stops it first).
pub const DEFAULT_IDLE: Duration = Duration::from_secs(10);

/// Most subscriber processes one run starts: as many as copies of one node.
pub const MAX_PROCESSES: u32 = crate::topology::check::MAX_REPLICAS;

/// Most SUB sockets in one subscriber process.
pub const MAX_SUBS_PER_PROCESS: u32 = 100_000;

/// Settings of a sub-cluster: `processes` processes of `subs_per_process` SUB sockets each.
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// Endpoint every subscriber connects to.
    pub endpoint: Endpoint,
    /// Subscriber processes.
    pub processes: u32,
    /// SUB sockets per process.
    pub subs_per_process: u32,
    /// Longest wait for the first message.
    pub first_timeout: Duration,
    /// After the first message, a process stops when nothing arrived for this long.
    pub idle: Duration,
    /// Messages each subscriber should get, when known.
    pub expect: Option<u64>,
    /// Receive high-water mark per subscriber (None: libzmq's 1000).
    pub hwm: Option<i32>,
    /// The zmqperf binary to re-execute for the subscriber processes.
    pub exe: PathBuf,
    /// The flag that set `subs_per_process`, for error messages ("-n" or "-s").
    pub subs_flag: &'static str,
    /// Who plays the subscribers: None for zmqperf's own swarm, or a peer (`node`,
    /// `pyzmq`) that plays the swarm role.
    pub implementation: Option<String>,
    /// The hosts the subscriber processes are spread over, in turn (empty: this one).
    pub spread: Spread,
}

/// Hosts to spread subscriber processes over: the hosts file and the names to use.
#[derive(Debug, Clone, Default)]
pub struct Spread {
    /// The hosts (`--hosts FILE`).
    pub hosts: crate::runner::hosts::Hosts,
    /// The hosts the processes go to in turn (`--sub-hosts a,b`).
    pub names: Vec<String>,
}

impl ClusterConfig {
    /// Subscribers in all.
    pub fn subscribers(&self) -> u64 {
        self.processes as u64 * self.subs_per_process as u64
    }

    /// What each subscriber process needs in open files.
    pub fn fd_need(&self) -> FdNeed {
        FdNeed {
            fds: limits::subscriber_fds(self.subs_per_process as u64),
            who: "each subscriber process".into(),
            what: format!(
                "{} SUB sockets",
                crate::units::grouped(self.subs_per_process as u64)
            ),
            flag: self.subs_flag.to_string(),
            value: self.subs_per_process.to_string(),
            fewer: format!(
                "fewer subscribers per process ({}) and more processes (-c)",
                self.subs_flag
            ),
        }
    }
}

/// What the publisher needs in open files for `subscribers` connections.
pub fn publisher_fd_need(subscribers: u64, flag: &str, value: &str) -> FdNeed {
    FdNeed {
        fds: limits::publisher_fds(subscribers),
        who: "the publisher".into(),
        what: format!("{} subscriber connections", crate::units::grouped(subscribers)),
        flag: flag.to_string(),
        value: value.to_string(),
        fewer: "fewer subscribers, or the publisher and the subscribers on different hosts with their own limits".into(),
    }
}

/// The subscriber processes that failed, each as what happened to it ("node subs[2]
/// (pid 7835) died: killed by signal 9 (SIGKILL)").
fn failed(failures: &[crate::runner::engine::Failure]) -> Vec<String> {
    failures.iter().map(|(_, f)| f.what.clone()).collect()
}

/// Checks the counts of a cluster, naming the flags at fault.
pub fn check_counts(processes: u32, subs: u32, subs_flag: &str) -> Result<()> {
    if processes == 0 || processes > MAX_PROCESSES {
        return Err(Error::invalid(
            "-c (processes)",
            &processes.to_string(),
            format!("run 1 to {MAX_PROCESSES} subscriber processes, e.g. one per CPU"),
        ));
    }
    if subs == 0 || subs > MAX_SUBS_PER_PROCESS {
        return Err(Error::invalid(
            &format!("{subs_flag} (subscribers per process)"),
            &subs.to_string(),
            format!("give 1 to {MAX_SUBS_PER_PROCESS} subscribers per process"),
        ));
    }
    Ok(())
}

/// Runs the publisher on its own until its last message is out and its subscribers left.
pub fn publish(cfg: PubConfig, note: &mut dyn FnMut(String)) -> Result<PubResult> {
    if let Some(n) = cfg.subscribers {
        limits::ensure(&publisher_fd_need(n, "--subs", &n.to_string()))?;
    } else {
        // Unknown count: take what the hard limit allows, for as many as will come.
        let _ = limits::ensure(&publisher_fd_need(1000, "--subs", "1000"));
    }
    let p = Publisher::bind(cfg)?;
    note(format!("bound {}", p.endpoint()));
    p.run(&AtomicBool::new(false), note, &mut || {})
}

/// Runs a sub-cluster on its own (a topology of swarm nodes connected to the publisher's
/// endpoint, run by the engine): starts the processes, waits until they have measured
/// (they end with the stream), releases them, merges their reports. `note` gets progress
/// lines.
pub fn sub_cluster(cfg: &ClusterConfig, note: &mut dyn FnMut(String)) -> Result<FanoutReport> {
    check_counts(cfg.processes, cfg.subs_per_process, cfg.subs_flag)?;
    limits::ensure(&cfg.fd_need())?;
    let swarm = run::swarm_node(cfg, cfg.endpoint.as_str());
    // The processes end with the stream, or after `idle` without messages, or
    // `first_timeout` without any: this deadline only catches a hang.
    let deadline = cfg
        .first_timeout
        .saturating_add(cfg.idle)
        .saturating_add(Duration::from_secs(7 * 24 * 3600));
    let subscribers = cfg.subscribers();
    let (total, endpoint) = (cfg.processes, cfg.endpoint.to_string());
    let reports = run::topology(
        vec![swarm],
        &cfg.endpoint,
        0,
        cfg.expect.unwrap_or(1),
        cfg.first_timeout,
        deadline,
        &cfg.exe,
        &cfg.spread.hosts,
        &mut || {
            note(format!(
                "{subscribers} subscribers in {total} processes connected to {endpoint}; waiting for the publisher"
            ))
        },
    )?;
    let (reports, failures) = reports;
    let (children, _) = run::split(reports);
    if failures.is_empty()
        && children
            .iter()
            .all(|r| r.stop == StopReason::NothingArrived)
    {
        return Err(Error::PeerAbsent {
            endpoint: cfg.endpoint.to_string(),
            peer: format!("zmqperf pub -h {}", cfg.endpoint),
            timeout: cfg.first_timeout,
            raise: "--timeout".into(),
        });
    }
    let mut r = merge(
        "sub-cluster",
        cfg.endpoint.as_str(),
        cfg.endpoint.transport(),
        cfg.subs_per_process,
        children,
        None,
    );
    r.failed_processes = failed(&failures);
    Ok(r)
}

/// Settings of a fan-out run: the publisher (in this process) and a sub-cluster.
#[derive(Debug, Clone)]
pub struct FanoutConfig {
    /// The publisher; its endpoint is bound, and it waits for every subscriber.
    pub publisher: PubConfig,
    /// Subscriber processes.
    pub processes: u32,
    /// SUB sockets per process.
    pub subs_per_process: u32,
    /// Idle time of the subscriber processes (raised to twice the interval if shorter).
    pub idle: Duration,
    /// Receive high-water mark per subscriber.
    pub hwm: Option<i32>,
    /// The zmqperf binary to re-execute.
    pub exe: PathBuf,
    /// Who plays the subscribers (None: zmqperf's own swarm).
    pub implementation: Option<String>,
    /// The hosts the subscriber processes are spread over.
    pub spread: Spread,
}

/// A line of progress from a run, for the caller to show.
pub type Note = Arc<dyn Fn(String) + Send + Sync>;

/// Runs a fan-out on one host: a topology of the publisher (a source on ticks, on a thread
/// of this process) and the swarms (child processes), run by the engine; merges everything
/// into one report.
pub fn fanout(cfg: &FanoutConfig, note: Note) -> Result<FanoutReport> {
    run_once(cfg, &cfg.publisher, false, &note)
}

/// What a fan-out run is planned to take: the publisher's ticks (interval x (warm-up +
/// passes)) fixed; the start of the processes and the deliveries (guessed at 200,000 a
/// second) guessed.
pub fn planned(cfg: &FanoutConfig) -> crate::progress::Planned {
    let p = &cfg.publisher;
    let ticks = p.passes.saturating_add(p.warmup);
    let subscribers = cfg.processes as u64 * cfg.subs_per_process as u64;
    let deliveries = p.per_tick.saturating_mul(ticks).saturating_mul(subscribers);
    crate::progress::Planned {
        fixed_s: p.interval.as_secs_f64() * ticks as f64,
        guess_s: 0.5 + deliveries as f64 / 200_000.0,
    }
}

/// The raw-socket floor of the fan-out `cfg` whose libzmq run reported `zmq`: the same
/// subscribers, ticks, size and warm-up over plain stream sockets (TCP on a free port of
/// the same host for tcp://, a fresh Unix socket file in the temp folder for ipc://),
/// measured the same way, and compared with `zmq`.
pub fn floor(cfg: &FanoutConfig, zmq: &FanoutReport, note: Note) -> Result<FanoutFloor> {
    let mut p = cfg.publisher.clone();
    let raw_endpoint = match p.endpoint.tcp_host_port() {
        Some((host, _)) if host.contains(':') => format!("tcp://[{host}]:*"),
        Some((host, _)) => format!("tcp://{host}:*"),
        None => "ipc://*".to_string(),
    };
    p.endpoint = Endpoint::parse(&raw_endpoint, crate::endpoint::Side::Bind)?;
    // The publisher runs on a thread of this process, which has run the libzmq fan-out
    // already: its CPU time is counted from here.
    let before = ProcessUsage::of_this_process("publisher");
    let raw = run_once(cfg, &p, true, &note)?;
    let mut raw_pub = raw
        .publisher
        .clone()
        .ok_or_else(|| Error::NodeGone("the raw publisher ended without its report".into()))?;
    raw_pub.usage.cpu_user_ms = (raw_pub.usage.cpu_user_ms - before.cpu_user_ms).max(0.0);
    raw_pub.usage.cpu_sys_ms = (raw_pub.usage.cpu_sys_ms - before.cpu_sys_ms).max(0.0);
    Ok(floor::compare(zmq, raw, raw_pub))
}

/// The subscriber processes' settings for the publisher `p`: they wait for its first
/// message as long as it waits for them, and stay through twice its interval.
fn swarm_config(cfg: &FanoutConfig, p: &PubConfig) -> ClusterConfig {
    ClusterConfig {
        endpoint: p.endpoint.clone(),
        processes: cfg.processes,
        subs_per_process: cfg.subs_per_process,
        // The publisher waits up to its timeout for everyone, then sends at once.
        first_timeout: p
            .timeout
            .saturating_add(p.wait)
            .saturating_add(Duration::from_secs(10)),
        idle: cfg.idle.max(
            p.interval
                .saturating_mul(2)
                .saturating_add(Duration::from_secs(1)),
        ),
        expect: Some(p.total()),
        hwm: cfg.hwm,
        exe: cfg.exe.clone(),
        subs_flag: "-s",
        implementation: cfg.implementation.clone(),
        spread: cfg.spread.clone(),
    }
}

/// How long the whole run may take before it counts as hung: the publisher's schedule,
/// the `subscribers`' deliveries at 20,000 a second, its waits and the swarm's `idle`.
fn deadline(p: &PubConfig, subscribers: u64, idle: Duration) -> Duration {
    // Bound only to catch a hang: the publisher's own timeouts end a stalled run first.
    let ticks = p.passes.saturating_add(p.warmup);
    let deliveries = p.per_tick.saturating_mul(ticks).saturating_mul(subscribers);
    let run_time = Duration::from_nanos(dur_ns(p.interval).saturating_mul(ticks))
        .saturating_add(Duration::from_secs(deliveries / 20_000));
    p.timeout
        .saturating_mul(2)
        .saturating_add(p.wait)
        .saturating_add(run_time)
        .saturating_add(idle)
        .saturating_add(Duration::from_secs(60))
}

/// One fan-out run with the publisher `p`: over libzmq, or with `raw` over plain sockets.
fn run_once(cfg: &FanoutConfig, p: &PubConfig, raw: bool, note: &Note) -> Result<FanoutReport> {
    let subscribers = cfg.processes as u64 * cfg.subs_per_process as u64;
    let cluster_cfg = swarm_config(cfg, p);
    check_counts(cfg.processes, cfg.subs_per_process, "-s")?;
    limits::ensure(&publisher_fd_need(
        subscribers,
        "-c x -s (subscribers)",
        &format!("{} x {}", cfg.processes, cfg.subs_per_process),
    ))?;
    limits::ensure(&cluster_cfg.fd_need())?;
    let mut pcfg = p.clone();
    pcfg.linger = pcfg
        .linger
        .max(cluster_cfg.idle.saturating_add(Duration::from_secs(10)));
    let publisher = run::publisher_node(&pcfg, raw);
    let swarm = run::swarm_node(&cluster_cfg, "pub");
    let deadline = deadline(p, subscribers, cluster_cfg.idle);
    note(format!(
        "starting the {}publisher on {} and {} subscriber processes of {}",
        if raw { "raw-socket " } else { "" },
        p.endpoint,
        cfg.processes,
        cfg.subs_per_process
    ));
    let reports = run::topology(
        vec![publisher, swarm],
        &p.endpoint,
        p.size,
        p.total(),
        p.timeout,
        deadline,
        &cfg.exe,
        &cfg.spread.hosts,
        &mut || {},
    )?;
    let (reports, failures) = reports;
    let (children, pub_result) = run::split(reports);
    let pub_result = pub_result
        .ok_or_else(|| Error::NodeGone("the publisher ended without its report".into()))?;
    let endpoint = connect_endpoint(&pub_result.endpoint);
    let mut r = merge(
        "fanout",
        &endpoint,
        p.endpoint.transport(),
        cfg.subs_per_process,
        children,
        Some(pub_result),
    );
    r.failed_processes = failed(&failures);
    r.lossy = p.lossy;
    r.implementation = match &cfg.implementation {
        Some(name) if !raw => Some(crate::peers::get(name)?.label()),
        _ => None,
    };
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_interfaces_become_loopback() {
        assert_eq!(
            connect_endpoint("tcp://0.0.0.0:5555"),
            "tcp://127.0.0.1:5555"
        );
        assert_eq!(connect_endpoint("tcp://[::]:5555"), "tcp://[::1]:5555");
        assert_eq!(connect_endpoint("tcp://127.0.0.1:1"), "tcp://127.0.0.1:1");
        assert_eq!(connect_endpoint("ipc:///tmp/x"), "ipc:///tmp/x");
    }

    #[test]
    fn counts_are_checked_with_the_flag_named() {
        assert!(check_counts(1, 1, "-n").is_ok());
        let e = check_counts(0, 10, "-n").unwrap_err().to_string();
        assert!(e.contains("-c (processes) '0'"), "{e}");
        let e = check_counts(2, 0, "-s").unwrap_err().to_string();
        assert!(e.contains("-s (subscribers per process) '0'"), "{e}");
    }

    #[test]
    fn specs_carry_the_settings() {
        let cfg = ClusterConfig {
            endpoint: Endpoint::parse("tcp://127.0.0.1:2002", crate::endpoint::Side::Connect)
                .unwrap(),
            processes: 3,
            subs_per_process: 7,
            first_timeout: Duration::from_secs(2),
            idle: Duration::from_millis(1500),
            expect: Some(10),
            hwm: None,
            exe: PathBuf::from("/bin/true"),
            subs_flag: "-n",
            implementation: None,
            spread: Default::default(),
        };
        let node = run::swarm_node(&cfg, "tcp://127.0.0.1:2002");
        assert_eq!((node.replicas, node.subs), (3, Some(7)));
        assert_eq!(
            (node.idle_ms, node.first_timeout_ms),
            (Some(1500), Some(2000))
        );
        assert_eq!(node.count, Some(serde_json::Value::from(10u64)));
        let sock = node.socket.as_ref().unwrap();
        assert_eq!(sock.connect, vec!["tcp://127.0.0.1:2002".to_string()]);
        assert_eq!(node.role, crate::topology::Role::Swarm);
        assert_eq!(cfg.subscribers(), 21);
        assert_eq!(cfg.fd_need().fds, 7 * 3 + 64);
    }
}
