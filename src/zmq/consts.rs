//! The constants of zmq.h the project uses: socket types, send flags, socket and context
//! options, each written once here.

use std::ffi::c_int;

/// A libzmq socket type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SocketType(c_int);

pub const PAIR: SocketType = SocketType(0);
pub const PUB: SocketType = SocketType(1);
pub const SUB: SocketType = SocketType(2);
pub const REQ: SocketType = SocketType(3);
pub const REP: SocketType = SocketType(4);
pub const DEALER: SocketType = SocketType(5);
pub const ROUTER: SocketType = SocketType(6);
pub const PULL: SocketType = SocketType(7);
pub const PUSH: SocketType = SocketType(8);
pub const XPUB: SocketType = SocketType(9);
pub const XSUB: SocketType = SocketType(10);
// The draft API's types (thread-safe: single-frame messages only).
pub const SERVER: SocketType = SocketType(12);
pub const CLIENT: SocketType = SocketType(13);
pub const RADIO: SocketType = SocketType(14);
pub const DISH: SocketType = SocketType(15);
pub const GATHER: SocketType = SocketType(16);
pub const SCATTER: SocketType = SocketType(17);
pub const PEER: SocketType = SocketType(19);
pub const CHANNEL: SocketType = SocketType(20);

impl SocketType {
    /// libzmq's number for it.
    pub fn to_raw(self) -> c_int {
        self.0
    }

    /// Its name in zmq.h, without `ZMQ_`.
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 21] = [
            "PAIR", "PUB", "SUB", "REQ", "REP", "DEALER", "ROUTER", "PULL", "PUSH", "XPUB", "XSUB",
            "STREAM", "SERVER", "CLIENT", "RADIO", "DISH", "GATHER", "SCATTER", "DGRAM", "PEER",
            "CHANNEL",
        ];
        usize::try_from(self.0)
            .ok()
            .and_then(|i| NAMES.get(i))
            .copied()
            .unwrap_or("unknown")
    }

    /// Whether it is one of the draft API's types (a library without the draft API
    /// refuses to make it).
    pub fn is_draft(self) -> bool {
        self.0 >= SERVER.0
    }
}

/// Send and receive flags.
pub const DONTWAIT: i32 = 1;
pub const SNDMORE: i32 = 2;

// Socket options (zmq.h).
pub const ZMQ_ROUTING_ID: c_int = 5;
pub const ZMQ_SUBSCRIBE: c_int = 6;
pub const ZMQ_SNDBUF: c_int = 11;
pub const ZMQ_RCVBUF: c_int = 12;
pub const ZMQ_RCVMORE: c_int = 13;
pub const ZMQ_FD: c_int = 14;
pub const ZMQ_EVENTS: c_int = 15;
pub const ZMQ_LINGER: c_int = 17;
pub const ZMQ_BACKLOG: c_int = 19;
pub const ZMQ_MAXMSGSIZE: c_int = 22;
pub const ZMQ_SNDHWM: c_int = 23;
pub const ZMQ_RCVHWM: c_int = 24;
pub const ZMQ_RCVTIMEO: c_int = 27;
pub const ZMQ_SNDTIMEO: c_int = 28;
pub const ZMQ_LAST_ENDPOINT: c_int = 32;
/// ROUTER: fail a send to an unknown peer (EHOSTUNREACH) instead of dropping it.
pub const ZMQ_ROUTER_MANDATORY: c_int = 33;
pub const ZMQ_TCP_KEEPALIVE: c_int = 34;
pub const ZMQ_IMMEDIATE: c_int = 39;
/// XPUB: pass every subscription up, not only the first per topic.
pub const ZMQ_XPUB_VERBOSE: c_int = 40;
pub const ZMQ_IPV6: c_int = 42;
pub const ZMQ_MECHANISM: c_int = 43;
pub const ZMQ_PLAIN_SERVER: c_int = 44;
pub const ZMQ_PLAIN_USERNAME: c_int = 45;
pub const ZMQ_PLAIN_PASSWORD: c_int = 46;
pub const ZMQ_CURVE_SERVER: c_int = 47;
pub const ZMQ_CURVE_PUBLICKEY: c_int = 48;
pub const ZMQ_CURVE_SECRETKEY: c_int = 49;
pub const ZMQ_CURVE_SERVERKEY: c_int = 50;
/// GSSAPI: this socket is the server (accepts the handshake).
pub const ZMQ_GSSAPI_SERVER: c_int = 62;
/// GSSAPI client: the principal of the server it asks a ticket for.
pub const ZMQ_GSSAPI_SERVICE_PRINCIPAL: c_int = 64;
/// GSSAPI: authenticate only, do not wrap (encrypt) the messages.
pub const ZMQ_GSSAPI_PLAINTEXT: c_int = 65;
/// GSSAPI: how ZMQ_GSSAPI_SERVICE_PRINCIPAL is written (one of the ZMQ_GSSAPI_NT_ values).
pub const ZMQ_GSSAPI_SERVICE_PRINCIPAL_NAMETYPE: c_int = 91;
/// A GSSAPI name `service@host`.
pub const ZMQ_GSSAPI_NT_HOSTBASED: i32 = 0;
/// A GSSAPI name that is a Kerberos principal, `service/host@REALM`.
pub const ZMQ_GSSAPI_NT_KRB5_PRINCIPAL: i32 = 2;
/// Keep only the last message in each queue.
pub const ZMQ_CONFLATE: c_int = 54;
pub const ZMQ_ZAP_DOMAIN: c_int = 55;
/// XPUB: block (or EAGAIN) at the high-water mark instead of dropping.
pub const ZMQ_XPUB_NODROP: c_int = 69;
/// XPUB: VERBOSE, and pass every unsubscription (a subscriber leaving) up too.
pub const ZMQ_XPUB_VERBOSER: c_int = 78;
/// Multicast (pgm, epgm): the send rate limit, kbit/s (default 100).
pub const ZMQ_RATE: c_int = 8;
/// Multicast: how long a receiver may ask for a lost packet again, ms (default 10,000).
pub const ZMQ_RECOVERY_IVL: c_int = 9;
/// The socket's type.
pub const ZMQ_TYPE: c_int = 16;
/// Multicast: the time to live of its packets (default 1: this network only).
pub const ZMQ_MULTICAST_HOPS: c_int = 25;
/// Whether the socket is a thread-safe one (the draft API's types).
pub const ZMQ_THREAD_SAFE: c_int = 81;
/// Multicast: the largest packet, bytes (default 1,500).
pub const ZMQ_MULTICAST_MAXTPDU: c_int = 84;
// Context options.
pub const ZMQ_IO_THREADS: c_int = 1;
pub const ZMQ_MAX_SOCKETS: c_int = 2;
