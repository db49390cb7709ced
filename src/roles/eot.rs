//! The end of transmission of a stream (ACSflix): a message on the stream's own PUB/SUB
//! channel, apart from the flows, saying how many messages each flow sent. The runner
//! publishes it (runner/eot.rs); a sink in a stream ends on it.
//!
//! The message: `EOT`, then per flow its stream id (u32, little-endian) and the messages
//! it sent (u64, little-endian).

use crate::error::{zmq_err, Result};
use crate::zmq;
use std::collections::BTreeMap;

/// The first bytes of an end-of-transmission message.
pub const EOT_TAG: &[u8; 3] = b"EOT";

/// Reads an end-of-transmission message: (stream id, messages sent) per flow, or None if
/// it is not one.
pub fn parse(m: &[u8]) -> Option<Vec<(u32, u64)>> {
    let body = m.strip_prefix(EOT_TAG.as_slice())?;
    if body.len() % 12 != 0 {
        return None;
    }
    Some(
        body.chunks(12)
            .map(|c| {
                let id = u32::from_le_bytes(c[0..4].try_into().expect("4 bytes"));
                let n = u64::from_le_bytes(c[4..12].try_into().expect("8 bytes"));
                (id, n)
            })
            .collect(),
    )
}

/// A sink's end of the channel: a SUB connected to the stream's channel, and what it said.
pub(crate) struct EotWatch {
    sock: zmq::Socket,
    /// Messages sent per flow, by stream id, as announced.
    pub announced: BTreeMap<u32, u64>,
}

impl EotWatch {
    /// Connects to the channel at `endpoint`, subscribed to everything.
    pub fn open(ctx: &zmq::Context, endpoint: &str) -> Result<EotWatch> {
        let sock = ctx.socket(zmq::SUB).map_err(zmq_err("opening a SUB"))?;
        sock.set_linger(0).map_err(zmq_err("setting ZMQ_LINGER"))?;
        crate::net::enable_ipv6(&sock, endpoint)?;
        sock.set_subscribe(b"")
            .map_err(zmq_err("subscribing to the end-of-transmission channel"))?;
        sock.connect(endpoint)
            .map_err(zmq_err("connecting to the end-of-transmission channel"))?;
        Ok(EotWatch {
            sock,
            announced: BTreeMap::new(),
        })
    }

    /// Takes what has arrived on the channel (never blocks).
    pub fn poll(&mut self) {
        while let Ok(m) = self.sock.recv_bytes(zmq::DONTWAIT) {
            for (id, n) in parse(&m).unwrap_or_default() {
                self.announced.insert(id, n);
            }
        }
    }

    /// Whether every one of `streams` has been announced.
    pub fn covers(&self, streams: &[(u32, u64)]) -> bool {
        streams
            .iter()
            .all(|(id, _)| self.announced.contains_key(id))
    }

    /// Messages announced over `streams`.
    pub fn total(&self, streams: &[(u32, u64)]) -> u64 {
        streams
            .iter()
            .filter_map(|(id, _)| self.announced.get(id))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_eot_message_reads_back_and_anything_else_is_refused() {
        let mut m = EOT_TAG.to_vec();
        for (id, n) in [(3u32, 1_000_000u64), (4, 7)] {
            m.extend_from_slice(&id.to_le_bytes());
            m.extend_from_slice(&n.to_le_bytes());
        }
        assert_eq!(parse(&m), Some(vec![(3, 1_000_000), (4, 7)]));
        assert_eq!(parse(b"EOT"), Some(vec![]));
        assert_eq!(parse(b"EOX"), None);
        assert_eq!(parse(&m[..m.len() - 1]), None);
    }
}
