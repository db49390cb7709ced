//! The end-of-transmission channels of streams (ACSflix): a stream is a group of flows,
//! each a source and its sink, and its sinks end when the stream's end-of-transmission
//! message says how many messages each flow sent, not on the flows' own end marks. The
//! runner binds one XPUB per stream, waits for the subscription of every sink replica of
//! the stream before the start, and publishes once every source of the stream has sent.
//! The message is `roles::eot`'s.

use crate::error::{zmq_err, Error, Result};
use crate::roles::eot::EOT_TAG;
use crate::zmq;
use std::collections::BTreeMap;
use std::time::Duration;

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
