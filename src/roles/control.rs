//! The role's side of the control channel ([`Control`]) and the two timings every waiting
//! role shares: how often it looks for the runner's stop, and how long a receiver short of
//! its messages drains before it takes them for lost. Also the controls of a role run on the
//! caller's own thread ([`Here`]) and on a test's thread ([`TestRunner`]).

use super::SentFacts;
use crate::error::Result;
use std::time::Duration;

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
pub(super) struct Here<F: FnMut(&[String])> {
    pub(super) on_ready: F,
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

/// The runner's side for a role on a test's thread: its first endpoint (if it binds one)
/// goes back on a channel, the start is at once, and every look for the runner's stop sees
/// `stop` (which the test may set while the role runs).
#[cfg(test)]
pub(crate) struct TestRunner {
    pub endpoint: std::sync::mpsc::Sender<String>,
    pub stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

#[cfg(test)]
impl TestRunner {
    pub fn new(endpoint: std::sync::mpsc::Sender<String>, stop: bool) -> Self {
        Self::with_flag(
            endpoint,
            std::sync::Arc::new(std::sync::atomic::AtomicBool::new(stop)),
        )
    }

    /// The same, its stop the test's flag.
    pub fn with_flag(
        endpoint: std::sync::mpsc::Sender<String>,
        stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ) -> Self {
        TestRunner { endpoint, stop }
    }
}

#[cfg(test)]
impl Control for TestRunner {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        // A node that only connects has no endpoint to give.
        if let Some(e) = endpoints.first() {
            self.endpoint.send(e.clone()).unwrap();
        }
        Ok(())
    }
    fn wait_start(&mut self, _timeout: Duration) -> Result<()> {
        Ok(())
    }
    fn stop_requested(&mut self) -> bool {
        self.stop.load(std::sync::atomic::Ordering::Acquire)
    }
}
