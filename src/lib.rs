//! zmqperf: measure ZeroMQ latency, throughput and delivery.
//!
//! The library core: endpoints and parsing, the measurement header, the clock, mergeable
//! statistics, the libzmq-compatible perf commands, the suite and the diagnostic
//! experiments. It knows nothing of the command line or of output formats beyond the
//! compatible lines and the reports in [`report`].

pub mod build_id;
pub mod child;
pub mod clock;
pub mod compare;
pub mod elf;
pub mod endpoint;
pub mod error;
pub mod header;
pub mod host;
pub mod interrupt;
pub mod k8s;
pub mod model;
pub mod net;
pub mod parse;
pub mod peers;
pub mod progress;
pub mod ptmp_wire;
pub mod report;
pub mod roles;
pub mod runner;
pub mod scenarios;
pub mod stats;
pub mod store;
pub mod term;
pub mod topology;
pub mod transport;
pub mod units;
pub mod zmq;

// libzmq, linked in statically, calls libsodium for CURVE: keep its library on the link line.
use libsodium_sys as _;

pub use error::{Error, Result};
/// The raw message of the hot loops lives with the rest of the libzmq layer.
pub use zmq::msg;

/// This build's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The commit this build is of (git's short id), when it was built from a git checkout or
/// given `ZMQPERF_COMMIT`.
pub const COMMIT: Option<&str> = option_env!("ZMQPERF_COMMIT");

/// The version of the linked libzmq, as "4.3.4".
pub fn libzmq_version() -> String {
    let (a, b, c) = zmq::version();
    format!("{a}.{b}.{c}")
}
