//! check_send: opens a PAIR, PUB or PUSH socket as PTMP's sender does (czmq's linger 0),
//! sleeps START_DELAY_MS, sends COUNT messages as fast as it can, each with the
//! measurement header and its sequence number, sleeps QUIT_DELAY_MS and closes. The
//! sending is the source role's (`roles::run_here`), given PTMP's delays and trailer as
//! data; this file holds what check_send asks and what it makes of the source's report.

use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::{Error, Result};
use crate::header::HEADER_LEN;
use crate::model::ProcessUsage;
use crate::ptmp_wire::{self, Wire};
use crate::roles::{
    run_here, HeaderUse, NodeSpec, Quit, HOLD_MS, OPENED_TRAILER, PTMP_WIRE, START_DELAY_MS,
    TRAILER_QUIT_MS,
};
use crate::stats::Throughput;
use crate::topology::{Role, SocketType};
use crate::units::grouped;
use crate::zmq;
use serde::Serialize;
use std::time::Duration;

/// What check_send is asked to do.
#[derive(Debug, Clone)]
pub struct SendConfig {
    /// Messages to send.
    pub count: u64,
    /// PAIR, PUB or PUSH.
    pub kind: SocketType,
    /// Bind ADDR or connect to it.
    pub side: Side,
    /// ADDR.
    pub endpoint: Endpoint,
    /// Sleep between opening the socket and the first send.
    pub start_delay: Duration,
    /// Sleep between the last send and closing the socket.
    pub quit_delay: Duration,
    /// Bytes per message (at least the header's 24).
    pub size: usize,
    /// Longest a send may block (PAIR and PUSH block at the high-water mark or without a
    /// peer; PTMP's sender would wait for ever).
    pub timeout: Duration,
    /// The stream id written in every header (PTMP's TPSet: its detid).
    pub stream_id: u32,
    /// The message format: zmqperf's header (with the trailer), or PTMP's messages.
    pub wire: Wire,
}

/// What check_send and check_recv report first: the command, its socket, and COUNT.
#[derive(Debug, Clone, Serialize)]
pub struct CheckSocket {
    /// "check_send" or "check_recv".
    pub command: &'static str,
    /// Endpoint bound or connected.
    pub endpoint: String,
    /// Its transport.
    pub transport: Transport,
    /// The socket type.
    pub socket_type: SocketType,
    /// "bind" or "connect".
    pub side: &'static str,
    /// COUNT: the messages to send, or to receive.
    pub count: u64,
}

impl CheckSocket {
    /// `command`'s socket of type `kind` on `endpoint` (the one bound, or connected to).
    pub(crate) fn of(
        command: &'static str,
        kind: SocketType,
        side: Side,
        requested: &Endpoint,
        endpoint: String,
        count: u64,
    ) -> CheckSocket {
        CheckSocket {
            command,
            endpoint,
            transport: requested.transport(),
            socket_type: kind,
            side: side_name(side),
            count,
        }
    }
}

/// What check_send did.
#[derive(Debug, Clone, Serialize)]
pub struct SendResult {
    /// "check_send", its socket and COUNT (the messages to send), first in the JSON.
    #[serde(flatten)]
    pub socket: CheckSocket,
    /// The message format sent: zmqperf (the measurement header) or ptmp (PTMP's type
    /// frame and TPSet).
    pub wire: Wire,
    /// Bytes per message (PTMP's: both frames of the first message; later ones may be a
    /// byte longer as their varints grow).
    pub message_size: usize,
    /// The stream id in the headers (PTMP's: the TPSet's detid).
    pub stream_id: u32,
    /// START_DELAY_MS.
    pub start_delay_ms: u64,
    /// QUIT_DELAY_MS.
    pub quit_delay_ms: u64,
    /// ZMQ_LINGER of the socket when it closed, ms (czmq's default, 0).
    pub linger_ms: i32,
    /// Send (admission) rate: from the first send call to the return of the last. A PUB
    /// sends whether or not anyone receives.
    pub send: Throughput,
    /// ZeroMQ handshakes completed with a peer by the time the socket closed (tcp and ipc;
    /// None for inproc).
    pub peers_seen: Option<u64>,
    /// Messages sent: `count`, or fewer when a stop signal ended the sending (the last one
    /// sent carries the end mark).
    pub sent: u64,
    /// A stop signal (Ctrl-C, SIGTERM, SIGHUP) ended the sending or a delay early.
    pub interrupted: bool,
    /// What check_send's process used: CPU as a share of one core, peak RSS and VIRT.
    pub resources: ProcessUsage,
    /// Connections made (tcp and ipc; None for inproc): one without a handshake is a
    /// receiver that was there when check_send closed first (not in the JSON).
    #[serde(skip)]
    pub connections_seen: Option<u64>,
    /// Connection attempts refused (nothing listening; tcp and ipc; not in the JSON).
    #[serde(skip)]
    pub refusals_seen: Option<u64>,
}

/// What check_send's watch says of its receiver when it saw no handshake: None when one
/// completed (or on inproc, where there is no watch); else whether that is an error (a
/// PAIR or PUSH whose messages went to no one: exit 6) and the sentence. A connection made
/// without a handshake seen is a receiver that was there when check_send closed (linger 0)
/// first: a fast quit, not "start check_recv first", and what arrived is the receiver's to
/// say. Whatever the type (a PUB publishes whether anyone listens, but a check that reached
/// no one checked nothing), messages that went to no one are exit 6.
pub fn unseen_receiver(r: &SendResult) -> Option<(bool, String)> {
    if r.peers_seen != Some(0) {
        return None;
    }
    if r.connections_seen.is_some_and(|c| c > 0) {
        return Some((
            false,
            format!(
                "a receiver connected, but check_send closed (linger 0) before the ZeroMQ handshake was seen to complete: what was still queued of its {} messages was dropped (a fast quit; check_recv says how many arrived); give check_send a QUIT_DELAY_MS (e.g. 1000)",
                grouped(r.socket.count)
            ),
        ));
    }
    // A connect refused says nothing listened; with no event either way, check_send closed
    // before its connection's outcome was seen, and a receiver there would have lost all
    // to its quick close.
    let unknown = r.socket.side == "connect" && r.refusals_seen == Some(0);
    Some((
        true,
        if unknown {
            format!(
                "no receiver was seen connected while check_send ran: its {} messages went to no one; if check_recv was running, check_send closed (linger 0) before its connection was seen, a fast quit (cannot tell which: give check_send a QUIT_DELAY_MS, e.g. 1000, or start check_recv first)",
                grouped(r.socket.count)
            )
        } else {
            format!(
                "no receiver was connected while check_send ran: {} messages went to no one (start check_recv first, or give check_send a START_DELAY_MS)",
                grouped(r.socket.count)
            )
        },
    ))
}

pub(crate) fn side_name(side: Side) -> &'static str {
    match side {
        Side::Bind => "bind",
        Side::Connect => "connect",
    }
}

/// The source role's spec of PTMP's sender: `kind` on `ep` (bound or connected as `side`
/// says) with czmq's linger 0 and no ZMQ_IMMEDIATE, `count` messages of `size` bytes,
/// each with the header (time-stamped) and the trailer with the clock when the socket
/// opened. The caller adds the delays.
pub(crate) fn sender_spec(
    kind: SocketType,
    ep: &Endpoint,
    side: Side,
    (count, size, stream_id): (u64, usize, u32),
    timeout: Duration,
) -> NodeSpec {
    let plan = super::plan(kind, ep, side);
    let mut spec = NodeSpec::single("check_send", Role::Source, plan, timeout);
    spec.count = count;
    spec.size = size;
    spec.stream_id = stream_id;
    spec.quit = Quit::Hold;
    spec.own.insert(OPENED_TRAILER.into(), 1);
    spec
}

/// Runs check_send. `on_ready` gets the endpoint bound (the port picked for `:*`).
pub fn check_send(
    ctx: &zmq::Context,
    cfg: &SendConfig,
    on_ready: impl FnOnce(&str),
) -> Result<SendResult> {
    let began = std::time::Instant::now();
    if cfg.wire == Wire::Ptmp && cfg.count > u64::from(u32::MAX) + 1 {
        return Err(Error::invalid(
            "<COUNT>",
            &cfg.count.to_string(),
            format!(
                "PTMP's TPSet count is a uint32: with --wire ptmp give at most {}",
                u64::from(u32::MAX) + 1
            ),
        ));
    }
    if cfg.wire == Wire::Zmqperf && cfg.size < HEADER_LEN {
        return Err(Error::invalid(
            "--size",
            &cfg.size.to_string(),
            format!("the measurement header needs {HEADER_LEN} bytes; give {HEADER_LEN} or more"),
        ));
    }
    let mut spec = sender_spec(
        cfg.kind,
        &cfg.endpoint,
        cfg.side,
        (cfg.count, cfg.size, cfg.stream_id),
        cfg.timeout,
    );
    spec.peer_label = Some("check_recv".into());
    let quit_ms = cfg.quit_delay.as_millis() as u64;
    spec.own
        .insert(START_DELAY_MS.into(), cfg.start_delay.as_millis() as u64);
    spec.own.insert(HOLD_MS.into(), quit_ms);
    let message_size = match cfg.wire {
        Wire::Zmqperf => {
            spec.own
                .insert(TRAILER_QUIT_MS.into(), quit_ms.min(u32::MAX.into()));
            cfg.size
        }
        Wire::Ptmp => {
            // PTMP's messages in place of the header and its trailer.
            spec.own.remove(OPENED_TRAILER);
            spec.own.insert(PTMP_WIRE.into(), 1);
            spec.header = HeaderUse::Never;
            let mut b = [0u8; ptmp_wire::MAX_ENCODED];
            let n = ptmp_wire::tpset_of(0, cfg.stream_id).encode(&mut b);
            spec.size = 4 + n;
            spec.size
        }
    };
    let mut endpoint = String::new();
    let mut on_ready = Some(on_ready);
    let r = run_here(ctx, &spec, |b| {
        endpoint = b.first().cloned().unwrap_or_else(|| cfg.endpoint.as_str().to_string());
        if let Some(f) = on_ready.take() {
            f(&endpoint);
        }
    })
    .map_err(|e| match e {
        // The source's words for a send that blocked are a topology's; these are PTMP's.
        Error::PeerStopped {
            endpoint,
            done,
            expected,
            unit,
            timeout,
            ..
        } => Error::PeerStopped {
            endpoint,
            done,
            expected,
            unit,
            timeout,
            detail: format!(
                ": the {} socket blocked (no receiver taking messages, or a full queue); start check_recv first or raise --timeout",
                cfg.kind.name()
            ),
        },
        e => e,
    })?;
    let send = r.send.unwrap_or_default();
    let seen = r.sightings.as_ref();
    Ok(SendResult {
        socket: CheckSocket::of(
            "check_send",
            cfg.kind,
            cfg.side,
            &cfg.endpoint,
            endpoint,
            cfg.count,
        ),
        wire: cfg.wire,
        message_size,
        stream_id: cfg.stream_id,
        start_delay_ms: cfg.start_delay.as_millis() as u64,
        quit_delay_ms: quit_ms,
        linger_ms: super::CZMQ_LINGER_MS,
        sent: send.messages,
        send,
        peers_seen: seen.map(|w| w.handshakes),
        interrupted: crate::interrupt::interrupted(),
        resources: crate::roles::process_usage(began.elapsed()),
        connections_seen: seen.map(|w| w.connections),
        refusals_seen: seen.map(|w| w.retries),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(kind: SocketType, handshakes: u64, connections: u64) -> SendResult {
        SendResult {
            socket: CheckSocket {
                command: "check_send",
                endpoint: "tcp://127.0.0.1:5555".into(),
                transport: Transport::Tcp,
                socket_type: kind,
                side: "connect",
                count: 100,
            },
            wire: Wire::Zmqperf,
            message_size: 1 << 20,
            stream_id: 1,
            start_delay_ms: 0,
            quit_delay_ms: 0,
            linger_ms: 0,
            send: Throughput::default(),
            peers_seen: Some(handshakes),
            connections_seen: Some(connections),
            refusals_seen: Some(1),
            sent: 100,
            interrupted: false,
            resources: crate::roles::process_usage(std::time::Duration::from_secs(1)),
        }
    }

    /// C04: `check_send 100 PUSH connect EP 0 0 --size 1MiB` against a bound check_recv: a
    /// connection made, no handshake seen before the close. It said "no receiver was
    /// connected ... start check_recv first" and exited 6.
    #[test]
    fn a_receiver_that_connected_is_not_told_to_start() {
        let (error, what) = unseen_receiver(&sent(SocketType::Push, 0, 1)).expect("a warning");
        assert!(!error, "{what}");
        assert!(
            what.contains("a receiver connected") && what.contains("QUIT_DELAY_MS"),
            "{what}"
        );
        assert!(!what.contains("start check_recv first"), "{what}");
        // Nothing connected at all: exit 6, whatever the type (C02).
        let (error, what) = unseen_receiver(&sent(SocketType::Push, 0, 0)).expect("an error");
        assert!(error && what.contains("start check_recv first"), "{what}");
        assert_eq!(
            unseen_receiver(&sent(SocketType::Pub, 0, 0)).map(|w| w.0),
            Some(true)
        );
        assert_eq!(unseen_receiver(&sent(SocketType::Push, 1, 1)), None);
        // Nothing seen either way (closed before the connection's outcome): it cannot tell a
        // missing receiver from its own fast quit, and says both.
        let r = SendResult {
            refusals_seen: Some(0),
            ..sent(SocketType::Push, 0, 0)
        };
        let (error, what) = unseen_receiver(&r).expect("an error");
        assert!(error, "{what}");
        assert!(
            what.contains("went to no one") && what.contains("a fast quit (cannot tell which"),
            "{what}"
        );
    }
}
