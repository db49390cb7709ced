//! The raw floor's framing: every message on a plain stream socket is a 4-byte
//! little-endian length, then that many bytes (the message, measurement header first).
//! A stream socket keeps no message boundaries, so the reader joins what each `read`
//! returns and cuts it into messages again.

use crate::error::{Error, Result};

/// Bytes of the length prefix.
pub(crate) const PREFIX_LEN: usize = 4;

/// Longest message a reader accepts: more means the bytes are not this framing.
pub(crate) const MAX_FRAME: usize = 1 << 30;

/// A frame of `payload_len` bytes: the prefix written, the payload zeroed, for the writer
/// to fill (`frame[PREFIX_LEN..]`).
pub(crate) fn frame_buffer(payload_len: usize) -> Vec<u8> {
    let mut f = vec![0u8; PREFIX_LEN + payload_len];
    f[..PREFIX_LEN].copy_from_slice(&(payload_len as u32).to_le_bytes());
    f
}

/// Cuts a byte stream into messages, keeping a partial one until the rest arrives.
#[derive(Debug, Default)]
pub(crate) struct Deframer {
    pending: Vec<u8>,
}

/// Hands every whole frame of `buf` to `each`; returns the bytes used.
fn whole_frames(buf: &[u8], each: &mut dyn FnMut(&[u8]) -> Result<()>) -> Result<usize> {
    let mut at = 0;
    while buf.len() - at >= PREFIX_LEN {
        let mut len = [0u8; PREFIX_LEN];
        len.copy_from_slice(&buf[at..at + PREFIX_LEN]);
        let len = u32::from_le_bytes(len) as usize;
        if len > MAX_FRAME {
            return Err(Error::Protocol(format!(
                "a raw-socket frame announced {len} bytes (at most {MAX_FRAME}): the peer does not speak the raw floor's framing"
            )));
        }
        let end = at + PREFIX_LEN + len;
        if end > buf.len() {
            break;
        }
        each(&buf[at + PREFIX_LEN..end])?;
        at = end;
    }
    Ok(at)
}

impl Deframer {
    /// Takes the bytes of one `read`, handing every message they complete to `each`.
    pub(crate) fn feed(
        &mut self,
        data: &[u8],
        each: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        if self.pending.is_empty() {
            // The usual case: whole messages, cut straight from the read buffer.
            let used = whole_frames(data, each)?;
            self.pending.extend_from_slice(&data[used..]);
        } else {
            self.pending.extend_from_slice(data);
            let used = whole_frames(&self.pending, each)?;
            self.pending.drain(..used);
        }
        Ok(())
    }

    /// Bytes of a message begun and not yet complete.
    #[cfg(test)]
    pub(crate) fn partial(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(payloads: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        for p in payloads {
            let mut f = frame_buffer(p.len());
            f[PREFIX_LEN..].copy_from_slice(p);
            out.extend_from_slice(&f);
        }
        out
    }

    fn cut(d: &mut Deframer, data: &[u8]) -> Vec<Vec<u8>> {
        let mut got = Vec::new();
        d.feed(data, &mut |m| {
            got.push(m.to_vec());
            Ok(())
        })
        .unwrap();
        got
    }

    #[test]
    fn the_prefix_is_the_little_endian_length() {
        let f = frame_buffer(300);
        assert_eq!(f.len(), 304);
        assert_eq!(&f[..4], &[0x2c, 0x01, 0, 0]);
    }

    #[test]
    fn whole_messages_in_one_read_come_out_in_order() {
        let data = frames(&[b"one", b"", b"three"]);
        let mut d = Deframer::default();
        assert_eq!(
            cut(&mut d, &data),
            vec![b"one".to_vec(), vec![], b"three".to_vec()]
        );
        assert_eq!(d.partial(), 0);
    }

    #[test]
    fn a_message_split_anywhere_is_joined() {
        let data = frames(&[b"hello world", b"again"]);
        // Every split point, including inside the length prefix.
        for at in 0..=data.len() {
            let mut d = Deframer::default();
            let mut got = cut(&mut d, &data[..at]);
            got.extend(cut(&mut d, &data[at..]));
            assert_eq!(
                got,
                vec![b"hello world".to_vec(), b"again".to_vec()],
                "split at {at}"
            );
            assert_eq!(d.partial(), 0);
        }
        // One byte per read.
        let mut d = Deframer::default();
        let mut got = Vec::new();
        for b in &data {
            got.extend(cut(&mut d, std::slice::from_ref(b)));
        }
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn a_length_beyond_the_limit_is_a_protocol_error() {
        let mut d = Deframer::default();
        let bad = u32::MAX.to_le_bytes();
        let e = d.feed(&bad, &mut |_| Ok(())).unwrap_err().to_string();
        assert!(e.contains("framing"), "{e}");
    }

    #[test]
    fn an_error_of_the_consumer_stops_the_cut() {
        let data = frames(&[b"a", b"b"]);
        let mut d = Deframer::default();
        let mut n = 0;
        let r = d.feed(&data, &mut |_| {
            n += 1;
            Err(Error::Protocol("stop".into()))
        });
        assert!(r.is_err());
        assert_eq!(n, 1);
    }
}
