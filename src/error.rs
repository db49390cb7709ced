//! Typed errors of the library, each with the exit code the binary returns for it.

use crate::zmq;
use std::time::Duration;

/// Everything that can end a zmqperf command early.
///
/// Every message names the input or event at fault and, where there is one, the fix.
/// An error of a part that sits above this file (the history store) and knows its own exit
/// code; it comes in as [`Error::Store`] or [`Error::Import`] through the `From` its part
/// gives, so this file needs to know nothing of it.
pub trait CodedError: std::error::Error + Send + Sync + 'static {
    /// The exit code of the binary for this error.
    fn exit_code(&self) -> i32;
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A value given on the command line or in a file is not acceptable.
    #[error("invalid {what} '{value}': {reason}")]
    InvalidValue {
        what: String,
        value: String,
        reason: String,
    },
    /// An endpoint that is malformed or uses a transport zmqperf does not support.
    #[error("bad endpoint '{endpoint}': {reason}")]
    Endpoint { endpoint: String, reason: String },
    /// Binding failed because the address is taken.
    #[error("cannot bind {endpoint}: address already in use. {holder}")]
    AddressInUse { endpoint: String, holder: String },
    /// No peer showed up within the timeout.
    #[error("no peer within {}: nothing arrived on {endpoint}. Start the other side ({peer}) or raise {raise}", fmt_duration(*.timeout))]
    PeerAbsent {
        endpoint: String,
        peer: String,
        timeout: Duration,
        /// The command's own way to wait longer (`--timeout`; check_recv's TIMEOUT).
        raise: String,
    },
    /// Nothing arrived within the timeout, though something was seen on the connection:
    /// a peer that completed the handshake and sent nothing, or a connection that never
    /// completed one.
    #[error("nothing arrived on {endpoint} within {}: {seen}", fmt_duration(*.timeout))]
    PeerSilent {
        endpoint: String,
        seen: String,
        timeout: Duration,
    },
    /// A sender knows that no receiver was connected while it sent: its messages went to no
    /// one (the report is printed first).
    #[error("{0}")]
    NoReceiver(String),
    /// A sender's messages all left, but the receiver never confirmed the end by hanging up:
    /// it may not have read them (the report is printed first).
    #[error("{0}")]
    Unconfirmed(String),
    /// The peer went quiet part-way through the run.
    #[error("peer stopped: {done} of {expected} {unit} done on {endpoint}, then nothing for {}{detail}. Check that the other side is still running and was given the same message count", fmt_duration(*.timeout))]
    PeerStopped {
        endpoint: String,
        done: u64,
        expected: u64,
        unit: String,
        timeout: Duration,
        detail: String,
    },
    /// The peer sent a message that does not fit the run (libzmq's tools check the size too).
    #[error("message of incorrect size received: expected {expected} B, got {got} B (message #{index}). {hint}")]
    WrongSize {
        expected: usize,
        got: usize,
        index: u64,
        /// What to do: give both sides the same size, or find what else is connected.
        hint: String,
    },
    /// The stream ended (its last message arrived) with messages missing.
    #[error("{lost} of {expected} messages lost (at the start {at_start}, in the middle {in_middle}, at the end {at_end}). Likely cause: {cause}")]
    Lost {
        lost: u64,
        expected: u64,
        at_start: u64,
        in_middle: u64,
        at_end: u64,
        /// The likely cause of the holes where they are, for the socket pattern.
        cause: String,
    },
    /// A stream stopped before its end mark came: what arrived is printed first.
    #[error("stream cut short: {detail}. {received} of {expected} messages arrived; {}. Likely cause: {cause}", places(*received, *expected, *at_start, *in_middle, *at_end))]
    CutShort {
        detail: String,
        received: u64,
        expected: u64,
        at_start: u64,
        in_middle: u64,
        at_end: u64,
        cause: String,
    },
    /// The peer broke the protocol in some other way: a message that does not fit the run
    /// on the measured sockets, or a peer that did not take part as the run needs.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// A node lost its runner: the control channel closed, or the start never came or came
    /// out of order (shown and coded as a protocol error).
    #[error("protocol error: {0}")]
    RunnerGone(String),
    /// A node, a peer process or a host's launcher ended, or answered out of turn, before it
    /// gave what the run waits for (shown and coded as a protocol error).
    #[error("protocol error: {0}")]
    NodeGone(String),
    /// An internal slip: a thread that panicked, a socket or node set up without what it
    /// needs (shown and coded as a protocol error).
    #[error("protocol error: {0}")]
    Internal(String),
    /// A ZeroMQ call failed.
    #[error("{op} failed: {source}")]
    Zmq {
        op: String,
        #[source]
        source: zmq::Error,
    },
    /// The history database failed (a `store::StoreError`).
    #[error("{0}")]
    Store(Box<dyn CodedError>),
    /// `zmqperf import` refused a file, or the history refused the run in it (a
    /// `store::ImportError`).
    #[error("{0}")]
    Import(Box<dyn CodedError>),
    /// A comparison found a case that regressed past the threshold (the report is printed first).
    #[error("{0}")]
    Regressed(String),
    /// The run was interrupted (Ctrl-C, SIGTERM or SIGHUP); what was done is printed and
    /// recorded first.
    #[error("interrupted: {0}")]
    Interrupted(String),
    /// Every case of a run failed (the report with the reasons is printed first).
    #[error("{0}")]
    AllFailed(String),
    /// Some cases of a run failed, others were measured (the report is printed first).
    #[error("{0}")]
    SomeFailed(String),
    /// A comparison gate could not judge run B whole (the report is printed first).
    #[error("{0}")]
    Incomplete(String),
    /// A comparison gate found a figure whose interval is too wide to tell whether it
    /// regressed past the threshold (the report is printed first).
    #[error("{0}")]
    Inconclusive(String),
    /// Fewer peers joined than the run needs (subscribers that never subscribed).
    #[error("{0}")]
    Shortfall(String),
    /// A node of a run failed (its own error, whose exit code is kept), or died, was killed
    /// by a signal, or overran its time and was stopped (exit 20).
    #[error("{0}")]
    Node(NodeFailure),
    /// An I/O error outside ZeroMQ.
    #[error("{op}: {source}")]
    Io {
        op: String,
        #[source]
        source: std::io::Error,
    },
}

/// The exit code of a node that died, was killed by a signal, or overran and was stopped.
pub const NODE_LOST: i32 = 20;

/// How a node of a run ended without its report, as the runner keeps it: what happened
/// (naming the node and the cause) and the exit code that stands for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeFailure {
    /// "node subs[2] (pid 7835) died: killed by signal 9 (SIGKILL)", "node sink failed: ...".
    pub what: String,
    /// The node's own error's exit code, or [`NODE_LOST`].
    pub code: i32,
}

impl NodeFailure {
    /// The node reported (or returned) an error: its message and exit code are kept.
    pub fn failed(node: &str, e: &Error) -> Self {
        match e {
            Error::Node(f) => f.clone(),
            e => NodeFailure {
                what: format!("{node} failed: {e}"),
                code: e.exit_code(),
            },
        }
    }

    /// The node reported an error over the control protocol (a child process).
    pub fn reported(node: &str, message: &str, code: i32) -> Self {
        NodeFailure {
            what: format!("{node} failed: {message}"),
            code,
        }
    }

    /// The node died, was killed or overran: `why` completes "node X ...".
    pub fn lost(node: &str, why: impl std::fmt::Display) -> Self {
        NodeFailure {
            what: format!("{node} {why}"),
            code: NODE_LOST,
        }
    }
}

impl std::fmt::Display for NodeFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what)
    }
}

impl From<NodeFailure> for Error {
    fn from(f: NodeFailure) -> Self {
        Error::Node(f)
    }
}

impl Error {
    /// The process exit code for this error. Each kind has its own so scripts can branch on it.
    ///
    /// 2 is reserved for command-line usage errors (missing arguments, unknown flags).
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::InvalidValue { .. } => 3,
            Error::Endpoint { .. } => 4,
            Error::AddressInUse { .. } => 5,
            Error::PeerAbsent { .. } | Error::PeerSilent { .. } | Error::NoReceiver(_) => 6,
            Error::PeerStopped { .. } | Error::Unconfirmed(_) => 7,
            Error::WrongSize { .. } => 8,
            Error::Protocol(_) | Error::RunnerGone(_) | Error::NodeGone(_) | Error::Internal(_) => {
                9
            }
            Error::Zmq { .. } => 10,
            Error::Io { .. } => 11,
            Error::Lost { .. } => 12,
            Error::Store(e) => e.exit_code(),
            Error::Import(e) => e.exit_code(),
            Error::Regressed(_) => 15,
            Error::Shortfall(_) => 16,
            Error::CutShort { .. } => 17,
            Error::Incomplete(_) => 18,
            Error::AllFailed(_) => 19,
            Error::Inconclusive(_) => 22,
            Error::SomeFailed(_) => 23,
            Error::Node(f) => f.code,
            // 128 + the signal (SIGINT, SIGTERM or SIGHUP), as shells report it.
            Error::Interrupted(_) => crate::interrupt::interrupted_code(),
        }
    }

    /// Shorthand for an [`Error::InvalidValue`].
    pub fn invalid(what: &str, value: &str, reason: impl Into<String>) -> Self {
        Error::InvalidValue {
            what: what.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// Wraps a zmq error with the name of the failed operation.
impl From<zmq::CallFailed> for Error {
    fn from(e: zmq::CallFailed) -> Self {
        Error::Zmq {
            op: e.op.to_string(),
            source: e.source,
        }
    }
}

pub(crate) fn zmq_err(op: &str) -> impl FnOnce(zmq::Error) -> Error + '_ {
    move |source| Error::Zmq {
        op: op.to_string(),
        source,
    }
}

/// Where a cut-short stream lost its messages; all three 0 with messages missing is a stream
/// without sequence numbers, whose holes have no place.
fn places(received: u64, expected: u64, start: u64, middle: u64, end: u64) -> String {
    if start + middle + end == 0 && received < expected {
        return format!(
            "{} missing, which cannot be placed without sequence numbers",
            expected - received
        );
    }
    format!("lost at the start {start}, in the middle {middle}, at the end {end}")
}

/// Formats a duration the way the error messages show it (`30 s`, `250 ms`).
pub fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms >= 1000 && ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else if ms >= 1000 {
        format!("{:.1} s", d.as_secs_f64())
    } else {
        format!("{ms} ms")
    }
}

/// The library's result type.
pub type Result<T> = std::result::Result<T, Error>;
