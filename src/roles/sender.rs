//! The sender role: a stream of messages with the measurement header (PUSH, XPUB or PAIR),
//! as fast as the socket takes them (closed loop) or on a fixed schedule (open loop).
//!
//! In open loop, message i is due at start + i / rate; its header carries the due time, so
//! the receiver's latency counts from when the message should have left (no coordinated
//! omission), and the delay between due and actual send is recorded apart.

use super::client::placement;
use super::{open, usage, wait_until, Control, RoleReport, RoleSpec};
use crate::clock::now_ns;
use crate::compat::{PeerWatch, Waiting};
use crate::error::Result;
use crate::header::{Header, FLAG_END, FLAG_TIMESTAMP, FLAG_WARMUP, HEADER_LEN};
use crate::msg::{set_int_option, RawMsg};
use crate::stats::{LatencyHistogram, Throughput};

const ZMQ_XPUB_NODROP: i32 = 69;

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &RoleSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let (mut s, ep) = open(ctx, spec, ctl)?;
    let watch = PeerWatch::new(ctx, &s, &ep)?;
    let wait = Waiting {
        endpoint: ep.as_str(),
        peer: "the receiver role",
        timeout: spec.timeout(),
        expected: spec.count,
        unit: "messages",
    };
    let xpub = spec.pattern.socket(spec.role) == zmq::XPUB;
    if xpub {
        set_int_option(&mut s, ZMQ_XPUB_NODROP, 1)?;
    }
    ctl.wait_start(spec.timeout())?;
    if xpub {
        // No slow joiner: the first message leaves once the subscription is in.
        let mut sub = RawMsg::new();
        sub.recv(&mut s, 0)
            .map_err(|e| wait.error(e, 0, String::new()))?;
    }
    let header = spec.size >= HEADER_LEN;
    let every = spec.stamp_every.max(1);
    let mut m = RawMsg::new();
    for i in 0..spec.warmup {
        m.reset_uninit(spec.size)?;
        if header {
            let h = Header {
                flags: FLAG_WARMUP,
                stream_id: spec.stream_id,
                sequence: i,
                send_ns: 0,
            };
            m.write_array(&h.to_bytes());
        }
        m.send(&mut s, 0)
            .map_err(|e| wait.error(e, 0, String::new()))?;
    }
    let interval_ns = spec.rate.map(|r| 1e9 / r);
    let mut delay = LatencyHistogram::new();
    let last = spec.count - 1;
    let start = now_ns();
    for i in 0..spec.count {
        let (flags, stamp) = match interval_ns {
            Some(iv) => {
                let due = start + (i as f64 * iv) as u64;
                wait_until(due);
                delay.record(now_ns() - due);
                (FLAG_TIMESTAMP, due)
            }
            None if i % every == 0 || i == last => (FLAG_TIMESTAMP, now_ns()),
            None => (0, 0),
        };
        m.reset_uninit(spec.size)?;
        if header {
            let h = Header {
                flags: flags | if i == last { FLAG_END } else { 0 },
                stream_id: spec.stream_id,
                sequence: i,
                send_ns: stamp,
            };
            m.write_array(&h.to_bytes());
        }
        m.send(&mut s, 0).map_err(|e| {
            wait.error(
                e,
                i,
                " (sending blocked: the receiver stopped taking messages)".into(),
            )
        })?;
    }
    let end = now_ns();
    if let Some(w) = watch {
        w.wait_gone(spec.timeout());
    }
    Ok(RoleReport {
        send_delay: interval_ns.map(|_| delay),
        send: Some(Throughput {
            messages: spec.count,
            payload_bytes: spec.count * spec.size as u64,
            start_ns: start,
            end_ns: end,
        }),
        usage: Some(usage(spec.role, placement())),
        ..Default::default()
    })
}
