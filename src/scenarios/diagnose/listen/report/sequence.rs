//! Findings of a listen about the order of the numbers: reordering, duplicates, and a
//! sequence that went back to 0 (a publisher restart).

use super::{View, STREAMS_LISTED};
use crate::model::{Finding, Severity};
use crate::scenarios::diagnose::{cause, messages};
use crate::units::grouped;

/// Numbers that arrived after a higher one.
pub(super) fn reordering(v: &View) -> Option<Finding> {
    let t = &v.t;
    if t.loss.reordered == 0 {
        return None;
    }
    let n = t.loss.reordered;
    let mut f = v.draft("reordering");
    f.severity = Severity::Warning;
    f.put("reordered", n);
    f.title = format!("{} arrived after a higher number (reordering)", messages(n));
    f.observed = format!(
        "{} arrived after a message with a higher sequence number had already arrived; \
         they were not duplicates, and they fill their holes (they are not counted as lost).",
        messages(n)
    );
    f.cause = "ZeroMQ keeps the order of the messages of one connection. Numbers out of \
               order come from more than one path: several senders sharing one sequence or \
               one stream id, a sender with several sockets or a proxy merging streams, or \
               a sender that sends again what it thinks was lost."
        .to_string();
    f.remedy = "Give each sender a sequence of its own and a stream id the receiver can \
                read (--stream-id names the field); where several paths are used on \
                purpose, order by sequence number in the receiver."
        .to_string();
    f.triage(
        cause::REORDERING,
        0,
        n,
        "messages reordered",
        "one sequence per sender (a stream id), or order by sequence in the receiver",
    );
    Some(f.finish())
}

/// Numbers that arrived more than once.
pub(super) fn duplicates(v: &View) -> Option<Finding> {
    let t = &v.t;
    if t.loss.duplicated == 0 {
        return None;
    }
    let n = t.loss.duplicated;
    let mut f = v.draft("duplicates");
    f.severity = Severity::Warning;
    f.put("duplicated", n);
    f.title = format!("{} arrived more than once (duplicates)", messages(n));
    f.observed = format!(
        "{} carried a sequence number that had already arrived in the same run of the \
         stream.",
        messages(n)
    );
    f.cause = "ZeroMQ delivers a message at most once on a connection. Duplicates come \
               from the senders: a retry after a timeout, one message sent on two sockets \
               that both reach this one (two connections to one publisher, two proxies), \
               or two senders using the same numbers in one stream."
        .to_string();
    f.remedy = "Connect once to each publisher; make retries safe to receive twice and drop \
                numbers already seen; give each sender its own stream id."
        .to_string();
    f.triage(
        cause::DUPLICATES,
        0,
        n,
        "messages duplicated",
        "one connection per publisher; drop numbers already seen",
    );
    Some(f.finish())
}

/// The sequence back to 0: the publisher started again.
pub(super) fn restart(v: &View) -> Option<Finding> {
    let seen = &v.l.seen;
    let restarts = seen.restarts();
    if restarts == 0 {
        return None;
    }
    let mut f = v.draft("restart");
    f.severity = Severity::Warning;
    f.put("restarts", restarts);
    let words: Vec<String> = seen
        .streams
        .iter()
        .filter(|(_, s)| s.restarts() > 0)
        .take(STREAMS_LISTED)
        .map(|(id, s)| {
            let tops: Vec<String> = s.epochs[..s.epochs.len() - 1]
                .iter()
                .map(|e| grouped(e.tally.highest_seq().unwrap_or(0)))
                .collect();
            format!(
                "{}back to 0 after seq {}",
                if v.several() {
                    format!("stream {id} went ")
                } else {
                    "it went ".to_string()
                },
                tops.join(", then after ")
            )
        })
        .collect();
    f.title = format!(
        "the sequence went back to 0 {} (publisher restart{})",
        match restarts {
            1 => "once".to_string(),
            n => format!("{} times", grouped(n)),
        },
        if restarts == 1 { "" } else { "s" }
    );
    f.observed = format!(
        "The sequence started again from 0: {}. Each run is counted on its own; what a run \
         did not send before it ended cannot be seen, only its holes.",
        words.join("; ")
    );
    f.cause = "A publisher that restarts (a crash, a deploy) numbers from 0 again. What it \
               had queued when it stopped is gone, and subscribers reconnect on their own \
               (ZMQ_RECONNECT_IVL) without being told that the stream began again."
        .to_string();
    f.remedy = "Make a restart visible: a new stream id (or an epoch number) for each run \
                of the publisher, so receivers reset what they expect; receivers that need \
                the past ask for a snapshot; senders that must not lose their queue end \
                cleanly (see fast quit)."
        .to_string();
    f.triage(
        cause::RESTART,
        0,
        restarts,
        "restarts",
        "a new stream id or epoch per run of the publisher; a snapshot for late joiners",
    );
    Some(f.finish())
}
