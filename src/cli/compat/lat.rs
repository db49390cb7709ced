//! The latency pair: local_lat, remote_lat and inproc_lat, run and printed.

use super::args::{InprocLat, LocalLat, RemoteLat};
use super::peer::{peer_endpoint, peer_words, with_peer};
use super::{
    announce, echo_mode, endpoint, interrupted_after_print, interval, network, print, say_drift,
    secrets, security, timeout, with_interval_lines,
};
use zmqperf::endpoint::Side;
use zmqperf::error::{Error, Result};
use zmqperf::parse::{parse_count, parse_size};
use zmqperf::report::compat as out;
use zmqperf::scenarios::compat::{self, EchoMode, LatConfig};
use zmqperf::zmq;

/// `zmqperf local_lat`.
pub(in crate::cli) fn local_lat(a: &LocalLat, ctx: &zmq::Context) -> Result<()> {
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
        interval: None,
        endpoint: ep.clone(),
        security: security(&a.sec, None)?,
        secrets: secrets(&a.sec, security(&a.sec, None)?)?,
    };
    let r = compat::local_lat(ctx, &cfg, |b| announce("local_lat", &ep, b))?;
    print(
        &a.common,
        || out::json(r.command, &r, network(&r.endpoint)),
        String::new(),
        || out::echo_detail(&r),
    );
    interrupted_after_print(None)
}

/// `zmqperf remote_lat`.
pub(in crate::cli) fn remote_lat(a: &RemoteLat, ctx: &zmq::Context) -> Result<()> {
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
        interval: interval(&a.every)?,
        security: security(&a.sec, None)?,
        secrets: secrets(&a.sec, security(&a.sec, None)?)?,
    };
    let r = with_interval_lines(cfg.interval, || compat::remote_lat(ctx, &cfg))?;
    if cfg.instrumented && !r.header && cfg.size >= zmqperf::header::HEADER_LEN {
        zmqperf::errln!(
            "zmqperf: warning: the echo side's first reply did not carry the request's bytes back (an echo that answers with bytes of its own): the replies were timed but not checked",
        );
    }
    print(
        &a.common,
        || out::json(r.command, &r, network(&r.endpoint)),
        out::latency_lines(&r),
        || out::latency_detail(&r),
    );
    say_drift(r.intervals.as_ref());
    if let Some(note) = first_wait_note(&r) {
        zmqperf::errln!("zmqperf: note: {note}");
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

/// `zmqperf inproc_lat`.
pub(in crate::cli) fn inproc_lat(a: &InprocLat) -> Result<()> {
    zmqperf::runner::catch_signals();
    let size = parse_size("<message-size>", &a.message_size)?;
    let count = parse_count("<roundtrip-count>", &a.roundtrip_count)?;
    let (every, wait) = (interval(&a.every)?, timeout(&a.common)?);
    let r = with_interval_lines(every, || {
        compat::inproc_lat(size, count, wait, !a.plain, echo_mode(&a.echo), every)
    })?;
    print(
        &a.common,
        || out::json(r.command, &r, None),
        out::latency_lines(&r),
        || out::latency_detail(&r),
    );
    say_drift(r.intervals.as_ref());
    cut_short_after_print(&r)
}
