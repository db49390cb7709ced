//! Message and payload rates over a time span.

use serde::{Deserialize, Serialize};

/// Messages counted over a span of the monotonic clock.
///
/// Used apart for the sender's admission rate and the receiver's delivered rate.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct Throughput {
    /// Messages counted.
    pub messages: u64,
    /// Payload bytes counted (ZeroMQ framing not included).
    pub payload_bytes: u64,
    /// Clock at the start of the span, ns.
    pub start_ns: u64,
    /// Clock at the end of the span, ns.
    pub end_ns: u64,
}

impl Throughput {
    /// Length of the span in ns.
    pub fn elapsed_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }

    /// Messages per second over the span (0 for an empty span).
    pub fn msgs_per_sec(&self) -> f64 {
        match self.elapsed_ns() {
            0 => 0.0,
            ns => self.messages as f64 * 1e9 / ns as f64,
        }
    }

    /// Payload megabits (10^6 bits) per second.
    pub fn mbit_per_sec(&self) -> f64 {
        match self.elapsed_ns() {
            0 => 0.0,
            ns => self.payload_bytes as f64 * 8.0 * 1e3 / ns as f64,
        }
    }

    /// Combines two spans measured on the same host clock: counts add, the span covers both.
    pub fn merge(&mut self, other: &Throughput) {
        if other.messages == 0 && other.elapsed_ns() == 0 {
            return;
        }
        if self.messages == 0 && self.elapsed_ns() == 0 {
            *self = *other;
            return;
        }
        self.messages += other.messages;
        self.payload_bytes += other.payload_bytes;
        self.start_ns = self.start_ns.min(other.start_ns);
        self.end_ns = self.end_ns.max(other.end_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        let t = Throughput {
            messages: 1_000_000,
            payload_bytes: 64_000_000,
            start_ns: 10,
            end_ns: 10 + 2_000_000_000,
        };
        assert_eq!(t.msgs_per_sec(), 500_000.0);
        assert_eq!(t.mbit_per_sec(), 256.0);
    }

    #[test]
    fn merge_covers_both_spans() {
        let mut a = Throughput {
            messages: 10,
            payload_bytes: 100,
            start_ns: 100,
            end_ns: 200,
        };
        let b = Throughput {
            messages: 30,
            payload_bytes: 300,
            start_ns: 150,
            end_ns: 500,
        };
        a.merge(&b);
        assert_eq!(
            a,
            Throughput {
                messages: 40,
                payload_bytes: 400,
                start_ns: 100,
                end_ns: 500
            }
        );
        let mut e = Throughput::default();
        e.merge(&b);
        assert_eq!(e, b);
    }
}
