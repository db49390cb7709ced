//! The client role: sends a request, waits for the echo, times the round trip
//! (REQ, DEALER or PAIR). Records round trip / 2, libzmq's one-way latency.

use super::{open, usage, Control, RoleReport, RoleSpec};
use crate::clock::now_ns;
use crate::compat::{check_size, Waiting};
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_TIMESTAMP, FLAG_WARMUP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::stats::LatencyHistogram;

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &RoleSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let (mut s, ep) = open(ctx, spec, ctl)?;
    ctl.wait_start(spec.timeout())?;
    let wait = Waiting {
        endpoint: ep.as_str(),
        peer: "the echo role",
        timeout: spec.timeout(),
        expected: spec.count + spec.warmup,
        unit: "round trips",
    };
    let mut msg = RawMsg::zeroed(spec.size)?;
    let header = spec.size >= HEADER_LEN;
    let mut hist = LatencyHistogram::new();
    let total = spec.warmup + spec.count;
    for i in 0..total {
        let warm = i < spec.warmup;
        let t0 = now_ns();
        if header {
            let h = Header {
                flags: FLAG_TIMESTAMP | if warm { FLAG_WARMUP } else { 0 },
                stream_id: 0,
                sequence: i,
                send_ns: t0,
            };
            msg.write_array(&h.to_bytes());
        }
        msg.send(&mut s, 0)
            .map_err(|e| wait.error(e, i, String::new()))?;
        msg.recv(&mut s, 0)
            .map_err(|e| wait.error(e, i, String::new()))?;
        let t1 = now_ns();
        check_size(&msg, spec.size, i)?;
        if header {
            match Header::decode(msg.prefix(HEADER_LEN)) {
                Ok(Some(h)) if h.sequence == i => {}
                other => {
                    return Err(Error::Protocol(format!(
                        "reply #{i} does not carry request #{i}'s header ({other:?})"
                    )))
                }
            }
        }
        if !warm {
            hist.record((t1 - t0) / 2);
        }
    }
    Ok(RoleReport {
        latency: Some(hist),
        usage: Some(usage(spec.role, placement())),
        ..Default::default()
    })
}

/// "thread" or "process": a child process plays one role, the runner's threads play inproc.
pub(super) fn placement() -> &'static str {
    if std::env::var_os(super::CHILD_ENV).is_some() {
        "process"
    } else {
        "thread"
    }
}
