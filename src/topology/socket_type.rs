//! The socket types of libzmq a topology may name, and what follows from each: which
//! types talk to it, whether it sends, receives or copies, which transports it may use.

use crate::zmq;
use serde::{Deserialize, Serialize};

/// The longest RADIO/DISH group libzmq 4.3 takes (ZMQ_GROUP_MAX_LENGTH), bytes.
pub const GROUP_MAX: usize = 255;

/// The group a RADIO sends to and a DISH joins when the topology names none.
pub const DEFAULT_GROUP: &str = "zmqperf";

/// The socket types of libzmq that topologies may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum SocketType {
    Pair,
    Pub,
    Sub,
    Xpub,
    Xsub,
    Req,
    Rep,
    Dealer,
    Router,
    Push,
    Pull,
    /// The draft API's thread-safe types: one frame per message.
    Radio,
    Dish,
    Client,
    Server,
    Scatter,
    Gather,
    /// The draft API's thread-safe PAIR: one peer, one frame per message.
    Channel,
    /// The draft API's peer-to-peer type: a SERVER that also connects, and sends to the
    /// routing id its connect gave.
    Peer,
}

impl SocketType {
    /// Every type, as files name them.
    pub const ALL: [SocketType; 19] = [
        SocketType::Pair,
        SocketType::Pub,
        SocketType::Sub,
        SocketType::Xpub,
        SocketType::Xsub,
        SocketType::Req,
        SocketType::Rep,
        SocketType::Dealer,
        SocketType::Router,
        SocketType::Push,
        SocketType::Pull,
        SocketType::Radio,
        SocketType::Dish,
        SocketType::Client,
        SocketType::Server,
        SocketType::Scatter,
        SocketType::Gather,
        SocketType::Channel,
        SocketType::Peer,
    ];

    /// The name files use.
    pub fn name(self) -> &'static str {
        match self {
            SocketType::Pair => "PAIR",
            SocketType::Pub => "PUB",
            SocketType::Sub => "SUB",
            SocketType::Xpub => "XPUB",
            SocketType::Xsub => "XSUB",
            SocketType::Req => "REQ",
            SocketType::Rep => "REP",
            SocketType::Dealer => "DEALER",
            SocketType::Router => "ROUTER",
            SocketType::Push => "PUSH",
            SocketType::Pull => "PULL",
            SocketType::Radio => "RADIO",
            SocketType::Dish => "DISH",
            SocketType::Client => "CLIENT",
            SocketType::Server => "SERVER",
            SocketType::Scatter => "SCATTER",
            SocketType::Gather => "GATHER",
            SocketType::Channel => "CHANNEL",
            SocketType::Peer => "PEER",
        }
    }

    /// Parses a name, in any case.
    pub fn parse(s: &str) -> Option<SocketType> {
        let up = s.to_ascii_uppercase();
        SocketType::ALL.iter().copied().find(|t| t.name() == up)
    }

    /// The libzmq type.
    pub fn zmq(self) -> zmq::SocketType {
        match self {
            SocketType::Pair => zmq::PAIR,
            SocketType::Pub => zmq::PUB,
            SocketType::Sub => zmq::SUB,
            SocketType::Xpub => zmq::XPUB,
            SocketType::Xsub => zmq::XSUB,
            SocketType::Req => zmq::REQ,
            SocketType::Rep => zmq::REP,
            SocketType::Dealer => zmq::DEALER,
            SocketType::Router => zmq::ROUTER,
            SocketType::Push => zmq::PUSH,
            SocketType::Pull => zmq::PULL,
            SocketType::Radio => zmq::RADIO,
            SocketType::Dish => zmq::DISH,
            SocketType::Client => zmq::CLIENT,
            SocketType::Server => zmq::SERVER,
            SocketType::Scatter => zmq::SCATTER,
            SocketType::Gather => zmq::GATHER,
            SocketType::Channel => zmq::CHANNEL,
            SocketType::Peer => zmq::PEER,
        }
    }

    /// Whether ZMTP lets a socket of this type talk to one of `other` (libzmq refuses the
    /// handshake otherwise).
    pub fn pairs_with(self, other: SocketType) -> bool {
        use SocketType::*;
        let ok = |a: SocketType, b: SocketType| {
            matches!(
                (a, b),
                (Pair, Pair)
                    | (Channel, Channel)
                    | (Peer, Peer)
                    | (Pub | Xpub, Sub | Xsub)
                    | (Req | Dealer, Rep | Router)
                    | (Dealer, Dealer)
                    | (Router, Router)
                    | (Push, Pull)
                    | (Radio, Dish)
                    | (Client, Server)
                    | (Scatter, Gather)
            )
        };
        ok(self, other) || ok(other, self)
    }

    /// Whether data messages leave through a socket of this type.
    pub fn sends(self) -> bool {
        use SocketType::*;
        !matches!(self, Sub | Xsub | Pull | Dish | Gather)
    }

    /// Whether data messages arrive on a socket of this type.
    pub fn receives(self) -> bool {
        use SocketType::*;
        !matches!(self, Pub | Xpub | Push | Radio | Scatter)
    }

    /// Whether each message goes to every peer (PUB) rather than one of them.
    pub fn copies(self) -> bool {
        matches!(self, SocketType::Pub | SocketType::Xpub | SocketType::Radio)
    }

    /// Whether it is one of the draft API's thread-safe types, which carry one frame per
    /// message and need a libzmq built with the draft API.
    pub fn is_draft(self) -> bool {
        use SocketType::*;
        matches!(
            self,
            Radio | Dish | Client | Server | Scatter | Gather | Channel | Peer
        )
    }

    /// Whether a sender of this type cannot count its receivers' joins, and so pauses for
    /// them: a RADIO (its DISHes' joins are not passed up), and a PUB or XPUB `multicast`
    /// (no subscription travels back over pgm, epgm or norm).
    pub fn pauses_for_joins(self, multicast: bool) -> bool {
        match self {
            SocketType::Radio => true,
            SocketType::Pub | SocketType::Xpub => multicast,
            _ => false,
        }
    }

    /// Whether libzmq lets a socket of this type use transport `t`: udp is RADIO and
    /// DISH's alone, and multicast (pgm, epgm, norm) PUB and SUB's (XPUB, XSUB too).
    pub fn takes_transport(self, t: crate::transport::Transport) -> bool {
        use crate::transport::Transport as T;
        use SocketType::*;
        match t {
            T::Udp => matches!(self, Radio | Dish),
            T::Pgm | T::Epgm | T::Norm => matches!(self, Pub | Sub | Xpub | Xsub),
            _ => true,
        }
    }
}
