//! The receiving end of a diagnosed stream: the loss ledger by sequence number, plus when
//! messages arrived around each hole, so a finding can say when the loss happened as well
//! as where in the stream it fell.

use crate::clock::now_ns;
use crate::header::{Header, FLAG_END, FLAG_WARMUP};
use crate::model::TimedGap;
use crate::stats::ledger::GAPS_LISTED;
use crate::stats::{GapPosition, LossSummary, StreamLedger};

/// Most late arrivals remembered (a single connection delivers in order; this only bounds
/// memory when a test feeds a shuffled stream).
const LATE_KEPT: usize = 100_000;

/// A jump forward in the sequence: `before` arrived, then `after` with numbers missing
/// between them (each with its arrival time, ns).
#[derive(Debug, Clone, Copy)]
struct Jump {
    before: Option<(u64, u64)>,
    after: (u64, u64),
}

/// What a receiver saw of one stream.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    ledger: StreamLedger,
    /// Highest sequence number seen and its arrival time.
    highest: Option<(u64, u64)>,
    jumps: Vec<Jump>,
    /// Numbers that arrived below the highest already seen (late or duplicated).
    late: Vec<u64>,
    /// Arrival time of the first counted message.
    first_ns: Option<u64>,
    /// Arrival time of the last counted message.
    last_ns: u64,
    /// Whether the end-of-stream mark arrived.
    end: bool,
}

impl Tally {
    /// An empty tally.
    pub fn new() -> Tally {
        Tally::default()
    }

    /// Records a message that arrived at `now` (ns); warm-up and probe messages are
    /// ignored. Returns true for the end-of-stream mark.
    pub fn record(&mut self, h: &Header, now: u64) -> bool {
        if h.flags & FLAG_WARMUP != 0 {
            return false;
        }
        self.ledger.record(h.sequence);
        self.first_ns.get_or_insert(now);
        self.last_ns = now;
        match self.highest {
            None => {
                if h.sequence > 0 {
                    self.jumps.push(Jump {
                        before: None,
                        after: (h.sequence, now),
                    });
                }
                self.highest = Some((h.sequence, now));
            }
            Some((top, top_ns)) if h.sequence > top => {
                if h.sequence > top + 1 {
                    self.jumps.push(Jump {
                        before: Some((top, top_ns)),
                        after: (h.sequence, now),
                    });
                }
                self.highest = Some((h.sequence, now));
            }
            // A duplicate or a late arrival: the ledger counts it; it may fill a hole.
            Some(_) => {
                if self.late.len() < LATE_KEPT {
                    self.late.push(h.sequence);
                }
            }
        }
        if h.flags & FLAG_END != 0 {
            self.end = true;
        }
        self.end
    }

    /// Records a message arriving now.
    pub fn record_now(&mut self, h: &Header) -> bool {
        self.record(h, now_ns())
    }

    /// Highest sequence number received.
    pub fn highest_seq(&self) -> Option<u64> {
        self.highest.map(|(s, _)| s)
    }

    /// Arrival time of the first counted message, ns.
    pub fn first_ns(&self) -> Option<u64> {
        self.first_ns
    }

    /// Arrival time of the last counted message, ns (0 if none).
    pub fn last_ns(&self) -> u64 {
        self.last_ns
    }

    /// The ledger's figures for a stream of `expected` messages (numbers 0 to expected-1).
    pub fn summary(&self, expected: u64) -> LossSummary {
        self.ledger.summary(Some(expected))
    }

    /// The holes of a stream of `expected` messages with the arrival times around them,
    /// in ms after `origin_ns` (the sender's first send); at most 16.
    pub fn gaps(&self, expected: u64, origin_ns: u64) -> Vec<TimedGap> {
        let at = |ns: u64| crate::scenarios::diagnose::ns_to_ms(ns.saturating_sub(origin_ns));
        let mut out = Vec::new();
        let Some((top, top_ns)) = self.highest else {
            if expected > 0 {
                out.push(TimedGap {
                    first_seq: 0,
                    count: expected,
                    position: GapPosition::Start,
                    before_ms: None,
                    after_ms: None,
                });
            }
            return out;
        };
        let mut late = self.late.clone();
        late.sort_unstable();
        late.dedup();
        for j in &self.jumps {
            if out.len() == GAPS_LISTED {
                break;
            }
            let first = j.before.map_or(0, |(s, _)| s + 1);
            let filled = late
                .iter()
                .filter(|&&s| s >= first && s < j.after.0)
                .count() as u64;
            let missing = (j.after.0 - first).saturating_sub(filled);
            if missing == 0 {
                // Filled later by late arrivals.
                continue;
            }
            out.push(TimedGap {
                first_seq: first,
                count: missing,
                position: if first == 0 {
                    GapPosition::Start
                } else {
                    GapPosition::Middle
                },
                before_ms: j.before.map(|(_, ns)| at(ns)),
                after_ms: Some(at(j.after.1)),
            });
        }
        if expected > top + 1 {
            out.push(TimedGap {
                first_seq: top + 1,
                count: expected - top - 1,
                position: GapPosition::End,
                before_ms: Some(at(top_ns)),
                after_ms: None,
            });
        }
        out.truncate(GAPS_LISTED);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::FLAG_TIMESTAMP;

    fn h(seq: u64, flags: u8) -> Header {
        Header {
            flags: flags | FLAG_TIMESTAMP,
            stream_id: 0,
            sequence: seq,
            send_ns: 1_000_000,
        }
    }

    #[test]
    fn holes_at_start_middle_and_end_carry_their_times() {
        let mut t = Tally::new();
        // 0..5 lost; 5..20 arrive; 20..23 lost; 23..90 arrive; 90..100 lost.
        let mut now = 2_000_000;
        for s in (5..20).chain(23..90) {
            now += 100_000;
            t.record(&h(s, 0), now);
        }
        let gaps = t.gaps(100, 1_000_000);
        assert_eq!(gaps.len(), 3);
        assert_eq!(
            (gaps[0].first_seq, gaps[0].count, gaps[0].position),
            (0, 5, GapPosition::Start)
        );
        assert_eq!(gaps[0].before_ms, None);
        assert_eq!(gaps[0].after_ms, Some(1.1));
        assert_eq!(
            (gaps[1].first_seq, gaps[1].count, gaps[1].position),
            (20, 3, GapPosition::Middle)
        );
        assert_eq!(gaps[1].before_ms, Some(2.5));
        assert_eq!(gaps[1].after_ms, Some(2.6));
        assert_eq!(
            (gaps[2].first_seq, gaps[2].count, gaps[2].position),
            (90, 10, GapPosition::End)
        );
        assert_eq!(gaps[2].after_ms, None);
        let s = t.summary(100);
        assert_eq!(
            (s.lost_at_start, s.lost_in_middle, s.lost_at_end),
            (5, 3, 10)
        );
    }

    #[test]
    fn probes_are_ignored_and_the_end_is_seen() {
        let mut t = Tally::new();
        assert!(!t.record(&h(7, FLAG_WARMUP), 1));
        assert!(!t.record(&h(0, 0), 2));
        assert!(t.record(&h(1, FLAG_END), 3));
        assert_eq!(t.summary(2).received, 2);
        assert!(t.gaps(2, 0).is_empty());
        assert_eq!((t.first_ns(), t.last_ns()), (Some(2), 3));
    }

    #[test]
    fn a_late_arrival_closes_its_hole_and_nothing_received_is_one_hole() {
        let mut t = Tally::new();
        for s in [0, 1, 3, 2, 4] {
            t.record(&h(s, 0), 10);
        }
        assert!(t.gaps(5, 0).is_empty());
        assert_eq!(t.summary(5).reordered, 1);
        let empty = Tally::new();
        let g = empty.gaps(10, 0);
        assert_eq!((g.len(), g[0].count), (1, 10));
    }
}
