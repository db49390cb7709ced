//! The slow sink role (`role = "slow_sink"`, `work_us` per message) end to end: over
//! PUSH/PULL it takes every message, however slowly; behind a PUB with a small queue it
//! loses what the high-water mark drops while a plain sink of the same stream loses
//! nothing; and `topology check` takes it as a sink (the same sockets, the same words).
//! Each under a watchdog; nothing touches the user's history.

mod common;

use common::*;
use serde_json::Value;

const T: u64 = 120;

fn write(name: &str, text: &str) -> String {
    let p = std::env::temp_dir().join(format!("zmqperf-slow-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn run_json(file: &str) -> Value {
    let o = run(
        zp(&[
            "run",
            file,
            "--no-history",
            "--format",
            "json",
            "--transports",
            "tcp",
        ]),
        T,
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    envelope(&o.stdout)
}

/// The edge into `to` of a case.
fn edge<'a>(case: &'a Value, to: &str) -> &'a Value {
    case["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .find(|e| e["to"] == to)
        .unwrap_or_else(|| panic!("no edge into {to}: {case}"))
}

#[test]
fn a_slow_sink_over_push_pull_takes_every_message() {
    with_watchdog(T, || {
        let f = write(
            "pushpull.toml",
            r#"name = "slow-pushpull"
params = { count = 2000, size = 64, repetitions = 1 }
[[nodes]]
name = "src"
role = "source"
socket = { type = "PUSH", bind = ["auto"] }
[[nodes]]
name = "slow"
role = "slow_sink"
work_us = 100
socket = { type = "PULL", connect = ["src"] }
"#,
        );
        let v = run_json(&f);
        let case = &v["results"]["cases"][0];
        assert!(case["error"].is_null(), "{}", case["error"]);
        let e = edge(case, "slow");
        assert_eq!(e["messages"], 2000, "{e}");
        assert_eq!(e["loss"]["lost"], 0, "{e}");
        // 2,000 messages at 100 us of work each take at least 0.2 s to take.
        let rate = e["msgs_per_sec"].as_f64().expect("a rate");
        assert!(
            rate < 10_000.0 * 1.05,
            "{rate} msg/s is faster than its work allows"
        );
    });
}

#[test]
fn behind_a_pub_a_slow_sink_loses_at_the_high_water_mark_and_a_plain_sink_does_not() {
    with_watchdog(T, || {
        let f = write(
            "pubsub.toml",
            r#"name = "slow-pubsub"
params = { count = 10000, size = 64, rate = 5000, repetitions = 1 }
[[nodes]]
name = "pub"
role = "source"
socket = { type = "PUB", bind = ["auto"], sndbuf = 4096 }
[[nodes]]
name = "slow"
role = "slow_sink"
work_us = 2000
socket = { type = "SUB", connect = ["pub"], subscribe = [""], rcvhwm = 10, rcvbuf = 4096 }
[[nodes]]
name = "plain"
role = "sink"
socket = { type = "SUB", connect = ["pub"], subscribe = [""] }
"#,
        );
        let v = run_json(&f);
        let case = &v["results"]["cases"][0];
        assert!(case["error"].is_null(), "{}", case["error"]);
        let n = |e: &Value, k: &str| e["loss"][k].as_u64().unwrap();
        let plain = edge(case, "plain");
        assert_eq!(n(plain, "expected"), 10_000, "{plain}");
        assert_eq!(n(plain, "received"), 10_000, "{plain}");
        assert_eq!(n(plain, "lost"), 0, "{plain}");
        let slow = edge(case, "slow");
        assert_eq!(n(slow, "expected"), 10_000, "{slow}");
        assert!(n(slow, "lost") > 0, "{slow}");
        // Counted exactly: every message is received or lost, and each loss has its place.
        assert_eq!(n(slow, "received") + n(slow, "lost"), 10_000, "{slow}");
        assert_eq!(
            n(slow, "lost_at_start") + n(slow, "lost_in_middle") + n(slow, "lost_at_end"),
            n(slow, "lost"),
            "{slow}"
        );
        let warnings: Vec<&str> = case["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        let cause = warnings
            .iter()
            .find(|w| w.starts_with("cause: "))
            .unwrap_or_else(|| panic!("a lossy case names its cause: {warnings:?}"));
        assert!(cause.contains("the high-water mark"), "{cause}");
    });
}

#[test]
fn topology_check_takes_a_slow_sink_as_a_sink_and_refuses_it_alike() {
    with_watchdog(T, || {
        let good = r#"{"nodes": [
  {"name": "src", "role": "source", "socket": {"type": "PUSH", "bind": ["auto"]}},
  {"name": "slow", "role": "slow_sink", "work_us": 200, "socket": {"type": "PULL", "connect": ["src"]}}
]}"#;
        let f = write("ok.json", good);
        let o = run(zp(&["topology", "check", &f]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("stream src => slow"), "{}", o.stdout);

        // A PUSH is refused on a slow sink with the words a sink gets, but its own name.
        let wrong = |role: &str| {
            let text = good
                .replace(
                    "\"role\": \"slow_sink\", \"work_us\": 200",
                    &format!("\"role\": \"{role}\""),
                )
                .replace("\"PULL\"", "\"PUSH\"")
                .replace("\"connect\": [\"src\"]", "\"bind\": [\"auto\"]");
            let text = if role == "slow_sink" {
                text.replace(
                    "\"role\": \"slow_sink\"",
                    "\"role\": \"slow_sink\", \"work_us\": 200",
                )
            } else {
                text
            };
            let f = write(&format!("wrong-{role}.json"), &text);
            let o = run(zp(&["topology", "check", &f]), 20);
            assert_eq!(o.code, Some(3), "{o:?}");
            o.stderr.replace(&f, "FILE")
        };
        let sink = wrong("sink");
        let slow = wrong("slow_sink");
        assert!(
            sink.contains(
                "a sink needs a receiving socket: SUB, XSUB, PULL, PAIR, DEALER, ROUTER, DISH, GATHER, SERVER, CHANNEL or PEER"
            ),
            "{sink}"
        );
        assert_eq!(slow, sink.replace("a sink needs", "a slow_sink needs"));

        // Its own field: needed on it, refused elsewhere.
        for (text, want) in [
            (good.replace(", \"work_us\": 200", ""), "work_us"),
            (
                good.replace("\"work_us\": 200", "\"work_us\": 0"),
                "work_us",
            ),
            (
                good.replace("\"role\": \"slow_sink\"", "\"role\": \"sink\""),
                "only a slow_sink has `work_us`",
            ),
        ] {
            let f = write("own.json", &text);
            let o = run(zp(&["topology", "check", &f]), 20);
            assert_eq!(o.code, Some(3), "{o:?}");
            assert!(
                o.stderr.contains("node 'slow': work_us") && o.stderr.contains(want),
                "want '{want}': {}",
                o.stderr
            );
        }
    });
}
