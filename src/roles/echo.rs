//! The echo role: sends every message back where it came from, frames and all (REP,
//! ROUTER, DEALER or PAIR), then keeps its connection until the clients hang up so the last
//! reply is not lost.

use super::{node_usage, open_all, Control, Next, NodeSpec, Patience, RoleReport, STOP_POLL};
use crate::error::{Error, Result};
use crate::msg::RawMsg;
use crate::net::{PeerWatch, Waiting};

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let mut opened = open_all(ctx, spec, ctl, STOP_POLL)?;
    let o = &mut opened[0];
    let watch = PeerWatch::new(ctx, &o.sock, &o.endpoint)?;
    ctl.wait_start(spec.timeout())?;
    let wait = Waiting {
        endpoint: o.endpoint.as_str(),
        peer: "the ping node",
        timeout: spec.timeout(),
        expected: spec.expect,
        unit: "round trips",
    };
    let s = &mut o.sock;
    let mut patience = Patience::new(spec.timeout());
    // Frames of one request: the routing envelope (ROUTER, DEALER), then the payload.
    let mut frames: Vec<RawMsg> = Vec::new();
    let mut done = 0u64;
    let mut cut_short = None;
    loop {
        if spec.ends_itself && done == spec.expect {
            break;
        }
        let mut n = 0;
        loop {
            if frames.len() == n {
                frames.push(RawMsg::new());
            }
            let got = if n == 0 {
                patience
                    .recv(&mut frames[0], s, ctl)
                    .map_err(|e| wait.error(e, done, String::new()))?
            } else {
                frames[n]
                    .recv(s, 0)
                    .map_err(|e| wait.error(e, done, String::new()))?;
                Next::Got
            };
            match got {
                Next::Got => {}
                Next::Stopped => return finish(spec, watch, None, done),
                Next::Idle if done == 0 => {
                    return Err(wait.error(zmq::Error::EAGAIN, 0, String::new()))
                }
                Next::Idle => {
                    cut_short = Some(format!(
                        "idle: no request for {:.1} s after {done} round trips",
                        patience.idle().as_secs_f64()
                    ));
                    break;
                }
            }
            let more = frames[n].more();
            n += 1;
            if !more {
                break;
            }
        }
        if cut_short.is_some() {
            break;
        }
        for (i, f) in frames[..n].iter_mut().enumerate() {
            let flags = if i + 1 < n { zmq::SNDMORE } else { 0 };
            f.send(s, flags)
                .map_err(|e| wait.error(e, done, String::new()))?;
        }
        done += 1;
    }
    finish(spec, watch, cut_short, done)
}

fn finish(
    spec: &NodeSpec,
    watch: Option<PeerWatch>,
    cut_short: Option<String>,
    done: u64,
) -> Result<RoleReport> {
    if spec.ends_itself && done < spec.expect && cut_short.is_none() {
        return Err(Error::Protocol(format!(
            "stopped after {done} of {} requests",
            spec.expect
        )));
    }
    if let Some(w) = watch {
        w.wait_gone_n(spec.peers.max(1), spec.timeout());
    }
    Ok(RoleReport {
        cut_short,
        usage: Some(node_usage(spec)),
        ..Default::default()
    })
}
