//! The multicast rate limit as the cause of a slow case: OpenPGM holds every PUB over pgm
//! or epgm to its ZMQ_RATE (libzmq's default: 100 kbit/s), whatever the network carries,
//! so a case that delivers close to it was held by it, not by the path.

use super::CaseSpec;
use crate::model::CaseSummary;
use crate::topology::SocketType;
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
