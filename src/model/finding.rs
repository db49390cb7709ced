//! What `zmqperf diagnose` (and a run's own checks) found: the severity, what was
//! measured, the timed gaps, the cause and the fix.

use crate::stats::GapPosition;
use crate::transport::Transport;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Behaviour worth knowing, nothing lost (e.g. PUSH blocked instead of dropping).
    Info,
    /// Messages were lost, or delayed far beyond the transport's own latency, or the
    /// experiment itself failed.
    Warning,
}

impl Severity {
    /// `info` or `warning`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
        }
    }
}

/// A measured value of a finding's evidence: a count, a number (with its unit in the
/// name, e.g. `subscription_ms`) or a short text (e.g. the socket options used).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Measure {
    /// A whole number (messages, bytes, sequence numbers).
    Count(u64),
    /// A measured quantity; always finite.
    Number(f64),
    /// A word or setting.
    Text(String),
}

impl From<u64> for Measure {
    fn from(v: u64) -> Self {
        Measure::Count(v)
    }
}

impl From<f64> for Measure {
    /// Not-finite values (which JSON cannot carry) become the text "n/a".
    fn from(v: f64) -> Self {
        if v.is_finite() {
            Measure::Number(v)
        } else {
            Measure::Text("n/a".to_string())
        }
    }
}

impl From<&str> for Measure {
    fn from(v: &str) -> Self {
        Measure::Text(v.to_string())
    }
}

/// A hole in a diagnosed stream with the times around it: when the last message before
/// it and the first after it arrived, in ms from the sender's first send.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct TimedGap {
    /// First missing sequence number.
    pub first_seq: u64,
    /// How many in a row are missing.
    pub count: u64,
    /// Start (slow joiner), middle (high-water mark) or end (fast quit) of the stream.
    pub position: GapPosition,
    /// Arrival of the message just before the hole, ms after the first send; None for a
    /// hole at the start.
    pub before_ms: Option<f64>,
    /// Arrival of the message just after the hole, ms after the first send; None for a
    /// hole at the end.
    pub after_ms: Option<f64>,
}

/// What one experiment of `zmqperf diagnose` found: what happened, the measured evidence,
/// the cause and the remedy.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// Stable key: experiment and variant, e.g. `slow-joiner/tcp`, `hwm/inproc`,
    /// `fast-quit/pushpull/tcp`.
    pub id: String,
    /// The experiment: slow-joiner, hwm, hwm-memory, fast-quit, sender-stops or deep-queue.
    pub experiment: String,
    /// The transport it ran over.
    pub transport: Transport,
    /// Info (worth knowing) or warning (messages lost or badly delayed, or the experiment
    /// failed).
    pub severity: Severity,
    /// One line, e.g. `PUB/SUB over tcp: 1,797 messages lost at the start (slow joiner)`.
    pub title: String,
    /// What happened, in plain words with the numbers.
    pub observed: String,
    /// Why it happens.
    pub cause: String,
    /// What to do about it: which option, which pattern.
    pub remedy: String,
    /// The measured values behind the words, by name; units are in the names
    /// (`_ms`, `_kib`, `_msgs_per_s`); counts are messages unless named otherwise.
    pub evidence: BTreeMap<String, Measure>,
    /// The holes in the main stream of the experiment, with times (at most 16).
    pub gaps: Vec<TimedGap>,
    /// Wall time of the experiment, seconds.
    pub wall_s: f64,
    /// Why the experiment could not run to its end, if it could not.
    pub error: Option<String>,
    /// The finding's line in the triage summary that leads the findings: its cause in a
    /// few words, what it cost and the fix in one line (None for a finding that names no
    /// cause, such as a failed experiment; absent from reports written before triage).
    #[serde(default)]
    pub triage: Option<Triage>,
}

/// One cause as the triage summary counts it. Findings of the same cause (the same
/// experiment over several transports, or one cause seen in a listened stream) share the
/// `cause` text, so the summary adds them up into one line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Triage {
    /// The cause in a few words, e.g. `slow joiner`, `high-water mark / slow consumer`,
    /// `sender stopped / fast quit`, `reordering`, `duplicates`, `publisher restart`.
    pub cause: String,
    /// Messages lost to this cause (0 for causes that lose none: reordering, idle periods).
    /// The summary puts the worst first by this number, then by `count`.
    pub lost: u64,
    /// How often the cause was seen, in `unit`s (equal to `lost` for a loss).
    pub count: u64,
    /// What `count` counts: `messages lost`, `messages reordered`, `restarts`, ...
    pub unit: String,
    /// The fix in one line; measured where the experiment measured it.
    pub fix: String,
}
