//! Text output at 80 columns: every command's text (and its errors and help) laid out with
//! `--width 80` has no line longer than 80 characters; `COLUMNS` does the same; files and
//! pipes keep the 120-column layout.

mod common;

use common::*;

const W: usize = 80;
const T: u64 = 120;

/// The lines of `text` longer than `max`, with their lengths.
fn too_long(text: &str, max: usize) -> Vec<String> {
    text.lines()
        .filter(|l| l.chars().count() > max)
        .map(|l| format!("[{}] {l}", l.chars().count()))
        .collect()
}

/// Runs `args` with `--width 80` and checks both streams; returns the output.
fn at_80(args: &[&str], ok_codes: &[i32]) -> Output {
    let mut all = args.to_vec();
    all.extend(["--width", "80"]);
    let o = run(zp(&all), T);
    assert!(
        o.code.is_some_and(|c| ok_codes.contains(&c)),
        "{args:?} exited {:?}:\n{}",
        o.code,
        o.stderr
    );
    for (name, text) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        let long = too_long(text, W);
        assert!(
            long.is_empty(),
            "{args:?}: {} lines of {name} longer than {W}:\n{}",
            long.len(),
            long.join("\n")
        );
    }
    o
}

fn run_ids(db: &str) -> Vec<String> {
    let o = run(zp(&["history", "--db", db, "--format", "json"]), T);
    let runs = results(&o.stdout)["runs"]
        .as_array()
        .expect("a list of runs")
        .clone();
    runs.iter()
        .map(|r| r["run_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_run_commands_fit_80_columns() {
    with_watchdog(400, || {
        let db = fresh_db("width-run");
        let long_cmd = [
            "run",
            "--patterns",
            "reqrep,pushpull,pubsub",
            "--transports",
            "inproc,ipc,tcp",
            "--sizes",
            "64,1024,65536",
            "--count",
            "300",
            "--repetitions",
            "2",
            "--db",
            &db,
        ];
        let o = at_80(&long_cmd, &[0]);
        // The report's grid is cut into blocks of sizes rather than wrapped.
        assert!(o.stdout.contains("size (B)"), "{}", o.stdout);
        let topo = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/topologies/acsflix-3x1.toml"
        );
        at_80(
            &[
                "run",
                topo,
                "--count",
                "300",
                "--repetitions",
                "1",
                "--db",
                &db,
            ],
            &[0],
        );
        let ids = run_ids(&db);
        assert_eq!(ids.len(), 2, "{ids:?}");
        at_80(&["history", "--db", &db], &[0]);
        at_80(&["show", "last", "--db", &db], &[0]);
        at_80(&["show", "last", "--db", &db], &[0]);
        at_80(&["report", &ids[1], "--db", &db, "--format", "table"], &[0]);
        at_80(&["compare", &ids[1], &ids[1], "--db", &db], &[0]);
        at_80(&["compare", &ids[1], &ids[0], "--db", &db], &[0]);
        at_80(
            &["compare", &ids[1], &ids[0], "--by-host", "--db", &db],
            &[0],
        );
        // An error names a long path, and still fits.
        let missing = format!("{}/no/such/folder/with/a/rather/long/name/history.db", db);
        at_80(&["show", "last", "--db", &missing], &[13]);
    });
}

#[test]
fn diagnose_fanout_and_the_matrix_fit_80_columns() {
    with_watchdog(400, || {
        let db = fresh_db("width-more");
        at_80(&["diagnose", "--quick", "--db", &db], &[0]);
        let o = at_80(
            &[
                "fanout", "-c", "2", "-s", "3", "-n", "10", "-t", "5", "-p", "4", "--db", &db,
            ],
            &[0],
        );
        assert!(
            o.stdout.contains("HARMONIC") || o.stdout.contains("harmonic"),
            "{}",
            o.stdout
        );
        let o = at_80(
            &[
                "matrix",
                "--quick",
                "--impl",
                "zmqperf,c,pyzmq,zeromq-rs",
                "--patterns",
                "reqrep",
                "--db",
                &db,
            ],
            &[0],
        );
        // Each grid has every implementation as a row (its columns in blocks when they
        // would be wider: see the unit test of report::matrix).
        for name in ["zmqperf", "c", "pyzmq", "zeromq-rs"] {
            let rows = o
                .stdout
                .lines()
                .filter(|l| l.starts_with(&format!("  {name} ")));
            assert!(rows.count() >= 2, "{name} in:\n{}", o.stdout);
        }
    });
}

#[test]
fn the_compatible_commands_help_and_the_rest_fit_80_columns() {
    with_watchdog(300, || {
        at_80(&["inproc_lat", "64", "1000"], &[0]);
        at_80(&["inproc_thr", "64", "10000"], &[0]);
        let ep = ipc_endpoint();
        let l = Proc::spawn(
            zp(&[
                "local_thr",
                &ep,
                "64",
                "2000",
                "--width",
                "80",
                "--timeout",
                "10s",
            ]),
            T,
        );
        at_80(&["remote_thr", &ep, "64", "2000", "--timeout", "10s"], &[0]);
        let l = l.finish();
        assert_eq!(l.code, Some(0), "{l:?}");
        assert!(too_long(&l.stdout, W).is_empty() && too_long(&l.stderr, W).is_empty());
        let sock = ipc_endpoint();
        at_80(&["check_sendrecv", "2000", "bind", "pipe", &sock], &[0]);
        let topo = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/topologies/acsflix-3x3.toml"
        );
        at_80(&["topology", "check", topo], &[0]);
        at_80(&["peers", "list"], &[0]);
        at_80(&["curve-keys"], &[0]);
        // Every command's help, and the top one.
        let o = at_80(&["--help"], &[0]);
        let commands: Vec<String> = o
            .stdout
            .lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next().map(String::from))
            .filter(|c| c != "help")
            .collect();
        assert!(commands.len() > 20, "{commands:?}");
        for c in &commands {
            at_80(&[c, "--help"], &[0]);
        }
        // An error with a long explanation.
        at_80(
            &[
                "local_thr",
                "tcp://127.0.0.1:1",
                "64",
                "10",
                "--timeout",
                "1s",
            ],
            &[3, 4, 5, 6],
        );
    });
}

#[test]
fn columns_sets_the_width_and_files_keep_120() {
    with_watchdog(200, || {
        let db = fresh_db("width-env");
        let o = run(inproc_run("reqrep", "200", &db, &[]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let mut c = zp(&["show", "last", "--db", &db]);
        c.env("COLUMNS", "80");
        let narrow = run(c, T);
        assert!(too_long(&narrow.stdout, 80).is_empty(), "{}", narrow.stdout);
        let wide = run(zp(&["show", "last", "--db", &db]), T);
        let longest = wide
            .stdout
            .lines()
            .map(|l| l.chars().count())
            .max()
            .unwrap();
        assert!(
            longest > 80 && longest <= 120,
            "{longest}:\n{}",
            wide.stdout
        );
        // The flag wins over COLUMNS.
        let mut c = zp(&["show", "last", "--db", &db, "--width", "100"]);
        c.env("COLUMNS", "60");
        let o = run(c, T);
        let longest = o.stdout.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(longest > 80 && longest <= 100, "{longest}:\n{}", o.stdout);
    });
}
