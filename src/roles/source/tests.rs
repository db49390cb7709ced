//! Tests of the source role: the paced warm-up and the wait for a due time, and the
//! opt-in loops of diagnose's senders (batches, timed full sends, the end mark again).

use super::*;
use crate::header::HEADER_LEN;
use crate::roles::{SockPlan, TestRunner};
use crate::topology::{Role, SocketType};
use std::sync::mpsc;
use std::time::Duration;

/// Runs `spec` (a source) on a thread under a runner that has already said stop; returns
/// the thread and the source's first bound endpoint.
fn started(
    ctx: &zmq::Context,
    spec: NodeSpec,
) -> (std::thread::JoinHandle<Result<RoleReport>>, String) {
    let (tx, rx) = mpsc::channel();
    let c2 = ctx.clone();
    let h = std::thread::spawn(move || run(&c2, &spec, &mut TestRunner::new(tx, true)));
    (h, rx.recv_timeout(Duration::from_secs(5)).unwrap())
}

/// A PULL connected to `ep` (linger 0, receive timeout 5 s, and `rcvhwm` if given).
fn reader(ctx: &zmq::Context, ep: &str, rcvhwm: Option<i32>) -> zmq::Socket {
    let pull = ctx.socket(zmq::PULL).unwrap();
    pull.set_linger(0).unwrap();
    if let Some(h) = rcvhwm {
        pull.set_rcvhwm(h).unwrap();
    }
    pull.set_rcvtimeo(5000).unwrap();
    pull.connect(ep).unwrap();
    pull
}

#[test]
fn a_paced_source_keeps_its_schedule_through_the_warm_up() {
    let ctx = zmq::Context::new();
    let plan = SockPlan {
        kind: SocketType::Push,
        bind: vec!["tcp://127.0.0.1:*".into()],
        connect: Vec::new(),
        options: Default::default(),
    };
    let mut spec = NodeSpec::single("src", Role::Source, plan, Duration::from_secs(5));
    spec.size = 64;
    spec.count = 20;
    spec.warmup = 200;
    spec.rate = Some(1000.0);
    spec.quit = Quit::LingerZero;
    let t0 = now_ns();
    let (h, ep) = started(&ctx, spec);
    let pull = reader(&ctx, &ep, None);
    for _ in 0..220 {
        pull.recv_bytes(0).expect("every message arrives");
    }
    let r = h.join().unwrap().unwrap();
    let send = r.send.unwrap();
    // 200 warm-up messages at 1 ms each are due before the first measured one (sent at
    // once, the warm-up took a few ms).
    assert!(
        send.start_ns >= t0 + 199_000_000,
        "the measured stream began {} ms after the start: the warm-up was not paced",
        (send.start_ns - t0) / 1_000_000
    );
    // The measured messages keep the pace too, and none left before its time.
    assert!(send.end_ns - send.start_ns >= 19_000_000);
    assert_eq!(r.send_delay.unwrap().count(), 20);
}

#[test]
fn a_wait_never_ends_before_its_time() {
    let mut due = now_ns();
    for i in 0..200u64 {
        // Gaps of 10 us (spun) and 2 ms (slept), in turn.
        due += if i % 2 == 0 { 10_000 } else { 2_000_000 };
        wait_until(due);
        assert!(now_ns() >= due, "wait {i} ended early");
    }
}

/// A source of `count` messages of 64 B on a `kind` socket bound to `endpoint`.
fn source_spec(kind: SocketType, endpoint: &str, count: u64) -> NodeSpec {
    let plan = SockPlan {
        kind,
        bind: vec![endpoint.into()],
        connect: Vec::new(),
        options: crate::topology::SocketOptions {
            sndhwm: Some(1),
            ..Default::default()
        },
    };
    let mut spec = NodeSpec::single("src", Role::Source, plan, Duration::from_secs(5));
    spec.size = 64;
    spec.count = count;
    spec
}

/// The header of a message received on `s`.
fn next_header(s: &zmq::Socket) -> Header {
    let b = s.recv_bytes(0).expect("a message arrives");
    Header::decode(&b[..HEADER_LEN]).unwrap().unwrap()
}

#[test]
fn a_batched_source_stamps_each_batch_with_one_due_time() {
    let ctx = zmq::Context::new();
    let mut spec = source_spec(SocketType::Push, "tcp://127.0.0.1:*", 60);
    spec.sockets[0].options.sndhwm = None;
    spec.rate = Some(20_000.0);
    spec.send_in_batches(20);
    spec.quit = Quit::DefaultLinger;
    let (h, ep) = started(&ctx, spec);
    let pull = reader(&ctx, &ep, None);
    let stamps: Vec<u64> = (0..60).map(|_| next_header(&pull).send_ns).collect();
    h.join().unwrap().unwrap();
    // 20 messages due together every millisecond (20,000 a second).
    for (b, batch) in stamps.chunks(20).enumerate() {
        assert!(batch.iter().all(|&s| s == batch[0]), "batch {b}: {batch:?}");
        assert_eq!(batch[0] - stamps[0], b as u64 * 1_000_000, "batch {b}");
    }
}

#[test]
fn a_source_timing_its_full_sends_reports_the_wait_and_a_plain_one_does_not() {
    for timed in [true, false] {
        let ctx = zmq::Context::new();
        let ep = format!("inproc://full-sends-{timed}");
        let mut spec = source_spec(SocketType::Push, &ep, 50);
        spec.quit = Quit::DefaultLinger;
        if timed {
            spec.time_full_sends();
        }
        let (h, _) = started(&ctx, spec);
        let pull = reader(&ctx, &ep, Some(1));
        // A reader of one message a millisecond: the queue (two messages) is full at once.
        for _ in 0..50 {
            next_header(&pull);
            std::thread::sleep(Duration::from_millis(1));
        }
        let r = h.join().unwrap().unwrap();
        match r.full_send_ns {
            Some(ns) => assert!(timed && ns >= 20_000_000, "{ns} ns waited"),
            None => assert!(!timed, "a timed source reported nothing"),
        }
    }
}

#[test]
fn a_pub_sends_its_end_mark_again_until_the_reader_has_it() {
    let ctx = zmq::Context::new();
    let ep = "inproc://resend-end";
    let mut spec = source_spec(SocketType::Xpub, ep, 200);
    spec.subscriptions = 1;
    spec.resend_end_every(Duration::from_millis(5));
    spec.quit = Quit::WaitForStop;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let mut ctl = TestRunner::with_flag(tx, stop.clone());
    let c2 = ctx.clone();
    let h = std::thread::spawn(move || run(&c2, &spec, &mut ctl));
    rx.recv_timeout(Duration::from_secs(5)).unwrap();
    let sub = ctx.socket(zmq::SUB).unwrap();
    sub.set_linger(0).unwrap();
    sub.set_rcvhwm(1).unwrap();
    sub.set_rcvtimeo(5000).unwrap();
    sub.set_subscribe(b"").unwrap();
    sub.connect(ep).unwrap();
    // The burst leaves while nothing reads: the queue holds two, the rest is dropped, the
    // end mark with it.
    std::thread::sleep(Duration::from_millis(100));
    let mut got = 0;
    let end = loop {
        let h = next_header(&sub);
        got += 1;
        if h.flags & FLAG_END != 0 {
            break h;
        }
    };
    stop.store(true, std::sync::atomic::Ordering::Release);
    let r = h.join().unwrap().unwrap();
    assert_eq!(end.sequence, 199);
    assert!(got < 200, "nothing was dropped: {got} arrived");
    assert_eq!(r.send.unwrap().messages, 200);
}
