//! A message's bytes and its "more" flag read from the `zmq_msg_t` itself, for the libzmq
//! built into zmqperf (4.3.5, whose `msg_t` layout this build knows), instead of calling
//! `zmq_msg_data` and `zmq_msg_more`. libzmq's `data()` asserts the message's validity and
//! switches on its type in about 23 instructions; the C perf tools never call it, and
//! zmqperf calls it once per message on each side to write and read the measurement
//! header, so it was the largest single cost of the header (docs/libzmq.md).
//!
//! The layout is trusted only after [`holds`] has compared it with libzmq's own answers on
//! messages of every kind it reads; any other library, or a type this file does not know
//! (a delimiter, a join), goes through libzmq's functions as before.

use super::ffi::{zmq_msg_t, Api};
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

/// Offsets in libzmq 4.3.5's `msg_t` (src/msg.hpp): a metadata pointer (8 bytes), then the
/// very small message's 33 bytes of data and its size byte, then the type and the flags,
/// shared by every kind of message.
const DATA_AT: usize = 8;
const TYPE_AT: usize = 8 + 33 + 1;
const FLAGS_AT: usize = TYPE_AT + 1;
/// `msg_t::more`.
const MORE: u8 = 1;

/// The message types whose bytes are found here (msg.hpp's `type_*`).
const VSM: u8 = 101;
const LMSG: u8 = 102;
const CMSG: u8 = 104;
const ZCLMSG: u8 = 105;

/// Whether the bundled library is in use and its layout held at start.
static DIRECT: AtomicBool = AtomicBool::new(false);

/// Reads messages directly from now on (the bundled library, its layout checked).
pub(super) fn use_direct() {
    DIRECT.store(true, Ordering::Relaxed);
}

/// The message's bytes. The library's table is looked up only when it is asked.
///
/// # Safety
/// `msg` is an initialised message of the library this process measures.
#[inline(always)]
pub unsafe fn data(msg: *mut zmq_msg_t) -> *mut u8 {
    if DIRECT.load(Ordering::Relaxed) {
        if let Some(p) = direct_data(msg) {
            return p;
        }
    }
    (super::api().zmq_msg_data)(msg) as *mut u8
}

/// Whether more frames of the same message follow.
///
/// # Safety
/// As [`data`].
#[inline(always)]
pub unsafe fn more(msg: *const zmq_msg_t) -> bool {
    if DIRECT.load(Ordering::Relaxed) {
        return *(msg as *const u8).add(FLAGS_AT) & MORE != 0;
    }
    (super::api().zmq_msg_more)(msg) != 0
}

/// Where 4.3.5 keeps the bytes of a message of a type it knows: in the message (very
/// small), behind its content block's first field (large, and zero-copy from a decoder), or
/// behind its own pointer (constant).
#[inline(always)]
unsafe fn direct_data(msg: *mut zmq_msg_t) -> Option<*mut u8> {
    let p = msg as *mut u8;
    let kind = *p.add(TYPE_AT);
    // The kinds a receive and a sized message give most (a decoder's zero-copy message, a
    // large one) in line; the others out of line, so that the compiler does not make one
    // jump table of them all (which cost twice the instructions per message).
    if kind == ZCLMSG || kind == LMSG {
        return Some(**(p.add(DATA_AT) as *const *const *mut u8));
    }
    other_data(p, kind)
}

/// [`direct_data`] for the kinds other than the large and zero-copy ones.
#[inline(never)]
unsafe fn other_data(p: *mut u8, kind: u8) -> Option<*mut u8> {
    match kind {
        VSM => Some(p.add(DATA_AT)),
        CMSG => Some(*(p.add(DATA_AT) as *const *mut u8)),
        _ => None,
    }
}

/// Whether the layout above is the library's: messages of each kind it reads (empty, very
/// small, at the very small limit and past it, large, constant data), each read here and by
/// libzmq, with the same bytes, and the "more" flag of each as libzmq reads it. A library
/// that differs in any of them is read through its functions.
pub(super) fn holds(api: &Api) -> bool {
    static CONSTANT: [u8; 48] = [7; 48];
    // One message, made by `init`, read both ways, then closed.
    let agrees = |init: &dyn Fn(*mut zmq_msg_t) -> c_int| {
        let mut m = std::mem::MaybeUninit::<zmq_msg_t>::zeroed();
        if init(m.as_mut_ptr()) != 0 {
            return false;
        }
        // SAFETY: libzmq initialised the message; it is read, then closed once.
        unsafe {
            let theirs = (api.zmq_msg_data)(m.as_mut_ptr()) as *mut u8;
            let same = direct_data(m.as_mut_ptr()) == Some(theirs)
                && ((api.zmq_msg_more)(m.as_ptr()) != 0)
                    == (*(m.as_ptr() as *const u8).add(FLAGS_AT) & MORE != 0);
            (api.zmq_msg_close)(m.as_mut_ptr());
            same
        }
    };
    // SAFETY (both closures): `m` points at a message struct for libzmq to initialise; the
    // constant data outlives every message made from it.
    [0usize, 1, 10, 33, 34, 64, 1024, 100_000]
        .iter()
        .all(|&size| agrees(&|m| unsafe { (api.zmq_msg_init_size)(m, size) }))
        && agrees(&|m| unsafe {
            (api.zmq_msg_init_data)(
                m,
                CONSTANT.as_ptr() as *mut _,
                CONSTANT.len(),
                None,
                std::ptr::null_mut(),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::RawMsg;
    use crate::zmq::{self, api};

    /// Every kind of message the hot loops read, as received over inproc and over tcp (whose
    /// decoder hands large messages out zero-copy): the bytes and the "more" flag read here
    /// are libzmq's own.
    #[test]
    fn the_bundled_layout_reads_what_libzmq_reads() {
        assert!(
            holds(api()),
            "the bundled libzmq's layout is the one this file knows"
        );
        let ctx = zmq::Context::new();
        for ep in ["inproc://layout", "tcp://127.0.0.1:*"] {
            let mut a = ctx.socket(zmq::PAIR).unwrap();
            let mut b = ctx.socket(zmq::PAIR).unwrap();
            a.set_linger(0).unwrap();
            b.set_linger(0).unwrap();
            a.bind(ep).unwrap();
            b.connect(&a.get_last_endpoint().unwrap().unwrap()).unwrap();
            b.set_rcvtimeo(5000).unwrap();
            for size in [0usize, 5, 33, 34, 64, 1024, 70_000] {
                for more in [true, false] {
                    let mut m = RawMsg::zeroed(size).unwrap();
                    m.fill_from(0, 0x5a);
                    m.send(&mut a, if more { zmq::SNDMORE } else { 0 }).unwrap();
                }
                for more in [true, false] {
                    let mut r = RawMsg::new();
                    r.recv(&mut b, 0).unwrap();
                    let p = r.raw();
                    // SAFETY: r is an initialised, received message.
                    unsafe {
                        let theirs = (api().zmq_msg_data)(p) as *mut u8;
                        if let Some(ours) = direct_data(p) {
                            assert_eq!(ours, theirs, "{ep}, {size} B");
                        }
                        assert_eq!((api().zmq_msg_more)(p) != 0, more, "{ep}, {size} B");
                        assert_eq!(super::more(p), more, "{ep}, {size} B");
                        assert_eq!(super::data(p), theirs, "{ep}, {size} B");
                    }
                    assert!(r.bytes().iter().all(|&x| x == 0x5a), "{ep}, {size} B");
                }
            }
        }
    }
}
