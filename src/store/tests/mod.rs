//! Tests of the history database: round trip, run selectors, a writer killed mid-run,
//! the errors a user sees, the migration of an old layout, and imported runs. The helpers
//! here make the temporary databases, cases and runs the test modules share.

mod crash;
mod ending;
mod errors;
mod importing;
mod migration;
mod reading;
mod writers;

use super::*;
use crate::endpoint::Transport;
use crate::model::{
    CaseResult, CaseSummary, Environment, Estimate, Floor, Kind, LoopMode, Repetition, RoleUsage,
    RunResult, RunStatus, Workload, SCHEMA_VERSION,
};
use crate::stats::{LatencyHistogram, LossSummary, Throughput};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

/// A database file in a fresh temporary folder, removed with the folder when dropped.
struct TempDb {
    dir: PathBuf,
}

impl TempDb {
    fn new() -> TempDb {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "zmqperf-store-test-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        TempDb { dir }
    }

    fn path(&self) -> PathBuf {
        self.dir.join("history.db")
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn est(median: f64) -> Estimate {
    crate::stats::estimate(&[median * 0.98, median, median * 1.03]).expect("values")
}

fn case(size: usize, error: Option<&str>) -> CaseResult {
    let mut hist = LatencyHistogram::new();
    for ns in [25_000, 26_000, 31_000, 40_000] {
        hist.record(ns);
    }
    let rep = Repetition {
        latency: Some(hist.summary()),
        latency_histogram: Some(hist),
        send_delay: None,
        send: Some(Throughput {
            messages: 10_000,
            payload_bytes: 640_000,
            start_ns: 1_000,
            end_ns: 500_001_000,
        }),
        delivered: None,
        loss: Some(LossSummary::default()),
        roles: vec![RoleUsage {
            role: "client".into(),
            placement: "thread".into(),
            cpu_user_ms: 120.5,
            cpu_sys_ms: 30.25,
            peak_rss_kib: 8_192,
            peak_virt_kib: 0,
            run_ms: 0.0,
            run_cpu_ms: 0.0,
        }],
    };
    CaseResult {
        id: CaseResult::make_id(Kind::Latency, "reqrep", Transport::Tcp, size, None),
        kind: Kind::Latency,
        pattern: "reqrep".into(),
        transport: Transport::Tcp,
        message_size: size,
        count: 10_000,
        rate: None,
        loop_mode: LoopMode::Closed,
        warmup: 1_000,
        repetitions: vec![rep],
        summary: CaseSummary {
            latency_us: Some(est(30.1)),
            p50_us: Some(est(29.0)),
            p99_us: Some(est(41.7)),
            ..CaseSummary::default()
        },
        floor: Some(Floor {
            socket: "tcp".into(),
            latency_us: 12.3,
            roundtrips: 10_000,
            p50_us: None,
            p99_us: None,
        }),
        warnings: vec!["spread 12% over repetitions".into()],
        incomplete: None,
        error: error.map(String::from),
        wall_s: 2.75,
        nodes: Vec::new(),
        edges: Vec::new(),
        sender: None,
        machine: None,
        intervals: Vec::new(),
    }
}

fn run(id: &str) -> RunResult {
    RunResult {
        schema_version: SCHEMA_VERSION,
        run_id: id.into(),
        started_at: "2026-11-21T22:15:30Z".into(),
        finished_at: None,
        status: RunStatus::Running,
        command: "zmqperf run --suite quick".into(),
        workload: Some(Workload {
            path: "suite.toml".into(),
            text: "[[case]]\nkind = \"latency\"\n".into(),
        }),
        environment: Environment {
            cpu_model: "AMD EPYC 7763".into(),
            cores: 16,
            memory_bytes: 64 << 30,
            kernel: "6.8.0".into(),
            os: "linux".into(),
            hostname: "alpha".into(),
            libzmq_version: "4.3.5".into(),
            libzmq: None,
            note: None,
            network: Vec::new(),
            zmqperf_version: "0.1.0".into(),
            hosts: Vec::new(),
        },
        cases: Vec::new(),
        findings: Vec::new(),
        imported: None,
        limits: Vec::new(),
        curves: Vec::new(),
    }
}

/// Saves complete runs with these ids, in this order.
fn store_with(db: &TempDb, ids: &[&str]) -> Store {
    let mut store = Store::open(db.path()).unwrap();
    for id in ids {
        let mut r = run(id);
        r.status = RunStatus::Complete;
        r.cases = vec![case(64, None)];
        store.save_run(&r).unwrap();
    }
    store
}
