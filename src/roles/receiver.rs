//! The receiver role: takes a stream (PULL, SUB or PAIR), keeps the loss ledger and the
//! one-way latency of the time-stamped messages, and stops at the end-of-stream mark.

use super::client::placement;
use super::{open, usage, Control, RoleReport, RoleSpec};
use crate::clock::now_ns;
use crate::compat::{check_size, Waiting};
use crate::error::{Error, Result};
use crate::header::{Header, FLAG_END, FLAG_WARMUP, HEADER_LEN};
use crate::msg::RawMsg;
use crate::stats::{LatencyHistogram, Ledger, Throughput};

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &RoleSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let (mut s, ep) = open(ctx, spec, ctl)?;
    ctl.wait_start(spec.timeout())?;
    // With several senders (fan-in), `count` and `warmup` are per sender.
    let streams = u64::from(spec.streams.max(1));
    let total = spec.count * streams;
    let wait = Waiting {
        endpoint: ep.as_str(),
        peer: "the sender role",
        timeout: spec.timeout(),
        expected: total,
        unit: "messages",
    };
    let mut ends = 0u64;
    let header = spec.size >= HEADER_LEN;
    let mut ledger = Ledger::new();
    let mut hist = LatencyHistogram::new();
    let mut msg = RawMsg::new();
    let mut received = 0u64;
    let mut seen = 0u64;
    let mut start = 0;
    loop {
        msg.recv(&mut s, 0).map_err(|e| {
            let lost = ledger.summary(None).lost;
            wait.error(
                e,
                received,
                format!(" ({lost} lost so far by sequence number)"),
            )
        })?;
        check_size(&msg, spec.size, seen)?;
        seen += 1;
        if !header {
            // Too small for the header: count, as libzmq's local_thr does.
            if seen <= spec.warmup * streams {
                continue;
            }
            if received == 0 {
                start = now_ns();
            }
            received += 1;
            if received == total {
                break;
            }
            continue;
        }
        let h = match Header::decode(msg.prefix(HEADER_LEN)) {
            Ok(Some(h)) => h,
            Ok(None) => {
                return Err(Error::Protocol(
                    "a message without the measurement header".into(),
                ))
            }
            Err(e) => return Err(Error::Protocol(e.to_string())),
        };
        if h.flags & FLAG_WARMUP != 0 {
            continue;
        }
        // The clock is read only where a figure needs it (as in local_thr): on the first
        // message and on the time-stamped ones.
        let stamped = h.has_timestamp();
        let now = if stamped || received == 0 {
            now_ns()
        } else {
            0
        };
        if received == 0 {
            start = now;
        }
        received += 1;
        ledger.record(h.stream_id, h.sequence);
        if stamped {
            hist.record(now.saturating_sub(h.send_ns));
        }
        if h.flags & FLAG_END != 0 {
            ends += 1;
        }
        if ends == streams || received == total {
            break;
        }
    }
    let end = now_ns();
    Ok(RoleReport {
        latency: header.then_some(hist),
        delivered: Some(Throughput {
            messages: received,
            payload_bytes: received * spec.size as u64,
            start_ns: start,
            end_ns: end,
        }),
        ledger: header.then_some(ledger),
        usage: Some(usage(spec.role, placement())),
        ..Default::default()
    })
}
