//! What a message that arrived does to the sink's state: the record of its header (the
//! clock where a figure needs it, the ledger, the delay, the end mark), the lean path of a
//! plain stream, the count of a stream without the header, and whether the sink has
//! everything. The loop's per-message entry is [`SinkState::on_message`] (state.rs).

use super::eot_done;
use super::state::{SinkState, Then};
use crate::clock::now_ns;
use crate::error::Result;
use crate::header::{Header, FLAG_END, FLAG_WARMUP, HEADER_LEN};
use crate::net::check_size;

impl SinkState<'_> {
    /// Whether a sink that ends by itself has everything: every stream's end mark, or
    /// every message the streams were to carry, once (an end mark that never comes must not
    /// cost the timeout, and a longer stream is not read past it). Duplicates do not count:
    /// the distinct figure is taken only once the arrivals reach the count, so the common
    /// path costs one comparison (of `received` with [`SinkState::end_check_from`]).
    #[inline(always)]
    pub(super) fn after_record(&mut self) -> Then {
        if self.received < self.end_check_from {
            return Then::Read;
        }
        self.has_everything()
    }

    /// The question of [`SinkState::after_record`], asked.
    #[inline(never)]
    fn has_everything(&mut self) -> Then {
        let spec = self.spec;
        if spec.ends_itself
            && (self.ends == spec.streams.len()
                || (self.received >= self.total
                    && self.ledger.summary(None).received >= self.total))
        {
            Then::End
        } else {
            Then::Read
        }
    }

    /// A message of a lean stream ([`SinkState::lean`]): its size checked, its header read
    /// and recorded. `None` for a message the full path must read: a warm-up, a header that
    /// is not this build's (the full path words the error).
    #[inline(always)]
    pub(super) fn on_stream_message(&mut self) -> Result<Option<Then>> {
        check_size(&mut self.msg, self.first_len, self.seen)?;
        let h = match Header::decode(self.msg.prefix(HEADER_LEN)) {
            Ok(Some(h)) if h.flags & FLAG_WARMUP == 0 => h,
            _ => return Ok(None),
        };
        self.seen += 1;
        self.progress.tick(self.seen);
        // A lean stream has no log filter.
        self.record_plain(&h);
        Ok(Some(self.after_record()))
    }

    /// A message with the header, past the warm-up: its sequence goes in the ledger, its
    /// delay (when time-stamped) in its stream's histogram, and its end mark is counted.
    #[inline(always)]
    pub(super) fn record(&mut self, h: &Header) {
        if self.log.is_some() {
            self.record_line(h);
        } else {
            self.record_plain(h);
        }
    }

    /// The record of a message of a stream without a log filter: its sequence is its place,
    /// and its end mark ends it.
    #[inline(always)]
    fn record_plain(&mut self, h: &Header) {
        self.arrive(h, h.sequence);
        if h.flags & FLAG_END != 0 {
            self.ends += 1;
            self.end_check_from = 0;
        }
    }

    /// The arrival of a message whose place in its stream is `seq`: the clock where a
    /// figure needs it, the count, the ledger, the delay.
    #[inline(always)]
    fn arrive(&mut self, h: &Header, seq: u64) {
        // The clock is read only where a figure needs it (as in local_thr): on the first
        // message and on the time-stamped ones.
        let stamped = h.has_timestamp();
        let mut now = 0;
        if stamped || self.received == 0 {
            now = now_ns();
            if self.received == 0 {
                self.first_arrival(now);
            } else if now >= self.next_tick_ns {
                self.tick(now);
            }
            self.last_read_ns = self.last_read_ns.max(now);
        }
        self.received += 1;
        self.ledger.record(h.stream_id, seq);
        if stamped {
            let i = match self.slot.get(h.stream_id as usize) {
                Some(&i) if i != usize::MAX => i,
                _ => self.other,
            };
            // An impossible stamp (another clock) is counted by its check, never recorded.
            if let Some(d) = self.clocks[i].delay(h.send_ns, now) {
                self.hists[i].record(d);
            }
        }
    }

    /// The first message with the header came at `now`: the run's start, the intervals, and
    /// whether the next messages can take the lean path.
    #[cold]
    #[inline(never)]
    fn first_arrival(&mut self, now: u64) {
        self.start = now;
        self.begin_intervals(now);
        self.lean = self.eot.is_none()
            && self.log.is_none()
            && self.spec.frames.is_empty()
            && !self.routed
            && self.first_len >= HEADER_LEN;
    }

    /// A log line behind a filter: its rank among the lines the filter lets through is the
    /// sequence the ledger keeps, so a hole is a line that should have come; the stream
    /// ends at the last line the filter lets through.
    #[inline(never)]
    fn record_line(&mut self, h: &Header) {
        let spec = self.spec;
        let Some(f) = &self.log else { return };
        let want = &spec.log_levels[(h.sequence % spec.log_levels.len() as u64) as usize];
        if self.level != want.as_bytes() {
            self.frame_error.get_or_insert(format!(
                "line {} of stream {} came with level '{}', but it was written as {want}",
                h.sequence,
                h.stream_id,
                String::from_utf8_lossy(&self.level)
            ));
        } else if !f.passes(h.sequence) {
            self.frame_error.get_or_insert(format!(
                "line {} ({want}) of stream {} came through a filter that should have stopped it",
                h.sequence, h.stream_id
            ));
        }
        let seq = f.rank(h.sequence);
        self.arrive(h, seq);
        let want = self
            .slot
            .get(h.stream_id as usize)
            .and_then(|&i| spec.streams.get(i))
            .map(|(_, n)| *n);
        if want == Some(seq + 1) {
            self.ends += 1;
            self.end_check_from = 0;
        }
    }

    /// A message too small for the header: counted, as libzmq's local_thr does.
    #[inline]
    pub(super) fn count_only(&mut self) -> Then {
        let spec = self.spec;
        if self.seen <= self.warm_total {
            return Then::Read;
        }
        if self.received == 0 {
            let now = now_ns();
            self.start = now;
            self.begin_intervals(now);
        }
        self.received += 1;
        // With `--interval`: no stamp to read the time from, so the clock is read every
        // 64 messages to close the intervals (their rate and CPU).
        if self.intervals.is_some() && self.received & 63 == 0 {
            let now = now_ns();
            self.last_read_ns = now;
            if now >= self.next_tick_ns {
                self.tick(now);
            }
        }
        if let Some(w) = self.eot.as_mut() {
            if eot_done(w, &spec.streams, self.received, &mut self.at_eot) {
                return Then::End;
            }
        } else if spec.ends_itself && self.received == self.total {
            return Then::End;
        }
        // What the next messages of this stream ask is known now: only their count.
        self.counting = spec.ends_itself
            && self.intervals.is_none()
            && self.eot.is_none()
            && self.log.is_none()
            && spec.frames.is_empty()
            && !self.routed
            && self.first_len > 0;
        Then::Read
    }
}
