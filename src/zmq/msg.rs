//! A raw ZeroMQ message for the hot loops: allocated once, sent and received in place,
//! without the zero-fill or copies of the safe wrappers (what libzmq's own tools do).

use crate::zmq::{self, api, ffi::zmq_msg_t, layout, CallFailed};

/// An owned `zmq_msg_t`, with its length kept beside it (every way of changing the content
/// goes through this type, and `zmq_msg_recv` returns the length), so the hot loops make no
/// `zmq_msg_size` calls.
pub struct RawMsg {
    msg: zmq_msg_t,
    len: usize,
    /// Sent and so emptied by libzmq (`zmq_msg_send` leaves an empty, initialised message
    /// that owns nothing): the next `reset_uninit` need not close it first, as libzmq's
    /// own remote_thr does not.
    sent: bool,
}

// SAFETY: a zmq_msg_t is plain data owned by this value; libzmq allows moving it across threads.
unsafe impl Send for RawMsg {}

fn last_error() -> zmq::Error {
    zmq::Error::last()
}

impl RawMsg {
    /// An empty message, ready to receive into.
    pub fn new() -> Self {
        let mut msg = std::mem::MaybeUninit::<zmq_msg_t>::uninit();
        // SAFETY: zmq_msg_init initialises the struct; it cannot fail.
        unsafe { (api().zmq_msg_init)(msg.as_mut_ptr()) };
        RawMsg {
            // SAFETY: initialised just above.
            msg: unsafe { msg.assume_init() },
            len: 0,
            sent: false,
        }
    }

    /// A message of `size` bytes whose content is not initialised (as libzmq's remote_thr
    /// sends). Use [`RawMsg::zeroed`] when the bytes will be read.
    pub fn uninit(size: usize) -> Result<Self, CallFailed> {
        let mut msg = std::mem::MaybeUninit::<zmq_msg_t>::uninit();
        // SAFETY: zmq_msg_init_size initialises the struct or returns -1.
        let rc = unsafe { (api().zmq_msg_init_size)(msg.as_mut_ptr(), size) };
        if rc != 0 {
            return Err(CallFailed {
                op: "zmq_msg_init_size",
                source: last_error(),
            });
        }
        Ok(RawMsg {
            // SAFETY: rc == 0, so it is initialised.
            msg: unsafe { msg.assume_init() },
            len: size,
            sent: false,
        })
    }

    /// Replaces this message, in place, by one of `size` uninitialised bytes (libzmq's
    /// remote_thr does the same close and init for every message). Reusing one `RawMsg`
    /// keeps the 64-byte `zmq_msg_t` from being moved for every message sent.
    #[inline]
    pub fn reset_uninit(&mut self, size: usize) -> Result<(), CallFailed> {
        let api = api();
        // SAFETY: the message is initialised; unless libzmq emptied it by sending it, it is
        // closed first; after that it is re-initialised at once, and if that fails it is
        // made a valid empty message again.
        unsafe {
            if !self.sent {
                (api.zmq_msg_close)(&mut self.msg);
            }
            self.sent = false;
            if (api.zmq_msg_init_size)(&mut self.msg, size) != 0 {
                let e = last_error();
                (api.zmq_msg_init)(&mut self.msg);
                self.len = 0;
                return Err(CallFailed {
                    op: "zmq_msg_init_size",
                    source: e,
                });
            }
        }
        self.len = size;
        Ok(())
    }

    /// A message of `size` zero bytes.
    pub fn zeroed(size: usize) -> Result<Self, CallFailed> {
        let mut m = Self::uninit(size)?;
        // SAFETY: the data pointer covers `size` bytes owned by the message.
        unsafe { std::ptr::write_bytes(m.data_ptr(), 0, size) };
        Ok(m)
    }

    /// A message holding a copy of `bytes`.
    pub fn copy_of(bytes: &[u8]) -> Result<Self, CallFailed> {
        let mut m = Self::uninit(bytes.len())?;
        // SAFETY: the message owns bytes.len() bytes at data_ptr.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), m.data_ptr(), bytes.len()) };
        Ok(m)
    }

    #[inline]
    fn data_ptr(&mut self) -> *mut u8 {
        // SAFETY: the message is initialised.
        unsafe { layout::data(&mut self.msg) }
    }

    /// The `zmq_msg_t` itself, for a test that reads it as libzmq does.
    #[cfg(test)]
    pub(crate) fn raw(&mut self) -> *mut zmq_msg_t {
        &mut self.msg
    }

    /// Size in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the message is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes `bytes` at the start of the message (at most its length).
    #[inline]
    pub fn write_prefix(&mut self, bytes: &[u8]) {
        let n = bytes.len().min(self.len());
        // SAFETY: n is within the message's own bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.data_ptr(), n) };
    }

    /// Writes `bytes` at offset `at` of the message, as far as the message goes.
    pub fn write_at(&mut self, at: usize, bytes: &[u8]) {
        let n = bytes.len().min(self.len().saturating_sub(at));
        if n > 0 {
            // SAFETY: `at + n` is within the message's own bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.data_ptr().add(at), n) };
        }
    }

    /// Sets every byte from offset `at` to the end to `b`.
    pub fn fill_from(&mut self, at: usize, b: u8) {
        if self.len() > at {
            // SAFETY: the range is within the message's own bytes.
            unsafe { std::ptr::write_bytes(self.data_ptr().add(at), b, self.len() - at) };
        }
    }

    /// Writes exactly `N` bytes at the start of the message, as a fixed-size copy the
    /// compiler can inline (the header on the hot path).
    ///
    /// # Panics
    /// If the message is shorter than `N`.
    #[inline]
    pub fn write_array<const N: usize>(&mut self, bytes: &[u8; N]) {
        assert!(self.len() >= N, "message shorter than {N} bytes");
        // SAFETY: the message owns at least N bytes at data_ptr.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.data_ptr(), N) };
    }

    /// The first `n` bytes (or fewer, if the message is shorter), for reading a header.
    ///
    /// Only call on messages whose content was written (received or zeroed).
    #[inline]
    pub fn prefix(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.len());
        // SAFETY: the bytes belong to the message and were initialised by the sender or by us.
        unsafe { std::slice::from_raw_parts(self.data_ptr(), n) }
    }

    /// The first `N` little-endian words (a header's start, its sequence, its stamp: read
    /// without a slice), or None for a message shorter than `8 * N` bytes.
    ///
    /// Only call on messages whose content was written (received or zeroed).
    #[inline(always)]
    pub fn head_words<const N: usize>(&mut self) -> Option<[u64; N]> {
        if self.len() < 8 * N {
            return None;
        }
        let p = self.data_ptr() as *const u64;
        // SAFETY: the message owns at least 8 * N initialised bytes at p.
        Some(std::array::from_fn(|k| {
            u64::from_le(unsafe { p.add(k).read_unaligned() })
        }))
    }

    /// Writes two little-endian words at offset `at` (a header's sequence and time stamp,
    /// written without a slice).
    ///
    /// # Panics
    /// If the message is shorter than `at + 16` bytes.
    #[inline(always)]
    pub fn write_words_at(&mut self, at: usize, words: [u64; 2]) {
        assert!(
            self.len() >= at + 16,
            "message shorter than {} bytes",
            at + 16
        );
        let p = self.data_ptr();
        // SAFETY: the message owns at least at + 16 bytes at p.
        unsafe {
            (p.add(at) as *mut u64).write_unaligned(words[0].to_le());
            (p.add(at + 8) as *mut u64).write_unaligned(words[1].to_le());
        }
    }

    /// Whether more frames of the same message follow this one (after a receive).
    #[inline]
    pub fn more(&self) -> bool {
        // SAFETY: the message is initialised; zmq_msg_more only reads its flags.
        unsafe { layout::more(&self.msg) }
    }

    /// The whole content. Only for messages whose content was written.
    pub fn bytes(&mut self) -> &[u8] {
        self.prefix(self.len())
    }

    /// Sends the message; its content moves to ZeroMQ and this message becomes empty.
    #[inline(always)]
    pub fn send(
        &mut self,
        sock: &mut zmq::Socket,
        flags: i32,
    ) -> std::result::Result<(), zmq::Error> {
        // SAFETY: both pointers are valid; on success libzmq takes the content and reinitialises msg.
        let rc = unsafe { (api().zmq_msg_send)(&mut self.msg, sock.as_mut_ptr(), flags) };
        if rc < 0 {
            Err(last_error())
        } else {
            self.len = 0;
            self.sent = true;
            Ok(())
        }
    }

    /// Sets the group a RADIO sends the message to (the draft API; cleared by each send).
    pub fn set_group(&mut self, group: &std::ffi::CStr) -> std::result::Result<(), zmq::Error> {
        let draft = zmq::library::draft_api().ok_or(zmq::Error::ENOTSUP)?;
        // SAFETY: a live message and a valid C string (libzmq copies it).
        let rc = unsafe { (draft.zmq_msg_set_group)(&mut self.msg, group.as_ptr()) };
        if rc < 0 {
            Err(last_error())
        } else {
            Ok(())
        }
    }

    /// The group a DISH received the message in (the draft API), if any.
    pub fn group(&mut self) -> Option<String> {
        let draft = zmq::library::draft_api()?;
        // SAFETY: a live message; libzmq returns a C string it owns, valid while the
        // message is.
        let p = unsafe { (draft.zmq_msg_group)(&mut self.msg) };
        // SAFETY: non-null: a NUL-terminated string.
        (!p.is_null()).then(|| {
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        })
    }

    /// Addresses the message to a peer by its routing id (a SERVER's or PEER's; the draft
    /// API; cleared by each send).
    pub fn set_routing_id(&mut self, id: u32) -> std::result::Result<(), zmq::Error> {
        let draft = zmq::library::draft_api().ok_or(zmq::Error::ENOTSUP)?;
        // SAFETY: a live message.
        let rc = unsafe { (draft.zmq_msg_set_routing_id)(&mut self.msg, id) };
        if rc < 0 {
            Err(last_error())
        } else {
            Ok(())
        }
    }

    /// The routing id a SERVER received the message with (0: none).
    pub fn routing_id(&mut self) -> u32 {
        zmq::library::draft_api()
            // SAFETY: a live message.
            .map_or(0, |d| unsafe { (d.zmq_msg_routing_id)(&mut self.msg) })
    }

    /// Receives the next message into this one, replacing its content.
    #[inline(always)]
    pub fn recv(
        &mut self,
        sock: &mut zmq::Socket,
        flags: i32,
    ) -> std::result::Result<(), zmq::Error> {
        // SAFETY: both pointers are valid; libzmq closes the old content first.
        let rc = unsafe { (api().zmq_msg_recv)(&mut self.msg, sock.as_mut_ptr(), flags) };
        if rc < 0 {
            Err(last_error())
        } else {
            // zmq_msg_recv returns the size; it cannot be negative here.
            self.len = rc as usize;
            self.sent = false;
            Ok(())
        }
    }
}

impl Default for RawMsg {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for RawMsg {
    fn drop(&mut self) {
        // SAFETY: the message is initialised and closed exactly once.
        unsafe { (api().zmq_msg_close)(&mut self.msg) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn send_and_receive_in_place() {
        let ctx = zmq::Context::new();
        let mut a = ctx.socket(zmq::PAIR).unwrap();
        let mut b = ctx.socket(zmq::PAIR).unwrap();
        a.bind("inproc://rawmsg").unwrap();
        b.connect("inproc://rawmsg").unwrap();
        b.set_rcvtimeo(5000).unwrap();
        let mut m = RawMsg::zeroed(100).unwrap();
        m.write_prefix(b"hello");
        m.send(&mut a, 0).unwrap();
        assert_eq!(m.len(), 0, "sending empties the message");
        let mut r = RawMsg::new();
        r.recv(&mut b, 0).unwrap();
        assert_eq!(r.len(), 100);
        assert_eq!(r.prefix(5), b"hello");
        assert!(r.bytes()[5..].iter().all(|&x| x == 0));
        let mut c = RawMsg::copy_of(b"xyz").unwrap();
        assert_eq!(c.len(), 3);
        // The kept length agrees with libzmq's own, through every change.
        let size = |m: &RawMsg| unsafe { (api().zmq_msg_size)(&m.msg) };
        assert_eq!(size(&c), 3);
        assert_eq!(size(&r), r.len());
        c.reset_uninit(70_000).unwrap();
        assert_eq!((c.len(), size(&c)), (70_000, 70_000));
        c.send(&mut a, 0).unwrap();
        assert_eq!((c.len(), size(&c)), (0, 0));
        r.recv(&mut b, 0).unwrap();
        assert_eq!((r.len(), size(&r)), (70_000, 70_000));
    }
}
