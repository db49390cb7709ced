//! The libzmq context, shared by its clones and kept alive by its sockets, with the ZAP
//! handler that lets PLAIN handshakes through; and libzmq's version.

use super::error::check;
use super::{api, Error, Result, Socket, SocketType, REP, SNDMORE, ZMQ_IO_THREADS};
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// libzmq's version, e.g. (4, 3, 5).
pub fn version() -> (i32, i32, i32) {
    let (mut a, mut b, mut c) = (0, 0, 0);
    // SAFETY: writes three ints.
    unsafe { (api().zmq_version)(&mut a, &mut b, &mut c) };
    (a, b, c)
}

struct RawContext(
    *mut c_void,
    std::sync::OnceLock<std::result::Result<(), Error>>,
);

// SAFETY: a libzmq context is thread-safe.
unsafe impl Send for RawContext {}
unsafe impl Sync for RawContext {}

impl Drop for RawContext {
    fn drop(&mut self) {
        // SAFETY: the context is live; zmq_ctx_term is retried when a signal interrupts it.
        while unsafe { (api().zmq_ctx_term)(self.0) } != 0 {
            if Error::last() != Error::EINTR {
                break;
            }
        }
    }
}

/// A libzmq context, shared by its clones and kept alive by every socket made from it (so a
/// context is never terminated while one of its sockets is open).
#[derive(Clone)]
pub struct Context {
    raw: Arc<RawContext>,
}

impl Context {
    /// A new context.
    pub fn new() -> Context {
        // SAFETY: zmq_ctx_new takes nothing; null only when out of memory or descriptors.
        let raw = unsafe { (api().zmq_ctx_new)() };
        assert!(!raw.is_null(), "zmq_ctx_new failed: {}", Error::last());
        Context {
            raw: Arc::new(RawContext(raw, std::sync::OnceLock::new())),
        }
    }

    /// Sets a context option (`zmq_ctx_set`).
    pub fn set(&self, option: c_int, value: c_int) -> Result<()> {
        // SAFETY: the context is live.
        check(unsafe { (api().zmq_ctx_set)(self.raw.0, option, value) }).map(|_| ())
    }

    /// The number of I/O threads (before the first socket).
    pub fn set_io_threads(&self, n: i32) -> Result<()> {
        self.set(ZMQ_IO_THREADS, n)
    }

    /// Starts, once per context, a ZAP handler (RFC 27) that accepts every client: libzmq's
    /// PLAIN server refuses every handshake when no handler answers. zmqperf measures what a
    /// mechanism costs, not an access policy. The handler's socket does not keep the context
    /// alive: when the context terminates, its receive fails with ETERM and it closes.
    pub fn start_zap_handler(&self) -> Result<()> {
        *self.raw.1.get_or_init(|| {
            // SAFETY: the context is live; the socket is owned by the handler thread alone.
            let raw = unsafe { (api().zmq_socket)(self.raw.0, REP.to_raw()) };
            if raw.is_null() {
                return Err(Error::last());
            }
            // SAFETY: a fresh socket, owned by nobody else.
            let sock = unsafe { Socket::from_raw(raw) };
            sock.set_linger(0)?;
            sock.bind("inproc://zeromq.zap.01")?;
            std::thread::Builder::new()
                .name("zmqperf-zap".into())
                .spawn(move || zap_loop(sock))
                .map_err(|_| Error::EMTHREAD)?;
            Ok(())
        })
    }

    /// A new socket of this type.
    pub fn socket(&self, kind: SocketType) -> Result<Socket> {
        // SAFETY: the context is live.
        let s = unsafe { (api().zmq_socket)(self.raw.0, kind.to_raw()) };
        if s.is_null() {
            return Err(Error::last());
        }
        Ok(Socket {
            raw: s,
            _ctx: Some(self.clone()),
            peer: 0,
        })
    }
}

impl Default for Context {
    fn default() -> Self {
        Context::new()
    }
}

/// Answers ZAP requests with 200 OK until the context terminates.
fn zap_loop(sock: Socket) {
    loop {
        match sock.recv_multipart(0) {
            // version, request id, domain, address, routing id, mechanism, credentials...
            Ok(req) if req.len() >= 6 => {
                let user = if req[5] == b"PLAIN" {
                    req.get(6).cloned().unwrap_or_default()
                } else {
                    Vec::new()
                };
                let reply: [&[u8]; 6] = [b"1.0", &req[1], b"200", b"OK", &user, b""];
                for (i, part) in reply.iter().enumerate() {
                    let flags = if i + 1 < reply.len() { SNDMORE } else { 0 };
                    if sock.send(part, flags).is_err() {
                        return;
                    }
                }
            }
            Ok(_) => {
                let reply: [&[u8]; 6] = [b"1.0", b"", b"400", b"malformed request", b"", b""];
                for (i, part) in reply.iter().enumerate() {
                    let flags = if i + 1 < reply.len() { SNDMORE } else { 0 };
                    if sock.send(part, flags).is_err() {
                        return;
                    }
                }
            }
            Err(Error::EINTR) => continue,
            Err(_) => return,
        }
    }
}
