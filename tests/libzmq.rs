//! Which libzmq is measured: the build's own (libzmq 4.3.5 from its CMake build, with CURVE),
//! the distribution's (`--libzmq system`: Debian's libzmq5, which .ci/run installs), or a
//! path; every result names it; two libraries side by side; CURVE through the suite.

mod common;

use common::*;
use serde_json::Value;

const T: u64 = 240;

fn db(name: &str) -> String {
    let p = std::env::temp_dir().join(format!("zmqperf-lib-{}-{name}.db", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p.display().to_string()
}

#[test]
fn the_version_names_the_library_and_how_it_was_built() {
    with_watchdog(T, || {
        let o = run(zp(&["--version"]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("libzmq 4.3.5 (bundled:"), "{}", o.stdout);
        for want in ["curve", "eventfd", "epoll", "libzmq's CMake", "sha256: "] {
            assert!(o.stdout.contains(want), "no {want} in {}", o.stdout);
        }
        let o = run(zp(&["--libzmq", "system", "--version"]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("(system: /"), "{}", o.stdout);
        assert!(o.stdout.contains("libzmq.so.5"), "{}", o.stdout);
        let mut c = zp(&["--version"]);
        c.env("ZMQPERF_LIBZMQ", "/nonexistent/libzmq.so.5");
        let o = run(c, T);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr.contains("/nonexistent/libzmq.so.5"),
            "{}",
            o.stderr
        );
        let o = run(zp(&["--libzmq", "newest", "inproc_lat", "64", "10"]), T);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr.contains("expected `bundled`, `system`"),
            "{}",
            o.stderr
        );
    });
}

#[test]
fn a_run_on_the_system_library_says_so_in_every_result() {
    with_watchdog(T, || {
        let db = db("system");
        let o = run(
            zp(&[
                "--libzmq",
                "system",
                "run",
                "--quick",
                "--patterns",
                "reqrep,pushpull",
                "--transports",
                "inproc,tcp",
                "--no-floor",
                "--db",
                &db,
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        // The roles ran in child processes too (tcp) and loaded the same library.
        let o = run(zp(&["show", "last", "--format", "json", "--db", &db]), T);
        let run_json: Value = serde_json::from_str(&o.stdout).unwrap();
        let lib = &run_json["environment"]["libzmq"];
        assert_eq!(lib["source"], "system", "{lib}");
        assert!(lib["path"].as_str().unwrap().contains("libzmq.so.5"));
        assert_eq!(lib["sha256"].as_str().unwrap().len(), 64);
        assert_eq!(run_json["cases"].as_array().unwrap().len(), 4);
        assert!(run_json["cases"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["error"].is_null()));
        let o = run(zp(&["show", "last", "--db", &db]), T);
        assert!(o.stdout.contains("(system: /"), "{}", o.stdout);
        // The same on the bundled library, then the compare names the difference.
        let o = run(
            zp(&[
                "run",
                "--quick",
                "--patterns",
                "reqrep,pushpull",
                "--transports",
                "inproc,tcp",
                "--no-floor",
                "--db",
                &db,
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let o = run(zp(&["compare", "last~1", "last", "--db", &db]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout.contains("libzmq library differs: system"),
            "{}",
            o.stdout
        );
        let _ = std::fs::remove_file(&db);
    });
}

#[test]
fn two_libraries_interleaved_in_one_command() {
    with_watchdog(T, || {
        let db = db("vs");
        let o = run(
            zp(&[
                "run",
                "--vs-libzmq",
                "system",
                "--patterns",
                "reqrep,pushpull",
                "--transports",
                "tcp",
                "--sizes",
                "64",
                "--count",
                "500",
                "--repetitions",
                "2",
                "--no-floor",
                "--db",
                &db,
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout.contains("A: libzmq 4.3.5 (bundled"),
            "{}",
            o.stdout
        );
        assert!(o.stdout.contains("B: libzmq 4.3.4 (system"), "{}", o.stdout);
        for case in ["latency/reqrep/tcp/64", "throughput/pushpull/tcp/64"] {
            let line = o
                .stdout
                .lines()
                .find(|l| l.starts_with(case))
                .unwrap_or_else(|| panic!("no {case} in {}", o.stdout));
            assert!(line.contains('['), "no ratio interval: {line}");
        }
        // Rounds alternate which library goes first.
        assert!(o.stderr.contains("round 2/2: B"), "{}", o.stderr);
        // Both runs are recorded, each with two repetitions per case.
        let o = run(zmqperf_json(&db, "last"), T);
        let b: Value = serde_json::from_str(&o.stdout).unwrap();
        assert_eq!(b["environment"]["libzmq"]["source"], "system");
        assert_eq!(b["cases"][0]["repetitions"].as_array().unwrap().len(), 2);
        let o = run(zmqperf_json(&db, "last~1"), T);
        let a: Value = serde_json::from_str(&o.stdout).unwrap();
        assert_eq!(a["environment"]["libzmq"]["source"], "bundled");
        let _ = std::fs::remove_file(&db);
    });
}

fn zmqperf_json(db: &str, which: &str) -> std::process::Command {
    zp(&["show", which, "--format", "json", "--db", db])
}

#[test]
fn curve_against_null_side_by_side_in_one_run() {
    with_watchdog(T, || {
        let db = db("curve");
        let o = run(
            zp(&[
                "run",
                "--security",
                "null,curve",
                "--patterns",
                "pushpull,reqrep",
                "--transports",
                "inproc,tcp",
                "--sizes",
                "1KiB",
                "--count",
                "2000",
                "--repetitions",
                "2",
                "--no-floor",
                "--db",
                &db,
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        for id in [
            "throughput/pushpull[curve]/tcp/1024",
            "latency/reqrep[curve]/tcp/1024",
        ] {
            assert!(o.stdout.contains(id), "no {id} in {}", o.stdout);
        }
        assert!(
            !o.stdout.contains("[curve]/inproc"),
            "inproc has no handshake: {}",
            o.stdout
        );
        assert!(o.stdout.contains("Security cost"), "{}", o.stdout);
        let o = run(zp(&["report", "last", "--format", "html", "--db", &db]), T);
        assert!(
            o.stdout.contains("<h2>Security cost"),
            "no security table in the HTML"
        );
        assert!(o.stdout.contains("CURVE"));
        let _ = std::fs::remove_file(&db);
    });
}
