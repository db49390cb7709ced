//! The libzmq-compatible commands (local_lat, remote_lat, local_thr, remote_thr,
//! inproc_lat, inproc_thr): their arguments (`args.rs`), checked at this boundary (here),
//! and their running and printing: the latency pair (`lat.rs`), the throughput pair
//! (`thr.rs`), and the other side started on another host (`peer.rs`).

mod args;
mod lat;
mod peer;
mod thr;

pub(super) use args::{InprocLat, InprocThr, LocalLat, LocalThr, RemoteLat, RemoteThr};
pub(super) use lat::{inproc_lat, local_lat, remote_lat};
pub(super) use thr::{inproc_thr, local_thr, remote_thr};

use args::{Common, EchoOpts, IntervalOpt, PatternArg, SecurityOpts};
use std::time::Duration;
use zmqperf::endpoint::{Endpoint, Side, Transport};
use zmqperf::error::{Error, Result};
use zmqperf::net::security::{CurveKeys, Mechanism};
use zmqperf::parse::parse_duration;
use zmqperf::scenarios::compat::Secrets;
use zmqperf::scenarios::compat::{EchoMode, Pattern};

pub(super) fn endpoint(s: &str, side: Side, alternative: &str) -> Result<Endpoint> {
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

pub(super) fn echo_mode(e: &EchoOpts) -> EchoMode {
    if e.zero_copy {
        EchoMode::ZeroCopy
    } else if e.copy {
        EchoMode::Copy
    } else {
        EchoMode::Inspect
    }
}

pub(super) fn timeout(c: &Common) -> Result<Duration> {
    parse_duration("--timeout", &c.timeout)
}

/// `--interval`, checked.
pub(super) fn interval(o: &IntervalOpt) -> Result<Option<Duration>> {
    o.interval
        .as_deref()
        .map(|v| parse_duration("--interval", v))
        .transpose()
}

/// Runs `f` with each interval printed on a line of stderr as it closes (`--interval`;
/// stdout stays libzmq's).
pub(super) fn with_interval_lines<T>(every: Option<Duration>, f: impl FnOnce() -> T) -> T {
    if every.is_none() {
        return f();
    }
    zmqperf::roles::live::set_interval_hook(Some(std::sync::Arc::new(|node, r| {
        zmqperf::errln!("{}", zmqperf::report::intervals::line(node, r))
    })));
    let out = f();
    zmqperf::roles::live::set_interval_hook(None);
    out
}

/// The drift verdict of a run's intervals on stderr, after its figures.
pub(super) fn say_drift(s: Option<&zmqperf::model::IntervalSeries>) {
    if let Some(s) = s {
        zmqperf::errln!("zmqperf: over time: {}", s.drift.said);
    }
}

/// What the pair shares beyond the mechanism: `--curve-keys FILE`'s keys, checked, and
/// `--gssapi-principal`.
pub(super) fn secrets(sec: &SecurityOpts, mechanism: Mechanism) -> Result<Secrets> {
    if let Some(p) = &sec.gssapi_principal {
        if mechanism != Mechanism::Gssapi || p.trim().is_empty() {
            return Err(Error::invalid(
                "--gssapi-principal",
                p,
                "name the service (`zmqperf@host` or `zmqperf/host@REALM`), with --security gssapi",
            ));
        }
    }
    Ok(Secrets {
        curve_keys: curve_keys(sec, mechanism)?,
        gssapi_principal: sec.gssapi_principal.clone(),
    })
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
pub(super) fn security(sec: &SecurityOpts, enable_curve: Option<&String>) -> Result<Mechanism> {
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

pub(super) fn pattern(p: PatternArg) -> Pattern {
    match p {
        PatternArg::Pushpull => Pattern::PushPull,
        PatternArg::Pubsub => Pattern::PubSub,
    }
}

pub(super) fn print(
    c: &Common,
    json: impl FnOnce() -> String,
    lines: String,
    detail: impl FnOnce() -> String,
) {
    if c.json {
        println!("{}", json());
        result_printed();
    } else {
        print!("{}", zmqperf::term::fit(&lines));
        if c.detail {
            print!("{}", zmqperf::term::fit(&detail()));
        }
    }
}

static RESULT_PRINTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Marks the command's JSON result as printed: a failure after it (a loss, a cut-short
/// stream) is said on stderr only, so stdout keeps one object.
pub(super) fn result_printed() {
    RESULT_PRINTED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// With `--json`, a command that fails before its result is printed prints its envelope
/// with the error instead of results (`"results": null, "error": {"exit_code",
/// "message"}`), so a consumer of `--json` always gets an object; the error is on stderr as
/// always.
pub(super) fn json_on_failure(command: &str, json: bool, r: Result<()>) -> Result<()> {
    if let Err(e) = &r {
        if json && !RESULT_PRINTED.load(std::sync::atomic::Ordering::Relaxed) {
            print!(
                "{}",
                zmqperf::report::json::failure(command, e.exit_code(), e.to_string())
            );
        }
    }
    r
}

/// The network interface of a tcp endpoint (as in a run's environment); ipc and inproc
/// endpoints have none.
pub(super) fn network(endpoint: &str) -> Option<zmqperf::model::NetworkInterface> {
    zmqperf::net::iface::tcp_host(endpoint).and_then(|h| zmqperf::net::iface::lookup(&h))
}

/// A rate measured over too short a time says more about the clock than the transport:
/// say so on stderr (the compatible lines stay libzmq's).
pub(super) fn caveat_if_short(elapsed_ns: u64) {
    if elapsed_ns < 1_000_000 {
        zmqperf::errln!(
            "zmqperf: warning: the messages took only {:.1} us to arrive, too short for a rate to mean much; send more of them (a larger <message-count>)",
            elapsed_ns as f64 / 1000.0
        );
    }
}

pub(super) fn announce(command: &str, requested: &Endpoint, bound: &str) {
    if requested.is_wildcard() {
        zmqperf::errln!("zmqperf: {command} listening on {bound}");
    }
}

/// After the figures are printed: a signal (Ctrl-C, SIGTERM, SIGHUP) that ended the
/// measurement is the exit (128 + the signal), with what the figures cover.
pub(super) fn interrupted_after_print(why: Option<&str>) -> Result<()> {
    if zmqperf::runner::interrupted() {
        return Err(Error::Interrupted(format!(
            "{}; the figures above are of what was done before it",
            why.unwrap_or("by a signal")
        )));
    }
    Ok(())
}
