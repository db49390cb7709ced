//! Tests of what check_recv makes of a sender that came and went.

use super::*;

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
