//! The throughput pair: local_thr, remote_thr and inproc_thr, run and printed.

use super::args::{InprocThr, LocalThr, PatternArg, RemoteThr, ThrOpts};
use super::peer::{peer_endpoint, peer_words, with_peer};
use super::{
    announce, caveat_if_short, endpoint, interrupted_after_print, interval, network, pattern,
    print, say_drift, secrets, security, timeout, with_interval_lines,
};
use zmqperf::endpoint::Side;
use zmqperf::error::{Error, Result};
use zmqperf::parse::{parse_count, parse_hwm, parse_size};
use zmqperf::report::compat as out;
use zmqperf::scenarios::compat::{self, ThrConfig};
use zmqperf::zmq;

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
pub(in crate::cli) fn local_thr(a: &LocalThr, ctx: &zmq::Context) -> Result<()> {
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
        secrets: secrets(&a.sec, security(&a.sec, a.enable_curve.as_ref())?)?,
        interval: interval(&a.every)?,
    };
    let r = with_interval_lines(cfg.interval, || {
        compat::local_thr(ctx, &cfg, |b| announce("local_thr", &ep, b))
    })?;
    caveat_if_short(r.elapsed_ns);
    if r.arrivals != r.distinct {
        zmqperf::errln!(
            "zmqperf: warning: {} messages arrived: {} distinct and {} duplicates (the throughput counts each message once; the sender or a device between sent some twice)",
            r.arrivals,
            r.distinct,
            r.arrivals - r.distinct
        );
    }
    print(
        &a.common,
        || out::json(r.side.command, &r, network(&r.side.endpoint)),
        out::throughput_lines(&r),
        || out::receiver_detail(&r),
    );
    say_drift(r.intervals.as_ref());
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
        zmqperf::errln!(
            "zmqperf: note: the sender's stream had {} messages, fewer than <message-count> {}: all of them arrived",
            zmqperf::units::grouped(n),
            zmqperf::units::grouped(cfg.count)
        );
    }
    Ok(())
}

/// `zmqperf remote_thr`.
pub(in crate::cli) fn remote_thr(a: &RemoteThr, ctx: &zmq::Context) -> Result<()> {
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
        secrets: secrets(&a.sec, security(&a.sec, a.enable_curve.as_ref())?)?,
        interval: None,
    };
    let r = compat::remote_thr(ctx, &cfg)?;
    print(
        &a.common,
        || out::json(r.side.command, &r, network(&r.side.endpoint)),
        String::new(),
        || out::sender_detail(&r),
    );
    interrupted_after_print(r.cut_short.as_deref())?;
    if r.peer_closed == Some(false) {
        return Err(Error::Unconfirmed(format!(
            "all {} messages left, but the receiver did not hang up within {} of the last one: it may not have read them (a receiver expecting more messages, one that stopped reading, or a long-lived service that never closes; its own output is the verdict)",
            r.side.message_count,
            zmqperf::error::fmt_duration(cfg.timeout)
        )));
    }
    Ok(())
}

/// `zmqperf inproc_thr`.
pub(in crate::cli) fn inproc_thr(a: &InprocThr) -> Result<()> {
    zmqperf::runner::catch_signals();
    let size = parse_size("<message-size>", &a.message_size)?;
    let count = parse_count("<message-count>", &a.message_count)?;
    let stamp_every = parse_count("--stamp-every", &a.send.stamp_every)?;
    let (every, wait) = (interval(&a.every)?, timeout(&a.common)?);
    let (r, s) = with_interval_lines(every, || {
        compat::inproc_thr(size, count, wait, !a.send.plain, stamp_every, every)
    })?;
    caveat_if_short(r.elapsed_ns);
    print(
        &a.common,
        || {
            let mut v = serde_json::to_value(&r).expect("serialisable");
            v["sender"] = serde_json::to_value(&s).expect("serialisable");
            out::json("inproc_thr", &v, None)
        },
        out::throughput_lines(&r),
        || format!("{}{}", out::receiver_detail(&r), out::sender_detail(&s)),
    );
    say_drift(r.intervals.as_ref());
    interrupted_after_print(r.cut_short.as_deref().or(s.cut_short.as_deref()))
}
