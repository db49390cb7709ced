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
    envelope(&o.stdout)
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
        let case = &v["results"]["cases"][0];
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
            let case = &v["results"]["cases"][0];
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

/// The shipped log pipeline of seed 001 over tcp, as the issue asks: 3 writers x 10,000
/// log lines, a reader of everything and a reader filtered to ERROR. Every edge is exact,
/// and the filtered reader's count is the ERROR lines the writers sent, counted here from
/// the default level cycle on its own (1 in 20).
#[test]
fn the_log_pipeline_counts_exactly_what_each_filter_lets_through() {
    with_watchdog(T, || {
        let v = run_json(
            "examples/topologies/log-pipeline.toml",
            &["--repetitions", "1"],
        );
        let case = &v["results"]["cases"][0];
        assert!(case["error"].is_null(), "{}", case["error"]);
        assert_eq!(case["id"], "throughput/log-pipeline/tcp/128");
        let errors_sent: u64 = (0..10_000u64).filter(|i| i % 20 == 9).count() as u64;
        assert_eq!(errors_sent, 500);
        let e = edges(case);
        assert_eq!(e.len(), 6, "3 writers x 2 readers: {e:?}");
        let mut to_errors = 0;
        for (from, to, edge) in &e {
            assert!(from.starts_with("writer["), "{from}");
            let want = match to.as_str() {
                "reader" => 10_000,
                "errors" => errors_sent,
                other => panic!("edge to {other}"),
            };
            assert_eq!(edge["messages"], want, "{from}->{to}");
            assert_eq!(edge["loss"]["expected"], want, "{from}->{to}");
            assert_eq!(edge["loss"]["lost"], 0, "{from}->{to}");
            assert_eq!(edge["bytes"], want * 128);
            assert!(
                edge["latency"]["count"].as_u64().unwrap() > 0,
                "{from}->{to}: hop latency"
            );
            if to == "errors" {
                to_errors += edge["messages"].as_u64().unwrap();
            }
        }
        assert_eq!(to_errors, 3 * errors_sent);
        let nodes = case["nodes"].as_array().unwrap();
        let node = |n: &str| nodes.iter().find(|x| x["name"] == n).unwrap();
        assert!(node("writer")["send_msgs_per_sec"].as_f64().unwrap() > 0.0);
        for n in ["writer", "collector", "reader", "errors"] {
            assert!(node(n)["peak_rss_kib"].as_u64().unwrap() > 0, "{n}: RSS");
            assert!(node(n)["cpu_ms"].as_f64().unwrap() > 0.0, "{n}: CPU");
        }
        assert_eq!(node("collector")["forwarded"], 3 * (10_000 + 1000));
    });
}

/// Typed multi-frame messages: the shipped sweep puts the same 1,052 bytes in 1, 5 and 17
/// frames; the sink checks every message's frame count and type id, so a clean run means
/// every message arrived whole.
#[test]
fn typed_frames_arrive_whole_and_cost_is_a_sweep() {
    with_watchdog(T, || {
        let v = run_json(
            "examples/topologies/frames.toml",
            &[
                "--count",
                "3000",
                "--repetitions",
                "1",
                "--transports",
                "ipc",
            ],
        );
        let cases = v["results"]["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 3);
        for c in cases {
            assert!(c["error"].is_null(), "{}: {}", c["id"], c["error"]);
            let e = edges(c);
            assert_eq!(e.len(), 1);
            assert_eq!(e[0].2["messages"], 3000, "{}", c["id"]);
            assert_eq!(e[0].2["bytes"], 3000 * 1052, "{}", c["id"]);
            assert_eq!(e[0].2["loss"]["lost"], 0);
            assert!(
                c["warnings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|w| !w.as_str().unwrap().contains("frames")),
                "{}",
                c["warnings"]
            );
        }
        assert!(cases[1]["pattern"]
            .as_str()
            .unwrap()
            .contains("[28,256,256,256,256]"));
    });
}

/// ACSflix (seed 003): the three shipped files, flows grouped in streams whose sinks end on
/// the stream's end-of-transmission message. Every flow delivers exactly its count at
/// every size of the sweep, no sink is cut short (each ended on its EOT), the nodes carry
/// their stream, and the text report has the Streams table with an `all` row where there
/// are several streams.
#[test]
fn acsflix_flows_in_streams_end_on_their_end_of_transmission() {
    with_watchdog(T, || {
        for (file, flows, streams) in [("1x1", 1, 1), ("3x1", 3, 1), ("3x3", 3, 3)] {
            let path = format!("examples/topologies/acsflix-{file}.toml");
            let v = run_json(
                &path,
                &["--count", "2000", "--repetitions", "1", "--sizes", "64"],
            );
            let cases = v["results"]["cases"].as_array().unwrap();
            assert_eq!(cases.len(), 1, "{file}: --sizes replaces the sweep of size");
            let c = &cases[0];
            assert!(c["error"].is_null(), "{file}: {}", c["error"]);
            let e = edges(c);
            assert_eq!(e.len(), flows, "{file}");
            for (from, to, edge) in &e {
                assert_eq!(edge["messages"], 2000, "{file} {from}->{to}");
                assert_eq!(edge["loss"]["lost"], 0);
            }
            let nodes = c["nodes"].as_array().unwrap();
            let mut names: Vec<&str> = nodes
                .iter()
                .map(|n| n["stream"].as_str().unwrap())
                .collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), streams, "{file}: {names:?}");
            for n in nodes {
                assert!(n["cut_short"].is_null(), "{file}: {n}");
                if n["role"] == "sink" {
                    assert!(n["eot_ahead"].as_u64().unwrap() <= 2000, "{file}: {n}");
                }
            }
        }
        // The whole sweep, 2 B .. 8 KiB, in one command, with the seed's rows per size.
        let o = run(
            zp(&[
                "run",
                "examples/topologies/acsflix-3x3.toml",
                "--no-history",
                "--count",
                "2000",
                "--repetitions",
                "1",
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        for needle in [
            "latency (us)",
            "msg/s",
            "Mbit/s",
            "8192",
            "Streams",
            " all ",
        ] {
            assert!(o.stdout.contains(needle), "{needle}: {}", o.stdout);
        }
        for size in [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192] {
            let id = format!("throughput/acsflix-3x3/tcp/{size} ");
            assert!(o.stdout.contains(&id), "{id}");
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
        let case = &v["results"]["cases"][0];
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
        let case = &v["results"]["cases"][0];
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

/// The three I/O modes over ipc, from the shipped files: every message and every round trip
/// arrives (exact counts, nothing lost), and each node says its mode and its waits.
#[test]
fn every_io_mode_delivers_every_message_over_push_pull_and_req_rep() {
    with_watchdog(T, || {
        let schema = schema_validator("envelope.schema.json");
        for (file, from, to) in [
            ("examples/topologies/io-modes.toml", "source", "sink"),
            ("examples/topologies/io-modes-reqrep.toml", "req", "rep"),
        ] {
            let v = run_json(
                file,
                &[
                    "--count",
                    "3000",
                    "--repetitions",
                    "1",
                    "--transports",
                    "ipc",
                ],
            );
            let errors = schema_errors(&schema, &v);
            assert!(errors.is_empty(), "{file}: {errors:?}");
            let cases = v["results"]["cases"].as_array().unwrap();
            assert_eq!(cases.len(), 3, "{file}");
            for (c, mode) in cases.iter().zip(["blocking", "poll", "timeout"]) {
                assert!(c["error"].is_null(), "{}: {}", c["id"], c["error"]);
                assert!(
                    c["pattern"]
                        .as_str()
                        .unwrap()
                        .ends_with(&format!("[io={mode}]")),
                    "{}",
                    c["pattern"]
                );
                let e = edges(c);
                assert_eq!(e.len(), 1, "{}: {e:?}", c["id"]);
                assert_eq!((e[0].0.as_str(), e[0].1.as_str()), (from, to));
                assert_eq!(e[0].2["messages"], 3000, "{}", c["id"]);
                if let Some(loss) = e[0].2.get("loss").filter(|l| !l.is_null()) {
                    assert_eq!(loss["lost"], 0, "{}", c["id"]);
                    assert_eq!(loss["duplicated"], 0, "{}", c["id"]);
                }
                for n in c["nodes"].as_array().unwrap() {
                    assert!(
                        n["cut_short"].as_array().is_none_or(|a| a.is_empty()),
                        "{}: {n}",
                        c["id"]
                    );
                    if mode == "blocking" {
                        assert!(n.get("io").is_none(), "{}: {n}", c["id"]);
                        assert!(n.get("io_waits").is_none(), "{}: {n}", c["id"]);
                    } else {
                        assert_eq!(n["io"], mode, "{}: {n}", c["id"]);
                        assert!(n["io_waits"].is_u64(), "{}: {n}", c["id"]);
                    }
                }
            }
            // PUSH/PULL keeps the loss ledger on its edge.
            if from == "source" {
                assert!(cases.iter().all(|c| c["edges"][0]["loss"].is_object()));
            }
        }
    });
}

#[test]
fn an_io_mode_is_refused_where_it_does_not_apply_or_is_misspelt() {
    with_watchdog(T, || {
        let pipe = |sink_extra: &str| {
            format!(
                r#"{{"nodes": [
  {{"name": "src", "role": "source", "socket": {{"type": "PUSH", "bind": ["auto"]}}}},
  {{"name": "fwd", "role": "proxy", "sockets": [{{"type": "PULL", "connect": ["src"]}}, {{"type": "PUSH", "bind": ["auto"]}}]{sink_extra}}},
  {{"name": "dst", "role": "sink", "socket": {{"type": "PULL", "connect": ["fwd"]}}}}
]}}"#
            )
        };
        let bad = [
            (
                pipe(r#", "io": "poll""#),
                "node 'fwd'",
                "a proxy keeps its own way",
            ),
            (
                pipe("").replace(r#""role": "sink","#, r#""role": "sink", "io": "pol","#),
                "node 'dst'",
                "unknown variant `pol`",
            ),
            (
                pipe("").replace(r#"{"nodes""#, r#"{"params": {"io": "select"}, "nodes""#),
                "params.io",
                "unknown variant `select`",
            ),
        ];
        for (i, (text, node, why)) in bad.iter().enumerate() {
            let f = write(&format!("io-bad{i}.json"), text);
            for cmd in [
                vec!["topology", "check", f.as_str()],
                vec!["run", f.as_str(), "--no-history"],
            ] {
                let o = run(zp(&cmd), 20);
                assert_eq!(o.code, Some(3), "{cmd:?}: {o:?}");
                for want in [f.as_str(), node, "io", why] {
                    assert!(o.stderr.contains(want), "want '{want}': {}", o.stderr);
                }
            }
        }
        // The same pipe with the mode where it applies runs.
        let ok = pipe("").replace(
            r#"{"nodes""#,
            r#"{"params": {"io": "poll", "count": 2000, "repetitions": 1}, "nodes""#,
        );
        let v = run_json(&write("io-ok.json", &ok), &["--transports", "ipc"]);
        let c = &v["results"]["cases"][0];
        assert!(c["error"].is_null(), "{}", c["error"]);
        assert_eq!(edges(c)[0].2["messages"], 2000);
        let io: Vec<_> = c["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["io"].clone())
            .collect();
        // params.io reaches the source and the sink, not the proxy.
        assert_eq!(io, [Value::from("poll"), Value::Null, Value::from("poll")]);
    });
}

/// The shipped files of PTMP's throughput table (seed 004), with small counts: every case
/// of each sweep completes; every edge accounts for every message (received + lost ==
/// expected, and the lost split into start, middle and end); the blocking patterns (PAIR,
/// PUSH/PULL) lose nothing; a paced PUB never sends faster than its rate; inproc cases
/// run on threads.
#[test]
fn ptmp_throughput_table_files_complete_and_account_for_every_message() {
    with_watchdog(300, || {
        let small = ["--count", "2000", "--repetitions", "1"];
        let u = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"));
        let check_common = |c: &Value| {
            let id = c["id"].as_str().unwrap().to_string();
            assert!(c["error"].is_null(), "{id}: {}", c["error"]);
            for n in c["nodes"].as_array().unwrap() {
                let want = if c["transport"] == "inproc" {
                    "thread"
                } else {
                    "process"
                };
                assert_eq!(n["placement"], want, "{id}: {}", n["name"]);
            }
            for (from, to, e) in edges(c) {
                let l = &e["loss"];
                assert_eq!(u(&l["expected"]), 2000, "{id} {from}->{to}");
                assert_eq!(u(&l["received"]), u(&e["messages"]), "{id} {from}->{to}");
                assert_eq!(
                    u(&l["received"]) + u(&l["lost"]),
                    u(&l["expected"]),
                    "{id} {from}->{to}: {l}"
                );
                assert_eq!(
                    u(&l["lost_at_start"]) + u(&l["lost_in_middle"]) + u(&l["lost_at_end"]),
                    u(&l["lost"]),
                    "{id} {from}->{to}: {l}"
                );
            }
            id
        };

        // PUB/SUB: 2 rates x 3 subscriber counts x 3 transports, lossy by design.
        let v = run_json("examples/topologies/ptmp-pubsub-sweep.toml", &small);
        let cases = v["results"]["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 18);
        for c in cases {
            let id = check_common(c);
            let subs: usize = id
                .split("sub.replicas=")
                .nth(1)
                .and_then(|r| r[..1].parse().ok())
                .unwrap_or_else(|| panic!("{id}: no replica count"));
            assert_eq!(edges(c).len(), subs, "{id}: one edge per SUB");
            let paced = id.ends_with("/100000");
            assert_eq!(c["rate"].as_f64(), paced.then_some(100_000.0), "{id}");
            let send = c["nodes"][0]["send_msgs_per_sec"].as_f64().unwrap();
            assert!(send > 0.0, "{id}");
            if paced {
                // The schedule allows at most 2000 messages in 1999 intervals of 10 us.
                assert!(send <= 100_000.0 * 1.01, "{id}: sent at {send} msg/s");
            }
            assert_eq!(c["sender"]["waited_for_subscribers"], false, "{id}");
        }

        // PAIR: blocks, loses nothing.
        let v = run_json("examples/topologies/ptmp-pipe.toml", &small);
        let cases = v["results"]["cases"].as_array().unwrap();
        let ids: Vec<&str> = cases.iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(
            ids,
            [
                "throughput/ptmp-pipe/inproc/64",
                "throughput/ptmp-pipe/ipc/64",
                "throughput/ptmp-pipe/tcp/64"
            ]
        );
        for c in cases {
            let id = check_common(c);
            let e = edges(c);
            assert_eq!(e.len(), 1, "{id}");
            assert_eq!(e[0].2["messages"], 2000, "{id}");
            assert_eq!(c["summary"]["lost"], 0, "{id}");
        }

        // PUSH to 1 and 3 PULLs: round-robin, blocks, loses nothing; the three share one
        // stream, and their delivered rate spans the arrivals, not the runner's stop.
        let v = run_json("examples/topologies/ptmp-pushpull-3.toml", &small);
        let cases = v["results"]["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 6);
        for c in cases {
            let id = check_common(c);
            let e = edges(c);
            assert_eq!(e.len(), 1, "{id}: one shared stream");
            assert_eq!(e[0].2["messages"], 2000, "{id}");
            assert_eq!(e[0].2["loss"]["lost"], 0, "{id}");
            if id.contains("pull.replicas=3") {
                assert_eq!(c["nodes"][1]["replicas"], 3, "{id}");
                // 2000 messages within one 100 ms receive slice: the stop is not counted.
                let rate = c["nodes"][1]["delivered_msgs_per_sec"].as_f64().unwrap();
                assert!(rate > 20_000.0, "{id}: delivered {rate} msg/s");
            }
        }
    });
}
