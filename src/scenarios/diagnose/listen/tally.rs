//! What the listener saw of a live stream, message by message: for each stream (a sender,
//! told apart by its stream id), the ledger of each run of the publisher (a restart, the
//! sequence back to 0, begins a new one), the idle periods of the whole stream, the
//! latency when messages carry their send time, and the messages whose number could not
//! be read.

#[cfg(test)]
use crate::header::FLAG_TIMESTAMP;
use crate::header::{Header, FLAG_WARMUP};
use crate::scenarios::diagnose::stream::Tally;
use crate::stats::{LatencyHistogram, OneWay};
use std::collections::BTreeMap;
use std::time::Duration;

/// Why messages could not be counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unreadable {
    /// Fewer frames than the field's frame.
    pub no_frame: u64,
    /// A frame that ends before the field does.
    pub too_short: u64,
    /// A text field with no digits.
    pub not_a_number: u64,
    /// A text field with more digits than a 64-bit number holds.
    pub too_large: u64,
    /// No zmqperf measurement header where one was expected.
    pub no_header: u64,
    /// A header of another version, or with reserved flags set.
    pub bad_header: u64,
}

impl Unreadable {
    /// All of them.
    pub fn total(&self) -> u64 {
        self.no_frame
            + self.too_short
            + self.not_a_number
            + self.too_large
            + self.no_header
            + self.bad_header
    }
}

/// One run of a publisher: the numbers it sent from 0 (or from where the listener joined)
/// until it restarted or the listen ended.
#[derive(Debug, Clone, Default)]
pub struct Epoch {
    /// The ledger, with arrival times around its holes.
    pub tally: Tally,
    /// Whether the run's end-of-stream mark arrived.
    pub ended: bool,
    /// Arrivals (duplicates included).
    pub arrivals: u64,
}

/// One stream: its runs, oldest first (the last one is current).
#[derive(Debug, Clone)]
pub struct StreamState {
    /// The publisher's runs; more than one after a restart.
    pub epochs: Vec<Epoch>,
    /// Arrival of the stream's last message, ns.
    pub last_ns: u64,
}

impl StreamState {
    /// Restarts seen: the sequence went back to 0.
    pub fn restarts(&self) -> u64 {
        self.epochs.len() as u64 - 1
    }

    /// The run being received.
    pub fn current(&self) -> &Epoch {
        self.epochs.last().expect("a stream has a run")
    }
}

/// What a message did to its stream's sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The next number, a duplicate or a late one.
    Plain,
    /// A number with numbers missing just below it (a hole opened).
    Jump,
    /// The sequence went back to 0: a new run of the publisher.
    Restart,
}

/// An arrival gap at least as long as the idle threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Idle {
    /// Arrival of the message before the silence, ns.
    pub from_ns: u64,
    /// Length of the silence, ns.
    pub len_ns: u64,
}

/// Everything the listener saw.
#[derive(Debug, Clone)]
pub struct Listening {
    /// Streams by id.
    pub streams: BTreeMap<u64, StreamState>,
    /// Every message received, readable or not.
    pub messages: u64,
    /// The ones that could not be counted, by why.
    pub unreadable: Unreadable,
    /// First and last arrival of any message, ns.
    pub first_ns: Option<u64>,
    /// Last arrival of any message, ns (0 if none).
    pub last_ns: u64,
    /// The first silences of at least `idle_ns` between two messages (at most 64).
    pub idle: Vec<Idle>,
    /// All such silences.
    pub idle_count: u64,
    /// Idle threshold, ns.
    pub idle_ns: u64,
    /// One-way latency (arrival minus send time) of messages that carry their send time,
    /// with what the check of their stamps found (clocks that differ: none recorded).
    pub latency: LatencyHistogram,
    /// How send stamps become delays: on this clock (no control channel to a live stream's
    /// sender), stamps from the future or older than the listen impossible.
    clock: OneWay,
    /// Jumps (holes opening inside a run) seen.
    pub jumps: u64,
    /// Jumps at which more messages were already waiting in the receive queue.
    pub jumps_with_backlog: u64,
}

/// Most idle periods remembered one by one (all are counted).
const IDLE_KEPT: usize = 64;

impl Listening {
    /// Nothing seen yet; silences of `idle_ns` or more count as idle periods.
    pub fn new(idle_ns: u64) -> Listening {
        Listening {
            streams: BTreeMap::new(),
            messages: 0,
            unreadable: Unreadable::default(),
            first_ns: None,
            last_ns: 0,
            idle: Vec::new(),
            idle_count: 0,
            idle_ns,
            latency: LatencyHistogram::new(),
            clock: OneWay::same_clock(Duration::MAX),
            jumps: 0,
            jumps_with_backlog: 0,
        }
    }

    /// The same, where a send stamp older than `timeout` at the first stamped arrival is
    /// impossible (a sender on another host's clock).
    pub fn within(mut self, timeout: Duration) -> Listening {
        self.clock = OneWay::same_clock(timeout);
        self
    }

    /// Notes the arrival of any message (readable or not) at `now`, ns.
    pub fn arrived(&mut self, now: u64) {
        self.messages += 1;
        if self.first_ns.is_none() {
            self.first_ns = Some(now);
        } else {
            let quiet = now.saturating_sub(self.last_ns);
            if quiet >= self.idle_ns {
                self.idle_count += 1;
                if self.idle.len() < IDLE_KEPT {
                    self.idle.push(Idle {
                        from_ns: self.last_ns,
                        len_ns: quiet,
                    });
                }
            }
        }
        self.last_ns = now;
    }

    /// Records message `h` of stream `stream`, arrived at `now` (after [`Listening::arrived`]).
    /// A number 0 after higher ones starts a new run of the stream (a publisher restart).
    pub fn record(&mut self, stream: u64, h: &Header, now: u64) -> Step {
        if h.flags & FLAG_WARMUP != 0 {
            return Step::Plain;
        }
        if h.has_timestamp() {
            // The histogram carries the check as it grows: an impossible stamp is counted
            // there, never recorded.
            match self.clock.delay(h.send_ns, now) {
                Some(d) => self.latency.record(d),
                None => self.latency.set_clock(self.clock.check()),
            }
        }
        let state = self.streams.entry(stream).or_insert_with(|| StreamState {
            epochs: vec![Epoch::default()],
            last_ns: now,
        });
        state.last_ns = now;
        let mut step = Step::Plain;
        let top = state.current().tally.highest_seq();
        if h.sequence == 0 && top.is_some_and(|t| t > 0) {
            state.epochs.push(Epoch::default());
            step = Step::Restart;
        } else if let Some(t) = top {
            if h.sequence > t + 1 {
                step = Step::Jump;
                self.jumps += 1;
            }
        }
        let e = state.epochs.last_mut().expect("a stream has a run");
        e.arrivals += 1;
        if e.tally.record(h, now) {
            e.ended = true;
        }
        step
    }

    /// Notes that at the last jump more messages were already queued.
    pub fn backlog_at_jump(&mut self) {
        self.jumps_with_backlog += 1;
    }

    /// Restarts over all streams.
    pub fn restarts(&self) -> u64 {
        self.streams.values().map(StreamState::restarts).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(seq: u64) -> Header {
        Header {
            flags: 0,
            stream_id: 0,
            sequence: seq,
            send_ns: 0,
        }
    }

    fn feed(
        l: &mut Listening,
        stream: u64,
        seqs: impl IntoIterator<Item = u64>,
        now: &mut u64,
    ) -> Vec<Step> {
        seqs.into_iter()
            .map(|s| {
                *now += 1_000;
                l.arrived(*now);
                l.record(stream, &h(s), *now)
            })
            .collect()
    }

    #[test]
    fn a_sequence_back_to_0_is_a_new_run_and_streams_keep_apart() {
        let mut l = Listening::new(1_000_000);
        let mut now = 0;
        let steps = feed(&mut l, 7, (0..10).chain(0..5), &mut now);
        assert_eq!(steps[10], Step::Restart);
        assert_eq!(steps.iter().filter(|s| **s == Step::Restart).count(), 1);
        feed(&mut l, 8, [3, 4, 9], &mut now);
        assert_eq!(l.restarts(), 1);
        assert_eq!(l.streams[&7].epochs.len(), 2);
        assert_eq!(l.streams[&7].current().tally.highest_seq(), Some(4));
        assert_eq!(l.streams[&8].epochs.len(), 1);
        assert_eq!(l.jumps, 1, "9 after 4 in stream 8");
        // A 0 repeated at the very start is a duplicate, not a restart.
        let mut d = Listening::new(1_000_000);
        let steps = feed(&mut d, 0, [0, 0, 1], &mut now);
        assert!(steps.iter().all(|s| *s == Step::Plain));
        assert_eq!(d.streams[&0].current().tally.summary(2).duplicated, 1);
    }

    #[test]
    fn silences_past_the_threshold_are_idle_periods() {
        let mut l = Listening::new(5_000);
        for t in [1_000, 2_000, 9_000, 10_000, 20_000] {
            l.arrived(t);
        }
        assert_eq!(l.idle_count, 2);
        assert_eq!(
            l.idle,
            vec![
                Idle {
                    from_ns: 2_000,
                    len_ns: 7_000
                },
                Idle {
                    from_ns: 10_000,
                    len_ns: 10_000
                }
            ]
        );
        assert_eq!(
            (l.messages, l.first_ns, l.last_ns),
            (5, Some(1_000), 20_000)
        );
    }

    #[test]
    fn latency_is_taken_only_from_messages_with_their_send_time() {
        let mut l = Listening::new(u64::MAX);
        l.arrived(5_000);
        l.record(
            0,
            &Header {
                flags: FLAG_TIMESTAMP,
                stream_id: 0,
                sequence: 0,
                send_ns: 2_000,
            },
            5_000,
        );
        l.arrived(6_000);
        l.record(0, &h(1), 6_000);
        assert_eq!(l.latency.count(), 1);
        assert_eq!(l.latency.quantile(0.5), 3_000);
        assert!(l.latency.clock().is_same_clock());
    }

    #[test]
    fn a_sender_on_another_clock_gives_no_latency_only_its_check() {
        let stamped = |seq: u64, send_ns: u64| Header {
            flags: FLAG_TIMESTAMP,
            stream_id: 0,
            sequence: seq,
            send_ns,
        };
        let s = 1_000_000_000u64;
        // The sender's clock 5,000 s ahead: from this listener's future.
        let mut l = Listening::new(s).within(Duration::from_secs(10));
        for i in 0..3 {
            l.arrived(100 * s + i);
            l.record(0, &stamped(i, 5_100 * s + i), 100 * s + i);
        }
        assert_eq!(l.latency.count(), 0);
        assert_eq!(l.latency.clock().future, 3);
        // 5,000 s behind: older than the timeout, never a 5,000 s latency.
        let mut l = Listening::new(s).within(Duration::from_secs(10));
        l.arrived(5_100 * s);
        l.record(0, &stamped(0, 100 * s), 5_100 * s);
        assert_eq!(l.latency.count(), 0);
        assert_eq!(l.latency.clock().stale, 1);
        // The ledger is kept whatever the clocks.
        assert_eq!(l.streams[&0].current().arrivals, 1);
    }
}
