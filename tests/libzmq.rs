//! Which libzmq is measured: the build's own (libzmq 4.3.5 from its CMake build, with CURVE),
//! the distribution's (`--libzmq system`: Debian's libzmq5, which .ci/run installs), or a
//! path; every result names it; two libraries side by side; CURVE through the suite.

mod common;

use common::*;

const T: u64 = 240;

fn db(name: &str) -> String {
    fresh_db(&format!("lib-{name}"))
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
        // The draft API and ws:// (build.rs), as zmq_has says them; no wss (no GnuTLS).
        let caps = o
            .stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix("capabilities (zmq_has): "))
            .unwrap_or_else(|| panic!("no capabilities line in {}", o.stdout));
        let caps: Vec<&str> = caps.split(", ").collect();
        for want in ["ipc", "curve", "draft", "ws"] {
            assert!(caps.contains(&want), "no {want} in {caps:?}");
        }
        assert!(!caps.contains(&"wss"), "{caps:?}");
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
        // The same quick suite, on the library named first.
        let quick = |lib: &str| {
            let args = [
                "--libzmq",
                lib,
                "run",
                "--quick",
                "--patterns",
                "reqrep,pushpull",
                "--transports",
                "inproc,tcp",
                "--no-floor",
                "--db",
                &db,
            ];
            let o = run(zp(&args), T);
            assert_eq!(o.code, Some(0), "{o:?}");
        };
        quick("system");
        // The roles ran in child processes too (tcp) and loaded the same library.
        let o = run(zp(&["show", "last", "--format", "json", "--db", &db]), T);
        let run_json = envelope(&o.stdout);
        let lib = &run_json["environment"]["libzmq"];
        assert_eq!(lib["source"], "system", "{lib}");
        assert!(lib["path"].as_str().unwrap().contains("libzmq.so.5"));
        assert_eq!(lib["sha256"].as_str().unwrap().len(), 64);
        assert_eq!(run_json["results"]["cases"].as_array().unwrap().len(), 4);
        assert!(run_json["results"]["cases"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["error"].is_null()));
        let o = run(zp(&["show", "last", "--db", &db]), T);
        assert!(o.stdout.contains("(system: /"), "{}", o.stdout);
        // The same on the bundled library, then the compare names the difference.
        quick("bundled");
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
        let b = envelope(&o.stdout);
        assert_eq!(b["environment"]["libzmq"]["source"], "system");
        assert_eq!(
            b["results"]["cases"][0]["repetitions"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        let o = run(zmqperf_json(&db, "last~1"), T);
        let a = envelope(&o.stdout);
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

/// A topology file with its own CURVE keys runs with them; a key that is not 40 Z85
/// characters, or keys without `security = "curve"`, are refused before anything starts,
/// naming the node and the field.
#[test]
fn a_topology_with_given_curve_keys_and_bad_ones() {
    with_watchdog(T, || {
        let keys = r#"curve_keys = { server_public = "DX4nh=yUn{-9ugra0X3Src4SU-4xTgqxcYY.+<SH", server_secret = "{X}#>t#jRGaQ}gMhv=30r(Mw+87YGs+5%kh=i@f8", client_public = "<n^oA}I:66W+*ds3tAmi1+KJzv-}k&fC2aA5Bj0K", client_secret = "9R9bV}[6z6DC-%$!jTVTKvWc=LEL{4i4gzUe$@Zx" }"#;
        let file = |name: &str, sink_opts: &str, source_opts: &str| {
            let p = std::env::temp_dir()
                .join(format!("zmqperf-lib-{}-{name}.toml", std::process::id()));
            std::fs::write(
                &p,
                format!(
                    "name = \"{name}\"\n\n[[node]]\nname = \"sink\"\nrole = \"sink\"\nsocket = {{ type = \"PULL\", bind = [\"auto\"], {sink_opts} }}\n\n[[node]]\nname = \"source\"\nrole = \"source\"\nsocket = {{ type = \"PUSH\", connect = [\"sink\"], {source_opts} }}\n"
                ),
            )
            .unwrap();
            p.display().to_string()
        };
        let curve = format!("security = \"curve\", {keys}");
        let good = file("given-keys", &curve, &curve);
        let db = db("given");
        let o = run(
            zp(&[
                "run",
                &good,
                "--transports",
                "tcp",
                "--sizes",
                "64",
                "--count",
                "2000",
                "--repetitions",
                "1",
                "--db",
                &db,
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let o = run(zp(&["show", "last", "--format", "json", "--db", &db]), T);
        let v = envelope(&o.stdout);
        assert_eq!(
            v["results"]["cases"][0]["summary"]["lost"], 0,
            "{}",
            o.stdout
        );
        assert!(v["results"]["cases"][0]["error"].is_null(), "{}", o.stdout);

        let short = curve.replace("9R9bV}", "9R9bV");
        let bad = file("short-key", &curve, &short);
        let o = run(zp(&["run", &bad, "--no-history"]), T);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr
                .contains("node 'source': socket.curve_keys.client_secret"),
            "{}",
            o.stderr
        );
        let unused = file("unused-keys", keys, keys);
        let o = run(zp(&["run", &unused, "--no-history"]), T);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr.contains("used only with `security = \"curve\"`"),
            "{}",
            o.stderr
        );
        // PLAIN on one side only never completes the handshake: the case fails, named.
        let half = file("half-plain", "security = \"plain\"", "");
        let o = run(
            zp(&[
                "run",
                &half,
                "--transports",
                "tcp",
                "--count",
                "100",
                "--repetitions",
                "1",
                "--timeout",
                "2s",
                "--no-history",
            ]),
            T,
        );
        assert_eq!(o.code, Some(19), "{o:?}");
        assert!(o.stdout.contains("security mechanism"), "{}", o.stdout);
        for p in [good, bad, unused, half] {
            let _ = std::fs::remove_file(p);
        }
        let _ = std::fs::remove_file(&db);
    });
}

/// PLAIN between the two compatible latency commands, and the mechanism in the JSON.
#[test]
fn plain_between_the_compatible_commands() {
    with_watchdog(T, || {
        let ep = free_tcp_endpoint();
        let l = Proc::spawn(
            zp(&["local_lat", &ep, "64", "500", "--security", "plain"]),
            T,
        );
        let r = run(
            zp(&[
                "remote_lat",
                &ep,
                "64",
                "500",
                "--security",
                "plain",
                "--json",
            ]),
            T,
        );
        assert_eq!(l.finish().code, Some(0));
        assert_eq!(r.code, Some(0), "{r:?}");
        let v = results(&r.stdout);
        assert_eq!(v["security"], "plain");
        assert_eq!(v["roundtrip_count"], 500);
    });
}

/// Keys of one's own for the compatible commands: `zmqperf curve-keys` writes them, both
/// sides read them with --curve-keys; a side with other keys fails the handshake (exit 9),
/// and keys without CURVE are refused.
#[test]
fn compatible_commands_with_keys_of_their_own() {
    with_watchdog(T, || {
        let file = |name: &str| {
            let p = std::env::temp_dir()
                .join(format!("zmqperf-keys-{}-{name}.toml", std::process::id()));
            let o = run(zp(&["curve-keys"]), T);
            assert_eq!(o.code, Some(0), "{o:?}");
            assert_eq!(o.stdout.lines().count(), 4, "{}", o.stdout);
            std::fs::write(&p, &o.stdout).unwrap();
            p.display().to_string()
        };
        let (mine, other) = (file("mine"), file("other"));
        let ep = free_tcp_endpoint();
        let l = Proc::spawn(
            zp(&[
                "local_thr",
                &ep,
                "64",
                "5000",
                "1",
                "--curve-keys",
                &mine,
                "--json",
            ]),
            T,
        );
        let r = run(
            zp(&[
                "remote_thr",
                &ep,
                "64",
                "5000",
                "--security",
                "curve",
                "--curve-keys",
                &mine,
            ]),
            T,
        );
        assert_eq!(r.code, Some(0), "{r:?}");
        let l = l.finish();
        assert_eq!(l.code, Some(0), "{l:?}");
        assert!(l.stdout.contains("\"security\":\"curve\""), "{}", l.stdout);

        let ep = free_tcp_endpoint();
        let l = Proc::spawn(
            zp(&[
                "local_thr",
                &ep,
                "64",
                "100",
                "1",
                "--curve-keys",
                &mine,
                "--timeout",
                "3s",
            ]),
            T,
        );
        let r = run(
            zp(&[
                "remote_thr",
                &ep,
                "64",
                "100",
                "1",
                "--curve-keys",
                &other,
                "--timeout",
                "3s",
            ]),
            T,
        );
        assert_eq!(l.finish().code, Some(9));
        assert_eq!(r.code, Some(9), "{r:?}");

        let o = run(
            zp(&["local_lat", &ep, "64", "10", "--curve-keys", &mine]),
            T,
        );
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr.contains("only with --security curve"),
            "{}",
            o.stderr
        );
        for p in [mine, other] {
            let _ = std::fs::remove_file(p);
        }
    });
}
