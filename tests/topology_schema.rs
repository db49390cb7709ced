//! The topology and control-protocol schemas: every shipped and example topology file
//! validates, the schema refuses what the loader refuses, and the control lines zmqperf
//! writes (constructed, and read from a real `__node` child) validate in both directions.

mod common;

use common::{schema_errors, schema_validator, with_watchdog};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use zmqperf::roles::RoleReport;
use zmqperf::runner::control::{SentFacts, ToNode, ToRunner, VERSION};
use zmqperf::stats::{LatencyHistogram, Ledger, Throughput};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A topology file as a JSON value: TOML goes through the `toml` crate.
fn as_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    if path.extension().and_then(|e| e.to_str()) == Some("json") {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    } else {
        let t: toml::Value =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::to_value(t).unwrap()
    }
}

fn files_in(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("toml" | "json")
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_shipped_and_example_topology_validates() {
    let v = schema_validator("topology.schema.json");
    let shipped = files_in("topologies");
    let examples = files_in("examples/topologies");
    assert!(shipped.len() >= 8, "{shipped:?}");
    assert!(examples.len() >= 5, "{examples:?}");
    for p in shipped.iter().chain(&examples) {
        let errs = schema_errors(&v, &as_json(p));
        assert!(errs.is_empty(), "{}: {errs:?}", p.display());
    }
}

#[test]
fn the_ptmp_example_is_the_seed_verbatim() {
    let v = as_json(&root().join("examples/topologies/ptmp-pubsub.json"));
    assert_eq!(v["nodes"].as_array().unwrap().len(), 3);
    assert_eq!(
        v["nodes"][0]["socket"],
        json!({"type": "PUB", "bind": ["tcp://127.0.0.1:*"]})
    );
    assert_eq!(
        v["nodes"][2]["socket"],
        json!({"type": "SUB", "connect": ["pub"]})
    );
}

fn base() -> Value {
    json!({"nodes": [
        {"name": "pub", "role": "source", "socket": {"type": "PUB", "bind": ["auto"]}},
        {"name": "sub", "role": "sink", "socket": {"type": "sub", "connect": ["pub"], "subscribe": [""]}}
    ]})
}

#[test]
fn the_schema_refuses_what_the_loader_refuses() {
    let v = schema_validator("topology.schema.json");
    assert!(schema_errors(&v, &base()).is_empty());
    // `node` is an alias of `nodes`.
    let alias = json!({"node": base()["nodes"].clone()});
    assert!(schema_errors(&v, &alias).is_empty());

    let mut unknown_opt = base();
    unknown_opt["nodes"][1]["socket"]["hwm"] = json!(5);
    let e = schema_errors(&v, &unknown_opt);
    assert!(!e.is_empty(), "an unknown socket option passed");
    assert!(e.iter().any(|m| m.contains("hwm")), "{e:?}");

    let mut no_name = base();
    no_name["nodes"][0].as_object_mut().unwrap().remove("name");
    let e = schema_errors(&v, &no_name);
    assert!(e.iter().any(|m| m.contains("name")), "{e:?}");

    let bad: Vec<(&str, Value)> = vec![
        ("unknown top-level field", {
            let mut b = base();
            b["colour"] = json!("red");
            b
        }),
        ("both nodes and node", {
            let mut b = base();
            b["node"] = b["nodes"].clone();
            b
        }),
        ("bad role", {
            let mut b = base();
            b["nodes"][0]["role"] = json!("sinc");
            b
        }),
        ("bad socket type", {
            let mut b = base();
            b["nodes"][0]["socket"]["type"] = json!("SUBB");
            b
        }),
        ("zero replicas", {
            let mut b = base();
            b["nodes"][1]["replicas"] = json!(0);
            b
        }),
        ("empty sweep", {
            let mut b = base();
            b["sweep"] = json!({"size": []});
            b
        }),
        ("sweep of a non-parameter", {
            let mut b = base();
            b["sweep"] = json!({"speed": [1]});
            b
        }),
        ("unknown param", {
            let mut b = base();
            b["params"] = json!({"colour": 1});
            b
        }),
    ];
    for (what, inst) in bad {
        assert!(!schema_errors(&v, &inst).is_empty(), "{what} passed");
    }
    // And the loader agrees on the two the brief names.
    for inst in [&unknown_opt, &no_name] {
        let e = zmqperf::topology::load::load("t.json", &inst.to_string());
        assert!(e.is_err(), "the loader took {inst}");
    }
}

fn sample_report() -> RoleReport {
    let mut h = LatencyHistogram::new();
    for ns in [1_000, 2_000, 50_000] {
        h.record(ns);
    }
    let mut ledger = Ledger::new();
    for s in [0, 1, 2, 5, 4] {
        ledger.record(7, s);
    }
    RoleReport {
        latency: Some(h.clone()),
        stream_latency: vec![(7, h)],
        delivered: Some(Throughput {
            messages: 5,
            payload_bytes: 320,
            start_ns: 10,
            end_ns: 1_000_010,
        }),
        ledger: Some(ledger),
        cut_short: Some("idle".into()),
        forwarded: Some(3),
        usage: Some(zmqperf::roles::usage("receiver", "thread")),
        closed_ns: Some(5_000_000),
        ..Default::default()
    }
}

/// An interval of a ping: 1 s, its round trips, its latency and CPU.
fn interval_record() -> zmqperf::model::IntervalRecord {
    let mut h = LatencyHistogram::new();
    h.record(40_000);
    zmqperf::model::IntervalRecord {
        start_ms: 1000.0,
        dur_ms: 1000.0,
        messages: 1,
        lost: 0,
        latency: Some(h.summary()),
        histogram: None,
        cpu_pct: Some(12.5),
        tick: None,
        round_trips: true,
    }
}

#[test]
fn constructed_control_lines_validate_both_ways() {
    let v = schema_validator("control-protocol.schema.json");
    let lines = vec![
        ToRunner::Ready {
            v: VERSION,
            endpoints: vec!["tcp://127.0.0.1:5555".into(), "ipc:///tmp/x".into()],
        }
        .line(),
        ToRunner::Sent {
            v: VERSION,
            facts: SentFacts::default(),
        }
        .line(),
        ToRunner::Sent {
            v: VERSION,
            facts: SentFacts {
                first_send_ns: Some(1_000),
                last_send_ns: Some(2_000),
                rss_before_kib: Some(9_000),
                rss_after_kib: Some(30_000),
                rss_peak_kib: Some(31_000),
            },
        }
        .line(),
        ToRunner::Report {
            v: VERSION,
            report: Box::new(sample_report()),
        }
        .line(),
        ToRunner::Report {
            v: VERSION,
            report: Box::default(),
        }
        .line(),
        // Version 2, `--interval`: an interval as it closes, and a report that keeps them.
        ToRunner::Interval {
            v: VERSION,
            node: "sink".into(),
            record: Box::new(interval_record()),
        }
        .line(),
        ToRunner::Report {
            v: VERSION,
            report: Box::new(RoleReport {
                intervals: vec![interval_record()],
                first_round_trip_ns: Some(80_000),
                full_send_ns: Some(1_000),
                eot_ahead: Some(0),
                clock_error_ns: Some(20_000),
                io_waits: Some(3),
                ..Default::default()
            }),
        }
        .line(),
        ToRunner::Error {
            v: VERSION,
            message: "no peer".into(),
            exit_code: 6,
        }
        .line(),
        ToNode::start(VERSION).line(),
        ToNode::Stop { v: VERSION }.line(),
        ToNode::Start {
            v: VERSION,
            send_offsets: vec![(0, -5_000_000_000_000)],
        }
        .line(),
        ToNode::Clock { v: VERSION, t0: 7 }.line(),
        ToNode::Ping { v: VERSION, seq: 1 }.line(),
        ToRunner::Clock {
            v: VERSION,
            t0: 7,
            t1: 8,
            t2: 9,
        }
        .line(),
        ToRunner::Pong { v: VERSION, seq: 1 }.line(),
    ];
    for l in &lines {
        assert!(!l.contains('\n'), "a control message spans lines: {l}");
        let val: Value = serde_json::from_str(l).unwrap();
        let e = schema_errors(&v, &val);
        assert!(e.is_empty(), "{l}: {e:?}");
    }
    let bad = [
        json!({"type": "start", "v": 3}),
        json!({"type": "clock", "v": 2, "t0": 1, "t1": 2}),
        json!({"type": "go", "v": 1}),
        json!({"type": "ready", "v": 1}),
        json!({"type": "error", "v": 1, "message": "x"}),
        json!({"v": 1}),
        json!({"type": "sent", "v": 1, "rss_peak_kib": -1}),
        json!({"type": "sent", "v": 1, "bogus": 1}),
    ];
    for b in bad {
        assert!(!schema_errors(&v, &b).is_empty(), "{b} passed");
    }
}

/// Reads a child's stdout lines on a thread, so every wait has a deadline.
fn line_reader(out: std::process::ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

fn node_spec() -> Value {
    let sock = |kind: &str| json!({"kind": kind, "bind": ["tcp://127.0.0.1:*"], "connect": [], "options": {}});
    json!({
        "name": "relay", "role": "proxy",
        "sockets": [sock("PULL"), sock("PUSH")],
        "size": 64, "count": 10, "warmup": 0, "rate": null, "stamp_every": 16,
        "timeout_ms": 5000, "stream_id": 0, "streams": [], "ends_itself": false,
        "expect": 0, "peers": 0, "subscriptions": 0, "delimiter": false
    })
}

#[test]
fn a_real_node_child_speaks_the_schema() {
    with_watchdog(60, || {
        let v = schema_validator("control-protocol.schema.json");
        let mut child = Command::new(env!("CARGO_BIN_EXE_zmqperf"))
            .args(["__node", &node_spec().to_string()])
            .env("ZMQPERF_ROLE_CHILD", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn zmqperf __node");
        let rx = line_reader(child.stdout.take().unwrap());
        let wait = Duration::from_secs(20);
        let mut stdin = child.stdin.take().unwrap();
        let mut seen = Vec::new();
        let ready = rx.recv_timeout(wait).expect("no ready line");
        seen.push(ready.clone());
        let r: Value = serde_json::from_str(&ready).unwrap();
        assert_eq!(r["type"], "ready", "{ready}");
        assert_eq!(r["endpoints"].as_array().unwrap().len(), 2, "{ready}");
        for m in [ToNode::start(VERSION), ToNode::Stop { v: VERSION }] {
            let l = m.line();
            assert!(schema_errors(&v, &serde_json::from_str(&l).unwrap()).is_empty());
            writeln!(stdin, "{l}").unwrap();
            stdin.flush().unwrap();
        }
        let last = rx.recv_timeout(wait).expect("no report line");
        seen.push(last.clone());
        let status = {
            let mut status = None;
            for _ in 0..200 {
                if let Some(s) = child.try_wait().unwrap() {
                    status = Some(s);
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            status.unwrap_or_else(|| {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the node did not exit after its report");
            })
        };
        assert!(status.success(), "{status:?}: {seen:?}");
        let rep: Value = serde_json::from_str(&last).unwrap();
        assert_eq!(rep["type"], "report", "{last}");
        assert_eq!(rep["report"]["forwarded"], 0, "{last}");
        for l in &seen {
            let e = schema_errors(&v, &serde_json::from_str(l).unwrap());
            assert!(e.is_empty(), "{l}: {e:?}");
        }
        // The runner's parser reads the same lines back.
        assert!(matches!(
            ToRunner::parse(&last),
            Some(ToRunner::Report { .. })
        ));

        // A spec that is not one: an error line, exit 2.
        let out = common::run(
            {
                let mut c = common::zmqperf();
                c.args(["__node", "{\"name\": 1}"])
                    .env("ZMQPERF_ROLE_CHILD", "1");
                c
            },
            20,
        );
        assert_eq!(out.code, Some(2), "{out:?}");
        let line = out.stdout.lines().last().expect("an error line");
        let e: Value = serde_json::from_str(line).unwrap();
        assert_eq!(e["type"], "error", "{line}");
        assert_eq!(e["exit_code"], 2, "{line}");
        assert!(schema_errors(&v, &e).is_empty(), "{line}");
    });
}
