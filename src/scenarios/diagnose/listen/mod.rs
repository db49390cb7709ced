//! `zmqperf diagnose --connect|--bind ENDPOINT --type SUB|PULL`: listens to a live stream
//! someone else is sending, for a time or a count of messages, and turns what it saw into
//! findings with the same causes as the experiments: a missing start (slow joiner), holes
//! inside the stream (high-water mark / slow consumer), a missing tail (sender stopped /
//! fast quit), reordering, duplicates, publisher restarts, idle periods.
//!
//! A stream written by zmqperf carries the measurement header (stream id, sequence number,
//! send time). For any other stream the user names the field holding the sequence number
//! (and optionally a stream id): see [`field::FieldSpec`].

pub mod field;
mod report;
pub mod tally;

pub use report::findings;

use crate::clock::now_ns;
use crate::endpoint::Side;
use crate::error::{zmq_err, Error, Result};
use crate::header::Header;
use crate::net;
use crate::topology::SocketType;
use crate::zmq;
use field::{FieldSpec, Read};
use std::time::{Duration, Instant};
use tally::{Listening, Step};

/// Longest single wait for a message: the loop looks at the clock, the count and Ctrl-C
/// at least this often.
const POLL: Duration = Duration::from_millis(100);

/// What to listen to and how.
#[derive(Debug, Clone)]
pub struct ListenConfig {
    /// The endpoint, checked.
    pub endpoint: String,
    /// Connect to it or bind it.
    pub side: Side,
    /// SUB or PULL.
    pub kind: SocketType,
    /// For SUB: the prefix subscribed to (empty: everything).
    pub subscribe: String,
    /// Listen at most this long.
    pub duration: Duration,
    /// Stop after this many messages.
    pub count: Option<u64>,
    /// Where the sequence number is; None: the zmqperf measurement header.
    pub seq: Option<FieldSpec>,
    /// Where the stream id is; None: the header's stream id, or one stream.
    pub stream_id: Option<FieldSpec>,
    /// Messages each run of a sender sends (numbers 0 to N-1), if known: then a missing
    /// tail is counted.
    pub expect: Option<u64>,
    /// A silence at least this long is an idle period (and, at the end, a stopped sender).
    pub idle: Duration,
    /// Receive high-water mark of the listening socket (None: libzmq's 1,000).
    pub rcvhwm: Option<i32>,
    /// The largest message taken (ZMQ_MAXMSGSIZE, with the usual margin for frames).
    pub max_size: usize,
}

impl ListenConfig {
    /// The socket and side in words: `SUB connected to tcp://host:5556`.
    pub fn describe(&self, endpoint: &str) -> String {
        format!(
            "{} {} {endpoint}",
            self.kind.name().to_ascii_uppercase(),
            match self.side {
                Side::Bind => "bound to",
                Side::Connect => "connected to",
            }
        )
    }

    /// How the sequence number is read, in words.
    pub fn seq_words(&self) -> String {
        match &self.seq {
            Some(s) => format!("--seq {}", s.describe()),
            None => "the zmqperf measurement header".to_string(),
        }
    }
}

/// Why the listen ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndedBy {
    /// `--duration` ran out.
    Duration,
    /// `--count` messages arrived.
    Count,
    /// Ctrl-C.
    Interrupted,
}

impl EndedBy {
    /// In words, for the evidence.
    pub fn name(self) -> &'static str {
        match self {
            EndedBy::Duration => "duration",
            EndedBy::Count => "count",
            EndedBy::Interrupted => "ctrl-c",
        }
    }
}

/// The listen, done.
#[derive(Debug, Clone)]
pub struct Listened {
    /// What was seen.
    pub seen: Listening,
    /// The endpoint actually bound or connected.
    pub endpoint: String,
    /// Clock at the start of listening, ns.
    pub started_ns: u64,
    /// Clock at the end, ns.
    pub ended_ns: u64,
    /// Why it ended.
    pub ended_by: EndedBy,
}

/// What `listen` tells whoever watches it.
pub trait ListenObserver {
    /// The socket is open on `endpoint` (the port chosen for `tcp://host:*`).
    fn opened(&mut self, endpoint: &str);
    /// Called about every `progress_every` with what was seen so far.
    fn progress(&mut self, elapsed: Duration, seen: &Listening);
}

/// Reads the stream id and header of one message, or counts why it cannot.
fn read(cfg: &ListenConfig, frames: &[Vec<u8>], seen: &mut Listening) -> Option<(u64, Header)> {
    let unread = |r: Read, seen: &mut Listening| match r {
        Read::NoFrame => seen.unreadable.no_frame += 1,
        Read::TooShort => seen.unreadable.too_short += 1,
        Read::NotANumber => seen.unreadable.not_a_number += 1,
        Read::TooLarge => seen.unreadable.too_large += 1,
        Read::Value(_) => {}
    };
    let mut h = match &cfg.seq {
        Some(spec) => match spec.read(frames) {
            Read::Value(sequence) => Header {
                flags: 0,
                stream_id: 0,
                sequence,
                send_ns: 0,
            },
            other => {
                unread(other, seen);
                return None;
            }
        },
        None => match Header::decode(frames.first().map_or(&[][..], |f| f.as_slice())) {
            Ok(Some(h)) => h,
            Ok(None) => {
                seen.unreadable.no_header += 1;
                return None;
            }
            Err(_) => {
                seen.unreadable.bad_header += 1;
                return None;
            }
        },
    };
    let stream = match &cfg.stream_id {
        Some(spec) => match spec.read(frames) {
            Read::Value(v) => v,
            other => {
                unread(other, seen);
                return None;
            }
        },
        None => u64::from(h.stream_id),
    };
    h.stream_id = stream as u32;
    Some((stream, h))
}

/// Opens the listening socket (in net/: [`net::probe::listener`]).
fn open(ctx: &zmq::Context, cfg: &ListenConfig) -> Result<(zmq::Socket, String)> {
    net::probe::listener(
        ctx,
        net::probe::Listener {
            kind: cfg.kind,
            endpoint: &cfg.endpoint,
            side: cfg.side,
            subscribe: &cfg.subscribe,
            rcvhwm: cfg.rcvhwm,
            max_size: cfg.max_size,
        },
        POLL,
    )
}

/// Listens until the duration runs out, the count is reached or `stop()` says so (Ctrl-C),
/// reporting progress every `progress_every`. Nothing received is lost on any of these
/// ends: the caller turns what was seen into findings.
pub fn listen(
    cfg: &ListenConfig,
    progress_every: Duration,
    obs: &mut dyn ListenObserver,
    mut stop: impl FnMut() -> bool,
) -> Result<Listened> {
    let ctx = zmq::Context::new();
    let (sock, endpoint) = open(&ctx, cfg)?;
    obs.opened(&endpoint);
    let started = Instant::now();
    let started_ns = now_ns();
    // A stamp sent longer before the first arrival than the whole listen is from another
    // host's clock (a live stream's messages do not wait that long).
    let mut seen =
        Listening::new(cfg.idle.as_nanos().min(u64::MAX as u128) as u64).within(cfg.duration);
    let mut next_progress = started + progress_every;
    let ended_by = loop {
        if stop() {
            break EndedBy::Interrupted;
        }
        if cfg.count.is_some_and(|n| seen.messages >= n) {
            break EndedBy::Count;
        }
        let now = Instant::now();
        let elapsed = now.duration_since(started);
        if elapsed >= cfg.duration {
            break EndedBy::Duration;
        }
        if now >= next_progress {
            obs.progress(elapsed, &seen);
            next_progress = now + progress_every;
        }
        // Never wait past the end of the listen.
        let wait = POLL
            .min(cfg.duration - elapsed)
            .max(Duration::from_millis(1));
        sock.set_rcvtimeo(wait.as_millis() as i32)
            .map_err(zmq_err("setting ZMQ_RCVTIMEO"))?;
        let frames = match sock.recv_multipart(0) {
            Ok(f) => f,
            Err(zmq::Error::EAGAIN) | Err(zmq::Error::EINTR) => continue,
            Err(e) => {
                return Err(Error::Zmq {
                    op: format!("receiving from {endpoint}"),
                    source: e,
                })
            }
        };
        let at = now_ns();
        seen.arrived(at);
        if let Some((stream, h)) = read(cfg, &frames, &mut seen) {
            if seen.record(stream, &h, at) == Step::Jump
                && sock.get_events().is_ok_and(|e| e.contains(zmq::POLLIN))
            {
                seen.backlog_at_jump();
            }
        }
    };
    Ok(Listened {
        seen,
        endpoint,
        started_ns,
        ended_ns: now_ns(),
        ended_by,
    })
}
