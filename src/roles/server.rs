//! The server role: echoes every request unchanged (REP, ROUTER or PAIR), then keeps its
//! connection until the client hangs up so the last reply is not lost.

use super::client::placement;
use super::{open, usage, Control, RoleReport, RoleSpec};
use crate::compat::{check_size, PeerWatch, Waiting};
use crate::error::Result;
use crate::msg::RawMsg;

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &RoleSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let (mut s, ep) = open(ctx, spec, ctl)?;
    let watch = PeerWatch::new(ctx, &s, &ep)?;
    ctl.wait_start(spec.timeout())?;
    let wait = Waiting {
        endpoint: ep.as_str(),
        peer: "the client role",
        timeout: spec.timeout(),
        expected: spec.count + spec.warmup,
        unit: "round trips",
    };
    let routed = spec.pattern.socket(spec.role) == zmq::ROUTER;
    let mut id = RawMsg::new();
    let mut msg = RawMsg::new();
    for i in 0..spec.warmup + spec.count {
        if routed {
            // ROUTER: [identity, payload] in, the same out.
            id.recv(&mut s, 0)
                .map_err(|e| wait.error(e, i, String::new()))?;
        }
        msg.recv(&mut s, 0)
            .map_err(|e| wait.error(e, i, String::new()))?;
        check_size(&msg, spec.size, i)?;
        if routed {
            id.send(&mut s, zmq::SNDMORE)
                .map_err(|e| wait.error(e, i, String::new()))?;
        }
        msg.send(&mut s, 0)
            .map_err(|e| wait.error(e, i, String::new()))?;
    }
    if let Some(w) = watch {
        w.wait_gone(spec.timeout());
    }
    Ok(RoleReport {
        usage: Some(usage(spec.role, placement())),
        ..Default::default()
    })
}
