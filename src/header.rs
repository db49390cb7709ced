//! The measurement header a zmqperf message may carry (see docs/wire-format.md).
//!
//! 24 bytes, little-endian, at the start of the message payload:
//! magic `ZP`, version, flags, stream id (u32), sequence (u64), send time in ns (u64).

/// Length of the header in bytes; messages shorter than this travel without one.
pub const HEADER_LEN: usize = 24;

/// Bytes of the type id that follows the header in the first frame of a typed message.
pub const TYPE_ID_LEN: usize = 4;

/// The smallest first frame of a typed message: the header and the type id.
pub const FIRST_FRAME_MIN: usize = HEADER_LEN + TYPE_ID_LEN;
/// The two bytes every header starts with: ASCII "ZP".
pub const MAGIC: [u8; 2] = *b"ZP";
/// The header version this code writes and reads.
pub const VERSION: u8 = 1;

/// Flag: `send_ns` holds the sender's clock at send time.
pub const FLAG_TIMESTAMP: u8 = 0x01;
/// Flag: the last message of the stream (end of transmission).
pub const FLAG_END: u8 = 0x02;
/// Flag: a warm-up message, not to be counted in results.
pub const FLAG_WARMUP: u8 = 0x04;
const KNOWN_FLAGS: u8 = FLAG_TIMESTAMP | FLAG_END | FLAG_WARMUP;

/// The first eight bytes of a header of stream `stream_id` with `flags`, as one
/// little-endian word: what a lean path compares a message's first word with.
pub fn first_word(stream_id: u32, flags: u8) -> u64 {
    let id = stream_id.to_le_bytes();
    u64::from_le_bytes([
        MAGIC[0], MAGIC[1], VERSION, flags, id[0], id[1], id[2], id[3],
    ])
}

/// The decoded header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    /// Flag bits (`FLAG_*`).
    pub flags: u8,
    /// Which stream the message belongs to (one per sender, or per sender socket).
    pub stream_id: u32,
    /// Position in the stream, from 0.
    pub sequence: u64,
    /// Sender's monotonic clock in ns when the message was sent (valid with `FLAG_TIMESTAMP`).
    pub send_ns: u64,
}

/// Why bytes that start like a header cannot be read as one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// A later format this build does not know.
    #[error("measurement header version {0} is not supported (this zmqperf reads version {VERSION}); use the same zmqperf version on both sides")]
    UnsupportedVersion(u8),
    /// Reserved flag bits are set.
    #[error("measurement header has reserved flag bits set (flags 0x{0:02x}): a newer zmqperf wrote it, or a sender whose bytes only look like the header; use the same zmqperf version on both sides")]
    ReservedFlags(u8),
}

impl Header {
    /// Writes the header into the first [`HEADER_LEN`] bytes of `buf`.
    ///
    /// # Panics
    /// If `buf` is shorter than [`HEADER_LEN`]; callers check the message size first.
    #[inline]
    pub fn encode(&self, buf: &mut [u8]) {
        let b = &mut buf[..HEADER_LEN];
        b[0..2].copy_from_slice(&MAGIC);
        b[2] = VERSION;
        b[3] = self.flags;
        b[4..8].copy_from_slice(&self.stream_id.to_le_bytes());
        b[8..16].copy_from_slice(&self.sequence.to_le_bytes());
        b[16..24].copy_from_slice(&self.send_ns.to_le_bytes());
    }

    /// The header as a byte array.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        self.encode(&mut b);
        b
    }

    /// Reads a header from the start of `buf`.
    ///
    /// `Ok(None)` means the message carries no header (too short, or no magic: plain bytes
    /// such as the zeros libzmq's perf tools send).
    #[inline]
    pub fn decode(buf: &[u8]) -> Result<Option<Header>, HeaderError> {
        if buf.len() < HEADER_LEN || buf[0..2] != MAGIC {
            return Ok(None);
        }
        if buf[2] != VERSION {
            return Err(HeaderError::UnsupportedVersion(buf[2]));
        }
        let flags = buf[3];
        if flags & !KNOWN_FLAGS != 0 {
            return Err(HeaderError::ReservedFlags(flags));
        }
        let u64_at = |i: usize| u64::from_le_bytes(buf[i..i + 8].try_into().expect("8 bytes"));
        Ok(Some(Header {
            flags,
            stream_id: u32::from_le_bytes(buf[4..8].try_into().expect("4 bytes")),
            sequence: u64_at(8),
            send_ns: u64_at(16),
        }))
    }

    /// Whether `send_ns` is valid.
    pub fn has_timestamp(&self) -> bool {
        self.flags & FLAG_TIMESTAMP != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_word_is_an_encoded_headers_first_eight_bytes() {
        for (stream_id, flags) in [(0u32, 0u8), (7, FLAG_TIMESTAMP), (0xdead_beef, KNOWN_FLAGS)] {
            let h = Header {
                flags,
                stream_id,
                sequence: 42,
                send_ns: 9,
            };
            let b = h.to_bytes();
            assert_eq!(first_word(stream_id, flags).to_le_bytes(), b[..8]);
        }
    }

    #[test]
    fn round_trip() {
        let h = Header {
            flags: FLAG_TIMESTAMP | FLAG_END,
            stream_id: 0xDEAD_BEEF,
            sequence: u64::MAX - 1,
            send_ns: 1_234_567_890_123,
        };
        let mut buf = vec![0xAAu8; 100];
        h.encode(&mut buf);
        assert_eq!(Header::decode(&buf).unwrap(), Some(h));
        assert_eq!(
            buf[HEADER_LEN], 0xAA,
            "encode must not write past the header"
        );
    }

    #[test]
    fn plain_bytes_are_not_a_header() {
        assert_eq!(Header::decode(&[0u8; 64]).unwrap(), None);
        assert_eq!(Header::decode(b"ZP").unwrap(), None);
        let mut short = Header::default().to_bytes().to_vec();
        short.pop();
        assert_eq!(Header::decode(&short).unwrap(), None);
    }

    #[test]
    fn unknown_version_and_flags_are_errors() {
        let mut b = Header::default().to_bytes();
        b[2] = 2;
        assert_eq!(Header::decode(&b), Err(HeaderError::UnsupportedVersion(2)));
        let mut b = Header::default().to_bytes();
        b[3] = 0x80;
        assert_eq!(Header::decode(&b), Err(HeaderError::ReservedFlags(0x80)));
    }
}
