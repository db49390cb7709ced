//! The slow sink role: a sink that works `work_us` microseconds on every message it takes
//! (`role = "slow_sink"`), so that its queue fills as a real slow consumer's does: behind a
//! PUB it loses what the high-water mark drops, behind a PUSH it holds the sender back.
//!
//! The work is a spin on the clock, not a sleep: a consumer that does real work keeps its
//! core busy, and a sleep would take at least the timer's slack (about 50 to 60 us on
//! Linux) on top of what was asked, and give the core away. Everything else is the sink's:
//! the same state, ledger, latency and end (the work follows each message's record).

use super::control::Control;
use super::fill::Place;
use super::{NodeSpec, RoleReport};
use crate::clock::now_ns;
use crate::error::Result;
use crate::zmq;

/// The name of its own field, in the node and in its spec's `own`.
const WORK_US: &str = "work_us";

/// Its spec: a sink's, and the work per message.
pub(super) fn fill(p: &Place, spec: &mut NodeSpec) -> Result<()> {
    super::sink::fill(p, spec)?;
    if let Some(us) = p.node().work_us {
        spec.own.insert(WORK_US.to_string(), us);
    }
    Ok(())
}

/// Runs the sink's loop with `work_us` of work after each message.
pub(super) fn run(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let work_ns = spec.own.get(WORK_US).copied().unwrap_or(0) * 1000;
    super::sink::run_with(ctx, spec, ctl, || {
        let until = now_ns() + work_ns;
        while now_ns() < until {
            std::hint::spin_loop();
        }
    })
}
