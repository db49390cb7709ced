//! What a node does ([`Role`], the file format's `role = "..."`) and what the checks and the
//! runner know of each role ([`RoleInfo`]): plain data, one `const` per role, read through
//! [`Role::info`]. The behaviour (the run loop, the fill of its spec from the graph) lives
//! in `roles/`; this table sits here, beside the enum, because `topology::check` reads it
//! and the topology model is below the roles.

use super::{Node, SocketType};
use serde::{Deserialize, Serialize};

/// What a node does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Sends a stream with the measurement header (count, size, rate).
    #[default]
    Source,
    /// Receives streams and keeps a ledger and the latency of each.
    Sink,
    /// Sends every message it receives back where it came from.
    Echo,
    /// Closed-loop client: sends a request, waits for the echo, times the round trip.
    Ping,
    /// Forwards frames between its two sockets untouched (latency stays end to end).
    Proxy,
    /// Many SUB sockets (or DISH sockets on one udp group) in one process, watched by one
    /// thread (a fan-out's subscribers).
    Swarm,
    /// A sink that works `work_us` microseconds on every message (a slow consumer).
    #[serde(rename = "slow_sink")]
    SlowSink,
}

/// A role's part in the streams the topology carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamPart {
    /// Takes no part (an echo, a ping: round trips, not streams).
    None,
    /// Sends a stream: each replica gets a stream id of its own.
    Sends,
    /// Receives streams on its one socket and keeps a ledger of each.
    Receives,
    /// Receives a stream on many SUB sockets of its own (its figures ride in its report).
    Subscribes,
    /// Passes what arrives on socket `from` out of socket `to`.
    Forwards { from: usize, to: usize },
}

/// How the runner ends a role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ends {
    /// By itself, once it has sent everything (the runner waits for it first).
    Itself,
    /// After the senders, in `rank` order (lower first): told to stop unless it ends by
    /// itself (`always_stop`: told in any case; it takes the stop only after a quiet spell).
    Stopped { rank: u8, always_stop: bool },
    /// After its idle time once the stream is over, then stopped (a swarm).
    Idle,
}

/// The latency figure a role gives the case's headline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Latency {
    /// None of its own.
    None,
    /// One way, send stamp to arrival (the headline when the case has no round trips).
    OneWay,
    /// Round trips / 2 (the headline of a latency case).
    RoundTrip,
}

/// What the checks and the runner know of a role.
#[derive(Debug)]
pub struct RoleInfo {
    /// Its name in files.
    pub name: &'static str,
    /// The name results have always used for it (client, server, sender, receiver).
    pub legacy_name: &'static str,
    /// How many sockets it has.
    pub sockets: usize,
    /// With more than one socket: what the file must give, in words.
    pub sockets_reason: &'static str,
    /// Whether its socket types (in socket order) fit it.
    pub accepts: fn(&[SocketType]) -> bool,
    /// The socket types it needs, in words.
    pub wants: &'static str,
    /// The socket that publishes: on PUB or XPUB it waits for its subscriptions before the
    /// first message, and loss there is messages dropped at its high-water mark.
    pub publishes: Option<usize>,
    /// Its part in the streams.
    pub stream: StreamPart,
    /// Whether it may belong to a stream (`stream = "..."`, ended by its channel).
    pub in_stream: bool,
    /// How the runner ends it.
    pub ends: Ends,
    /// The latency figure it gives the headline.
    pub latency: Latency,
    /// Whether it takes an I/O mode (`io`).
    pub takes_io: bool,
    /// Whether every frame it receives is at most its message size (its sockets refuse
    /// larger ones); a role that takes whatever comes does not.
    pub bounds_frames: bool,
    /// The fields only some roles take ([`Node::own_fields`]) that it takes.
    pub fields: &'static [&'static str],
    /// Its rule for those fields: the field, the value and why, when a node breaks it.
    pub check_fields: fn(&Node) -> Option<(&'static str, String, &'static str)>,
}

impl RoleInfo {
    /// Whether a run of it gives a figure (a stream sent or received, or round trips).
    pub fn measures(&self) -> bool {
        self.latency == Latency::RoundTrip
            || matches!(
                self.stream,
                StreamPart::Sends | StreamPart::Receives | StreamPart::Subscribes
            )
    }

    /// Whether a stream ends at it (it receives and reports what arrived).
    pub fn ends_flows(&self) -> bool {
        matches!(self.stream, StreamPart::Receives | StreamPart::Subscribes)
    }

    /// The socket of a node of this role with `types` that publishes on PUB or XPUB.
    pub fn publishes_on(&self, types: &[SocketType]) -> Option<usize> {
        self.publishes
            .filter(|&i| matches!(types.get(i), Some(SocketType::Pub | SocketType::Xpub)))
    }
}

use SocketType::*;

const SOURCE: RoleInfo = RoleInfo {
    name: "source",
    legacy_name: "sender",
    sockets: 1,
    sockets_reason: "",
    accepts: |t| {
        matches!(
            t[0],
            Pub | Xpub | Push | Pair | Dealer | Radio | Scatter | Client | Channel | Peer
        )
    },
    wants:
        "a sending socket: PUB, XPUB, PUSH, PAIR, DEALER, RADIO, SCATTER, CLIENT, CHANNEL or PEER",
    publishes: Some(0),
    stream: StreamPart::Sends,
    in_stream: true,
    ends: Ends::Itself,
    latency: Latency::None,
    takes_io: true,
    bounds_frames: false,
    fields: &["join_ms"],
    check_fields: |_| None,
};

/// A sink's: every role that receives streams as a sink does starts from it.
pub const SINK: RoleInfo = RoleInfo {
    name: "sink",
    legacy_name: "receiver",
    sockets: 1,
    sockets_reason: "",
    accepts: |t| {
        matches!(
            t[0],
            Sub | Xsub | Pull | Pair | Dealer | Router | Dish | Gather | Server | Channel
                | Peer
        )
    },
    wants:
        "a receiving socket: SUB, XSUB, PULL, PAIR, DEALER, ROUTER, DISH, GATHER, SERVER, CHANNEL or PEER",
    publishes: None,
    stream: StreamPart::Receives,
    in_stream: true,
    ends: Ends::Stopped {
        rank: 0,
        always_stop: true,
    },
    latency: Latency::OneWay,
    takes_io: true,
    bounds_frames: true,
    fields: &[],
    check_fields: |_| None,
};

const ECHO: RoleInfo = RoleInfo {
    name: "echo",
    legacy_name: "server",
    sockets: 1,
    sockets_reason: "",
    accepts: |t| matches!(t[0], Rep | Router | Dealer | Pair | Server | Channel | Peer),
    wants: "REP, ROUTER, DEALER, PAIR, SERVER, CHANNEL or PEER",
    publishes: None,
    stream: StreamPart::None,
    in_stream: false,
    ends: Ends::Stopped {
        rank: 1,
        always_stop: false,
    },
    latency: Latency::None,
    takes_io: true,
    bounds_frames: true,
    fields: &[],
    check_fields: |_| None,
};

const PING: RoleInfo = RoleInfo {
    name: "ping",
    legacy_name: "client",
    sockets: 1,
    sockets_reason: "",
    accepts: |t| matches!(t[0], Req | Dealer | Pair | Client | Channel | Peer),
    wants: "REQ, DEALER, PAIR, CLIENT, CHANNEL or PEER",
    publishes: None,
    stream: StreamPart::None,
    in_stream: false,
    ends: Ends::Itself,
    latency: Latency::RoundTrip,
    takes_io: true,
    bounds_frames: true,
    fields: &[],
    check_fields: |_| None,
};

const PROXY: RoleInfo = RoleInfo {
    name: "proxy",
    legacy_name: "proxy",
    sockets: 2,
    sockets_reason: "a proxy has two sockets: `sockets = [receiving side, sending side]`",
    accepts: |t| t[0].receives() && t[1].sends(),
    wants: "a receiving socket first (e.g. XSUB, PULL, ROUTER), then a sending one (e.g. XPUB, PUSH, DEALER)",
    publishes: Some(1),
    stream: StreamPart::Forwards { from: 0, to: 1 },
    in_stream: false,
    ends: Ends::Stopped {
        rank: 2,
        always_stop: false,
    },
    latency: Latency::None,
    takes_io: false,
    bounds_frames: false,
    fields: &[],
    check_fields: |_| None,
};

const SWARM: RoleInfo = RoleInfo {
    name: "swarm",
    legacy_name: "receiver",
    sockets: 1,
    sockets_reason: "",
    accepts: |t| t[0] == Sub || t[0] == Dish,
    wants:
        "a SUB socket, or a DISH bound to a udp multicast group (the swarm opens `subs` of them)",
    publishes: None,
    stream: StreamPart::Subscribes,
    in_stream: false,
    ends: Ends::Idle,
    latency: Latency::None,
    takes_io: false,
    bounds_frames: false,
    fields: &["subs"],
    check_fields: |n| {
        (n.subs == Some(0)).then(|| ("subs", "0".into(), "a swarm has at least 1 SUB socket"))
    },
};

const SLOW_SINK: RoleInfo = RoleInfo {
    name: "slow_sink",
    fields: &["work_us"],
    check_fields: |n| match n.work_us {
        None => Some((
            "work_us",
            "(none)".into(),
            "a slow_sink works `work_us` microseconds on each message; give it, e.g. work_us = 200",
        )),
        Some(us) if !(1..=1_000_000).contains(&us) => Some((
            "work_us",
            us.to_string(),
            "1 to 1000000 microseconds of work per message",
        )),
        _ => None,
    },
    ..SINK
};

impl Role {
    /// What the checks and the runner know of it.
    pub fn info(self) -> &'static RoleInfo {
        match self {
            Role::Source => &SOURCE,
            Role::Sink => &SINK,
            Role::Echo => &ECHO,
            Role::Ping => &PING,
            Role::Proxy => &PROXY,
            Role::Swarm => &SWARM,
            Role::SlowSink => &SLOW_SINK,
        }
    }

    /// Its name in files.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Roles that end by themselves; the others end when the runner stops them or when
    /// everything they expect has arrived.
    pub fn is_active(self) -> bool {
        self.info().ends == Ends::Itself
    }
}
