//! The words for the causes that findings name, shared by the experiments and by the
//! listener of a live stream so that the triage summary adds up findings of one cause,
//! and the units their counts are in.

/// Messages published before the subscription reached the publisher.
pub const SLOW_JOINER: &str = "slow joiner";
/// Holes inside a stream: a queue at its high-water mark dropped messages.
pub const HWM: &str = "high-water mark / slow consumer";
/// A sender with no high-water mark holding in memory what a peer has not read.
pub const HWM_MEMORY: &str = "no high-water mark: sender memory";
/// The end of a stream lost when the sender exits right after sending.
pub const FAST_QUIT: &str = "fast quit";
/// A stream that stopped before its end: a sender that quit fast or went silent.
pub const STOPPED: &str = "sender stopped / fast quit";
/// A sender gone silent, noticed only by a receive timeout.
pub const SENDER_SILENT: &str = "sender silent";
/// Latency growing behind a slower consumer.
pub const DEEP_QUEUE: &str = "deep queue";
/// Messages that arrived after a higher number.
pub const REORDERING: &str = "reordering";
/// Messages that arrived more than once.
pub const DUPLICATES: &str = "duplicates";
/// A sequence that went back to 0: the publisher started again.
pub const RESTART: &str = "publisher restart";
/// Times with nothing arriving.
pub const IDLE: &str = "idle periods";
/// Messages whose sequence number could not be read.
pub const UNREADABLE: &str = "unreadable messages";

/// The unit of a count of lost messages.
pub const LOST: &str = "messages lost";
