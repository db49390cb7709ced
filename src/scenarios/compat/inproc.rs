//! inproc_lat and inproc_thr: both sides of a pair in one process, on two threads,
//! sharing one context (as libzmq's inproc tools do).

use super::lat::{local_lat, remote_lat, EchoMode, LatConfig, LatencyResult};
use super::thr::{local_thr, remote_thr, Pattern, ReceiverResult, SenderResult, ThrConfig};
use crate::endpoint::{Endpoint, Side};
use crate::error::{Error, Result};
use crate::net::security::Mechanism;
use crate::zmq;
use std::thread;
use std::time::Duration;

fn join<T>(h: thread::JoinHandle<Result<T>>) -> Result<T> {
    h.join()
        .unwrap_or_else(|_| Err(Error::Internal("the peer thread panicked".into())))
}

/// The error of an in-process pair: when the measuring side found no peer (or one that
/// stopped) and the peer thread failed on its own (an allocation, a ZeroMQ call), the peer's
/// error is the cause; "start the other side" would be wrong, it is in this process.
fn pair_error(measuring: Error, peer: Option<Error>) -> Error {
    let waited = matches!(
        measuring,
        Error::PeerAbsent { .. } | Error::PeerSilent { .. } | Error::PeerStopped { .. }
    );
    match peer {
        Some(p) if waited && !matches!(p, Error::PeerAbsent { .. } | Error::PeerStopped { .. }) => {
            p
        }
        _ => measuring,
    }
}

/// inproc_lat: REQ binds `inproc://lat_test` and measures; a REP thread connects and echoes.
pub fn inproc_lat(
    size: usize,
    count: u64,
    timeout: Duration,
    instrumented: bool,
    echo: EchoMode,
    interval: Option<Duration>,
) -> Result<LatencyResult> {
    let ctx = zmq::Context::new();
    let ep = Endpoint::parse("inproc://lat_test", Side::Bind)?;
    let echo_cfg = LatConfig {
        security: Mechanism::Null,
        secrets: Default::default(),
        endpoint: ep.clone(),
        side: Side::Connect,
        size,
        count,
        timeout,
        instrumented: false,
        echo,
        interval: None,
    };
    let meas_cfg = LatConfig {
        security: Mechanism::Null,
        secrets: Default::default(),
        side: Side::Bind,
        instrumented,
        interval,
        ..echo_cfg.clone()
    };
    let c2 = ctx.clone();
    let worker = thread::spawn(move || local_lat(&c2, &echo_cfg, |_| ()));
    let measured = remote_lat(&ctx, &meas_cfg);
    let echoed = join(worker);
    let r = match (measured, echoed) {
        (Ok(r), Ok(_)) => r,
        // A signal ended both: the measuring side's round trips are the result.
        (Ok(r), Err(Error::Interrupted(_))) => r,
        (Err(m), e) => return Err(pair_error(m, e.err())),
        (Ok(_), Err(e)) => return Err(e),
    };
    // The measuring side is remote_lat's; the result is inproc_lat's.
    Ok(LatencyResult {
        command: "inproc_lat",
        ..r
    })
}

/// inproc_thr: PULL binds `inproc://thr_test` and measures; a PUSH thread connects and sends.
pub fn inproc_thr(
    size: usize,
    count: u64,
    timeout: Duration,
    instrumented: bool,
    stamp_every: u64,
    interval: Option<Duration>,
) -> Result<(ReceiverResult, SenderResult)> {
    let ctx = zmq::Context::new();
    let ep = Endpoint::parse("inproc://thr_test", Side::Bind)?;
    let recv_cfg = ThrConfig {
        security: Mechanism::Null,
        secrets: Default::default(),
        endpoint: ep,
        side: Side::Bind,
        size,
        count,
        timeout,
        pattern: Pattern::PushPull,
        instrumented,
        stamp_every,
        hwm: None,
        lossy: false,
        stream_id: 0,
        interval,
    };
    let send_cfg = ThrConfig {
        security: Mechanism::Null,
        secrets: Default::default(),
        side: Side::Connect,
        interval: None,
        ..recv_cfg.clone()
    };
    let c2 = ctx.clone();
    let worker = thread::spawn(move || remote_thr(&c2, &send_cfg));
    let received = local_thr(&ctx, &recv_cfg, |_| ());
    let sent = join(worker);
    match (received, sent) {
        (Ok(r), Ok(s)) => Ok((r, s)),
        (Err(m), s) => Err(pair_error(m, s.err())),
        (Ok(_), Err(e)) => Err(e),
    }
}
