//! The multicast rate limit as the cause of a slow case: OpenPGM holds every PUB over pgm
//! or epgm to its ZMQ_RATE (libzmq's default: 100 kbit/s), whatever the network carries,
//! so a case that delivers close to it was held by it, not by the path.

use super::CaseSpec;
use crate::model::CaseSummary;
use crate::topology::{SocketType, StreamPart};
use crate::transport::Transport;

/// libzmq's ZMQ_RATE when a socket sets none, kbit/s.
pub const DEFAULT_RATE_KBIT: i32 = 100;

/// The share of the limit above which the delivered payload counts as held by it (OpenPGM
/// packs small messages into one packet, so payload can pass the limit a little; its own
/// headers make it fall short on large ones).
const HELD_AT: f64 = 0.5;

/// The cause, with its fix, when a multicast publisher of the case delivered at least half
/// of its ZMQ_RATE in payload.
pub(super) fn rate_limit(spec: &CaseSpec, s: &CaseSummary) -> Option<String> {
    let delivered = s.msgs_per_sec?.median;
    let kbit = delivered * spec.size as f64 * 8.0 / 1000.0;
    let t = &spec.topology;
    t.nodes.iter().find_map(|n| {
        let i = n.role.info().publishes?;
        let sock = n.all_sockets().get(i).copied()?;
        let kind = SocketType::parse(&sock.kind)?;
        if !matches!(kind, SocketType::Pub | SocketType::Xpub) {
            return None;
        }
        let over_pgm = sock
            .transports(spec.transport)
            .any(|t| matches!(t, Transport::Pgm | Transport::Epgm));
        if !over_pgm {
            return None;
        }
        let (limit, whose) = match sock.options.multicast_rate {
            Some(r) => (r, "its `multicast_rate`"),
            None => (DEFAULT_RATE_KBIT, "libzmq's default, as it sets none"),
        };
        (kbit >= HELD_AT * f64::from(limit)).then(|| {
            format!(
                "cause: the multicast rate limit: '{}' delivered {kbit:.0} kbit/s of payload ({delivered:.0} msg/s of {} B) against its ZMQ_RATE of {limit} kbit/s ({whose}); OpenPGM holds a sender to it whatever the network carries; fix: multicast_rate = 1000000 (1 Gbit/s) on its socket, or the rate the network carries",
                n.name, spec.size
            )
        })
    })
}

/// Whether a publisher sends over a one-way transport (a udp group, multicast) with a time
/// to live of one hop (its `multicast_hops` unset or 1) while a receiver of the topology
/// runs on another host than it.
pub(super) fn one_hop_across_hosts(t: &crate::topology::Topology, transport: Transport) -> bool {
    let hosts_of = |n: &crate::topology::Node| -> Vec<String> {
        if !n.hosts.is_empty() {
            n.hosts.clone()
        } else {
            vec![n.host.clone().unwrap_or_default()]
        }
    };
    let receivers: Vec<Vec<String>> = t
        .nodes
        .iter()
        .filter(|n| n.role.info().stream == StreamPart::Receives)
        .map(hosts_of)
        .collect();
    t.nodes
        .iter()
        .filter(|n| n.role.info().publishes.is_some())
        .any(|n| {
            let one_hop = n.all_sockets().first().is_some_and(|s| {
                s.options.multicast_hops.unwrap_or(1) <= 1
                    && s.transports(transport).any(Transport::one_way)
            });
            let mine = hosts_of(n);
            one_hop && receivers.iter().flatten().any(|h| !mine.contains(h))
        })
}

/// The highest pace at which a RADIO's queue is taken to keep up with its sends over udp
/// (libzmq's I/O thread writes a datagram per message, well above this here).
const UDP_PACED_BELOW: f64 = 100_000.0;

/// Whether every publisher over a one-way transport sends at a set rate well below what
/// its transport carries (under half its ZMQ_RATE over pgm, epgm or norm; under
/// [`UDP_PACED_BELOW`] msg/s over udp): its queue never filled, so what it lost was not
/// dropped at its high-water mark.
pub(super) fn paced_below_limit(spec: &CaseSpec) -> bool {
    let one_way: Vec<_> = spec
        .topology
        .nodes
        .iter()
        .filter_map(|n| {
            n.role.info().publishes?;
            let s = n.all_sockets().first().copied()?;
            let t = s.transports(spec.transport).find(|t| t.one_way())?;
            Some((n.rate.or(spec.rate), s.options.multicast_rate, t))
        })
        .collect();
    let paced = |&(rate, limit, t): &(Option<f64>, Option<i32>, Transport)| {
        let Some(rate) = rate else { return false };
        if t == Transport::Udp {
            return rate < UDP_PACED_BELOW;
        }
        let kbit = rate * spec.size as f64 * 8.0 / 1000.0;
        kbit < HELD_AT * f64::from(limit.unwrap_or(DEFAULT_RATE_KBIT))
    };
    !one_way.is_empty() && one_way.iter().all(paced)
}
