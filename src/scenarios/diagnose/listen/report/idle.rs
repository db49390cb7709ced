//! The finding of a listen about silences: idle periods between two messages.

use super::View;
use crate::model::Finding;
use crate::scenarios::diagnose::{cause, ms, ns_to_ms};
use crate::units::grouped;

/// Silences of at least the idle threshold between two messages.
pub(super) fn idle(v: &View) -> Option<Finding> {
    let seen = &v.l.seen;
    let l = v.l;
    if seen.idle_count == 0 {
        return None;
    }
    let longest = seen.idle.iter().map(|i| i.len_ns).max().unwrap_or(0);
    let mut f = v.draft("idle");
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
    Some(f.finish())
}
