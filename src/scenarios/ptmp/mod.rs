//! PTMP's test programs as zmqperf commands: `check_send`, `check_recv` and
//! `check_sendrecv`, with PTMP's positional arguments, its socket types and czmq's socket
//! defaults (linger 0), so the shell lines of PTMP's README run with `zmqperf` in place of
//! `./build/test/` and show the same slow joiner and fast quit, then say why.
//!
//! The sender writes zmqperf's measurement header (docs/wire-format.md) in every message;
//! the receiver keeps the loss ledger, prints PTMP's gap lines (`i - seq = diff : t s`) and
//! ends after its timeout where PTMP's receiver hung.

mod cause;
pub mod gap;
mod recv;
mod send;
mod sendrecv;

pub use cause::{causes, one_line, Cause};
pub use gap::Missed;
pub use gap::{GapLine, GapTracker};
pub use recv::{
    check_recv, Ended, PtmpSummary, RecvConfig, RecvResult, WaitStatus, GAP_LINES_KEPT,
};
pub use send::{check_send, unseen_receiver, CheckSocket, SendConfig, SendResult};
pub use sendrecv::{check_sendrecv, SendRecvConfig, SendRecvResult};

use crate::endpoint::{Endpoint, Side};
use crate::error::{Error, Result};
use crate::roles::{open_all, Control, NodeSpec, Opened, SockPlan};
use crate::topology::{Role, SocketOptions, SocketType};
use crate::zmq;
use std::time::Duration;

/// check_recv's wait for the next message when no TIMEOUT is given (PTMP waited forever).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest message check_recv takes by default (`--max-size`): a frame declared larger
/// disconnects its sender, so a stray peer cannot make it hold that much memory.
pub const DEFAULT_MAX_SIZE: usize = 64 << 20;

/// Bytes per message by default: the measurement header and a small payload, about the
/// size of one of PTMP's TPSet messages with a few trigger primitives.
pub const DEFAULT_SIZE: usize = 64;

/// czmq's default ZMQ_LINGER for every zsock (zsys_linger is 0), which PTMP's sockets have:
/// a socket closes at once and drops what it has not handed to the connection yet.
pub const CZMQ_LINGER_MS: i32 = 0;

/// The types check_send sends with.
pub const SENDING: [SocketType; 3] = [SocketType::Pair, SocketType::Pub, SocketType::Push];
/// The types check_recv receives with.
pub const RECEIVING: [SocketType; 3] = [SocketType::Pair, SocketType::Sub, SocketType::Pull];

/// The one type that talks to `t` among PTMP's five (PAIR with PAIR, PUB with SUB, PUSH
/// with PULL).
pub fn peer_type(t: SocketType) -> SocketType {
    match t {
        SocketType::Pub => SocketType::Sub,
        SocketType::Sub => SocketType::Pub,
        SocketType::Push => SocketType::Pull,
        SocketType::Pull => SocketType::Push,
        other => other,
    }
}

fn names(types: &[SocketType]) -> String {
    let n: Vec<&str> = types.iter().map(|t| t.name()).collect();
    match n.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => n.join(""),
    }
}

/// Parses the TYPE argument of `command`, which takes one of `allowed` (any case); a
/// type of the other end, or one PTMP does not use, is refused with the types that fit.
pub fn parse_type(command: &str, value: &str, allowed: &[SocketType]) -> Result<SocketType> {
    let fits = names(allowed);
    let Some(t) = SocketType::parse(value.trim()) else {
        return Err(Error::invalid(
            "<TYPE>",
            value,
            format!("not a ZeroMQ socket type; {command} takes {fits} (any case)"),
        ));
    };
    if allowed.contains(&t) {
        return Ok(t);
    }
    let other = if command == "check_send" {
        "check_recv"
    } else {
        "check_send"
    };
    let reason = if SENDING.contains(&t) || RECEIVING.contains(&t) {
        format!(
            "{} is the other end's type: {command} takes {fits}; give {} here and {} to {other}",
            t.name(),
            peer_type(t).name(),
            t.name()
        )
    } else {
        format!("PTMP uses PAIR, PUB/SUB and PUSH/PULL only; {command} takes {fits}")
    };
    Err(Error::invalid("<TYPE>", value, reason))
}

/// Parses `bind` or `connect` (any case).
pub fn parse_side(value: &str) -> Result<Side> {
    match value.trim().to_ascii_lowercase().as_str() {
        "bind" => Ok(Side::Bind),
        "connect" => Ok(Side::Connect),
        _ => Err(Error::invalid(
            "<bind|connect>",
            value,
            "write bind or connect: whether this side binds ADDR or connects to it",
        )),
    }
}

/// The longest delay or timeout a PTMP-style command takes, ms: a week, as every duration.
const MAX_DELAY_MS: u64 = 7 * 86_400 * 1000;

/// Parses a delay in milliseconds as PTMP takes it (a whole number, 0 for none); a unit
/// (`250ms`, `1s`) is accepted too.
pub fn parse_delay(what: &str, value: &str) -> Result<Duration> {
    let t = value.trim();
    if let Ok(ms) = t.parse::<u64>() {
        if ms > MAX_DELAY_MS {
            return Err(Error::invalid(
                what,
                value,
                format!("too long; at most {MAX_DELAY_MS} ms (a week)"),
            ));
        }
        return Ok(Duration::from_millis(ms));
    }
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::invalid(
            what,
            value,
            format!("too long; at most {MAX_DELAY_MS} ms (a week)"),
        ));
    }
    if t.starts_with('-') {
        return Err(Error::invalid(
            what,
            value,
            "negative; write milliseconds, 0 or more (e.g. 1, 1000)",
        ));
    }
    crate::parse::parse_duration(what, t).map_err(|_| {
        Error::invalid(
            what,
            value,
            "not a number of milliseconds; write e.g. 0, 1 or 1000 (or 250ms, 1s)",
        )
    })
}

/// Parses check_recv's TIMEOUT: milliseconds as PTMP takes it (or a duration with a unit).
/// PTMP's -1 (wait forever) is taken as the default: zmqperf always ends.
pub fn parse_timeout(value: Option<&str>) -> Result<(Duration, bool)> {
    let Some(v) = value else {
        return Ok((DEFAULT_TIMEOUT, false));
    };
    if v.trim() == "-1" {
        return Ok((DEFAULT_TIMEOUT, true));
    }
    let d = parse_delay("<TIMEOUT>", v)?;
    if d.is_zero() {
        return Err(Error::invalid(
            "<TIMEOUT>",
            v,
            "0 would not wait at all; write milliseconds above 0 (e.g. 1000) or leave it out for 10 s",
        ));
    }
    Ok((d, false))
}

/// Parses check_sendrecv's pattern: pubsub, pipe (or pair) or pushpull, as PTMP's, into
/// the sender's and the receiver's types.
pub fn parse_pattern(value: &str) -> Result<(SocketType, SocketType)> {
    match value.trim().to_ascii_lowercase().as_str() {
        "pubsub" => Ok((SocketType::Pub, SocketType::Sub)),
        "pipe" | "pair" => Ok((SocketType::Pair, SocketType::Pair)),
        "pushpull" => Ok((SocketType::Push, SocketType::Pull)),
        _ => Err(Error::invalid(
            "<pattern>",
            value,
            "write pubsub (PUB to SUB), pipe or pair (PAIR to PAIR) or pushpull (PUSH to PULL)",
        )),
    }
}

/// czmq's defaults as the options of a socket a role opens: linger 0, no ZMQ_IMMEDIATE
/// on a connecting sender (the opener sets it for senders; czmq does not), a SUB
/// subscribed to everything.
pub(crate) fn czmq_options(kind: SocketType, side: Side) -> SocketOptions {
    SocketOptions {
        linger: Some(CZMQ_LINGER_MS),
        immediate: (side == Side::Connect && kind.sends()).then_some(false),
        subscribe: (kind == SocketType::Sub).then(|| vec![String::new()]),
        ..Default::default()
    }
}

/// The one socket of a PTMP command: `kind` bound to `ep` or connected to it, with
/// czmq's options.
pub(crate) fn plan(kind: SocketType, ep: &Endpoint, side: Side) -> SockPlan {
    SockPlan::single(kind, ep, side, czmq_options(kind, side))
}

/// The control of a socket opened by the roles' opener outside a role's run: nothing to
/// tell, nothing to wait for.
struct Opening;

impl Control for Opening {
    fn ready(&mut self, _endpoints: &[String]) -> Result<()> {
        Ok(())
    }

    fn wait_start(&mut self, _timeout: Duration) -> Result<()> {
        Ok(())
    }

    fn stop_requested(&mut self) -> bool {
        false
    }
}

/// Opens a receiver's socket through the roles' opener as a PTMP socket is: czmq's
/// options (linger 0, a SUB subscribed to everything), libzmq's default high-water marks;
/// `timeout` bounds every receive; `max_frame`: its largest expected message (a larger
/// frame disconnects its peer). Over tcp and ipc it comes with the watch on its
/// connections.
pub(crate) fn open_receiver(
    ctx: &zmq::Context,
    kind: SocketType,
    ep: &Endpoint,
    side: Side,
    timeout: Duration,
    max_frame: Option<usize>,
) -> Result<Opened> {
    let mut spec = NodeSpec::single("check_recv", Role::Sink, plan(kind, ep, side), timeout);
    spec.max_frame = max_frame;
    let mut opened = open_all(ctx, &spec, &mut Opening, timeout)?;
    Ok(opened.swap_remove(0))
}

/// Refuses inproc between two processes (check_send and check_recv are two programs).
pub fn endpoint(value: &str, side: Side) -> Result<Endpoint> {
    let ep = Endpoint::parse(value, side)?;
    if ep.transport() == crate::endpoint::Transport::Inproc {
        return Err(Error::Endpoint {
            endpoint: value.to_string(),
            reason: "inproc:// only reaches sockets in the same process; use ipc:// or tcp:// between check_send and check_recv, or `zmqperf check_sendrecv` for both ends in one process".into(),
        });
    }
    Ok(ep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_any_case_and_the_wrong_end_named() {
        assert_eq!(
            parse_type("check_send", "pub", &SENDING).unwrap(),
            SocketType::Pub
        );
        assert_eq!(
            parse_type("check_recv", "Pull", &RECEIVING).unwrap(),
            SocketType::Pull
        );
        assert_eq!(
            parse_type("check_recv", "PAIR", &RECEIVING).unwrap(),
            SocketType::Pair
        );
        let e = parse_type("check_send", "SUB", &SENDING).unwrap_err();
        assert_eq!(e.exit_code(), 3);
        let m = e.to_string();
        assert!(m.contains("PAIR, PUB or PUSH"), "{m}");
        assert!(m.contains("give PUB here and SUB to check_recv"), "{m}");
        let m = parse_type("check_recv", "push", &RECEIVING)
            .unwrap_err()
            .to_string();
        assert!(m.contains("PAIR, SUB or PULL"), "{m}");
        assert!(m.contains("give PULL here and PUSH to check_send"), "{m}");
        let m = parse_type("check_recv", "REP", &RECEIVING)
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("PTMP uses PAIR, PUB/SUB and PUSH/PULL only"),
            "{m}"
        );
        let m = parse_type("check_send", "PUBB", &SENDING)
            .unwrap_err()
            .to_string();
        assert!(m.contains("not a ZeroMQ socket type"), "{m}");
    }

    #[test]
    fn every_type_pairs_with_its_peer_only() {
        for s in SENDING {
            let r = peer_type(s);
            assert!(RECEIVING.contains(&r), "{s:?}");
            assert!(s.pairs_with(r));
            for other in RECEIVING.iter().filter(|&&o| o != r) {
                assert!(!s.pairs_with(*other), "{s:?} with {other:?}");
            }
        }
        for p in ["pubsub", "pipe", "pair", "PushPull"] {
            let (s, r) = parse_pattern(p).unwrap();
            assert!(s.pairs_with(r) && s.sends() && r.receives(), "{p}");
        }
        let m = parse_pattern("reqrep").unwrap_err().to_string();
        assert!(m.contains("pubsub") && m.contains("pushpull"), "{m}");
    }

    #[test]
    fn sides_delays_and_timeouts() {
        assert_eq!(parse_side("bind").unwrap(), Side::Bind);
        assert_eq!(parse_side("Connect").unwrap(), Side::Connect);
        let e = parse_side("listen").unwrap_err();
        assert_eq!(e.exit_code(), 3);
        assert!(e.to_string().contains("bind or connect"), "{e}");
        assert_eq!(parse_delay("d", "0").unwrap(), Duration::ZERO);
        assert_eq!(parse_delay("d", "1000").unwrap(), Duration::from_secs(1));
        assert_eq!(
            parse_delay("d", "250ms").unwrap(),
            Duration::from_millis(250)
        );
        assert!(parse_delay("d", "-5")
            .unwrap_err()
            .to_string()
            .contains("negative"));
        assert!(parse_delay("d", "soon").is_err());
        // N051: a delay of three years is a typo, said with the limit.
        for long in ["99999999999", "99999999999999999999999"] {
            let e = parse_delay("d", long).unwrap_err().to_string();
            assert!(e.contains("too long; at most 604800000 ms"), "{e}");
        }
        assert_eq!(parse_timeout(None).unwrap(), (DEFAULT_TIMEOUT, false));
        assert_eq!(
            parse_timeout(Some("500")).unwrap(),
            (Duration::from_millis(500), false)
        );
        assert_eq!(parse_timeout(Some("-1")).unwrap(), (DEFAULT_TIMEOUT, true));
        let e = parse_timeout(Some("0")).unwrap_err().to_string();
        assert!(e.contains("<TIMEOUT>") && e.contains("above 0"), "{e}");
    }

    #[test]
    fn inproc_is_refused_between_processes() {
        let e = endpoint("inproc://x", Side::Bind).unwrap_err();
        assert_eq!(e.exit_code(), 4);
        assert!(e.to_string().contains("check_sendrecv"), "{e}");
        assert!(endpoint("ipc://junk.txt", Side::Bind).is_ok());
    }
}
