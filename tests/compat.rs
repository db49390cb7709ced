//! The compatible commands end to end: the same bodies over inproc (two threads in this
//! process), ipc and tcp (two zmqperf processes), each under a watchdog.

use zmqperf::zmq;

mod common;

use common::*;
use serde_json::Value;
use std::time::Duration;
use zmqperf::endpoint::{Endpoint, Side};
use zmqperf::scenarios::compat::{self, EchoMode, LatConfig, Pattern, ThrConfig};

const T: u64 = 60;

fn json(out: &Output) -> Value {
    assert_eq!(out.code, Some(0), "failed: {out:?}");
    results(&out.stdout)
}

/// Runs local_X on a bound endpoint and remote_X against it, as two processes.
fn pair(bind: &str, local: &[&str], remote: &[&str]) -> (Output, Output) {
    let mut largs = vec![local[0], bind];
    largs.extend_from_slice(&local[1..]);
    let l = Proc::spawn(zp(&largs), T);
    let ep = if bind.ends_with(":*") {
        l.bound_endpoint()
    } else {
        bind.to_string()
    };
    let mut rargs = vec![remote[0], ep.as_str()];
    rargs.extend_from_slice(&remote[1..]);
    let r = run(zp(&rargs), T);
    let l = l.finish();
    assert!(
        l.code == Some(0) && r.code == Some(0),
        "local {largs:?}: {l:?}\nremote {rargs:?}: {r:?}"
    );
    (l, r)
}

fn lat_inproc(size: usize, count: u64, echo: EchoMode) -> (Value, Value) {
    with_watchdog(T, move || {
        let ctx = zmq::Context::new();
        let cfg = LatConfig {
            security: zmqperf::net::security::Mechanism::Null,
            secrets: Default::default(),
            endpoint: Endpoint::parse("inproc://t-lat", Side::Bind).unwrap(),
            side: Side::Bind,
            size,
            count,
            timeout: Duration::from_secs(10),
            instrumented: true,
            echo,
            interval: None,
        };
        let rcfg = LatConfig {
            side: Side::Connect,
            ..cfg.clone()
        };
        let c2 = ctx.clone();
        let echo = std::thread::spawn(move || compat::local_lat(&c2, &cfg, |_| ()).unwrap());
        let r = compat::remote_lat(&ctx, &rcfg).unwrap();
        let e = echo.join().unwrap();
        (
            serde_json::to_value(&r).unwrap(),
            serde_json::to_value(&e).unwrap(),
        )
    })
}

fn check_lat(remote: &Value, local: &Value, count: u64) {
    assert_eq!(remote["roundtrip_count"], count);
    assert_eq!(
        remote["rtt"]["count"],
        count - 1,
        "every round trip but the first (the handshake) is a sample"
    );
    assert_eq!(remote["header"], true);
    let avg = remote["average_latency_us"].as_f64().unwrap();
    let mean_half = remote["rtt"]["mean_ns"].as_f64().unwrap() / 2000.0;
    assert!(avg > 0.0 && mean_half > 0.0);
    // The compatible average (whole loop / 2n) and the per-sample mean / 2 measure the same
    // thing; the loop adds only its own overhead.
    assert!(
        mean_half <= avg * 1.05,
        "mean/2 {mean_half} vs average {avg}"
    );
    assert_eq!(local["echoed"], count);
    assert_eq!(local["loss"]["lost"], 0);
    assert_eq!(local["loss"]["received"], count);
}

#[test]
fn latency_pair_inproc() {
    let (r, l) = lat_inproc(64, 2000, EchoMode::Inspect);
    check_lat(&r, &l, 2000);
}

#[test]
fn latency_pair_ipc() {
    let (l, r) = pair(
        &ipc_endpoint(),
        &["local_lat", "64", "2000", "--json"],
        &["remote_lat", "64", "2000", "--json"],
    );
    check_lat(&json(&r), &json(&l), 2000);
}

#[test]
fn latency_pair_tcp() {
    let (l, r) = pair(
        "tcp://127.0.0.1:*",
        &["local_lat", "1KiB", "2_000", "--json"],
        &["remote_lat", "1024", "2_000", "--json"],
    );
    check_lat(&json(&r), &json(&l), 2000);
}

#[test]
fn echo_modes_over_tcp() {
    for mode in ["--zero-copy", "--copy"] {
        let (l, r) = pair(
            "tcp://127.0.0.1:*",
            &["local_lat", "256", "500", mode, "--json"],
            &["remote_lat", "256", "500", "--json"],
        );
        let (r, l) = (json(&r), json(&l));
        // The first round trip (the handshake) is not in the distribution.
        assert_eq!(r["rtt"]["count"], 499, "{mode}");
        assert_eq!(r["header"], true, "{mode}: the header comes back unchanged");
        assert_eq!(l["echoed"], 500);
    }
    let (r, _) = lat_inproc(100, 300, EchoMode::ZeroCopy);
    assert_eq!(r["rtt"]["count"], 299);
}

fn thr_inproc(pattern: Pattern, count: u64) -> (Value, Value) {
    with_watchdog(T, move || {
        let ctx = zmq::Context::new();
        let cfg = ThrConfig {
            security: zmqperf::net::security::Mechanism::Null,
            secrets: Default::default(),
            endpoint: Endpoint::parse("inproc://t-thr", Side::Bind).unwrap(),
            side: Side::Bind,
            size: 64,
            count,
            timeout: Duration::from_secs(10),
            pattern,
            instrumented: true,
            stamp_every: 16,
            hwm: None,
            lossy: false,
            stream_id: 7,
            interval: None,
        };
        let scfg = ThrConfig {
            side: Side::Connect,
            ..cfg.clone()
        };
        let c2 = ctx.clone();
        let sender = std::thread::spawn(move || compat::remote_thr(&c2, &scfg).unwrap());
        let r = compat::local_thr(&ctx, &cfg, |_| ()).unwrap();
        let s = sender.join().unwrap();
        (
            serde_json::to_value(&r).unwrap(),
            serde_json::to_value(&s).unwrap(),
        )
    })
}

fn check_thr(recv: &Value, send: &Value, count: u64) {
    assert_eq!(recv["message_count"], count);
    assert_eq!(recv["header"], true);
    let loss = &recv["loss"];
    assert_eq!(loss["received"], count);
    assert_eq!(
        loss["lost"], 0,
        "nothing lost, not even at the start: {loss}"
    );
    assert_eq!(loss["duplicated"], 0);
    assert_eq!(loss["reordered"], 0);
    assert!(recv["one_way"]["count"].as_u64().unwrap() >= count / 16);
    assert!(recv["mean_throughput_msgs"].as_u64().unwrap() > 0);
    assert_eq!(send["send"]["messages"], count);
    assert!(send["send"]["end_ns"].as_u64() > send["send"]["start_ns"].as_u64());
}

#[test]
fn throughput_pair_inproc() {
    let (r, s) = thr_inproc(Pattern::PushPull, 50_000);
    check_thr(&r, &s, 50_000);
}

#[test]
fn throughput_pair_ipc() {
    let (l, r) = pair(
        &ipc_endpoint(),
        &["local_thr", "64", "50000", "--json"],
        &["remote_thr", "64", "50000", "--json"],
    );
    check_thr(&json(&l), &json(&r), 50_000);
}

#[test]
fn throughput_pair_tcp() {
    let (l, r) = pair(
        "tcp://127.0.0.1:*",
        &["local_thr", "64", "50k", "--json"],
        &["remote_thr", "64", "50k", "--json"],
    );
    check_thr(&json(&l), &json(&r), 50_000);
}

#[test]
fn pubsub_loses_nothing_at_start_inproc() {
    let (r, s) = thr_inproc(Pattern::PubSub, 50_000);
    check_thr(&r, &s, 50_000);
    assert!(s["subscription_wait_ns"].is_u64());
}

#[test]
fn pubsub_loses_nothing_at_start_ipc() {
    let (l, r) = pair(
        &ipc_endpoint(),
        &["local_thr", "64", "50000", "--pattern", "pubsub", "--json"],
        &["remote_thr", "64", "50000", "--pattern", "pubsub", "--json"],
    );
    check_thr(&json(&l), &json(&r), 50_000);
}

#[test]
fn pubsub_loses_nothing_at_start_tcp() {
    let (l, r) = pair(
        "tcp://127.0.0.1:*",
        &["local_thr", "64", "50000", "--pattern", "pubsub", "--json"],
        &["remote_thr", "64", "50000", "--pattern", "pubsub", "--json"],
    );
    check_thr(&json(&l), &json(&r), 50_000);
}

#[test]
fn default_output_is_libzmqs_lines() {
    let (l, r) = pair(
        "tcp://127.0.0.1:*",
        &["local_thr", "100", "1000"],
        &["remote_thr", "100", "1000"],
    );
    assert_eq!(r.code, Some(0));
    assert_eq!(r.stdout, "", "remote_thr prints nothing, as libzmq's");
    let lines: Vec<&str> = l.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", l.stdout);
    assert_eq!(lines[0], "message size: 100 [B]");
    assert_eq!(lines[1], "message count: 1000");
    assert!(lines[2].starts_with("mean throughput: ") && lines[2].ends_with(" [msg/s]"));
    assert!(lines[3].starts_with("mean throughput: ") && lines[3].ends_with(" [Mb/s]"));
    // msg/s is an integer and Mb/s = msg/s x size x 8 / 10^6 with three decimals.
    let msgs: u64 = field(&l.stdout, "mean throughput").parse().unwrap();
    let mbps: f64 = lines[3].split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!((mbps - msgs as f64 * 100.0 * 8.0 / 1e6).abs() < 0.001);

    let (l, r) = pair(
        "tcp://127.0.0.1:*",
        &["local_lat", "10", "100"],
        &["remote_lat", "10", "100"],
    );
    assert_eq!(l.stdout, "", "local_lat prints nothing, as libzmq's");
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.stdout);
    assert_eq!(lines[0], "message size: 10 [B]");
    assert_eq!(lines[1], "roundtrip count: 100");
    let avg = lines[2].strip_prefix("average latency: ").unwrap();
    let (num, unit) = avg.split_once(' ').unwrap();
    assert_eq!(unit, "[us]");
    assert_eq!(num.split('.').nth(1).unwrap().len(), 3, "three decimals");
}

#[test]
fn detail_prints_the_distribution_after_the_lines() {
    let (_, r) = pair(
        "tcp://127.0.0.1:*",
        &["local_lat", "64", "500"],
        &["remote_lat", "64", "500", "--detail"],
    );
    assert_eq!(r.code, Some(0));
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[2].starts_with("average latency: "));
    assert!(r.stdout.contains("p99.99"), "{}", r.stdout);
    assert!(r.stdout.contains("499 samples"), "{}", r.stdout);
    assert!(r.stdout.contains("handshake, left out"), "{}", r.stdout);
    assert!(r.stdout.contains("timer: "), "{}", r.stdout);
}

#[test]
fn inproc_commands() {
    let o = run(zp(&["inproc_lat", "64", "1000"]), T);
    assert_eq!(o.code, Some(0), "{o:?}");
    assert_eq!(field(&o.stdout, "roundtrip count"), "1000");
    assert_eq!(field(&o.stdout, "message size"), "64");
    let o = run(zp(&["inproc_thr", "64", "100000", "--json"]), T);
    let v = json(&o);
    assert_eq!(v["message_count"], 100_000);
    assert_eq!(v["loss"]["lost"], 0);
    assert_eq!(v["sender"]["send"]["messages"], 100_000);
    let env = envelope(&o.stdout);
    assert_eq!(env["kind"], "inproc_thr");
    assert!(env["environment"]["libzmq_version"]
        .as_str()
        .unwrap()
        .starts_with('4'));
    let o = run(zp(&["inproc_thr", "32", "1000", "--plain"]), T);
    assert_eq!(field(&o.stdout, "message count"), "1000");
}

#[test]
fn smallest_and_largest_messages() {
    let (l, r) = pair(
        &ipc_endpoint(),
        &["local_lat", "1", "200", "--json"],
        &["remote_lat", "1", "200", "--json"],
    );
    let r = json(&r);
    assert_eq!(r["rtt"]["count"], 199);
    assert_eq!(r["header"], false, "1 B cannot hold the 24 B header");
    assert_eq!(json(&l)["echoed"], 200);
    let (l, r) = pair(
        &ipc_endpoint(),
        &["local_lat", "64MiB", "3", "--json"],
        &["remote_lat", "64MiB", "3", "--json"],
    );
    assert_eq!(json(&r)["rtt"]["count"], 2);
    assert_eq!(json(&r)["message_size"], 64 << 20);
    assert_eq!(json(&l)["echoed"], 3);
    let (l, _) = pair(
        &ipc_endpoint(),
        &["local_thr", "64MiB", "4", "--json"],
        &["remote_thr", "64MiB", "4"],
    );
    assert_eq!(json(&l)["loss"]["received"], 4);
}

/// A `local_thr` expecting 1,000 messages of 64 B (printing `--json`), and a foreign PUSH
/// sender connected to it that speaks the measurement header (docs/wire-format.md).
fn local_thr_and_a_foreign_sender() -> (Proc, zmq::Context, zmq::Socket) {
    local_thr_printing("--json")
}

/// The same, with local_thr printing `output` (`--json` or `--detail`).
fn local_thr_printing(output: &str) -> (Proc, zmq::Context, zmq::Socket) {
    let l = Proc::spawn(
        zp(&[
            "local_thr",
            "tcp://127.0.0.1:*",
            "64",
            "1000",
            output,
            "--timeout",
            "10s",
        ]),
        120,
    );
    let ep = l.bound_endpoint();
    let ctx = zmq::Context::new();
    let s = ctx.socket(zmq::PUSH).unwrap();
    s.set_linger(5000).unwrap();
    s.set_sndtimeo(10_000).unwrap();
    s.connect(&ep).unwrap();
    (l, ctx, s)
}

/// Sends one 64-byte message carrying the header of `seq` in stream `stream`.
fn send_numbered(s: &zmq::Socket, stream: u32, seq: u64, flags: u8) {
    let h = zmqperf::header::Header {
        flags,
        stream_id: stream,
        sequence: seq,
        send_ns: 0,
    };
    let mut m = vec![0u8; 64];
    m[..zmqperf::header::HEADER_LEN].copy_from_slice(&h.to_bytes());
    s.send(m, 0).unwrap();
}

#[test]
fn duplicates_do_not_use_up_the_count() {
    with_watchdog(120, || {
        // 0..999 once each, five of them twice, the end mark on 999.
        let (l, _ctx, s) = local_thr_and_a_foreign_sender();
        let mut seqs: Vec<u64> = (0..1000).collect();
        for d in [10u64, 200, 201, 500, 998] {
            let at = seqs.iter().position(|&x| x == d).unwrap() + 1;
            seqs.insert(at, d);
        }
        for seq in seqs {
            let end = if seq == 999 {
                zmqperf::header::FLAG_END
            } else {
                0
            };
            send_numbered(&s, 7, seq, end);
        }
        let o = l.finish();
        drop(s);
        assert_eq!(o.code, Some(0), "nothing was lost: {o:?}");
        let v = results(&o.stdout);
        assert_eq!(v["loss"]["lost"], 0, "{}", o.stdout);
        assert_eq!(v["loss"]["duplicated"], 5, "{}", o.stdout);
        assert_eq!(v["loss"]["received"], 1000, "{}", o.stdout);
        assert_eq!(v["message_count"], 1000, "{}", o.stdout);
        assert_eq!(v["arrivals"], 1005, "{}", o.stdout);
        assert_eq!(v["distinct"], 1000, "{}", o.stdout);
        assert!(
            o.stderr
                .contains("1005 messages arrived: 1000 distinct and 5 duplicates"),
            "{}",
            o.stderr
        );
    });
}

#[test]
fn a_protocol_error_part_way_keeps_the_figures_of_what_arrived() {
    with_watchdog(120, || {
        let (l, _ctx, s) = local_thr_and_a_foreign_sender();
        for seq in 0..100u64 {
            send_numbered(&s, 3, seq, 0);
        }
        // Then a message of the right size without the header.
        s.send(vec![0u8; 64], 0).unwrap();
        let o = l.finish();
        drop(s);
        assert_eq!(o.code, Some(9), "{o:?}");
        let v = results(&o.stdout);
        // libzmq's "message count" is the argument; what arrived is counted apart.
        assert_eq!(v["message_count"], 1000, "{}", o.stdout);
        assert_eq!(v["arrivals"], 100, "{}", o.stdout);
        assert_eq!(v["loss"]["received"], 100, "{}", o.stdout);
        assert!(v["protocol_error"]
            .as_str()
            .unwrap()
            .contains("after 100 messages"));
        assert!(
            o.stderr.contains("without the measurement header"),
            "{}",
            o.stderr
        );
    });
}

/// A foreign echo side (REP) on a free tcp port that answers each request through
/// `answer(index, request)`; serves `count` requests at most, 3 s per wait.
fn foreign_echo(
    count: u64,
    answer: impl Fn(u64, Vec<u8>) -> Vec<u8> + Send + 'static,
) -> (String, std::thread::JoinHandle<()>) {
    let ctx = zmq::Context::new();
    let s = ctx.socket(zmq::REP).unwrap();
    s.set_linger(0).unwrap();
    s.set_rcvtimeo(3_000).unwrap();
    s.set_sndtimeo(3_000).unwrap();
    s.bind("tcp://127.0.0.1:*").unwrap();
    let ep = s.get_last_endpoint().unwrap().unwrap();
    let h = std::thread::spawn(move || {
        for i in 0..count {
            let Ok(m) = s.recv_bytes(0) else { return };
            if s.send(answer(i, m), 0).is_err() {
                return;
            }
        }
        // Let the last reply leave before the socket closes.
        std::thread::sleep(std::time::Duration::from_millis(200));
        drop(s);
        drop(ctx);
    });
    (ep, h)
}

#[test]
fn an_echo_that_corrupts_a_reply_part_way_is_a_protocol_error() {
    with_watchdog(60, || {
        let (ep, h) = foreign_echo(100, |i, mut m| {
            if i == 5 {
                m.iter_mut().for_each(|b| *b = 0);
            }
            m
        });
        let o = run(zp(&["remote_lat", &ep, "64", "100", "--timeout", "5s"]), 60);
        assert_eq!(o.code, Some(9), "{o:?}");
        assert!(o.stderr.contains("reply #5"), "{}", o.stderr);
        assert!(o.stderr.contains("corrupted"), "{}", o.stderr);
        let _ = h.join();
    });
}

#[test]
fn an_echo_that_answers_with_its_own_bytes_is_measured_with_a_warning() {
    with_watchdog(60, || {
        let (ep, h) = foreign_echo(100, |_, m| vec![7u8; m.len()]);
        let o = run(zp(&["remote_lat", &ep, "64", "100", "--timeout", "5s"]), 60);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("average latency"), "{}", o.stdout);
        assert!(o.stderr.contains("timed but not checked"), "{}", o.stderr);
        let _ = h.join();
    });
}

/// Holes inside a PUSH/PULL stream are not blamed on a high-water mark (a PUSH blocks there),
/// and `--detail` names positions as the JSON does.
#[test]
fn loss_in_a_push_pull_stream_names_a_cause_that_fits_it() {
    with_watchdog(120, || {
        let (l, _ctx, s) = local_thr_printing("--detail");
        for seq in (0..1000u64).filter(|q| !(100..110).contains(q)) {
            let end = if seq == 999 {
                zmqperf::header::FLAG_END
            } else {
                0
            };
            send_numbered(&s, 4, seq, end);
        }
        let o = l.finish();
        drop(s);
        assert_eq!(o.code, Some(12), "{o:?}");
        assert!(
            o.stdout.contains("gap: 10 messages from #100 (middle)"),
            "{}",
            o.stdout
        );
        // One rule names the causes for every command (stats::ledger::cause): a sender
        // that blocks at its high-water mark did not drop these; they were lost on the way.
        assert!(
            o.stderr.contains("not a high-water mark (this sender blocks there rather than drop): lost on the way"),
            "{}",
            o.stderr
        );
        assert!(!o.stderr.contains("publisher"), "{}", o.stderr);
    });
}

/// Every `--json` object of the compatible commands follows schema/envelope.schema.json (and
/// through it, its results schema/compat-result.schema.json):
/// both sides of both pairs (PUSH/PULL and PUB/SUB), the inproc commands plain and
/// instrumented, a stream cut short and one that broke the protocol part-way.
#[test]
fn every_json_output_follows_the_schema() {
    with_watchdog(T, || {
        let mut outputs: Vec<(String, String)> = Vec::new();
        let (l, r) = pair(
            "tcp://127.0.0.1:*",
            &["local_lat", "64", "200", "--json"],
            &["remote_lat", "64", "200", "--json"],
        );
        outputs.push(("local_lat".into(), l.stdout));
        outputs.push(("remote_lat".into(), r.stdout));
        for pattern in ["pushpull", "pubsub"] {
            let (l, r) = pair(
                "tcp://127.0.0.1:*",
                &["local_thr", "64", "1000", "--json", "--pattern", pattern],
                &["remote_thr", "64", "1000", "--json", "--pattern", pattern],
            );
            outputs.push((format!("local_thr {pattern}"), l.stdout));
            outputs.push((format!("remote_thr {pattern}"), r.stdout));
        }
        for args in [
            &["inproc_lat", "64", "100", "--json"][..],
            &["inproc_lat", "64", "100", "--json", "--plain"],
            &["inproc_thr", "64", "1000", "--json"],
            &["inproc_thr", "64", "1000", "--json", "--plain"],
            &["inproc_lat", "64", "2000", "--json", "--interval", "5ms"],
            &["inproc_thr", "64", "20000", "--json", "--interval", "2ms"],
        ] {
            outputs.push((args.join(" "), json_line(&run(zp(args), T))));
        }
        // A plain stream of 100 where 200 were expected: cut short, figures printed.
        let l = Proc::spawn(
            zp(&[
                "local_thr",
                "tcp://127.0.0.1:*",
                "64",
                "200",
                "--json",
                "--timeout",
                "500ms",
            ]),
            T,
        );
        let ep = l.bound_endpoint();
        let _ = run(zp(&["remote_thr", &ep, "64", "100", "--plain"]), T);
        let o = l.finish();
        assert_eq!(o.code, Some(17), "{o:?}");
        outputs.push(("local_thr cut short".into(), o.stdout));
        // A message without the header part-way.
        let (l, _ctx, s) = local_thr_and_a_foreign_sender();
        for seq in 0..10u64 {
            send_numbered(&s, 3, seq, 0);
        }
        s.send(vec![0u8; 64], 0).unwrap();
        let o = l.finish();
        assert_eq!(o.code, Some(9), "{o:?}");
        outputs.push(("local_thr protocol error".into(), o.stdout));
        for (what, text) in outputs {
            let whole = envelope(&text);
            assert_eq!(whole["kind"], what.split(' ').next().unwrap(), "{text}");
            assert!(whole["run"].is_null(), "{what}: {text}");
            let value = &whole["environment"];
            assert!(value["libzmq"]["sha256"].is_string(), "{what}: {text}");
            // tcp endpoints carry the interface of 127.0.0.1; inproc has none.
            if what.starts_with("inproc") {
                assert!(value.get("network").is_none(), "{what}: {text}");
            } else {
                assert_eq!(value["network"]["interface"], "lo", "{what}: {text}");
                assert_eq!(value["network"]["loopback"], true, "{what}: {text}");
                assert!(value["network"]["mtu"].as_u64().unwrap_or(0) > 0, "{what}");
            }
        }
    });
}

/// The stdout of a command that succeeded.
fn json_line(o: &Output) -> String {
    assert_eq!(o.code, Some(0), "{o:?}");
    o.stdout.clone()
}
