//! Why a PTMP-style stream lost messages or stopped: the cause decided by the one rule of
//! `stats::cause` from where its holes are, the socket type, whether the sender
//! disconnected and how long it waited at the end (check_send's trailer); each cause with
//! the fix, sized from what the receiver measured (the sender's pace from the send times in the headers, and the
//! receiver's own rate). The words follow `zmqperf diagnose` (docs/diagnose.md).

use crate::roles::ptmp::{Ended, Received};
use crate::stats::cause::{cause_of, Cause as StatsCause, Facts, SenderEnd};
use crate::stats::{GapPosition, LossSummary};
use crate::topology::SocketType;
use crate::units::grouped;
use serde::Serialize;

/// One cause of a loss as check_recv reports it: the one rule's cause (its name) with the
/// why and the fix sized from the figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cause {
    /// Its name, `stats::Cause::name`: slow joiner, high-water mark, late start, lost on
    /// the way, fast quit, sender stopped, cannot tell.
    pub name: &'static str,
    /// What happened, from the figures.
    pub why: String,
    /// What to change, sized from the figures where they allow.
    pub fix: String,
}

/// The causes as one line: `name: why; fix: ...`, several joined by ` | `.
pub fn one_line(causes: &[Cause]) -> String {
    causes
        .iter()
        .map(|c| format!("{}: {}; fix: {}", c.name, c.why, c.fix))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Whole milliseconds, rounded up, at least 1.
fn ms_up(ns: f64) -> u64 {
    ((ns / 1e6).ceil() as u64).max(1)
}

/// A time in ms with the digits that matter.
fn ms(ns: f64) -> String {
    let v = ns / 1e6;
    if v >= 10.0 {
        format!("{v:.0} ms")
    } else if v >= 0.1 {
        format!("{v:.1} ms")
    } else {
        format!("{:.0} us", ns / 1e3)
    }
}

/// What the receiver knows of how its sender ended: from the disconnection it saw and, when
/// the sender is check_send, the QUIT_DELAY_MS its trailer carries.
pub fn sender_end(disconnected: Option<bool>, quit_delay_ms: Option<u64>) -> SenderEnd {
    match (disconnected, quit_delay_ms) {
        (Some(true), Some(ms)) => SenderEnd::Waited { ms },
        (Some(true), None) => SenderEnd::Left,
        (Some(false), _) => SenderEnd::StillConnected,
        (None, _) => SenderEnd::Unknown,
    }
}

/// The facts of a PTMP stream for the one rule (`stats::cause`): the receiver's type says
/// the sender's (a SUB's publisher drops at its high-water mark, a PULL's PUSH and a PAIR
/// block), and check_send's PUB never waits for its subscription.
fn facts(kind: SocketType, end: SenderEnd) -> Facts {
    let sub = kind == SocketType::Sub;
    Facts {
        receiver: Some(kind),
        placed: true,
        drops_at_hwm: Some(sub),
        waited_for_subscribers: sub.then_some(false),
        end,
        filter_matches: None,
        ..Facts::default()
    }
}

/// The causes of what the receiver of type `kind` saw.
pub(crate) fn recv_cause(
    kind: SocketType,
    loss: &LossSummary,
    ended: Ended,
    disconnected: Option<bool>,
    r: &Received,
) -> Vec<Cause> {
    let rate = r.delivered().msgs_per_sec();
    causes(
        kind,
        loss,
        ended,
        sender_end(disconnected, r.quit_delay_ms),
        r.joined_after_ns(),
        rate,
    )
}

/// The causes from the figures alone (see [`recv_cause`]): each place that lost messages
/// named by the one rule (`stats::cause::cause_of`), with the why and fix sized from the
/// figures. `end` is how the sender ended as far as known, `joined` how long after its
/// socket opened the sender sent the first message that arrived (ns; check_send's
/// trailer), `rate` the receiver's msg/s.
pub fn causes(
    kind: SocketType,
    loss: &LossSummary,
    ended: Ended,
    end: SenderEnd,
    joined: Option<f64>,
    rate: f64,
) -> Vec<Cause> {
    let f = facts(kind, end);
    let mut out = Vec::new();
    if loss.lost_at_start > 0 {
        let n = loss.lost_at_start;
        let c = cause_of(GapPosition::Start, &f);
        out.push(match c {
            StatsCause::SlowJoiner => {
                let (took, delay) = match joined {
                    Some(ns) => (
                        format!(
                            " (the subscription took effect {} after the publisher's socket connected)",
                            ms(ns)
                        ),
                        ms_up(ns),
                    ),
                    None => (String::new(), 1),
                };
                Cause {
                    name: c.name(),
                    why: format!(
                        "the first {} messages were published before this SUB's subscription reached the publisher{took}, and a PUB drops what no subscriber has asked for",
                        grouped(n)
                    ),
                    fix: format!(
                        "give check_send a START_DELAY_MS of {delay} or more (over a network, more: PTMP needed 2 ms on 1 Gbps), or make the publisher wait for the subscription (an XPUB, as `zmqperf remote_thr --pattern pubsub` does)"
                    ),
                }
            }
            _ => Cause {
                name: c.name(),
                why: format!(
                    "the first {} messages went elsewhere or before this {} joined (a {} holds messages for a peer it knows, so this receiver joined a stream already running)",
                    grouped(n),
                    kind.name(),
                    super::peer_type(kind).name()
                ),
                fix: "start check_recv before check_send, and give it the sender's endpoint only"
                    .into(),
            },
        });
    }
    if loss.lost_in_middle > 0 {
        let n = loss.lost_in_middle;
        let c = cause_of(GapPosition::Middle, &f);
        out.push(match c {
            StatsCause::HighWaterMark => Cause {
                name: c.name(),
                why: format!(
                    "{} messages inside the stream were dropped: the publisher outpaced this subscriber and a PUB drops at its high-water mark (1000 messages per subscriber by default)",
                    grouped(n)
                ),
                fix: pace_fix(rate),
            },
            _ => Cause {
                name: c.name(),
                why: format!(
                    "{} messages inside a {}/{} stream never came, though a {} blocks at its high-water mark rather than drop: lost on the way (a reconnect that dropped its queue) or never sent",
                    grouped(n),
                    super::peer_type(kind).name(),
                    kind.name(),
                    super::peer_type(kind).name()
                ),
                fix: "check what else is connected to the endpoint and whether the sender restarted".into(),
            },
        });
    }
    if ended == Ended::Timeout && loss.lost_at_end > 0 {
        out.push(end_cause(&f, loss.lost_at_end, rate));
    }
    out
}

/// The fix for a publisher that outruns its subscriber.
fn pace_fix(rate: f64) -> String {
    format!(
        "pace the sender below the {} msg/s this subscriber kept up (PTMP slept 1 us every 100th message), raise the high-water marks, or use PUSH/PULL, which blocks instead of dropping",
        grouped(rate as u64)
    )
}

/// The cause of `n` messages lost at the end, by the one rule.
fn end_cause(f: &Facts, n: u64, rate: f64) -> Cause {
    let c = cause_of(GapPosition::End, f);
    let need = if rate > 0.0 {
        n as f64 / rate * 1e9
    } else {
        1e6
    };
    let quit_fix = |waited: u64| {
        format!(
            "give check_send a QUIT_DELAY_MS of {} or more (the {} missing take about {} at the {} msg/s this receiver read), or close with a linger above 0, or end with an acknowledgement",
            ms_up(need).max(waited.saturating_mul(2)),
            grouped(n),
            ms(need),
            grouped(rate as u64)
        )
    };
    let linger = "its socket closed with ZMQ_LINGER 0 (czmq's default, which PTMP's sockets and check_send have) and dropped its queue";
    match (c, f.end) {
        (StatsCause::FastQuit, SenderEnd::Waited { ms: waited }) if waited > 0 => Cause {
            name: c.name(),
            why: format!(
                "the sender disconnected {waited} ms after its last message (its QUIT_DELAY_MS) with the last {} messages undelivered: {linger}",
                grouped(n)
            ),
            fix: quit_fix(waited),
        },
        (StatsCause::FastQuit, _) => Cause {
            name: c.name(),
            why: format!(
                "the sender disconnected with the last {} messages undelivered: {linger}",
                grouped(n)
            ),
            fix: quit_fix(0),
        },
        (StatsCause::HighWaterMark, end) => Cause {
            name: c.name(),
            why: format!(
                "the last {} messages never came{}; the publisher outpaced this subscriber up to its last message, and a PUB drops at its high-water mark what a full queue cannot take, the end mark too",
                grouped(n),
                match end {
                    SenderEnd::Waited { ms } => format!(
                        ", though the sender waited {ms} ms after its last message (its QUIT_DELAY_MS), so not a fast quit"
                    ),
                    _ => ", though the sender kept its socket open, so not a fast quit".into(),
                }
            ),
            fix: pace_fix(rate),
        },
        (StatsCause::SenderStopped, SenderEnd::StillConnected) => Cause {
            name: c.name(),
            why: format!(
                "the last {} messages never came and the sender is still connected: it was given a smaller COUNT, or it is blocked or paused",
                grouped(n)
            ),
            fix: "give check_send and check_recv the same COUNT; a sender that is blocked waits on its own peer or queue".into(),
        },
        (StatsCause::SenderStopped, SenderEnd::Left) => Cause {
            name: c.name(),
            why: format!(
                "the sender disconnected with the last {} messages undelivered: it quit with its queue (a fast quit: {linger}) or was killed; cannot tell which, as its messages carry no QUIT_DELAY_MS (zmqperf check_send's do)",
                grouped(n)
            ),
            fix: format!("if it quit: {}", quit_fix(0)),
        },
        (StatsCause::SenderStopped, _) => Cause {
            name: c.name(),
            why: format!(
                "the last {} messages never came: the sender stopped (or died) before its last message",
                grouped(n)
            ),
            fix: "keep the sender's socket open until the receiver has everything, and check that it is still running".into(),
        },
        _ => Cause {
            name: c.name(),
            why: format!(
                "the last {} messages never came: a PUB drops its tail at the high-water mark, and a sender that quits with its queue (a fast quit) or is killed loses it too; cannot tell which, as its messages carry no QUIT_DELAY_MS (zmqperf check_send's do)",
                grouped(n)
            ),
            fix: "pace the sender or raise the high-water marks, and keep its socket open until the receiver has everything (check_send's QUIT_DELAY_MS)".into(),
        },
    }
}

/// The cause when a sender connected and disconnected and nothing arrived: for a SUB the
/// whole stream went before the subscription (lost at the start); otherwise the sender
/// left before anything was delivered (at the end), with nothing read to say how long it
/// waited.
pub(crate) fn nothing_arrived(kind: SocketType, count: u64) -> Cause {
    let f = facts(kind, SenderEnd::Left);
    if kind == SocketType::Sub {
        let c = cause_of(GapPosition::Start, &f);
        Cause {
            name: c.name(),
            why: "a publisher connected and left and nothing arrived: its whole stream was published before this SUB's subscription reached it (a PUB drops what no subscriber has asked for, and a fast one can send thousands of messages in the millisecond a subscription takes)".into(),
            fix: "give check_send a START_DELAY_MS (1 or more on one host, more over a network), or make the publisher wait for the subscription (an XPUB, as `zmqperf remote_thr --pattern pubsub` does)".into(),
        }
    } else {
        let c = cause_of(GapPosition::End, &f);
        Cause {
            name: c.name(),
            why: format!(
                "a sender connected and left and none of the {} messages arrived: it quit with its queue (a fast quit: its socket closed with ZMQ_LINGER 0, czmq's default, which PTMP's sockets and check_send have) or was killed; cannot tell which, as nothing it sent was read",
                grouped(count)
            ),
            fix: "if it quit: give check_send a QUIT_DELAY_MS (e.g. 1000, as PTMP's README does), or close with a linger above 0, or end with an acknowledgement".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loss(start: u64, middle: u64, end: u64) -> LossSummary {
        LossSummary {
            lost_at_start: start,
            lost_in_middle: middle,
            lost_at_end: end,
            lost: start + middle + end,
            ..Default::default()
        }
    }

    #[test]
    fn slow_joiner_fix_is_sized_from_when_the_subscription_took_effect() {
        // The first message that arrived left 0.54 ms after the publisher connected: 1 ms.
        let c = causes(
            SocketType::Sub,
            &loss(1797, 0, 0),
            Ended::Count,
            SenderEnd::StillConnected,
            Some(540_000.0),
            1e6,
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].name, "slow joiner");
        assert!(
            c[0].why
                .contains("first 1,797 messages were published before")
                && c[0].why.contains("took effect 0.5 ms after"),
            "{c:?}"
        );
        assert!(c[0].fix.contains("START_DELAY_MS of 1 or more"), "{c:?}");
        // 4.2 ms: 5 ms.
        let c = causes(
            SocketType::Sub,
            &loss(10_000, 0, 0),
            Ended::Count,
            SenderEnd::Unknown,
            Some(4_200_000.0),
            1e6,
        );
        assert!(c[0].fix.contains("START_DELAY_MS of 5 or more"), "{c:?}");
        // Without check_send's trailer, no measure: the fix says 1 ms.
        let c = causes(
            SocketType::Sub,
            &loss(5, 0, 0),
            Ended::Count,
            SenderEnd::Unknown,
            None,
            1e6,
        );
        assert!(!c[0].why.contains("took effect"), "{c:?}");
        assert!(c[0].fix.contains("START_DELAY_MS of 1 or more"), "{c:?}");
    }

    #[test]
    fn fast_quit_needs_the_disconnection_and_sizes_the_quit_delay() {
        // 2,000 missing at 400,000 msg/s: 5 ms. check_send said it waited 0 ms.
        let c = causes(
            SocketType::Pair,
            &loss(0, 0, 2000),
            Ended::Timeout,
            sender_end(Some(true), Some(0)),
            None,
            400_000.0,
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].name, "fast quit");
        assert!(c[0].fix.contains("QUIT_DELAY_MS of 5 or more"), "{c:?}");
        assert!(one_line(&c).starts_with("fast quit: the sender disconnected"));
        let c = causes(
            SocketType::Pair,
            &loss(0, 0, 2000),
            Ended::Timeout,
            sender_end(Some(false), Some(0)),
            None,
            400_000.0,
        );
        assert_eq!(c[0].name, "sender stopped");
        // A sender that left without saying how long it waited (no trailer): it quit fast
        // or was killed, and which cannot be told.
        let c = causes(
            SocketType::Pair,
            &loss(0, 0, 2000),
            Ended::Timeout,
            sender_end(Some(true), None),
            None,
            400_000.0,
        );
        assert_eq!(c[0].name, "sender stopped");
        assert!(c[0].why.contains("cannot tell which"), "{c:?}");
    }

    /// check_send PUB with QUIT_DELAY_MS 1000 whose tail a subscriber lost: it was "fast
    /// quit ... QUIT_DELAY_MS of 157"; the sender waited, so its high-water mark dropped it.
    #[test]
    fn a_publisher_that_waited_at_the_end_lost_its_tail_to_the_high_water_mark() {
        let c = causes(
            SocketType::Sub,
            &loss(0, 902_013, 23_987),
            Ended::Timeout,
            sender_end(Some(true), Some(1000)),
            None,
            298_653.0,
        );
        let names: Vec<_> = c.iter().map(|c| c.name).collect();
        assert_eq!(names, ["high-water mark", "high-water mark"]);
        assert!(
            c[1].why.contains("waited 1000 ms") && c[1].why.contains("not a fast quit"),
            "{c:?}"
        );
        assert!(!one_line(&c).contains("QUIT_DELAY_MS of"), "{c:?}");
        // The same publisher that closed at once: the fast quit is named, sized.
        let c = causes(
            SocketType::Sub,
            &loss(0, 0, 23_987),
            Ended::Timeout,
            sender_end(Some(true), Some(0)),
            None,
            298_653.0,
        );
        assert_eq!(c[0].name, "fast quit");
        assert!(c[0].fix.contains("QUIT_DELAY_MS of 81 or more"), "{c:?}");
        // A PAIR that waited 5 ms and still lost its tail: a quit delay above what it gave.
        let c = causes(
            SocketType::Pair,
            &loss(0, 0, 2000),
            Ended::Timeout,
            sender_end(Some(true), Some(5)),
            None,
            400_000.0,
        );
        assert_eq!(c[0].name, "fast quit");
        assert!(c[0].why.contains("5 ms after its last message"), "{c:?}");
        assert!(c[0].fix.contains("QUIT_DELAY_MS of 10 or more"), "{c:?}");
    }

    #[test]
    fn the_trailer_carries_the_quit_delay() {
        let mut b = [0u8; crate::roles::TRAILER_END];
        b[24..28].copy_from_slice(b"zpOP");
        b[36..40].copy_from_slice(b"zpQD");
        b[40..44].copy_from_slice(&1000u32.to_le_bytes());
        assert_eq!(crate::roles::quit_delay_ms(&b), Some(1000));
        assert_eq!(crate::roles::quit_delay_ms(&b[..40]), None);
        b[36] = 0;
        assert_eq!(crate::roles::quit_delay_ms(&b), None);
    }

    #[test]
    fn middle_holes_of_a_sub_are_the_high_water_mark_and_a_clean_stream_has_no_cause() {
        let c = causes(
            SocketType::Sub,
            &loss(10, 500, 0),
            Ended::EndMark,
            SenderEnd::Left,
            Some(100.0),
            250_000.0,
        );
        let names: Vec<_> = c.iter().map(|c| c.name).collect();
        assert_eq!(names, ["slow joiner", "high-water mark"]);
        assert!(c[1].fix.contains("250,000 msg/s"), "{c:?}");
        assert!(one_line(&c).contains(" | high-water mark: "));
        assert!(causes(
            SocketType::Pull,
            &loss(0, 0, 0),
            Ended::EndMark,
            SenderEnd::Left,
            None,
            1.0
        )
        .is_empty());
    }
}
