//! A sink's record of every message it takes (sequence, flags, send stamp, and the clock
//! when it had taken it), opt-in: the own field `trace_max` (the most kept, room made
//! before the loop) asks a slow sink for it (slow_sink.rs runs its loop with the record
//! in its work; the plain sink's run is left as it was, so it has no look at the field).
//! What `zmqperf diagnose` reads after the fact: the times around each hole, and how deep
//! the queue was that each message joined.

use super::super::control::Control;
use super::super::spec::Arrival;
use super::super::{NodeSpec, RoleReport};
use crate::clock::now_ns;
use crate::error::Result;
use crate::header::{Header, FLAG_WARMUP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::zmq;

/// The sink's own field: keep a record of at most this many messages.
pub const TRACE_MAX: &str = "trace_max";

/// The record being kept.
pub(in crate::roles) struct Trace {
    kept: Vec<Arrival>,
    max: usize,
}

impl Trace {
    /// The record `spec` asks for, with room for all of it; None when it asks for none.
    pub fn of(spec: &NodeSpec) -> Option<Trace> {
        let max = usize::try_from(*spec.own.get(TRACE_MAX)?).unwrap_or(usize::MAX);
        Some(Trace {
            kept: Vec::with_capacity(max.min(1 << 24)),
            max,
        })
    }

    /// Notes the message just taken (warm-up messages and messages without the header are
    /// left out), while there is room.
    #[inline]
    pub fn note(&mut self, m: &mut RawMsg) {
        if self.kept.len() >= self.max {
            return;
        }
        let arrival_ns = now_ns();
        if let Ok(Some(h)) = Header::decode(m.prefix(HEADER_LEN)) {
            if h.flags & FLAG_WARMUP == 0 {
                self.kept.push(Arrival {
                    sequence: h.sequence,
                    flags: h.flags,
                    send_ns: h.send_ns,
                    arrival_ns,
                });
            }
        }
    }
}

/// The sink's run keeping `trace`, with `work` after each message is noted; the report
/// carries the record.
pub(in crate::roles) fn run(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
    mut trace: Trace,
    mut work: impl FnMut(&mut RawMsg),
) -> Result<RoleReport> {
    let mut report = super::run_with(ctx, spec, ctl, |m| {
        trace.note(m);
        work(m);
    })?;
    report.arrivals = Some(trace.kept);
    Ok(report)
}

impl NodeSpec {
    /// A slow sink that keeps a record of the first `max` messages it takes:
    /// [`RoleReport::arrivals`].
    pub fn trace_arrivals(&mut self, max: u64) {
        self.own.insert(TRACE_MAX.to_string(), max);
    }
}

#[cfg(test)]
mod tests;
