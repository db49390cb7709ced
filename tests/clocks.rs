//! One-way times across clocks: a receiver whose CLOCK_MONOTONIC is not the sender's (a
//! second host, made here with a time namespace: `unshare --time --monotonic N`) never
//! prints a one-way figure, and says "clocks differ" instead; the compatible lines stay
//! as they are. Both directions: the receiver's clock ahead (every stamp older than the
//! timeout) and behind (every stamp from its future). The sender runs outside.
//!
//! A machine that cannot make a time namespace (not root, or a kernel without time
//! namespaces) fails these tests with why: they never skip.

mod common;

use common::*;
use serde_json::Value;
use std::process::Command;
use std::sync::OnceLock;
use zmqperf::header::{Header, FLAG_END, FLAG_TIMESTAMP};
use zmqperf::zmq;

const T: u64 = 120;

/// The receiver's clock this far ahead of the sender's, s.
const AHEAD_S: i64 = 5000;

/// Fails, saying why, unless this machine can run a process in a time namespace with its
/// own monotonic clock (root, and a kernel with time namespaces, Linux 5.6+).
fn require_time_namespaces() {
    static CHECKED: OnceLock<Result<(), String>> = OnceLock::new();
    let r = CHECKED.get_or_init(|| {
        let o = Command::new("unshare")
            .args(["--time", "--monotonic", "1", "--fork", "--", "true"])
            .output()
            .map_err(|e| {
                format!("`unshare` (util-linux) could not be started: {e}; install util-linux")
            })?;
        if o.status.success() {
            Ok(())
        } else {
            Err(format!(
                "`unshare --time --monotonic 1 --fork -- true` failed ({}): {}; these tests need \
                 root (CAP_SYS_ADMIN) and a kernel with time namespaces (Linux 5.6+, \
                 CONFIG_TIME_NS) to give the receiver a second host's clock",
                o.status,
                String::from_utf8_lossy(&o.stderr).trim()
            ))
        }
    });
    if let Err(why) = r {
        panic!("{why}");
    }
}

/// How far behind the sender's the receiver's clock can be set: half this machine's
/// uptime (a monotonic clock cannot go below 0), at most 5,000 s.
fn behind_s() -> i64 {
    let up = (zmqperf::clock::now_ns() / 1_000_000_000) as i64;
    let s = (up / 2).min(AHEAD_S);
    assert!(
        s >= 2,
        "the machine has been up {up} s: too short to set a receiver's clock 2 s or more behind"
    );
    s
}

/// `zmqperf args` in a time namespace whose CLOCK_MONOTONIC is `offset_s` seconds off
/// this process's (the sender's): a receiver on a second host. `--kill-child`: the
/// watchdog's kill of `unshare` ends zmqperf too.
fn zp_other_clock(offset_s: i64, args: &[&str]) -> Command {
    require_time_namespaces();
    let mut c = Command::new("unshare");
    c.args([
        "--time",
        "--monotonic",
        &offset_s.to_string(),
        "--fork",
        "--kill-child",
        "--",
        env!("CARGO_BIN_EXE_zmqperf"),
    ]);
    c.args(args);
    c.env(
        "ZMQPERF_DB",
        std::env::temp_dir().join(format!("zmqperf-tests-{}.db", std::process::id())),
    );
    c
}

/// local_thr on another clock (`offset_s`), printing `output`, and remote_thr here.
fn local_thr_on_another_clock(offset_s: i64, output: &str) -> Output {
    let l = Proc::spawn(
        zp_other_clock(
            offset_s,
            &[
                "local_thr",
                "tcp://127.0.0.1:*",
                "64",
                "2000",
                output,
                "--timeout",
                "10s",
            ],
        ),
        T - 10,
    );
    let ep = l.bound_endpoint();
    let r = run(zp(&["remote_thr", &ep, "64", "2000"]), T - 10);
    assert_eq!(r.code, Some(0), "{r:?}");
    let o = l.finish();
    assert_eq!(o.code, Some(0), "{o:?}");
    o
}

/// The libzmq-compatible lines are printed as ever: they never use send stamps.
fn compatible_lines_intact(out: &str) {
    assert_eq!(field(out, "message size"), "64", "{out}");
    assert_eq!(field(out, "message count"), "2000", "{out}");
    assert!(field(out, "mean throughput").parse::<u64>().unwrap() > 0);
    assert!(out.contains(" [msg/s]") && out.contains(" [Mb/s]"), "{out}");
}

/// No one-way figure anywhere: the line saying why, and no distribution of send times.
fn no_one_way_figure(out: &str, why: &str) {
    let line = out
        .lines()
        .find(|l| l.starts_with("clocks differ ("))
        .unwrap_or_else(|| panic!("no 'clocks differ' line in:\n{out}"));
    assert!(line.contains(why), "{line}");
    assert!(
        line.ends_with(
            "one-way latency not shown; use round trips (local_lat/remote_lat) or run both \
             sides under `zmqperf run` with a hosts file"
        ),
        "{line}"
    );
    assert!(!out.contains("same host clock"), "{out}");
    assert!(!out.contains("one-way latency, send to receipt"), "{out}");
    assert!(!out.contains("p50"), "a distribution was printed:\n{out}");
}

#[test]
fn local_thr_with_its_clock_ahead_says_clocks_differ_and_prints_no_one_way_figure() {
    with_watchdog(T, || {
        let o = local_thr_on_another_clock(AHEAD_S, "--detail");
        compatible_lines_intact(&o.stdout);
        no_one_way_figure(&o.stdout, "send stamps older than the timeout, up to 5,000");
        // The ledger is still exact.
        assert!(
            o.stdout.contains("delivery: 2000 of 2000 received, 0 lost"),
            "{}",
            o.stdout
        );
    });
}

#[test]
fn local_thr_with_its_clock_behind_says_clocks_differ_and_prints_no_one_way_figure() {
    with_watchdog(T, || {
        let o = local_thr_on_another_clock(-behind_s(), "--detail");
        compatible_lines_intact(&o.stdout);
        no_one_way_figure(&o.stdout, "in this host's future");
    });
}

#[test]
fn local_thr_json_on_another_clock_has_no_one_way_figure_and_says_what_it_found() {
    with_watchdog(T, || {
        let o = local_thr_on_another_clock(AHEAD_S, "--json");
        let v = results(&o.stdout);
        assert_eq!(v["one_way"], Value::Null, "{v}");
        assert_eq!(v["one_way_histogram"], Value::Null, "{v}");
        let stale = v["clock"]["stale"].as_u64().unwrap_or(0);
        // remote_thr stamps every 16th message and the last.
        assert_eq!(stale, 2000 / 16 + 1, "{v}");
        assert!(v["clock"]["stale_max_ns"].as_u64().unwrap() >= 4_999_000_000_000);
        assert_eq!(v["loss"]["received"], 2000, "{v}");
    });
}

/// sub-cluster on another clock (`offset_s`), one process of 3 subscribers, and `pub` here:
/// 4 ticks of 3 messages.
fn sub_cluster_on_another_clock(offset_s: i64, json: bool) -> Output {
    let ep = free_tcp_endpoint();
    let mut args = vec![
        "sub-cluster",
        "-c",
        "1",
        "-n",
        "3",
        "-h",
        &ep,
        "--idle",
        "2s",
        "--timeout",
        "30s",
        "--no-history",
    ];
    if json {
        args.push("--json");
    }
    let subs = Proc::spawn(zp_other_clock(offset_s, &args), T - 10);
    subs.wait_stderr("waiting for the publisher");
    let p = run(
        zp(&[
            "pub", "-h", &ep, "--subs", "3", "-t", "10", "-n", "3", "-p", "4",
        ]),
        T - 10,
    );
    assert_eq!(p.code, Some(0), "{p:?}");
    let o = subs.finish();
    assert_eq!(o.code, Some(0), "{o:?}");
    o
}

#[test]
fn sub_cluster_with_its_clock_ahead_of_the_publisher_prints_no_latency() {
    with_watchdog(T, || {
        let o = sub_cluster_on_another_clock(AHEAD_S, false);
        let out = &o.stdout;
        let line = out
            .lines()
            .find(|l| l.starts_with("latency: clocks differ ("))
            .unwrap_or_else(|| panic!("no 'clocks differ' line in:\n{out}"));
        assert!(line.contains("older than the timeout"), "{line}");
        assert!(!out.contains("latency of"), "{out}");
        assert!(
            !out.contains("MEAN:") && !out.contains("slowest subscriber"),
            "{out}"
        );
        // Delivery is counted as ever: 3 subscribers got all 12.
        assert!(
            out.contains("3 of 3 subscribers got all 12 messages"),
            "{out}"
        );
    });
}

#[test]
fn sub_cluster_with_its_clock_behind_reports_the_stamps_from_its_future_in_json() {
    with_watchdog(T, || {
        let o = sub_cluster_on_another_clock(-behind_s(), true);
        let line = o.stdout.lines().find(|l| l.starts_with('{')).unwrap();
        let r = results(line);
        assert_eq!(r["latency"]["count"], 0, "{r}");
        // 12 stamped messages to each of 3 subscribers, every one from the future.
        assert_eq!(r["latency"]["clock"]["future"], 36, "{r}");
        assert_eq!(r["delivery"]["received"], 36, "{r}");
        assert_eq!(r["slowest"], Value::Null, "{r}");
    });
}

#[test]
fn diagnose_connect_on_another_clock_shows_no_latency() {
    with_watchdog(T, || {
        let ctx = zmq::Context::new();
        let xpub = ctx.socket(zmq::XPUB).unwrap();
        xpub.set_linger(0).unwrap();
        xpub.set_sndhwm(0).unwrap();
        xpub.set_rcvtimeo(30_000).unwrap();
        xpub.bind("tcp://127.0.0.1:*").unwrap();
        let ep = xpub.get_last_endpoint().unwrap().unwrap();
        let p = Proc::spawn(
            zp_other_clock(
                AHEAD_S,
                &[
                    "diagnose",
                    "--connect",
                    &ep,
                    "--type",
                    "SUB",
                    "--count",
                    "100",
                    "--duration",
                    "20s",
                    "--no-history",
                    "--json",
                ],
            ),
            T - 10,
        );
        let sub = xpub.recv_bytes(0).expect("the listener's subscription");
        assert_eq!(sub, vec![1u8]);
        for seq in 0..100u64 {
            let mut m = vec![0u8; 64];
            Header {
                flags: FLAG_TIMESTAMP | if seq == 99 { FLAG_END } else { 0 },
                stream_id: 7,
                sequence: seq,
                send_ns: zmqperf::clock::now_ns(),
            }
            .encode(&mut m);
            xpub.send(m, 0).unwrap();
        }
        let o = p.finish();
        let v = envelope(&o.stdout);
        let f = v["results"]["findings"]
            .as_array()
            .and_then(|fs| fs.iter().find(|f| f["experiment"] == "listen"))
            .unwrap_or_else(|| panic!("no listen finding: {v}"));
        let observed = f["observed"].as_str().unwrap();
        assert!(
            observed.contains(
                "Latency from the send time in the header: clocks differ (100 send stamps \
                 older than the timeout"
            ),
            "{observed}"
        );
        assert!(!observed.contains("same host"), "{observed}");
        assert_eq!(f["evidence"]["clock_stale_stamps"], 100, "{f}");
        assert_eq!(f["evidence"]["latency_p50_ms"], Value::Null, "{f}");
    });
}
