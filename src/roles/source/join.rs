//! How a source lets its receivers join before its first message: it counts their
//! subscriptions (a PUB opened as an XPUB), or, where their joins cannot be counted (a
//! RADIO, whose DISHes' joins are not passed up; a PUB over multicast, where no
//! subscription travels back), it pauses: set when the spec is filled, slept before the
//! warm-up.

use super::super::{Io, NodeSpec};
use crate::clock::now_ns;
use crate::error::Result;
use crate::msg::RawMsg;
use crate::net::Waiting;
use crate::topology::SocketType;
use crate::transport::Transport;
use crate::zmq;

/// The source's own field: ms to let the receivers join before the first message, where
/// their joins cannot be counted (a RADIO; a PUB over multicast or udp, where no
/// subscription travels back).
pub const JOIN_MS: &str = "join_ms";

/// How long a source whose receivers' joins cannot be counted lets them join: a DISH's
/// join over tcp or ipc, or a udp socket bound, takes well under a millisecond on one host;
/// a multicast receiver joins its group at the interface, which OpenPGM and NORM do from
/// their own threads. None: the source counts its subscriptions, or was told not to wait.
pub(super) fn pause_ms(p: &super::super::fill::Place) -> Option<u64> {
    let n = p.node();
    if n.wait_subscriptions == Some(false) {
        return None;
    }
    let kind = *p.g.types[p.node].first()?;
    let sock = *n.all_sockets().first()?;
    let multicast = sock.transports(p.transport).any(Transport::is_multicast);
    if !kind.pauses_for_joins(multicast) {
        return None;
    }
    if let Some(ms) = n.join_ms {
        return Some(ms);
    }
    // Every receiving socket joins on its own: a swarm's hundreds take their turns.
    let t = &p.g.topology;
    let receivers: u64 =
        p.g.peers((p.node, 0))
            .iter()
            .map(|q| u64::from(t.nodes[q.0].replicas) * u64::from(t.nodes[q.0].subs.unwrap_or(1)))
            .sum();
    Some(if kind == SocketType::Radio {
        RADIO_JOIN_MS + receivers.saturating_mul(RADIO_EACH_MS)
    } else {
        MULTICAST_JOIN_MS + receivers.saturating_mul(MULTICAST_EACH_MS)
    })
}

/// Over udp and multicast no receiver hangs up to tell the source it has everything, and
/// closing throws away what the transport still holds (a NORM sender held to its rate had
/// 650 messages in its buffer when its PUB closed): such a source keeps its socket until
/// the runner's stop, which comes once every receiver has reported.
pub(super) fn hold_when_one_way(p: &super::super::fill::Place, spec: &mut NodeSpec) {
    let one_way = p
        .node()
        .all_sockets()
        .first()
        .is_some_and(|s| s.transports(p.transport).any(Transport::one_way));
    if one_way && spec.quit == super::super::Quit::WaitForPeer {
        spec.quit = super::super::Quit::WaitForStop;
    }
}

/// The longest join pause of the sources that send to this node: its receiver waits that
/// much longer for the first message (1,000 epgm subscribers pause 21 s, more than the
/// run's timeout of a first message).
pub(crate) fn senders_pause_ms(p: &super::super::fill::Place) -> u64 {
    let t = &p.g.topology;
    p.g.peers((p.node, 0))
        .iter()
        .filter(|q| t.nodes[q.0].role == crate::topology::Role::Source)
        .filter_map(|q| {
            pause_ms(&super::super::fill::Place {
                node: q.0,
                replica: 0,
                ..*p
            })
        })
        .max()
        .unwrap_or(0)
}

/// The join pause of a RADIO (its DISHes' joins are not counted).
const RADIO_JOIN_MS: u64 = 250;
/// And more for each receiving DISH: a DISH over udp joins as it binds, before it says
/// ready; over tcp its join follows its connection's handshake (well under 1 ms here).
const RADIO_EACH_MS: u64 = 1;
/// The join pause of a multicast publisher.
const MULTICAST_JOIN_MS: u64 = 1000;
/// And more for each receiving socket (100 epgm subscribers in one swarm lost the start of
/// the stream after a pause of 1 s): OpenPGM's receivers join from their own threads.
const MULTICAST_EACH_MS: u64 = 20;

/// No slow joiner: the first message leaves once every subscription is in. The time that
/// took, ns, when there were any to wait for.
pub(super) fn wait_subscriptions(
    spec: &NodeSpec,
    io: &mut Io,
    s: &mut zmq::Socket,
    wait: &Waiting,
) -> Result<Option<u64>> {
    let mut sub = RawMsg::new();
    let t_sub = now_ns();
    for _ in 0..spec.subscriptions {
        io.recv(&mut sub, s)
            .map_err(|e| wait.error(e, 0, String::new()))?;
    }
    Ok((spec.subscriptions > 0).then(|| now_ns() - t_sub))
}
