//! A listened stream turned into findings: one that sums the stream up (its ledger, rate,
//! latency and holes), then one per cause seen, each with its triage line.

use super::{EndedBy, ListenConfig, Listened};
use crate::diagnose::{cause, messages, ms, ns_to_ms, round3, FindingDraft};
use crate::endpoint::{Endpoint, Transport};
use crate::model::{Finding, Severity, TimedGap};
use crate::stats::ledger::GAPS_LISTED;
use crate::stats::{cause_of, Cause, Facts, GapPosition, LossSummary};
use crate::units::grouped;

/// The experiment name of every finding of a listen.
const EXPERIMENT: &str = "listen";

/// Streams whose figures the evidence lists one by one.
const STREAMS_LISTED: usize = 8;

/// One run of one stream, summed up.
struct RunView {
    stream: u64,
    loss: LossSummary,
    gaps: Vec<TimedGap>,
}

/// What the findings are written from.
struct Totals {
    loss: LossSummary,
    gaps: Vec<TimedGap>,
    runs: Vec<RunView>,
    /// Streams whose last run stopped with no end mark, a silence of at least the idle
    /// threshold before the listen ended: (stream, last seq, silence ns).
    stopped: Vec<(u64, u64, u64)>,
}

fn totals(cfg: &ListenConfig, l: &Listened) -> Totals {
    let seen = &l.seen;
    let origin = seen.first_ns.unwrap_or(l.started_ns);
    let mut loss = LossSummary::default();
    let mut gaps = Vec::new();
    let mut runs = Vec::new();
    let mut stopped = Vec::new();
    for (&stream, state) in &seen.streams {
        let last = state.epochs.len() - 1;
        for (i, e) in state.epochs.iter().enumerate() {
            let top = e.tally.highest_seq().map_or(0, |t| t + 1);
            let expected = match cfg.expect {
                Some(n) if i == last && !e.ended => n.max(top),
                _ => top,
            };
            let s = e.tally.summary(expected);
            let g = e.tally.gaps(expected, origin);
            loss.add(&s);
            for gap in &g {
                if gaps.len() < GAPS_LISTED {
                    gaps.push(*gap);
                }
            }
            runs.push(RunView {
                stream,
                loss: s,
                gaps: g,
            });
        }
        let current = state.current();
        let silence = l.ended_ns.saturating_sub(state.last_ns);
        if !current.ended && l.ended_by != EndedBy::Count && silence >= seen.idle_ns {
            let last_seq = current.tally.highest_seq().unwrap_or(0);
            stopped.push((stream, last_seq, silence));
        }
    }
    Totals {
        loss,
        gaps,
        runs,
        stopped,
    }
}

/// The findings of a listen: the summary first, then one per cause seen.
pub fn findings(cfg: &ListenConfig, l: &Listened) -> Vec<Finding> {
    let t = totals(cfg, l);
    let transport = Endpoint::parse(&l.endpoint, cfg.side)
        .map(|e| e.transport())
        .unwrap_or(Transport::Tcp);
    let mut out = vec![summary(cfg, l, &t, transport)];
    // What the listener knows for the one rule of the causes: its own socket type, and
    // sequence numbers; nothing of what the sender did.
    let facts = Facts {
        receiver: Some(cfg.kind),
        placed: true,
        ..Facts::default()
    };
    let cause_at = |p: GapPosition| cause_of(p, &facts);
    let draft = |name: &str| FindingDraft::of(&format!("listen/{name}"), EXPERIMENT, transport);
    let seen = &l.seen;
    let several = seen.streams.len() > 1;
    let of_stream = |s: u64| {
        if several {
            format!(" of stream {s}")
        } else {
            String::new()
        }
    };
    let gaps_at = |p: GapPosition| -> Vec<TimedGap> {
        t.runs
            .iter()
            .flat_map(|r| r.gaps.iter().copied())
            .filter(|g| g.position == p)
            .take(GAPS_LISTED)
            .collect()
    };

    if t.loss.lost_at_start > 0 {
        let lost = t.loss.lost_at_start;
        let mut f = draft("slow-joiner");
        f.severity = Severity::Warning;
        f.put("lost_at_start", lost);
        f.gaps = gaps_at(GapPosition::Start);
        let firsts: Vec<String> = t
            .runs
            .iter()
            .filter(|r| r.loss.lost_at_start > 0)
            .take(STREAMS_LISTED)
            .map(|r| {
                format!(
                    "seq {}{}",
                    grouped(r.loss.lost_at_start),
                    of_stream(r.stream)
                )
            })
            .collect();
        let c = cause_at(GapPosition::Start);
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
        out.push(f.finish());
    }

    if t.loss.lost_in_middle > 0 {
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
        let mut f = draft("hwm");
        f.severity = Severity::Warning;
        f.put("lost_in_middle", lost);
        f.put("holes_in_middle", holes);
        f.put("jumps", seen.jumps);
        f.put("jumps_with_backlog", seen.jumps_with_backlog);
        f.gaps = gaps_at(GapPosition::Middle);
        let largest = f.gaps.iter().max_by_key(|g| g.count).copied();
        if let Some(g) = largest {
            f.put("largest_hole", g.count);
        }
        let largest_words = largest
            .map(|g| {
                format!(
                    "; the largest, {} ({}), {}",
                    messages(g.count),
                    span(g),
                    g.before_ms
                        .zip(g.after_ms)
                        .map(|(b, a)| format!("between arrivals at {} and {}", ms(b), ms(a)))
                        .unwrap_or_else(|| "its arrivals not timed".to_string())
                )
            })
            .unwrap_or_default();
        let backlog = if seen.jumps == 0 {
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
        };
        let c = cause_at(GapPosition::Middle);
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
        out.push(f.finish());
    }

    if t.loss.lost_at_end > 0 || !t.stopped.is_empty() {
        let lost = t.loss.lost_at_end;
        let mut f = draft("stopped");
        f.severity = Severity::Warning;
        f.put("lost_at_end", lost);
        f.put("streams_stopped", t.stopped.len() as u64);
        if let Some(n) = cfg.expect {
            f.put("expected_per_run", n);
        }
        f.gaps = gaps_at(GapPosition::End);
        let longest = t.stopped.iter().map(|s| s.2).max().unwrap_or(0);
        if longest > 0 {
            f.put("silent_at_end_ms", ns_to_ms(longest));
        }
        let stopped_words: Vec<String> = t
            .stopped
            .iter()
            .take(STREAMS_LISTED)
            .map(|&(s, last, silence)| {
                format!(
                    "the last message{} (seq {}) arrived {} before the listen ended",
                    of_stream(s),
                    grouped(last),
                    ms(ns_to_ms(silence))
                )
            })
            .collect();
        let c = cause_at(GapPosition::End);
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
        f.observed = observed.trim().to_string();
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
        out.push(f.finish());
    }

    if t.loss.reordered > 0 {
        let n = t.loss.reordered;
        let mut f = draft("reordering");
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
        out.push(f.finish());
    }

    if t.loss.duplicated > 0 {
        let n = t.loss.duplicated;
        let mut f = draft("duplicates");
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
        out.push(f.finish());
    }

    let restarts = seen.restarts();
    if restarts > 0 {
        let mut f = draft("restart");
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
                    if several {
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
        out.push(f.finish());
    }

    if seen.idle_count > 0 {
        let longest = seen.idle.iter().map(|i| i.len_ns).max().unwrap_or(0);
        let mut f = draft("idle");
        f.put("idle_periods", seen.idle_count);
        f.put("idle_longest_ms", ns_to_ms(longest));
        f.put("idle_threshold_ms", ns_to_ms(seen.idle_ns));
        let origin = seen.first_ns.unwrap_or(l.started_ns);
        let when: Vec<String> = seen
            .idle
            .iter()
            .take(5)
            .map(|i| {
                format!(
                    "{} from {}",
                    ms(ns_to_ms(i.len_ns)),
                    ms(ns_to_ms(i.from_ns.saturating_sub(origin)))
                )
            })
            .collect();
        f.title = format!(
            "{} with nothing arriving for {} or more (idle periods), the longest {}",
            match seen.idle_count {
                1 => "1 time".to_string(),
                n => format!("{} times", grouped(n)),
            },
            ms(ns_to_ms(seen.idle_ns)),
            ms(ns_to_ms(longest))
        );
        f.observed = format!(
            "Between two messages nothing arrived for {} (times after the first arrival). \
             A pause alone loses nothing; it matters when it lines up with a hole.",
            when.join(", ")
        );
        f.cause = "The sender paused (a GC pause, a blocked thread, nothing to say), the \
                   network stalled, or the connection broke and ZeroMQ reconnected in the \
                   background (a PUB drops what it publishes for a subscriber while it is \
                   disconnected)."
            .to_string();
        f.remedy = "If the sender should never pause, have it send heartbeats and alarm on \
                    silence with a receive timeout; a socket monitor shows disconnections and \
                    reconnections; compare the idle periods with the holes' times."
            .to_string();
        f.triage(
            cause::IDLE,
            0,
            seen.idle_count,
            "idle periods",
            "heartbeats and receive timeouts; a socket monitor for reconnections",
        );
        out.push(f.finish());
    }

    let u = seen.unreadable;
    if u.total() > 0 {
        let mut f = draft("unreadable");
        f.severity = Severity::Warning;
        f.put("unreadable", u.total());
        let mut why = Vec::new();
        for (n, key, words) in [
            (u.no_frame, "unreadable_no_frame", "had too few frames"),
            (
                u.too_short,
                "unreadable_too_short",
                "were too short for the field",
            ),
            (
                u.not_a_number,
                "unreadable_not_a_number",
                "had no digits in the text field",
            ),
            (
                u.too_large,
                "unreadable_too_large",
                "had more digits in the text field than a 64-bit number holds",
            ),
            (
                u.no_header,
                "unreadable_no_header",
                "had no zmqperf measurement header",
            ),
            (
                u.bad_header,
                "unreadable_bad_header",
                "had a header of another version",
            ),
        ] {
            if n > 0 {
                f.put(key, n);
                why.push(format!("{} {words}", grouped(n)));
            }
        }
        f.title = format!(
            "{} of {} could not be read ({})",
            grouped(u.total()),
            messages(seen.messages),
            why.join(", ")
        );
        f.observed = format!(
            "Reading the sequence number from {}, {} of the {} received could not be counted: \
             {}. They are left out of the ledger.",
            cfg.seq_words(),
            grouped(u.total()),
            grouped(seen.messages),
            why.join(", ")
        );
        f.cause = if cfg.seq.is_none() {
            "The stream was not written by zmqperf, or not all of it: its messages do not start \
             with the measurement header (docs/wire-format.md)."
                .to_string()
        } else {
            "The field named does not fit these messages: another layout, or other kinds of \
             messages on the same socket."
                .to_string()
        };
        f.remedy = if cfg.seq.is_none() {
            "Name the field that holds the sequence number, e.g. --seq \
             frame=1,offset=4,width=4,endian=big, or --seq frame=1,text for a number written \
             in digits (docs/diagnose.md)."
                .to_string()
        } else {
            "Check --seq (and --stream-id) against the messages' layout; for a SUB, \
             --subscribe PREFIX keeps other kinds of messages out."
                .to_string()
        };
        f.triage(
            cause::UNREADABLE,
            0,
            u.total(),
            "messages unreadable",
            "name the sequence field with --seq frame=F,offset=O,width=W,endian=big|little",
        );
        out.push(f.finish());
    }
    out
}

/// `seq 100 to 199` or `seq 7`.
fn span(g: TimedGap) -> String {
    if g.count == 1 {
        format!("seq {}", grouped(g.first_seq))
    } else {
        format!(
            "seq {} to {}",
            grouped(g.first_seq),
            grouped(g.first_seq + g.count - 1)
        )
    }
}

/// The finding that sums the stream up.
fn summary(cfg: &ListenConfig, l: &Listened, t: &Totals, transport: Transport) -> Finding {
    let seen = &l.seen;
    let mut f = FindingDraft::of("listen/stream", EXPERIMENT, transport);
    let listened_ns = l.ended_ns.saturating_sub(l.started_ns);
    f.put("endpoint", l.endpoint.as_str());
    f.put("socket", cfg.describe(&l.endpoint).as_str());
    f.put("sequence_from", cfg.seq_words().as_str());
    if let Some(s) = &cfg.stream_id {
        f.put(
            "stream_id_from",
            format!("--stream-id {}", s.describe()).as_str(),
        );
    }
    f.put("listened_ms", ns_to_ms(listened_ns));
    f.put("ended_by", l.ended_by.name());
    f.put("messages", seen.messages);
    f.put("streams", seen.streams.len() as u64);
    f.put_ledger("", &t.loss);
    f.put("lost", t.loss.lost);
    f.put("restarts", seen.restarts());
    f.put("unreadable", seen.unreadable.total());
    f.put("idle_periods", seen.idle_count);
    if let Some(first) = seen.first_ns {
        f.put(
            "first_arrival_ms",
            ns_to_ms(first.saturating_sub(l.started_ns)),
        );
        let span = seen.last_ns.saturating_sub(first);
        if span > 0 && seen.messages > 1 {
            f.put(
                "msgs_per_s",
                round3((seen.messages - 1) as f64 * 1e9 / span as f64),
            );
        }
    }
    let clock = seen.latency.clock();
    if clock.differs() {
        // Stamps of another host's clock: no latency figure, what the check found instead.
        f.put("clock_future_stamps", clock.future);
        f.put("clock_stale_stamps", clock.stale);
    } else if seen.latency.count() > 0 {
        f.put("latency_samples", seen.latency.count());
        f.put("latency_p50_ms", ns_to_ms(seen.latency.quantile(0.5)));
        f.put("latency_p99_ms", ns_to_ms(seen.latency.quantile(0.99)));
        f.put("latency_max_ms", ns_to_ms(seen.latency.quantile(1.0)));
    }
    if seen.streams.len() > 1 {
        let mut by_stream: std::collections::BTreeMap<u64, LossSummary> = Default::default();
        for r in &t.runs {
            by_stream.entry(r.stream).or_default().add(&r.loss);
        }
        for (id, s) in by_stream.iter().take(STREAMS_LISTED) {
            f.put(&format!("stream_{id}_received"), s.received);
            f.put(&format!("stream_{id}_lost"), s.lost);
        }
    }
    f.gaps = t.gaps.clone();
    let listened = ms(ns_to_ms(listened_ns));
    let how = match l.ended_by {
        EndedBy::Duration => "the whole --duration".to_string(),
        EndedBy::Count => format!("until {} arrived (--count)", messages(seen.messages)),
        EndedBy::Interrupted => "until Ctrl-C".to_string(),
    };
    let troubled = t.loss.lost
        + t.loss.duplicated
        + t.loss.reordered
        + seen.unreadable.total()
        + seen.restarts()
        > 0;
    f.severity = if troubled || seen.messages == 0 {
        Severity::Warning
    } else {
        Severity::Info
    };
    let sock = cfg.describe(&l.endpoint);
    f.title = if seen.messages == 0 {
        format!("{sock}: nothing arrived in {listened}")
    } else if t.loss.is_clean() {
        format!(
            "{sock}: {} received in {listened}, nothing lost, duplicated or reordered",
            grouped(t.loss.received)
        )
    } else {
        format!(
            "{sock}: {} received in {listened}; {} lost ({} at the start, {} in the middle, {} at \
             the end), {} duplicated, {} reordered",
            grouped(t.loss.received),
            grouped(t.loss.lost),
            grouped(t.loss.lost_at_start),
            grouped(t.loss.lost_in_middle),
            grouped(t.loss.lost_at_end),
            grouped(t.loss.duplicated),
            grouped(t.loss.reordered)
        )
    };
    let latency = if let Some(line) = seen.latency.clock().not_shown() {
        format!(" Latency from the send time in the header: {line}.")
    } else if seen.latency.count() > 0 {
        format!(
            " Latency from the send time in the header (one clock: same host only): p50 {}, \
             p99 {}, max {}.",
            ms(ns_to_ms(seen.latency.quantile(0.5))),
            ms(ns_to_ms(seen.latency.quantile(0.99))),
            ms(ns_to_ms(seen.latency.quantile(1.0)))
        )
    } else {
        String::new()
    };
    f.observed = if seen.messages == 0 {
        format!(
            "Listened {how} ({listened}) and nothing arrived: no sender reached this socket{}.",
            if cfg.kind == crate::topology::SocketType::Sub && !cfg.subscribe.is_empty() {
                format!(", or nothing matched the prefix {:?}", cfg.subscribe)
            } else {
                String::new()
            }
        )
    } else {
        format!(
            "Listened {how} ({listened}): {} in {} stream{}, the sequence number read from {}; \
             {} distinct numbers received, {} missing, {} duplicated, {} reordered, {} \
             restart{}.{latency}",
            messages(seen.messages),
            grouped(seen.streams.len() as u64),
            if seen.streams.len() == 1 { "" } else { "s" },
            cfg.seq_words(),
            grouped(t.loss.received),
            grouped(t.loss.lost),
            grouped(t.loss.duplicated),
            grouped(t.loss.reordered),
            grouped(seen.restarts()),
            if seen.restarts() == 1 { "" } else { "s" },
        )
    };
    f.cause = if seen.messages == 0 {
        "Nothing to judge: the sender is not running, the endpoint or the socket type does not \
         match it (a SUB needs a PUB or XPUB, a PULL a PUSH), or the subscription prefix \
         matches none of its messages."
            .to_string()
    } else {
        "The ledger of the whole stream; each cause seen has a finding of its own, and the \
         triage summary puts them in order, most messages lost first."
            .to_string()
    };
    f.remedy = if seen.messages == 0 {
        "Check the sender is running and the endpoint, --type and --subscribe match it; with \
         --bind the sender must connect to this endpoint."
            .to_string()
    } else {
        "Listen for longer, or give --expect N (the messages each run of the sender sends) so \
         a missing tail is counted; `zmqperf diagnose` alone reproduces each cause on loopback \
         with its remedies measured."
            .to_string()
    };
    f.finish()
}
