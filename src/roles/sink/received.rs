//! What PTMP's receiver took in and why it stopped: the figures the sink's loop hands
//! check_recv and check_sendrecv for their causes and report.

use crate::stats::{Ledger, LossSummary, Throughput};
use serde::Serialize;
use std::collections::BTreeMap;

/// Why the receiving stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    /// COUNT messages arrived.
    Count,
    /// The sender's last message (its header's end mark) arrived.
    EndMark,
    /// Nothing arrived for the timeout.
    Timeout,
    /// A stop signal (Ctrl-C, SIGTERM, SIGHUP) ended the receiving: the figures are of
    /// what arrived before it, and what was still to come is not counted as lost.
    Interrupted,
    /// A message broke the protocol (no measurement header, an unknown version): receiving
    /// stopped at it, at once.
    ProtocolError,
}

/// What came in, from PTMP's receiver (check_recv's and check_sendrecv's).
pub struct Received {
    pub ledger: Ledger,
    pub arrivals: u64,
    pub payload_bytes: u64,
    pub start_ns: u64,
    pub first_ns: Option<u64>,
    pub last_ns: u64,
    pub ended: Ended,
    pub ends: BTreeMap<u32, u64>,
    /// The first and the last message with a send time: (sequence, send_ns).
    pub stamps: Option<((u64, u64), (u64, u64))>,
    pub disconnected: Option<bool>,
    pub protocol_error: Option<String>,
    pub sightings: Option<crate::net::Sightings>,
    /// The first message's send time and its sender's socket-opened time (check_send's
    /// trailer), ns.
    pub first_sent: Option<(u64, u64)>,
    /// The sender's QUIT_DELAY_MS, from check_send's trailer in the first message.
    pub quit_delay_ms: Option<u64>,
    /// The stream's message format, told from its first message (None: nothing read).
    pub wire: Option<crate::ptmp_wire::Wire>,
}

impl Received {
    /// Nothing yet: receiving started at `start_ns`; `watched` when the sender's
    /// connections are watched (tcp and ipc), so whether it disconnected can be told.
    pub fn starting(start_ns: u64, watched: bool) -> Received {
        Received {
            ledger: Ledger::new(),
            arrivals: 0,
            payload_bytes: 0,
            start_ns,
            first_ns: None,
            last_ns: start_ns,
            ended: Ended::Timeout,
            ends: BTreeMap::new(),
            stamps: None,
            disconnected: watched.then_some(false),
            protocol_error: None,
            sightings: None,
            first_sent: None,
            quit_delay_ms: None,
            wire: None,
        }
    }

    /// The sender's pace over the messages that arrived, ns per message.
    pub fn sender_ns_per_msg(&self) -> Option<f64> {
        let ((s0, t0), (s1, t1)) = self.stamps?;
        (s1 > s0 && t1 >= t0).then(|| (t1 - t0) as f64 / (s1 - s0) as f64)
    }

    /// How long after its socket opened the sender sent the first message that arrived,
    /// ns: for a SUB, when its subscription had taken effect.
    pub fn joined_after_ns(&self) -> Option<f64> {
        self.first_sent
            .map(|(sent, opened)| sent.saturating_sub(opened) as f64)
    }

    /// From the first message to the last.
    pub fn delivered(&self) -> Throughput {
        Throughput {
            messages: self.arrivals,
            payload_bytes: self.payload_bytes,
            start_ns: self.first_ns.unwrap_or(self.start_ns),
            end_ns: if self.first_ns.is_some() {
                self.last_ns
            } else {
                self.start_ns
            },
        }
    }

    /// The ledger's figures: a stream whose end mark came should have had every number up
    /// to it; one that stopped, `length` numbers (when known); otherwise the highest seen.
    pub fn summary(&self, length: Option<u64>) -> LossSummary {
        let mut total = LossSummary::default();
        for (id, l) in self.ledger.streams() {
            let expected = match (self.ends.get(&id), self.ended) {
                (Some(&last), _) => Some(last + 1),
                (None, Ended::Timeout) => length,
                (None, _) => None,
            };
            total.add(&l.summary(expected));
        }
        if self.ledger.streams().is_empty() {
            total.expected = length.unwrap_or(0);
            total.lost = total.expected;
            total.lost_at_end = total.expected;
        }
        total
    }
}
