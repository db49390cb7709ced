//! The words for what findings name, so that the triage summary adds up findings of one
//! cause, and the units their counts are in. The causes of lost messages are those of the
//! one rule (`stats::cause::Cause`), named as every other command names them; the rest
//! are what diagnose finds besides loss.

use crate::stats::Cause;

/// Messages published before the subscription reached the publisher.
pub const SLOW_JOINER: &str = Cause::SlowJoiner.name();
/// Holes inside a stream: a queue at its high-water mark dropped messages.
pub const HWM: &str = Cause::HighWaterMark.name();
/// A sender with no high-water mark holding in memory what a peer has not read.
pub const HWM_MEMORY: &str = "no high-water mark: sender memory";
/// The end of a stream lost when the sender exits right after sending.
pub const FAST_QUIT: &str = Cause::FastQuit.name();
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
