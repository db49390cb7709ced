//! The libzmq-compatible perf commands: local_lat, remote_lat, local_thr, remote_thr,
//! inproc_lat and inproc_thr, as library functions that return their results.
//!
//! Same sockets, sides and formulas as libzmq's perf tools; the measurement header is used
//! only when the peer speaks it, so the C tools work against these and the other way round.

mod inproc;
mod lat;
mod thr;

pub use inproc::{inproc_lat, inproc_thr};
pub use lat::{local_lat, remote_lat, EchoMode, EchoResult, LatConfig, LatencyResult};
pub use thr::{
    cut_short_cause, local_thr, loss_cause, remote_thr, Pattern, ReceiverResult, SenderResult,
    ThrConfig,
};

use std::time::Duration;

/// Default wait for the peer, per message.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
