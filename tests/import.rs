//! Runs from another machine in this history, end to end: a run exported from one history
//! with `report --format json`, imported into a second (from a file and from standard
//! input), compared with a run made there (the host differences named before the table),
//! and the files `import` refuses: cut short, foreign, of a newer schema, already
//! imported. Temp histories only (ZMQPERF_DB), each command under a deadline.

mod common;

use common::*;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

const T: u64 = 180;

/// A fresh temp folder of this test.
fn folder(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zmqperf-import-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn zdb(args: &[&str], db: &PathBuf) -> Command {
    let mut c = zmqperf();
    c.args(args).env("ZMQPERF_DB", db);
    c
}

/// The fixture's run as if made on another machine: `far-away`, another CPU, kernel and
/// core count, recorded in the history `db`.
fn far_run(db: &PathBuf) -> zmqperf::model::RunResult {
    let mut r = zmqperf::report::fixture::sample_run();
    r.environment.hostname = "far-away".into();
    r.environment.cpu_model = "Far CPU 9000".into();
    r.environment.kernel = "5.10.0-far".into();
    r.environment.cores = 64;
    let mut s = zmqperf::store::Store::open(db).unwrap();
    s.save_run(&r).unwrap();
    r
}

#[test]
fn a_run_from_another_machine_is_imported_and_compared_with_a_local_run() {
    with_watchdog(T, || {
        let dir = folder("main");
        let (h1, h2) = (dir.join("far.db"), dir.join("here.db"));
        let far = far_run(&h1);
        let file = dir.join("far-run.json");
        let file_s = file.display().to_string();

        // Exported on the far machine.
        let o = run(
            zdb(
                &["report", &far.run_id, "--format", "json", "-o", &file_s],
                &h1,
            ),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");

        // A run made here: one case the far run has too (latency/reqrep/tcp/64).
        let o = run(
            zdb(
                &[
                    "run",
                    "--patterns",
                    "reqrep",
                    "--transports",
                    "tcp",
                    "--sizes",
                    "64",
                    "--count",
                    "300",
                    "--warmup",
                    "20",
                    "--repetitions",
                    "2",
                ],
                &h2,
            ),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");

        // Imported.
        let o = run(zdb(&["import", &file_s], &h2), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout.contains(&format!(
                "imported run {} (from far-away, started {}, 10 cases, 2 findings) as ",
                far.run_id, far.started_at
            )),
            "{}",
            o.stdout
        );
        let o = run(zdb(&["history"], &h2), T);
        assert!(o.stdout.contains("complete, imported"), "{}", o.stdout);
        assert!(o.stdout.contains("far-away / Far CPU 9000"), "{}", o.stdout);
        let o = run(zdb(&["show", "last"], &h2), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout
                .contains(&format!("imported  run {} of far-away, from ", far.run_id))
                && o.stdout.contains(&file_s),
            "{}",
            o.stdout
        );

        // Compared with the local run: what differs between the machines comes first.
        let o = run(zdb(&["compare", "last", "last~1"], &h2), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let here = zmqperf::host::hostname();
        let table = o.stdout.find("\ncase ").expect("the table");
        for note in [
            format!("note: host differs: far-away (A), {here} (B)"),
            "note: CPU differs: Far CPU 9000 (A), ".to_string(),
            "note: kernel differs: 5.10.0-far (A), ".to_string(),
            "note: cores differs: 64 (A), ".to_string(),
        ] {
            let at = o
                .stdout
                .find(&note)
                .unwrap_or_else(|| panic!("{note}: {}", o.stdout));
            assert!(at < table, "{}", o.stdout);
        }
        assert!(
            o.stdout.contains("latency/reqrep/tcp/64  latency_us"),
            "{}",
            o.stdout
        );

        // The two machines side by side.
        let o = run(zdb(&["compare", "--by-host", "last", "last~1"], &h2), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("far-away"), "{}", o.stdout);
        assert!(o.stdout.contains(&here), "{}", o.stdout);
        // The case both machines ran has a figure in both columns.
        let row = o
            .stdout
            .lines()
            .find(|l| l.trim_start().starts_with("reqrep ") && l.contains(" tcp "))
            .unwrap_or_else(|| panic!("{}", o.stdout));
        assert_eq!(row.matches(" ±").count(), 2, "{row}");

        // The same file again: refused, naming the run that has it.
        let local = run(zdb(&["history", "--limit", "1"], &h2), T).stdout;
        let local_id = local
            .lines()
            .nth(1)
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .to_string();
        let o = run(zdb(&["import", &file_s], &h2), T);
        assert_eq!(o.code, Some(21), "{o:?}");
        assert!(
            o.stderr.contains(&format!(
                "cannot import {file_s}: run {} is already in history database",
                far.run_id
            )) && o
                .stderr
                .contains(&format!("as {local_id} (imported from {file_s} at ")),
            "{}",
            o.stderr
        );
        // And through standard input, as from `ssh b zmqperf report ... |`.
        let text = std::fs::read(&file).unwrap();
        let mut child = zdb(&["import", "-"], &h2)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&text).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(21));
        assert!(String::from_utf8_lossy(&out.stderr).contains("cannot import standard input: run"));
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn damaged_foreign_and_newer_files_are_refused() {
    with_watchdog(T, || {
        let dir = folder("refused");
        let (h1, h2) = (dir.join("far.db"), dir.join("here.db"));
        let far = far_run(&h1);
        let json = run(zdb(&["report", &far.run_id, "--format", "json"], &h1), T).stdout;
        let write = |name: &str, text: &[u8]| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        };
        let refused = |file: &str, code: i32, parts: &[&str]| {
            let o = run(zdb(&["import", file], &h2), T);
            assert_eq!(o.code, Some(code), "{o:?}");
            assert!(
                o.stderr.contains(&format!("cannot import {file}: ")),
                "{}",
                o.stderr
            );
            for p in parts {
                assert!(o.stderr.contains(p), "{p}: {}", o.stderr);
            }
        };
        let cut = write("cut.json", &json.as_bytes()[..json.len() * 2 / 3]);
        refused(
            &cut,
            3,
            &[
                "it is damaged: the JSON ends early",
                "copy the whole file again",
            ],
        );
        // The history file itself, as a user might try.
        refused(
            &h1.display().to_string(),
            3,
            &[
                "it is not JSON (an SQLite database",
                "give it to `zmqperf report` with --db FILE",
            ],
        );
        let fanout = write(
            "fanout.json",
            br#"{"schema_version": 1, "command": "fanout", "subs_per_process": 1, "per_subscriber": []}"#,
        );
        refused(
            &fanout,
            3,
            &["it is not a zmqperf run: it is a fan-out report"],
        );
        let newer = write(
            "newer.json",
            json.replacen("\"version\": 3,", "\"version\": 4,", 1)
                .as_bytes(),
        );
        refused(
            &newer,
            3,
            &["schema version 4, newer than this zmqperf reads (up to 3)"],
        );
        let absent = dir.join("absent.json").display().to_string();
        refused(&absent, 11, &["No such file"]);
        // Nothing of these reached the history; a good file still imports.
        let good = write("good.json", json.as_bytes());
        let o = run(zdb(&["import", &good], &h2), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let o = run(zdb(&["history"], &h2), T);
        assert_eq!(o.stdout.lines().count(), 2, "{}", o.stdout);
        // `compare` needs two runs unless --by-host, which takes no gate.
        let o = run(zdb(&["compare", "last"], &h2), T);
        assert_eq!(o.code, Some(2), "{o:?}");
        let o = run(
            zdb(&["compare", "--by-host", "last", "--fail-above", "5%"], &h2),
            T,
        );
        assert_eq!(o.code, Some(2), "{o:?}");
        let o = run(zdb(&["compare", "--by-host", "last"], &h2), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn show_prints_the_host_pairs_of_an_imported_run_across_hosts() {
    with_watchdog(T, || {
        let dir = folder("pairs");
        let db = dir.join("here.db");
        let run_across = zmqperf::report::fixture::host_pairs_run();
        let file = dir.join("pairs.json");
        std::fs::write(
            &file,
            zmqperf::report::render(&run_across, zmqperf::report::Format::Json),
        )
        .unwrap();
        let o = run(zdb(&["import", &file.display().to_string()], &db), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let o = run(zdb(&["show", "last"], &db), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout.contains("Host pairs\n----------\n"),
            "{}",
            o.stdout
        );
        assert!(
            o.stdout.contains(
                "  a       b            10.0.0.2 on veth-b mtu 1500 10000 Mb/s  reqrep[a->b]"
            ),
            "{}",
            o.stdout
        );
        assert!(
            o.stdout.contains("host c    ns-c, AMD EPYC 7763"),
            "{}",
            o.stdout
        );
        let o = run(zdb(&["report", "last", "--format", "csv"], &db), T);
        assert!(o.stdout.contains(",a->b,ping=a;echo=b\n"), "{}", o.stdout);
        let _ = std::fs::remove_dir_all(&dir);
    });
}
