//! How a source ends once its last message has left: its end mark sent again until the
//! runner's stop, when its spec asks for that (a PUB's reader must get it: see
//! [`NodeSpec::resend_end_every`]), then its spec's `quit`.

use super::super::control::Control;
use super::first::{FirstFrame, HeaderOnly};
use super::{send_one, Stream, HOLD_MS};
use crate::clock::now_ns;
use crate::error::{zmq_err, Result};
use crate::header::{Header, FLAG_END, FLAG_TIMESTAMP};
use crate::msg::RawMsg;
use crate::roles::{Io, NodeSpec, Quit};
use crate::zmq;
use std::time::{Duration, Instant};

/// The source's end after its stream: the end mark again when its spec asks for that,
/// then its quit; whether every peer hung up, when it waited for that.
pub(super) fn finish(
    st: &Stream,
    io: &mut Io,
    s: &mut zmq::Socket,
    m: &mut RawMsg,
    watch: Option<&crate::net::PeerWatch>,
    ctl: &mut dyn Control,
) -> Result<Option<bool>> {
    if let Some(every) = super::around::resend_end(st.spec) {
        resend_end(st, io, s, m, ctl, every)?;
    }
    quit(st.spec, watch, s, ctl)
}

/// The end mark again, every `every` after the stream until the runner's stop (or the
/// timeout): a PUB drops it while the reader's queue is full, and the reader ends on the
/// first that gets through ([`super::around::RESEND_END_MS`]).
#[cold]
fn resend_end(
    st: &Stream,
    io: &mut Io,
    s: &mut zmq::Socket,
    m: &mut RawMsg,
    ctl: &mut dyn Control,
    every: Duration,
) -> Result<()> {
    let last = st.spec.count.saturating_sub(1);
    let until = Instant::now() + st.spec.timeout();
    while st.header && !crate::interrupt::interrupted() && Instant::now() < until {
        std::thread::sleep(every);
        if ctl.stop_requested() {
            break;
        }
        // The socket reads its commands first: among them the reader's word that it made
        // room.
        s.get_events().map_err(zmq_err("reading ZMQ_EVENTS"))?;
        m.reset_uninit(st.first_len)?;
        let h = Header {
            flags: FLAG_TIMESTAMP | FLAG_END,
            stream_id: st.spec.stream_id,
            sequence: last,
            send_ns: now_ns(),
        };
        HeaderOnly.write(m, &h);
        match send_one(st.shape, io, s, m, last) {
            Ok(()) | Err(zmq::Error::EAGAIN) => {}
            Err(e) => return Err(st.wait.error(e, st.spec.count, String::new())),
        }
    }
    Ok(())
}

/// How the source ends once its last message has left (its spec's `quit`); whether every
/// peer hung up, when it waited for that.
fn quit(
    spec: &NodeSpec,
    watch: Option<&crate::net::PeerWatch>,
    s: &zmq::Socket,
    ctl: &mut dyn Control,
) -> Result<Option<bool>> {
    Ok(match spec.quit {
        // Keep the connection up until the receivers have everything and hang up.
        Quit::WaitForPeer => watch
            .filter(|_| !crate::interrupt::interrupted())
            .map(|w| w.wait_gone_n(spec.peers.max(1), spec.timeout())),
        // Closing throws the queue away.
        Quit::LingerZero => set_linger(s, 0)?,
        // Terminating the context (when the node ends) waits for the queue, without bound.
        Quit::DefaultLinger => set_linger(s, -1)?,
        Quit::WaitForStop => {
            let until = std::time::Instant::now() + spec.timeout();
            while !ctl.stop_requested() && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            set_linger(s, 0)?
        }
        // The hold runs in full even after a stop signal: it is how PTMP's sender closes
        // (what its queue still holds reaches the receiver, the end mark with it).
        Quit::Hold => {
            let hold = Duration::from_millis(spec.own.get(HOLD_MS).copied().unwrap_or(0));
            let until = Instant::now() + hold;
            loop {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() || ctl.stop_requested() {
                    break None;
                }
                std::thread::sleep(left.min(Duration::from_millis(10)));
            }
        }
    })
}

/// Sets the linger the socket closes with; no peer was watched.
fn set_linger(s: &zmq::Socket, ms: i32) -> Result<Option<bool>> {
    s.set_linger(ms).map_err(zmq_err("setting ZMQ_LINGER"))?;
    Ok(None)
}
