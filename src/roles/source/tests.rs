//! Tests of the source role: the paced warm-up and the wait for a due time.

use super::*;
use crate::roles::{SockPlan, TestRunner};
use crate::topology::{Role, SocketType};
use std::sync::mpsc;
use std::time::Duration;

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
    let (tx, rx) = mpsc::channel();
    let c2 = ctx.clone();
    let t0 = now_ns();
    let h = std::thread::spawn(move || run(&c2, &spec, &mut TestRunner::new(tx, true)));
    let ep = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    let pull = ctx.socket(zmq::PULL).unwrap();
    pull.set_linger(0).unwrap();
    pull.set_rcvtimeo(5000).unwrap();
    pull.connect(&ep).unwrap();
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
