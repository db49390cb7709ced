//! Findings of a listen about loss by its place in the stream: a missing start (slow
//! joiner or late start), holes inside (high-water mark), a missing tail or a stream that
//! stopped (sender stopped, fast quit).

use super::{span, View, STREAMS_LISTED};
use crate::model::{Finding, Severity, TimedGap};
use crate::scenarios::diagnose::listen::tally::Listening;
use crate::scenarios::diagnose::{cause, messages, ms, ns_to_ms};
use crate::stats::{Cause, GapPosition};
use crate::units::grouped;

/// Numbers missing at the start: a slow joiner, or a listener that joined late.
pub(super) fn slow_joiner(v: &View) -> Option<Finding> {
    let t = &v.t;
    if t.loss.lost_at_start == 0 {
        return None;
    }
    let lost = t.loss.lost_at_start;
    let mut f = v.draft("slow-joiner");
    f.severity = Severity::Warning;
    f.put("lost_at_start", lost);
    f.gaps = v.gaps_at(GapPosition::Start);
    let firsts: Vec<String> = t
        .runs
        .iter()
        .filter(|r| r.loss.lost_at_start > 0)
        .take(STREAMS_LISTED)
        .map(|r| {
            format!(
                "seq {}{}",
                grouped(r.loss.lost_at_start),
                v.of_stream(r.stream)
            )
        })
        .collect();
    let c = v.cause_at(GapPosition::Start);
    f.title = format!(
        "{} lost at the start of the stream ({})",
        messages(lost),
        if c == Cause::SlowJoiner {
            "slow joiner, or the listener joined late"
        } else {
            "late start: the listener joined a stream already running"
        }
    );
    f.observed = format!(
        "The first number to arrive was {} rather than 0: the {} numbered before it never \
         arrived here.",
        firsts.join(", "),
        messages(lost)
    );
    f.cause = "A SUB receives only what is published after its subscription has reached \
               the publisher: what is sent while it connects and subscribes goes to no one, \
               without an error (the slow joiner). If the publisher was already running \
               when the listen began, these are simply the messages sent before the \
               listener joined. For PULL, the start went to another PULL connected first \
               (PUSH deals messages out in turn)."
        .to_string();
    f.remedy = "When publisher and subscribers start together, publish only once the \
                subscribers are there: an XPUB that waits for the subscription, or a \
                handshake on a second socket; `zmqperf diagnose --only slow-joiner` \
                measures each remedy. Late joiners that need the past should ask for a \
                snapshot (the Guide's Clone pattern)."
        .to_string();
    f.triage(
        c.name(),
        lost,
        lost,
        cause::LOST,
        "publish only once the subscription has arrived (an XPUB's recv, or a handshake)",
    );
    Some(f.finish())
}

/// Holes inside the stream: a high-water mark (a slow consumer), or lost on the way.
pub(super) fn hwm(v: &View) -> Option<Finding> {
    let (t, seen) = (&v.t, &v.l.seen);
    if t.loss.lost_in_middle == 0 {
        return None;
    }
    let lost = t.loss.lost_in_middle;
    let holes: u64 = t
        .runs
        .iter()
        .map(|r| {
            r.loss
                .gaps
                .iter()
                .filter(|g| g.position == GapPosition::Middle)
                .count() as u64
        })
        .sum();
    let mut f = v.draft("hwm");
    f.severity = Severity::Warning;
    f.put("lost_in_middle", lost);
    f.put("holes_in_middle", holes);
    f.put("jumps", seen.jumps);
    f.put("jumps_with_backlog", seen.jumps_with_backlog);
    f.gaps = v.gaps_at(GapPosition::Middle);
    let largest = f.gaps.iter().max_by_key(|g| g.count).copied();
    if let Some(g) = largest {
        f.put("largest_hole", g.count);
    }
    let largest_words = largest.map(largest_words).unwrap_or_default();
    let backlog = backlog_words(seen);
    let c = v.cause_at(GapPosition::Middle);
    f.title = format!(
        "{} lost in {} inside the stream ({})",
        messages(lost),
        if c == Cause::HighWaterMark {
            "high-water mark / slow consumer"
        } else {
            "lost on the way: a PUSH waits at its high-water mark rather than drop"
        },
        match holes {
            1 => "1 hole".to_string(),
            n => format!("{} holes", grouped(n)),
        }
    );
    f.observed = format!(
        "The stream arrived with {} missing inside it{largest_words}.{backlog}",
        messages(lost)
    );
    f.cause = "A socket queues at most its high-water mark of messages per peer \
               (ZMQ_SNDHWM on the sender, ZMQ_RCVHWM on the receiver). When the queue is \
               full, PUB (and XPUB, ROUTER, RADIO) drops new messages without an error, so \
               a consumer slower than its publisher loses whole runs of messages in the \
               middle of the stream; PUSH waits instead."
        .to_string();
    f.remedy = "Choose the behaviour first, then the size: when every message matters, \
                use PUSH/PULL (or an XPUB with ZMQ_XPUB_NODROP) so the sender waits; size \
                the high-water marks for the largest burst (HWM x message size is the \
                memory per peer); make the consumer faster or add consumers. `zmqperf \
                diagnose --only hwm` shows PUB dropping and PUSH waiting."
        .to_string();
    f.triage(
        c.name(),
        lost,
        lost,
        cause::LOST,
        "a faster consumer or a higher ZMQ_RCVHWM/ZMQ_SNDHWM; PUSH/PULL or ZMQ_XPUB_NODROP waits instead of dropping",
    );
    Some(f.finish())
}

/// A missing tail, or a stream that stopped with no end mark: the sender stopped.
pub(super) fn stopped(v: &View) -> Option<Finding> {
    let (cfg, t) = (v.cfg, &v.t);
    if t.loss.lost_at_end == 0 && t.stopped.is_empty() {
        return None;
    }
    let lost = t.loss.lost_at_end;
    let mut f = v.draft("stopped");
    f.severity = Severity::Warning;
    f.put("lost_at_end", lost);
    f.put("streams_stopped", t.stopped.len() as u64);
    if let Some(n) = cfg.expect {
        f.put("expected_per_run", n);
    }
    f.gaps = v.gaps_at(GapPosition::End);
    let longest = t.stopped.iter().map(|s| s.2).max().unwrap_or(0);
    if longest > 0 {
        f.put("silent_at_end_ms", ns_to_ms(longest));
    }
    let c = v.cause_at(GapPosition::End);
    let which = if c == Cause::CannotTell {
        "cannot tell: a publisher's tail dropped at its high-water mark, a fast quit, or a sender stopped"
    } else {
        "sender stopped: killed, paused, or quit fast; cannot tell which"
    };
    f.title = if lost > 0 {
        format!("{} lost at the end of the stream ({which})", messages(lost))
    } else {
        format!(
            "the stream stopped {} before the listen ended, with no end-of-stream mark \
             ({which})",
            ms(ns_to_ms(longest))
        )
    };
    f.observed = stopped_observed(v, lost);
    f.cause = "A sender that exits right after its last send throws away what is still \
               queued (ZMQ_LINGER=0, or an exit without closing its sockets); one that \
               hangs or is paused leaves the connection up with nothing coming. Without an \
               end-of-stream mark, heartbeats or a receive timeout, a receiver cannot tell \
               these apart from a quiet stream."
        .to_string();
    if c == Cause::CannotTell {
        f.cause.push_str(
            " A publisher also drops its last messages, end mark included, at its \
             high-water mark when this subscriber is behind; a sender that says how it \
             ended (zmqperf check_send's QUIT_DELAY_MS, remote_thr's own output) would \
             tell which.",
        );
    }
    f.remedy = "Have the sender keep its socket until the peer has the last message (an \
                acknowledgement, or its disconnection seen by a socket monitor), or leave \
                ZMQ_LINGER at its default and terminate the context before exit; send an \
                end-of-stream mark and heartbeats; give every receive a timeout. `zmqperf \
                diagnose --only fast-quit,sender-stops` measures both."
        .to_string();
    let (count, unit) = if lost > 0 {
        (lost, cause::LOST)
    } else {
        (t.stopped.len() as u64, "streams stopped")
    };
    f.triage(
        c.name(),
        lost,
        count,
        unit,
        "keep the sender until the peer has the last message; an end-of-stream mark, heartbeats, receive timeouts",
    );
    Some(f.finish())
}

/// `; the largest, 40 messages (seq 100 to 139), between arrivals at ...`.
fn largest_words(g: TimedGap) -> String {
    format!(
        "; the largest, {} ({}), {}",
        messages(g.count),
        span(g),
        g.before_ms
            .zip(g.after_ms)
            .map(|(b, a)| format!("between arrivals at {} and {}", ms(b), ms(a)))
            .unwrap_or_else(|| "its arrivals not timed".to_string())
    )
}

/// Whether the listener's queue was full or empty at the holes, in words.
fn backlog_words(seen: &Listening) -> String {
    if seen.jumps == 0 {
        String::new()
    } else if seen.jumps_with_backlog * 2 > seen.jumps {
        format!(
            " At {} of the {} holes more messages were already waiting in this listener's \
             queue: it was behind, so its own queue (and the sender's queue for it) was \
             full.",
            grouped(seen.jumps_with_backlog),
            grouped(seen.jumps)
        )
    } else {
        format!(
            " At {} of the {} holes this listener's queue was empty: it was keeping up, so \
             the messages were lost before they reached it (the sender's high-water mark, \
             a proxy, or numbers never sent).",
            grouped(seen.jumps_with_backlog),
            grouped(seen.jumps)
        )
    }
}

/// What was observed of a missing tail: how many of those expected never came, and when
/// each stopped stream last said something.
fn stopped_observed(v: &View, lost: u64) -> String {
    let (cfg, t) = (v.cfg, &v.t);
    let stopped_words: Vec<String> = t
        .stopped
        .iter()
        .take(STREAMS_LISTED)
        .map(|&(s, last, silence)| {
            format!(
                "the last message{} (seq {}) arrived {} before the listen ended",
                v.of_stream(s),
                grouped(last),
                ms(ns_to_ms(silence))
            )
        })
        .collect();
    let mut observed = String::new();
    if lost > 0 {
        observed.push_str(&format!(
            "{} of the {} expected per run never arrived at the end. ",
            messages(lost),
            grouped(cfg.expect.unwrap_or(0))
        ));
    }
    if !stopped_words.is_empty() {
        observed.push_str(&format!(
            "Nothing more came: {}; no end-of-stream mark arrived.",
            stopped_words.join("; ")
        ));
    }
    if cfg.expect.is_none() {
        observed.push_str(
            " How many were lost at the end is unknown: give --expect N (the messages each \
             run of the sender sends) to count them.",
        );
    }
    observed.trim().to_string()
}
