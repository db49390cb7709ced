//! Runs written and read back whole, and the selectors that name them.

use super::*;

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
        status: RunStatus::Complete,
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
            imported: None,
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

#[test]
fn limits_and_curves_are_kept_with_their_run() {
    use crate::model::{CurvePoint, LimitResult, LoadCurve, TunedSetting};
    let db = TempDb::new();
    let mut store = Store::open(db.path()).unwrap();
    let mut r = run("20261126-200000-aaaa");
    store.begin_run(&r).unwrap();
    r.limits.push(LimitResult {
        case: "throughput/pubsub-lossy/tcp/64/20000".into(),
        what: "rate".into(),
        slo: "loss=0".into(),
        held: Some(91_103.0),
        low: Some(90_943.0),
        high: Some(113_137.0),
        said: "max rate 91,103 msg/s".into(),
        broke_at: Some(113_137.0),
        cause: Some("the high-water mark".into()),
        steps: 12,
        tuned: vec![TunedSetting {
            settings: "sndhwm = 10000".into(),
            held: Some(640_000.0),
            low: Some(636_783.0),
            high: Some(761_093.0),
            gain: Some([7.03, 5.63, 8.37]),
            helps: true,
        }],
    });
    r.curves.push(LoadCurve {
        case: "throughput/pushpull/tcp/64".into(),
        slo: "loss=0".into(),
        points: vec![CurvePoint {
            offered: 1000.0,
            delivered: 1001.0,
            p50_ns: Some(89e3),
            p99_ns: Some(162e3),
            max_ns: None,
            lost: 0,
            held: true,
        }],
        knee: Some(0),
    });
    store.finish(&r, "complete").unwrap();
    drop(store);
    let store = Store::open(db.path()).unwrap();
    let loaded = store.load_run(&r.run_id).unwrap();
    assert_eq!(loaded.limits, r.limits);
    assert_eq!(loaded.curves, r.curves);
}
