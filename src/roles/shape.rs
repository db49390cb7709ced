//! The shape of a measured message beyond one frame: typed multi-frame messages (the first
//! frame holds the measurement header and a type id, then payload frames, as PTMP and
//! rbczmq send them) and log lines (a level as the topic frame, then the header and the
//! text of the line, as a ZeroMQ logger writes them). The source sends the shape; the sink
//! checks it and, for log lines behind a SUB filter, knows exactly which lines the filter
//! should have let through.

use super::Io;
use crate::header::HEADER_LEN;
pub use crate::header::{FIRST_FRAME_MIN, TYPE_ID_LEN};
use crate::msg::RawMsg;
use crate::zmq;

/// The levels of a log writer, one per line in turn (a cycle of 20: 1 ERROR, 3 WARN,
/// 6 INFO, 10 DEBUG, spread out), when the topology gives none.
pub const DEFAULT_LEVELS: [&str; 20] = [
    "DEBUG", "INFO", "DEBUG", "WARN", "DEBUG", "INFO", "DEBUG", "INFO", "DEBUG", "ERROR", "DEBUG",
    "INFO", "DEBUG", "WARN", "DEBUG", "INFO", "DEBUG", "INFO", "DEBUG", "WARN",
];

/// Which lines of a log cycle pass a SUB's prefixes, and how to count them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFilter {
    /// Lines of each cycle position that pass, cumulative: `before[i]` lines pass among
    /// positions `0..i`; `before[len]` per cycle.
    before: Vec<u64>,
}

impl LogFilter {
    /// The filter of `prefixes` (a SUB's subscriptions; empty or `""` passes everything)
    /// over the cycle `levels`.
    pub fn new(levels: &[String], prefixes: &[String]) -> LogFilter {
        let mut before = Vec::with_capacity(levels.len() + 1);
        let mut n = 0;
        before.push(0);
        for l in levels {
            if prefixes.is_empty()
                || prefixes
                    .iter()
                    .any(|p| l.as_bytes().starts_with(p.as_bytes()))
            {
                n += 1;
            }
            before.push(n);
        }
        LogFilter { before }
    }

    fn cycle(&self) -> u64 {
        (self.before.len() - 1).max(1) as u64
    }

    fn per_cycle(&self) -> u64 {
        *self.before.last().unwrap_or(&0)
    }

    /// Whether line `seq` passes.
    pub fn passes(&self, seq: u64) -> bool {
        let i = (seq % self.cycle()) as usize;
        self.before[i + 1] > self.before[i]
    }

    /// Lines that pass among the first `n` (the count a filtered reader expects).
    pub fn passed_of(&self, n: u64) -> u64 {
        let c = self.cycle();
        (n / c) * self.per_cycle() + self.before[(n % c) as usize]
    }

    /// The rank of a passing line among the passing ones (0, 1, 2, ...): the sequence the
    /// reader's ledger keeps, so that a hole is a line that should have come and did not.
    pub fn rank(&self, seq: u64) -> u64 {
        self.passed_of(seq)
    }
}

/// What a source sends beyond one frame, ready to send.
pub(crate) enum Shape {
    /// Typed frames: the first (the header, then the type id) is the message the loop
    /// fills; the others are payload frames of these sizes.
    Typed {
        type_id: [u8; TYPE_ID_LEN],
        rest: Vec<usize>,
    },
    /// Log lines: the level of line i is `levels[i % n]`, sent as the topic frame; the
    /// line (header, then text) is the message the loop fills.
    Log { levels: Vec<String>, writer: String },
    /// PTMP's messages (check_send --wire ptmp): the type frame, then a TPSet whose
    /// `count` is the sequence, `detid` the stream id, `created` the wall clock (us) and
    /// `tstart` that in data-clock ticks. No zmqperf header.
    Ptmp { detid: u32 },
}

impl Shape {
    /// Sends message `m` (its header already written) with the shape's other frames.
    #[inline]
    pub fn send(
        &self,
        s: &mut zmq::Socket,
        m: &mut RawMsg,
        seq: u64,
        io: &mut Io,
    ) -> std::result::Result<(), zmq::Error> {
        match self {
            Shape::Typed { type_id, rest } => {
                m.write_at(HEADER_LEN, type_id);
                io.send(m, s, if rest.is_empty() { 0 } else { zmq::SNDMORE })?;
                let mut f = RawMsg::new();
                for (k, &len) in rest.iter().enumerate() {
                    f.reset_uninit(len).map_err(|_| zmq::Error::ENOMEM)?;
                    let last = k + 1 == rest.len();
                    io.send(&mut f, s, if last { 0 } else { zmq::SNDMORE })?;
                }
                Ok(())
            }
            Shape::Ptmp { detid } => {
                let mut t = RawMsg::copy_of(&crate::ptmp_wire::type_frame())
                    .map_err(|_| zmq::Error::ENOMEM)?;
                io.send(&mut t, s, zmq::SNDMORE)?;
                let mut b = [0u8; crate::ptmp_wire::MAX_ENCODED];
                let n = crate::ptmp_wire::tpset_of(seq, *detid).encode(&mut b);
                m.reset_uninit(n).map_err(|_| zmq::Error::ENOMEM)?;
                m.write_prefix(&b[..n]);
                io.send(m, s, 0)
            }
            Shape::Log { levels, writer } => {
                let level = &levels[(seq % levels.len() as u64) as usize];
                let mut topic =
                    RawMsg::copy_of(level.as_bytes()).map_err(|_| zmq::Error::ENOMEM)?;
                io.send(&mut topic, s, zmq::SNDMORE)?;
                let line = format!(" {level} {writer}: line {seq} of the log, written by zmqperf ");
                m.write_at(HEADER_LEN, line.as_bytes());
                m.fill_from(HEADER_LEN + line.len(), b'.');
                io.send(m, s, 0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn levels() -> Vec<String> {
        DEFAULT_LEVELS.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_default_cycle_has_one_error_in_twenty() {
        let l = levels();
        assert_eq!(l.iter().filter(|x| *x == "ERROR").count(), 1);
        assert_eq!(l.iter().filter(|x| *x == "WARN").count(), 3);
        assert_eq!(l.iter().filter(|x| *x == "INFO").count(), 6);
        assert_eq!(l.iter().filter(|x| *x == "DEBUG").count(), 10);
    }

    #[test]
    fn a_filter_counts_and_ranks_exactly_the_lines_it_passes() {
        let l = levels();
        let errors = LogFilter::new(&l, &["ERROR".to_string()]);
        // Brute force over 3 cycles and a bit: the count and the ranks agree.
        let mut n = 0;
        for seq in 0..75u64 {
            assert_eq!(errors.passed_of(seq), n, "seq {seq}");
            if errors.passes(seq) {
                assert_eq!(errors.rank(seq), n);
                assert_eq!(l[(seq % 20) as usize], "ERROR");
                n += 1;
            }
        }
        assert_eq!(errors.passed_of(10_000), 500);
        let all = LogFilter::new(&l, &[String::new()]);
        assert_eq!(all.passed_of(10_000), 10_000);
        assert_eq!(all.rank(1234), 1234);
        let none_given = LogFilter::new(&l, &[]);
        assert_eq!(none_given.passed_of(33), 33);
        // Prefixes match as ZeroMQ's do: "W" passes WARN, two prefixes add up.
        let w = LogFilter::new(&l, &["W".to_string(), "ERR".to_string()]);
        assert_eq!(w.passed_of(20), 4);
    }
}
