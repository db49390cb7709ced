//! The swarm's sockets: a libzmq context that allows more than 1,023 sockets, and the SUB
//! sockets opened and connected in it.

use crate::error::{zmq_err, Result};
use std::ffi::c_void;

/// A libzmq context that allows more sockets than the 1023 of a default one (the zmq crate
/// does not expose ZMQ_MAX_SOCKETS). Sockets made from it must be closed before it drops.
pub(super) struct BigContext {
    raw: *mut c_void,
}

fn last_zmq_error() -> zmq::Error {
    // SAFETY: zmq_errno only reads the thread's errno.
    zmq::Error::from_raw(unsafe { zmq_sys::zmq_errno() })
}

impl BigContext {
    pub(super) fn new(max_sockets: i32) -> Result<BigContext> {
        // SAFETY: zmq_ctx_new has no preconditions; it returns null on failure.
        let raw = unsafe { zmq_sys::zmq_ctx_new() };
        if raw.is_null() {
            return Err(zmq_err("zmq_ctx_new")(last_zmq_error()));
        }
        let ctx = BigContext { raw };
        // SAFETY: a live context; MAX_SOCKETS is set before its first socket, as required.
        let rc =
            unsafe { zmq_sys::zmq_ctx_set(ctx.raw, zmq_sys::ZMQ_MAX_SOCKETS as i32, max_sockets) };
        if rc != 0 {
            return Err(zmq_err("setting ZMQ_MAX_SOCKETS")(last_zmq_error()));
        }
        Ok(ctx)
    }

    pub(super) fn sub_socket(&self) -> std::result::Result<zmq::Socket, zmq::Error> {
        // SAFETY: a live context; null means failure, with errno set.
        let s = unsafe { zmq_sys::zmq_socket(self.raw, zmq_sys::ZMQ_SUB as i32) };
        if s.is_null() {
            return Err(last_zmq_error());
        }
        // SAFETY: a socket fresh from zmq_socket, owned by nothing else; the Socket closes it.
        Ok(unsafe { zmq::Socket::from_raw(s) })
    }
}

impl Drop for BigContext {
    fn drop(&mut self) {
        // SAFETY: the context is live and terminated once; every socket is closed by then.
        while unsafe { zmq_sys::zmq_ctx_term(self.raw) } != 0 {
            if last_zmq_error() != zmq::Error::EINTR {
                break;
            }
        }
    }
}
