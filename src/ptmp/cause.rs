//! Why a PTMP-style stream lost messages or stopped, from where its holes are, the socket
//! type, and whether the sender disconnected; each cause with the fix, sized from what
//! the receiver measured (the sender's pace from the send times in the headers, and the
//! receiver's own rate). The words follow `zmqperf diagnose` (docs/diagnose.md).

use super::received::{Ended, Received};
use crate::stats::LossSummary;
use crate::topology::SocketType;
use crate::units::grouped;
use serde::Serialize;

/// One cause of a loss, with its fix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cause {
    /// Its name: slow joiner, high-water mark, fast quit, sender stopped.
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

/// The causes of what the receiver of type `kind` saw.
pub(crate) fn recv_cause(
    kind: SocketType,
    loss: &LossSummary,
    ended: Ended,
    disconnected: Option<bool>,
    r: &Received,
) -> Vec<Cause> {
    let rate = r.delivered().msgs_per_sec();
    causes(kind, loss, ended, disconnected, r.joined_after_ns(), rate)
}

/// The causes from the figures alone (see [`recv_cause`]): `joined` is how long after
/// its socket opened the sender sent the first message that arrived (ns; check_send's
/// trailer), `rate` the receiver's msg/s.
pub fn causes(
    kind: SocketType,
    loss: &LossSummary,
    ended: Ended,
    disconnected: Option<bool>,
    joined: Option<f64>,
    rate: f64,
) -> Vec<Cause> {
    let mut out = Vec::new();
    if loss.lost_at_start > 0 {
        let n = loss.lost_at_start;
        out.push(if kind == SocketType::Sub {
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
                name: "slow joiner",
                why: format!(
                    "the first {} messages were published before this SUB's subscription reached the publisher{took}, and a PUB drops what no subscriber has asked for",
                    grouped(n)
                ),
                fix: format!(
                    "give check_send a START_DELAY_MS of {delay} or more (over a network, more: PTMP needed 2 ms on 1 Gbps), or make the publisher wait for the subscription (an XPUB, as `zmqperf remote_thr --pattern pubsub` does)"
                ),
            }
        } else {
            Cause {
                name: "late start",
                why: format!(
                    "the first {} messages went elsewhere or before this {} joined (a {} holds messages for a peer it knows, so this receiver joined a stream already running)",
                    grouped(n),
                    kind.name(),
                    super::peer_type(kind).name()
                ),
                fix: "start check_recv before check_send, and give it the sender's endpoint only"
                    .into(),
            }
        });
    }
    if loss.lost_in_middle > 0 {
        let n = loss.lost_in_middle;
        out.push(if kind == SocketType::Sub {
            Cause {
                name: "high-water mark",
                why: format!(
                    "{} messages inside the stream were dropped: the publisher outpaced this subscriber and a PUB drops at its high-water mark (1000 messages per subscriber by default)",
                    grouped(n)
                ),
                fix: format!(
                    "pace the sender below the {} msg/s this subscriber kept up (PTMP slept 1 us every 100th message), raise the high-water marks, or use PUSH/PULL, which blocks instead of dropping",
                    grouped(rate as u64)
                ),
            }
        } else {
            Cause {
                name: "holes",
                why: format!(
                    "{} messages inside a {}/{} stream never came, though a {} blocks at its high-water mark rather than drop: lost on the way (a reconnect that dropped its queue) or never sent",
                    grouped(n),
                    super::peer_type(kind).name(),
                    kind.name(),
                    super::peer_type(kind).name()
                ),
                fix: "check what else is connected to the endpoint and whether the sender restarted".into(),
            }
        });
    }
    if ended == Ended::Timeout && loss.lost_at_end > 0 {
        let n = loss.lost_at_end;
        out.push(match disconnected {
            Some(true) => {
                let need = if rate > 0.0 {
                    n as f64 / rate * 1e9
                } else {
                    1e6
                };
                Cause {
                    name: "fast quit",
                    why: format!(
                        "the sender disconnected with the last {} messages undelivered: its socket closed with ZMQ_LINGER 0 (czmq's default, which PTMP's sockets and check_send have) and dropped its queue",
                        grouped(n)
                    ),
                    fix: format!(
                        "give check_send a QUIT_DELAY_MS of {} or more (the {} missing take about {} at the {} msg/s this receiver read), or close with a linger above 0, or end with an acknowledgement",
                        ms_up(need),
                        grouped(n),
                        ms(need),
                        grouped(rate as u64)
                    ),
                }
            }
            Some(false) => Cause {
                name: "sender stopped",
                why: format!(
                    "the last {} messages never came and the sender is still connected: it was given a smaller COUNT, or it is blocked or paused",
                    grouped(n)
                ),
                fix: "give check_send and check_recv the same COUNT; a sender that is blocked waits on its own peer or queue".into(),
            },
            None => Cause {
                name: "stream stopped",
                why: format!(
                    "the last {} messages never came (the end of the stream was dropped or never sent)",
                    grouped(n)
                ),
                fix: if kind == SocketType::Sub {
                    "pace the sender or raise the high-water marks, so its last messages are not dropped".into()
                } else {
                    "keep the sender's socket open until the receiver has everything".into()
                },
            },
        });
    }
    out
}

/// The cause when a sender connected and disconnected and nothing arrived.
pub(crate) fn nothing_arrived(kind: SocketType, count: u64) -> Cause {
    if kind == SocketType::Sub {
        Cause {
            name: "slow joiner",
            why: "a publisher connected and left and nothing arrived: its whole stream was published before this SUB's subscription reached it (a PUB drops what no subscriber has asked for, and a fast one can send thousands of messages in the millisecond a subscription takes)".into(),
            fix: "give check_send a START_DELAY_MS (1 or more on one host, more over a network), or make the publisher wait for the subscription (an XPUB, as `zmqperf remote_thr --pattern pubsub` does)".into(),
        }
    } else {
        Cause {
            name: "fast quit",
            why: format!(
                "a sender connected and left and none of the {} messages arrived: its socket closed with ZMQ_LINGER 0 (czmq's default, which PTMP's sockets and check_send have) and dropped its queue",
                grouped(count)
            ),
            fix: "give check_send a QUIT_DELAY_MS (e.g. 1000, as PTMP's README does), or close with a linger above 0, or end with an acknowledgement".into(),
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
            Some(false),
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
            None,
            Some(4_200_000.0),
            1e6,
        );
        assert!(c[0].fix.contains("START_DELAY_MS of 5 or more"), "{c:?}");
        // Without check_send's trailer, no measure: the fix says 1 ms.
        let c = causes(
            SocketType::Sub,
            &loss(5, 0, 0),
            Ended::Count,
            None,
            None,
            1e6,
        );
        assert!(!c[0].why.contains("took effect"), "{c:?}");
        assert!(c[0].fix.contains("START_DELAY_MS of 1 or more"), "{c:?}");
    }

    #[test]
    fn fast_quit_needs_the_disconnection_and_sizes_the_quit_delay() {
        // 2,000 missing at 400,000 msg/s: 5 ms.
        let c = causes(
            SocketType::Pair,
            &loss(0, 0, 2000),
            Ended::Timeout,
            Some(true),
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
            Some(false),
            None,
            400_000.0,
        );
        assert_eq!(c[0].name, "sender stopped");
    }

    #[test]
    fn middle_holes_of_a_sub_are_the_high_water_mark_and_a_clean_stream_has_no_cause() {
        let c = causes(
            SocketType::Sub,
            &loss(10, 500, 0),
            Ended::EndMark,
            Some(true),
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
            Some(true),
            None,
            1.0
        )
        .is_empty());
    }
}
