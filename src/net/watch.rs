//! The watch on a measured socket: its connections, their ZeroMQ handshakes and their
//! disconnections, from libzmq's socket monitor.
//!
//! Two uses. The last side to send keeps its socket until the peer, done, hangs up:
//! libzmq's linger does not cover bytes already taken from the queue into the connection's
//! buffer (libzmq issues 1922 and 4660), so a side that closes right after its last send
//! can lose the tail (libzmq's local_lat sleeps 1 s instead). And a wait that times out
//! says what was seen: no connection at all, a connection whose handshake failed (a socket
//! type that cannot talk to this one, another security mechanism, not a ZeroMQ peer), or a
//! peer that completed the handshake and then sent nothing.

use crate::endpoint::{Endpoint, Transport};
use crate::error::{zmq_err, Result};
use crate::zmq;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

// libzmq's event numbers (zmq.h); the handshake events are stable since 4.3.
const CONNECTED: u16 = 0x0001;
const CONNECT_RETRIED: u16 = 0x0004;
const ACCEPTED: u16 = 0x0020;
const DISCONNECTED: u16 = 0x0200;
const HANDSHAKE_FAILED_NO_DETAIL: u16 = 0x0800;
const HANDSHAKE_SUCCEEDED: u16 = 0x1000;
const HANDSHAKE_FAILED_PROTOCOL: u16 = 0x2000;
const HANDSHAKE_FAILED_AUTH: u16 = 0x4000;
const WATCHED: i32 = (CONNECTED
    | CONNECT_RETRIED
    | ACCEPTED
    | DISCONNECTED
    | HANDSHAKE_FAILED_NO_DETAIL
    | HANDSHAKE_SUCCEEDED
    | HANDSHAKE_FAILED_PROTOCOL
    | HANDSHAKE_FAILED_AUTH) as i32;

/// What the watch has seen on the socket so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sightings {
    /// Connections made (accepted by a binder, or completed by a connecter).
    pub connections: u64,
    /// ZeroMQ handshakes completed.
    pub handshakes: u64,
    /// Disconnections.
    pub disconnections: u64,
    /// Connection attempts that failed and will be retried (a connecter whose peer is not
    /// listening: refused).
    pub retries: u64,
    /// Why handshakes failed, in words, first one first (at most a few kept).
    pub failures: Vec<String>,
}

impl Sightings {
    /// Whether a connection failed the ZeroMQ handshake (or never completed it): a peer
    /// that is there but cannot talk to this socket.
    pub fn refused(&self) -> bool {
        !self.failures.is_empty() || (self.connections > 0 && self.handshakes == 0)
    }

    /// What was seen, as the end of a sentence ("a peer connected, but ..."), or None when
    /// nothing connected at all.
    pub fn explain(&self) -> Option<String> {
        if let Some(why) = self.failures.first() {
            return Some(format!(
                "a peer connected {} time(s), but the ZeroMQ handshake failed: {why}",
                self.connections.max(1)
            ));
        }
        if self.connections > 0 && self.handshakes == 0 {
            return Some(
                format!("a connection was made, but the ZeroMQ handshake never completed: the peer's socket type cannot talk to this one ({PAIRS}), or {NOT_ZMQ}"),
            );
        }
        (self.handshakes > 0).then(|| {
            "a ZeroMQ peer connected and completed the handshake, but it sent nothing here: is it the right command for this side (a sender for a receiver, an echo for a client), and was it given the same message size?"
                .into()
        })
    }
}

/// The pairs that talk to each other, for every command that can meet the wrong one.
const PAIRS: &str = "local_lat pairs with remote_lat and local_thr with remote_thr, with the same --pattern; check_send and check_recv with types that pair: REQ with REP, PUSH with PULL, PUB with SUB, PAIR with PAIR";

/// The other reading of a handshake that never completes.
const NOT_ZMQ: &str = "a program that does not speak ZeroMQ at all (a web client or server, a port scanner, another protocol on this port)";

/// The words for a failed handshake: the event and its value (an errno or libzmq's
/// protocol error code).
fn failure(event: u16, value: u32) -> String {
    match (event, value) {
        // The peer's socket type is checked in the handshake's metadata (EINVAL).
        (HANDSHAKE_FAILED_NO_DETAIL, 22) => format!("its socket type cannot talk to this one ({PAIRS})"),
        (HANDSHAKE_FAILED_NO_DETAIL, e) => format!("the peer closed the connection during the handshake ({}): a socket type that cannot talk to this one ({PAIRS}), a security mechanism the peer does not share (both sides need the same --security or <enable_curve>), or {NOT_ZMQ}", std::io::Error::from_raw_os_error(e as i32)),
        (HANDSHAKE_FAILED_AUTH, _) => "authentication refused (the security settings of the two sides differ)".into(),
        (_, 0x1100_0002) => "the two sides use different security mechanisms (NULL, PLAIN or CURVE on one side only)".into(),
        (_, 0x1100_0001) => "a cryptographic error (wrong CURVE keys?)".into(),
        (_, code) if code & 0xF000_0000 == 0x1000_0000 => format!("the peer broke the ZMTP protocol (libzmq code {code:#x}): not a ZeroMQ peer, or a damaged one"),
        (_, code) => format!("libzmq protocol error {code:#x}"),
    }
}

/// Watches one socket through libzmq's monitor.
///
/// libzmq sends each event with a blocking send from the thread that sees it (often an I/O
/// thread): an event with no reader connected, or a full queue, would stall that thread.
/// So the queue has no limit (a few dozen bytes per event), and the monitor is switched off
/// on the watched socket before the reading end closes. A watch must be dropped before the
/// socket it watches ([`crate::roles`]' `Opened` declares it first).
pub struct PeerWatch {
    monitor: zmq::Socket,
    watched: *mut std::ffi::c_void,
    seen: RefCell<Sightings>,
}

impl Drop for PeerWatch {
    fn drop(&mut self) {
        // SAFETY: the watched socket outlives the watch (see above); a null endpoint stops
        // its monitor, after which libzmq sends no more events.
        unsafe { (crate::zmq::api().zmq_socket_monitor)(self.watched, std::ptr::null(), 0) };
    }
}

static MONITOR_N: AtomicUsize = AtomicUsize::new(0);

impl PeerWatch {
    /// Starts watching `sock` (before it binds or connects, so no event is missed); `None`
    /// for inproc, which has no connection buffer to lose and no handshake to fail.
    pub fn new(
        ctx: &zmq::Context,
        sock: &mut zmq::Socket,
        endpoint: &Endpoint,
    ) -> Result<Option<Self>> {
        // Connections to watch: none on inproc, nor on the datagram and multicast
        // transports (no peer connects there).
        if endpoint.transport() == Transport::Inproc || endpoint.transport().one_way() {
            return Ok(None);
        }
        let n = MONITOR_N.fetch_add(1, Ordering::Relaxed);
        let ep = format!("inproc://zmqperf-monitor-{}-{n}", std::process::id());
        sock.monitor(&ep, WATCHED)
            .map_err(zmq_err("zmq_socket_monitor"))?;
        let monitor = ctx.socket(zmq::PAIR).map_err(zmq_err("zmq_socket"))?;
        monitor
            .set_linger(0)
            .map_err(zmq_err("setting ZMQ_LINGER"))?;
        // No limit on the queue (an inproc pipe is unlimited when either side's is 0): the
        // socket's threads never wait on events nobody has read yet.
        monitor
            .set_rcvhwm(0)
            .map_err(zmq_err("setting ZMQ_RCVHWM"))?;
        monitor
            .connect(&ep)
            .map_err(zmq_err("connecting the monitor"))?;
        Ok(Some(PeerWatch {
            monitor,
            watched: sock.as_mut_ptr(),
            seen: RefCell::new(Sightings::default()),
        }))
    }

    /// Takes one event, waiting up to `ms` (0: only one already there); false if none.
    fn take(&self, ms: i32) -> bool {
        if self.monitor.set_rcvtimeo(ms).is_err() {
            return false;
        }
        // Each event is two frames: event number (u16) and value (u32), then the address.
        let Ok(frames) = self.monitor.recv_multipart(0) else {
            return false;
        };
        let Some(f) = frames.first().filter(|f| f.len() >= 6) else {
            return true;
        };
        let event = u16::from_le_bytes([f[0], f[1]]);
        let value = u32::from_le_bytes([f[2], f[3], f[4], f[5]]);
        let mut seen = self.seen.borrow_mut();
        match event {
            CONNECTED | ACCEPTED => seen.connections += 1,
            DISCONNECTED => seen.disconnections += 1,
            CONNECT_RETRIED => seen.retries += 1,
            HANDSHAKE_SUCCEEDED => seen.handshakes += 1,
            HANDSHAKE_FAILED_NO_DETAIL | HANDSHAKE_FAILED_PROTOCOL | HANDSHAKE_FAILED_AUTH
                if seen.failures.len() < 4 =>
            {
                seen.failures.push(failure(event, value));
            }
            _ => {}
        }
        true
    }

    /// Everything seen so far (takes the events waiting, without blocking).
    pub fn sightings(&self) -> Sightings {
        while self.take(0) {}
        self.seen.borrow().clone()
    }

    /// Waits up to `timeout` for the peer to disconnect; false if it did not.
    pub fn wait_gone(&self, timeout: Duration) -> bool {
        self.wait_gone_n(1, timeout)
    }

    /// Waits up to `timeout` for `n` more peers to disconnect (counting those whose
    /// disconnection has not been looked at yet); false if fewer did.
    pub fn wait_gone_n(&self, n: u32, timeout: Duration) -> bool {
        let want = self.seen.borrow().disconnections + u64::from(n);
        let deadline = Instant::now() + timeout;
        while self.seen.borrow().disconnections < want {
            let left = deadline.saturating_duration_since(Instant::now());
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            if ms == 0 {
                return false;
            }
            self.take(ms);
        }
        true
    }
}
