//! `zmqperf import`: a run exported as JSON taken into another history under a new id with
//! its mark, the same run refused a second time, and every file that is not an importable
//! run refused with what is wrong.

use super::*;
use crate::store::import::{content_sha256, parse_export, ImportError};
use std::time::{Duration, UNIX_EPOCH};

/// The sample run as `zmqperf report RUN --format json` writes it.
fn exported() -> (RunResult, String) {
    let run = crate::report::fixture::sample_run();
    let json = crate::report::render(&run, crate::report::Format::Json);
    (run, json)
}

/// The same run as versions 1 and 2 wrote it: its fields at the top level, no envelope.
fn exported_flat() -> (RunResult, String) {
    let mut run = crate::report::fixture::sample_run();
    run.schema_version = 2;
    let json = serde_json::to_string_pretty(&run).unwrap();
    (run, json)
}

#[test]
fn a_run_written_before_the_envelope_is_imported_as_it_was() {
    let (run, json) = exported_flat();
    let top: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(top.get("kind").is_none() && top.get("cases").is_some());
    let parsed = parse_export(json.as_bytes(), "old.json").unwrap();
    assert_eq!(parsed, run);
    let (run, json) = exported();
    let top: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(top["kind"], "run");
    assert_eq!(top["version"], 3);
    assert!(top.get("cases").is_none() && top["results"]["cases"].is_array());
    let parsed = parse_export(json.as_bytes(), "new.json").unwrap();
    assert_eq!(parsed.cases, run.cases);
    assert_eq!(parsed.environment, run.environment);
    assert_eq!(parsed.run_id, run.run_id);
}

fn at(secs: u64) -> std::time::SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

#[test]
fn an_exported_run_is_imported_under_a_new_id_with_its_mark() {
    let db = TempDb::new();
    let mut store = store_with(&db, &["local-1"]);
    let (original, json) = exported();
    let parsed = parse_export(json.as_bytes(), "b-run.json").unwrap();
    assert_eq!(parsed, original);
    let when = at(1_795_400_000); // 2026-11-23
    let local = store.import_run(&parsed, "b-run.json", when).unwrap();
    assert_ne!(local.run_id, original.run_id);
    assert!(local.run_id.starts_with("20261123-"), "{}", local.run_id);
    let mark = local.imported.clone().unwrap();
    assert_eq!(mark.original_run_id, original.run_id);
    assert_eq!(mark.file, "b-run.json");
    assert_eq!(mark.from_host, "bench-01");
    assert_eq!(mark.imported_at, crate::clock::rfc3339(when));
    assert_eq!(mark.content_sha256.len(), 64);
    assert_eq!(mark.content_sha256, content_sha256(&original));

    // Read back: the original's times, environment, cases and findings, and the mark.
    let back = store.load_run(&local.run_id).unwrap();
    assert_eq!(back, local);
    assert_eq!(
        RunResult {
            run_id: original.run_id.clone(),
            imported: None,
            ..back.clone()
        },
        original
    );
    // `last` is the run imported last; `history` says it is imported.
    assert_eq!(store.resolve("last").unwrap(), local.run_id);
    let list = store.list_runs(None).unwrap();
    assert_eq!(list[0].imported.as_ref(), Some(&mark));
    assert_eq!(list[0].hostname, "bench-01");
    assert!(list[1].imported.is_none());
    let text = crate::report::history::format_history(&list);
    assert!(text.contains("complete, imported"), "{text}");

    // The JSON of the imported run carries the mark and validates as a run.
    let again = crate::report::render(&back, crate::report::Format::Json);
    assert!(again.contains("\"original_run_id\""), "{again}");
}

#[test]
fn the_same_run_is_refused_naming_the_run_that_has_it() {
    let db = TempDb::new();
    let mut store = Store::open(db.path()).unwrap();
    let (original, json) = exported();
    let run = parse_export(json.as_bytes(), "b-run.json").unwrap();
    let first = store
        .import_run(&run, "b-run.json", at(1_795_400_000))
        .unwrap();
    let e = store
        .import_run(&run, "copy.json", at(1_795_400_100))
        .unwrap_err();
    assert!(matches!(e, ImportError::AlreadyImported { .. }), "{e:?}");
    assert_eq!(e.exit_code(), 21);
    let msg = e.to_string();
    for part in [
        "cannot import copy.json",
        &format!("run {} is already in history database", original.run_id),
        &format!("as {}", first.run_id),
        "imported from b-run.json at 2026-11-23T",
        &format!("zmqperf show {}", first.run_id),
    ] {
        assert!(msg.contains(part), "{part}: {msg}");
    }
    assert_eq!(store.list_runs(None).unwrap().len(), 1);

    // The same id with other content (a run exported again after it completed) is another
    // run: it is imported.
    let mut changed = run.clone();
    changed.cases[0].wall_s += 1.0;
    let second = store
        .import_run(&changed, "later.json", at(1_795_400_200))
        .unwrap();
    assert_ne!(second.run_id, first.run_id);
    assert_eq!(
        second.imported.unwrap().original_run_id,
        first.imported.unwrap().original_run_id
    );
}

#[test]
fn a_run_passed_on_through_another_history_keeps_its_first_id() {
    let (h1, h2) = (TempDb::new(), TempDb::new());
    let (original, json) = exported();
    let mut s1 = Store::open(h1.path()).unwrap();
    let in1 = s1
        .import_run(
            &parse_export(json.as_bytes(), "a.json").unwrap(),
            "a.json",
            at(1_795_400_000),
        )
        .unwrap();
    // History 1 exports its imported run; history 2 takes it in.
    let json1 = crate::report::render(
        &s1.load_run(&in1.run_id).unwrap(),
        crate::report::Format::Json,
    );
    let mut s2 = Store::open(h2.path()).unwrap();
    let run1 = parse_export(json1.as_bytes(), "from-h1.json").unwrap();
    let in2 = s2
        .import_run(&run1, "from-h1.json", at(1_795_500_000))
        .unwrap();
    let mark = in2.imported.as_ref().unwrap();
    assert_eq!(mark.original_run_id, original.run_id);
    assert_eq!(mark.file, "from-h1.json");
    assert_eq!(mark.content_sha256, content_sha256(&original));
    // The first export is the same run: refused in history 2.
    let e = s2
        .import_run(
            &parse_export(json.as_bytes(), "a.json").unwrap(),
            "a.json",
            at(1_795_600_000),
        )
        .unwrap_err();
    assert!(e.to_string().contains(&format!("as {}", in2.run_id)), "{e}");
}

#[test]
fn a_run_of_this_history_is_refused() {
    let db = TempDb::new();
    let mut store = store_with(&db, &["here-1"]);
    let json = crate::report::render(
        &store.load_run("here-1").unwrap(),
        crate::report::Format::Json,
    );
    let run = parse_export(json.as_bytes(), "mine.json").unwrap();
    let e = store
        .import_run(&run, "mine.json", at(1_795_400_000))
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("run here-1 is already in history database"),
        "{msg}"
    );
    assert!(msg.contains("as here-1 (recorded here)"), "{msg}");
    assert_eq!(e.exit_code(), 21);
}

/// What `parse_export` says of `text`, named `f.json`.
fn refusal(text: &[u8]) -> (String, i32) {
    let e = parse_export(text, "f.json").unwrap_err();
    (e.to_string(), e.exit_code())
}

#[test]
fn files_that_are_not_importable_runs_are_refused_with_why() {
    let (_, json) = exported();
    let check = |text: &[u8], parts: &[&str]| {
        let (msg, code) = refusal(text);
        assert_eq!(code, 3, "{msg}");
        assert!(msg.starts_with("cannot import f.json: "), "{msg}");
        for p in parts {
            assert!(msg.contains(p), "{p}: {msg}");
        }
        // Every refusal says how to make a file that imports.
        assert!(
            msg.contains("zmqperf report RUN --format json") || msg.contains("upgrade zmqperf"),
            "{msg}"
        );
    };
    check(b"", &["not JSON (it is empty)"]);
    check(b"  \n", &["not JSON (it is empty)"]);
    check(
        b"SQLite format 3\0rest",
        &["an SQLite database", "--db FILE"],
    );
    check(b"<!DOCTYPE html>\n<html>", &["an HTML report"]);
    check(b"id,kind,pattern\n", &["a CSV report"]);
    check(b"# zmqperf run x\n", &["a Markdown report"]);
    check(b"hello", &["it begins with \"hello\""]);
    // Cut short, as a copy that did not finish.
    let half = &json.as_bytes()[..json.len() / 2];
    check(
        half,
        &[
            "is damaged",
            "the JSON ends early",
            "copy the whole file again",
        ],
    );
    // Broken in the middle.
    let broken = json.replacen("\"status\": \"complete\"", "\"status\" \"complete\"", 1);
    check(
        broken.as_bytes(),
        &["is damaged: invalid JSON: expected `:`", "(line "],
    );
    // JSON, but not a run.
    check(b"[1, 2]", &["not a zmqperf run: it is a JSON array"]);
    check(
        br#"{"schema_version": 1, "command": "fanout", "subs_per_process": 5, "per_subscriber": []}"#,
        &["not a zmqperf run", "fan-out report"],
    );
    check(br#"{"nodes": []}"#, &["topology file"]);
    check(
        br#"{"message_size": 64, "roundtrip_count": 10}"#,
        &["compatible command"],
    );
    check(br#"{"run_id": "x"}"#, &["it has no environment, cases"]);
    let (_, flat) = exported_flat();
    let no_version = flat.replacen("\"schema_version\": 2,", "", 1);
    check(no_version.as_bytes(), &["it has no schema_version"]);
    let zero = flat.replacen("\"schema_version\": 2,", "\"schema_version\": 0,", 1);
    check(zero.as_bytes(), &["its schema_version is 0"]);
    // The envelope of another command, and one of a version before envelopes.
    let fanout = json.replacen("\"kind\": \"run\"", "\"kind\": \"fanout\"", 1);
    check(
        fanout.as_bytes(),
        &["the JSON of `zmqperf fanout`", "not a recorded run"],
    );
    let two = json.replacen("\"version\": 3,", "\"version\": 2,", 1);
    check(
        two.as_bytes(),
        &["its version is 2, and an envelope's is 3 to 3"],
    );
    // A field of the wrong type: named by its place in the run.
    let bad = json.replacen("\"message_size\": 64,", "\"message_size\": \"64\",", 1);
    check(
        bad.as_bytes(),
        &[
            "damaged or not written by zmqperf",
            "at `results.cases[0].message_size`",
            "invalid type",
        ],
    );
    let status = json.replacen("\"status\": \"complete\"", "\"status\": \"finished\"", 1);
    check(
        status.as_bytes(),
        &["at `run.status`", "'finished' is not a run's status"],
    );
}

#[test]
fn a_newer_schema_is_refused_with_the_versions() {
    let (_, json) = exported();
    let newer = json.replacen("\"version\": 3,", "\"version\": 7,", 1);
    let (msg, code) = refusal(newer.as_bytes());
    assert_eq!(code, 3);
    assert!(
        msg.contains("schema version 7, newer than this zmqperf reads (up to 3)"),
        "{msg}"
    );
    assert!(msg.contains("upgrade zmqperf on this machine"), "{msg}");
    // Even when the newer format changed the fields: the version is read first.
    let changed = newer.replacen(
        "\"status\": \"complete\"",
        "\"status\": {\"done\": true}",
        1,
    );
    assert!(refusal(changed.as_bytes())
        .0
        .contains("newer than this zmqperf reads"));
}

#[test]
fn a_file_that_cannot_be_read_is_an_io_error() {
    let db = TempDb::new();
    let e = crate::store::import::read_export(&db.dir.join("absent.json").display().to_string())
        .unwrap_err();
    assert_eq!(e.exit_code(), 11);
    assert!(e.to_string().contains("absent.json"), "{e}");
}

#[test]
fn a_layout_2_history_takes_imports_once_opened_and_reads_without_them_read_only() {
    let db = TempDb::new();
    drop(store_with(&db, &["old-1"]));
    // Make it a layout 2 file, as zmqperf wrote before imports existed.
    let conn = rusqlite::Connection::open(db.path()).unwrap();
    conn.execute_batch("DROP TABLE imports; DROP TABLE outcomes; PRAGMA user_version = 2;")
        .unwrap();
    drop(conn);
    // Read-only: read as it is.
    let ro = Store::open_read_only(db.path()).unwrap();
    assert_eq!(ro.load_run("old-1").unwrap().imported, None);
    assert!(ro.list_runs(None).unwrap()[0].imported.is_none());
    drop(ro);
    // Opened for writing: brought to the current layout, and imports work.
    let mut store = Store::open(db.path()).unwrap();
    let version: i64 = store
        .conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, crate::store::open::LAYOUT_VERSION);
    let (_, json) = exported();
    let run = parse_export(json.as_bytes(), "x.json").unwrap();
    let local = store.import_run(&run, "x.json", at(1_795_400_000)).unwrap();
    assert!(store.load_run(&local.run_id).unwrap().imported.is_some());
    assert!(store.load_run("old-1").unwrap().imported.is_none());
}
