//! What a source writes at the head of each message's first frame: the measurement header
//! alone ([`HeaderOnly`], every topology's source), or the header and PTMP's trailer
//! ([`Trailer`], check_send's and check_sendrecv's sender): the four bytes `zpOP` and the
//! sender's clock when its socket opened, then `zpQD` and QUIT_DELAY_MS. The send loop is
//! generic over [`FirstFrame`], so the plain source's loop is the one it always was.

use crate::header::{Header, FLAG_END, HEADER_LEN};
use crate::msg::RawMsg;
use crate::zmq;
use std::time::{Duration, Instant};

/// The tag of the trailer, right after the header: the four bytes `zpOP`, then the
/// sender's clock (ns, u64 little-endian) when its socket had bound or connected. A
/// receiver learns from it how long after connecting a message was sent (the slow joiner's
/// measure): both times are the sender's clock, so on any host.
pub const OPENED_TAG: [u8; 4] = *b"zpOP";
const OPENED_AT: usize = HEADER_LEN + 4;
/// Bytes the header and the trailer take.
pub const OPENED_END: usize = OPENED_AT + 8;

/// The tag of the trailer's second part, right after the first: the four bytes `zpQD`,
/// then QUIT_DELAY_MS (u32 little-endian), how long check_send waits after its last message
/// before closing, so a receiver can tell a sender that waited from a fast quit.
pub const QUIT_TAG: [u8; 4] = *b"zpQD";
const QUIT_AT: usize = OPENED_END + 4;
/// Bytes the header and the whole trailer take.
pub const TRAILER_END: usize = QUIT_AT + 4;

/// Reads QUIT_DELAY_MS from the trailer, if the message has it.
pub fn quit_delay_ms(prefix: &[u8]) -> Option<u64> {
    opened_ns(prefix)?;
    if prefix.len() < TRAILER_END || prefix[OPENED_END..QUIT_AT] != QUIT_TAG {
        return None;
    }
    Some(u32::from_le_bytes(prefix[QUIT_AT..TRAILER_END].try_into().expect("4 bytes")).into())
}

/// Reads the trailer (the clock when the sender's socket opened), if the message has one.
pub fn opened_ns(prefix: &[u8]) -> Option<u64> {
    if prefix.len() < OPENED_END || prefix[HEADER_LEN..OPENED_AT] != OPENED_TAG {
        return None;
    }
    Some(u64::from_le_bytes(
        prefix[OPENED_AT..OPENED_END].try_into().expect("8 bytes"),
    ))
}

/// How the send loop writes a message's header, and what it does in its rare paths (a
/// send interrupted by a signal). Chosen once before the loop: each kind has its own loop.
pub(super) trait FirstFrame {
    /// Writes the head of the message's first frame, `h` first.
    fn write(&self, m: &mut RawMsg, h: &Header);

    /// A stop signal came during a blocking send of `m`: whether it still went (the
    /// plain source lets it go: what left is the report).
    fn last_try(&self, _s: &mut zmq::Socket, _m: &mut RawMsg) -> bool {
        false
    }

    /// Whether a send interrupted by another signal (not a stop) is tried again, rather
    /// than taken for the peer's failure.
    const RETRIES: bool = false;
}

/// The header alone.
pub(super) struct HeaderOnly;

impl FirstFrame for HeaderOnly {
    #[inline(always)]
    fn write(&self, m: &mut RawMsg, h: &Header) {
        m.write_array(&h.to_bytes());
    }
}

/// The header and PTMP's trailer, as much of it as the message size holds.
pub(super) struct Trailer {
    /// The clock when the socket opened.
    pub opened_ns: u64,
    /// QUIT_DELAY_MS (check_send), or None (check_sendrecv's sender).
    pub quit_ms: Option<u32>,
    /// The message size.
    pub size: usize,
}

impl FirstFrame for Trailer {
    const RETRIES: bool = true;

    #[inline]
    fn write(&self, m: &mut RawMsg, h: &Header) {
        if let (Some(q), true) = (self.quit_ms, self.size >= TRAILER_END) {
            let mut b = [0u8; TRAILER_END];
            h.encode(&mut b);
            b[HEADER_LEN..OPENED_AT].copy_from_slice(&OPENED_TAG);
            b[OPENED_AT..OPENED_END].copy_from_slice(&self.opened_ns.to_le_bytes());
            b[OPENED_END..QUIT_AT].copy_from_slice(&QUIT_TAG);
            b[QUIT_AT..].copy_from_slice(&q.to_le_bytes());
            m.write_array(&b);
        } else if self.size >= OPENED_END {
            let mut b = [0u8; OPENED_END];
            h.encode(&mut b);
            b[HEADER_LEN..OPENED_AT].copy_from_slice(&OPENED_TAG);
            b[OPENED_AT..].copy_from_slice(&self.opened_ns.to_le_bytes());
            m.write_array(&b);
        } else {
            m.write_array(&h.to_bytes());
        }
    }

    /// The message, now with the end mark, gets a last second to go: the receiver then
    /// knows the stream's length.
    fn last_try(&self, s: &mut zmq::Socket, m: &mut RawMsg) -> bool {
        let Ok(Some(mut h)) = Header::decode(m.prefix(HEADER_LEN)) else {
            return false;
        };
        h.flags |= FLAG_END;
        self.write(m, &h);
        let until = Instant::now() + Duration::from_secs(1);
        loop {
            match m.send(s, zmq::DONTWAIT) {
                Ok(()) => return true,
                Err(zmq::Error::EAGAIN | zmq::Error::EINTR) if Instant::now() < until => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(_) => return false,
            }
        }
    }
}
