//! A database of layout version 1 brought to the current layout when opened.

use super::*;
use crate::store::open::LAYOUT_VERSION;
use rusqlite::{params, Connection};

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
    r.status = RunStatus::Complete;
    store.save_run(&r).unwrap();
    drop(store);
    let store = Store::open(db.path()).unwrap();
    assert_eq!(store.load_run("new").unwrap().findings.len(), 2);
    assert_eq!(store.list_runs(None).unwrap().len(), 2);
}
