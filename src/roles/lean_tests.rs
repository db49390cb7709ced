//! The lean loops of the ping ([`super::ping`]'s round trips once nothing is left to
//! settle) and of the echo (its count of in-order requests) give the figures the full
//! loops give: every round trip timed, and the echo's ledger the one recorded directly.

use super::TestRunner;
use super::{echo, ping, EchoMode, NodeSpec, RoleReport, SockPlan};
use crate::clock::now_ns;
use crate::header::{Header, FLAG_TIMESTAMP, FLAG_WARMUP};
use crate::stats::Ledger;
use crate::topology::{Role, SocketType};
use crate::zmq;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(5);

/// An echo (REP, reading each request's header) on a loopback port for `expect` requests
/// of 64 B, running on its own thread; its endpoint.
fn echo_of(
    ctx: &zmq::Context,
    expect: u64,
) -> (String, JoinHandle<crate::error::Result<RoleReport>>) {
    let plan = SockPlan {
        kind: SocketType::Rep,
        bind: vec!["tcp://127.0.0.1:*".into()],
        connect: Vec::new(),
        options: Default::default(),
    };
    let mut spec = NodeSpec::single("echo", Role::Echo, plan, WAIT);
    spec.size = 64;
    spec.expect = expect;
    spec.echo = EchoMode::Inspect;
    let (tx, rx) = mpsc::channel();
    let c = ctx.clone();
    let h = std::thread::spawn(move || echo::run(&c, &spec, &mut TestRunner::new(tx, false)));
    (rx.recv_timeout(WAIT).unwrap(), h)
}

/// The same summary, but for when each gap was seen (a clock reading of each side).
pub(crate) fn timeless(l: &Ledger) -> crate::stats::LossSummary {
    let mut s = l.summary(None);
    s.gaps.iter_mut().for_each(|g| g.after_ns = None);
    s
}

/// A ping (REQ) of `count` round trips of 64 B after `warmup`, to `ep`.
fn ping_of(ep: String, warmup: u64, count: u64) -> NodeSpec {
    let plan = SockPlan {
        kind: SocketType::Req,
        bind: Vec::new(),
        connect: vec![ep],
        options: Default::default(),
    };
    let mut spec = NodeSpec::single("ping", Role::Ping, plan, WAIT);
    spec.size = 64;
    spec.count = count;
    spec.warmup = warmup;
    spec
}

#[test]
fn the_echos_ledger_of_requests_in_and_out_of_order_is_the_one_recorded_directly() {
    // Warm-ups, then a long in-order stretch broken by a gap, a duplicate, a late number
    // and another stream: each break leaves the count for the full path and back.
    let mut reqs: Vec<(u32, u64, u8)> = (0..3)
        .map(|i| (0, i, FLAG_WARMUP | FLAG_TIMESTAMP))
        .collect();
    for seq in 3..300u64 {
        match seq {
            100 => {}
            150 => {
                reqs.push((0, 150, FLAG_TIMESTAMP));
                reqs.push((0, 149, FLAG_TIMESTAMP));
            }
            200 => {
                reqs.push((7, 0, FLAG_TIMESTAMP));
                reqs.push((0, 100, FLAG_TIMESTAMP));
            }
            _ => reqs.push((0, seq, FLAG_TIMESTAMP)),
        }
    }
    let ctx = zmq::Context::new();
    let (ep, h) = echo_of(&ctx, reqs.len() as u64);
    let req = ctx.socket(zmq::REQ).unwrap();
    req.set_linger(0).unwrap();
    req.set_rcvtimeo(5000).unwrap();
    req.set_sndtimeo(5000).unwrap();
    req.connect(&ep).unwrap();
    for &(stream_id, sequence, flags) in &reqs {
        let mut buf = [3u8; 64];
        Header {
            flags,
            stream_id,
            sequence,
            send_ns: now_ns(),
        }
        .encode(&mut buf);
        req.send(&buf[..], 0).unwrap();
        assert_eq!(req.recv_bytes(0).unwrap(), buf, "the reply is the request");
    }
    // Hung up: the echo does not wait for the client to go.
    drop(req);
    let report = h.join().unwrap().unwrap();
    let mut want = Ledger::new();
    for &(stream, seq, _) in &reqs {
        want.record(stream, seq);
    }
    let got = report.ledger.unwrap();
    assert_eq!(timeless(&got), timeless(&want));
    let s = got.summary(None);
    // 200 lost, 149 twice, 100 late.
    assert_eq!(
        (s.received, s.lost, s.duplicated, s.reordered),
        (300, 1, 1, 1),
        "{s:?}"
    );
}

#[test]
fn the_pings_lean_round_trips_time_every_round_trip() {
    let (warmup, count) = (3u64, 400u64);
    let ctx = zmq::Context::new();
    let (ep, h) = echo_of(&ctx, warmup + count);
    let mut spec = ping_of(ep, warmup, count);
    spec.full_rtt = true;
    let (tx, _rx) = mpsc::channel();
    let r = ping::run(&ctx, &spec, &mut TestRunner::new(tx, false)).unwrap();
    let (half, full) = (r.latency.unwrap(), r.rtt.unwrap());
    assert_eq!((half.count(), full.count()), (count, count));
    // Each half is its full round trip halved: so are the extremes.
    let (hs, fs) = (half.summary(), full.summary());
    assert_eq!((hs.min_ns, hs.max_ns), (fs.min_ns / 2, fs.max_ns / 2));
    assert_eq!(r.round_trips.unwrap().messages, count);
    // The echo saw every request once, in order, warm-ups included.
    let s = h.join().unwrap().unwrap().ledger.unwrap().summary(None);
    assert_eq!(
        (s.received, s.lost, s.duplicated),
        (warmup + count, 0, 0),
        "{s:?}"
    );
}

#[test]
fn the_pings_lean_round_trips_start_their_span_after_the_warm_up() {
    // An echo that holds each warm-up's reply for a second: a span that began before the
    // warm-up would last over two seconds; the measured round trips take far less.
    let ctx = zmq::Context::new();
    let rep = ctx.socket(zmq::REP).unwrap();
    rep.set_linger(0).unwrap();
    rep.set_rcvtimeo(5000).unwrap();
    rep.set_sndtimeo(5000).unwrap();
    rep.bind("tcp://127.0.0.1:*").unwrap();
    let ep = rep.get_last_endpoint().unwrap().unwrap();
    let (warmup, count) = (2u64, 200u64);
    let echo = std::thread::spawn(move || {
        for _ in 0..warmup + count {
            let m = rep.recv_bytes(0).unwrap();
            if Header::decode(&m).unwrap().unwrap().flags & FLAG_WARMUP != 0 {
                std::thread::sleep(Duration::from_secs(1));
            }
            rep.send(m, 0).unwrap();
        }
    });
    let spec = ping_of(ep, warmup, count);
    let (tx, _rx) = mpsc::channel();
    let r = ping::run(&ctx, &spec, &mut TestRunner::new(tx, false)).unwrap();
    echo.join().unwrap();
    let span = r.round_trips.unwrap();
    assert_eq!(span.messages, count);
    let ms = (span.end_ns - span.start_ns) / 1_000_000;
    assert!(
        ms < 2_000,
        "the span of the measured round trips lasted {ms} ms"
    );
    assert_eq!(r.latency.unwrap().count(), count);
}
