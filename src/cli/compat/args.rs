//! The arguments of the libzmq-compatible commands, as clap reads them: the positional
//! arguments of libzmq's tools, then zmqperf's own options.

use clap::{Args, ValueEnum};

#[derive(Args)]
pub(in crate::cli) struct Common {
    /// Longest wait for the peer, per message (e.g. 500ms, 30s, 2m).
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub(super) timeout: String,
    /// Print one JSON object with every figure instead of the compatible lines.
    #[arg(long)]
    pub(in crate::cli) json: bool,
    /// After the compatible lines, print the full distribution, rates and timer cost.
    #[arg(long)]
    pub(super) detail: bool,
}

#[derive(Args)]
pub(in crate::cli) struct SecurityOpts {
    /// Security mechanism: null (libzmq's default), plain, curve or gssapi. CURVE uses the
    /// keys of libzmq's own perf tools, so either side may be a C tool built with CURVE;
    /// GSSAPI needs a libzmq built with it (--libzmq system) and a Kerberos realm
    /// (docs/libzmq.md); both sides must say the same.
    #[arg(long, default_value = "null", value_name = "null|plain|curve|gssapi")]
    pub(super) security: String,
    /// CURVE keys of one's own instead of the C tools': a TOML file with server_public,
    /// server_secret, client_public and client_secret (Z85, 40 characters each); both
    /// sides need the same file.
    #[arg(long, value_name = "FILE")]
    pub(super) curve_keys: Option<String>,
    /// GSSAPI: the service principal the connecting side asks the KDC a ticket for,
    /// `service@host` or `service/host@REALM` (default zmqperf@localhost); the binding side
    /// accepts a ticket to any key of its keytab (KRB5_KTNAME).
    #[arg(long, value_name = "NAME")]
    pub(super) gssapi_principal: Option<String>,
}

#[derive(Args)]
pub(in crate::cli) struct PeerOn {
    /// Start the other side of the pair on HOST (a name of --hosts FILE) through its
    /// launcher (ssh, srun, ip netns exec, kubectl exec ...), then measure; its lines follow
    /// these. The endpoint must name a fixed port. Example:
    /// `zmqperf remote_lat tcp://10.0.0.2:5555 64 100k --peer-on b --hosts hosts.toml`.
    #[arg(long, value_name = "HOST", requires = "hosts")]
    pub(super) peer_on: Option<String>,
    /// The hosts file that names --peer-on's host (docs/hosts.md).
    #[arg(long, value_name = "FILE")]
    pub(super) hosts: Option<String>,
}

#[derive(Args)]
pub(in crate::cli) struct EchoOpts {
    /// Echo the received message object without reading or copying its content.
    #[arg(long, conflicts_with = "copy")]
    pub(super) zero_copy: bool,
    /// Copy the content into a new message before echoing (as most applications do).
    #[arg(long)]
    pub(super) copy: bool,
}

#[derive(Args)]
pub(in crate::cli) struct LocalLat {
    /// Endpoint to bind, e.g. tcp://127.0.0.1:5555 (tcp://127.0.0.1:* picks a free port).
    pub(super) bind_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    pub(super) message_size: String,
    /// Round trips to serve (100_000, 1M).
    #[arg(allow_negative_numbers = true)]
    pub(super) roundtrip_count: String,
    #[command(flatten)]
    pub(super) echo: EchoOpts,
    #[command(flatten)]
    pub(super) sec: SecurityOpts,
    #[command(flatten)]
    pub(super) peer: PeerOn,
    #[command(flatten)]
    pub(in crate::cli) common: Common,
}

#[derive(Args)]
pub(in crate::cli) struct RemoteLat {
    /// Endpoint to connect to, e.g. tcp://127.0.0.1:5555.
    pub(super) connect_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    pub(super) message_size: String,
    /// Round trips to make (100_000, 1M).
    #[arg(allow_negative_numbers = true)]
    pub(super) roundtrip_count: String,
    /// Plain mode: no measurement header and no per-round-trip clock readings (libzmq's loop).
    #[arg(long)]
    pub(super) plain: bool,
    #[command(flatten)]
    pub(super) every: IntervalOpt,
    #[command(flatten)]
    pub(super) sec: SecurityOpts,
    #[command(flatten)]
    pub(super) peer: PeerOn,
    #[command(flatten)]
    pub(in crate::cli) common: Common,
}

#[derive(Clone, Copy, ValueEnum)]
pub(in crate::cli) enum PatternArg {
    /// PUSH sends, PULL receives (libzmq's tools).
    Pushpull,
    /// PUB sends, SUB receives (SUB binds, PUB connects).
    Pubsub,
}

#[derive(Args)]
pub(in crate::cli) struct ThrOpts {
    /// Socket pattern of the pair.
    #[arg(long, value_enum, default_value = "pushpull")]
    pub(super) pattern: PatternArg,
    /// High-water mark of the measured socket, in messages (libzmq's default is 1000; 0 = none).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub(super) hwm: Option<String>,
}

#[derive(Args)]
pub(in crate::cli) struct LocalThr {
    /// Endpoint to bind, e.g. tcp://127.0.0.1:5556 (tcp://127.0.0.1:* picks a free port).
    pub(super) bind_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    pub(super) message_size: String,
    /// Messages to receive (1_000_000, 1M).
    #[arg(allow_negative_numbers = true)]
    pub(super) message_count: String,
    /// libzmq's optional <enable_curve>: 1 for CURVE (with the C tools' keys), 0 for none;
    /// the same as --security curve.
    pub(super) enable_curve: Option<String>,
    #[command(flatten)]
    pub(super) thr: ThrOpts,
    #[command(flatten)]
    pub(super) every: IntervalOpt,
    #[command(flatten)]
    pub(super) sec: SecurityOpts,
    #[command(flatten)]
    pub(super) peer: PeerOn,
    #[command(flatten)]
    pub(in crate::cli) common: Common,
}

#[derive(Args)]
pub(in crate::cli) struct IntervalOpt {
    /// Close an interval of figures this often (1s) on the measuring side: each printed on
    /// stderr as it closes (msg/s or round trips/s, latency where it is timed, loss, CPU),
    /// all of them in the JSON with a drift verdict, which goes on stderr at the end.
    /// stdout stays libzmq's.
    #[arg(long, value_name = "DURATION")]
    pub(super) interval: Option<String>,
}

#[derive(Args)]
pub(in crate::cli) struct SendOpts {
    /// Plain mode: send bytes without the measurement header (libzmq's loop).
    #[arg(long)]
    pub(super) plain: bool,
    /// Put the send time in every N-th message (and the last); the others carry only
    /// their sequence number. 1 stamps every message.
    #[arg(long, default_value = "16", value_name = "N")]
    pub(super) stamp_every: String,
}

#[derive(Args)]
pub(in crate::cli) struct RemoteThr {
    /// Endpoint to connect to, e.g. tcp://127.0.0.1:5556.
    pub(super) connect_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    pub(super) message_size: String,
    /// Messages to send (1_000_000, 1M).
    #[arg(allow_negative_numbers = true)]
    pub(super) message_count: String,
    /// libzmq's optional <enable_curve>: 1 for CURVE (with the C tools' keys), 0 for none;
    /// the same as --security curve.
    pub(super) enable_curve: Option<String>,
    #[command(flatten)]
    pub(super) thr: ThrOpts,
    /// PUB/SUB: act as a plain PUB (start at once, drop at the high-water mark) instead of
    /// waiting for the subscription and blocking at the high-water mark.
    #[arg(long)]
    pub(super) lossy: bool,
    #[command(flatten)]
    pub(super) send: SendOpts,
    #[command(flatten)]
    pub(super) sec: SecurityOpts,
    #[command(flatten)]
    pub(super) peer: PeerOn,
    #[command(flatten)]
    pub(in crate::cli) common: Common,
}

#[derive(Args)]
pub(in crate::cli) struct InprocLat {
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    pub(super) message_size: String,
    /// Round trips (100_000, 1M).
    #[arg(allow_negative_numbers = true)]
    pub(super) roundtrip_count: String,
    /// Plain mode: no measurement header and no per-round-trip clock readings.
    #[arg(long)]
    pub(super) plain: bool,
    #[command(flatten)]
    pub(super) echo: EchoOpts,
    #[command(flatten)]
    pub(super) every: IntervalOpt,
    #[command(flatten)]
    pub(in crate::cli) common: Common,
}

#[derive(Args)]
pub(in crate::cli) struct InprocThr {
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    pub(super) message_size: String,
    /// Messages (1_000_000, 1M).
    #[arg(allow_negative_numbers = true)]
    pub(super) message_count: String,
    #[command(flatten)]
    pub(super) send: SendOpts,
    #[command(flatten)]
    pub(super) every: IntervalOpt,
    #[command(flatten)]
    pub(in crate::cli) common: Common,
}
