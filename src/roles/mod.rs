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
mod ping;
mod proxy;
pub mod publisher;
pub mod shape;
mod sink;
mod source;
pub mod swarm;

mod io;
mod open;
mod spec;
mod usage;
mod wait;

use crate::error::Result;
pub use crate::topology::Role;
pub(crate) use io::Io;
pub(crate) use open::open_all;
pub use spec::{EchoMode, HeaderUse, NodeSpec, Quit, RoleReport, SentFacts, SockPlan};
use std::time::Duration;
pub use usage::{legacy_role_name, set_own_process, usage};
pub(crate) use usage::{node_usage, placement, rss_kib};
pub(crate) use wait::{wait_until, Next, Patience};

/// How often a waiting passive role looks for the runner's stop.
pub const STOP_POLL: Duration = Duration::from_millis(100);

/// How long a receiver short of the messages it expects waits in silence before it takes
/// them for lost: a sink once the runner said stop (or its stream's end of transmission
/// came), `diagnose` once its sender is done. A stream that is only held up is late, not
/// lost: over loopback TCP a sender can sit on its queue for the receiver's delayed
/// acknowledgement, up to 200 ms (Linux's TCP_DELACK_MAX; traced with perf: the receiver's
/// delayed-ACK timer fires and the sender's queued bytes follow at once).
pub const END_DRAIN: Duration = Duration::from_secs(1);

/// The role's side of the control channel.
pub trait Control {
    /// Tells the runner the node's sockets are bound and connected (with the endpoints
    /// actually bound, in socket then bind order).
    fn ready(&mut self, endpoints: &[String]) -> Result<()>;
    /// Waits for the runner's start signal (the start barrier).
    fn wait_start(&mut self, timeout: Duration) -> Result<()>;
    /// Tells the runner a source's last message has left.
    fn sent(&mut self) -> Result<()> {
        self.sent_with(SentFacts::default())
    }
    /// As [`Control::sent`], with what the source measured around its send loop.
    fn sent_with(&mut self, _facts: SentFacts) -> Result<()> {
        Ok(())
    }
    /// Whether the runner has asked a passive role to stop (never blocks).
    fn stop_requested(&mut self) -> bool;
    /// From the start: what to add to the send stamps of each stream (by id) that was sent
    /// on another host, to bring them onto this node's clock, ns. Empty on one host.
    fn send_offsets(&self) -> &[(u32, i64)] {
        &[]
    }
}

/// The control of a role run on the caller's own thread (the compatible commands): ready
/// goes to a callback, the start is at once, no stop ever comes.
struct Here<F: FnMut(&[String])> {
    on_ready: F,
}

impl<F: FnMut(&[String])> Control for Here<F> {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        (self.on_ready)(endpoints);
        Ok(())
    }

    fn wait_start(&mut self, _timeout: Duration) -> Result<()> {
        Ok(())
    }

    fn stop_requested(&mut self) -> bool {
        false
    }
}

/// The runner's side for a role on a test's thread: its first endpoint goes back on a
/// channel, the start is at once, and every look for the runner's stop sees `stop`.
#[cfg(test)]
pub(crate) struct TestRunner {
    pub endpoint: std::sync::mpsc::Sender<String>,
    pub stop: bool,
}

#[cfg(test)]
impl TestRunner {
    pub fn new(endpoint: std::sync::mpsc::Sender<String>, stop: bool) -> Self {
        TestRunner { endpoint, stop }
    }
}

#[cfg(test)]
impl Control for TestRunner {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        self.endpoint.send(endpoints[0].clone()).unwrap();
        Ok(())
    }
    fn wait_start(&mut self, _timeout: Duration) -> Result<()> {
        Ok(())
    }
    fn stop_requested(&mut self) -> bool {
        self.stop
    }
}

/// Runs a node on this thread; `on_ready` gets the endpoints bound before the run starts.
pub fn run_here(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    on_ready: impl FnMut(&[String]),
) -> Result<RoleReport> {
    run_node(ctx, spec, &mut Here { on_ready })
}

/// Runs a node replica to its end.
pub fn run_node(ctx: &zmq::Context, spec: &NodeSpec, ctl: &mut dyn Control) -> Result<RoleReport> {
    // A signal that ends the run wakes this thread out of a blocking ZeroMQ call.
    let _woken = crate::runner::WokenOnStop::register();
    match spec.role {
        Role::Ping => ping::run(ctx, spec, ctl),
        Role::Echo => echo::run(ctx, spec, ctl),
        Role::Source => source::run(ctx, spec, ctl),
        Role::Sink => sink::run(ctx, spec, ctl),
        Role::Proxy => proxy::run(ctx, spec, ctl),
        Role::Swarm => swarm::run(spec, ctl),
    }
}
