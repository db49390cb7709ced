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
sockets = ["PUSH", "PULL", "REQ", "REP"]
"#
        ),
    )
    .unwrap();
    (root.join("peers"), root.join("cache"))
}

fn with_peers(mut c: std::process::Command, peers: &Path, cache: &Path) -> std::process::Command {
    c.env("ZMQPERF_PEERS_DIR", peers)
        .env("ZMQPERF_PEERS_CACHE", cache);
    c
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

#[test]
fn a_peer_is_set_up_listed_and_plays_its_nodes_as_a_foreign_process() {
    with_watchdog(T, || {
        let (peers, cache) = self_peer("mixed", "");
        let before = run(with_peers(zp(&["peers", "list"]), &peers, &cache), 30);
        assert_eq!(before.code, Some(0), "{before:?}");
        assert!(
            before.stdout.contains("no: zmqperf peers setup selfpeer"),
            "{}",
            before.stdout
        );
        // Not set up yet: a run that needs it says what to do.
        let file = write(peers.parent().unwrap(), "mixed.toml", MIXED);
        let o = run(
            with_peers(zp(&["run", &file, "--no-history"]), &peers, &cache),
            60,
        );
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr
                .contains("run `zmqperf peers setup selfpeer` first"),
            "{}",
            o.stderr
        );
        let s = run(
            with_peers(zp(&["peers", "setup", "selfpeer"]), &peers, &cache),
            60,
        );
        assert_eq!(s.code, Some(0), "{s:?}");
        assert!(
            s.stdout
                .contains("selfpeer   ready   selfpeer 1.0 (libzmq 4.3.5)"),
            "{}",
            s.stdout
        );
        let listed = run(
            with_peers(zp(&["peers", "list", "--json"]), &peers, &cache),
            30,
        );
        let v: Value = serde_json::from_str(listed.stdout.lines().next().unwrap()).unwrap();
        assert_eq!(v["ready"], true);
        assert_eq!(v["binding"], "selfpeer 1.0");

        let o = run(
            with_peers(
                zp(&[
                    "run",
                    &file,
                    "--no-history",
                    "--format",
                    "json",
                    "--repetitions",
                    "1",
                ]),
                &peers,
                &cache,
            ),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let v: Value = serde_json::from_str(&o.stdout).unwrap();
        let case = &v["cases"][0];
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
        let s = run(with_peers(zp(&["peers", "setup"]), &peers, &cache), 60);
        assert_eq!(s.code, Some(3), "{s:?}");
        assert!(
            s.stdout
                .contains("needs `no-such-tool-zp` (install it: apt install no-such-tool)"),
            "{}",
            s.stdout
        );
        let o = run(
            with_peers(zp(&["run", "--quick", "--impl", "nope"]), &peers, &cache),
            30,
        );
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr.contains("--impl") && o.stderr.contains("selfpeer"),
            "{}",
            o.stderr
        );
        // Typed frames are never given to a peer; inproc cannot reach one.
        let dir = peers.parent().unwrap();
        let frames = MIXED.replace(
            "impl = \"self\"",
            "impl = \"self\"\nmessage = { frames = [64, 8] }",
        );
        let file = write(dir, "frames.toml", &frames);
        let o = run(
            with_peers(zp(&["run", &file, "--no-history"]), &peers, &cache),
            60,
        );
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr.contains("a peer is not given typed frames"),
            "{}",
            o.stderr
        );
        let inproc = MIXED.replace("transport = \"tcp\"", "transport = \"inproc\"");
        let file = write(dir, "inproc.toml", &inproc);
        let o = run(
            with_peers(zp(&["run", &file, "--no-history"]), &peers, &cache),
            60,
        );
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(o.stderr.contains("inproc:// cannot reach"), "{}", o.stderr);
    });
}
