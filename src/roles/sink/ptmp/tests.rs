//! Tests of PTMP's receiver on the sink's loop.

use super::*;

/// COUNT is of distinct messages: a duplicate does not stand for one still missing, so
/// the receiver reads on until COUNT different numbers arrived.
#[test]
fn count_is_reached_by_distinct_numbers_not_by_arrivals() {
    let ctx = zmq::Context::new();
    let pull = ctx.socket(zmq::PULL).unwrap();
    pull.set_linger(0).unwrap();
    pull.bind("inproc://count-distinct").unwrap();
    let push = ctx.socket(zmq::PUSH).unwrap();
    push.set_linger(0).unwrap();
    push.set_sndtimeo(5000).unwrap();
    push.connect("inproc://count-distinct").unwrap();
    for seq in [0u64, 1, 1, 2, 3] {
        let h = Header {
            flags: 0,
            stream_id: 7,
            sequence: seq,
            send_ns: 0,
        };
        push.send(&h.to_bytes()[..], 0).unwrap();
    }
    let mut pull = pull;
    let mut arrivals = Vec::new();
    let r = take(
        &mut pull,
        None,
        Limits {
            count: Some(3),
            timeout: Duration::from_secs(5),
            sender_done: None,
        },
        |seq, _| arrivals.push(seq),
        |_| {},
    )
    .unwrap();
    assert_eq!(r.ended, Ended::Count);
    // 0, 1, 1, 2: three distinct after four arrivals; 3 is left unread.
    assert_eq!((r.arrivals, r.ledger.distinct()), (4, 3));
    assert_eq!(arrivals, [0, 1, 1, 2]);
}
