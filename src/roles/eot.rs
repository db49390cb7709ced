//! The end of transmission of a stream (ACSflix): a message on the stream's own PUB/SUB
//! channel, apart from the flows, saying how many messages each flow sent. The runner
//! opens one [`Channel`] per stream (an XPUB it binds), waits for the subscription of every
//! sink replica of the stream before the start, and publishes once every source of the
//! stream has sent; a sink in a stream subscribes and ends on it.
//!
//! The message: `EOT`, then per flow its stream id (u32, little-endian) and the messages
//! it sent (u64, little-endian).

use crate::error::{zmq_err, Error, Result};
use crate::zmq;
use std::collections::BTreeMap;
use std::time::Duration;

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

/// One stream's channel.
pub struct Channel {
    /// The stream's name.
    pub name: String,
    sock: zmq::Socket,
    endpoint: String,
    sinks: u32,
}

/// Opens a channel for every stream of the topology that has a sink; `sinks` gives, per
/// stream, how many sink replicas will subscribe.
/// `addr`: the runner's address that sinks on other hosts reach (None: loopback).
pub fn open(
    ctx: &zmq::Context,
    sinks: &BTreeMap<String, u32>,
    addr: Option<&str>,
) -> Result<Vec<Channel>> {
    let at = match addr {
        Some(a) if a.contains(':') => format!("tcp://[{a}]:*"),
        Some(a) => format!("tcp://{a}:*"),
        None => "tcp://127.0.0.1:*".to_string(),
    };
    let mut out = Vec::new();
    for (name, &sinks) in sinks {
        let mut sock = ctx.socket(zmq::XPUB).map_err(zmq_err("opening an XPUB"))?;
        // Every sink's subscription, not only the first of each topic.
        crate::net::set_xpub_verbose(&mut sock)?;
        sock.set_linger(0).map_err(zmq_err("setting ZMQ_LINGER"))?;
        crate::net::enable_ipv6(&sock, &at)?;
        sock.set_rcvtimeo(100)
            .map_err(zmq_err("setting ZMQ_RCVTIMEO"))?;
        sock.bind(&at)
            .map_err(zmq_err("binding the end-of-transmission channel"))?;
        let endpoint = sock
            .get_last_endpoint()
            .map_err(zmq_err("reading ZMQ_LAST_ENDPOINT"))?
            .map_err(|_| Error::Internal("the bound endpoint is not text".into()))?;
        out.push(Channel {
            name: name.clone(),
            sock,
            endpoint,
            sinks,
        });
    }
    Ok(out)
}

impl Channel {
    /// Waits (up to `timeout`) until every sink replica of the stream has subscribed.
    pub fn wait_subscribers(&mut self, timeout: Duration) -> Result<()> {
        let until = std::time::Instant::now() + timeout;
        let mut got = 0;
        while got < self.sinks {
            match self.sock.recv_bytes(0) {
                Ok(m) if m.first() == Some(&1) => got += 1,
                Ok(_) => {}
                Err(zmq::Error::EAGAIN) if std::time::Instant::now() < until => {}
                Err(zmq::Error::EAGAIN) => {
                    return Err(Error::Protocol(format!(
                        "stream '{}': {got} of {} sinks subscribed to its end-of-transmission channel {} within {:?}",
                        self.name, self.sinks, self.endpoint, timeout
                    )))
                }
                Err(e) => return Err(zmq_err("waiting for the end-of-transmission subscribers")(e)),
            }
        }
        Ok(())
    }

    /// Where the stream's sinks connect.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Publishes the end of transmission: each flow of the stream (its stream id) with the
    /// messages it sent.
    pub fn publish(&mut self, flows: &[(u32, u64)]) -> Result<()> {
        let mut m = EOT_TAG.to_vec();
        for (id, n) in flows {
            m.extend_from_slice(&id.to_le_bytes());
            m.extend_from_slice(&n.to_le_bytes());
        }
        self.sock
            .send(&m, 0)
            .map_err(zmq_err("publishing the end of transmission"))
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
