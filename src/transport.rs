//! The transports zmqperf measures: a plain value that the results, the store and the
//! endpoints share (it depends on nothing else in the crate).

use serde::{Deserialize, Serialize};
use std::fmt;

/// The transports zmqperf measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Tcp,
    Ipc,
    Inproc,
    /// UDP datagrams: RADIO/DISH only (draft API), unicast or multicast.
    Udp,
    /// PGM over raw IP (OpenPGM): PUB/SUB multicast; needs root.
    Pgm,
    /// PGM encapsulated in UDP (OpenPGM): PUB/SUB multicast.
    Epgm,
    /// NACK-Oriented Reliable Multicast: PUB/SUB multicast.
    Norm,
    /// Linux TIPC (the kernel's tipc module).
    Tipc,
    /// WebSocket.
    Ws,
    /// WebSocket over TLS.
    Wss,
}

impl Transport {
    /// Every transport, in the order help texts list them.
    pub const ALL: [Transport; 10] = [
        Transport::Tcp,
        Transport::Ipc,
        Transport::Inproc,
        Transport::Udp,
        Transport::Pgm,
        Transport::Epgm,
        Transport::Norm,
        Transport::Tipc,
        Transport::Ws,
        Transport::Wss,
    ];

    /// The scheme endpoints write (`tcp` in `tcp://...`).
    pub fn name(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Ipc => "ipc",
            Transport::Inproc => "inproc",
            Transport::Udp => "udp",
            Transport::Pgm => "pgm",
            Transport::Epgm => "epgm",
            Transport::Norm => "norm",
            Transport::Tipc => "tipc",
            Transport::Ws => "ws",
            Transport::Wss => "wss",
        }
    }

    /// The transport of a scheme.
    pub fn parse(s: &str) -> Option<Transport> {
        Transport::ALL.into_iter().find(|t| t.name() == s)
    }

    /// The capability `zmq_has` must report for libzmq to carry it (as zmqperf spells the
    /// capabilities: `udp` rides on the draft API), or None for those every build has.
    pub fn capability(self) -> Option<&'static str> {
        match self {
            Transport::Tcp | Transport::Inproc => None,
            Transport::Ipc => Some("ipc"),
            Transport::Udp => Some("draft"),
            Transport::Pgm | Transport::Epgm => Some("pgm"),
            Transport::Norm => Some("norm"),
            Transport::Tipc => Some("tipc"),
            Transport::Ws => Some("ws"),
            Transport::Wss => Some("wss"),
        }
    }

    /// Whether it is a multicast transport of PUB/SUB (one send reaches every receiver,
    /// no subscription travels back to the sender).
    pub fn is_multicast(self) -> bool {
        matches!(self, Transport::Pgm | Transport::Epgm | Transport::Norm)
    }

    /// Whether no subscription or join travels back to the sender (multicast, and udp's
    /// datagrams): a publisher cannot count its receivers there.
    pub fn one_way(self) -> bool {
        self.is_multicast() || self == Transport::Udp
    }
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
