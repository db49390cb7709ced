//! Tests of the receive loop of check_recv and of what it makes of a sender that came and
//! went.

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
    let r = receive(
        &mut pull,
        None,
        Loop {
            count: Some(3),
            timeout: Duration::from_secs(5),
            verbose: false,
            sender_done: None,
            on_line: &mut |_| {},
            on_wait: &mut |_| {},
        },
    )
    .unwrap();
    assert_eq!(r.ended, Ended::Count);
    // 0, 1, 1, 2: three distinct after four arrivals; 3 is left unread.
    assert_eq!((r.arrivals, r.ledger.distinct()), (4, 3));
}

use crate::net::Sightings;

/// C04 seen from check_recv PULL: check_send closed mid-handshake. It was only "the
/// ZeroMQ handshake failed ... most often a socket type that cannot talk to this one".
#[test]
fn a_sender_that_closed_mid_handshake_is_a_pairing_or_a_fast_quit() {
    let seen = Sightings {
        connections: 1,
        handshakes: 0,
        disconnections: 1,
        retries: 0,
        failures: vec![
            "the peer closed the connection during the handshake (Broken pipe (os error 32))"
                .into(),
        ],
    };
    // A SUB's fast publisher came and went; a PULL cannot tell it from a wrong pairing.
    assert!(came_and_went(SocketType::Sub, Some(true), &seen));
    assert!(!came_and_went(SocketType::Pull, Some(true), &seen));
    let hint = mid_handshake_hint(SocketType::Pull, &seen).expect("a hint");
    assert!(
        hint.contains("fast quit") && hint.contains("cannot tell"),
        "{hint}"
    );
    assert_eq!(mid_handshake_hint(SocketType::Sub, &seen), None);
    // A peer that keeps coming back and failing is a wrong pairing.
    let again = Sightings {
        connections: 3,
        disconnections: 3,
        ..seen.clone()
    };
    assert!(!came_and_went(SocketType::Sub, Some(true), &again));
    assert_eq!(mid_handshake_hint(SocketType::Pull, &again), None);
    let other = Sightings {
        failures: vec!["the peer's socket type cannot talk to this one".into()],
        ..seen
    };
    assert_eq!(mid_handshake_hint(SocketType::Pull, &other), None);
}
