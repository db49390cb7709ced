//! The libzmq-compatible perf commands: local_lat, remote_lat, local_thr, remote_thr,
//! inproc_lat and inproc_thr, as library functions that return their results.
//!
//! Same sockets, sides and formulas as libzmq's perf tools; the measurement header is used
//! only when the peer speaks it, so the C tools work against these and the other way round.
//! Each is a front-end on a role (`roles::run_here`): the one socket it opens and how it
//! runs it are here, shared by both pairs.

mod inproc;
mod lat;
mod thr;

pub use inproc::{inproc_lat, inproc_thr};
pub use lat::{local_lat, remote_lat, EchoMode, EchoResult, LatConfig, LatencyResult};
pub use thr::{
    cut_short_cause, local_thr, loss_cause, remote_thr, Pattern, ReceiverResult, SenderResult,
    ThrConfig, ThrSide,
};

use crate::endpoint::{Endpoint, Side};
use crate::error::Result;
use crate::net::security::{CurveKeys, Mechanism};
use crate::roles::{run_here, NodeSpec, RoleReport, SockPlan};
use crate::topology::{SocketOptions, SocketType};
use crate::zmq;
use std::time::Duration;

/// Default wait for the peer, per message.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// What a compatible command's pair shares beyond its mechanism: CURVE keys of its own
/// (None: those of libzmq's perf tools) and the GSSAPI service principal (None: zmqperf's).
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    pub curve_keys: Option<CurveKeys>,
    pub gssapi_principal: Option<String>,
}

/// The one socket of a compatible command, bound or connected as the user said.
fn socket(
    kind: SocketType,
    ep: &Endpoint,
    side: Side,
    mut options: SocketOptions,
    security: Mechanism,
    secrets: &Secrets,
) -> SockPlan {
    if security != Mechanism::Null {
        options.security = Some(security);
        // The keys of libzmq's local_thr/remote_thr, so either side can be a C tool.
        options.curve_keys = (security == Mechanism::Curve).then(|| {
            secrets
                .curve_keys
                .clone()
                .unwrap_or_else(CurveKeys::libzmq_perf_tools)
        });
        options.gssapi_principal = (security == Mechanism::Gssapi)
            .then(|| secrets.gssapi_principal.clone())
            .flatten();
    }
    SockPlan::single(kind, ep, side, options)
}

/// The endpoint to report: the one bound (with the real port), or the one connected to.
fn reported(bound: &[String], ep: &Endpoint) -> String {
    bound
        .first()
        .cloned()
        .unwrap_or_else(|| ep.as_str().to_string())
}

/// Runs a compatible command's node on this thread; `on_ready` gets the endpoint to report
/// (the one bound, or the one connected to) before the run starts.
fn run_reported(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ep: &Endpoint,
    on_ready: impl FnOnce(&str),
) -> Result<(RoleReport, String)> {
    let mut endpoint = String::new();
    let mut on_ready = Some(on_ready);
    let r = run_here(ctx, spec, |b| {
        endpoint = reported(b, ep);
        if let Some(f) = on_ready.take() {
            f(&endpoint);
        }
    })?;
    Ok((r, endpoint))
}
