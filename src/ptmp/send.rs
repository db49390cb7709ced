//! check_send: opens a PAIR, PUB or PUSH socket as PTMP's sender does (czmq's linger 0),
//! sleeps START_DELAY_MS, sends COUNT messages as fast as it can, each with the
//! measurement header and its sequence number, sleeps QUIT_DELAY_MS and closes.

use super::open;
use crate::clock::now_ns;
use crate::endpoint::{Endpoint, Side, Transport};
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_END, FLAG_TIMESTAMP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::net::Waiting;
use crate::stats::Throughput;
use crate::topology::SocketType;
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
    /// The stream id written in every header.
    pub stream_id: u32,
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
    /// Bytes per message.
    pub message_size: usize,
    /// The stream id in the headers.
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
    /// Connections made (tcp and ipc; None for inproc): one without a handshake is a
    /// receiver that was there when check_send closed first (not in the JSON).
    #[serde(skip)]
    pub connections_seen: Option<u64>,
    /// Connection attempts refused (nothing listening; tcp and ipc; not in the JSON).
    #[serde(skip)]
    pub refusals_seen: Option<u64>,
}

/// The tag of check_send's trailer, right after the header: the four bytes `zpOP`, then
/// the sender's clock (ns, u64 little-endian) when its socket had bound or connected. A
/// receiver learns from it how long after connecting a message was sent (the slow joiner's
/// measure): both times are the sender's clock, so on any host.
pub const OPENED_TAG: [u8; 4] = *b"zpOP";
const OPENED_AT: usize = HEADER_LEN + 4;
/// Bytes the header and the trailer take.
pub const OPENED_END: usize = OPENED_AT + 8;

/// The tag of the trailer's second part, right after the first: the four bytes `zpQD`,
/// then QUIT_DELAY_MS (u32 little-endian), how long check_send waits after its last message
/// before closing, so a receiver can tell a sender that waited from a fast quit.
pub const QUIT_TAG: [u8; 4] = *b"zpQD";
const QUIT_AT: usize = OPENED_END + 4;
/// Bytes the header and the whole trailer take.
pub const TRAILER_END: usize = QUIT_AT + 4;

/// Reads QUIT_DELAY_MS from check_send's trailer, if the message has it.
pub fn quit_delay_ms(prefix: &[u8]) -> Option<u64> {
    opened_ns(prefix)?;
    if prefix.len() < TRAILER_END || prefix[OPENED_END..QUIT_AT] != QUIT_TAG {
        return None;
    }
    Some(u32::from_le_bytes(prefix[QUIT_AT..TRAILER_END].try_into().expect("4 bytes")).into())
}

/// Reads check_send's trailer (the clock when the sender's socket opened), if the message
/// has one.
pub fn opened_ns(prefix: &[u8]) -> Option<u64> {
    if prefix.len() < OPENED_END || prefix[HEADER_LEN..OPENED_AT] != OPENED_TAG {
        return None;
    }
    Some(u64::from_le_bytes(
        prefix[OPENED_AT..OPENED_END].try_into().expect("8 bytes"),
    ))
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

/// Runs check_send. `on_ready` gets the endpoint bound (the port picked for `:*`).
pub fn check_send(
    ctx: &zmq::Context,
    cfg: &SendConfig,
    on_ready: impl FnOnce(&str),
) -> Result<SendResult> {
    if cfg.size < HEADER_LEN {
        return Err(Error::invalid(
            "--size",
            &cfg.size.to_string(),
            format!("the measurement header needs {HEADER_LEN} bytes; give {HEADER_LEN} or more"),
        ));
    }
    let mut s = open(
        ctx,
        cfg.kind,
        &cfg.endpoint,
        cfg.side,
        cfg.timeout,
        true,
        None,
    )?;
    let opened_ns = now_ns();
    on_ready(&s.endpoint);
    sleep_unless_stopped(cfg.start_delay);
    let quit_ms = u32::try_from(cfg.quit_delay.as_millis()).unwrap_or(u32::MAX);
    let sent = send_stream(&mut s.sock, cfg.count, cfg.size, cfg.stream_id, (opened_ns, Some(quit_ms))).map_err(
        |(seq, e)| {
            let waiting = Waiting {
                endpoint: &s.endpoint,
                peer: "check_recv",
                timeout: cfg.timeout,
                expected: cfg.count,
                unit: "messages",
                watch: s.watch.as_ref(),
            };
            waiting.error(
                e,
                seq,
                format!(
                    ": the {} socket blocked (no receiver taking messages, or a full queue); start check_recv first or raise --timeout",
                    cfg.kind.name()
                ),
            )
        },
    )?;
    // The quit delay runs in full even after a stop signal: it is how this sender closes
    // (what its queue still holds reaches the receiver, the end mark with it); a second
    // signal ends the process at once.
    std::thread::sleep(cfg.quit_delay);
    let seen = s.watch.as_ref().map(|w| w.sightings());
    let peers_seen = seen.as_ref().map(|w| w.handshakes);
    let connections_seen = seen.as_ref().map(|w| w.connections);
    let refusals_seen = seen.as_ref().map(|w| w.retries);
    let endpoint = s.endpoint.clone();
    drop(s);
    Ok(SendResult {
        socket: CheckSocket::of(
            "check_send",
            cfg.kind,
            cfg.side,
            &cfg.endpoint,
            endpoint,
            cfg.count,
        ),
        message_size: cfg.size,
        stream_id: cfg.stream_id,
        start_delay_ms: cfg.start_delay.as_millis() as u64,
        quit_delay_ms: cfg.quit_delay.as_millis() as u64,
        linger_ms: super::CZMQ_LINGER_MS,
        send: sent.throughput(cfg.size),
        peers_seen,
        sent: sent.messages,
        interrupted: crate::interrupt::interrupted(),
        connections_seen,
        refusals_seen,
    })
}

/// Sends `count` messages of `size` bytes as fast as the socket takes them, each with the
/// header (sequence number, send time; the end mark on the last) and, when the size allows,
/// the trailer: `opened_ns`, then QUIT_DELAY_MS when given. Returns the clock at the first
/// send and after the last
/// and the messages sent (fewer than `count` when a stop signal came: the message sent
/// then carries the end mark, so the receiver knows the stream's length), or the sequence
/// number whose send failed.
pub(crate) fn send_stream(
    sock: &mut zmq::Socket,
    count: u64,
    size: usize,
    stream_id: u32,
    (opened_ns, quit_ms): (u64, Option<u32>),
) -> std::result::Result<Sent, (u64, zmq::Error)> {
    // A stop signal wakes this thread out of a blocking send.
    let _woken = crate::interrupt::WokenOnStop::register();
    let mut msg = RawMsg::new();
    let mut h = Header {
        flags: FLAG_TIMESTAMP,
        stream_id,
        sequence: 0,
        send_ns: 0,
    };
    let start = now_ns();
    let write = |msg: &mut RawMsg, h: &Header| {
        if let (Some(q), true) = (quit_ms, size >= TRAILER_END) {
            let mut b = [0u8; TRAILER_END];
            h.encode(&mut b);
            b[HEADER_LEN..OPENED_AT].copy_from_slice(&OPENED_TAG);
            b[OPENED_AT..OPENED_END].copy_from_slice(&opened_ns.to_le_bytes());
            b[OPENED_END..QUIT_AT].copy_from_slice(&QUIT_TAG);
            b[QUIT_AT..].copy_from_slice(&q.to_le_bytes());
            msg.write_array(&b);
        } else if size >= OPENED_END {
            let mut b = [0u8; OPENED_END];
            h.encode(&mut b);
            b[HEADER_LEN..OPENED_AT].copy_from_slice(&OPENED_TAG);
            b[OPENED_AT..].copy_from_slice(&opened_ns.to_le_bytes());
            msg.write_array(&b);
        } else {
            msg.write_array(&h.to_bytes());
        }
    };
    let sent = |messages: u64| Sent {
        start_ns: start,
        end_ns: now_ns(),
        messages,
    };
    for seq in 0..count {
        let stop = crate::interrupt::interrupted();
        msg.reset_uninit(size)
            .map_err(|_| (seq, zmq::Error::last()))?;
        h.sequence = seq;
        if seq + 1 == count || stop {
            h.flags |= FLAG_END;
        }
        h.send_ns = now_ns();
        write(&mut msg, &h);
        loop {
            match msg.send(sock, 0) {
                Ok(()) => break,
                // A stop signal during a blocking send (a full queue): this message, now
                // with the end mark, gets a last second to go, then the sender ends with
                // what was sent.
                Err(zmq::Error::EINTR) if crate::interrupt::interrupted() => {
                    h.flags |= FLAG_END;
                    write(&mut msg, &h);
                    let went = send_within(sock, &mut msg, Duration::from_secs(1));
                    return Ok(sent(seq + went as u64));
                }
                // Another signal: the message is still ours, send it.
                Err(zmq::Error::EINTR) => {}
                Err(e) => return Err((seq, e)),
            }
        }
        if stop {
            return Ok(sent(seq + 1));
        }
    }
    Ok(sent(count))
}

/// Tries to send `msg` without blocking for up to `limit`; whether it went.
fn send_within(sock: &mut zmq::Socket, msg: &mut RawMsg, limit: Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    loop {
        match msg.send(sock, zmq::DONTWAIT) {
            Ok(()) => return true,
            Err(zmq::Error::EAGAIN | zmq::Error::EINTR) if std::time::Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(_) => return false,
        }
    }
}

/// What [`send_stream`] sent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sent {
    pub start_ns: u64,
    pub end_ns: u64,
    pub messages: u64,
}

impl Sent {
    /// The admission rate of the messages sent, `size` bytes each.
    pub fn throughput(&self, size: usize) -> Throughput {
        Throughput {
            messages: self.messages,
            payload_bytes: self.messages * size as u64,
            start_ns: self.start_ns,
            end_ns: self.end_ns,
        }
    }
}

/// Sleeps for `d`, or less when a stop signal comes (checked every 10 ms).
pub(crate) fn sleep_unless_stopped(d: Duration) {
    let until = std::time::Instant::now() + d;
    while !crate::interrupt::interrupted() {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(Duration::from_millis(10)));
    }
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
