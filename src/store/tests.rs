//! Tests of the history database: round trip, run selectors, a writer killed mid-run,
//! and the errors a user sees.

use super::*;
use crate::endpoint::Transport;
use crate::model::{
    CaseSummary, Estimate, Floor, Kind, LoopMode, Repetition, RoleUsage, SCHEMA_VERSION,
};
use crate::stats::{LatencyHistogram, LossSummary, Throughput};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

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
        }),
        warnings: vec!["spread 12% over repetitions".into()],
        error: error.map(String::from),
        wall_s: 2.75,
        nodes: Vec::new(),
        edges: Vec::new(),
    }
}

fn run(id: &str) -> RunResult {
    RunResult {
        schema_version: SCHEMA_VERSION,
        run_id: id.into(),
        started_at: "2026-11-21T22:15:30Z".into(),
        finished_at: None,
        status: "running".into(),
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
            zmqperf_version: "0.1.0".into(),
        },
        cases: Vec::new(),
        findings: Vec::new(),
    }
}

/// Saves complete runs with these ids, in this order.
fn store_with(db: &TempDb, ids: &[&str]) -> Store {
    let mut store = Store::open(db.path()).unwrap();
    for id in ids {
        let mut r = run(id);
        r.status = "complete".into();
        r.cases = vec![case(64, None)];
        store.save_run(&r).unwrap();
    }
    store
}

#[test]
fn round_trip() {
    let db = TempDb::new();
    let mut store = Store::open(db.path()).unwrap();
    let r = run("20261121-221530-4f2a");
    store.begin_run(&r).unwrap();
    let cases = vec![case(64, None), case(1024, Some("peer stopped"))];
    for c in &cases {
        store.add_case(&r.run_id, c).unwrap();
    }
    // Mid-run, the run reads as running (its writer, this process, is alive).
    let mid = store.load_run("last").unwrap();
    assert_eq!(mid.status, "running");
    assert_eq!(mid.cases, cases);
    store
        .finish_run(&r.run_id, "complete", Some("2026-11-21T22:20:00Z"))
        .unwrap();
    drop(store);

    let store = Store::open(db.path()).unwrap();
    let loaded = store.load_run(&r.run_id).unwrap();
    let expected = RunResult {
        status: "complete".into(),
        finished_at: Some("2026-11-21T22:20:00Z".into()),
        cases,
        ..r
    };
    assert_eq!(loaded, expected);

    let list = store.list_runs(None).unwrap();
    assert_eq!(
        list,
        [RunListing {
            run_id: "20261121-221530-4f2a".into(),
            started_at: "2026-11-21T22:15:30Z".into(),
            finished_at: Some("2026-11-21T22:20:00Z".into()),
            status: "complete".into(),
            command: "zmqperf run --suite quick".into(),
            cases: 2,
            failed_cases: 1,
            findings: 0,
            cpu_model: "AMD EPYC 7763".into(),
            hostname: "alpha".into(),
        }]
    );
}

#[test]
fn selectors() {
    let db = TempDb::new();
    let store = store_with(&db, &["run-1", "run-10", "run-2", "other"]);
    let id = |sel: &str| store.resolve(sel).unwrap();
    assert_eq!(id("last"), "other");
    assert_eq!(id("last~0"), "other");
    assert_eq!(id("last~1"), "run-2");
    assert_eq!(id("last~3"), "run-1");
    assert_eq!(id("oth"), "other");
    assert_eq!(id("run-2"), "run-2");
    // A full id wins over being the prefix of another.
    assert_eq!(id("run-1"), "run-1");
    assert_eq!(id("run-10"), "run-10");
    assert_eq!(store.load_run("last~1").unwrap().run_id, "run-2");

    let list = store.list_runs(Some(2)).unwrap();
    let ids: Vec<_> = list.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(ids, ["other", "run-2"]);
    assert_eq!(store.list_runs(None).unwrap().len(), 4);
}

#[test]
fn bad_selectors_name_the_selector() {
    let db = TempDb::new();
    let store = store_with(&db, &["run-1", "run-10", "run-2"]);
    let err = |sel: &str| store.load_run(sel).unwrap_err();

    let e = err("nope");
    assert!(matches!(e, StoreError::NotFound { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("'nope'") && msg.contains("`zmqperf history`"),
        "{msg}"
    );
    assert!(msg.contains(&db.path().display().to_string()), "{msg}");
    assert_eq!(e.exit_code(), 14);

    let e = err("last~3");
    let msg = e.to_string();
    assert!(
        msg.contains("'last~3'") && msg.contains("only 3 runs"),
        "{msg}"
    );
    assert_eq!(e.exit_code(), 14);

    let e = err("run-");
    let msg = e.to_string();
    assert!(matches!(e, StoreError::Ambiguous { count: 3, .. }), "{e:?}");
    assert!(
        msg.contains("'run-'") && msg.contains("run-2, run-10, run-1"),
        "{msg}"
    );
    assert_eq!(e.exit_code(), 14);

    for bad in ["last~x", "last~-1", "", "last~"] {
        let e = err(bad);
        assert!(matches!(e, StoreError::BadSelector { .. }), "{bad}: {e:?}");
        assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        assert_eq!(e.exit_code(), 14);
    }

    let empty = TempDb::new();
    let e = Store::open(empty.path())
        .unwrap()
        .load_run("last")
        .unwrap_err();
    assert!(e.to_string().contains("holds no runs yet"), "{e}");
}

/// Set to a database path, [`crash_helper`] writes a run with two cases and kills itself.
const CRASH_ENV: &str = "ZMQPERF_STORE_TEST_CRASH_DB";
const CRASH_RUN: &str = "20261121-000000-dead";

/// The writer of [`killed_writer_keeps_finished_cases`], run in a child process.
#[cfg(unix)]
#[test]
#[ignore = "helper run by killed_writer_keeps_finished_cases in a child process"]
fn crash_helper() {
    let Some(path) = std::env::var_os(CRASH_ENV) else {
        return;
    };
    let mut store = Store::open(&path).unwrap();
    store.begin_run(&run(CRASH_RUN)).unwrap();
    store.add_case(CRASH_RUN, &case(64, None)).unwrap();
    store.add_case(CRASH_RUN, &case(1024, None)).unwrap();
    // A third case half written: its transaction is still open when the process dies.
    let other = Connection::open(&path).unwrap();
    other
        .execute_batch(&format!(
            "BEGIN IMMEDIATE; INSERT INTO cases (run_id, position, case_id, failed, data)
             VALUES ('{CRASH_RUN}', 2, 'half', 0, '{{');"
        ))
        .unwrap();
    // SAFETY: kill(2) on our own pid; nothing runs after it.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    std::process::abort();
}

#[cfg(unix)]
#[test]
fn killed_writer_keeps_finished_cases() {
    let db = TempDb::new();
    std::fs::create_dir_all(&db.dir).unwrap();
    let log = db.dir.join("child.log");
    let out = std::fs::File::create(&log).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "store::tests::crash_helper",
            "--ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CRASH_ENV, db.path())
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the writer child did not end within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let child_log = std::fs::read_to_string(&log).unwrap_or_default();
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.signal(),
            Some(libc::SIGKILL),
            "the writer should have been killed ({status}); its output:\n{child_log}"
        );
    }

    let store = Store::open(db.path()).unwrap();
    let loaded = store.load_run(CRASH_RUN).unwrap();
    assert_eq!(loaded.cases, [case(64, None), case(1024, None)]);
    assert_eq!(loaded.finished_at, None);
    let list = store.list_runs(None).unwrap();
    assert_eq!((list[0].cases, list[0].failed_cases), (2, 0));
    if owner::current().is_some() {
        // Linux: the writer is known to be gone.
        assert_eq!(loaded.status, "interrupted");
        assert_eq!(list[0].status, "interrupted");
    } else {
        assert_eq!(loaded.status, "running");
    }
}

#[test]
fn open_errors_name_the_file_and_the_fix() {
    let db = TempDb::new();
    std::fs::create_dir_all(&db.dir).unwrap();

    // Not an SQLite file.
    let junk = db.dir.join("junk.db");
    std::fs::write(&junk, vec![b'x'; 4096]).unwrap();
    let e = Store::open(&junk).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains(&junk.display().to_string()), "{msg}");
    assert!(msg.contains("not an SQLite database"), "{msg}");
    assert!(msg.contains("--db PATH or set ZMQPERF_DB"), "{msg}");
    assert_eq!(e.exit_code(), 13);

    // Another program's SQLite database.
    let foreign = db.dir.join("foreign.db");
    Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let e = Store::open(&foreign).unwrap_err();
    assert!(e.to_string().contains("not a zmqperf history"), "{e}");

    // A newer layout.
    let newer = db.dir.join("newer.db");
    drop(Store::open(&newer).unwrap());
    Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let e = Store::open(&newer).unwrap_err();
    assert!(matches!(e, StoreError::TooNew { found: 99, .. }), "{e:?}");
    assert!(e.to_string().contains("upgrade zmqperf"), "{e}");

    // A folder that cannot be created (its parent is a file).
    let e = Store::open(junk.join("sub").join("h.db")).unwrap_err();
    assert!(e.to_string().contains("cannot create folder"), "{e}");

    // open_existing does not create.
    let absent = db.dir.join("absent.db");
    let e = Store::open_existing(&absent).unwrap_err();
    assert!(matches!(e, StoreError::Missing { .. }), "{e:?}");
    assert!(!absent.exists());

    // Nested folders are created, and a second open of the same file works.
    let nested = db.dir.join("a").join("b").join("h.db");
    drop(Store::open(&nested).unwrap());
    assert!(Store::open_existing(&nested).is_ok());
}

#[test]
fn write_errors() {
    let db = TempDb::new();
    let mut store = store_with(&db, &["r1"]);
    let e = store.begin_run(&run("r1")).unwrap_err();
    assert!(matches!(e, StoreError::DuplicateRun { .. }), "{e:?}");
    assert!(e.to_string().contains("run r1 is already"), "{e}");

    let e = store.add_case("r9", &case(64, None)).unwrap_err();
    assert!(e.to_string().contains("'r9'"), "{e}");
    let e = store.finish_run("r9", "complete", None).unwrap_err();
    assert!(e.to_string().contains("'r9'"), "{e}");
    let e = store.finish_run("r1", "done", None).unwrap_err();
    assert!(e.to_string().contains("'done'"), "{e}");

    // A figure JSON cannot hold is refused before anything is written.
    let mut nan = case(64, None);
    nan.wall_s = f64::NAN;
    let e = store.add_case("r1", &nan).unwrap_err();
    assert!(matches!(e, StoreError::Encode { .. }), "{e:?}");
    assert!(e.to_string().contains("latency/reqrep/tcp/64"), "{e}");
    assert_eq!(store.load_run("r1").unwrap().cases.len(), 1);
}

#[test]
fn two_writers_share_the_file() {
    let db = TempDb::new();
    let mut one = Store::open(db.path()).unwrap();
    let mut two = Store::open(db.path()).unwrap();
    one.begin_run(&run("one")).unwrap();
    two.begin_run(&run("two")).unwrap();
    for size in [1, 2, 3] {
        one.add_case("one", &case(size, None)).unwrap();
        two.add_case("two", &case(size * 10, None)).unwrap();
    }
    let sizes = |id: &str| -> Vec<usize> {
        one.load_run(id)
            .unwrap()
            .cases
            .iter()
            .map(|c| c.message_size)
            .collect()
    };
    assert_eq!(sizes("one"), [1, 2, 3]);
    assert_eq!(sizes("two"), [10, 20, 30]);
}

#[test]
fn findings_are_recorded_one_by_one_and_read_back() {
    let db = TempDb::new();
    let mut store = Store::open(db.path()).unwrap();
    let mut r = run("diag");
    r.workload = None;
    r.command = "zmqperf diagnose".into();
    store.begin_run(&r).unwrap();
    let findings = crate::report::fixture::sample_findings();
    for f in &findings {
        store.add_finding("diag", f).unwrap();
    }
    store.finish_run("diag", "complete", None).unwrap();
    let loaded = store.load_run("last").unwrap();
    assert_eq!(loaded.findings, findings);
    assert!(loaded.cases.is_empty());
    let list = store.list_runs(None).unwrap();
    assert_eq!((list[0].cases, list[0].findings), (0, 2));
    assert!(format_history(&list).contains("0, 2 findings"));

    // A whole run saved at once keeps its findings too.
    let mut whole = run("whole");
    whole.status = "complete".into();
    whole.findings = findings.clone();
    store.save_run(&whole).unwrap();
    assert_eq!(store.load_run("whole").unwrap().findings, findings);

    let e = store.add_finding("nope", &findings[0]).unwrap_err();
    assert!(e.to_string().contains("'nope'"), "{e}");
}

/// The layout of version 1, as zmqperf wrote it before findings existed.
const LAYOUT_1: &str = "
CREATE TABLE runs (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, schema_version INTEGER NOT NULL,
    started_at TEXT NOT NULL, finished_at TEXT, status TEXT NOT NULL, command TEXT NOT NULL,
    environment TEXT NOT NULL, workload TEXT, cpu_model TEXT NOT NULL, hostname TEXT NOT NULL,
    owner TEXT
);
CREATE TABLE cases (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, position INTEGER NOT NULL,
    case_id TEXT NOT NULL, failed INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (run_id, position)
);
CREATE INDEX cases_by_case_id ON cases(case_id);
PRAGMA application_id = 2053992816;
PRAGMA user_version = 1;
";

#[test]
fn a_version_1_database_is_migrated_in_place() {
    let db = TempDb::new();
    std::fs::create_dir_all(&db.dir).unwrap();
    let conn = Connection::open(db.path()).unwrap();
    conn.execute_batch(LAYOUT_1).unwrap();
    let old = case(64, None);
    conn.execute(
        "INSERT INTO runs (id, schema_version, started_at, finished_at, status, command,
                           environment, workload, cpu_model, hostname, owner)
         VALUES ('old', 1, '2026-11-20T10:00:00Z', '2026-11-20T10:01:00Z', 'complete',
                 'zmqperf run', ?1, NULL, 'AMD EPYC 7763', 'alpha', NULL)",
        [serde_json::to_string(&run("x").environment).unwrap()],
    )
    .unwrap();
    conn.execute(
        "INSERT INTO cases (run_id, position, case_id, failed, data) VALUES ('old', 0, ?1, 0, ?2)",
        params![old.id, serde_json::to_string(&old).unwrap()],
    )
    .unwrap();
    drop(conn);

    let mut store = Store::open(db.path()).unwrap();
    let version: i64 = store
        .conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, LAYOUT_VERSION);
    let loaded = store.load_run("old").unwrap();
    assert_eq!(loaded.cases, [old]);
    assert!(loaded.findings.is_empty());
    // The migrated file takes findings, and opens again without another migration.
    let mut r = run("new");
    r.findings = crate::report::fixture::sample_findings();
    r.status = "complete".into();
    store.save_run(&r).unwrap();
    drop(store);
    let store = Store::open(db.path()).unwrap();
    assert_eq!(store.load_run("new").unwrap().findings.len(), 2);
    assert_eq!(store.list_runs(None).unwrap().len(), 2);
}
