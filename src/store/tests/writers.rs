//! Several writers on one file, and findings recorded one by one.

use super::*;
use crate::report::history::format_history;

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
    whole.status = RunStatus::Complete;
    whole.findings = findings.clone();
    store.save_run(&whole).unwrap();
    assert_eq!(store.load_run("whole").unwrap().findings, findings);

    let e = store.add_finding("nope", &findings[0]).unwrap_err();
    assert!(e.to_string().contains("'nope'"), "{e}");
}

#[test]
fn the_end_of_a_run_records_the_hosts_its_nodes_described() {
    let db = TempDb::new();
    let mut store = Store::open(db.path()).unwrap();
    let mut r = run("far");
    store.begin_run(&r).unwrap();
    assert!(store.load_run("far").unwrap().environment.hosts.is_empty());
    let mut b = crate::host::host_environment("b");
    b.addr = Some("10.9.0.2".into());
    r.environment.hosts.push(b.clone());
    r.finished_at = Some("2026-11-25T20:00:00Z".into());
    store.finish(&r, "complete").unwrap();
    let loaded = store.load_run("far").unwrap();
    assert_eq!(loaded.environment.hosts, [b]);
    assert_eq!(loaded.status, "complete");
    assert_eq!(loaded.finished_at.as_deref(), Some("2026-11-25T20:00:00Z"));
    // A run not in the file is an error, not a silent no-op.
    let mut gone = run("gone");
    gone.environment.hosts = r.environment.hosts.clone();
    assert!(store.finish(&gone, "complete").is_err());
}
