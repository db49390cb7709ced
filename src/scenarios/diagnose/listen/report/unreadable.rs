//! The finding of a listen about messages whose sequence number could not be read.

use super::View;
use crate::model::{Finding, Severity};
use crate::scenarios::diagnose::listen::tally::Unreadable;
use crate::scenarios::diagnose::{cause, messages, FindingDraft};
use crate::units::grouped;

/// Messages whose sequence number could not be read.
pub(super) fn unreadable(v: &View) -> Option<Finding> {
    let (cfg, seen) = (v.cfg, &v.l.seen);
    let u = seen.unreadable;
    if u.total() == 0 {
        return None;
    }
    let mut f = v.draft("unreadable");
    f.severity = Severity::Warning;
    f.put("unreadable", u.total());
    let why = reasons(&mut f, &u);
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
    Some(f.finish())
}

/// Each reason messages could not be read, in words, put in the evidence as well.
fn reasons(f: &mut FindingDraft, u: &Unreadable) -> Vec<String> {
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
    why
}
