//! The peer against itself over tcp on 127.0.0.1: PUSH source -> PULL sink and REQ ping ->
//! REP echo, through the control lines, every wait bounded (a line that does not come within
//! its time fails the test and the peers are killed).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

struct Peer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl Peer {
    fn spawn(spec: &Value) -> Peer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_zmqperf-peer-zeromq-rs"))
            .arg(spec.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the peer starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Peer {
            child,
            stdin,
            lines,
        }
    }

    fn say(&mut self, kind: &str) {
        writeln!(self.stdin, "{}", json!({"type": kind, "v": 1})).expect("write a control line");
    }

    fn expect(&mut self, kind: &str, secs: u64) -> Value {
        let text = self
            .lines
            .recv_timeout(Duration::from_secs(secs))
            .unwrap_or_else(|_| panic!("no {kind} line within {secs} s"));
        let v: Value = serde_json::from_str(&text).expect("a JSON line");
        assert_eq!(v["type"], kind, "{text}");
        v
    }

    fn exit_code(mut self) -> i32 {
        for _ in 0..250 {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code().unwrap_or(-1);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("the peer did not exit within 5 s");
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spec(name: &str, role: &str, kind: &str, bind: &[&str], connect: &[&str], count: u64) -> Value {
    json!({"name": name, "role": role,
           "sockets": [{"kind": kind, "bind": bind, "connect": connect, "options": {}}],
           "size": 64, "count": count, "warmup": 10, "rate": null, "stamp_every": 16,
           "timeout_ms": 5000, "stream_id": 3, "streams": [[3, count]], "ends_itself": true,
           "expect": count + 10, "peers": 1, "subscriptions": 0, "delimiter": false,
           "quit": "wait-for-stop"})
}

fn buckets(h: &Value) -> u64 {
    h["buckets"]
        .as_array()
        .expect("buckets")
        .iter()
        .map(|b| b[1].as_u64().unwrap())
        .sum()
}

fn pair(rx_role: &str, rx_kind: &str, tx_role: &str, tx_kind: &str, count: u64) -> (Peer, Peer) {
    let mut rx = Peer::spawn(&spec(
        "rx",
        rx_role,
        rx_kind,
        &["tcp://127.0.0.1:*"],
        &[],
        count,
    ));
    let ready = rx.expect("ready", 10);
    let endpoint = ready["endpoints"][0]
        .as_str()
        .expect("an endpoint")
        .to_string();
    assert!(
        endpoint.starts_with("tcp://127.0.0.1:") && !endpoint.ends_with(":0"),
        "{endpoint}"
    );
    let mut tx = Peer::spawn(&spec("tx", tx_role, tx_kind, &[], &[&endpoint], count));
    tx.expect("ready", 10);
    rx.say("start");
    tx.say("start");
    (rx, tx)
}

#[test]
fn source_to_sink_over_tcp() {
    let count = 10_000;
    let (mut rx, mut tx) = pair("sink", "PULL", "source", "PUSH", count);
    tx.expect("sent", 30);
    let sink = rx.expect("report", 10)["report"].clone();
    tx.say("stop");
    let source = tx.expect("report", 10)["report"].clone();
    assert_eq!(source["send"]["messages"], count);
    assert_eq!(sink["delivered"]["messages"], count);
    let runs = sink["ledger"]["runs"]["3"]
        .as_array()
        .expect("runs of stream 3");
    assert_eq!(runs.len(), 1);
    assert_eq!(
        (runs[0][0].as_u64(), runs[0][1].as_u64()),
        (Some(0), Some(count))
    );
    assert_eq!(
        buckets(&sink["latency"]),
        626,
        "every 16th of 10,000 and the last"
    );
    assert_eq!(tx.exit_code(), 0);
    assert_eq!(rx.exit_code(), 0);
}

#[test]
fn ping_to_echo_over_tcp() {
    let count = 1000;
    let (mut rx, mut tx) = pair("echo", "REP", "ping", "REQ", count);
    tx.expect("sent", 30);
    let ping = tx.expect("report", 10)["report"].clone();
    let echo = rx.expect("report", 10)["report"].clone();
    assert_eq!(ping["round_trips"]["messages"], count);
    assert_eq!(buckets(&ping["latency"]), count);
    assert_eq!(echo["round_trips"]["messages"], count + 10);
    assert_eq!(tx.exit_code(), 0);
    assert_eq!(rx.exit_code(), 0);
}
