//! Tests of the fan-out report's text: a subscriber's loss line and the numbers.

use super::*;
use crate::roles::swarm::SubReport;

#[test]
fn a_subscriber_with_a_hole_says_where_and_when() {
    use crate::stats::ledger::Gap;
    use crate::stats::{GapPosition, LossSummary};
    let s = SubReport {
        process: 3,
        sub: 17,
        loss: LossSummary {
            expected: 100,
            received: 90,
            lost: 10,
            gap_count: 1,
            lost_in_middle: 10,
            gaps: vec![Gap {
                first_seq: 40,
                count: 10,
                position: GapPosition::Middle,
                after_ns: Some(2_500_000),
            }],
            ..Default::default()
        },
        ended: true,
        warmup: 0,
        latency_count: 90,
        latency_min_ns: 1,
        latency_max_ns: 2,
        latency_mean_ns: 1.5,
        delivered_per_sec: 10.0,
    };
    assert_eq!(
        sub_loss(&s),
        "proc 3 sub 17 got 90 of 100 (10 lost: 0 at the start, 10 in the middle, 0 at the \
         end; in the middle the first at seq 40 (2.5 ms into the stream))"
    );
}

#[test]
fn numbers_read_well() {
    assert_eq!(ms(1_234_567.0), "1.235");
    assert_eq!(percent(5, 5), "100%");
    assert_eq!(percent(1, 3), "33.333%");
    assert_eq!(percent(0, 0), "-");
    assert_eq!(rate(1234.4), "1,234");
    assert_eq!(rate(12.345), "12.35");
    assert_eq!(mib(2048), "2.0 MiB");
    assert_eq!(counted(1, "process", "processes"), "1 process");
    assert_eq!(counted(1000, "message", "messages"), "1,000 messages");
}
