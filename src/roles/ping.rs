//! The ping role: a closed-loop client (REQ, DEALER or PAIR) that sends a request, waits
//! for the echo and times the round trip. Records round trip / 2, libzmq's one-way latency.

use super::{node_usage, open_all, Control, NodeSpec, RoleReport};
use crate::clock::now_ns;
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_TIMESTAMP, FLAG_WARMUP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::net::{check_size, Waiting};
use crate::stats::LatencyHistogram;

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let mut opened = open_all(ctx, spec, ctl, spec.timeout())?;
    let o = &mut opened[0];
    ctl.wait_start(spec.timeout())?;
    let wait = Waiting {
        endpoint: o.endpoint.as_str(),
        peer: "the echo node",
        timeout: spec.timeout(),
        expected: spec.count + spec.warmup,
        unit: "round trips",
    };
    let s = &mut o.sock;
    let mut msg = RawMsg::zeroed(spec.size)?;
    let mut delim = RawMsg::new();
    let header = spec.size >= HEADER_LEN;
    let mut hist = LatencyHistogram::new();
    let total = spec.warmup + spec.count;
    for i in 0..total {
        let warm = i < spec.warmup;
        let t0 = now_ns();
        if header {
            let h = Header {
                flags: FLAG_TIMESTAMP | if warm { FLAG_WARMUP } else { 0 },
                stream_id: spec.stream_id,
                sequence: i,
                send_ns: t0,
            };
            msg.write_array(&h.to_bytes());
        }
        if spec.delimiter {
            delim
                .send(s, zmq::SNDMORE)
                .map_err(|e| wait.error(e, i, String::new()))?;
        }
        msg.send(s, 0)
            .map_err(|e| wait.error(e, i, String::new()))?;
        if spec.delimiter {
            delim
                .recv(s, 0)
                .map_err(|e| wait.error(e, i, String::new()))?;
        }
        msg.recv(s, 0)
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
    ctl.sent()?;
    Ok(RoleReport {
        latency: Some(hist),
        usage: Some(node_usage(spec)),
        ..Default::default()
    })
}
