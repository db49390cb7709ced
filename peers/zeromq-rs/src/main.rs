//! zmqperf peer on the pure-Rust `zeromq` crate (tokio): plays one node (source, sink, ping,
//! echo) of a topology for zmqperf's runner, as docs/peers.md describes.
//!
//! ```text
//! zmqperf-peer-zeromq-rs '<node spec as JSON>'   control lines on stdin/stdout
//! zmqperf-peer-zeromq-rs --version               {"binding": ..., "engine": ...}
//! ```
//!
//! The crate has no PAIR socket and no high-water marks: a node asking for them is refused
//! (exit 3). Its XPUB waits for a slow subscriber instead of dropping (as `xpub_nodrop`).

use futures::StreamExt;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::pin::Pin;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;
use tokio::time::{Instant, Sleep};
use zeromq::prelude::*;
use zeromq::{
    DealerSocket, PubSocket, PullSocket, PushSocket, RepSocket, ReqSocket, RouterSocket,
    SocketOptions, SubSocket, XPubSocket, XSubSocket, ZmqMessage,
};

mod header;
use header::{Header, END, HEADER_LEN, TIMESTAMP, WARMUP};

/// A receive gives up this often to look at the runner's stop and the idle time.
const SLICE: Duration = Duration::from_millis(100);
/// After the stop, a sink ends once this long passes without a message: a TCP stream held
/// up for a delayed acknowledgement (up to 200 ms on Linux) is late, not lost.
const DRAIN_MS: u64 = 1000;
/// The version of the `zeromq` crate in Cargo.lock.
const ZEROMQ_VERSION: &str = "0.7.0";

/// The monotonic clock every process on the host shares, ns.
fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn line(v: Value) {
    println!("{v}");
}

/// Writes the `error` line and exits with its code (2 spec, 3 unsupported, 4 timeout, 9
/// protocol).
fn fail(code: i32, message: impl Into<String>) -> ! {
    let message = message.into();
    eprintln!("peer zeromq-rs: {message}");
    line(json!({"type": "error", "v": 1, "message": message, "exit_code": code}));
    std::process::exit(code)
}

/// Compact histogram: each value rounded down to 3 significant digits, with its count.
#[derive(Default)]
struct Histogram(HashMap<u64, u64>);

impl Histogram {
    fn record(&mut self, value: u64) {
        let mut scale = 1;
        while value >= 1000 * scale {
            scale *= 10;
        }
        *self.0.entry(value / scale * scale).or_default() += 1;
    }

    fn merge(&mut self, other: &Histogram) {
        for (v, c) in &other.0 {
            *self.0.entry(*v).or_default() += c;
        }
    }

    fn json(&self) -> Value {
        json!({"buckets": self.0.iter().map(|(v, c)| [*v, *c]).collect::<Vec<_>>()})
    }
}

fn span(messages: u64, bytes: u64, start_ns: u64, end_ns: u64) -> Value {
    json!({"messages": messages, "payload_bytes": bytes, "start_ns": start_ns, "end_ns": end_ns})
}

/// What the runner said on stdin so far.
#[derive(Clone, Copy, Default)]
struct Ctl {
    started: bool,
    stopped: bool,
    not_start: bool,
}

/// Reads the runner's lines; the end of stdin is a stop.
async fn read_control(tx: watch::Sender<Ctl>) {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(text)) = lines.next_line().await {
        let kind = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string));
        tx.send_modify(|c| match kind.as_deref() {
            Some("start") => c.started = true,
            Some("stop") => c.stopped = true,
            _ => c.not_start |= !c.started,
        });
    }
    tx.send_modify(|c| c.stopped = true);
}

/// The node spec (the fields a peer reads) and the runner's lines.
struct Node {
    spec: Value,
    name: String,
    role: String,
    kind: String,
    size: usize,
    timeout: Duration,
    ctl: watch::Receiver<Ctl>,
}

impl Node {
    fn u64(&self, key: &str) -> u64 {
        self.spec.get(key).and_then(Value::as_u64).unwrap_or(0)
    }

    fn bool(&self, key: &str) -> bool {
        self.spec.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    fn socket(&self) -> &Value {
        &self.spec["sockets"][0]
    }

    fn endpoints(&self, key: &str) -> Vec<String> {
        self.socket()[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn peer_endpoint(&self) -> String {
        let mut all = self.endpoints("connect");
        all.extend(self.endpoints("bind"));
        all.into_iter()
            .next()
            .unwrap_or_else(|| "(no endpoint)".into())
    }

    fn stopped(&self) -> bool {
        self.ctl.borrow().stopped
    }

    async fn wait_for_start(&mut self) {
        let waited = tokio::time::timeout(
            self.timeout,
            self.ctl.wait_for(|c| c.started || c.stopped || c.not_start),
        )
        .await
        .is_ok();
        let c = *self.ctl.borrow();
        if c.started {
            return;
        }
        if waited && c.not_start {
            fail(9, "protocol error: expected start");
        }
        fail(9, "protocol error: no start signal from the runner")
    }

    async fn wait_for_stop(&mut self) {
        let _ = tokio::time::timeout(self.timeout, self.ctl.wait_for(|c| c.stopped)).await;
    }

    /// Socket options: the crate has a routing id and nothing else of libzmq's.
    fn options(&self) -> (SocketOptions, Vec<String>) {
        let mut options = SocketOptions::default();
        options.connect_timeout(self.timeout);
        let mut prefixes = Vec::new();
        let empty = Map::new();
        for (key, value) in self.socket()["options"].as_object().unwrap_or(&empty) {
            match (key.as_str(), value) {
                (_, Value::Null) => {}
                ("subscribe", v) => {
                    prefixes = v
                        .as_array()
                        .map(|a| a.iter().filter_map(|p| p.as_str().map(str::to_string)).collect())
                        .unwrap_or_default()
                }
                ("routing_id", Value::String(id)) => match id.parse() {
                    Ok(id) => {
                        options.peer_identity(id);
                    }
                    Err(_) => fail(3, format!("node {}: routing_id '{id}' is not a valid identity", self.name)),
                },
                // No linger in the crate: closing drops what is queued, which is what the
                // peer does at the end anyway (linger 0).
                ("linger", _) => {}
                // Its XPUB never drops: it waits for the subscriber.
                ("xpub_nodrop", Value::Bool(true)) if self.kind == "XPUB" || self.kind == "PUB" => {}
                _ => fail(
                    3,
                    format!(
                        "node {}: the zeromq-rs peer cannot set socket option '{key}' (the zeromq crate has no such option; remove it or play the node with zmqperf)",
                        self.name
                    ),
                ),
            }
        }
        if prefixes.is_empty() {
            prefixes.push(String::new());
        }
        (options, prefixes)
    }

    /// Opens the socket of type `S`, binds and connects it, and writes `ready`.
    async fn open<S: Socket>(&self) -> S {
        let (options, _) = self.options();
        let mut socket = S::with_options(options);
        let mut bound = Vec::new();
        for endpoint in self.endpoints("bind") {
            let wanted = endpoint
                .strip_suffix(":*")
                .map_or(endpoint.clone(), |h| format!("{h}:0"));
            match socket.bind(&wanted).await {
                Ok(real) => bound.push(real.to_string()),
                Err(e) => fail(3, format!("node {} cannot bind {endpoint}: {e}", self.name)),
            }
        }
        for endpoint in self.endpoints("connect") {
            if let Err(e) = socket.connect(&endpoint).await {
                fail(
                    4,
                    format!("node {} cannot connect to {endpoint}: {e}", self.name),
                );
            }
        }
        line(json!({"type": "ready", "v": 1, "endpoints": bound}));
        socket
    }

    fn usage(&self) -> Value {
        // SAFETY: getrusage fills the struct it is given.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut ru);
            ru
        };
        let ms = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 / 1e3;
        let hwm = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            })
            .unwrap_or(0);
        json!({"role": self.role, "placement": "foreign", "cpu_user_ms": ms(ru.ru_utime),
               "cpu_sys_ms": ms(ru.ru_stime), "peak_rss_kib": hwm})
    }

    fn payload(&self, template: &mut [u8], flags: u8, sequence: u64, send_ns: u64) -> ZmqMessage {
        if self.size >= HEADER_LEN {
            let stream_id = self.u64("stream_id") as u32;
            template[..HEADER_LEN].copy_from_slice(
                &Header {
                    flags,
                    stream_id,
                    sequence,
                    send_ns,
                }
                .encode(),
            );
        }
        ZmqMessage::from(bytes::Bytes::copy_from_slice(template))
    }
}

/// A receive that gives up at the next tick (every `SLICE`), so a loop can look at the
/// runner's stop and count idle time without a timer per message.
struct Ticker {
    sleep: Pin<Box<Sleep>>,
}

impl Ticker {
    fn new() -> Self {
        Ticker {
            sleep: Box::pin(tokio::time::sleep(SLICE)),
        }
    }

    async fn recv<S: SocketRecv>(&mut self, socket: &mut S) -> Option<ZmqMessage> {
        tokio::select! {
            biased;
            got = socket.recv() => match got {
                Ok(m) => Some(m),
                Err(e) => fail(9, format!("receive failed: {e}")),
            },
            _ = &mut self.sleep => {
                self.sleep.as_mut().reset(Instant::now() + SLICE);
                None
            }
        }
    }
}

/// Idle time counted in ticks: a tick with no message since the last adds a slice.
#[derive(Default)]
struct Idle {
    got: bool,
    ms: u64,
}

impl Idle {
    fn message(&mut self) {
        self.got = true;
    }

    fn tick(&mut self) -> u64 {
        if self.got {
            self.ms = 0;
        } else {
            self.ms += SLICE.as_millis() as u64;
        }
        self.got = false;
        self.ms
    }
}

async fn send_or_fail<S: SocketSend>(node: &Node, socket: &mut S, msg: ZmqMessage, what: &str) {
    match tokio::time::timeout(node.timeout, socket.send(msg)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => fail(9, format!("send of {what} failed: {e}")),
        Err(_) => fail(
            4,
            format!(
                "{what} not taken within {} ms by {}",
                node.timeout.as_millis(),
                node.peer_endpoint()
            ),
        ),
    }
}

async fn run_source<S: SocketSend>(
    node: &mut Node,
    socket: &mut S,
    report: &mut Map<String, Value>,
) {
    let count = node.u64("count");
    let warmup = node.u64("warmup");
    let stamp_every = node.u64("stamp_every").max(1);
    let rate = node
        .spec
        .get("rate")
        .and_then(Value::as_f64)
        .filter(|r| *r > 0.0);
    let mut template = vec![0u8; node.size];
    for i in 0..warmup {
        let msg = node.payload(&mut template, WARMUP, i, 0);
        send_or_fail(node, socket, msg, &format!("warm-up message {i}")).await;
    }
    let mut delay = Histogram::default();
    let first = now_ns();
    for i in 0..count {
        let mut flags = if i + 1 == count { END } else { 0 };
        let mut stamp = 0;
        if let Some(rate) = rate {
            let due = first + (i as f64 * 1e9 / rate) as u64;
            let now = now_ns();
            if due > now + 1_000_000 {
                tokio::time::sleep(Duration::from_nanos(due - now - 1_000_000)).await;
            }
            while now_ns() < due {
                std::hint::spin_loop();
            }
            delay.record(now_ns().saturating_sub(due));
            flags |= TIMESTAMP;
            stamp = due;
        } else if i % stamp_every == 0 || i + 1 == count {
            flags |= TIMESTAMP;
            stamp = now_ns();
        }
        let msg = node.payload(&mut template, flags, i, stamp);
        send_or_fail(node, socket, msg, &format!("message {i}")).await;
    }
    let last = now_ns();
    line(json!({"type": "sent", "v": 1, "first_send_ns": first, "last_send_ns": last}));
    report.insert(
        "send".into(),
        span(count, count * node.size as u64, first, last),
    );
    if rate.is_some() {
        report.insert("send_delay".into(), delay.json());
    }
    node.wait_for_stop().await;
}

/// A PUB with `subscriptions` waits for them first: opened as an XPUB, it reads them.
async fn wait_for_subscriptions(node: &Node, socket: &mut XPubSocket) -> u64 {
    let want = node.u64("subscriptions");
    let start = now_ns();
    let (mut seen, mut ticker, mut idle) = (0, Ticker::new(), Idle::default());
    while seen < want {
        match ticker.recv(socket).await {
            Some(m) => {
                idle.message();
                if m.get(0).is_some_and(|f| f.first() == Some(&1)) {
                    seen += 1;
                }
            }
            None if idle.tick() >= node.timeout.as_millis() as u64 => fail(
                4,
                format!(
                    "saw {seen} of {want} subscriptions within {} ms on {}",
                    node.timeout.as_millis(),
                    node.peer_endpoint()
                ),
            ),
            None => {}
        }
    }
    now_ns() - start
}

/// One stream's ledger (runs of consecutive sequence numbers) and latency.
#[derive(Default)]
struct Stream {
    runs: Vec<[u64; 3]>,
    latency: Histogram,
    ended: bool,
}

impl Stream {
    fn record(&mut self, sequence: u64) {
        match self.runs.last_mut() {
            Some(run) if run[0] + run[1] == sequence => run[1] += 1,
            _ => self.runs.push([sequence, 1, now_ns()]),
        }
    }
}

/// The payload frame of a message: a ROUTER's identity and empty delimiters skipped.
fn payload_frame(msg: &ZmqMessage, routed: bool) -> Option<&bytes::Bytes> {
    let frames = msg.iter().skip(routed as usize);
    let mut frames = frames.peekable();
    while let Some(f) = frames.next() {
        if !f.is_empty() || frames.peek().is_none() {
            return Some(f);
        }
    }
    None
}

async fn run_sink<S: SocketRecv>(node: &mut Node, socket: &mut S, report: &mut Map<String, Value>) {
    let expected: Vec<u32> = node.spec["streams"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p[0].as_u64().map(|id| id as u32))
                .collect()
        })
        .unwrap_or_default();
    let mut streams: Vec<(u32, Stream)> =
        expected.iter().map(|id| (*id, Stream::default())).collect();
    let ends_itself = node.bool("ends_itself");
    let warmup = node.u64("warmup");
    let routed = node.kind == "ROUTER";
    let timeout_ms = node.timeout.as_millis() as u64;
    let (mut received, mut bytes, mut start, mut last_read, mut plain, mut ends) =
        (0u64, 0u64, 0, 0, 0, 0);
    let mut headed = false;
    let mut cut_short = None;
    let (mut ticker, mut idle) = (Ticker::new(), Idle::default());
    node.wait_for_start().await;
    loop {
        let Some(msg) = ticker.recv(socket).await else {
            let idle_ms = idle.tick();
            if node.stopped() && idle_ms >= DRAIN_MS {
                if ends_itself && !expected.is_empty() && ends < expected.len() {
                    cut_short = Some(format!("the end of the stream never came: {received} messages arrived before the senders finished and the queue ran dry"));
                }
                break;
            }
            if idle_ms >= timeout_ms {
                if received == 0 && ends_itself {
                    fail(
                        4,
                        format!(
                            "nothing arrived within {timeout_ms} ms on {}",
                            node.peer_endpoint()
                        ),
                    );
                }
                cut_short = Some(format!("nothing arrived for {idle_ms} ms"));
                break;
            }
            continue;
        };
        idle.message();
        let Some(frame) = payload_frame(&msg, routed) else {
            continue;
        };
        let header = match Header::decode(frame) {
            Ok(h) => h,
            Err(why) => fail(9, format!("protocol error: {why}")),
        };
        let Some(h) = header else {
            plain += 1;
            if plain > warmup {
                if received == 0 {
                    start = now_ns();
                    last_read = start;
                }
                received += 1;
                bytes += frame.len() as u64;
            }
            continue;
        };
        if h.flags & WARMUP != 0 {
            continue;
        }
        headed = true;
        let stamped = h.flags & TIMESTAMP != 0;
        let now = if stamped || received == 0 {
            now_ns()
        } else {
            0
        };
        if received == 0 {
            start = now;
        }
        if now > 0 {
            last_read = now;
        }
        received += 1;
        bytes += frame.len() as u64;
        let i = match streams.iter().position(|(id, _)| *id == h.stream_id) {
            Some(i) => i,
            None => {
                streams.push((h.stream_id, Stream::default()));
                streams.len() - 1
            }
        };
        let stream = &mut streams[i].1;
        stream.record(h.sequence);
        if stamped {
            stream.latency.record(now.saturating_sub(h.send_ns));
        }
        if h.flags & END != 0 && !stream.ended {
            stream.ended = true;
            ends += 1;
            if ends_itself && !expected.is_empty() && ends >= expected.len() {
                break;
            }
        }
    }
    let end = if received == 0 { start } else { last_read };
    report.insert("delivered".into(), span(received, bytes, start, end));
    report.insert("header".into(), json!(headed));
    if let Some(why) = cut_short {
        report.insert("cut_short".into(), json!(why));
    }
    if headed {
        let mut all = Histogram::default();
        let mut runs = Map::new();
        let mut per = Vec::new();
        for (id, s) in &streams {
            all.merge(&s.latency);
            per.push(json!([id, s.latency.json()]));
            runs.insert(id.to_string(), json!(s.runs));
        }
        report.insert("latency".into(), all.json());
        report.insert("stream_latency".into(), Value::Array(per));
        report.insert("ledger".into(), json!({ "runs": runs }));
    }
}

async fn run_ping<S: SocketSend + SocketRecv>(
    node: &mut Node,
    socket: &mut S,
    report: &mut Map<String, Value>,
) {
    let count = node.u64("count");
    let warmup = node.u64("warmup");
    let delimited = node.kind == "DEALER" && node.bool("delimiter");
    let timeout_ms = node.timeout.as_millis() as u64;
    let mut template = vec![0u8; node.size];
    let mut latency = Histogram::default();
    let (mut start, mut end) = (None, 0);
    let mut ticker = Ticker::new();
    node.wait_for_start().await;
    for i in 0..warmup + count {
        let warm = i < warmup;
        let sequence = if warm { i } else { i - warmup };
        let t0 = now_ns();
        let mut request = node.payload(
            &mut template,
            TIMESTAMP | if warm { WARMUP } else { 0 },
            sequence,
            t0,
        );
        if delimited {
            request.push_front(bytes::Bytes::new());
        }
        send_or_fail(node, socket, request, &format!("request {sequence}")).await;
        let mut idle = Idle::default();
        let reply = loop {
            if let Some(m) = ticker.recv(socket).await {
                break m;
            }
            if idle.tick() >= timeout_ms {
                fail(
                    4,
                    format!(
                        "no reply to request {sequence} within {timeout_ms} ms from {}",
                        node.peer_endpoint()
                    ),
                );
            }
        };
        let t1 = now_ns();
        let frame = payload_frame(&reply, false).map_or(0, |f| f.len());
        if frame != node.size {
            fail(
                9,
                format!(
                    "protocol error: a reply of {frame} bytes to a request of {} bytes",
                    node.size
                ),
            );
        }
        if node.size >= HEADER_LEN {
            let h = payload_frame(&reply, false).and_then(|f| Header::decode(f).ok().flatten());
            if h.is_none_or(|h| h.sequence != sequence) {
                fail(
                    9,
                    format!(
                        "protocol error: the reply to request {sequence} carries another header"
                    ),
                );
            }
        }
        if !warm {
            start.get_or_insert(t0);
            end = t1;
            latency.record((t1 - t0) / 2);
        }
    }
    line(json!({"type": "sent", "v": 1}));
    report.insert("latency".into(), latency.json());
    report.insert(
        "round_trips".into(),
        span(count, count * node.size as u64, start.unwrap_or(0), end),
    );
}

async fn run_echo<S: Socket + SocketSend + SocketRecv>(
    node: &mut Node,
    socket: &mut S,
    report: &mut Map<String, Value>,
) {
    // The crate has no linger: a reply still queued when the process ends is lost. So an
    // echo that ends by itself waits for its ping to hang up (or the stop) before it goes.
    let mut events = socket.monitor();
    let expect = node.u64("expect");
    let ends_itself = node.bool("ends_itself");
    let timeout_ms = node.timeout.as_millis() as u64;
    let (mut answered, mut bytes, mut start, mut end) = (0u64, 0u64, 0, 0);
    let mut cut_short = None;
    let (mut ticker, mut idle) = (Ticker::new(), Idle::default());
    node.wait_for_start().await;
    while !(ends_itself && expect > 0 && answered >= expect) {
        let Some(msg) = ticker.recv(socket).await else {
            let idle_ms = idle.tick();
            if node.stopped() {
                break;
            }
            if idle_ms >= timeout_ms {
                cut_short = Some(format!("nothing arrived for {idle_ms} ms"));
                break;
            }
            continue;
        };
        idle.message();
        if answered == 0 {
            start = now_ns();
        }
        bytes += msg.iter().last().map_or(0, |f| f.len() as u64);
        send_or_fail(node, socket, msg, &format!("reply {answered}")).await;
        end = now_ns();
        answered += 1;
    }
    if cut_short.is_none() && !node.stopped() {
        // A receive drives the connection's reader, which is what sees the hang-up.
        let deadline = Instant::now() + node.timeout;
        loop {
            tokio::select! {
                Some(event) = events.next() => {
                    if matches!(event, zeromq::SocketEvent::Disconnected(_)) {
                        break;
                    }
                }
                _ = socket.recv() => {}
                _ = tokio::time::sleep_until(deadline) => break,
                _ = node.ctl.wait_for(|c| c.stopped) => break,
            }
        }
    }
    report.insert("round_trips".into(), span(answered, bytes, start, end));
    if let Some(why) = cut_short {
        report.insert("cut_short".into(), json!(why));
    }
}

async fn source<S: Socket + SocketSend>(node: &mut Node, report: &mut Map<String, Value>) {
    let mut socket: S = node.open().await;
    node.wait_for_start().await;
    run_source(node, &mut socket, report).await;
    socket.close().await;
}

async fn play(mut node: Node) {
    let mut report = Map::new();
    for key in ["latency", "send_delay", "send", "delivered", "ledger"] {
        report.insert(key.into(), Value::Null);
    }
    let (_, prefixes) = node.options();
    let subscribing = node.role == "source" && node.u64("subscriptions") > 0;
    let r = &mut report;
    match (node.role.as_str(), node.kind.as_str()) {
        ("source", "PUB" | "XPUB") if subscribing => {
            let mut socket: XPubSocket = node.open().await;
            node.wait_for_start().await;
            let waited = wait_for_subscriptions(&node, &mut socket).await;
            r.insert("subscription_wait_ns".into(), json!(waited));
            run_source(&mut node, &mut socket, r).await;
            socket.close().await;
        }
        ("source", "PUB") => source::<PubSocket>(&mut node, r).await,
        ("source", "XPUB") => source::<XPubSocket>(&mut node, r).await,
        ("source", "PUSH") => source::<PushSocket>(&mut node, r).await,
        ("source", "DEALER") => source::<DealerSocket>(&mut node, r).await,
        ("sink", "SUB") => {
            let mut s: SubSocket = node.open().await;
            for p in &prefixes {
                s.subscribe(p).await.unwrap_or_else(|e| fail(3, format!("cannot subscribe to '{p}': {e}")));
            }
            run_sink(&mut node, &mut s, r).await;
        }
        ("sink", "XSUB") => {
            let mut s: XSubSocket = node.open().await;
            for p in &prefixes {
                s.subscribe(p).await.unwrap_or_else(|e| fail(3, format!("cannot subscribe to '{p}': {e}")));
            }
            run_sink(&mut node, &mut s, r).await;
        }
        ("sink", "PULL") => {
            let mut s: PullSocket = node.open().await;
            run_sink(&mut node, &mut s, r).await;
        }
        ("sink", "DEALER") => {
            let mut s: DealerSocket = node.open().await;
            run_sink(&mut node, &mut s, r).await;
        }
        ("sink", "ROUTER") => {
            let mut s: RouterSocket = node.open().await;
            run_sink(&mut node, &mut s, r).await;
        }
        ("ping", "REQ") => {
            let mut s: ReqSocket = node.open().await;
            run_ping(&mut node, &mut s, r).await;
        }
        ("ping", "DEALER") => {
            let mut s: DealerSocket = node.open().await;
            run_ping(&mut node, &mut s, r).await;
        }
        ("echo", "REP") => {
            let mut s: RepSocket = node.open().await;
            run_echo(&mut node, &mut s, r).await;
        }
        ("echo", "ROUTER") => {
            let mut s: RouterSocket = node.open().await;
            run_echo(&mut node, &mut s, r).await;
        }
        ("echo", "DEALER") => {
            let mut s: DealerSocket = node.open().await;
            run_echo(&mut node, &mut s, r).await;
        }
        (role, kind) => fail(
            3,
            format!("node {}: the zeromq-rs peer does not play role '{role}' on a {kind} socket (the zeromq crate has no PAIR; see peer.toml)", node.name),
        ),
    }
    if node.role == "source" {
        report.insert("closed_ns".into(), json!(now_ns()));
    }
    report.insert("usage".into(), node.usage());
    line(json!({"type": "report", "v": 1, "report": report}));
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args == ["--version"] {
        line(
            json!({"binding": format!("zeromq {ZEROMQ_VERSION} (crates.io, tokio)"),
                    "engine": format!("zeromq {ZEROMQ_VERSION}: pure-Rust ZMTP")}),
        );
        return;
    }
    if args.len() != 1 {
        fail(2, "usage: zmqperf-peer-zeromq-rs '<node spec as JSON>' | zmqperf-peer-zeromq-rs --version");
    }
    let spec: Value =
        serde_json::from_str(&args[0]).unwrap_or_else(|e| fail(2, format!("bad node spec: {e}")));
    let text = |key: &str| -> String {
        spec.get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| fail(2, format!("bad node spec: field '{key}' is missing")))
    };
    let (name, role) = (text("name"), text("role"));
    let sockets = spec["sockets"].as_array().map_or(0, Vec::len);
    if sockets != 1 {
        fail(
            3,
            format!("node {name}: the zeromq-rs peer plays one socket, not {sockets}"),
        );
    }
    let kind = spec["sockets"][0]["kind"]
        .as_str()
        .unwrap_or_else(|| fail(2, "bad node spec: sockets[0].kind is missing"))
        .to_string();
    for key in ["size", "count", "warmup", "timeout_ms"] {
        if spec.get(key).and_then(Value::as_u64).is_none() {
            fail(
                2,
                format!("bad node spec: field '{key}' must be a number >= 0"),
            );
        }
    }
    let (tx, rx) = watch::channel(Ctl::default());
    tokio::spawn(read_control(tx));
    let node = Node {
        size: spec["size"].as_u64().unwrap_or(0) as usize,
        timeout: Duration::from_millis(spec["timeout_ms"].as_u64().unwrap_or(10_000)),
        spec,
        name,
        role,
        kind,
        ctl: rx,
    };
    play(node).await;
    std::process::exit(0);
}
