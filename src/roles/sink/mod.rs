//! The sink role: takes streams (PULL, SUB, XSUB, PAIR, DEALER or ROUTER), keeps the loss
//! ledger and the one-way latency of the time-stamped messages of each stream, and ends
//! when every stream it expects has ended, when the runner stops it (a share of a
//! load-balanced stream), or after being idle for the timeout (cut short: it reports what
//! arrived). Its state between start and report is a [`SinkState`] (state.rs); this file
//! holds the loop around it and the fill of its spec from the graph.

use super::control::Control;
use super::eot::EotWatch;
use super::shape::FIRST_FRAME_MIN;
use super::{open_all, slice_for, Io, Next, NodeSpec, Patience, RoleReport};
use crate::clock::now_ns;
use crate::error::{Error, Result};
use crate::msg::RawMsg;
use crate::net::Waiting;
use crate::zmq;
use lean::Lean;
use state::{SinkState, Then};
use std::time::Duration;

mod end;
mod lean;
pub mod ptmp;
mod received;
mod record;
mod state;
pub(super) mod trace;

pub(super) fn run(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    run_with(ctx, spec, ctl, |_| {})
}

/// The sink's run, with `work` done on each message after it is taken (a slow consumer's
/// work, a record of it; a plain sink's is empty, and the compiler leaves nothing of it in
/// the loop).
#[inline]
pub(super) fn run_with(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
    work: impl FnMut(&mut RawMsg),
) -> Result<RoleReport> {
    // The socket's receive timeout: the slices of the sink's waits (state::patience).
    let mut opened = open_all(ctx, spec, ctl, slice_for(state::wait_slice(spec)))?;
    let o = &mut opened[0];
    // A sink in a stream: its end comes on the stream's end-of-transmission channel.
    let eot = spec
        .eot
        .as_deref()
        .map(|ep| EotWatch::open(ctx, ep))
        .transpose()?;
    // Over UDP the kernel drops what the receive buffer cannot hold: its counter, before.
    let udp = crate::net::kernel::counts(o.endpoint.transport());
    let udp_before = udp.then(crate::net::kernel::udp_receive_errors).flatten();
    ctl.wait_start(spec.timeout())?;
    let spec = &*spec.started(ctl.send_offsets());
    let mut st = SinkState::new(spec, eot);
    let wait = Waiting {
        endpoint: o.endpoint.as_str(),
        peer: spec.peer_or("the sending node"),
        timeout: spec.timeout(),
        expected: st.total,
        unit: "messages",
        watch: o.watch.as_ref(),
    };
    let s = &mut o.sock;
    // Whether the first frame is a ROUTER's identity is known before the loop: each kind
    // gets a loop of its own, with no test of it per message.
    if st.routed {
        receive::<_, true>(&mut st, s, ctl, &wait, work)?;
    } else {
        receive::<_, false>(&mut st, s, ctl, &wait, work)?;
    }
    let mut report = st.finish();
    report.udp_drops = udp_before
        .zip(crate::net::kernel::udp_receive_errors())
        .map(|(b, a)| a.saturating_sub(b));
    Ok(report)
}

/// A state the sink's loop drives, message by message: the plain sink's [`SinkState`]
/// (state.rs), or PTMP's receiver's (ptmp.rs). The loop takes the first frame of each
/// message; the state reads the rest, records it and says whether to go on.
trait Taker {
    /// Whether a stop signal ends the loop before the next receive (else the receive's
    /// own wait notices it).
    fn at_once(&self) -> bool;
    /// The wait, the frame the next message's first part goes to (`ROUTED`: the routing
    /// id's) and the I/O mode, for the next receive.
    fn next_parts<const ROUTED: bool>(&mut self) -> (&mut Patience, &mut RawMsg, &mut Io);
    /// A message's first frame arrived.
    fn on_message<const ROUTED: bool>(
        &mut self,
        s: &mut zmq::Socket,
        wait: &Waiting,
    ) -> Result<Then>;
    /// The wait ended without a message (`next` is not [`Next::Got`]).
    fn on_wait(&mut self, next: Next, wait: &Waiting) -> Result<Then>;
    /// A stop signal ended the loop.
    fn interrupted(&mut self);
    /// The message just taken (its last frame read), for the loop's `work`.
    fn taken(&mut self) -> &mut RawMsg;
    /// The error of a receive that failed other than by a timeout.
    fn recv_failed(&self, e: zmq::Error, wait: &Waiting) -> Error;
    /// Messages taken by a loop of the state's own while nothing but their count changes
    /// (the plain sink's [`SinkState::lean_run`]); none by default.
    #[inline(always)]
    fn lean_run(&mut self, _s: &mut zmq::Socket, _work: &mut impl FnMut(&mut RawMsg)) -> Lean {
        Lean::Off
    }
}

/// The sink's loop: a message at a time until the state says the end.
#[inline(always)]
fn receive<T: Taker, const ROUTED: bool>(
    st: &mut T,
    s: &mut zmq::Socket,
    ctl: &mut dyn Control,
    wait: &Waiting,
    mut work: impl FnMut(&mut RawMsg),
) -> Result<()> {
    loop {
        // A signal that ends the run (a relaxed load per message: one instruction); the
        // messages so far are the report.
        if st.at_once() && crate::interrupt::interrupted() {
            st.interrupted();
            return Ok(());
        }
        // The state's own loop first; what it leaves is the wait's first receive.
        let got = match if ROUTED {
            Lean::Off
        } else {
            st.lean_run(s, &mut work)
        } {
            Lean::Off => None,
            Lean::Pending => Some(Ok(())),
            Lean::Failed(e) => Some(Err(e)),
            Lean::Then(Then::Read) => continue,
            Lean::Then(Then::End) => return Ok(()),
        };
        let (patience, first, io) = st.next_parts::<ROUTED>();
        let got = match got {
            Some(got) => got,
            None => io.recv_slice(first, s),
        };
        let next = match patience.recv_after(got, first, s, ctl, io) {
            Ok(n) => n,
            Err(e) => return Err(st.recv_failed(e, wait)),
        };
        if next != Next::Got {
            match st.on_wait(next, wait)? {
                Then::Read => continue,
                Then::End => return Ok(()),
            }
        }
        let then = st.on_message::<ROUTED>(s, wait)?;
        work(st.taken());
        if then == Then::End {
            return Ok(());
        }
    }
}

/// A sink's own fields from the graph: the streams that flow into it (of its stream only,
/// when it belongs to one), their size and shape; it ends by itself unless it gets a share.
pub(super) fn fill(p: &super::fill::Place, spec: &mut NodeSpec) -> Result<()> {
    let n = p.node();
    // A sink in a stream takes flows of that stream only.
    if let Some(st) = &n.stream {
        for f in p.flows.iter().filter(|f| f.sink == p.node) {
            let src = &p.g.topology.nodes[f.source];
            if src.stream.as_deref() != Some(st.as_str()) {
                return Err(Error::invalid(
                    &format!("topology {}: node '{}': stream", p.origin, n.name),
                    st,
                    format!(
                        "its source '{}' is not in stream '{st}'; give the flow's source `stream = \"{st}\"` too",
                        src.name
                    ),
                ));
            }
        }
    }
    let inflow = p.inflow()?;
    spec.size = inflow.size(spec.size);
    spec.ends_itself = !inflow.shared;
    super::fill::set_shape(spec, inflow.shape.unwrap_or_default());
    spec.streams = inflow.streams;
    Ok(())
}

/// How long the sink has had no message (0 while messages arrive).
pub(super) fn quiet_for(p: &Patience) -> Duration {
    p.quiet_since_ns()
        .map(|t| Duration::from_nanos(now_ns().saturating_sub(t)))
        .unwrap_or_default()
}

/// Whether a sink in a stream has everything its end of transmission announced. The
/// channel is looked at every 1,024 messages while they flow; `at_eot` keeps the count
/// when it first covered every flow.
#[inline]
pub(super) fn eot_done(
    w: &mut EotWatch,
    streams: &[(u32, u64)],
    received: u64,
    at_eot: &mut Option<u64>,
) -> bool {
    if received & 1023 == 0 {
        w.poll();
    }
    if !w.covers(streams) {
        return false;
    }
    at_eot.get_or_insert(received);
    received >= w.total(streams)
}

/// Checks a typed message: the type id after the header in its first frame (`msg`), and
/// its frame count (the other frames are read into `scratch`). Returns what is wrong.
pub(super) fn check_frames(
    msg: &mut RawMsg,
    scratch: &mut RawMsg,
    s: &mut zmq::Socket,
    spec: &NodeSpec,
    io: &mut Io,
) -> Option<String> {
    let mut frames = 1;
    let mut more = msg.more();
    while more {
        if io.recv(scratch, s).is_err() {
            return Some("the rest of its frames never came".into());
        }
        frames += 1;
        more = scratch.more();
    }
    let mut why = Vec::new();
    if frames != spec.frames.len() {
        why.push(format!("{frames} frames, {} sent", spec.frames.len()));
    }
    let t = msg.prefix(FIRST_FRAME_MIN);
    if t.len() == FIRST_FRAME_MIN {
        let got = u32::from_le_bytes([t[24], t[25], t[26], t[27]]);
        if got != spec.type_id {
            why.push(format!("type id {got}, {} sent", spec.type_id));
        }
    }
    (!why.is_empty()).then(|| why.join(", "))
}

/// The cut-short note of a role ended by a signal: "interrupted by SIGTERM after 1234
/// messages".
pub(crate) fn interrupted_after(n: u64, what: &str) -> String {
    format!(
        "interrupted by {} after {n} {what}",
        crate::interrupt::interrupted_by()
    )
}

#[cfg(test)]
mod tests;
