use super::*;
use crate::stats::LossSummary;

/// What local_thr knows of a remote_thr on the pubsub pattern: a SUB, sequence numbers, and
/// nothing of whether its sender was --lossy or how it ended.
fn sub_of_unknown_pub() -> Facts {
    Facts {
        receiver: Some(SocketType::Sub),
        placed: true,
        ..Default::default()
    }
}

#[test]
fn the_place_of_a_hole_names_a_cause_only_with_what_the_sender_did() {
    let lossy_pub = Facts::of_run(SenderFacts {
        drops_at_hwm: true,
        waited_for_subscribers: false,
        waited_at_end: true,
        ..Default::default()
    });
    let waiting_pub = Facts {
        waited_for_subscribers: Some(true),
        ..lossy_pub
    };
    let push = Facts::of_run(SenderFacts::default());
    assert_eq!(cause_of(GapPosition::Start, &lossy_pub), Cause::SlowJoiner);
    assert_eq!(
        cause_of(GapPosition::Start, &waiting_pub),
        Cause::HighWaterMark
    );
    assert_eq!(
        cause_of(GapPosition::Middle, &lossy_pub),
        Cause::HighWaterMark
    );
    assert_eq!(cause_of(GapPosition::Middle, &push), Cause::LostOnTheWay);
    assert_eq!(cause_of(GapPosition::End, &lossy_pub), Cause::HighWaterMark);
    // A sender that closed right after its last message.
    assert_eq!(cause_of(GapPosition::End, &push), Cause::FastQuit);
    assert!(sentence(GapPosition::Start, &waiting_pub).contains("not a slow joiner"));
    assert!(sentence(GapPosition::Start, &lossy_pub).contains("subscription"));
    assert_eq!(Cause::HighWaterMark.name(), "high-water mark");
}

#[test]
fn a_publisher_that_waited_and_blocks_cannot_lose_its_start_to_a_slow_joiner() {
    // An XPUB with xpub_nodrop that waited for its subscriptions, feeding a SUB (B8): not a
    // slow joiner, not its high-water mark.
    let f = Facts {
        receiver: Some(SocketType::Sub),
        placed: true,
        drops_at_hwm: Some(false),
        waited_for_subscribers: Some(true),
        end: SenderEnd::WaitedForReceivers,
        filter_matches: None,
        paused_for_joins: false,
        one_way: false,
        ..Default::default()
    };
    assert_eq!(cause_of(GapPosition::Start, &f), Cause::CannotTell);
    let s = sentence(GapPosition::Start, &f);
    assert!(
        s.contains("neither a slow joiner") && s.contains("would tell"),
        "{s}"
    );
    let f = Facts {
        filter_matches: Some(false),
        ..f
    };
    assert_eq!(
        cause_of(GapPosition::Start, &f),
        Cause::FilterMatchesNothing
    );
}

/// Seed 000's Ruby PUB dropping at its high-water mark into local_thr: no sequence numbers,
/// so no place and no cause; it was "the sender stopped early" "at the end".
#[test]
fn holes_that_cannot_be_placed_have_no_cause_but_what_would_tell() {
    let f = Facts {
        placed: false,
        ..sub_of_unknown_pub()
    };
    for p in [GapPosition::Start, GapPosition::Middle, GapPosition::End] {
        assert_eq!(cause_of(p, &f), Cause::CannotTell);
    }
    let s = loss_causes(&LossSummary::placed(0, 0, 781), &f, |_, _| {
        Some("never given".into())
    });
    assert!(s.starts_with("cannot tell: "), "{s}");
    assert!(
        s.contains("cannot be placed") && s.contains("high-water mark"),
        "{s}"
    );
    assert!(s.contains("instrumented sender"), "{s}");
    assert!(
        !s.contains("at the end") && !s.contains("stopped early or was given"),
        "{s}"
    );
    assert!(!s.contains("never given"), "{s}");
    // A PUSH without the header: it blocks, so it sent fewer (or quit with them); where
    // is still unknown.
    let f = Facts {
        receiver: Some(SocketType::Pull),
        placed: false,
        drops_at_hwm: Some(false),
        ..Default::default()
    };
    assert_eq!(cause_of(GapPosition::End, &f), Cause::SenderStopped);
    let s = loss_causes(&LossSummary::placed(0, 0, 100), &f, |_, _| None);
    assert!(
        s.starts_with("the sender stopped early") && s.contains("cannot be placed"),
        "{s}"
    );
}

/// `remote_thr --pattern pubsub --lossy` into local_thr: the start is a slow joiner, the
/// middle the high-water mark; each is named, not the worst for all.
#[test]
fn a_publisher_s_lost_start_is_a_slow_joiner_beside_its_high_water_mark() {
    let f = sub_of_unknown_pub();
    assert_eq!(cause_of(GapPosition::Start, &f), Cause::SlowJoiner);
    assert_eq!(cause_of(GapPosition::Middle, &f), Cause::HighWaterMark);
    let s = loss_causes(&LossSummary::placed(20_776, 70_718, 0), &f, |_, c| {
        Some(format!("fix the {}", c.name()))
    });
    assert!(
        s.starts_with("in the middle (70718 lost), the high-water mark"),
        "{s}"
    );
    assert!(
        s.contains("at the start (20776 lost), a slow joiner") && s.contains("fix the slow joiner"),
        "{s}"
    );
}

/// A relay dropped the first 500 messages of a PUSH/PULL stream (TR2): no PUB, no --lossy,
/// so no slow joiner.
#[test]
fn a_lost_start_of_a_stream_that_blocks_is_not_a_slow_joiner() {
    let f = Facts {
        receiver: Some(SocketType::Pull),
        placed: true,
        drops_at_hwm: Some(false),
        ..Default::default()
    };
    assert_eq!(cause_of(GapPosition::Start, &f), Cause::LateStart);
    let s = sentence(GapPosition::Start, &f);
    assert!(s.starts_with("not a slow joiner"), "{s}");
    // A PULL whose sender is not described at all: the same.
    let f = Facts {
        drops_at_hwm: None,
        ..f
    };
    assert_eq!(cause_of(GapPosition::Start, &f), Cause::LateStart);
    // A run's PUSH/PULL too.
    let run = Facts::of_run(SenderFacts {
        waited_for_subscribers: true,
        waited_at_end: true,
        ..Default::default()
    });
    assert_eq!(cause_of(GapPosition::Start, &run), Cause::LateStart);
}

/// A dropping PUB's lost tail, when the sender slept 1,000 ms before closing: the
/// high-water mark, not "a fast quit, QUIT_DELAY_MS 157".
#[test]
fn a_sender_that_waited_at_the_end_did_not_quit_fast() {
    let f = Facts {
        end: SenderEnd::Waited { ms: 1000 },
        ..sub_of_unknown_pub()
    };
    assert_eq!(cause_of(GapPosition::End, &f), Cause::HighWaterMark);
    let s = sentence(GapPosition::End, &f);
    assert!(
        s.contains("waited 1000 ms") && s.contains("not a fast quit"),
        "{s}"
    );
    // The same publisher that closed at once: a fast quit is possible, and named.
    let f = Facts {
        end: SenderEnd::Waited { ms: 0 },
        ..f
    };
    assert_eq!(cause_of(GapPosition::End, &f), Cause::FastQuit);
    // A PUB that left, how long after its last message unknown: cannot tell.
    let f = Facts {
        end: SenderEnd::Left,
        ..f
    };
    assert_eq!(cause_of(GapPosition::End, &f), Cause::CannotTell);
    assert!(sentence(GapPosition::End, &f).contains("check_send) would tell"));
    // A PAIR that waited 5 ms and still lost its tail did quit before its queue drained.
    let f = Facts {
        receiver: Some(SocketType::Pair),
        placed: true,
        drops_at_hwm: Some(false),
        end: SenderEnd::Waited { ms: 5 },
        ..Default::default()
    };
    assert_eq!(cause_of(GapPosition::End, &f), Cause::FastQuit);
    assert!(sentence(GapPosition::End, &f).contains("closed 5 ms after"));
}

/// remote_thr killed part-way (CT5): local_thr has sequence numbers and nothing of how its
/// sender ended: the sender stopped, never "a fast quit".
#[test]
fn a_sender_that_stopped_without_saying_how_is_not_called_a_fast_quit() {
    let f = Facts {
        receiver: Some(SocketType::Pull),
        placed: true,
        drops_at_hwm: Some(false),
        ..Default::default()
    };
    assert_eq!(cause_of(GapPosition::End, &f), Cause::SenderStopped);
    let s = loss_causes(&LossSummary::placed(0, 0, 9_000_000), &f, |_, _| None);
    assert!(!s.contains("a fast quit"), "{s}");
    assert!(
        s.contains("stopped (or died)") && s.contains("cannot tell killed from quitting fast"),
        "{s}"
    );
    // Its parent saw it die: said so.
    let f = Facts {
        end: SenderEnd::Died,
        ..f
    };
    assert!(sentence(GapPosition::End, &f).contains("killed or died"));
    // A runner's source keeps its socket until the receivers hang up: not a fast quit.
    let run = Facts::of_run(SenderFacts {
        waited_at_end: true,
        ..Default::default()
    });
    assert_eq!(cause_of(GapPosition::End, &run), Cause::SenderStopped);
    // A publisher that stopped where nothing tells a dropped tail from a stopped sender.
    assert_eq!(
        cause_of(GapPosition::End, &sub_of_unknown_pub()),
        Cause::CannotTell
    );
}

#[test]
fn causes_come_worst_first_with_their_fix() {
    let f = Facts::of_run(SenderFacts {
        drops_at_hwm: true,
        ..Default::default()
    });
    let s = loss_causes(&LossSummary::placed(10, 20, 0), &f, |_, c| {
        Some(format!("fix the {}", c.name()))
    });
    assert!(
        s.starts_with("in the middle (20 lost), the high-water mark"),
        "{s}"
    );
    assert!(s.contains("; fix: fix the high-water mark; at the start (10 lost), a slow joiner"));
    assert!(!s.contains("at the end"));
    let f = Facts::of_run(SenderFacts {
        drops_at_hwm: true,
        waited_at_end: true,
        ..Default::default()
    });
    let s = loss_causes(&LossSummary::placed(0, 20, 10), &f, |_, c| {
        Some(format!("fix the {}", c.name()))
    });
    assert_eq!(s.matches("fix the high-water mark").count(), 1, "{s}");
    assert!(s.ends_with("; the same fix"), "{s}");
}

#[test]
fn a_sender_that_paused_for_joins_it_cannot_count_loses_its_start_to_a_late_join() {
    // A RADIO, or a PUB over multicast: it paused for its receivers instead of counting them.
    let f = Facts {
        receiver: Some(SocketType::Sub),
        ..Facts::of_run(SenderFacts {
            drops_at_hwm: true,
            waited_for_subscribers: false,
            waited_at_end: true,
            paused_for_joins: true,
            one_way: false,
            one_hop_across_hosts: false,
            paced_below_limit: false,
        })
    };
    assert_eq!(cause_of(GapPosition::Start, &f), Cause::SlowJoiner);
    let s = sentence(GapPosition::Start, &f);
    assert!(
        s.contains("a late join") && s.contains("after the pause"),
        "{s}"
    );
    assert!(!s.contains("waited for every subscription"), "{s}");
}

#[test]
fn a_sender_that_blocks_over_multicast_loses_on_the_way_not_at_its_end() {
    // An XPUB with xpub_nodrop over epgm: it does not drop, and nothing flows back to slow
    // it, so holes in the middle and at the end were lost on the way.
    let f = Facts::of_run(SenderFacts {
        drops_at_hwm: false,
        waited_for_subscribers: false,
        waited_at_end: true,
        paused_for_joins: true,
        one_way: true,
        one_hop_across_hosts: false,
        paced_below_limit: false,
    });
    assert_eq!(cause_of(GapPosition::Middle, &f), Cause::LostOnTheWay);
    assert_eq!(cause_of(GapPosition::End, &f), Cause::LostOnTheWay);
    let s = sentence(GapPosition::Middle, &f);
    assert!(
        s.contains("nothing flows back") && s.contains("socket buffer"),
        "{s}"
    );
    // Without one_way the same sender's end is a sender that stopped.
    let tcp = Facts {
        one_way: false,
        ..f
    };
    assert_eq!(cause_of(GapPosition::End, &tcp), Cause::SenderStopped);
}

/// What the causes say of a stream of `expected` from `f` of which `received` arrived, the
/// rest lost at the start.
fn said_at_start(f: SenderFacts, expected: u64, received: u64) -> String {
    let lost = expected - received;
    let l = LossSummary {
        expected,
        received,
        lost,
        lost_at_start: lost,
        ..Default::default()
    };
    loss_causes(&l, &Facts::of_run(f), |_, _| None)
}

#[test]
fn nothing_across_hosts_at_one_hop_is_the_hops_and_a_start_lost_after_a_pause_a_late_join() {
    let radio = SenderFacts {
        drops_at_hwm: true,
        paused_for_joins: true,
        one_way: true,
        one_hop_across_hosts: true,
        ..Default::default()
    };
    let said = said_at_start(radio, 2000, 0);
    assert!(said.contains("the multicast hops"), "{said}");
    // Some arrived: the start was lost to a late join, whatever the hops.
    let said = said_at_start(radio, 2000, 1500);
    assert!(said.contains("a late join"), "{said}");
    // Nothing arrived on the sender's own host: not the hops.
    let here = SenderFacts {
        one_hop_across_hosts: false,
        paced_below_limit: false,
        ..radio
    };
    let said = said_at_start(here, 2000, 0);
    assert!(said.contains("a late join"), "{said}");
    assert_eq!(Cause::MulticastHops.name(), "multicast hops");
}

#[test]
fn a_publisher_paced_below_its_transports_limit_loses_on_the_way_not_at_its_queue() {
    // A PUB over epgm at 2,000 msg/s of 64 B against 1 Gbit/s: its queue never fills, so
    // holes in the middle and at the end were lost on the way (the network, a buffer, a
    // repair that failed); unpaced, the same holes are its high-water mark.
    let paced = Facts::of_run(SenderFacts {
        drops_at_hwm: true,
        waited_at_end: true,
        paused_for_joins: true,
        one_way: true,
        paced_below_limit: true,
        ..Default::default()
    });
    let unpaced = Facts {
        paced_below_limit: false,
        ..paced
    };
    for p in [GapPosition::Middle, GapPosition::End] {
        assert_eq!(cause_of(p, &paced), Cause::LostOnTheWay, "{p:?}");
        assert_eq!(cause_of(p, &unpaced), Cause::HighWaterMark, "{p:?}");
    }
    let s = sentence(GapPosition::Middle, &paced);
    assert!(
        s.contains("not at the high-water mark") && s.contains("the network lost"),
        "{s}"
    );
}

#[test]
fn nothing_of_a_paced_one_way_stream_is_lost_on_the_way_not_a_late_join() {
    // An epgm PUB at 2,000 msg/s over a link that lost the first packets beyond repair:
    // OpenPGM held everything behind them, and not one message arrived. A late joiner
    // would have had the later part of a paced stream; some arrived, it is a late join.
    let paced = SenderFacts {
        drops_at_hwm: true,
        waited_at_end: true,
        paused_for_joins: true,
        one_way: true,
        paced_below_limit: true,
        ..Default::default()
    };
    let said = said_at_start(paced, 5000, 0);
    assert!(said.contains("lost on the way, not a late join"), "{said}");
    let said = said_at_start(paced, 5000, 4000);
    assert!(said.contains("a late join"), "{said}");
    // Unpaced, a stream may be over before a late joiner joins: a late join still.
    let unpaced = SenderFacts {
        paced_below_limit: false,
        ..paced
    };
    let said = said_at_start(unpaced, 5000, 0);
    assert!(said.contains("a late join"), "{said}");
}
