//! The sink's lean run: a loop of its own for the common message of a plain stream with
//! the header (the next number of the stream that sent the last one, no flag, the size of
//! the stream). Such a message changes only the counts, which the loop keeps in one
//! register: the seen and received counts, the ledger's run and its arrivals all grow by
//! one. Anything else (a time stamp, an end mark, a warm-up, another stream, a gap, a size
//! or header that is wrong, a receive that fails) leaves the run, with the counts written
//! back, for the full path to take as it always did. The run also stops where the full
//! path would look at the counts: where the sink may have everything, and at a progress
//! line.

use super::state::{SinkState, Then};
use crate::header::{first_word, HEADER_LEN};
use crate::msg::RawMsg;
use crate::zmq;

/// The longest run: a multiple of the progress line's 256 messages, so that the run
/// stops where [`crate::progress::Progress::tick`] may show a line.
const STRETCH: u64 = 256;

/// How a lean run ended.
pub(super) enum Lean {
    /// Not now (not a lean stream, not a direct receive, no run of the stream yet, or at
    /// a point where every message is looked at): the loop receives as usual.
    Off,
    /// A message the run does not take arrived: it is in the state's message, for the
    /// full path.
    Pending,
    /// A receive failed (a timeout, a signal, an error): the loop's wait takes it as its
    /// own first receive.
    Failed(zmq::Error),
    /// The run stopped where the loop must look (where the sink may have everything, every
    /// [`STRETCH`] messages).
    Then(Then),
}

impl SinkState<'_> {
    /// Takes messages while each is the next of its stream with nothing else to it
    /// (module doc); `work` is done on each, as the loop does.
    #[inline(always)]
    pub(super) fn lean_run(
        &mut self,
        s: &mut zmq::Socket,
        work: &mut impl FnMut(&mut RawMsg),
    ) -> Lean {
        if !self.lean || !self.io.is_direct() {
            return Lean::Off;
        }
        let until_end = self.end_check_from.saturating_sub(self.received);
        let Some((id, stream)) = self.ledger.last_stream() else {
            return Lean::Off;
        };
        let Some(first) = stream.next_in_order() else {
            return Lean::Off;
        };
        let size = self.first_len;
        if until_end == 0 || size < HEADER_LEN {
            return Lean::Off;
        }
        // A header of stream `id` with no flag: its first eight bytes as one word.
        let word = first_word(id, 0);
        // At most STRETCH messages at a time: the loop looks for a stop signal between
        // them (a receive that never has to wait is not interrupted by one).
        let stretch = STRETCH - (self.seen % STRETCH);
        let stop = first.saturating_add(until_end.min(stretch));
        let mut next = first;
        let how = loop {
            if let Err(e) = self.msg.recv(s, 0) {
                break Lean::Failed(e);
            }
            if self.msg.len() != size {
                break Lean::Pending;
            }
            match self.msg.head_words() {
                Some([w, seq]) if w == word && seq == next => {}
                _ => break Lean::Pending,
            }
            next += 1;
            work(&mut self.msg);
            if next == stop {
                break Lean::Then(Then::Read);
            }
        };
        let n = next - first;
        stream.record_in_order(n);
        self.seen += n;
        self.received += n;
        if n == 0 {
            return how;
        }
        // Messages came: a quiet spell before them is over, as the wait would have ended it.
        self.patience.took();
        self.progress.tick(self.seen);
        match how {
            Lean::Then(_) => Lean::Then(self.after_record()),
            other => other,
        }
    }
}
