//! The libzmq-compatible commands (local_lat, remote_lat, local_thr, remote_thr,
//! inproc_lat, inproc_thr): their arguments, checked at this boundary, and their printing.

use clap::{Args, ValueEnum};
use std::time::Duration;
use zmqperf::compat::{self, EchoMode, LatConfig, Pattern, ThrConfig};
use zmqperf::endpoint::{Endpoint, Side, Transport};
use zmqperf::error::{Error, Result};
use zmqperf::net::security::{CurveKeys, Mechanism};
use zmqperf::parse::{parse_count, parse_duration, parse_hwm, parse_size};
use zmqperf::report::compat as out;
use zmqperf::zmq;

#[derive(Args)]
pub(super) struct Common {
    /// Longest wait for the peer, per message (e.g. 500ms, 30s, 2m).
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    timeout: String,
    /// Print one JSON object with every figure instead of the compatible lines.
    #[arg(long)]
    pub(super) json: bool,
    /// After the compatible lines, print the full distribution, rates and timer cost.
    #[arg(long)]
    detail: bool,
}

#[derive(Args)]
pub(super) struct SecurityOpts {
    /// Security mechanism: null (libzmq's default), plain or curve. CURVE uses the keys of
    /// libzmq's own perf tools, so either side may be a C tool built with CURVE; both sides
    /// must say the same.
    #[arg(long, default_value = "null", value_name = "null|plain|curve")]
    security: String,
    /// CURVE keys of one's own instead of the C tools': a TOML file with server_public,
    /// server_secret, client_public and client_secret (Z85, 40 characters each); both
    /// sides need the same file.
    #[arg(long, value_name = "FILE")]
    curve_keys: Option<String>,
}

#[derive(Args)]
pub(super) struct PeerOn {
    /// Start the other side of the pair on HOST (a name of --hosts FILE) through its
    /// launcher (ssh, srun, ip netns exec, kubectl exec ...), then measure; its lines follow
    /// these. The endpoint must name a fixed port. Example:
    /// `zmqperf remote_lat tcp://10.0.0.2:5555 64 100k --peer-on b --hosts hosts.toml`.
    #[arg(long, value_name = "HOST", requires = "hosts")]
    peer_on: Option<String>,
    /// The hosts file that names --peer-on's host (docs/hosts.md).
    #[arg(long, value_name = "FILE")]
    hosts: Option<String>,
}

#[derive(Args)]
pub(super) struct EchoOpts {
    /// Echo the received message object without reading or copying its content.
    #[arg(long, conflicts_with = "copy")]
    zero_copy: bool,
    /// Copy the content into a new message before echoing (as most applications do).
    #[arg(long)]
    copy: bool,
}

#[derive(Args)]
pub(super) struct LocalLat {
    /// Endpoint to bind, e.g. tcp://127.0.0.1:5555 (tcp://127.0.0.1:* picks a free port).
    bind_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    message_size: String,
    /// Round trips to serve (100_000, 1M).
    #[arg(allow_negative_numbers = true)]
    roundtrip_count: String,
    #[command(flatten)]
    echo: EchoOpts,
    #[command(flatten)]
    sec: SecurityOpts,
    #[command(flatten)]
    peer: PeerOn,
    #[command(flatten)]
    pub(super) common: Common,
}

#[derive(Args)]
pub(super) struct RemoteLat {
    /// Endpoint to connect to, e.g. tcp://127.0.0.1:5555.
    connect_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    message_size: String,
    /// Round trips to make (100_000, 1M).
    #[arg(allow_negative_numbers = true)]
    roundtrip_count: String,
    /// Plain mode: no measurement header and no per-round-trip clock readings (libzmq's loop).
    #[arg(long)]
    plain: bool,
    #[command(flatten)]
    sec: SecurityOpts,
    #[command(flatten)]
    peer: PeerOn,
    #[command(flatten)]
    pub(super) common: Common,
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum PatternArg {
    /// PUSH sends, PULL receives (libzmq's tools).
    Pushpull,
    /// PUB sends, SUB receives (SUB binds, PUB connects).
    Pubsub,
}

#[derive(Args)]
pub(super) struct ThrOpts {
    /// Socket pattern of the pair.
    #[arg(long, value_enum, default_value = "pushpull")]
    pattern: PatternArg,
    /// High-water mark of the measured socket, in messages (libzmq's default is 1000; 0 = none).
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    hwm: Option<String>,
}

#[derive(Args)]
pub(super) struct LocalThr {
    /// Endpoint to bind, e.g. tcp://127.0.0.1:5556 (tcp://127.0.0.1:* picks a free port).
    bind_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    message_size: String,
    /// Messages to receive (1_000_000, 1M).
    #[arg(allow_negative_numbers = true)]
    message_count: String,
    /// libzmq's optional <enable_curve>: 1 for CURVE (with the C tools' keys), 0 for none;
    /// the same as --security curve.
    enable_curve: Option<String>,
    #[command(flatten)]
    thr: ThrOpts,
    #[command(flatten)]
    sec: SecurityOpts,
    #[command(flatten)]
    peer: PeerOn,
    #[command(flatten)]
    pub(super) common: Common,
}

#[derive(Args)]
pub(super) struct SendOpts {
    /// Plain mode: send bytes without the measurement header (libzmq's loop).
    #[arg(long)]
    plain: bool,
    /// Put the send time in every N-th message (and the last); the others carry only
    /// their sequence number. 1 stamps every message.
    #[arg(long, default_value = "16", value_name = "N")]
    stamp_every: String,
}

#[derive(Args)]
pub(super) struct RemoteThr {
    /// Endpoint to connect to, e.g. tcp://127.0.0.1:5556.
    connect_to: String,
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    message_size: String,
    /// Messages to send (1_000_000, 1M).
    #[arg(allow_negative_numbers = true)]
    message_count: String,
    /// libzmq's optional <enable_curve>: 1 for CURVE (with the C tools' keys), 0 for none;
    /// the same as --security curve.
    enable_curve: Option<String>,
    #[command(flatten)]
    thr: ThrOpts,
    /// PUB/SUB: act as a plain PUB (start at once, drop at the high-water mark) instead of
    /// waiting for the subscription and blocking at the high-water mark.
    #[arg(long)]
    lossy: bool,
    #[command(flatten)]
    send: SendOpts,
    #[command(flatten)]
    sec: SecurityOpts,
    #[command(flatten)]
    peer: PeerOn,
    #[command(flatten)]
    pub(super) common: Common,
}

#[derive(Args)]
pub(super) struct InprocLat {
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    message_size: String,
    /// Round trips (100_000, 1M).
    #[arg(allow_negative_numbers = true)]
    roundtrip_count: String,
    /// Plain mode: no measurement header and no per-round-trip clock readings.
    #[arg(long)]
    plain: bool,
    #[command(flatten)]
    echo: EchoOpts,
    #[command(flatten)]
    pub(super) common: Common,
}

#[derive(Args)]
pub(super) struct InprocThr {
    /// Message size in bytes (64, 1KiB, 64MiB).
    #[arg(allow_negative_numbers = true)]
    message_size: String,
    /// Messages (1_000_000, 1M).
    #[arg(allow_negative_numbers = true)]
    message_count: String,
    #[command(flatten)]
    send: SendOpts,
    #[command(flatten)]
    pub(super) common: Common,
}

fn endpoint(s: &str, side: Side, alternative: &str) -> Result<Endpoint> {
    let ep = Endpoint::parse(s, side)?;
    if ep.transport() == Transport::Inproc {
        return Err(Error::Endpoint {
            endpoint: s.to_string(),
            reason: format!(
                "inproc:// only reaches sockets in the same process; use `zmqperf {alternative}`, or ipc:// or tcp:// between two processes"
            ),
        });
    }
    Ok(ep)
}

fn echo_mode(e: &EchoOpts) -> EchoMode {
    if e.zero_copy {
        EchoMode::ZeroCopy
    } else if e.copy {
        EchoMode::Copy
    } else {
        EchoMode::Inspect
    }
}

fn timeout(c: &Common) -> Result<Duration> {
    parse_duration("--timeout", &c.timeout)
}

/// The CURVE keys of `--curve-keys FILE`, checked.
fn curve_keys(sec: &SecurityOpts, mechanism: Mechanism) -> Result<Option<CurveKeys>> {
    let Some(path) = &sec.curve_keys else {
        return Ok(None);
    };
    let text = zmqperf::parse::read_text_file("--curve-keys", path)?;
    let keys: CurveKeys = toml::from_str(&text).map_err(|e| {
        Error::invalid(
            "--curve-keys",
            path,
            format!(
                "not a key file: {}; write server_public, server_secret, client_public and client_secret = \"<40 Z85 characters>\"",
                e.message()
            ),
        )
    })?;
    keys.check(&format!("--curve-keys {path}"))?;
    if mechanism != Mechanism::Curve {
        return Err(Error::invalid(
            "--curve-keys",
            path,
            "keys are used only with --security curve (or <enable_curve> 1)",
        ));
    }
    Ok(Some(keys))
}

/// The mechanism of a compatible command: `--security`, or libzmq's `<enable_curve>`
/// argument (an integer, non-zero for CURVE, as the C tools read it).
fn security(sec: &SecurityOpts, enable_curve: Option<&String>) -> Result<Mechanism> {
    let chosen = Mechanism::parse("--security", &sec.security)?;
    let Some(arg) = enable_curve else {
        return Ok(chosen);
    };
    let curve = match arg.trim().parse::<i64>() {
        Ok(n) => n != 0,
        Err(_) => {
            return Err(Error::invalid(
                "<enable_curve>",
                arg,
                "1 for CURVE, 0 for none, as libzmq's local_thr and remote_thr take it",
            ))
        }
    };
    match (curve, chosen) {
        (true, Mechanism::Null | Mechanism::Curve) => Ok(Mechanism::Curve),
        (false, m) => Ok(m),
        (true, m) => Err(Error::invalid(
            "<enable_curve>",
            arg,
            format!("--security {} was given too; give one of them", m.name()),
        )),
    }
}

fn pattern(p: PatternArg) -> Pattern {
    match p {
        PatternArg::Pushpull => Pattern::PushPull,
        PatternArg::Pubsub => Pattern::PubSub,
    }
}

fn print(
    c: &Common,
    json: impl FnOnce() -> String,
    lines: String,
    detail: impl FnOnce() -> String,
) {
    if c.json {
        println!("{}", json());
        result_printed();
    } else {
        print!("{lines}");
        if c.detail {
            print!("{}", detail());
        }
    }
}

static RESULT_PRINTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Marks the command's JSON result as printed: a failure after it (a loss, a cut-short
/// stream) is said on stderr only, so stdout keeps one object.
pub(super) fn result_printed() {
    RESULT_PRINTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// With `--json`, a command that fails before its result is printed prints one object
/// saying so on stdout (`{"tool", "zmqperf_version", "command", "error": {"exit_code",
/// "message"}}`), so a consumer of `--json` always gets an object; the error is on stderr
/// as always.
pub(super) fn json_on_failure(command: &str, json: bool, r: Result<()>) -> Result<()> {
    if let Err(e) = &r {
        if json && !RESULT_PRINTED.load(std::sync::atomic::Ordering::Relaxed) {
            let o = serde_json::json!({
                "tool": "zmqperf",
                "zmqperf_version": zmqperf::VERSION,
                "command": command,
                "error": { "exit_code": e.exit_code(), "message": e.to_string() },
            });
            println!("{o}");
        }
    }
    r
}

/// The JSON of a compatible command with the network interface of its tcp endpoint
/// (`network`, as in a run's environment); ipc and inproc endpoints have none.
fn with_network(json: String, endpoint: &str) -> String {
    let Some(iface) =
        zmqperf::net::iface::tcp_host(endpoint).and_then(|h| zmqperf::net::iface::lookup(&h))
    else {
        return json;
    };
    // Appended as the last field, so the others keep their order.
    let Some(body) = json.strip_suffix('}') else {
        return json;
    };
    let iface = serde_json::to_string(&iface).expect("serialisable");
    format!("{body},\"network\":{iface}}}")
}

/// A rate measured over too short a time says more about the clock than the transport:
/// say so on stderr (the compatible lines stay libzmq's).
fn caveat_if_short(elapsed_ns: u64) {
    if elapsed_ns < 1_000_000 {
        eprintln!(
            "zmqperf: warning: the messages took only {:.1} us to arrive, too short for a rate to mean much; send more of them (a larger <message-count>)",
            elapsed_ns as f64 / 1000.0
        );
    }
}

pub(super) fn announce(command: &str, requested: &Endpoint, bound: &str) {
    if requested.is_wildcard() {
        eprintln!("zmqperf: {command} listening on {bound}");
    }
}

/// The words that start the other side with the same settings: `cmd EP SIZE COUNT` and
/// the options both sides share.
fn peer_words(
    cmd: &str,
    ep: &str,
    size: &str,
    count: &str,
    sec: &SecurityOpts,
    common: &Common,
) -> Vec<String> {
    let mut w: Vec<String> = [
        cmd,
        ep,
        size,
        count,
        "--timeout",
        &common.timeout,
        "--security",
        &sec.security,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(k) = &sec.curve_keys {
        w.extend(["--curve-keys".to_string(), k.clone()]);
    }
    if common.detail {
        w.push("--detail".into());
    }
    w
}

/// The endpoint the other side uses: a wildcard interface of this side's bind becomes the
/// address of this host in the hosts file.
fn peer_endpoint(ep: &str, hosts: &zmqperf::runner::hosts::Hosts) -> Result<String> {
    if ep.ends_with(":*") || ep.contains(":*/") {
        return Err(Error::invalid(
            "--peer-on",
            ep,
            "the other side is started before this one binds: give a fixed port (tcp://ADDR:5555)",
        ));
    }
    let local = hosts.local().map(|h| h.addr.as_str());
    for wild in ["tcp://*:", "tcp://0.0.0.0:"] {
        if let Some(port) = ep.strip_prefix(wild) {
            let a = local.ok_or_else(|| {
                Error::invalid(
                    "--peer-on",
                    ep,
                    "a wildcard bind: the other host needs this host's address; give it in the endpoint, or in the hosts file (local = true, addr = \"IP\")",
                )
            })?;
            return Ok(format!("tcp://{a}:{port}"));
        }
    }
    Ok(ep.to_string())
}

/// Runs `ours` with the other side of the pair started on `--peer-on`'s host first (the
/// side that connects retries until the other binds, so the order does not matter); a
/// peer that fails ends this side at once, with its host and why.
fn with_peer(
    p: &PeerOn,
    words: impl FnOnce(&zmqperf::runner::hosts::Hosts) -> Result<Vec<String>>,
    ours: impl FnOnce() -> Result<()> + Send,
) -> Result<()> {
    let Some(name) = &p.peer_on else {
        return ours();
    };
    let hosts = zmqperf::runner::hosts::Hosts::load(p.hosts.as_deref().unwrap_or_default())?;
    let host = hosts.get("--peer-on", name)?.clone();
    if host.is_local() {
        return Err(Error::invalid(
            "--peer-on",
            name,
            "that is this host (local = true); name another host",
        ));
    }
    let words = words(&hosts)?;
    let exe = zmqperf::runner::remote_exe(&host)?;
    let mut peer = zmqperf::runner::remote::RemoteCommand::start(&host, &exe, &words)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let r = std::thread::scope(|sc| {
        sc.spawn(move || {
            let _ = tx.send(ours());
        });
        loop {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(r) => return r,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Error::Protocol(
                        "this side's thread ended without a result".into(),
                    ))
                }
                Err(_) => {
                    if let Some(e) = peer.failed_early() {
                        // This side waits for a peer that will never come: end here.
                        eprintln!("zmqperf: error: {e}");
                        std::process::exit(e.exit_code());
                    }
                }
            }
        }
    });
    let out = peer.finish(Duration::from_secs(30));
    r?;
    let out = out?;
    if !out.trim().is_empty() {
        println!(
            "--- {} on host {name}:",
            words.first().map_or("", |w| w.as_str())
        );
        print!("{out}");
    }
    Ok(())
}

/// `zmqperf local_lat`.
pub(super) fn local_lat(a: &LocalLat, ctx: &zmq::Context) -> Result<()> {
    with_peer(
        &a.peer,
        |h| {
            Ok(peer_words(
                "remote_lat",
                &peer_endpoint(&a.bind_to, h)?,
                &a.message_size,
                &a.roundtrip_count,
                &a.sec,
                &a.common,
            ))
        },
        || local_lat_here(a, ctx),
    )
}

fn local_lat_here(a: &LocalLat, ctx: &zmq::Context) -> Result<()> {
    zmqperf::runner::catch_signals();
    let ep = endpoint(&a.bind_to, Side::Bind, "inproc_lat")?;
    let cfg = LatConfig {
        size: parse_size("<message-size>", &a.message_size)?,
        count: parse_count("<roundtrip-count>", &a.roundtrip_count)?,
        timeout: timeout(&a.common)?,
        side: Side::Bind,
        instrumented: false,
        echo: echo_mode(&a.echo),
        endpoint: ep.clone(),
        security: security(&a.sec, None)?,
        curve_keys: curve_keys(&a.sec, security(&a.sec, None)?)?,
    };
    let r = compat::local_lat(ctx, &cfg, |b| announce("local_lat", &ep, b))?;
    print(
        &a.common,
        || with_network(out::json(&r), &r.endpoint),
        String::new(),
        || out::echo_detail(&r),
    );
    interrupted_after_print(None)
}

/// After the figures are printed: a signal (Ctrl-C, SIGTERM, SIGHUP) that ended the
/// measurement is the exit (128 + the signal), with what the figures cover.
fn interrupted_after_print(why: Option<&str>) -> Result<()> {
    if zmqperf::runner::interrupted() {
        return Err(Error::Interrupted(format!(
            "{}; the figures above are of what was done before it",
            why.unwrap_or("by a signal")
        )));
    }
    Ok(())
}

/// `zmqperf remote_lat`.
pub(super) fn remote_lat(a: &RemoteLat, ctx: &zmq::Context) -> Result<()> {
    with_peer(
        &a.peer,
        |_| {
            Ok(peer_words(
                "local_lat",
                &a.connect_to,
                &a.message_size,
                &a.roundtrip_count,
                &a.sec,
                &a.common,
            ))
        },
        || remote_lat_here(a, ctx),
    )
}

fn remote_lat_here(a: &RemoteLat, ctx: &zmq::Context) -> Result<()> {
    zmqperf::runner::catch_signals();
    let cfg = LatConfig {
        endpoint: endpoint(&a.connect_to, Side::Connect, "inproc_lat")?,
        size: parse_size("<message-size>", &a.message_size)?,
        count: parse_count("<roundtrip-count>", &a.roundtrip_count)?,
        timeout: timeout(&a.common)?,
        side: Side::Connect,
        instrumented: !a.plain,
        echo: EchoMode::Inspect,
        security: security(&a.sec, None)?,
        curve_keys: curve_keys(&a.sec, security(&a.sec, None)?)?,
    };
    let r = compat::remote_lat(ctx, &cfg)?;
    if cfg.instrumented && !r.header && cfg.size >= zmqperf::header::HEADER_LEN {
        eprintln!(
            "zmqperf: warning: the echo side's first reply did not carry the request's bytes back (an echo that answers with bytes of its own): the replies were timed but not checked",
        );
    }
    print(
        &a.common,
        || with_network(out::json(&r), &r.endpoint),
        out::latency_lines(&r),
        || out::latency_detail(&r),
    );
    if let Some(note) = first_wait_note(&r) {
        eprintln!("zmqperf: note: {note}");
    }
    cut_short_after_print(&r)
}

/// The failure of a latency run whose echo side stopped part-way, once the figures of the
/// round trips done are printed (exit 7).
fn cut_short_after_print(r: &compat::LatencyResult) -> Result<()> {
    interrupted_after_print(r.cut_short.as_deref())?;
    if let Some(why) = &r.cut_short {
        return Err(Error::Unconfirmed(format!(
            "{why} (the figures above are of the {} round trips done)",
            r.roundtrip_count
        )));
    }
    Ok(())
}

/// When remote_lat's first round trip waited for its peer (it was started before
/// local_lat), libzmq's average holds that wait: say so, with the figure without it. A
/// first round trip counts as a wait when it took over 1 ms and over ten of the others.
fn first_wait_note(r: &compat::LatencyResult) -> Option<String> {
    let first = r.first_roundtrip_ns?;
    let rest = r.average_latency_after_first_us?;
    let rest_rtt_ns = rest * 2000.0;
    if first < 1_000_000 || (first as f64) < 10.0 * rest_rtt_ns {
        return None;
    }
    Some(format!(
        "the first round trip took {:.1} ms: it waited for the echo side (remote_lat started before local_lat?). libzmq's average latency above counts that wait; without the first round trip it is {rest:.3} [us]",
        first as f64 / 1e6
    ))
}

/// The throughput options both sides share.
fn thr_words(mut w: Vec<String>, t: &ThrOpts) -> Vec<String> {
    w.push("--pattern".into());
    w.push(match t.pattern {
        PatternArg::Pushpull => "pushpull".into(),
        PatternArg::Pubsub => "pubsub".into(),
    });
    if let Some(h) = &t.hwm {
        w.extend(["--hwm".to_string(), h.clone()]);
    }
    w
}

/// `zmqperf local_thr`.
pub(super) fn local_thr(a: &LocalThr, ctx: &zmq::Context) -> Result<()> {
    with_peer(
        &a.peer,
        |h| {
            Ok(thr_words(
                peer_words(
                    "remote_thr",
                    &peer_endpoint(&a.bind_to, h)?,
                    &a.message_size,
                    &a.message_count,
                    &a.sec,
                    &a.common,
                ),
                &a.thr,
            ))
        },
        || local_thr_here(a, ctx),
    )
}

fn local_thr_here(a: &LocalThr, ctx: &zmq::Context) -> Result<()> {
    zmqperf::runner::catch_signals();
    let ep = endpoint(&a.bind_to, Side::Bind, "inproc_thr")?;
    let cfg = ThrConfig {
        size: parse_size("<message-size>", &a.message_size)?,
        count: parse_count("<message-count>", &a.message_count)?,
        timeout: timeout(&a.common)?,
        side: Side::Bind,
        pattern: pattern(a.thr.pattern),
        instrumented: false,
        stamp_every: 1,
        hwm: a.thr.hwm.as_deref().map(parse_hwm).transpose()?,
        lossy: false,
        stream_id: 0,
        endpoint: ep.clone(),
        security: security(&a.sec, a.enable_curve.as_ref())?,
        curve_keys: curve_keys(&a.sec, security(&a.sec, a.enable_curve.as_ref())?)?,
    };
    let r = compat::local_thr(ctx, &cfg, |b| announce("local_thr", &ep, b))?;
    caveat_if_short(r.elapsed_ns);
    if r.arrivals != r.distinct {
        eprintln!(
            "zmqperf: warning: {} messages arrived: {} distinct and {} duplicates (the throughput counts each message once; the sender or a device between sent some twice)",
            r.arrivals,
            r.distinct,
            r.arrivals - r.distinct
        );
    }
    print(
        &a.common,
        || with_network(out::json(&r), &r.endpoint),
        out::throughput_lines(&r),
        || out::receiver_detail(&r),
    );
    if let Some(why) = &r.protocol_error {
        return Err(Error::Protocol(format!(
            "{why} (the figures above are of the messages before it)"
        )));
    }
    interrupted_after_print(r.cut_short.as_deref())?;
    if let Some(detail) = &r.cut_short {
        let l = r.loss.clone().unwrap_or_default();
        return Err(Error::CutShort {
            detail: detail.clone(),
            received: r.distinct,
            expected: cfg.count,
            at_start: l.lost_at_start,
            in_middle: l.lost_in_middle,
            // Without the header the holes have no place: none is claimed.
            at_end: l.lost_at_end,
            cause: compat::cut_short_cause(cfg.pattern, r.loss.as_ref(), r.streams),
        });
    }
    if let Some(l) = r.loss.as_ref().filter(|l| l.lost > 0) {
        return Err(Error::Lost {
            lost: l.lost,
            expected: l.expected,
            at_start: l.lost_at_start,
            in_middle: l.lost_in_middle,
            at_end: l.lost_at_end,
            cause: compat::loss_cause(cfg.pattern, l, r.streams),
        });
    }
    if let Some(n) = r.stream_length {
        eprintln!(
            "zmqperf: note: the sender's stream had {} messages, fewer than <message-count> {}: all of them arrived",
            zmqperf::units::grouped(n),
            zmqperf::units::grouped(cfg.count)
        );
    }
    Ok(())
}

/// `zmqperf remote_thr`.
pub(super) fn remote_thr(a: &RemoteThr, ctx: &zmq::Context) -> Result<()> {
    with_peer(
        &a.peer,
        |_| {
            Ok(thr_words(
                peer_words(
                    "local_thr",
                    &a.connect_to,
                    &a.message_size,
                    &a.message_count,
                    &a.sec,
                    &a.common,
                ),
                &a.thr,
            ))
        },
        || remote_thr_here(a, ctx),
    )
}

fn remote_thr_here(a: &RemoteThr, ctx: &zmq::Context) -> Result<()> {
    zmqperf::runner::catch_signals();
    let cfg = ThrConfig {
        endpoint: endpoint(&a.connect_to, Side::Connect, "inproc_thr")?,
        size: parse_size("<message-size>", &a.message_size)?,
        count: parse_count("<message-count>", &a.message_count)?,
        timeout: timeout(&a.common)?,
        side: Side::Connect,
        pattern: pattern(a.thr.pattern),
        instrumented: !a.send.plain,
        stamp_every: parse_count("--stamp-every", &a.send.stamp_every)?,
        hwm: a.thr.hwm.as_deref().map(parse_hwm).transpose()?,
        lossy: a.lossy,
        stream_id: std::process::id(),
        security: security(&a.sec, a.enable_curve.as_ref())?,
        curve_keys: curve_keys(&a.sec, security(&a.sec, a.enable_curve.as_ref())?)?,
    };
    let r = compat::remote_thr(ctx, &cfg)?;
    print(
        &a.common,
        || with_network(out::json(&r), &r.endpoint),
        String::new(),
        || out::sender_detail(&r),
    );
    interrupted_after_print(r.cut_short.as_deref())?;
    if r.peer_closed == Some(false) {
        return Err(Error::Unconfirmed(format!(
            "all {} messages left, but the receiver did not hang up within {} of the last one: it may not have read them (a receiver expecting more messages, one that stopped reading, or a long-lived service that never closes; its own output is the verdict)",
            r.message_count,
            zmqperf::error::fmt_duration(cfg.timeout)
        )));
    }
    Ok(())
}

/// `zmqperf inproc_lat`.
pub(super) fn inproc_lat(a: &InprocLat) -> Result<()> {
    zmqperf::runner::catch_signals();
    let r = compat::inproc_lat(
        parse_size("<message-size>", &a.message_size)?,
        parse_count("<roundtrip-count>", &a.roundtrip_count)?,
        timeout(&a.common)?,
        !a.plain,
        echo_mode(&a.echo),
    )?;
    print(
        &a.common,
        || out::json(&r),
        out::latency_lines(&r),
        || out::latency_detail(&r),
    );
    cut_short_after_print(&r)
}

/// `zmqperf inproc_thr`.
pub(super) fn inproc_thr(a: &InprocThr) -> Result<()> {
    zmqperf::runner::catch_signals();
    let (r, s) = compat::inproc_thr(
        parse_size("<message-size>", &a.message_size)?,
        parse_count("<message-count>", &a.message_count)?,
        timeout(&a.common)?,
        !a.send.plain,
        parse_count("--stamp-every", &a.send.stamp_every)?,
    )?;
    caveat_if_short(r.elapsed_ns);
    print(
        &a.common,
        || {
            let mut v = serde_json::to_value(
                serde_json::from_str::<serde_json::Value>(&out::json(&r)).expect("valid"),
            )
            .expect("valid");
            v["sender"] = serde_json::to_value(&s).expect("serialisable");
            v.to_string()
        },
        out::throughput_lines(&r),
        || format!("{}{}", out::receiver_detail(&r), out::sender_detail(&s)),
    );
    interrupted_after_print(r.cut_short.as_deref().or(s.cut_short.as_deref()))
}
