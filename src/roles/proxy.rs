//! The proxy role: forwards every frame between its two sockets untouched, in both
//! directions the socket types allow (data one way; subscriptions or replies the other),
//! so the measurement header passes through and latency stays end to end across hops.

use super::{node_usage, open_all, Control, NodeSpec, RoleReport, STOP_POLL};
use crate::error::{zmq_err, Result};
use crate::msg::RawMsg;
use crate::zmq;

/// Messages moved per wake-up before polling again.
const BATCH: u32 = 1024;

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let opened = open_all(ctx, spec, ctl, STOP_POLL)?;
    ctl.wait_start(spec.timeout())?;
    let mut socks: Vec<zmq::Socket> = opened.into_iter().map(|o| o.into_socket()).collect();
    let (mut front, mut back) = {
        let b = socks.pop().expect("two sockets");
        (socks.pop().expect("two sockets"), b)
    };
    let mut msg = RawMsg::new();
    let front_sends = spec.sockets[0].kind.sends();
    await_subscriptions(spec, &mut msg, &mut front, &mut back, front_sends)?;
    let mut forwarded = 0u64;
    let mut stopping = false;
    let mut idle_slices = 0u64;
    let slice = STOP_POLL.as_millis() as i64;
    loop {
        let (fr, br) = {
            let mut items = [
                front.as_poll_item(zmq::POLLIN),
                back.as_poll_item(zmq::POLLIN),
            ];
            let n = zmq::poll(&mut items, slice).map_err(zmq_err("zmq_poll"))?;
            if n == 0 {
                if stopping {
                    break;
                }
                stopping = ctl.stop_requested();
                idle_slices += 1;
                if !stopping
                    && idle_slices as u128 * STOP_POLL.as_millis() >= spec.timeout().as_millis() * 4
                {
                    // Nothing in either direction for four timeouts and no stop: give up.
                    break;
                }
                continue;
            }
            (items[0].is_readable(), items[1].is_readable())
        };
        idle_slices = 0;
        if fr {
            forwarded += pass(&mut msg, &mut front, &mut back)?;
        }
        if br && front_sends {
            forwarded += pass(&mut msg, &mut back, &mut front)?;
        } else if br {
            // Subscriptions with nowhere to go (a PULL front): read and drop them.
            while msg.recv(&mut back, zmq::DONTWAIT).is_ok() {}
        }
    }
    Ok(RoleReport {
        forwarded: Some(forwarded),
        usage: Some(node_usage(spec)),
        ..Default::default()
    })
}

/// A publishing side waits for its subscribers first (passing the subscriptions on to an
/// XSUB front, `front_sends`), so the proxy drops nothing for want of a subscription.
fn await_subscriptions(
    spec: &NodeSpec,
    msg: &mut RawMsg,
    front: &mut zmq::Socket,
    back: &mut zmq::Socket,
    front_sends: bool,
) -> Result<()> {
    let give_up = std::time::Instant::now() + spec.timeout();
    for got in 0..spec.subscriptions {
        loop {
            match msg.recv(back, 0) {
                Ok(()) => break,
                Err(zmq::Error::EAGAIN) if std::time::Instant::now() < give_up => continue,
                Err(zmq::Error::EAGAIN) => {
                    return Err(crate::error::Error::Protocol(format!(
                        "proxy {}: {got} of {} subscriptions arrived within {}",
                        spec.name,
                        spec.subscriptions,
                        crate::error::fmt_duration(spec.timeout())
                    )))
                }
                Err(e) => return Err(zmq_err("waiting for the subscribers behind the proxy")(e)),
            }
        }
        if front_sends {
            msg.send(front, 0)
                .map_err(zmq_err("passing a subscription on"))?;
        }
    }
    Ok(())
}

/// Moves up to [`BATCH`] whole messages from `from` to `to`; returns how many.
fn pass(msg: &mut RawMsg, from: &mut zmq::Socket, to: &mut zmq::Socket) -> Result<u64> {
    let mut n = 0;
    // A connecting PEER sends each message to the routing id its connect gave.
    let peer = to.peer_routing_id();
    while n < BATCH as u64 {
        match msg.recv(from, zmq::DONTWAIT) {
            Ok(()) => {}
            Err(zmq::Error::EAGAIN) => break,
            Err(e) => return Err(zmq_err("receiving in the proxy")(e)),
        }
        loop {
            if let Some(id) = peer {
                msg.set_routing_id(id)
                    .map_err(zmq_err("addressing a message to the PEER"))?;
            }
            let more = msg.more();
            msg.send(to, if more { zmq::SNDMORE } else { 0 })
                .map_err(zmq_err("forwarding in the proxy"))?;
            if !more {
                break;
            }
            msg.recv(from, 0)
                .map_err(zmq_err("receiving in the proxy"))?;
        }
        n += 1;
    }
    Ok(n)
}
