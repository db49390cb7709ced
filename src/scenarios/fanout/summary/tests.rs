//! Tests of the fan-out summary: merging the subscriber processes' reports and the loss.

use super::*;
use crate::roles::swarm::SubReport;

fn sub(process: u32, sub: u32, expected: u64, received: u64, mean: f64) -> SubReport {
    let mut l = crate::stats::StreamLedger::new();
    for i in 0..received {
        l.record(i);
    }
    SubReport {
        process,
        sub,
        loss: l.summary(Some(expected)),
        ended: received == expected,
        warmup: 0,
        latency_count: received,
        latency_min_ns: 1,
        latency_max_ns: 10,
        latency_mean_ns: mean,
        delivered_per_sec: 100.0 + sub as f64,
    }
}

fn child(process: u32, subs: Vec<SubReport>, samples: &[u64]) -> ChildReport {
    let mut h = LatencyHistogram::new();
    for &s in samples {
        h.record(s);
    }
    ChildReport {
        process,
        pid: 100 + process,
        stop: StopReason::AllEnded,
        connect_ns: 5,
        subscribers: subs,
        latency: h,
        usage: ProcessUsage {
            name: format!("subscribers {process}"),
            pid: 100 + process,
            cpu_user_ms: 1.0,
            cpu_sys_ms: 2.0,
            peak_rss_kib: 3,
        },
        host: None,
        clock_error_ns: None,
        ticks: Vec::new(),
    }
}

#[test]
fn merges_delivery_latency_and_names_the_worst_and_slowest() {
    let a = child(
        0,
        vec![sub(0, 0, 4, 4, 5.0), sub(0, 1, 4, 4, 9.0)],
        &[1, 2, 3],
    );
    let b = child(1, vec![sub(1, 0, 4, 2, 7.0), sub(1, 1, 4, 4, 6.0)], &[4, 5]);
    let r = merge("fanout", "tcp://x:1", Transport::Tcp, 2, vec![b, a], None);
    assert_eq!(r.subscribers, 4);
    assert_eq!(r.expected_per_subscriber, 4);
    assert_eq!(
        (r.delivery.expected, r.delivery.received, r.delivery.lost),
        (16, 14, 2)
    );
    assert_eq!(r.complete_subscribers, 3);
    assert_eq!(r.worst.len(), 1);
    assert_eq!((r.worst[0].process, r.worst[0].sub), (1, 0));
    let slow = r.slowest.as_ref().unwrap();
    assert_eq!((slow.process, slow.sub), (0, 1));
    assert_eq!(r.latency.count, 5);
    assert_eq!((r.latency.min_ns, r.latency.max_ns), (1, 5));
    assert_eq!(r.process_list[0].process, 0, "sorted by process");
    assert_eq!(r.process_list[1].complete, 1);
    assert_eq!(r.delivered_per_sec.min, 100.0);
    assert_eq!(r.delivered_per_sec.max, 101.0);
    assert!(r.loss_error().is_some());
}

#[test]
fn a_process_that_missed_the_end_is_measured_against_the_longest_stream() {
    // Process 1 saw only 0..3 of 5 (no end), so it thought the stream had 3 messages.
    let a = child(0, vec![sub(0, 0, 5, 5, 1.0)], &[1]);
    let b = child(1, vec![sub(1, 0, 3, 3, 1.0)], &[1]);
    let r = merge(
        "sub-cluster",
        "ipc:///x",
        Transport::Ipc,
        1,
        vec![a, b],
        None,
    );
    let s = &r.per_subscriber[1];
    assert_eq!(
        (s.loss.expected, s.loss.lost, s.loss.lost_at_end),
        (5, 2, 2)
    );
    assert_eq!(s.loss.gaps.len(), 1);
    assert_eq!(s.loss.gaps[0].first_seq, 3);
    assert_eq!(r.delivery.lost, 2);
}

#[test]
fn extending_a_tail_gap_grows_it() {
    let mut l = crate::stats::StreamLedger::new();
    l.record(0);
    let mut loss = l.summary(Some(3)); // 1..3 lost at the end
    extend_expected(&mut loss, 5);
    assert_eq!((loss.lost, loss.lost_at_end, loss.gap_count), (4, 4, 1));
    assert_eq!(loss.gaps[0].count, 4);
    let mut none = crate::stats::StreamLedger::new().summary(Some(2));
    extend_expected(&mut none, 6);
    assert_eq!((none.lost, none.lost_at_start, none.gap_count), (6, 6, 1));
}

#[test]
fn a_run_with_a_process_left_out_is_incomplete_and_says_what_was_asked() {
    let a = child(0, vec![sub(0, 0, 3, 3, 1.0), sub(0, 1, 3, 3, 1.0)], &[1, 2]);
    let mut r = merge("fanout", "tcp://x:1", Transport::Tcp, 2, vec![a], None);
    assert_eq!(r.incomplete(), None, "whole so far");
    r.failed_processes
        .push("1 (pid 7): died: killed by signal 9 (SIGKILL)".into());
    assert_eq!(r.requested_processes(), 2);
    let why = r.incomplete().expect("incomplete");
    assert!(
        why.starts_with("1 of 2 subscriber processes reported") && why.contains("SIGKILL"),
        "{why}"
    );
    let text = crate::report::fanout::text(&r);
    assert!(
        text.starts_with("fanout over tcp: 2 of 4 subscribers reported (1 of 2 processes x 2)"),
        "{text}"
    );
    assert!(
        text.contains("(to the subscribers that reported)"),
        "{text}"
    );
    let case = super::super::record::to_case(&r, 1.0);
    assert_eq!(case.pattern, "fanout[2x2]");
    assert_eq!(case.incomplete.as_deref(), Some(why.as_str()));
    // A stream whose end never came is incomplete too; plain loss is a figure, not this.
    let b = child(0, vec![sub(0, 0, 3, 2, 1.0)], &[1]);
    let mut lossy = merge("fanout", "tcp://x:1", Transport::Tcp, 1, vec![b], None);
    lossy.stream_ended = true;
    assert!(lossy.loss_error().is_some() && lossy.incomplete().is_none());
    lossy.stream_ended = false;
    assert!(lossy
        .incomplete()
        .unwrap()
        .contains("1 of 1 subscriber processes reported"));
}

#[test]
fn a_clean_run_has_no_loss_error() {
    let a = child(0, vec![sub(0, 0, 3, 3, 1.0)], &[1, 2, 3]);
    let r = merge("fanout", "tcp://x:1", Transport::Tcp, 1, vec![a], None);
    assert!(r.loss_error().is_none());
    assert!(r.worst.is_empty());
    assert_eq!(r.complete_subscribers, 1);
}
