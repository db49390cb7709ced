//! The checks of a node's own numbers (count, size, rate, typed frames, ticks) and of its
//! sockets' options, in the ranges libzmq and the roles accept.

use super::{err, field_of};
use crate::error::Result;
use crate::topology::Node;

/// A node's own numbers and its sockets' options, in the ranges libzmq and the roles
/// accept: what `run` would otherwise fail on with libzmq's "Invalid argument" once the
/// sockets open, or silently ignore.
pub(super) fn check_values(origin: &str, n: &Node) -> Result<()> {
    let at = |f: &str| format!("topology {origin}: node '{}': {f}", n.name);
    let count = crate::topology::value_u64(&n.count, &at("count"), crate::parse::parse_count)?;
    if count == Some(0) {
        return Err(err(origin, &n.name, "count", "0", "must be at least 1"));
    }
    crate::topology::value_u64(&n.size, &at("size"), |w, s| {
        crate::parse::parse_size(w, s).map(|x| x as u64)
    })?;
    if n.size.as_ref().and_then(|v| v.as_u64()) == Some(0) {
        return Err(err(
            origin,
            &n.name,
            "size",
            "0",
            "a message has at least 1 byte",
        ));
    }
    if let Some(sz) = n.size.as_ref().and_then(|v| v.as_u64()) {
        crate::parse::parse_size(&at("size"), &sz.to_string())?;
    }
    if let Some(r) = n.rate {
        if !(r.is_finite() && r > 0.0) {
            return Err(err(
                origin,
                &n.name,
                "rate",
                &r.to_string(),
                "a rate in msg/s above 0, e.g. 10000; leave it out for no pacing",
            ));
        }
    }
    check_frames(origin, n)?;
    check_ticks(origin, n)?;
    check_options(origin, n)
}

/// Typed frames: each has a byte, the first room for the header and the type id.
fn check_frames(origin: &str, n: &Node) -> Result<()> {
    let at = |f: &str| format!("topology {origin}: node '{}': {f}", n.name);
    if let Some(m) = &n.message {
        for (k, v) in m.frames.iter().enumerate() {
            let what = at(&format!("message.frames[{k}]"));
            let size = crate::topology::value_u64(&Some(v.clone()), &what, |w, s| {
                crate::parse::parse_size(w, s).map(|x| x as u64)
            })?
            .unwrap_or(0);
            let least = if k == 0 {
                crate::header::FIRST_FRAME_MIN as u64
            } else {
                1
            };
            if size < least {
                return Err(err(
                    origin,
                    &n.name,
                    &format!("message.frames[{k}]"),
                    &size.to_string(),
                    if k == 0 {
                        format!(
                            "the first frame holds the {}-byte header and the 4-byte type id; make it at least {least} bytes",
                            crate::header::HEADER_LEN
                        )
                    } else {
                        "a frame has at least 1 byte".to_string()
                    },
                ));
            }
        }
    }
    Ok(())
}

/// A tick schedule: an interval of 0 or more, at least one message, pass and io thread.
fn check_ticks(origin: &str, n: &Node) -> Result<()> {
    if let Some(t) = &n.ticks {
        if !(t.interval_ms.is_finite() && t.interval_ms >= 0.0) {
            return Err(err(
                origin,
                &n.name,
                "ticks.interval_ms",
                &t.interval_ms.to_string(),
                "0 (as fast as possible) or more ms",
            ));
        }
        if t.per_tick == 0 || t.passes == 0 {
            let (f, v) = if t.per_tick == 0 {
                ("ticks.per_tick", t.per_tick)
            } else {
                ("ticks.passes", t.passes)
            };
            return Err(err(
                origin,
                &n.name,
                f,
                &v.to_string(),
                "must be at least 1",
            ));
        }
        if t.io_threads < 1 {
            return Err(err(
                origin,
                &n.name,
                "ticks.io_threads",
                &t.io_threads.to_string(),
                "must be at least 1",
            ));
        }
    }
    Ok(())
}

/// Socket options in libzmq's ranges, and routing ids it takes.
fn check_options(origin: &str, n: &Node) -> Result<()> {
    for (si, s) in n.all_sockets().iter().enumerate() {
        let o = &s.options;
        let field = |f: &str| field_of(n, si, f);
        for (f, v, least, what) in [
            ("sndhwm", o.sndhwm, 0, "0 (no limit) or more messages"),
            ("rcvhwm", o.rcvhwm, 0, "0 (no limit) or more messages"),
            ("linger", o.linger, -1, "-1 (wait for ever), 0 or more ms"),
            (
                "sndbuf",
                o.sndbuf,
                -1,
                "-1 (the system's default) or more bytes",
            ),
            (
                "rcvbuf",
                o.rcvbuf,
                -1,
                "-1 (the system's default) or more bytes",
            ),
            (
                "tcp_keepalive",
                o.tcp_keepalive,
                -1,
                "-1 (the system's default), 0 (off) or 1 (on)",
            ),
            (
                "multicast_rate",
                o.multicast_rate,
                1,
                "1 or more kbit/s (libzmq's default is 100; 1000000 is 1 Gbit/s)",
            ),
            ("recovery_ivl", o.recovery_ivl, 0, "0 or more ms"),
            (
                "multicast_hops",
                o.multicast_hops,
                1,
                "1 to 255 (1: this network only)",
            ),
        ] {
            let Some(v) = v else { continue };
            let high = match f {
                "tcp_keepalive" => 1,
                "multicast_hops" => 255,
                _ => i32::MAX,
            };
            if v < least || v > high {
                return Err(err(origin, &n.name, &field(f), &v.to_string(), what));
            }
        }
        if let Some(g) = &o.group {
            if g.is_empty() || g.len() > crate::topology::GROUP_MAX || g.contains('\0') {
                return Err(err(
                    origin,
                    &n.name,
                    &field("group"),
                    g,
                    format!(
                        "a group has 1 to {} bytes and no zero byte",
                        crate::topology::GROUP_MAX
                    ),
                ));
            }
        }
        if let Some(id) = &o.routing_id {
            if id.is_empty() || id.len() > 255 || id.as_bytes()[0] == 0 {
                return Err(err(
                    origin,
                    &n.name,
                    &field("routing_id"),
                    &format!("{} bytes", id.len()),
                    "a routing id has 1 to 255 bytes and does not start with a zero byte",
                ));
            }
        }
    }
    Ok(())
}
