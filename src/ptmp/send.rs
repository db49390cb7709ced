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

/// What check_send did.
#[derive(Debug, Clone, Serialize)]
pub struct SendResult {
    /// "check_send".
    pub command: &'static str,
    /// Endpoint bound or connected.
    pub endpoint: String,
    /// Its transport.
    pub transport: Transport,
    /// The socket type.
    pub socket_type: SocketType,
    /// "bind" or "connect".
    pub side: &'static str,
    /// Messages sent.
    pub count: u64,
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
}

/// The tag of check_send's trailer, right after the header: the four bytes `zpOP`, then
/// the sender's clock (ns, u64 little-endian) when its socket had bound or connected. A
/// receiver learns from it how long after connecting a message was sent (the slow joiner's
/// measure): both times are the sender's clock, so on any host.
pub const OPENED_TAG: [u8; 4] = *b"zpOP";
const OPENED_AT: usize = HEADER_LEN + 4;
/// Bytes the header and the trailer take.
pub const OPENED_END: usize = OPENED_AT + 8;

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
    let sent = send_stream(&mut s.sock, cfg.count, cfg.size, cfg.stream_id, opened_ns).map_err(
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
    let peers_seen = s.watch.as_ref().map(|w| w.sightings().handshakes);
    let endpoint = s.endpoint.clone();
    drop(s);
    Ok(SendResult {
        command: "check_send",
        endpoint,
        transport: cfg.endpoint.transport(),
        socket_type: cfg.kind,
        side: side_name(cfg.side),
        count: cfg.count,
        message_size: cfg.size,
        stream_id: cfg.stream_id,
        start_delay_ms: cfg.start_delay.as_millis() as u64,
        quit_delay_ms: cfg.quit_delay.as_millis() as u64,
        linger_ms: super::CZMQ_LINGER_MS,
        send: sent.throughput(cfg.size),
        peers_seen,
        sent: sent.messages,
        interrupted: crate::runner::interrupted(),
    })
}

/// Sends `count` messages of `size` bytes as fast as the socket takes them, each with the
/// header (sequence number, send time; the end mark on the last) and, when the size allows,
/// the trailer with `opened_ns`. Returns the clock at the first send and after the last
/// and the messages sent (fewer than `count` when a stop signal came: the message sent
/// then carries the end mark, so the receiver knows the stream's length), or the sequence
/// number whose send failed.
pub(crate) fn send_stream(
    sock: &mut zmq::Socket,
    count: u64,
    size: usize,
    stream_id: u32,
    opened_ns: u64,
) -> std::result::Result<Sent, (u64, zmq::Error)> {
    // A stop signal wakes this thread out of a blocking send.
    let _woken = crate::runner::WokenOnStop::register();
    let mut msg = RawMsg::new();
    let mut h = Header {
        flags: FLAG_TIMESTAMP,
        stream_id,
        sequence: 0,
        send_ns: 0,
    };
    let start = now_ns();
    let write = |msg: &mut RawMsg, h: &Header| {
        if size >= OPENED_END {
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
        let stop = crate::runner::interrupted();
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
                Err(zmq::Error::EINTR) if crate::runner::interrupted() => {
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
    while !crate::runner::interrupted() {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(Duration::from_millis(10)));
    }
}
