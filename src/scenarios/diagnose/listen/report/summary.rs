//! The finding that sums a listened stream up: its ledger, rate, latency and holes, and
//! how the listen ended.

use super::{View, EXPERIMENT, STREAMS_LISTED};
use crate::model::{Finding, Severity};
use crate::scenarios::diagnose::listen::EndedBy;
use crate::scenarios::diagnose::{messages, ms, ns_to_ms, round3, FindingDraft};
use crate::stats::LossSummary;
use crate::units::grouped;

/// The finding that sums the stream up.
pub(super) fn summary(v: &View) -> Finding {
    let (l, t) = (v.l, &v.t);
    let seen = &l.seen;
    let mut f = FindingDraft::of("listen/stream", EXPERIMENT, v.transport);
    let listened_ns = l.ended_ns.saturating_sub(l.started_ns);
    evidence(&mut f, v, listened_ns);
    f.gaps = t.gaps.clone();
    let listened = ms(ns_to_ms(listened_ns));
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
    f.title = title(v, &listened);
    f.observed = observed(v, &listened);
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

/// The measured values of the stream: where and how it was listened to, its ledger, its
/// rate and latency, and each stream's figures when there are several.
fn evidence(f: &mut FindingDraft, v: &View, listened_ns: u64) {
    let (cfg, l, t) = (v.cfg, v.l, &v.t);
    let seen = &l.seen;
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
}

/// The title: the socket, and what arrived in how long.
fn title(v: &View, listened: &str) -> String {
    let (cfg, l, t) = (v.cfg, v.l, &v.t);
    let seen = &l.seen;
    let sock = cfg.describe(&l.endpoint);
    if seen.messages == 0 {
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
    }
}

/// What was observed: how the listen ended and the ledger in words, or that nothing came.
fn observed(v: &View, listened: &str) -> String {
    let (cfg, l, t) = (v.cfg, v.l, &v.t);
    let seen = &l.seen;
    let how = match l.ended_by {
        EndedBy::Duration => "the whole --duration".to_string(),
        EndedBy::Count => format!("until {} arrived (--count)", messages(seen.messages)),
        EndedBy::Interrupted => "until Ctrl-C".to_string(),
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
    if seen.messages == 0 {
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
    }
}
