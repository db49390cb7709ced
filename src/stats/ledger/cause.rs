//! Why a stream has holes where it has them: the place of a hole (start, middle, end)
//! points at a cause only together with what the sender did. A PUB that waited for every
//! subscription cannot lose its start to a slow joiner; a PUSH that blocks at its
//! high-water mark cannot drop in the middle; a sender that kept its socket until the
//! receivers hung up did not quit fast. One place says it, for every command.

use super::GapPosition;
use serde::{Deserialize, Serialize};

/// What the sender of a stream did, as far as the causes of its holes depend on it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SenderFacts {
    /// It publishes without flow control: a PUB, or an XPUB without ZMQ_XPUB_NODROP, which
    /// drops what a subscriber's full queue cannot take.
    pub drops_at_hwm: bool,
    /// It waited for every subscription before its first message.
    pub waited_for_subscribers: bool,
    /// After its last message it kept its socket until the receivers hung up (or lingered
    /// until its queue drained), so it did not quit fast.
    pub waited_at_end: bool,
}

/// The cause of `lost` messages at place `p`, as a short name: `slow joiner`,
/// `high-water mark`, `lost on the way` or `fast quit`.
pub fn cause_name(p: GapPosition, f: SenderFacts) -> &'static str {
    match p {
        GapPosition::Start if f.drops_at_hwm && f.waited_for_subscribers => "high-water mark",
        GapPosition::Start => "slow joiner",
        GapPosition::Middle if f.drops_at_hwm => "high-water mark",
        GapPosition::Middle => "lost on the way",
        GapPosition::End if f.drops_at_hwm && f.waited_at_end => "high-water mark",
        GapPosition::End => "fast quit",
    }
}

/// The cause of the holes at place `p`, in a sentence without the fix (the caller knows
/// which flag or field fixes it).
pub fn cause_text(p: GapPosition, f: SenderFacts) -> &'static str {
    match p {
        GapPosition::Start if f.drops_at_hwm && f.waited_for_subscribers => {
            "the high-water mark: the sender waited for every subscription, so not a slow joiner; the queue was already full"
        }
        GapPosition::Start if f.drops_at_hwm => {
            "a slow joiner: the sender published before this subscriber's subscription had arrived"
        }
        GapPosition::Start => {
            "a slow joiner: the sender started before this receiver was connected"
        }
        GapPosition::Middle if f.drops_at_hwm => {
            "the high-water mark: the sender outran the receiver and dropped what its queue could not take"
        }
        GapPosition::Middle => {
            "not a high-water mark (this sender blocks there rather than drop): lost on the way (a device in between, a reconnect that lost its queue, or a sender that skipped numbers)"
        }
        GapPosition::End if f.drops_at_hwm && f.waited_at_end => {
            "the high-water mark: the sender outran the receiver up to its last message and dropped the tail (and its end mark)"
        }
        GapPosition::End => {
            "a fast quit: the sender closed before its queue drained, or was given a smaller count"
        }
    }
}

/// The causes of a stream's holes, one clause per place that lost messages, worst first:
/// `at the start (1,200 lost), a slow joiner: ...; fix: ...`. `fix` gives the remedy for a
/// place and cause name (None: no remedy to add).
pub fn loss_causes(
    l: &super::LossSummary,
    f: SenderFacts,
    fix: impl Fn(GapPosition, &'static str) -> Option<String>,
) -> String {
    let mut parts = [
        (l.lost_at_start, GapPosition::Start, "at the start"),
        (l.lost_in_middle, GapPosition::Middle, "in the middle"),
        (l.lost_at_end, GapPosition::End, "at the end"),
    ];
    parts.sort_by_key(|p| std::cmp::Reverse(p.0));
    let mut fixes: Vec<String> = Vec::new();
    parts
        .iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|&(n, p, at)| {
            let mut s = format!("{at} ({n} lost), {}", cause_text(p, f));
            // A remedy already given is not repeated.
            match fix(p, cause_name(p, f)) {
                Some(x) if fixes.contains(&x) => s.push_str("; the same fix"),
                Some(x) => {
                    s.push_str(&format!("; fix: {x}"));
                    fixes.push(x);
                }
                None => {}
            }
            s
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_place_of_a_hole_names_a_cause_only_with_what_the_sender_did() {
        let lossy_pub = SenderFacts {
            drops_at_hwm: true,
            waited_for_subscribers: false,
            waited_at_end: true,
        };
        let waiting_pub = SenderFacts {
            waited_for_subscribers: true,
            ..lossy_pub
        };
        let push = SenderFacts {
            drops_at_hwm: false,
            waited_for_subscribers: false,
            waited_at_end: false,
        };
        assert_eq!(cause_name(GapPosition::Start, lossy_pub), "slow joiner");
        assert_eq!(
            cause_name(GapPosition::Start, waiting_pub),
            "high-water mark"
        );
        assert_eq!(
            cause_name(GapPosition::Middle, lossy_pub),
            "high-water mark"
        );
        assert_eq!(cause_name(GapPosition::Middle, push), "lost on the way");
        assert_eq!(cause_name(GapPosition::End, lossy_pub), "high-water mark");
        assert_eq!(cause_name(GapPosition::End, push), "fast quit");
        assert!(cause_text(GapPosition::Start, waiting_pub).contains("not a slow joiner"));
        assert!(cause_text(GapPosition::Start, lossy_pub).contains("subscription"));
    }

    #[test]
    fn causes_come_worst_first_with_their_fix() {
        let l = crate::stats::LossSummary {
            lost: 30,
            lost_at_start: 10,
            lost_in_middle: 20,
            ..Default::default()
        };
        let f = SenderFacts {
            drops_at_hwm: true,
            ..Default::default()
        };
        let s = loss_causes(&l, f, |_, name| Some(format!("fix the {name}")));
        assert!(
            s.starts_with("in the middle (20 lost), the high-water mark"),
            "{s}"
        );
        assert!(s.contains("; fix: fix the high-water mark; at the start (10 lost), a slow joiner"));
        assert!(!s.contains("at the end"));
        let l = crate::stats::LossSummary {
            lost: 30,
            lost_in_middle: 20,
            lost_at_end: 10,
            ..Default::default()
        };
        let f = SenderFacts {
            drops_at_hwm: true,
            waited_at_end: true,
            ..Default::default()
        };
        let s = loss_causes(&l, f, |_, name| Some(format!("fix the {name}")));
        assert_eq!(s.matches("fix the high-water mark").count(), 1, "{s}");
        assert!(s.ends_with("; the same fix"), "{s}");
    }
}
