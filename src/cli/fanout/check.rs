//! The fan-out flags checked and turned into library values: whole numbers with a reason,
//! the process count, the endpoint (tcp:// or ipc:// only), the hosts of --sub-hosts and
//! the publisher's settings.

use super::args::{Schedule, SpreadArgs};
use std::time::Duration;
use zmqperf::endpoint::{Endpoint, Side, Transport};
use zmqperf::error::{Error, Result};
use zmqperf::header::HEADER_LEN;
use zmqperf::parse::{parse_count, parse_duration, parse_size};
use zmqperf::scenarios::fanout::{self, PubConfig};

/// The longest interval between ticks, ms: a week.
const MAX_INTERVAL_MS: u64 = 7 * 24 * 3600 * 1000;

/// The hosts of `--hosts` and `--sub-hosts`, checked.
pub(super) fn spread(a: &SpreadArgs) -> Result<fanout::Spread> {
    let (Some(file), Some(list)) = (&a.hosts, &a.sub_hosts) else {
        return Ok(Default::default());
    };
    let hosts = zmqperf::runner::hosts::Hosts::load(file)?;
    let names: Vec<String> = list.split(',').map(|n| n.trim().to_string()).collect();
    for n in &names {
        hosts.get("--sub-hosts", n)?;
    }
    Ok(fanout::Spread { hosts, names })
}

/// A whole number for `flag`, at least 1 (or 0 when `zero` is allowed), with a message
/// that says what the number is for.
pub(super) fn number(flag: &str, s: &str, zero: bool, what: &str) -> Result<u64> {
    let t = s.trim();
    if t.starts_with('-') {
        return Err(Error::invalid(
            flag,
            s,
            format!("cannot be negative; {what}"),
        ));
    }
    let digits: String = t.chars().filter(|c| *c != '_' && *c != ',').collect();
    if zero && !digits.is_empty() && digits.chars().all(|c| c == '0') {
        return Ok(0);
    }
    parse_count(flag, s).map_err(|e| match e {
        Error::InvalidValue { reason, .. } => Error::invalid(flag, s, format!("{reason}; {what}")),
        other => other,
    })
}

pub(super) fn small(flag: &str, s: &str, max: u32, what: &str) -> Result<u32> {
    let n = number(flag, s, false, what)?;
    if n > max as u64 {
        return Err(Error::invalid(flag, s, format!("at most {max}; {what}")));
    }
    Ok(n as u32)
}

pub(super) fn procs(v: &Option<String>) -> Result<u32> {
    match v {
        Some(s) => small(
            "-c",
            s,
            fanout::MAX_PROCESSES,
            "run at least 1 subscriber process, e.g. one per CPU",
        ),
        None => Ok(std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1)),
    }
}

pub(super) fn endpoint(s: &str, side: Side) -> Result<Endpoint> {
    // The subscribers run in other processes: only tcp:// and ipc:// reach them.
    let scheme = s.split_once("://").map(|(t, _)| t.to_ascii_lowercase());
    if let Some(t) = scheme.filter(|t| !matches!(t.as_str(), "tcp" | "ipc" | "inproc")) {
        return Err(Error::Endpoint {
            endpoint: s.to_string(),
            reason: format!(
                "fanout does not run over {t}://; use tcp:// (e.g. tcp://127.0.0.1:*) or ipc:// (e.g. ipc:///tmp/fan.sock)"
            ),
        });
    }
    let ep = Endpoint::parse(s, side)?;
    if ep.transport() == Transport::Inproc {
        return Err(Error::Endpoint {
            endpoint: s.to_string(),
            reason: "inproc:// reaches only sockets of one process; the subscribers run in other processes, so use ipc:// or tcp://".into(),
        });
    }
    Ok(ep)
}

pub(super) fn exe() -> Result<std::path::PathBuf> {
    zmqperf::runner::this_exe()
}

/// The publisher's settings from the schedule and the endpoint.
/// The time between ticks of `-t`: milliseconds, or a duration with its unit.
fn tick_interval(s: &str) -> Result<Duration> {
    let with_unit = s.trim().ends_with(|c: char| c.is_ascii_alphabetic());
    let interval = if with_unit {
        parse_duration("-t", s)?
    } else {
        Duration::from_millis(number(
            "-t",
            s,
            true,
            "the interval is in milliseconds (or give its unit: 1s, 250ms): 0 sends as fast as possible, 1000 is one tick a second",
        )?)
    };
    if interval > Duration::from_millis(MAX_INTERVAL_MS) {
        return Err(Error::invalid(
            "-t",
            s,
            format!("at most {MAX_INTERVAL_MS} ms (a week) between ticks"),
        ));
    }
    Ok(interval)
}

/// The ticks to send: `-p`, or `--duration` over the interval.
fn passes(s: &Schedule, interval: Duration) -> Result<u64> {
    let Some(d) = &s.duration else {
        return number("-p", &s.passes, false, "run at least 1 pass");
    };
    let length = parse_duration("--duration", d)?;
    if interval.is_zero() {
        return Err(Error::invalid(
            "--duration",
            d,
            "with -t 0 the ticks go out back to back and take no set time; give -p, or -t with the time between ticks",
        ));
    }
    let n = (length.as_secs_f64() / interval.as_secs_f64()).round() as u64;
    if n == 0 {
        return Err(Error::invalid(
            "--duration",
            d,
            format!(
                "shorter than one tick ({}); give at least -t",
                zmqperf::error::fmt_duration(interval)
            ),
        ));
    }
    Ok(n)
}

pub(super) fn pub_config(s: &Schedule, ep: Endpoint, timeout: &str) -> Result<PubConfig> {
    let interval = tick_interval(&s.interval)?;
    let per_tick = number("-n", &s.per_tick, false, "send at least 1 message per tick")?;
    let passes = passes(s, interval)?;
    let warmup = number("--warmup", &s.warmup, true, "give 0 or more warm-up ticks")?;
    if per_tick
        .checked_mul(passes)
        .is_none_or(|t| t > i64::MAX as u64)
    {
        return Err(Error::invalid(
            "-n x -p",
            &format!("{per_tick} x {passes}"),
            "too many messages",
        ));
    }
    let size = parse_size("--size", &s.size)?;
    if size < HEADER_LEN {
        return Err(Error::invalid(
            "--size",
            &s.size,
            format!("every message carries the {HEADER_LEN}-byte measurement header; use --size {HEADER_LEN} or more"),
        ));
    }
    let io_threads = small("--io-threads", &s.io_threads, 64, "use 1 to 64 io threads")?;
    Ok(PubConfig {
        endpoint: ep,
        interval,
        per_tick,
        passes,
        warmup,
        size,
        subscribers: None,
        wait: Duration::from_secs(1),
        timeout: parse_duration("--timeout", timeout)?,
        linger: Duration::from_secs(10),
        hwm: None,
        io_threads: io_threads as i32,
        stream_id: std::process::id(),
        lossy: s.lossy,
    })
}
