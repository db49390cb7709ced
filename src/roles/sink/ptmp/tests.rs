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

/// Sends `msgs` (each a list of frames) over inproc and takes them as check_recv does.
fn take_frames(name: &str, msgs: &[Vec<Vec<u8>>], count: u64) -> (Received, Vec<u64>) {
    let ctx = zmq::Context::new();
    let mut pull = ctx.socket(zmq::PULL).unwrap();
    pull.set_linger(0).unwrap();
    pull.bind(&format!("inproc://{name}")).unwrap();
    let push = ctx.socket(zmq::PUSH).unwrap();
    push.set_linger(0).unwrap();
    push.set_sndtimeo(5000).unwrap();
    push.connect(&format!("inproc://{name}")).unwrap();
    for m in msgs {
        for (i, f) in m.iter().enumerate() {
            let more = if i + 1 < m.len() { zmq::SNDMORE } else { 0 };
            push.send(&f[..], more).unwrap();
        }
    }
    let mut seqs = Vec::new();
    let r = take(
        &mut pull,
        None,
        Limits {
            count: Some(count),
            timeout: Duration::from_millis(300),
            sender_done: None,
        },
        |seq, _| seqs.push(seq),
        |_| {},
    )
    .unwrap();
    (r, seqs)
}

fn tpset(count: u32, created_us: i64) -> Vec<Vec<u8>> {
    let set = ptmp_wire::TpSet {
        count,
        detid: Some(4),
        created_us: Some(created_us),
        tstart: Some(created_us as u64 * 50),
        tps: 0,
    };
    let mut b = [0u8; ptmp_wire::MAX_ENCODED];
    let n = set.encode(&mut b);
    vec![ptmp_wire::type_frame().to_vec(), b[..n].to_vec()]
}

/// A PTMP stream is told from its first message: its counts are the sequence, holes are
/// holes, and the created times give the sender's pace.
#[test]
fn a_ptmp_stream_is_read_by_its_counts() {
    let msgs: Vec<_> = [0u32, 1, 2, 5, 6, 9]
        .iter()
        .map(|&c| tpset(c, 1_000_000 + i64::from(c) * 10))
        .collect();
    let (r, seqs) = take_frames("ptmp-counts", &msgs, 10);
    assert_eq!(r.wire, Some(Wire::Ptmp));
    assert_eq!(r.protocol_error, None);
    assert_eq!(seqs, [0, 1, 2, 5, 6, 9]);
    assert_eq!(r.ended, Ended::Timeout);
    let l = r.summary(Some(10));
    assert_eq!((l.received, l.lost, l.lost_in_middle), (6, 4, 4));
    // 10 us a count: 10,000 ns per message.
    assert_eq!(r.sender_ns_per_msg(), Some(10_000.0));
    assert_eq!(r.first_sent, None, "no zmqperf trailer in a PTMP message");
}

/// A message that is neither format stops the receiver, saying what was seen; a PTMP
/// stream that turns into something else stops it at that message.
#[test]
fn neither_format_is_a_protocol_error_naming_what_came() {
    let (r, _) = take_frames("neither", &[vec![vec![1, 2, 3, 4, 5]]], 1);
    let why = r.protocol_error.expect("a protocol error");
    assert!(
        why.contains(
            "neither zmqperf's nor PTMP's: 1 frame (5 B), the first starting 01 02 03 04 05"
        ),
        "{why}"
    );
    let (r, _) = take_frames("bad-type", &[vec![vec![7, 0, 0, 0], vec![8, 1]]], 1);
    let why = r.protocol_error.expect("a protocol error");
    assert!(
        why.contains("2 frames (4 B, 2 B)") && why.contains("message type 7"),
        "{why}"
    );
    let mut msgs = vec![tpset(0, 5), tpset(1, 6)];
    msgs.push(vec![vec![0, 0, 0, 0]]);
    let (r, seqs) = take_frames("ptmp-then-not", &msgs, 5);
    assert_eq!(seqs, [0, 1]);
    let why = r.protocol_error.expect("a protocol error");
    assert!(
        why.starts_with(
            "message #2 is not PTMP's TPSet message, as the stream's first was: 1 frame"
        ),
        "{why}"
    );
}
