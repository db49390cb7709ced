//! Fan-out end to end: `zmqperf fanout` over tcp and ipc with a few hundred subscribers,
//! `pub` and `sub-cluster` as two separate commands, PUB/SUB throughput with 1, 2 and 3
//! subscribers, and the bad inputs that must end with a clear message.

mod common;

use common::*;
use serde_json::Value;

/// Longest a fan-out test may take.
const T: u64 = 180;

fn json_of(o: &Output) -> Value {
    let line = o
        .stdout
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no JSON in stdout: {o:?}"));
    results(line)
}

/// The report holds to schema/fanout-report.schema.json, and the schema is strict enough to
/// refuse the same report with an unknown field or a wrong type.
fn check_schema(r: &Value) {
    let v = schema_validator("fanout-report.schema.json");
    let e = schema_errors(&v, r);
    assert!(e.is_empty(), "the report breaks its schema: {e:#?}");
    let mut extra = r.clone();
    extra["surprise"] = Value::Bool(true);
    assert!(
        !schema_errors(&v, &extra).is_empty(),
        "unknown field accepted"
    );
    let mut wrong = r.clone();
    wrong["delivery"]["lost"] = Value::String("none".into());
    assert!(!schema_errors(&v, &wrong).is_empty(), "wrong type accepted");
}

fn u(v: &Value, path: &str) -> u64 {
    v.pointer(path)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no integer at {path}"))
}

fn f(v: &Value, path: &str) -> f64 {
    v.pointer(path)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("no number at {path}"))
}

/// Every subscriber got every message once, and the merged latency adds up.
fn check_complete(r: &Value, subscribers: u64, messages: u64) {
    assert_eq!(u(r, "/subscribers"), subscribers, "{r}");
    assert_eq!(u(r, "/expected_per_subscriber"), messages);
    assert_eq!(u(r, "/complete_subscribers"), subscribers);
    assert_eq!(u(r, "/delivery/expected"), subscribers * messages);
    assert_eq!(u(r, "/delivery/received"), subscribers * messages);
    assert_eq!(u(r, "/delivery/lost"), 0);
    assert_eq!(u(r, "/delivery/duplicated"), 0);
    let subs = r["per_subscriber"].as_array().expect("per_subscriber");
    assert_eq!(subs.len() as u64, subscribers);
    for s in subs {
        assert_eq!(u(s, "/loss/received"), messages, "{s}");
        assert_eq!(u(s, "/loss/expected"), messages, "{s}");
        assert_eq!(s["ended"], Value::Bool(true), "{s}");
    }
    assert_eq!(u(r, "/latency/count"), subscribers * messages);
    let (min, p50, max) = (
        u(r, "/latency/min_ns"),
        u(r, "/latency/p50_ns"),
        u(r, "/latency/max_ns"),
    );
    assert!(min <= p50 && p50 <= max, "{min} {p50} {max}");
    assert!(min > 0);
    let (mean, hmean) = (f(r, "/latency/mean_ns"), f(r, "/latency/harmonic_mean_ns"));
    assert!(hmean <= mean + 1e-6, "harmonic {hmean} > mean {mean}");
    assert!(hmean > 0.0);
    assert!(r["slowest"].is_object());
    for p in r["process_list"].as_array().expect("process_list") {
        assert!(u(p, "/usage/peak_rss_kib") > 0, "{p}");
        assert_eq!(p["stop"], Value::String("all-ended".into()), "{p}");
    }
}

fn fanout_run(transport: &str) {
    let o = run(
        zp(&[
            "fanout",
            "-c",
            "2",
            "-s",
            "150",
            "-t",
            "20",
            "-n",
            "2",
            "-p",
            "5",
            "--transport",
            transport,
            "--json",
        ]),
        T,
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    let r = json_of(&o);
    check_schema(&r);
    assert_eq!(r["transport"], Value::String(transport.into()));
    check_complete(&r, 300, 10);
    assert_eq!(u(&r, "/publisher/messages"), 10);
    assert_eq!(u(&r, "/publisher/subscribers"), 300);
    assert_eq!(r["publisher"]["all_left"], Value::Bool(true));
}

#[test]
fn fanout_over_tcp_with_300_subscribers() {
    with_watchdog(T, || fanout_run("tcp"));
}

#[test]
fn fanout_over_ipc_with_300_subscribers() {
    with_watchdog(T, || fanout_run("ipc"));
}

#[test]
fn fanout_text_report_has_the_seed_lines() {
    with_watchdog(T, || {
        let o = run(
            zp(&[
                "fanout", "-c", "1", "-s", "20", "-t", "10", "-n", "1", "-p", "3",
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        for want in [
            "fanout over tcp: 20 subscribers (1 process x 20)",
            "delivered: 60 of 60 (100%): 0 lost",
            "20 of 20 subscribers got all 3 messages",
            "  MIN: ",
            "  MAX: ",
            "  MEAN: ",
            "  HARMONIC MEAN: ",
            "p99.99",
            "slowest subscriber: proc 0 sub ",
            "publisher       pid ",
            "peak RSS",
        ] {
            assert!(o.stdout.contains(want), "'{want}' missing:\n{}", o.stdout);
        }
    });
}

#[test]
fn pub_and_sub_cluster_as_two_commands() {
    with_watchdog(T, || {
        let ep = free_tcp_endpoint();
        let subs = Proc::spawn(
            zp(&[
                "sub-cluster",
                "-c",
                "2",
                "-n",
                "5",
                "-h",
                &ep,
                "--timeout",
                "60s",
                "--json",
            ]),
            T,
        );
        subs.wait_stderr("waiting for the publisher");
        let p = run(
            zp(&[
                "pub", "-h", &ep, "--subs", "10", "-t", "10", "-n", "3", "-p", "4", "--json",
            ]),
            T,
        );
        assert_eq!(p.code, Some(0), "{p:?}");
        let pr = json_of(&p);
        let pub_schema = schema_validator_of(
            &serde_json::json!({ "$ref": "urn:zmqperf:schema:fanout-report:3#/$defs/publisher" }),
        );
        let e = schema_errors(&pub_schema, &pr);
        assert!(e.is_empty(), "pub --json breaks its schema: {e:#?}");
        assert_eq!(u(&pr, "/messages"), 12);
        assert_eq!(u(&pr, "/subscribers"), 10);
        let o = subs.finish();
        assert_eq!(o.code, Some(0), "{o:?}");
        let r = json_of(&o);
        check_schema(&r);
        assert_eq!(r["command"], Value::String("sub-cluster".into()));
        check_complete(&r, 10, 12);
    });
}

#[test]
fn pub_sub_throughput_with_1_2_3_subscribers_loses_nothing() {
    with_watchdog(T, || {
        for k in ["1", "2", "3"] {
            let o = run(
                zp(&[
                    "fanout", "-c", "1", "-s", k, "-t", "0", "-n", "20000", "-p", "1", "--json",
                ]),
                T,
            );
            assert_eq!(o.code, Some(0), "k={k}: {o:?}");
            let r = json_of(&o);
            let k: u64 = k.parse().unwrap();
            check_complete(&r, k, 20_000);
            assert!(f(&r, "/delivered_per_sec/min") > 0.0);
        }
        // The same with each subscriber in its own process.
        let o = run(
            zp(&[
                "fanout", "-c", "3", "-s", "1", "-t", "0", "-n", "5000", "-p", "2", "--json",
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        check_complete(&json_of(&o), 3, 10_000);
    });
}

/// `fanout --lossy`: the PUB/SUB of seed 002 and 004 as their harnesses ran it (no wait for
/// the subscribers, drops at the high-water mark), 1, 2 and 3 subscribers. The ledger adds
/// up to the last message, the report says it was lossy, and the causes given are the ones
/// a dropping publisher that did not wait can have: never a fast quit.
#[test]
fn lossy_pub_sub_with_1_2_3_subscribers_is_measured() {
    with_watchdog(T, || {
        for k in ["1", "2", "3"] {
            let o = run(
                zp(&[
                    "fanout", "-c", "1", "-s", k, "-t", "0", "-n", "20000", "-p", "1", "--lossy",
                    "--json",
                ]),
                T,
            );
            // Loss is what --lossy measures: exit 0 either way, as `run --lossy` (the
            // report and a note say what was lost and why).
            assert_eq!(o.code, Some(0), "k={k}: {o:?}");
            let r = json_of(&o);
            check_schema(&r);
            assert_eq!(r["lossy"], true);
            let k: u64 = k.parse().unwrap();
            assert_eq!(u(&r, "/subscribers"), k);
            let d = |x: &str| u(&r, &format!("/delivery/{x}"));
            assert_eq!(d("received") + d("lost"), d("expected"), "{r}");
            assert_eq!(
                d("lost_at_start") + d("lost_in_middle") + d("lost_at_end"),
                d("lost")
            );
            assert_eq!(o.stderr.contains("note: --lossy:"), d("lost") > 0, "{o:?}");
            if d("lost") > 0 {
                assert!(!o.stderr.contains("fast quit"), "{}", o.stderr);
                assert_eq!(o.stderr.contains("a slow joiner"), d("lost_at_start") > 0);
                assert_eq!(
                    o.stderr.contains("the high-water mark"),
                    d("lost_in_middle") + d("lost_at_end") > 0,
                    "{}",
                    o.stderr
                );
            }
        }
    });
}

fn fails(args: &[&str], code: i32, needle: &str) {
    fails_within(60, args, code, needle);
}

#[test]
fn zero_and_negative_counts_are_refused() {
    with_watchdog(T, || {
        fails(&["sub-cluster", "-n", "0"], 3, "invalid -n '0'");
        fails(&["sub-cluster", "-c", "0"], 3, "invalid -c '0'");
        fails(&["fanout", "-s", "0"], 3, "invalid -s '0'");
        fails(&["fanout", "-c", "0", "-s", "5"], 3, "invalid -c '0'");
        fails(
            &["pub", "-t", "-5"],
            3,
            "invalid -t '-5': cannot be negative",
        );
        fails(&["fanout", "-t", "-5"], 3, "invalid -t '-5'");
        fails(&["pub", "-n", "0"], 3, "invalid -n '0'");
        fails(&["pub", "-p", "-1"], 3, "invalid -p '-1'");
        fails(&["pub", "--size", "10"], 3, "24-byte measurement header");
        fails(&["sub-cluster", "-n", "many"], 3, "not a number");
    });
}

#[test]
fn bad_and_unreachable_endpoints() {
    with_watchdog(T, || {
        fails(&["pub", "-h", "localhost:2002"], 4, "no transport");
        // F10: the hint names what fanout takes, never inproc:// (which it refuses).
        fails(
            &["fanout", "-h", "udp://127.0.0.1:5"],
            4,
            "fanout does not run over udp://; use tcp://",
        );
        fails(&["pub", "-h", "inproc://x"], 4, "inproc://");
        // 192.0.2.1 is TEST-NET-1: never an address of this machine.
        fails(
            &["pub", "-h", "tcp://192.0.2.1:2002", "--subs", "1"],
            4,
            "not on this machine",
        );
        fails(
            &["fanout", "-h", "tcp://127.0.0.1:*", "--transport", "ipc"],
            3,
            "give one or the other",
        );
        // Nobody publishes there: the subscribers give up after --timeout.
        let ep = free_tcp_endpoint();
        fails(
            &[
                "sub-cluster",
                "-c",
                "1",
                "-n",
                "3",
                "-h",
                &ep,
                "--timeout",
                "1s",
            ],
            6,
            "no peer within 1 s",
        );
        // Nobody subscribes: the count asked for cannot be reached.
        let ep = free_tcp_endpoint();
        fails(
            &["pub", "-h", &ep, "--subs", "3", "--timeout", "1s"],
            16,
            "only 0 of 3 subscribers subscribed",
        );
    });
}

#[test]
fn more_subscribers_than_the_open_file_limit_allows_fail_before_starting() {
    with_watchdog(T, || {
        let hard = zmqperf::scenarios::fanout::limits::current().unwrap().hard;
        if hard > 40_000 {
            eprintln!("hard open-file limit {hard}: too high to exceed in a test, skipped");
            return;
        }
        // The publisher needs about 2 descriptors per subscriber: twice the limit.
        let subs = (hard / 2 + 1).to_string();
        let o = run(zp(&["fanout", "-c", "2", "-s", &subs, "-p", "1"]), 60);
        assert_eq!(o.code, Some(3), "{o:?}");
        for want in [
            "hard limit on open files",
            "ulimit -n",
            "limits.conf",
            "fewer subscribers",
        ] {
            assert!(o.stderr.contains(want), "'{want}' missing: {}", o.stderr);
        }
        assert!(o.stdout.is_empty(), "nothing ran: {}", o.stdout);
    });
}

#[test]
fn dash_h_is_the_endpoint_and_help_is_long() {
    with_watchdog(60, || {
        for cmd in ["pub", "sub-cluster", "fanout"] {
            let o = run(zp(&[cmd, "--help"]), 30);
            assert_eq!(o.code, Some(0), "{cmd}: {o:?}");
            assert!(
                o.stdout.contains("-h, --host <ENDPOINT>"),
                "{cmd}: {}",
                o.stdout
            );
        }
    });
}

#[test]
fn fanout_runs_are_recorded_and_compare_with_each_other() {
    with_watchdog(T, || {
        let db = fresh_db("fanout-hist");
        for _ in 0..2 {
            let o = run(
                zp(&[
                    "fanout", "-c", "2", "-s", "15", "-t", "10", "-n", "1", "-p", "4", "--db", &db,
                ]),
                T,
            );
            assert_eq!(o.code, Some(0), "{o:?}");
            assert!(o.stderr.contains("recorded in"), "{}", o.stderr);
        }
        let o = run(zp(&["show", "last", "--db", &db, "--format", "json"]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let v = envelope(&o.stdout);
        let case = &v["results"]["cases"][0];
        assert_eq!(case["pattern"], "fanout[2x15]");
        assert_eq!(case["summary"]["lost"], 0);
        assert_eq!(case["repetitions"][0]["loss"]["expected"], 2 * 15 * 4);
        let edges = case["edges"].as_array().unwrap();
        assert_eq!(edges.len(), 2);
        assert!(edges.iter().all(|e| e["messages"] == 15 * 4), "{edges:?}");
        let o = run(zp(&["compare", "last~1", "last", "--db", &db]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("fanout[2x15]"), "{}", o.stdout);
        // --no-history leaves the history alone.
        let o = run(
            zp(&[
                "fanout",
                "-c",
                "1",
                "-s",
                "5",
                "-t",
                "10",
                "-n",
                "1",
                "-p",
                "2",
                "--db",
                &db,
                "--no-history",
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(!o.stderr.contains("recorded in"), "{}", o.stderr);
        let _ = std::fs::remove_file(&db);
    });
}

/// A sub-cluster of `procs` processes of `subs` subscribers on a free tcp endpoint, idle
/// after 1 s, ready and waiting for a publisher.
/// Its run is recorded in history `db` when one is given.
fn sub_cluster_recording(procs: &str, subs: &str, db: Option<&str>) -> (String, Proc) {
    let ep = free_tcp_endpoint();
    let mut args = vec![
        "sub-cluster",
        "-c",
        procs,
        "-n",
        subs,
        "-h",
        &ep,
        "--idle",
        "1s",
        "--timeout",
        "30s",
        "--json",
    ];
    match db {
        Some(db) => args.extend(["--db", db]),
        None => args.push("--no-history"),
    }
    let p = Proc::spawn(zp(&args), T);
    p.wait_stderr("waiting for the publisher");
    (ep, p)
}

#[test]
fn a_publisher_that_dies_part_way_is_reported_as_cut_short() {
    with_watchdog(T, || {
        let db = fresh_db("fanout-cut");
        let (ep, subs) = sub_cluster_recording("1", "3", Some(&db));
        // 50 ticks of 100 ms: killed after a few of them, without its end mark.
        let publ = Proc::spawn(
            zp(&[
                "pub", "-h", &ep, "--subs", "3", "-t", "100", "-n", "1", "-p", "50",
            ]),
            T,
        );
        publ.wait_stderr("publishing");
        std::thread::sleep(std::time::Duration::from_millis(700));
        // SAFETY: a signal to the process this test started, by its pid.
        unsafe { libc::kill(publ.pid() as i32, libc::SIGKILL) };
        let _ = publ.finish();
        let o = subs.finish();
        assert_eq!(o.code, Some(17), "{o:?}");
        let r = json_of(&o);
        check_schema(&r);
        assert_eq!(r["stream_ended"], Value::Bool(false));
        let got = u(&r, "/delivery/received");
        assert!(
            got > 0 && got < 150,
            "a few ticks arrived at 3 subscribers: {got}"
        );
        assert!(o.stderr.contains("cut short"), "{}", o.stderr);
        assert!(
            o.stderr.contains("publisher stopped or died"),
            "{}",
            o.stderr
        );
        // The history keeps it as an incomplete case, never as a clean one.
        let case = recorded_case(&db);
        assert_eq!(case["pattern"], "sub-cluster[1x3]", "{case}");
        let why = case["incomplete"]
            .as_str()
            .unwrap_or_else(|| panic!("{case}"));
        assert!(why.contains("cut short"), "{why}");
        let shown = run(zp(&["show", "last", "--db", &db]), 30);
        assert!(shown.stdout.contains("incomplete:"), "{}", shown.stdout);
        assert!(!shown.stdout.contains("no loss"), "{}", shown.stdout);
        let _ = std::fs::remove_file(&db);
    });
}

/// The one case of the last run in history `db`, as `show --format json` gives it.
fn recorded_case(db: &str) -> Value {
    let o = run(zp(&["show", "last", "--db", db, "--format", "json"]), 30);
    assert_eq!(o.code, Some(0), "{o:?}");
    let v = envelope(&o.stdout);
    assert_eq!(
        v["results"]["cases"].as_array().map(Vec::len),
        Some(1),
        "{v}"
    );
    v["results"]["cases"][0].clone()
}

#[test]
fn sigterm_ends_a_fanout_with_what_arrived_printed_and_recorded() {
    with_watchdog(T, || {
        let db = fresh_db("fanout-term");
        let p = Proc::spawn(
            zp(&[
                "fanout", "-c", "2", "-s", "5", "-t", "100", "-n", "1", "-p", "300", "--json",
                "--db", &db,
            ]),
            T,
        );
        // Whenever the signal comes (the subscribers joining, or ticks going out), the
        // publisher ends the stream at its next tick with an end mark.
        p.wait_stderr("starting the publisher");
        // SAFETY: a signal to the process this test started, by its pid.
        unsafe { libc::kill(p.pid() as i32, libc::SIGTERM) };
        let o = p.finish();
        assert_eq!(o.code, Some(143), "{o:?}");
        let r = json_of(&o);
        check_schema(&r);
        let why = r["publisher"]["interrupted"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"));
        assert!(why.starts_with("interrupted by SIGTERM after "), "{why}");
        // The shorter stream ended with its end mark: every subscriber has all of it.
        let sent = u(&r, "/publisher/messages");
        assert!((1..300).contains(&sent), "{sent}");
        assert_eq!(u(&r, "/delivery/expected"), sent * 10);
        assert_eq!(u(&r, "/delivery/received"), sent * 10);
        assert_eq!(u(&r, "/complete_subscribers"), 10);
        assert!(
            o.stderr.contains("interrupted: interrupted by SIGTERM"),
            "{}",
            o.stderr
        );
        let case = recorded_case(&db);
        assert_eq!(case["pattern"], "fanout[2x5]", "{case}");
        assert_eq!(case["incomplete"], why, "{case}");
        let _ = std::fs::remove_file(&db);
    });
}

/// The child processes of `pid` (from /proc).
fn children_of(pid: u32) -> Vec<i32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
    {
        if let Ok(s) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(s.split_whitespace().filter_map(|p| p.parse::<i32>().ok()));
        }
    }
    out
}

/// Two sub-cluster processes of 3 subscribers and a publisher of `passes` ticks of 100 ms
/// to them, publishing; with the pids of the two subscriber processes.
fn two_subscriber_processes_publishing(
    passes: &str,
    linger: &str,
    db: Option<&str>,
) -> (Proc, Proc, Vec<i32>) {
    let (ep, subs) = sub_cluster_recording("2", "3", db);
    let publ = Proc::spawn(
        zp(&[
            "pub", "-h", &ep, "--subs", "6", "-t", "100", "-n", "1", "-p", passes, "--linger",
            linger,
        ]),
        T,
    );
    publ.wait_stderr("publishing");
    let kids = children_of(subs.pid());
    assert_eq!(kids.len(), 2, "two subscriber processes: {kids:?}");
    (subs, publ, kids)
}

#[test]
fn a_killed_subscriber_process_is_named_and_pub_says_subscribers_left() {
    with_watchdog(T, || {
        let db = fresh_db("fanout-killed");
        let (subs, publ, kids) = two_subscriber_processes_publishing("30", "2s", Some(&db));
        std::thread::sleep(std::time::Duration::from_millis(500));
        // SAFETY: a signal to a process of this test's own tree, by its pid.
        unsafe { libc::kill(kids[0], libc::SIGKILL) };
        let o = subs.finish();
        let p = publ.finish();
        // The sub-cluster reports the other process and names how this one ended.
        assert_eq!(o.code, Some(16), "{o:?}");
        let r = json_of(&o);
        check_schema(&r);
        let failed = r["failed_processes"].as_array().unwrap();
        assert_eq!(failed.len(), 1, "{failed:?}");
        let why = failed[0].as_str().unwrap();
        assert!(why.contains("died: killed by signal 9 (SIGKILL)"), "{why}");
        assert!(!why.contains("protocol error"), "{why}");
        assert_eq!(u(&r, "/complete_subscribers"), 3);
        // The publisher saw 3 subscribers leave before its last tick, and says so.
        assert_eq!(p.code, Some(16), "{p:?}");
        assert!(
            p.stdout
                .contains("3 of 6 subscribers left before the last message"),
            "{}",
            p.stdout
        );
        assert!(p.stderr.contains("before the last message"), "{}", p.stderr);
        // Recorded under the shape asked for, as incomplete, naming the process left out.
        let case = recorded_case(&db);
        assert_eq!(case["pattern"], "sub-cluster[2x3]", "{case}");
        let why = case["incomplete"]
            .as_str()
            .unwrap_or_else(|| panic!("{case}"));
        assert!(
            why.contains("1 of 2 subscriber processes reported") && why.contains("SIGKILL"),
            "{why}"
        );
        let _ = std::fs::remove_file(&db);
    });
}

#[test]
fn a_frozen_subscriber_process_is_stopped_and_the_others_are_reported() {
    with_watchdog(T, || {
        let (subs, publ, kids) = two_subscriber_processes_publishing("50", "1s", None);
        // SAFETY: a signal to a process of this test's own tree, by its pid.
        unsafe { libc::kill(kids[0], libc::SIGSTOP) };
        let t0 = std::time::Instant::now();
        let o = subs.finish();
        let _ = publ.finish();
        // Bounded by the job: 5 s of ticks, then 1 s idle and 5 s grace, not the 30 s timeout.
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(25),
            "{:?}",
            t0.elapsed()
        );
        assert_eq!(o.code, Some(16), "{o:?}");
        let r = json_of(&o);
        check_schema(&r);
        let failed = r["failed_processes"].as_array().unwrap();
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(
            failed[0].as_str().unwrap().contains("frozen or hung"),
            "{failed:?}"
        );
        // The other process's 3 subscribers got the whole stream.
        assert_eq!(u(&r, "/complete_subscribers"), 3);
        assert!(o.stderr.contains("did not report"), "{}", o.stderr);
        // The wait past the end of the stream was shown while it lasted.
        assert!(
            o.stderr.contains("still waiting for node subs["),
            "{}",
            o.stderr
        );
    });
}

/// `fanout --floor` over `transport`: the libzmq run, then the raw-socket floor with the same
/// 40 subscribers and 3 ticks, every raw delivery counted, both in the JSON and its schema.
fn floor_run(transport: &str, socket: &str) {
    let o = run(
        zp(&[
            "fanout",
            "-c",
            "2",
            "-s",
            "20",
            "-t",
            "100",
            "-n",
            "1",
            "-p",
            "3",
            "--transport",
            transport,
            "--floor",
            "--no-history",
            "--json",
        ]),
        T,
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    let r = json_of(&o);
    check_schema(&r);
    check_complete(&r, 40, 3);
    let fl = &r["floor"];
    assert_eq!(fl["socket"], Value::String(socket.into()), "{fl}");
    let scheme = if transport == "tcp" {
        "tcp://"
    } else {
        "ipc://"
    };
    assert!(fl["endpoint"].as_str().unwrap().starts_with(scheme), "{fl}");
    assert_eq!(u(fl, "/subscribers"), 40);
    // Every raw delivery counted: subscribers x ticks x messages per tick.
    assert_eq!(u(fl, "/delivery/expected"), 40 * 3);
    assert_eq!(u(fl, "/delivery/received"), 40 * 3);
    assert_eq!(u(fl, "/delivery/lost"), 0);
    assert_eq!(u(fl, "/delivery/duplicated"), 0);
    assert_eq!(u(fl, "/complete_subscribers"), 40);
    assert_eq!(fl["stream_ended"], Value::Bool(true));
    assert_eq!(fl["failed_processes"], Value::Array(vec![]));
    assert_eq!(u(fl, "/latency/count"), 40 * 3);
    assert!(u(fl, "/latency/min_ns") > 0);
    assert_eq!(u(fl, "/publisher/subscribers"), 40);
    assert_eq!(u(fl, "/publisher/messages"), 3);
    assert_eq!(fl["publisher"]["all_left"], Value::Bool(true));
    let procs = fl["process_list"].as_array().expect("process_list");
    assert_eq!(procs.len(), 2);
    for p in procs {
        assert_eq!(p["stop"], Value::String("all-ended".into()), "{p}");
        assert!(u(p, "/usage/peak_rss_kib") > 0, "{p}");
    }
    // Both sides of the comparison, with the same counts.
    for side in ["libzmq", "raw"] {
        assert_eq!(u(fl, &format!("/{side}/deliveries")), 40 * 3, "{side}");
        assert_eq!(
            u(fl, &format!("/{side}/deliveries_made")),
            40 * 4,
            "{side}: + warm-up"
        );
        assert!(f(fl, &format!("/{side}/mean_ns")) > 0.0, "{side}");
        assert!(f(fl, &format!("/{side}/subscriber_cpu_ms")) >= 0.0);
    }
    assert_eq!(f(fl, "/libzmq/mean_ns"), f(&r, "/latency/mean_ns"));
    assert_eq!(u(fl, "/raw/p99_ns"), u(fl, "/latency/p99_ns"));
    let ratio = f(fl, "/ratio/mean");
    let want = f(fl, "/libzmq/mean_ns") / f(fl, "/raw/mean_ns");
    assert!(
        (ratio - want).abs() < 1e-9 * want.max(1.0),
        "{ratio} {want}"
    );
    assert!(f(fl, "/ratio/p99") > 0.0);
    // The schema refuses a floor with a wrong type or an unknown field.
    let v = schema_validator("fanout-report.schema.json");
    let mut wrong = r.clone();
    wrong["floor"]["delivery"]["lost"] = Value::String("none".into());
    assert!(!schema_errors(&v, &wrong).is_empty(), "wrong type accepted");
    let mut extra = r.clone();
    extra["floor"]["surprise"] = Value::Bool(true);
    assert!(
        !schema_errors(&v, &extra).is_empty(),
        "unknown field accepted"
    );
}

#[test]
fn fanout_floor_over_tcp_counts_every_raw_delivery() {
    with_watchdog(T, || floor_run("tcp", "tcp"));
}

#[test]
fn fanout_floor_over_ipc_counts_every_raw_delivery() {
    with_watchdog(T, || floor_run("ipc", "unix"));
}

#[test]
fn reports_without_a_floor_still_hold_to_the_schema() {
    with_watchdog(T, || {
        let o = run(
            zp(&[
                "fanout",
                "-c",
                "1",
                "-s",
                "3",
                "-t",
                "10",
                "-p",
                "2",
                "--no-history",
                "--json",
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let r = json_of(&o);
        assert_eq!(r["floor"], Value::Null);
        check_schema(&r);
        // A report written before the floor existed has no such field.
        let mut old = r.clone();
        old.as_object_mut().unwrap().remove("floor");
        let v = schema_validator("fanout-report.schema.json");
        assert!(schema_errors(&v, &old).is_empty());
    });
}

#[test]
fn fanout_floor_is_printed_beside_libzmq_and_recorded() {
    with_watchdog(T, || {
        let db = fresh_db("fanout-floor");
        let o = run(
            zp(&[
                "fanout", "-c", "2", "-s", "20", "-t", "100", "-n", "1", "-p", "3", "--floor",
                "--db", &db,
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        for want in [
            "raw-socket floor: the same 40 subscribers over plain tcp sockets on tcp://127.0.0.1:",
            "delivered: 120 of 120 (100%): 0 lost, 0 duplicated, 0 reordered; 40 of 40 subscribers got every message",
            "libzmq         raw  libzmq/raw",
            "  mean latency (ms)  ",
            "  p99 latency (ms)  ",
            "  subscriber CPU per delivery (us)  ",
            "  publisher CPU per delivery (us)  ",
            "ZeroMQ's part of the mean latency: ",
            "raw publisher     pid ",
            "raw subscribers 1   pid ",
        ] {
            assert!(o.stdout.contains(want), "'{want}' missing:\n{}", o.stdout);
        }
        // The history's case carries the floor, and the reports show it in the grid.
        let s = run(zp(&["show", "last", "--db", &db, "--format", "json"]), T);
        assert_eq!(s.code, Some(0), "{s:?}");
        let v = envelope(&s.stdout);
        let fl = &v["results"]["cases"][0]["floor"];
        assert_eq!(fl["socket"], Value::String("tcp".into()), "{fl}");
        assert_eq!(u(fl, "/roundtrips"), 120);
        assert!(f(fl, "/latency_us") > 0.0);
        let s = run(zp(&["show", "last", "--db", &db]), T);
        assert_eq!(s.code, Some(0), "{s:?}");
        assert!(s.stdout.contains("raw socket floor (us)"), "{}", s.stdout);
        let _ = std::fs::remove_file(&db);
    });
}
