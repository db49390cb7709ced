//! Topology files end to end: the PTMP example with per-subscriber edges, a log pipeline
//! through a proxy, a PUSH load-balanced over two PULLs (ended by the runner's stop),
//! `topology check`, and mistakes refused before any socket opens. Each under a watchdog;
//! nothing touches the user's history.

mod common;

use common::*;
use serde_json::Value;

const T: u64 = 120;

fn write(name: &str, text: &str) -> String {
    let p = std::env::temp_dir().join(format!("zmqperf-topo-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn run_json(file: &str, extra: &[&str]) -> Value {
    let mut args = vec!["run", file, "--no-history", "--format", "json"];
    args.extend_from_slice(extra);
    let o = run(zp(&args), T);
    assert_eq!(o.code, Some(0), "{o:?}");
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

fn edges(case: &Value) -> Vec<(String, String, &Value)> {
    case["edges"]
        .as_array()
        .expect("edges")
        .iter()
        .map(|e| {
            (
                e["from"].as_str().unwrap().to_string(),
                e["to"].as_str().unwrap().to_string(),
                e,
            )
        })
        .collect()
}

const PTMP: &str = r#"{"nodes": [
  {"name": "pub", "role": "source", "socket": {"type": "PUB", "bind": ["tcp://127.0.0.1:*"]}},
  {"name": "sub1", "role": "sink", "socket": {"type": "SUB", "connect": ["pub"]}},
  {"name": "sub2", "role": "sink", "socket": {"type": "SUB", "connect": ["pub"]}}
]}"#;

#[test]
fn the_ptmp_file_runs_unchanged_and_reports_each_subscriber() {
    with_watchdog(T, || {
        let f = write("ptmp.json", PTMP);
        let v = run_json(&f, &["--count", "3000", "--repetitions", "2"]);
        let case = &v["cases"][0];
        assert!(case["error"].is_null(), "{}", case["error"]);
        assert_eq!(case["transport"], "tcp");
        let e = edges(case);
        let names: Vec<(&str, &str)> = e.iter().map(|(a, b, _)| (a.as_str(), b.as_str())).collect();
        assert_eq!(names, vec![("pub", "sub1"), ("pub", "sub2")]);
        for (_, _, edge) in &e {
            // Every message is accounted for: arrived or lost, of the 2 x 3,000 sent.
            let loss = &edge["loss"];
            assert_eq!(loss["expected"], 6000);
            assert_eq!(
                loss["received"].as_u64().unwrap() + loss["lost"].as_u64().unwrap(),
                6000
            );
            assert_eq!(edge["messages"], loss["received"]);
        }
        let nodes: Vec<&str> = case["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["name"].as_str().unwrap())
            .collect();
        assert_eq!(nodes, vec!["pub", "sub1", "sub2"]);
        assert!(case["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["placement"] == "process"));
    });
}

#[test]
fn a_log_pipeline_through_a_proxy_delivers_every_line_to_every_reader() {
    with_watchdog(T, || {
        let text = r#"
name = "logs"
[params]
count = 2000
repetitions = 1
[[node]]
name = "writer"
role = "source"
replicas = 2
socket = { type = "PUSH", connect = ["collector"] }
[[node]]
name = "collector"
role = "proxy"
sockets = [ { type = "PULL", bind = ["auto"] }, { type = "XPUB", bind = ["auto"], xpub_nodrop = true } ]
[[node]]
name = "reader"
role = "sink"
replicas = 2
socket = { type = "SUB", connect = ["collector"], subscribe = [""] }
"#;
        let f = write("logs.toml", text);
        for transport in ["inproc", "ipc"] {
            let v = run_json(&f, &["--transports", transport]);
            let case = &v["cases"][0];
            assert!(case["error"].is_null(), "{transport}: {}", case["error"]);
            let e = edges(case);
            assert_eq!(e.len(), 4, "2 writers x 2 readers: {e:?}");
            for (from, to, edge) in &e {
                assert!(
                    from.starts_with("writer[") && to.starts_with("reader["),
                    "{from} {to}"
                );
                assert_eq!(edge["messages"], 2000, "{transport} {from}->{to}");
                assert_eq!(edge["loss"]["lost"], 0);
                assert!(edge["latency"]["count"].as_u64().unwrap() > 0);
            }
            let proxy = case["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|n| n["name"] == "collector")
                .unwrap();
            assert!(proxy["forwarded"].as_u64().unwrap() >= 4000, "{proxy}");
        }
    });
}

#[test]
fn a_push_shared_by_two_pulls_is_one_edge_ended_by_the_runner() {
    with_watchdog(T, || {
        let text = r#"{"name": "share", "params": {"count": 4000, "repetitions": 1},
          "nodes": [
            {"name": "src", "role": "source", "socket": {"type": "PUSH", "bind": ["auto"]}},
            {"name": "work", "role": "sink", "replicas": 2, "socket": {"type": "PULL", "connect": ["src"]}}
          ]}"#;
        let f = write("share.json", text);
        let v = run_json(&f, &["--transports", "tcp"]);
        let case = &v["cases"][0];
        assert!(case["error"].is_null(), "{}", case["error"]);
        let e = edges(case);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!((e[0].0.as_str(), e[0].1.as_str()), ("src", "work"));
        assert_eq!(e[0].2["messages"], 4000);
        assert_eq!(e[0].2["loss"]["lost"], 0);
    });
}

#[test]
fn topology_check_prints_the_graph_and_each_mistake_fails_before_any_socket() {
    with_watchdog(T, || {
        let f = write("ok.json", PTMP);
        let o = run(zp(&["topology", "check", &f]), T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("sub1 (SUB) -> pub (PUB)"), "{}", o.stdout);
        assert!(o.stdout.contains("stream pub => sub2"), "{}", o.stdout);
        assert!(o.stdout.contains("warning: node 'sub1'"), "{}", o.stdout);

        let bad = [
            (PTMP.replace("\"SUB\", \"connect\": [\"pub\"]}},\n  {\"name\": \"sub2\"", "\"SUBB\", \"connect\": [\"pub\"]}},\n  {\"name\": \"sub2\""), "node 'sub1': socket.type"),
            (PTMP.replace("{\"type\": \"SUB\", \"connect\": [\"pub\"]}},\n  {\"name\": \"sub2\"", "{\"type\": \"SUB\", \"connect\": [\"pub\"], \"hwm\": 3}},\n  {\"name\": \"sub2\""), "node 'sub1'"),
            (PTMP.replace("\"PUB\"", "\"PUSH\""), "ZMTP refuses"),
            (PTMP.replace("[\"tcp://127.0.0.1:*\"]", "[\"tcp://127.0.0.1:1\"]}}, {\"name\": \"x\", \"role\": \"sink\", \"socket\": {\"type\": \"PULL\", \"bind\": [\"tcp://127.0.0.1:1\"]"), "already bound by node 'pub'"),
        ];
        for (i, (text, want)) in bad.iter().enumerate() {
            let f = write(&format!("bad{i}.json"), text);
            for cmd in [
                vec!["topology", "check", f.as_str()],
                vec!["run", f.as_str(), "--no-history"],
            ] {
                let o = run(zp(&cmd), 20);
                assert_eq!(o.code, Some(3), "{cmd:?}: {o:?}");
                assert!(
                    o.stderr.contains(&f) && o.stderr.contains(want),
                    "want '{want}': {}",
                    o.stderr
                );
            }
        }
    });
}

#[test]
fn a_swarm_of_subscribers_in_two_processes_gets_every_message() {
    with_watchdog(T, || {
        let text = r#"
name = "swarm"
[params]
count = 500
repetitions = 1
transport = "ipc"
[[node]]
name = "pub"
role = "source"
socket = { type = "XPUB", bind = ["auto"], xpub_nodrop = true }
[[node]]
name = "subs"
role = "swarm"
replicas = 2
subs = 40
socket = { type = "SUB", connect = ["pub"], subscribe = [""] }
"#;
        let f = write("swarm.toml", text);
        let v = run_json(&f, &[]);
        let case = &v["cases"][0];
        assert!(case["error"].is_null(), "{}", case["error"]);
        let e = edges(case);
        let names: Vec<(&str, &str)> = e.iter().map(|(a, b, _)| (a.as_str(), b.as_str())).collect();
        assert_eq!(names, vec![("pub", "subs[0]"), ("pub", "subs[1]")]);
        for (_, _, edge) in &e {
            // 40 subscribers x 500 messages each, all delivered.
            assert_eq!(edge["messages"], 20_000, "{edge}");
            assert_eq!(edge["loss"]["expected"], 20_000);
            assert_eq!(edge["loss"]["lost"], 0);
            // Every time-stamped message, at each of the 40 subscribers.
            let stamped = edge["latency"]["count"].as_u64().unwrap();
            assert!(stamped >= 40 && stamped % 40 == 0, "{stamped}");
        }
        let swarm = case["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["name"] == "subs")
            .unwrap();
        assert_eq!(
            (swarm["role"].as_str(), swarm["placement"].as_str()),
            (Some("swarm"), Some("process"))
        );
    });
}
