//! What happens during and after a run when something outside goes wrong: a closed or full
//! stdout, output paths, the compare gate, a live ipc path, a locked history, runs that
//! failed or were interrupted. Each under a watchdog, each on its own history file.

mod common;

use common::*;

const T: u64 = 120;

/// A recorded run in a fresh history, for the output tests.
fn history_with_a_run(name: &str) -> String {
    let db = std::env::temp_dir().join(format!("zmqperf-out-{}-{name}.db", std::process::id()));
    let _ = std::fs::remove_file(&db);
    let db = db.display().to_string();
    let o = run(inproc_run("reqrep", "200", &db, &[]), T);
    assert_eq!(o.code, Some(0), "{o:?}");
    db
}

#[test]
fn a_closed_pipe_ends_quietly_and_a_full_disk_is_a_clear_error() {
    with_watchdog(T, || {
        let db = history_with_a_run("pipe");
        // The reader goes away before anything is written (`| head -c 0`).
        let mut child = zp(&["show", "last", "--db", &db, "--format", "html"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        // A full disk: exit 11 with what failed and what to do; the run stays recorded.
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = zp(&["show", "last", "--db", &db])
            .stdout(full)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(11), "{err}");
        assert!(
            err.contains("No space left on device") && err.contains("-o"),
            "{err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        let o = run(zp(&["history", "--db", &db]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("complete"), "{}", o.stdout);
        // Asking for no runs is a mistake, not an empty history.
        let o = run(zp(&["history", "--db", &db, "--limit", "0"]), T);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(o.stderr.contains("--limit"), "{}", o.stderr);
        let _ = std::fs::remove_file(&db);
    });
}

#[test]
fn output_paths_are_checked_before_measuring_and_never_the_history() {
    with_watchdog(T, || {
        let db = history_with_a_run("outpath");
        for args in [
            vec!["report", "last", "--db", &db, "-o", &db],
            vec![
                "run",
                "--db",
                &db,
                "--format",
                "json",
                "-o",
                &db,
                "--patterns",
                "reqrep",
            ],
        ] {
            let o = run(zp(&args), 20);
            assert_eq!(o.code, Some(3), "{args:?}: {o:?}");
            assert!(o.stderr.contains("history database"), "{}", o.stderr);
        }
        // The history is intact.
        let o = run(zp(&["show", "last", "--db", &db, "--format", "json"]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        // A folder that does not exist is refused before any case runs.
        let t0 = std::time::Instant::now();
        let o = run(
            zp(&[
                "run",
                "--no-history",
                "-o",
                "/nonexistent-zmqperf/r.html",
                "--patterns",
                "reqrep",
            ]),
            20,
        );
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(o.stderr.contains("does not exist"), "{}", o.stderr);
        assert!(
            !o.stderr.contains("[1/"),
            "nothing was measured: {}",
            o.stderr
        );
        assert!(t0.elapsed() < std::time::Duration::from_secs(10));
        let _ = std::fs::remove_file(&db);
    });
}

/// Saves three complete runs built from the fixture's figures (so no measurement can make a
/// case look regressed): the first has two cases, the second only the first of them, the
/// third one case under a name the others do not have.
fn history_for_the_gate(db: &str) {
    let mut store = zmqperf::store::Store::open(db).unwrap();
    let fixture = zmqperf::report::fixture::sample_run();
    let mut save = |id: &str, cases: Vec<zmqperf::model::CaseResult>| {
        let mut r = fixture.clone();
        r.run_id = id.into();
        r.status = zmqperf::model::RunStatus::Complete;
        r.cases = cases;
        store.save_run(&r).unwrap();
    };
    save("gate-a", fixture.cases[..2].to_vec());
    save("gate-b", fixture.cases[..1].to_vec());
    let mut other = fixture.cases[0].clone();
    other.id = format!("{}-renamed", other.id);
    save("gate-c", vec![other]);
}

#[test]
fn the_gate_fails_when_it_cannot_judge_everything() {
    with_watchdog(T, || {
        let db = std::env::temp_dir().join(format!("zmqperf-gate-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&db);
        let db = db.display().to_string();
        history_for_the_gate(&db);
        let gate = |a: &str, b: &str, extra: &[&str]| {
            // 30%: the fixture's p99 interval is too wide to decide 5% (INCONCLUSIVE).
            let mut args = vec!["compare", a, b, "--fail-above", "30%", "--db", &db];
            args.extend_from_slice(extra);
            run(zp(&args), T)
        };
        let o = gate("gate-b", "gate-c", &[]);
        assert_eq!(o.code, Some(18), "{o:?}");
        assert!(
            o.stdout
                .contains("INCOMPLETE: the runs have no case in common"),
            "{}",
            o.stdout
        );
        assert!(!o.stdout.contains("PASS"), "{}", o.stdout);
        let o = gate("gate-a", "gate-b", &[]);
        assert_eq!(o.code, Some(18), "{o:?}");
        assert!(
            o.stdout.contains("1 of the baseline's cases are missing"),
            "{}",
            o.stdout
        );
        // Opting out: the gate passes on what it could compare, and says what it allowed.
        let o = gate("gate-a", "gate-b", &["--allow-incomplete"]);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout.contains("PASS") && o.stdout.contains("allowed although"),
            "{}",
            o.stdout
        );
        // Without a threshold, nothing is gated.
        let o = run(zp(&["compare", "gate-b", "gate-c", "--db", &db]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let _ = std::fs::remove_file(&db);
    });
}

#[test]
fn a_second_binder_on_a_live_ipc_path_is_refused() {
    with_watchdog(T, || {
        let ep = ipc_endpoint();
        let first = Proc::spawn(zp(&["local_thr", &ep, "64", "100", "--timeout", "3s"]), T);
        // The first binder is ready when its socket file exists.
        let path = ep.trim_start_matches("ipc://").to_string();
        let t0 = std::time::Instant::now();
        while !std::path::Path::new(&path).exists()
            && t0.elapsed() < std::time::Duration::from_secs(5)
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let o = run(zp(&["local_thr", &ep, "64", "100", "--timeout", "3s"]), 20);
        assert_eq!(o.code, Some(5), "{o:?}");
        assert!(o.stderr.contains("address already in use"), "{}", o.stderr);
        // The first one still owns the path: a sender reaches it.
        let s = run(zp(&["remote_thr", &ep, "64", "100"]), 20);
        assert_eq!(s.code, Some(0), "{s:?}");
        let f = first.finish();
        assert_eq!(f.code, Some(0), "{f:?}");
        assert!(f.stdout.contains("message count: 100"), "{}", f.stdout);
    });
}

#[test]
fn a_history_locked_during_a_run_keeps_every_case_and_the_report() {
    with_watchdog(T, || {
        let db = history_with_a_run("lock");
        let p = Proc::spawn(
            zp(&[
                "run",
                "--patterns",
                "reqrep,pair-lat",
                "--transports",
                "inproc",
                "--sizes",
                "64",
                "--count",
                "3000",
                "--repetitions",
                "2",
                "--no-floor",
                "--db",
                &db,
                "--format",
                "json",
            ]),
            T,
        );
        // As soon as the run has begun in the history, another process locks it for 12 s:
        // longer than a write waits (10 s), shorter than the end of the run retries (30 s).
        let conn = rusqlite::Connection::open(&db).unwrap();
        let t0 = std::time::Instant::now();
        loop {
            let runs: i64 = conn
                .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
                .unwrap_or(0);
            if runs >= 2 {
                break;
            }
            assert!(
                t0.elapsed() < std::time::Duration::from_secs(20),
                "the run never began"
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
        std::thread::sleep(std::time::Duration::from_secs(12));
        conn.execute_batch("COMMIT").unwrap();
        let o = p.finish();
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stderr
                .contains("another process held the database locked"),
            "the lock was met and named: {}",
            o.stderr
        );
        let v = envelope(&o.stdout);
        assert_eq!(v["results"]["cases"].as_array().unwrap().len(), 2);
        let o = run(zp(&["show", "last", "--db", &db, "--format", "json"]), T);
        let h = envelope(&o.stdout);
        assert_eq!(h["run"]["status"], "complete", "{}", o.stdout);
        assert_eq!(h["results"]["cases"].as_array().unwrap().len(), 2);
        let _ = std::fs::remove_file(&db);
    });
}

#[test]
fn a_run_whose_every_case_failed_has_its_own_exit_code() {
    with_watchdog(T, || {
        // Far too many round trips for the case timeout: every repetition overruns.
        let o = run(
            zp(&[
                "run",
                "--no-history",
                "--patterns",
                "reqrep",
                "--transports",
                "inproc",
                "--sizes",
                "64",
                "--count",
                "100M",
                "--repetitions",
                "1",
                "--case-timeout",
                "300ms",
                "--no-floor",
            ]),
            T,
        );
        assert_eq!(o.code, Some(19), "{o:?}");
        assert!(o.stderr.contains("every case failed"), "{}", o.stderr);
        assert!(
            o.stdout.contains("Failed cases"),
            "the report comes first: {}",
            o.stdout
        );
    });
}

#[test]
fn a_publisher_nobody_heard_and_a_rate_too_short_to_mean_much_are_said() {
    with_watchdog(T, || {
        let o = run(
            zp(&[
                "pub",
                "-h",
                "tcp://127.0.0.1:*",
                "-t",
                "10",
                "-n",
                "1",
                "-p",
                "2",
                "--wait",
                "200ms",
            ]),
            T,
        );
        assert_eq!(o.code, Some(16), "{o:?}");
        assert!(
            o.stderr.contains("no subscriber had subscribed"),
            "{}",
            o.stderr
        );
        let o = run(zp(&["inproc_thr", "64", "2"]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout.starts_with("message size: 64 [B]\n"),
            "{}",
            o.stdout
        );
        assert!(o.stderr.contains("too short for a rate"), "{}", o.stderr);
    });
}

/// A history this user may not write (a shared or archived file, in a folder it may not
/// write either) is still read by history, show, report and compare, and left unchanged.
/// As root, whom permissions do not stop, the commands run as the user nobody.
#[test]
fn a_read_only_history_can_be_read() {
    use std::os::unix::fs::PermissionsExt;
    with_watchdog(T, || {
        let db = history_with_a_run("ro-src");
        let dir = std::env::temp_dir().join(format!("zmqperf-ro-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let ro = dir.join("h.db");
        std::fs::copy(&db, &ro).unwrap();
        let before = std::fs::read(&ro).unwrap();
        let set = |p: &std::path::Path, mode| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
        };
        set(&ro, 0o444);
        set(&dir, 0o555);
        let ro_s = ro.display().to_string();
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let as_reader = |args: &[&str]| {
            let mut cmd = if root {
                let mut c = std::process::Command::new("setpriv");
                c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                    .arg(env!("CARGO_BIN_EXE_zmqperf"));
                c
            } else {
                std::process::Command::new(env!("CARGO_BIN_EXE_zmqperf"))
            };
            cmd.args(args).args(["--db", &ro_s]);
            run(cmd, T)
        };
        let outs = [
            as_reader(&["history"]),
            as_reader(&["show", "last"]),
            as_reader(&["report", "last", "--format", "json"]),
            as_reader(&["compare", "last", "last"]),
        ];
        set(&dir, 0o755);
        set(&ro, 0o644);
        for o in &outs {
            assert_eq!(o.code, Some(0), "{o:?}");
        }
        assert!(outs[0].stdout.contains("complete"), "{}", outs[0].stdout);
        assert_eq!(
            envelope(&outs[2].stdout)["kind"],
            "run",
            "{}",
            outs[2].stdout
        );
        assert_eq!(
            std::fs::read(&ro).unwrap(),
            before,
            "the file was not changed"
        );
        let _ = std::fs::remove_dir_all(&dir);
    });
}
