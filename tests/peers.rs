//! Peers in other languages through the runner (docs/peers.md): a manifest's setup, test
//! and version; a node placed as a foreign process by its `impl`; the errors that name a
//! peer and what it lacks; and every peer of the repository against zmqperf's own nodes.
//! Each under a watchdog; nothing touches the user's history or cache.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const T: u64 = 180;

/// A folder of this test process in the temp folder.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zmqperf-peers-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A peers folder with one peer, `selfpeer`, whose node is zmqperf's own `__node` (so the
/// foreign placement is tested without another language), and a cache folder.
fn self_peer(name: &str, requires: &str) -> (PathBuf, PathBuf) {
    let root = scratch(name);
    let dir = root.join("peers/selfpeer");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = env!("CARGO_BIN_EXE_zmqperf");
    std::fs::write(
        dir.join("peer.toml"),
        format!(
            r#"name = "selfpeer"
aliases = ["self"]
language = "Rust"
binding = "zmqperf's node"
engine = "libzmq"
requires = [{requires}]
setup = [["sh", "-c", "echo built > {{cache}}/built.txt"]]
test = ["test", "-f", "{{cache}}/built.txt"]
version = ["sh", "-c", "echo '{{\"binding\": \"selfpeer 1.0\", \"engine\": \"libzmq 4.3.5\"}}'"]
run = ["{exe}", "__node"]
transports = ["tcp", "ipc"]
roles = ["source", "sink", "ping", "echo"]
sockets = ["PUSH", "PULL", "REQ", "REP", "PUB", "XPUB", "SUB"]
"#
        ),
    )
    .unwrap();
    (root.join("peers"), root.join("cache"))
}

/// Runs zmqperf with `args` against the peers folder `peers` and its cache `cache`, under a
/// deadline of `secs`.
fn run_in(peers: &Path, cache: &Path, args: &[&str], secs: u64) -> Output {
    let mut c = zp(args);
    c.env("ZMQPERF_PEERS_DIR", peers)
        .env("ZMQPERF_PEERS_CACHE", cache);
    run(c, secs)
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

const MIXED: &str = r#"
[params]
transport = "tcp"
count = 2000
size = 64

[[nodes]]
name = "tx"
role = "source"
impl = "self"
socket = { type = "PUSH", bind = ["auto"] }

[[nodes]]
name = "rx"
role = "sink"
socket = { type = "PULL", connect = ["tx"] }

[[nodes]]
name = "server"
role = "echo"
impl = "selfpeer"
socket = { type = "REP", bind = ["auto"] }

[[nodes]]
name = "client"
role = "ping"
socket = { type = "REQ", connect = ["server"] }
"#;

/// `zmqperf run FILE` once, unrecorded, as JSON, each wait at most 20 s (a JVM peer on a
/// loaded 2-core machine once took over 10 s to finish its handshake).
fn run_once(file: &str) -> Output {
    run(
        zp(&[
            "run",
            file,
            "--no-history",
            "--format",
            "json",
            "--repetitions",
            "1",
            "--timeout",
            "20s",
        ]),
        120,
    )
}

#[test]
fn a_peer_is_set_up_listed_and_plays_its_nodes_as_a_foreign_process() {
    with_watchdog(T, || {
        let (peers, cache) = self_peer("mixed", "");
        let before = run_in(&peers, &cache, &["peers", "list"], 30);
        assert_eq!(before.code, Some(0), "{before:?}");
        assert!(
            before.stdout.contains("no: zmqperf peers setup selfpeer"),
            "{}",
            before.stdout
        );
        // Not set up yet: a run that needs it says what to do.
        let file = write(peers.parent().unwrap(), "mixed.toml", MIXED);
        let o = run_in(&peers, &cache, &["run", &file, "--no-history"], 60);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr
                .contains("run `zmqperf peers setup selfpeer` first"),
            "{}",
            o.stderr
        );
        let s = run_in(&peers, &cache, &["peers", "setup", "selfpeer"], 60);
        assert_eq!(s.code, Some(0), "{s:?}");
        assert!(
            s.stdout
                .contains("selfpeer   ready   selfpeer 1.0 (libzmq 4.3.5)"),
            "{}",
            s.stdout
        );
        let listed = run_in(&peers, &cache, &["peers", "list", "--json"], 30);
        let listed = results(&listed.stdout);
        let v = listed["peers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "selfpeer")
            .unwrap_or_else(|| panic!("selfpeer not listed: {listed}"));
        assert_eq!(v["ready"], true);
        assert_eq!(v["binding"], "selfpeer 1.0");

        let o = run_in(
            &peers,
            &cache,
            &[
                "run",
                &file,
                "--no-history",
                "--format",
                "json",
                "--repetitions",
                "1",
            ],
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let v = envelope(&o.stdout);
        let case = &v["results"]["cases"][0];
        let node = |n: &str| {
            case["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["name"] == n)
                .unwrap()
                .clone()
        };
        for n in ["tx", "server"] {
            assert_eq!(node(n)["placement"], "foreign", "{n}: {}", node(n));
            assert_eq!(node(n)["impl"], "selfpeer 1.0 (libzmq 4.3.5)", "{n}");
        }
        for n in ["rx", "client"] {
            assert_eq!(node(n)["placement"], "process", "{n}");
            assert_eq!(node(n)["impl"], "zmqperf", "{n}");
        }
        let edges = case["edges"].as_array().unwrap();
        let e = edges.iter().find(|e| e["from"] == "tx").unwrap();
        assert_eq!(e["messages"], 2000, "{e}");
        assert_eq!(e["loss"]["lost"], 0, "{e}");
        let e = edges.iter().find(|e| e["from"] == "client").unwrap();
        assert_eq!(e["messages"], 2000, "{e}");
    });
}

#[test]
fn a_peer_that_lacks_something_is_named_with_what_it_lacks() {
    with_watchdog(T, || {
        let (peers, cache) = self_peer(
            "lacks",
            r#"{ command = "no-such-tool-zp", install = "apt install no-such-tool" }"#,
        );
        let s = run_in(&peers, &cache, &["peers", "setup"], 60);
        assert_eq!(s.code, Some(3), "{s:?}");
        assert!(
            s.stdout
                .contains("needs `no-such-tool-zp` (install it: apt install no-such-tool)"),
            "{}",
            s.stdout
        );
        let o = run_in(&peers, &cache, &["run", "--quick", "--impl", "nope"], 30);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr.contains("--impl") && o.stderr.contains("selfpeer"),
            "{}",
            o.stderr
        );
        // Typed frames are given only to a peer whose manifest lists them; inproc cannot
        // reach one.
        let dir = peers.parent().unwrap();
        let frames = MIXED.replace(
            "impl = \"self\"",
            "impl = \"self\"\nmessage = { frames = [64, 8] }",
        );
        let file = write(dir, "frames.toml", &frames);
        let o = run_in(&peers, &cache, &["run", &file, "--no-history"], 60);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr
                .contains("peer selfpeer does not play typed frames (message)")
                && o.stderr.contains("shapes = [\"typed\"]"),
            "{}",
            o.stderr
        );
        let inproc = MIXED.replace("transport = \"tcp\"", "transport = \"inproc\"");
        let file = write(dir, "inproc.toml", &inproc);
        let o = run_in(&peers, &cache, &["run", &file, "--no-history"], 60);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(o.stderr.contains("inproc:// cannot reach"), "{}", o.stderr);
    });
}

/// The peers of the repository (peers/*/peer.toml), as `peers list --json` gives them.
fn repo_peers() -> Vec<Value> {
    let o = run(zp(&["peers", "list", "--json"]), 60);
    assert_eq!(o.code, Some(0), "{o:?}");
    results(&o.stdout)["peers"]
        .as_array()
        .unwrap_or_else(|| panic!("no peers list: {}", o.stdout))
        .clone()
}

/// A two-node topology: `client` (ping or source) and `server` (echo or sink), one of
/// them played by `peer`.
fn pair_topology(
    transport: &str,
    kinds: (&str, &str),
    roles: (&str, &str),
    peer_side: usize,
    peer: &str,
) -> String {
    let imp = |side: usize| {
        if side == peer_side {
            format!("impl = \"{peer}\"\n")
        } else {
            String::new()
        }
    };
    // A PUB paced well below any binding's speed: nothing is dropped at the high-water mark.
    let rate = if kinds.0 == "PUB" {
        "rate = 20000\n"
    } else {
        ""
    };
    let count = if roles.0 == "ping" { 300 } else { 3000 };
    format!(
        r#"
[params]
transport = "{transport}"
count = {count}
size = 64
warmup = 10

[[nodes]]
name = "server"
role = "{}"
{}socket = {{ type = "{}", bind = ["auto"] }}

[[nodes]]
name = "client"
role = "{}"
{}{rate}socket = {{ type = "{}", connect = ["server"] }}
"#,
        roles.1,
        imp(1),
        kinds.1,
        roles.0,
        imp(0),
        kinds.0
    )
}

/// Every peer of the repository against zmqperf's own nodes, each side in turn: REQ/REP,
/// DEALER/ROUTER and PAIR round trips, PUSH/PULL and PUB/SUB streams over tcp (and PUSH/PULL
/// over ipc where the peer has it), with exact counts. A peer that is not ready is set up
/// first (`zmqperf peers setup`); one that cannot be set up fails the test with why.
#[test]
fn every_peer_plays_every_pair_against_zmqperf() {
    with_watchdog(45 * 60, || {
        let peers = repo_peers();
        assert!(
            peers.len() >= 9,
            "expected the nine peers of docs/peers.md, found {}",
            peers.len()
        );
        let missing: Vec<String> = peers
            .iter()
            .filter(|p| p["ready"] != true)
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect();
        if !missing.is_empty() {
            eprintln!("setting up peers not ready yet: {}", missing.join(", "));
            let mut args = vec!["peers", "setup"];
            args.extend(missing.iter().map(String::as_str));
            let o = run(zp(&args), 40 * 60);
            assert_eq!(
                o.code,
                Some(0),
                "peers setup failed:\n{}\n{}",
                o.stdout,
                o.stderr
            );
        }
        let dir = scratch("every");
        let pairs = [
            (("REQ", "REP"), ("ping", "echo")),
            (("DEALER", "ROUTER"), ("ping", "echo")),
            (("PAIR", "PAIR"), ("ping", "echo")),
            (("PUSH", "PULL"), ("source", "sink")),
            (("PUB", "SUB"), ("source", "sink")),
        ];
        let mut report = Vec::new();
        let mut failures = Vec::new();
        for p in &peers {
            let name = p["name"].as_str().unwrap();
            let has = |k: &str| {
                p["sockets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|s| s.as_str().unwrap().eq_ignore_ascii_case(k))
            };
            let transports: Vec<&str> = p["transports"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            for (kinds, roles) in pairs {
                for side in [0, 1] {
                    let kind = if side == 0 { kinds.0 } else { kinds.1 };
                    if !has(kind) {
                        report.push(format!("{name}: no {kind} socket (its manifest)"));
                        continue;
                    }
                    let mut ts = vec!["tcp"];
                    if kinds.0 == "PUSH" && transports.contains(&"ipc") {
                        ts.push("ipc");
                    }
                    for t in ts {
                        let text = pair_topology(t, kinds, roles, side, name);
                        let file = write(&dir, &format!("{name}-{kind}-{side}-{t}.toml"), &text);
                        let what = format!(
                            "{name} as {} ({kind}) over {t}",
                            if side == 0 { roles.0 } else { roles.1 }
                        );
                        let o = run_once(&file);
                        if o.code != Some(0) {
                            failures.push(format!("{what}: exit {:?}: {}", o.code, o.stderr));
                            continue;
                        }
                        let v = envelope(&o.stdout);
                        let case = &v["results"]["cases"][0];
                        let edge = &case["edges"][0];
                        let want = if roles.0 == "ping" { 300 } else { 3000 };
                        if edge["messages"] != want
                            || (roles.0 == "source" && edge["loss"]["lost"] != 0)
                        {
                            failures.push(format!("{what}: edge {edge}"));
                            continue;
                        }
                        let node = case["nodes"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .find(|n| n["placement"] == "foreign")
                            .cloned()
                            .unwrap_or(Value::Null);
                        if !node["impl"].as_str().unwrap_or("").contains(" (") {
                            failures.push(format!("{what}: no foreign node named: {node}"));
                            continue;
                        }
                        report.push(format!("{what}: {} ok", edge["messages"]));
                    }
                }
            }
        }
        eprintln!("{}", report.join("\n"));
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    });
}

#[test]
fn the_matrix_shows_every_pair_with_its_ratio_to_the_baseline() {
    with_watchdog(T, || {
        let (peers, cache) = self_peer("matrix", "");
        let s = run_in(&peers, &cache, &["peers", "setup"], 60);
        assert_eq!(s.code, Some(0), "{s:?}");
        let args = [
            "matrix",
            "--impls",
            "zmqperf,selfpeer",
            "--baseline",
            "zmqperf",
            "--quick",
            "--round-trips",
            "200",
            "--messages",
            "3000",
            "--no-history",
        ];
        let mut json_args = args.to_vec();
        json_args.extend(["--format", "json"]);
        let o = run_in(&peers, &cache, &json_args, T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let m = results(&o.stdout);
        let grids = m["grids"].as_array().unwrap();
        assert_eq!(grids.len(), 3, "reqrep, pushpull, pubsub over tcp at 64 B");
        for g in grids {
            let cells = g["cells"].as_array().unwrap();
            assert_eq!(cells.len(), 4, "{g}");
            assert!(g["baseline"]["median"].as_f64().unwrap() > 0.0, "{g}");
            for c in cells {
                assert_eq!(c["status"], "works", "{c}");
                let r = c["ratio"].as_array().unwrap();
                let (x, lo, hi) = (
                    r[0].as_f64().unwrap(),
                    r[1].as_f64().unwrap(),
                    r[2].as_f64().unwrap(),
                );
                assert!(lo <= x && x <= hi && x > 0.0, "{c}");
                if c["client"] == "zmqperf" && c["server"] == "zmqperf" {
                    assert_eq!(x, 1.0, "the baseline against itself");
                }
            }
        }
        assert!(
            o.stderr.contains("12 pairs x 3 passes = 36 cases"),
            "{}",
            o.stderr
        );
        // The text grid and the HTML heat maps of the same run.
        let o = run_in(&peers, &cache, &args, T);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout.contains("client \\ server | zmqperf | selfpeer"),
            "{}",
            o.stdout
        );
        assert!(o.stdout.contains("zmqperf-zmqperf: "), "{}", o.stdout);
        let html = peers.parent().unwrap().join("m.html");
        let mut html_args = args.to_vec();
        html_args.extend(["--format", "html", "-o", html.to_str().unwrap()]);
        let o = run_in(&peers, &cache, &html_args, T);
        assert_eq!(o.code, Some(0), "{o:?}");
        let page = std::fs::read_to_string(&html).unwrap();
        assert_eq!(
            page.matches("<svg class=\"chart heat\"").count(),
            3,
            "a heat map per grid"
        );
        assert_eq!(
            page.matches("class=\"chart legend\"").count(),
            3,
            "a legend each"
        );
        assert_eq!(page.matches("<g class=\"cell ok\">").count(), 12);
    });
}

/// A source and a sink of one shape (`shape`: the source's `message` or `log` line), one
/// side played by `peer`: the edge's messages and loss.
fn shaped_case(
    dir: &Path,
    peer: &str,
    name: &str,
    peer_side: usize,
    shape: &str,
    sub: &str,
) -> Value {
    let imp = |side: usize| {
        if side == peer_side {
            format!("impl = \"{peer}\"\n")
        } else {
            String::new()
        }
    };
    let (sink_kind, source_kind, rate) = if shape.starts_with("log") && !sub.is_empty() {
        ("SUB", "PUB", "rate = 20000\n")
    } else {
        ("PULL", "PUSH", "")
    };
    let text = format!(
        r#"
[params]
transport = "tcp"
count = 3000
size = 128
warmup = 5

[[nodes]]
name = "rx"
role = "sink"
{}socket = {{ type = "{sink_kind}", bind = ["auto"]{sub} }}

[[nodes]]
name = "tx"
role = "source"
{}{rate}{shape}
socket = {{ type = "{source_kind}", connect = ["rx"] }}
"#,
        imp(1),
        imp(0)
    );
    let file = write(dir, &format!("{peer}-{name}.toml"), &text);
    let o = run_once(&file);
    assert_eq!(o.code, Some(0), "{peer} {name}: {o:?}");
    let v = envelope(&o.stdout);
    let case = &v["results"]["cases"][0];
    let foreign = case["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["placement"] == "foreign")
        .count();
    assert_eq!(
        foreign, 1,
        "{peer} {name}: one node played by the peer: {case}"
    );
    case["edges"][0].clone()
}

/// The peers whose manifests list `shapes` (c and czmq) play typed frames and log lines
/// against zmqperf's own nodes, each side in turn: 3-frame typed messages arrive whole
/// with their type id, and log lines through a SUB that takes only ERROR arrive as exactly
/// the 150 ERROR lines of 3,000 (1 in 20), checked by level and rank. (A peer without
/// `shapes` is refused such a node: the self-peer test above.)
#[test]
fn the_c_and_czmq_peers_play_typed_frames_and_log_lines() {
    with_watchdog(10 * 60, || {
        let dir = scratch("shapes");
        for peer in ["c", "czmq"] {
            let p = repo_peers()
                .into_iter()
                .find(|p| p["name"] == peer)
                .unwrap_or_else(|| panic!("peers/{peer}"));
            if p["ready"] != true {
                let o = run(zp(&["peers", "setup", peer]), 5 * 60);
                assert_eq!(o.code, Some(0), "peers setup {peer}: {o:?}");
            }
            let typed = "message = { type_id = 7, frames = [64, 32, 16] }";
            for side in [0, 1] {
                let e = shaped_case(&dir, peer, &format!("typed-{side}"), side, typed, "");
                assert_eq!(e["messages"], 3000, "{peer} typed, side {side}: {e}");
                assert_eq!(e["loss"]["lost"], 0, "{peer} typed, side {side}: {e}");
                let e = shaped_case(
                    &dir,
                    peer,
                    &format!("log-{side}"),
                    side,
                    "log = {}",
                    ", subscribe = [\"ERROR\"]",
                );
                assert_eq!(e["messages"], 150, "{peer} log lines, side {side}: {e}");
                assert_eq!(
                    e["loss"]["expected"], 150,
                    "{peer} log lines, side {side}: {e}"
                );
                assert_eq!(e["loss"]["lost"], 0, "{peer} log lines, side {side}: {e}");
            }
        }
    });
}
