//! `zmqperf run` end to end: every pattern over inproc, ipc and tcp with small counts, a
//! workload file, a case whose roles overrun their deadline, and bad options. Each under a
//! watchdog; nothing touches the user's history (ZMQPERF_DB points at a temp file).

mod common;

use common::*;
use serde_json::Value;
use std::process::Command;

const T: u64 = 120;

fn run_cmd(args: &[&str], db: &str) -> Command {
    let mut c = zmqperf();
    c.arg("run").args(args).env("ZMQPERF_DB", db);
    c
}

fn temp_db(name: &str) -> String {
    let p = std::env::temp_dir().join(format!("zmqperf-suite-{}-{name}.db", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p.display().to_string()
}

fn json_run(args: &[&str], name: &str) -> Value {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let o = run(run_cmd(&all, &temp_db(name)), T);
    assert_eq!(o.code, Some(0), "{o:?}");
    envelope(&o.stdout)
}

fn check_transport(transport: &str) {
    let v = json_run(
        &[
            "--transports",
            transport,
            "--sizes",
            "64",
            "--count",
            "300",
            "--warmup",
            "20",
            "--repetitions",
            "2",
        ],
        transport,
    );
    assert_eq!(v["run"]["status"], "complete");
    let cases = v["results"]["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 7, "one case per pattern");
    let placement = if transport == "inproc" {
        "thread"
    } else {
        "process"
    };
    for c in cases {
        assert!(c["error"].is_null(), "{}: {}", c["id"], c["error"]);
        assert_eq!(c["transport"], transport);
        let reps = c["repetitions"].as_array().unwrap();
        assert_eq!(reps.len(), 2);
        // Fan-in: three senders, each its own stream of 300, into one receiver.
        let senders = if c["pattern"] == "fanin" { 3 } else { 1 };
        for r in reps {
            let roles = r["roles"].as_array().unwrap();
            assert_eq!(roles.len(), 1 + senders, "{}", c["id"]);
            for role in roles {
                assert_eq!(role["placement"], placement);
                assert!(role["peak_rss_kib"].as_u64().unwrap() > 0);
            }
        }
        let s = &c["summary"];
        assert!(
            s["latency_us"]["median"].as_f64().unwrap() > 0.0,
            "{}",
            c["id"]
        );
        if c["kind"] == "throughput" {
            assert_eq!(s["lost"], 0, "{}", c["id"]);
            assert!(s["msgs_per_sec"]["median"].as_f64().unwrap() > 0.0);
            assert!(s["send_msgs_per_sec"]["median"].as_f64().unwrap() > 0.0);
            for r in reps {
                assert_eq!(r["loss"]["expected"], 300 * senders, "{}", c["id"]);
                assert_eq!(r["loss"]["received"], 300 * senders, "{}", c["id"]);
                assert_eq!(r["loss"]["lost"], 0, "{}", c["id"]);
                assert_eq!(r["delivered"]["messages"], 300 * senders);
                assert_eq!(r["send"]["messages"], 300 * senders);
            }
            assert_eq!(c["loop_mode"], "closed");
        } else {
            assert_eq!(reps[0]["latency"]["count"], 300);
            // Round trips per second: every measured round trip counted, at a rate that
            // agrees with the repetition's latency (one in flight, so at most one round trip
            // per 2 x mean one-way latency).
            for r in reps {
                let d = &r["delivered"];
                assert_eq!(d["messages"], 300, "{}", c["id"]);
                let span_ns = d["end_ns"].as_f64().unwrap() - d["start_ns"].as_f64().unwrap();
                let rts = 300.0 / (span_ns / 1e9);
                let bound = 1e9 / (2.0 * r["latency"]["mean_ns"].as_f64().unwrap());
                assert!(rts <= bound * 1.05, "{}: {rts} > {bound}", c["id"]);
            }
            assert!(s["msgs_per_sec"]["median"].as_f64().unwrap() > 0.0);
            if transport != "inproc" {
                assert!(
                    c["floor"]["latency_us"].as_f64().unwrap() > 0.0,
                    "{}",
                    c["id"]
                );
            }
        }
    }
    assert!(v["environment"]["cores"].as_u64().unwrap() >= 1);
    assert!(v["environment"]["libzmq_version"]
        .as_str()
        .unwrap()
        .starts_with('4'));
    assert!(v["run"]["command"].as_str().unwrap().contains("run"));
}

#[test]
fn every_pattern_over_inproc() {
    with_watchdog(T, || check_transport("inproc"));
}

#[test]
fn every_pattern_over_ipc() {
    with_watchdog(T, || check_transport("ipc"));
}

#[test]
fn every_pattern_over_tcp() {
    with_watchdog(T, || check_transport("tcp"));
}

#[test]
fn open_loop_reports_send_delay_and_labels_the_case() {
    with_watchdog(T, || {
        let v = json_run(
            &[
                "--patterns",
                "pushpull",
                "--transports",
                "ipc",
                "--sizes",
                "64",
                "--count",
                "500",
                "--rate",
                "20000",
                "--repetitions",
                "1",
            ],
            "open",
        );
        let c = &v["results"]["cases"][0];
        assert_eq!(c["loop_mode"], "open");
        assert_eq!(c["rate"], 20000.0);
        assert!(c["id"].as_str().unwrap().ends_with("/20000"));
        assert!(c["summary"]["send_delay_p50_us"]["median"]
            .as_f64()
            .is_some());
        let r = &c["repetitions"][0];
        assert_eq!(
            r["latency"]["count"], 500,
            "every message is time-stamped in open loop"
        );
        // 500 messages at 20k/s take about 25 ms: the delivered rate is near the target.
        let rate = c["summary"]["msgs_per_sec"]["median"].as_f64().unwrap();
        assert!(rate < 30_000.0, "paced, not flat out: {rate}");
    });
}

#[test]
fn workload_file_runs_its_cases() {
    with_watchdog(T, || {
        let path = std::env::temp_dir().join(format!("zmqperf-w-{}.toml", std::process::id()));
        std::fs::write(
            &path,
            "repetitions = 1\n[[sweep]]\npatterns = [\"reqrep\", \"pubsub\"]\ntransports = [\"inproc\", \"tcp\"]\nsizes = [32, \"1KiB\"]\ncount = 200\n",
        )
        .unwrap();
        let v = json_run(&[path.to_str().unwrap()], "workload");
        assert_eq!(v["results"]["cases"].as_array().unwrap().len(), 8);
        assert!(v["run"]["workload"]["text"]
            .as_str()
            .unwrap()
            .contains("[[sweep]]"));
        let _ = std::fs::remove_file(path);
    });
}

#[test]
fn a_role_that_overruns_fails_its_case_and_the_suite_goes_on() {
    with_watchdog(T, || {
        let db = temp_db("overrun");
        let o = run(
            run_cmd(
                &[
                    "--format",
                    "json",
                    "--patterns",
                    "pushpull,reqrep",
                    "--transports",
                    "tcp",
                    "--sizes",
                    "64",
                    "--count",
                    "50000000",
                    "--repetitions",
                    "1",
                    "--case-timeout",
                    "300ms",
                    "--no-floor",
                ],
                &db,
            ),
            T,
        );
        assert_eq!(
            o.code,
            Some(19),
            "every case failed: its own exit code, the report first: {o:?}"
        );
        let v = envelope(&o.stdout);
        let cases = v["results"]["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 2, "both cases ran");
        for c in cases {
            let e = c["error"]
                .as_str()
                .unwrap_or_else(|| panic!("{} should fail", c["id"]));
            assert!(e.contains("did not answer in time"), "{e}");
            // An overrun is named as such, not as a protocol error.
            assert!(!e.contains("protocol error"), "{e}");
        }
        assert!(o.stderr.contains("FAILED"), "{}", o.stderr);
    });
}

#[test]
fn a_run_that_would_measure_nothing_is_refused_before_it_starts() {
    with_watchdog(T, || {
        let db = temp_db("nothing");
        let dir = std::env::temp_dir().join(format!("zmqperf-nothing-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).unwrap();
            p.display().to_string()
        };
        let proxy = file(
            "proxy.toml",
            "[[nodes]]\nname = \"relay\"\nrole = \"proxy\"\nsockets = [{ type = \"PULL\", bind = [\"auto\"] }, { type = \"PUSH\", bind = [\"auto\"] }]\n",
        );
        let zero = file(
            "zero.toml",
            "repetitions = 0\n[[case]]\npattern = \"pushpull\"\ntransport = \"inproc\"\nsize = 64\n",
        );
        let twice = file(
            "twice.toml",
            "[[case]]\npattern = \"pushpull\"\ntransport = \"inproc\"\nsize = 64\n[[case]]\npattern = \"pushpull\"\ntransport = \"inproc\"\nsize = 64\n",
        );
        let empty = file(
            "empty.toml",
            "[[sweep]]\npatterns = []\ntransports = [\"inproc\"]\nsizes = [64]\n",
        );
        for (args, needle) in [
            (vec![proxy.as_str()], "measures nothing"),
            (vec![zero.as_str()], "repetitions"),
            (vec![twice.as_str()], "the same case as case[0]"),
            (vec![empty.as_str()], "sweep[0].patterns"),
            (
                vec![
                    "--impl",
                    "pyzmq",
                    "--patterns",
                    "reqrep",
                    "--transports",
                    "inproc",
                ],
                "leaves no case to run",
            ),
        ] {
            let o = run(run_cmd(&args, &db), T);
            assert_eq!(o.code, Some(3), "{args:?}: {o:?}");
            assert!(o.stderr.contains(needle), "{args:?}: {}", o.stderr);
            assert!(o.stdout.is_empty(), "{args:?}: nothing ran: {}", o.stdout);
        }
        // `topology check` says the same of the proxy alone.
        let o = run(zp(&["topology", "check", &proxy]), T);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(o.stderr.contains("measures nothing"), "{}", o.stderr);
        assert!(!std::path::Path::new(&db).exists(), "nothing recorded");
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn a_run_with_some_failed_cases_exits_23_after_its_report() {
    with_watchdog(T, || {
        let db = temp_db("somefailed");
        let dir = std::env::temp_dir().join(format!("zmqperf-some-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A small case that ends at once, and one far too long for the case timeout.
        let w = dir.join("two.toml");
        std::fs::write(
            &w,
            "repetitions = 1\n[[case]]\npattern = \"pushpull\"\ntransport = \"inproc\"\nsize = 64\ncount = 1000\n[[case]]\npattern = \"pushpull\"\ntransport = \"tcp\"\nsize = 64\ncount = \"500M\"\n",
        )
        .unwrap();
        let o = run(
            run_cmd(
                &[
                    w.to_str().unwrap(),
                    "--format",
                    "json",
                    "--case-timeout",
                    "3s",
                    "--no-floor",
                ],
                &db,
            ),
            T,
        );
        assert_eq!(o.code, Some(23), "{o:?}");
        let v = envelope(&o.stdout);
        let cases = v["results"]["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 2);
        assert!(cases[0]["error"].is_null(), "{}", cases[0]);
        assert!(cases[1]["error"].is_string(), "{}", cases[1]);
        assert!(
            o.stderr
                .contains("1 of 2 cases failed (throughput/pushpull/tcp/64)"),
            "{}",
            o.stderr
        );
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn bad_options_name_the_fix() {
    let db = temp_db("bad");
    for (args, code, needle) in [
        (&["--patterns", "reqrep,nope"][..], 3, "use one of"),
        (
            &["--transports", "udp"][..],
            3,
            "no pattern of the suite runs on udp",
        ),
        (
            &["--transports", "bogus"][..],
            3,
            "use one of tcp, ipc, inproc, udp",
        ),
        (&["--sizes", "0"][..], 3, "at least 1 byte"),
        (&["--repetitions", "0"][..], 3, "at least 1"),
        (&["--rate", "0"][..], 3, "above 0"),
        (
            &["/no/such/workload.toml"][..],
            11,
            "/no/such/workload.toml",
        ),
    ] {
        let o = run(run_cmd(args, &db), T);
        assert_eq!(o.code, Some(code), "{args:?}: {o:?}");
        assert!(o.stderr.contains(needle), "{args:?}: {}", o.stderr);
    }
}

#[test]
fn ctrl_c_keeps_the_finished_cases_and_reports_them() {
    with_watchdog(T, || {
        let db = temp_db("ctrlc");
        let p = Proc::spawn(
            run_cmd(
                &[
                    "--format",
                    "json",
                    "--patterns",
                    "reqrep",
                    "--transports",
                    "tcp",
                    "--sizes",
                    "64,128,256,512,1024,2048",
                    "--count",
                    "3000",
                    "--repetitions",
                    "3",
                    "--no-floor",
                ],
                &db,
            ),
            T,
        );
        // Progress goes to stderr, one line per case when stderr is not a terminal.
        p.wait_stderr("[3/6]");
        // SAFETY: a signal to the child this test started, by its pid.
        unsafe { libc::kill(p.pid() as i32, libc::SIGINT) };
        let o = p.finish();
        assert_eq!(o.code, Some(130), "Ctrl-C has its own exit code: {o:?}");
        assert!(o.stderr.contains("interrupted"), "{}", o.stderr);
        let v = envelope(&o.stdout);
        assert_eq!(v["run"]["status"], "interrupted");
        let done = v["results"]["cases"].as_array().unwrap().len();
        assert!((2..6).contains(&done), "{done} cases");
        // The history has the same cases, and says the run was interrupted.
        let mut show = zmqperf();
        show.args(["show", "last", "--format", "json", "--db", &db]);
        let s = envelope(&run(show, T).stdout);
        assert_eq!(s["run"]["status"], "interrupted");
        assert_eq!(s["results"]["cases"].as_array().unwrap().len(), done);
    });
}

/// A run of one long case (200 repetitions) ended by `signal` once a few repetitions are
/// done: the repetitions finished are kept as an incomplete case, printed and recorded, and
/// the exit is 128 + the signal.
fn a_signal_keeps_the_repetitions_done(signal: libc::c_int, name: &str) {
    let db = temp_db(name);
    let p = Proc::spawn(
        run_cmd(
            &[
                "--format",
                "json",
                "--patterns",
                "pushpull",
                "--transports",
                "inproc",
                "--sizes",
                "64",
                "--count",
                "100k",
                "--repetitions",
                "200",
                "--no-floor",
            ],
            &db,
        ),
        T,
    );
    // A log (stderr not a terminal) is told of the repetitions done every 2 s.
    let said = p.wait_stderr("repetitions done");
    let before: u64 = said
        .split("repetitions done")
        .next()
        .and_then(|l| l.split_whitespace().rev().nth(2))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {said}"));
    // SAFETY: a signal to the child this test started, by its pid.
    unsafe { libc::kill(p.pid() as i32, signal) };
    let o = p.finish();
    assert_eq!(o.code, Some(128 + signal), "{o:?}");
    assert!(
        o.stderr.contains(&format!("interrupted: by {name}")),
        "{}",
        o.stderr
    );
    let v = envelope(&o.stdout);
    assert_eq!(v["run"]["status"], "interrupted");
    let cases = v["results"]["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1, "the case is kept: {v}");
    let c = &cases[0];
    assert!(c["error"].is_null(), "{c}");
    let reps = c["repetitions"].as_array().unwrap().len() as u64;
    assert!(
        reps >= before && reps < 200,
        "{reps} repetitions, {before} said done"
    );
    assert_eq!(
        c["incomplete"],
        format!("interrupted by {name} after {reps} of 200 repetitions").as_str()
    );
    assert!(c["summary"]["msgs_per_sec"]["median"].as_f64().unwrap() > 0.0);
    // The history has the same partial case.
    let mut show = zmqperf();
    show.args(["show", "last", "--format", "json", "--db", &db]);
    let s = envelope(&run(show, T).stdout);
    assert_eq!(s["run"]["status"], "interrupted");
    assert_eq!(s["results"]["cases"][0]["incomplete"], c["incomplete"]);
    let _ = std::fs::remove_file(&db);
}

#[test]
fn sigterm_keeps_the_repetitions_done_as_an_incomplete_case() {
    with_watchdog(T, || {
        a_signal_keeps_the_repetitions_done(libc::SIGTERM, "SIGTERM")
    });
}

#[test]
fn sighup_keeps_the_repetitions_done_as_an_incomplete_case() {
    with_watchdog(T, || {
        a_signal_keeps_the_repetitions_done(libc::SIGHUP, "SIGHUP")
    });
}

#[test]
fn history_show_compare_from_the_command_line() {
    with_watchdog(T, || {
        let db = temp_db("cli");
        let args = [
            "--format",
            "csv",
            "--patterns",
            "pushpull",
            "--transports",
            "inproc",
            "--sizes",
            "64",
            "--count",
            "2000",
            "--repetitions",
            "2",
        ];
        for _ in 0..2 {
            let o = run(run_cmd(&args, &db), T);
            assert_eq!(o.code, Some(0), "{o:?}");
            assert!(
                o.stdout.lines().count() >= 2,
                "csv header and a row: {}",
                o.stdout
            );
        }
        let cli = |a: &[&str]| {
            let mut c = zmqperf();
            c.args(a).args(["--db", &db]);
            run(c, T)
        };
        let h = cli(&["history"]);
        assert_eq!(h.code, Some(0), "{h:?}");
        assert_eq!(h.stdout.matches("complete").count(), 2, "{}", h.stdout);
        let same = cli(&["compare", "last", "last", "--fail-above", "5%"]);
        assert_eq!(
            same.code,
            Some(18),
            "a run against itself judges nothing: {same:?}"
        );
        assert!(
            same.stdout.contains("A and B are the same run"),
            "{}",
            same.stdout
        );
        let two = cli(&["compare", "last~1", "last"]);
        assert_eq!(two.code, Some(0), "no threshold, no gate: {two:?}");
        let bad = cli(&["compare", "last", "nosuchrun"]);
        assert_eq!(bad.code, Some(14), "{bad:?}");
        assert!(bad.stderr.contains("nosuchrun"), "{}", bad.stderr);
        let html = std::env::temp_dir().join(format!("zmqperf-r-{}.html", std::process::id()));
        let r = cli(&[
            "report",
            "last",
            "--format",
            "html",
            "-o",
            html.to_str().unwrap(),
        ]);
        assert_eq!(r.code, Some(0), "{r:?}");
        let text = std::fs::read_to_string(&html).unwrap();
        assert!(text.contains("<svg"), "charts inline");
        let _ = std::fs::remove_file(html);
        let f = cli(&["show", "last", "--format", "pdf"]);
        assert_eq!(f.code, Some(3), "{f:?}");
    });
}

/// The socket files of the runner's own ipc endpoints in the temp folder.
fn runner_socket_files() -> Vec<String> {
    std::fs::read_dir(std::env::temp_dir())
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| {
            let Some(mid) = n
                .strip_prefix("zmqperf-")
                .and_then(|r| r.strip_suffix(".sock"))
            else {
                return false;
            };
            mid.split('-').count() == 2
                && mid
                    .split('-')
                    .all(|p| p.chars().all(|c| c.is_ascii_digit()))
        })
        .collect()
}

#[test]
fn ipc_cases_leave_no_socket_file_behind() {
    with_watchdog(T, || {
        let before = runner_socket_files();
        let v = json_run(
            &[
                "--transports",
                "ipc",
                "--patterns",
                "pushpull,reqrep",
                "--sizes",
                "64",
                "--count",
                "300",
                "--repetitions",
                "2",
            ],
            "ipcfiles",
        );
        assert!(v["results"]["cases"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["error"].is_null()));
        let after: Vec<String> = runner_socket_files()
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        assert!(after.is_empty(), "left behind: {after:?}");
    });
}

/// `--note TEXT` is kept with the run: in its JSON, in the history, and in the report.
#[test]
fn a_note_is_recorded_with_the_run() {
    with_watchdog(T, || {
        let db = temp_db("note");
        let note = "after the kernel upgrade, offloads off";
        let args = [
            "--patterns",
            "reqrep",
            "--transports",
            "inproc",
            "--sizes",
            "64",
            "--count",
            "100",
            "--repetitions",
            "1",
            "--note",
            note,
            "--format",
            "json",
        ];
        let o = run(run_cmd(&args, &db), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let v = envelope(&o.stdout);
        assert_eq!(v["environment"]["note"], note);
        let mut show = zmqperf();
        show.args(["show", "last", "--db", &db]);
        let o = run(show, T);
        assert!(
            o.stdout
                .lines()
                .any(|l| l.starts_with("note") && l.ends_with(note)),
            "{}",
            o.stdout
        );
        let _ = std::fs::remove_file(&db);
    });
}

/// A tcp run records the interface that carried 127.0.0.1 (lo, loopback, its MTU), in
/// the JSON (valid against the schema) and in `show`; a run on ipc alone records none.
#[test]
fn the_network_interface_of_tcp_is_recorded_and_ipc_has_none() {
    with_watchdog(T, || {
        let db = temp_db("network");
        let args = |t: &'static str| {
            [
                "--patterns",
                "reqrep",
                "--transports",
                t,
                "--sizes",
                "64",
                "--count",
                "100",
                "--repetitions",
                "1",
                "--format",
                "json",
            ]
        };
        let o = run(run_cmd(&args("tcp"), &db), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let v = envelope(&o.stdout);
        let net = v["environment"]["network"]
            .as_array()
            .expect("a network list");
        assert_eq!(net.len(), 1, "{net:?}");
        assert_eq!(net[0]["address"], "127.0.0.1");
        assert_eq!(net[0]["interface"], "lo");
        assert_eq!(net[0]["loopback"], true);
        assert!(net[0]["mtu"].as_u64().unwrap_or(0) > 0, "{net:?}");
        let mut show = zmqperf();
        show.args(["show", "last", "--db", &db]);
        let o = run(show, T);
        let mtu = net[0]["mtu"].as_u64().unwrap();
        let line = format!("lo (loopback) mtu {mtu} for 127.0.0.1");
        assert!(
            o.stdout
                .lines()
                .any(|l| l.starts_with("network") && l.ends_with(&line)),
            "{}",
            o.stdout
        );

        let o = run(run_cmd(&args("ipc"), &db), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let v = envelope(&o.stdout);
        assert!(
            v["environment"].get("network").is_none(),
            "{}",
            v["environment"]
        );
        let _ = std::fs::remove_file(&db);
    });
}

/// `run --lossy`: the PUB/SUB of the users' harnesses (no wait for the subscription, drops
/// at the high-water mark) runs beside the lossless case; its ledger adds up exactly, the
/// run says what the sender did, and every place that lost messages is given the cause
/// those facts imply, with the send and delivered rates.
#[test]
fn lossy_pubsub_is_measured_beside_the_lossless_case() {
    with_watchdog(T, || {
        let db = temp_db("lossy");
        let o = run(
            run_cmd(
                &[
                    "--lossy",
                    "--patterns",
                    "pubsub",
                    "--transports",
                    "ipc",
                    "--sizes",
                    "64",
                    "--count",
                    "50k",
                    "--repetitions",
                    "1",
                    "--format",
                    "json",
                ],
                &db,
            ),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let v = envelope(&o.stdout);
        let cases = v["results"]["cases"].as_array().unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(
            ids,
            ["throughput/pubsub/ipc/64", "throughput/pubsub-lossy/ipc/64"]
        );
        let (clean, lossy) = (&cases[0], &cases[1]);
        assert_eq!(
            clean["summary"]["lost"], 0,
            "the XPUB with NODROP loses nothing"
        );
        assert_eq!(clean["sender"]["drops_at_hwm"], false);
        assert_eq!(clean["sender"]["waited_for_subscribers"], true);
        assert_eq!(lossy["sender"]["drops_at_hwm"], true);
        assert_eq!(lossy["sender"]["waited_for_subscribers"], false);
        let l = &lossy["repetitions"][0]["loss"];
        let n = |k: &str| l[k].as_u64().unwrap();
        assert_eq!(n("expected"), 50_000);
        assert_eq!(n("received") + n("lost"), n("expected"), "{l}");
        assert_eq!(
            n("lost_at_start") + n("lost_in_middle") + n("lost_at_end"),
            n("lost")
        );
        let warnings: Vec<&str> = lossy["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        let cause = warnings.iter().find(|w| w.starts_with("cause: "));
        if n("lost") == 0 {
            assert!(cause.is_none(), "{warnings:?}");
        } else {
            let cause = cause.expect("a lossy case names its causes");
            assert_eq!(
                cause.contains("a slow joiner"),
                n("lost_at_start") > 0,
                "{cause}"
            );
            assert_eq!(
                cause.contains("the high-water mark"),
                n("lost_in_middle") + n("lost_at_end") > 0,
                "{cause}"
            );
            assert!(!cause.contains("fast quit"), "{cause}");
        }
        // The text report of the same run gives the rates beside the loss.
        let mut show = zp(&["show", "last"]);
        show.env("ZMQPERF_DB", &db);
        let o = run(show, T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let words = o.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        if n("lost") > 0 {
            assert!(words.contains("msg/s, delivered"), "{}", o.stdout);
        }
    });
}

/// The README's workload example is a file that runs: its case and its sweep (1 + 2 x 2 x
/// 2 cases), each three times, every one complete.
#[test]
fn the_readme_workload_example_runs() {
    with_watchdog(300, || {
        let readme =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
        assert!(readme.contains("zmqperf run examples/workloads/workload.toml"));
        let mut c = zp(&[
            "run",
            "examples/workloads/workload.toml",
            "--no-history",
            "--format",
            "json",
        ]);
        c.current_dir(env!("CARGO_MANIFEST_DIR"));
        let o = run(c, 240);
        assert_eq!(o.code, Some(0), "{o:?}");
        let v = envelope(&o.stdout);
        let cases = v["results"]["cases"].as_array().unwrap();
        assert_eq!(
            cases.len(),
            9,
            "{:?}",
            cases.iter().map(|c| &c["id"]).collect::<Vec<_>>()
        );
        for c in cases {
            assert!(c["error"].is_null(), "{}: {}", c["id"], c["error"]);
            assert_eq!(c["repetitions"].as_array().unwrap().len(), 3, "{}", c["id"]);
        }
        assert_eq!(v["run"]["status"], "complete");
    });
}
