//! Delivery in words: the loss ledger of a case, where its holes fell and why, and the
//! loss of a stream split by place.

use crate::model::{CaseResult, RunResult};
use crate::stats::{cause, Cause, Facts, GapPosition, LossSummary};
use crate::units::{self, grouped};

/// The loss ledger of a case over all its repetitions; None if no repetition kept one.
pub fn loss(c: &CaseResult) -> Option<LossSummary> {
    let mut total: Option<LossSummary> = None;
    for l in c.repetitions.iter().filter_map(|r| r.loss.as_ref()) {
        total.get_or_insert_with(LossSummary::default).add(l);
    }
    total
}

/// The built-in patterns whose sender blocks at its high-water mark instead of dropping.
const BLOCKING: [&str; 3] = ["pushpull", "fanin", "pair-thr"];

fn cause(p: GapPosition, c: &CaseResult) -> String {
    if let Some(f) = c.sender {
        let at = match p {
            GapPosition::Start => "at the start",
            GapPosition::Middle => "in the middle",
            GapPosition::End => "at the end",
        };
        return format!("{at}: {}", cause::sentence(p, &Facts::of_run(f)));
    }
    legacy_cause(p, &c.pattern)
}

/// The cause by place for a run recorded before the senders' facts were kept: the one rule
/// with what the pattern says of the sender (whether it drops at its high-water mark), and
/// nothing of how it ended.
fn legacy_cause(p: GapPosition, pattern: &str) -> String {
    let f = Facts {
        placed: true,
        drops_at_hwm: Some(!BLOCKING.contains(&pattern)),
        ..Facts::default()
    };
    match (p, cause::cause_of(p, &f)) {
        (GapPosition::Start, Cause::SlowJoiner) => "at the start: a slow joiner".into(),
        (GapPosition::Middle, Cause::HighWaterMark) => {
            "in the middle: a high-water mark reached".into()
        }
        (GapPosition::Middle, _) => {
            "in the middle: not a high-water mark (this sender blocks there rather than drop), so lost on the way".into()
        }
        (GapPosition::Start, _) => format!("at the start: {}", cause::sentence(p, &f)),
        (GapPosition::End, _) => format!("at the end: {}", cause::sentence(p, &f)),
    }
}

/// Where the first hole in the middle of a stream begins and, when known, when the stream
/// went on after it: `the first at seq 500,000 (94.0 ms into the stream)`.
pub fn first_middle_hole(l: &LossSummary) -> Option<String> {
    let g = l.gaps.iter().find(|g| g.position == GapPosition::Middle)?;
    let mut s = format!("the first at seq {}", grouped(g.first_seq));
    if let Some(ns) = g.after_ns {
        s.push_str(&format!(" ({:.1} ms into the stream)", ns as f64 / 1e6));
    }
    Some(s)
}

/// One sentence per case whose stream lost, duplicated or reordered messages; a single
/// `no loss` sentence when streams were checked and all were clean; nothing when no case
/// kept a ledger.
pub fn delivery(run: &RunResult) -> Vec<String> {
    let mut checked = false;
    let mut out = Vec::new();
    for c in &run.cases {
        let Some(l) = loss(c) else { continue };
        checked = true;
        if l.is_clean() {
            // A clean ledger of a stream that was cut short says nothing of what never came.
            if let Some(why) = &c.incomplete {
                out.push(format!(
                    "{}: {} arrived once and in order, but the case is incomplete: {why}",
                    c.id,
                    grouped(l.received)
                ));
            }
            continue;
        }
        let mut where_ = Vec::new();
        for (n, p) in [
            (l.lost_at_start, GapPosition::Start),
            (l.lost_in_middle, GapPosition::Middle),
            (l.lost_at_end, GapPosition::End),
        ] {
            if n == 0 {
                continue;
            }
            let mut part = format!("{} {}", grouped(n), cause(p, c));
            if let (GapPosition::Middle, Some(first)) = (p, first_middle_hole(&l)) {
                part.push_str(&format!(", {first}"));
            }
            where_.push(part);
        }
        let mut s = format!(
            "{}: {} of {} lost",
            c.id,
            grouped(l.lost),
            grouped(l.expected)
        );
        if !where_.is_empty() {
            s.push_str(&format!(" ({})", where_.join("; ")));
        }
        s.push_str(&format!(
            ", {} duplicated, {} reordered",
            grouped(l.duplicated),
            grouped(l.reordered)
        ));
        // A sender that drops: how fast it sent against what was delivered.
        if c.sender.is_some_and(|f| f.drops_at_hwm) {
            if let (Some(sent), Some(got)) = (
                c.summary.send_msgs_per_sec.map(|e| e.median),
                c.summary.msgs_per_sec.map(|e| e.median),
            ) {
                s.push_str(&format!(
                    "; sent at {} msg/s, delivered {} msg/s",
                    grouped(sent.round() as u64),
                    grouped(got.round() as u64)
                ));
            }
        }
        out.push(s);
    }
    if checked && out.is_empty() {
        out.push("no loss: every message of every checked stream arrived once and in order".into());
    }
    out
}

pub(super) fn ms(v: f64) -> String {
    format!("{} ms", units::value(v))
}

/// The loss of an edge: `250 of 600,000 (middle 250)`, the split by place only when
/// something was lost, duplicates and reordering only when there were some.
pub fn edge_loss(l: &LossSummary) -> String {
    let mut s = format!("{} of {}", grouped(l.lost), grouped(l.expected));
    let parts = loss_places(l);
    if !parts.is_empty() {
        s.push_str(&format!(" ({})", parts.join(", ")));
    }
    for extra in loss_extras(l) {
        s.push_str(&format!(", {extra}"));
    }
    s
}

/// Where the messages of a stream were lost, the places with none left out: `start
/// 1,797`, `middle 250`; nothing when none was lost.
pub fn loss_places(l: &LossSummary) -> Vec<String> {
    if l.lost == 0 {
        return Vec::new();
    }
    [
        ("start", l.lost_at_start),
        ("middle", l.lost_in_middle),
        ("end", l.lost_at_end),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(place, n)| format!("{place} {}", grouped(*n)))
    .collect()
}

/// The duplicates and reordered messages of a stream when there were some: `3
/// duplicated`, `1 reordered`.
pub fn loss_extras(l: &LossSummary) -> Vec<String> {
    let mut out = Vec::new();
    if l.duplicated > 0 {
        out.push(format!("{} duplicated", grouped(l.duplicated)));
    }
    if l.reordered > 0 {
        out.push(format!("{} reordered", grouped(l.reordered)));
    }
    out
}
