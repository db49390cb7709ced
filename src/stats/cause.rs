//! Why a stream has holes where it has them: one type, [`Cause`], and one rule,
//! [`cause_of`], for every command that names a cause (run, fanout, the compatible
//! commands, check_recv and check_sendrecv, diagnose).
//!
//! The place of a hole (start, middle, end) points at a cause only together with what both
//! sides recorded: the receiver's socket type, whether the holes could be placed at all
//! (sequence numbers), and what the sender did (dropped at its high-water mark, waited for
//! its subscribers, waited at the end and how long, left, was killed). A PUB that waited
//! for every subscription cannot lose its start to a slow joiner; a PUSH that blocks at its
//! high-water mark cannot drop in the middle; a sender that kept its socket until the
//! receivers hung up, or slept a second after its last message, did not quit fast. Where
//! the facts do not decide, the cause is [`Cause::CannotTell`] and its sentence says what
//! would tell.

use super::GapPosition;
use crate::topology::SocketType;
use serde::{Deserialize, Serialize};

/// A cause of lost messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// A publisher sent before this subscriber's subscription had reached it.
    SlowJoiner,
    /// A sender without flow control (a PUB) dropped what a full queue could not take.
    HighWaterMark,
    /// Holes inside the stream of a sender that blocks rather than drop: a device in
    /// between, a reconnect that lost its queue, or numbers never sent.
    LostOnTheWay,
    /// The start of a stream whose sender does not drop (PUSH, PAIR): it went to another
    /// peer, or through something that lost it, before this receiver joined.
    LateStart,
    /// The sender closed (linger 0) before its queue drained.
    FastQuit,
    /// The sender stopped before its last message: killed, failed, blocked, or quit with its
    /// queue where no fact tells these apart.
    SenderStopped,
    /// The subscriber's filter matches no message of the stream.
    FilterMatchesNothing,
    /// Not one multicast packet reached a receiver on another host: their time to live
    /// (ZMQ_MULTICAST_HOPS, libzmq's default 1) ended at the first router.
    MulticastHops,
    /// The facts recorded do not decide; the sentence says what would.
    CannotTell,
}

impl Cause {
    /// Its short name, as triage summaries add causes up: `slow joiner`, `high-water mark`,
    /// `lost on the way`, `late start`, `fast quit`, `sender stopped`,
    /// `filter matches nothing`, `multicast hops`, `cannot tell`.
    pub const fn name(self) -> &'static str {
        match self {
            Cause::SlowJoiner => "slow joiner",
            Cause::HighWaterMark => "high-water mark",
            Cause::LostOnTheWay => "lost on the way",
            Cause::LateStart => "late start",
            Cause::FastQuit => "fast quit",
            Cause::SenderStopped => "sender stopped",
            Cause::FilterMatchesNothing => "filter matches nothing",
            Cause::MulticastHops => "multicast hops",
            Cause::CannotTell => "cannot tell",
        }
    }
}

/// What a sender of a run did, as recorded with each case (the history keeps it): all of it
/// known, because the runner built the sender.
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
    /// It could not count its receivers' joins (a RADIO; a PUB over multicast, where no
    /// subscription travels back) and paused for them instead (its `join_ms`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused_for_joins: bool,
    /// It sent over a transport on which nothing flows back to slow it (udp, pgm, epgm,
    /// norm): what the receivers' buffers could not hold was lost on the way.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_way: bool,
    /// It sent multicast (a udp group, pgm, epgm, norm) with a time to live of one hop
    /// (ZMQ_MULTICAST_HOPS unset or 1) to a receiver on another host.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub one_hop_across_hosts: bool,
    /// It sent over udp or multicast at a set rate well below what its transport carries,
    /// so its queue never filled: what it lost was not dropped at its high-water mark.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paced_below_limit: bool,
}

/// How the sender ended, as far as the receiver's facts say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SenderEnd {
    /// Nothing is known of it.
    #[default]
    Unknown,
    /// It kept its socket until the receivers hung up, or lingered until its queue drained.
    WaitedForReceivers,
    /// It slept this many ms after its last send, then closed with linger 0 (check_send
    /// says so in its trailer). 0: it closed right after its last send.
    Waited { ms: u64 },
    /// It disconnected before the end of its stream arrived; how long it waited is unknown.
    Left,
    /// It was still connected when the receiver gave up.
    StillConnected,
    /// It was killed or died (its parent saw it).
    Died,
}

/// The facts a cause is decided from: what the receiver knows of itself and of its sender.
/// `None` is "not known".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Facts {
    /// The receiving socket's type (None: several or unknown).
    pub receiver: Option<SocketType>,
    /// Whether holes can be placed at all: the stream carried sequence numbers.
    pub placed: bool,
    /// The sender drops at its high-water mark (a PUB) or blocks there (PUSH, PAIR, an XPUB
    /// with ZMQ_XPUB_NODROP).
    pub drops_at_hwm: Option<bool>,
    /// The sender waited for every subscription before its first message.
    pub waited_for_subscribers: Option<bool>,
    /// How the sender ended.
    pub end: SenderEnd,
    /// Whether the subscriber's filter can match the stream's messages.
    pub filter_matches: Option<bool>,
    /// The sender paused for joins it could not count ([`SenderFacts::paused_for_joins`]).
    pub paused_for_joins: bool,
    /// Nothing flows back to slow the sender ([`SenderFacts::one_way`]).
    pub one_way: bool,
    /// Its multicast lives one hop, to another host ([`SenderFacts::one_hop_across_hosts`]).
    pub one_hop_across_hosts: bool,
    /// Not one message of the stream arrived.
    pub nothing_arrived: bool,
    /// It was paced well below its transport's limit ([`SenderFacts::paced_below_limit`]).
    pub paced_below_limit: bool,
}

impl Facts {
    /// The facts of a run's sender, which the runner knows whole.
    pub fn of_run(f: SenderFacts) -> Facts {
        Facts {
            receiver: None,
            placed: true,
            drops_at_hwm: Some(f.drops_at_hwm),
            waited_for_subscribers: Some(f.waited_for_subscribers),
            end: if f.waited_at_end {
                SenderEnd::WaitedForReceivers
            } else {
                SenderEnd::Waited { ms: 0 }
            },
            filter_matches: None,
            paused_for_joins: f.paused_for_joins,
            one_way: f.one_way,
            one_hop_across_hosts: f.one_hop_across_hosts,
            nothing_arrived: false,
            paced_below_limit: f.paced_below_limit,
        }
    }

    /// Whether the sender drops at its high-water mark, as far as the facts say: told, or
    /// else a SUB's sender (a publisher; holes inside its stream prove that it drops).
    fn drops(&self) -> bool {
        self.drops_at_hwm.unwrap_or(matches!(
            self.receiver,
            Some(SocketType::Sub | SocketType::Xsub)
        ))
    }
}

/// The one rule: the cause of the holes at place `p`.
pub fn cause_of(p: GapPosition, f: &Facts) -> Cause {
    if !f.placed {
        // Without places: a sender that drops could have lost any part; one that blocks
        // sent fewer than were expected, or lost them after sending.
        return if f.drops() {
            Cause::CannotTell
        } else {
            Cause::SenderStopped
        };
    }
    if f.filter_matches == Some(false) {
        return Cause::FilterMatchesNothing;
    }
    let drops = f.drops();
    match p {
        // Nothing at all across hosts, at one hop: the first router dropped every packet
        // (a late join loses the start, not the whole stream after a pause).
        GapPosition::Start if f.nothing_arrived && f.one_hop_across_hosts => Cause::MulticastHops,
        // Nothing of a paced one-way stream: a late joiner would have had its later part.
        GapPosition::Start if f.nothing_arrived && f.one_way && f.paced_below_limit => {
            Cause::LostOnTheWay
        }
        GapPosition::Start if drops || f.receiver == Some(SocketType::Sub) => {
            match (f.waited_for_subscribers, f.drops_at_hwm) {
                (Some(true), Some(true)) => Cause::HighWaterMark,
                // Waited and blocks: neither a slow joiner nor its high-water mark.
                (Some(true), _) => Cause::CannotTell,
                _ => Cause::SlowJoiner,
            }
        }
        GapPosition::Start => Cause::LateStart,
        // Paced well below what its transport carries, a publisher's queue never filled.
        GapPosition::Middle if drops && !(f.one_way && f.paced_below_limit) => Cause::HighWaterMark,
        GapPosition::End if f.one_way && drops && f.paced_below_limit => Cause::LostOnTheWay,
        // Nothing flows back over multicast or udp: a sender that does not drop cannot have
        // lost what the receivers' buffers could not hold, the way did.
        GapPosition::Middle | GapPosition::End if f.one_way && !drops => Cause::LostOnTheWay,
        GapPosition::Middle => Cause::LostOnTheWay,
        GapPosition::End => match f.end {
            SenderEnd::WaitedForReceivers if drops => Cause::HighWaterMark,
            SenderEnd::WaitedForReceivers => Cause::SenderStopped,
            SenderEnd::Waited { ms: 0 } => Cause::FastQuit,
            SenderEnd::Waited { .. } if drops => Cause::HighWaterMark,
            SenderEnd::Waited { .. } => Cause::FastQuit,
            SenderEnd::Left if drops => Cause::CannotTell,
            SenderEnd::Left => Cause::SenderStopped,
            SenderEnd::StillConnected | SenderEnd::Died => Cause::SenderStopped,
            SenderEnd::Unknown if drops => Cause::CannotTell,
            SenderEnd::Unknown => Cause::SenderStopped,
        },
    }
}

/// The cause of the holes at place `p` in a sentence, without the fix (the caller knows
/// which flag or field fixes it): starts with the cause, says why, and for a cause the
/// facts do not decide, what would tell.
pub fn sentence(p: GapPosition, f: &Facts) -> String {
    let c = cause_of(p, f);
    let would_tell = "an instrumented sender (zmqperf remote_thr, or a peer writing the measurement header) would tell";
    if !f.placed && c == Cause::CannotTell {
        return format!(
            "cannot tell: without sequence numbers the holes cannot be placed (a PUB loses its start to a slow joiner and drops at its high-water mark; or the sender stopped early); {would_tell}"
        );
    }
    if !f.placed {
        return format!(
            "the sender stopped early, was given a smaller count, or quit with its queue (this sender blocks rather than drop); without sequence numbers the holes cannot be placed and which of these cannot be told: {would_tell}"
        );
    }
    match (c, p) {
        (Cause::FilterMatchesNothing, _) => {
            "the filter matches nothing: no message of the stream starts with what this subscriber subscribed to".into()
        }
        (Cause::HighWaterMark, GapPosition::Start) => {
            "the high-water mark: the sender waited for every subscription, so not a slow joiner; the queue was already full".into()
        }
        (Cause::CannotTell, GapPosition::Start) => {
            "cannot tell: the publisher waited for every subscription and blocks rather than drop, so neither a slow joiner nor its high-water mark; a filter that matches nothing, or a device in between, would; the subscriber's filter and what sits between would tell".into()
        }
        (Cause::MulticastHops, _) => {
            "the multicast hops: not one message reached this receiver on another host; a multicast packet lives for ZMQ_MULTICAST_HOPS router hops (libzmq's default 1, which the sender kept), so the first router between the hosts drops it (were the hosts on one link, the route to the group on each, `ip route get GROUP`, would tell)".into()
        }
        (Cause::SlowJoiner, _) if f.paused_for_joins => {
            "a late join: the sender cannot count its receivers' joins (a RADIO's DISHes, or subscribers over multicast, where no subscription travels back), so it paused for them, and this receiver joined after the pause".into()
        }
        (Cause::SlowJoiner, _) if f.waited_for_subscribers.is_none() && f.drops_at_hwm.is_none() => {
            "a slow joiner: the publisher sent before this subscriber's subscription had arrived (it did not wait for it)".into()
        }
        (Cause::SlowJoiner, _) => {
            "a slow joiner: the sender published before this subscriber's subscription had arrived".into()
        }
        (Cause::LateStart, _) => {
            "not a slow joiner (this sender holds messages for a peer it knows rather than drop them): the first messages went elsewhere before this receiver joined (another peer of a PUSH, a device in between that lost them), or the sender's numbers did not start at 0".into()
        }
        (Cause::HighWaterMark, GapPosition::Middle) => {
            "the high-water mark: the sender outran the receiver and dropped what its queue could not take".into()
        }
        (Cause::LostOnTheWay, GapPosition::Start) => {
            "lost on the way, not a late join: not one message reached this receiver, and a late joiner of a stream paced well below its transport's limit loses its start, not the whole of it; over multicast or udp a firewall or a route kept the datagrams away, or the network lost the first of them and the receiver's repair (OpenPGM's) held the rest waiting for them to the end (a stream shorter than the sender's pause for the joins would look the same)".into()
        }
        (Cause::LostOnTheWay, _) if f.one_way && f.drops() => {
            "lost on the way, not at the high-water mark (the publisher was paced well below what its transport carries, so its queue never filled): over multicast or udp what a receiver's buffers (the kernel's socket buffer, OpenPGM's or NORM's window) could not hold, or the network lost, and no repair brought back, is lost".into()
        }
        (Cause::LostOnTheWay, _) if f.one_way => {
            "lost on the way: over multicast or udp nothing flows back to slow the sender, so what a receiver's buffers (the kernel's socket buffer, OpenPGM's or NORM's window) could not hold, or the network lost, and no repair brought back, is lost".into()
        }
        (Cause::LostOnTheWay, _) => {
            "not a high-water mark (this sender blocks there rather than drop): lost on the way (a device in between, a reconnect that lost its queue, or a sender that skipped numbers)".into()
        }
        (Cause::HighWaterMark, _) => match f.end {
            SenderEnd::Waited { ms } => format!(
                "the high-water mark: the sender waited {ms} ms after its last message, so not a fast quit; it outran the receiver up to its last message and dropped the tail (and its end mark)"
            ),
            _ => "the high-water mark: the sender outran the receiver up to its last message and dropped the tail (and its end mark)".into(),
        },
        (Cause::FastQuit, _) => match f.end {
            SenderEnd::Waited { ms } if ms > 0 => format!(
                "a fast quit: the sender closed {ms} ms after its last message with linger 0, before its queue had drained"
            ),
            _ => "a fast quit: the sender closed right after its last message, before its queue had drained".into(),
        },
        (Cause::SenderStopped, _) => match f.end {
            SenderEnd::StillConnected => {
                "the sender stopped: it is still connected, so it is blocked or paused, or was given a smaller count".into()
            }
            SenderEnd::Died => "the sender stopped: it was killed or died before its last message".into(),
            SenderEnd::WaitedForReceivers => {
                "the sender stopped (or died) before its last message: it keeps its socket until the receivers hang up, so not a fast quit".into()
            }
            SenderEnd::Left => {
                "the sender stopped: it left before its last messages arrived, killed or quitting with its queue (a fast quit); cannot tell which: a sender that says how long it waited at the end (zmqperf check_send) would tell".into()
            }
            _ => {
                "the sender stopped (or died) before its last message, or was given a smaller count; cannot tell killed from quitting fast, which the sender's own output (zmqperf remote_thr's exit and lines) would tell".into()
            }
        },
        (Cause::CannotTell, _) => match f.end {
            SenderEnd::Left => {
                "cannot tell: the sender left before its last messages arrived; a PUB drops its tail at the high-water mark, and a sender that quits with its queue (a fast quit) or is killed loses it too; a sender that says how long it waited at the end (zmqperf check_send) would tell".into()
            }
            _ => {
                "cannot tell: the end of the stream never came; a PUB drops its tail at the high-water mark, and a sender that stopped or died loses it too; the sender's own output (an instrumented sender such as zmqperf remote_thr waits at the end and says how it ended) would tell".into()
            }
        },
    }
}

/// The causes of a stream's holes, one clause per place that lost messages, worst first:
/// `at the start (1,200 lost), a slow joiner: ...; fix: ...`. `fix` gives the remedy for a
/// place and cause (None: no remedy to add). Without sequence numbers the holes have no
/// place: one clause says so.
pub fn loss_causes(
    l: &super::LossSummary,
    f: &Facts,
    fix: impl Fn(GapPosition, Cause) -> Option<String>,
) -> String {
    if !f.placed {
        return sentence(GapPosition::End, f);
    }
    let f = &Facts {
        nothing_arrived: l.received == 0 && l.expected > 0,
        ..*f
    };
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
            let mut s = format!("{at} ({n} lost), {}", sentence(p, f));
            // A remedy already given is not repeated.
            match fix(p, cause_of(p, f)) {
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
mod tests;
