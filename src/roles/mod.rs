//! Roles: the parts of a topology that own sockets and measure. One file per role, one
//! dispatch enum ([`Role`]); a role runs the same whether the runner placed it on a thread
//! or in a child process, and knows nothing about where it is.
//!
//! A role opens its sockets, says `ready` (with the endpoints it bound) on its control
//! channel, waits for `start` (the start barrier), runs, and returns a [`RoleReport`].
//! Roles that do not end by themselves (sink, echo, proxy) end when everything they expect
//! has arrived, when the runner says `stop` (then they drain what is queued), or after
//! being idle for the timeout (then they report what they have, marked as cut short).

use crate::zmq;

mod echo;
pub mod eot;
mod interval;
#[cfg(test)]
mod lean_tests;
mod ping;
mod proxy;
pub mod publisher;
pub mod shape;
mod sink;
pub use sink::ptmp;
mod slow_sink;
mod source;
pub(crate) use source::senders_pause_ms;
pub mod swarm;

mod control;
pub mod fill;
mod io;
pub mod live;
mod open;
mod spec;
mod stall;
mod usage;
mod wait;

use crate::error::Result;
pub use crate::topology::Role;
use control::Here;
#[cfg(test)]
pub(crate) use control::TestRunner;
pub use control::{Control, END_DRAIN, STOP_POLL};
pub(crate) use io::Io;
pub(crate) use open::{open_all, Opened};
pub use source::{
    opened_ns, quit_delay_ms, HOLD_MS, OPENED_TRAILER, PTMP_WIRE, START_DELAY_MS, TRAILER_END,
    TRAILER_QUIT_MS,
};
pub use spec::{EchoMode, HeaderUse, NodeSpec, Quit, RoleReport, SentFacts, SockPlan};
pub use usage::{legacy_role_name, process_usage, set_own_process, usage};
pub(crate) use usage::{node_usage, placement, rss_kib};
pub(crate) use wait::{slice_for, wait_until, Next, Patience};

/// Runs a node on this thread; `on_ready` gets the endpoints bound before the run starts.
pub fn run_here(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    on_ready: impl FnMut(&[String]),
) -> Result<RoleReport> {
    run_node(ctx, spec, &mut Here { on_ready })
}

/// Fills the role's own fields of a replica's spec from the graph (the runner set the
/// fields every role has).
pub fn fill_spec(p: &fill::Place, spec: &mut NodeSpec) -> Result<()> {
    match spec.role {
        Role::Source => source::fill(p, spec),
        Role::Sink => sink::fill(p, spec),
        Role::SlowSink => slow_sink::fill(p, spec),
        Role::Echo => fill::echo(p, spec),
        Role::Ping => fill::ping(p, spec),
        Role::Proxy => Ok(()),
        Role::Swarm => fill::swarm(p, spec),
    }
}

/// Runs a node replica to its end.
pub fn run_node(ctx: &zmq::Context, spec: &NodeSpec, ctl: &mut dyn Control) -> Result<RoleReport> {
    // A signal that ends the run wakes this thread out of a blocking ZeroMQ call.
    let _woken = crate::interrupt::WokenOnStop::register();
    usage::clear_start();
    let ctl = &mut Marked(ctl);
    match spec.role {
        Role::Ping => ping::run(ctx, spec, ctl),
        Role::Echo => echo::run(ctx, spec, ctl),
        Role::Source => source::run(ctx, spec, ctl),
        Role::Sink => sink::run(ctx, spec, ctl),
        Role::SlowSink => slow_sink::run(ctx, spec, ctl),
        Role::Proxy => proxy::run(ctx, spec, ctl),
        Role::Swarm => swarm::run(spec, ctl),
    }
}

/// A role's control that marks when the role passed the start barrier, so its usage can
/// say what share of a core it used while it ran.
struct Marked<'a>(&'a mut dyn Control);

impl Control for Marked<'_> {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        self.0.ready(endpoints)
    }

    fn wait_start(&mut self, timeout: std::time::Duration) -> Result<()> {
        self.0.wait_start(timeout)?;
        usage::mark_start();
        Ok(())
    }

    fn sent_with(&mut self, facts: SentFacts) -> Result<()> {
        self.0.sent_with(facts)
    }

    fn stop_requested(&mut self) -> bool {
        self.0.stop_requested()
    }

    fn send_offsets(&self) -> &[(u32, i64)] {
        self.0.send_offsets()
    }
}
