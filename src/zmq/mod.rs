//! zmqperf's own thin layer over libzmq's C API: contexts, sockets, options, polling and
//! errors, over the function table of the libzmq chosen for the run ([`library`]). The one
//! place in the project that talks to libzmq (with [`crate::msg::RawMsg`] for the hot loops).

pub mod ffi;
pub mod library;

pub use library::{api, info as library, LibraryInfo, LIBZMQ_ENV};

use std::ffi::{c_int, c_void, CStr, CString};
use std::fmt;
use std::marker::PhantomData;
use std::os::unix::io::RawFd;
use std::sync::Arc;

/// A libzmq error number.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Error(i32);

const HAUSNUMERO: i32 = 156_384_712;

impl Error {
    pub const EAGAIN: Error = Error(libc::EAGAIN);
    pub const EINTR: Error = Error(libc::EINTR);
    pub const EINVAL: Error = Error(libc::EINVAL);
    pub const ENOENT: Error = Error(libc::ENOENT);
    pub const ENODEV: Error = Error(libc::ENODEV);
    pub const EMFILE: Error = Error(libc::EMFILE);
    pub const EACCES: Error = Error(libc::EACCES);
    pub const EADDRINUSE: Error = Error(libc::EADDRINUSE);
    pub const EADDRNOTAVAIL: Error = Error(libc::EADDRNOTAVAIL);
    pub const ECONNREFUSED: Error = Error(libc::ECONNREFUSED);
    pub const EHOSTUNREACH: Error = Error(libc::EHOSTUNREACH);
    pub const ENOTSUP: Error = Error(libc::ENOTSUP);
    pub const ENOMEM: Error = Error(libc::ENOMEM);
    pub const EPROTONOSUPPORT: Error = Error(libc::EPROTONOSUPPORT);
    pub const EFSM: Error = Error(HAUSNUMERO + 51);
    pub const ENOCOMPATPROTO: Error = Error(HAUSNUMERO + 52);
    pub const ETERM: Error = Error(HAUSNUMERO + 53);
    pub const EMTHREAD: Error = Error(HAUSNUMERO + 54);

    /// The error of this number.
    pub fn from_raw(errno: i32) -> Error {
        Error(errno)
    }

    /// Its number.
    pub fn to_raw(self) -> i32 {
        self.0
    }

    /// The thread's last libzmq error.
    pub fn last() -> Error {
        // SAFETY: zmq_errno only reads the thread's errno.
        Error(unsafe { (api().zmq_errno)() })
    }

    /// libzmq's text for it (`zmq_strerror`).
    pub fn message(self) -> String {
        // SAFETY: zmq_strerror returns a static C string.
        unsafe { CStr::from_ptr((api().zmq_strerror)(self.0)) }
            .to_string_lossy()
            .into_owned()
    }

    fn name(self) -> Option<&'static str> {
        Some(match self {
            Error::EAGAIN => "EAGAIN",
            Error::EINTR => "EINTR",
            Error::EINVAL => "EINVAL",
            Error::ENOENT => "ENOENT",
            Error::ENODEV => "ENODEV",
            Error::EMFILE => "EMFILE",
            Error::EACCES => "EACCES",
            Error::EADDRINUSE => "EADDRINUSE",
            Error::EADDRNOTAVAIL => "EADDRNOTAVAIL",
            Error::ECONNREFUSED => "ECONNREFUSED",
            Error::EHOSTUNREACH => "EHOSTUNREACH",
            Error::ENOTSUP => "ENOTSUP",
            Error::EPROTONOSUPPORT => "EPROTONOSUPPORT",
            Error::EFSM => "EFSM",
            Error::ENOCOMPATPROTO => "ENOCOMPATPROTO",
            Error::ETERM => "ETERM",
            Error::EMTHREAD => "EMTHREAD",
            _ => return None,
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "errno {}", self.0),
        }
    }
}

impl std::error::Error for Error {}

/// The result of a libzmq call.
pub type Result<T> = std::result::Result<T, Error>;

fn check(rc: c_int) -> Result<c_int> {
    if rc < 0 {
        Err(Error::last())
    } else {
        Ok(rc)
    }
}

/// A libzmq socket type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SocketType(c_int);

pub const PAIR: SocketType = SocketType(0);
pub const PUB: SocketType = SocketType(1);
pub const SUB: SocketType = SocketType(2);
pub const REQ: SocketType = SocketType(3);
pub const REP: SocketType = SocketType(4);
pub const DEALER: SocketType = SocketType(5);
pub const ROUTER: SocketType = SocketType(6);
pub const PULL: SocketType = SocketType(7);
pub const PUSH: SocketType = SocketType(8);
pub const XPUB: SocketType = SocketType(9);
pub const XSUB: SocketType = SocketType(10);

impl SocketType {
    /// libzmq's number for it.
    pub fn to_raw(self) -> c_int {
        self.0
    }
}

/// Send and receive flags.
pub const DONTWAIT: i32 = 1;
pub const SNDMORE: i32 = 2;

/// Poll events (`ZMQ_POLLIN`, `ZMQ_POLLOUT`, `ZMQ_POLLERR`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct PollEvents(i16);

pub const POLLIN: PollEvents = PollEvents(1);
pub const POLLOUT: PollEvents = PollEvents(2);
pub const POLLERR: PollEvents = PollEvents(4);

impl PollEvents {
    /// Whether every event of `other` is set here.
    pub fn contains(self, other: PollEvents) -> bool {
        self.0 & other.0 == other.0
    }

    /// No event.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl std::ops::BitOr for PollEvents {
    type Output = PollEvents;
    fn bitor(self, o: PollEvents) -> PollEvents {
        PollEvents(self.0 | o.0)
    }
}

// Socket options (zmq.h).
pub const ZMQ_ROUTING_ID: c_int = 5;
pub const ZMQ_SUBSCRIBE: c_int = 6;
pub const ZMQ_SNDBUF: c_int = 11;
pub const ZMQ_RCVBUF: c_int = 12;
pub const ZMQ_RCVMORE: c_int = 13;
pub const ZMQ_FD: c_int = 14;
pub const ZMQ_EVENTS: c_int = 15;
pub const ZMQ_LINGER: c_int = 17;
pub const ZMQ_BACKLOG: c_int = 19;
pub const ZMQ_MAXMSGSIZE: c_int = 22;
pub const ZMQ_SNDHWM: c_int = 23;
pub const ZMQ_RCVHWM: c_int = 24;
pub const ZMQ_RCVTIMEO: c_int = 27;
pub const ZMQ_SNDTIMEO: c_int = 28;
pub const ZMQ_LAST_ENDPOINT: c_int = 32;
pub const ZMQ_TCP_KEEPALIVE: c_int = 34;
pub const ZMQ_IMMEDIATE: c_int = 39;
pub const ZMQ_IPV6: c_int = 42;
pub const ZMQ_MECHANISM: c_int = 43;
pub const ZMQ_PLAIN_SERVER: c_int = 44;
pub const ZMQ_PLAIN_USERNAME: c_int = 45;
pub const ZMQ_PLAIN_PASSWORD: c_int = 46;
pub const ZMQ_CURVE_SERVER: c_int = 47;
pub const ZMQ_CURVE_PUBLICKEY: c_int = 48;
pub const ZMQ_CURVE_SECRETKEY: c_int = 49;
pub const ZMQ_CURVE_SERVERKEY: c_int = 50;
pub const ZMQ_ZAP_DOMAIN: c_int = 55;
// Context options.
pub const ZMQ_IO_THREADS: c_int = 1;
pub const ZMQ_MAX_SOCKETS: c_int = 2;

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
            let raw = unsafe { (api().zmq_socket)(self.raw.0, REP.0) };
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
        let s = unsafe { (api().zmq_socket)(self.raw.0, kind.0) };
        if s.is_null() {
            return Err(Error::last());
        }
        Ok(Socket {
            raw: s,
            _ctx: Some(self.clone()),
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

/// A libzmq socket, closed when dropped.
pub struct Socket {
    raw: *mut c_void,
    _ctx: Option<Context>,
}

// SAFETY: a libzmq socket may move between threads (it is used by one thread at a time).
unsafe impl Send for Socket {}

impl Drop for Socket {
    fn drop(&mut self) {
        // SAFETY: the socket is live and closed once.
        unsafe { (api().zmq_close)(self.raw) };
    }
}

fn cstring(s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::EINVAL)
}

impl Socket {
    /// Takes ownership of a socket made by `zmq_socket` on a context that outlives it.
    ///
    /// # Safety
    /// `raw` must be a live socket owned by nobody else.
    pub unsafe fn from_raw(raw: *mut c_void) -> Socket {
        Socket { raw, _ctx: None }
    }

    /// The context the socket was made in (none for a socket taken over with `from_raw`).
    pub fn context(&self) -> Option<&Context> {
        self._ctx.as_ref()
    }

    /// The `void *` libzmq knows the socket by.
    #[inline]
    pub fn as_mut_ptr(&mut self) -> *mut c_void {
        self.raw
    }

    /// Binds to an endpoint.
    pub fn bind(&self, endpoint: &str) -> Result<()> {
        let e = cstring(endpoint)?;
        // SAFETY: live socket, valid C string.
        check(unsafe { (api().zmq_bind)(self.raw, e.as_ptr()) }).map(|_| ())
    }

    /// Connects to an endpoint.
    pub fn connect(&self, endpoint: &str) -> Result<()> {
        let e = cstring(endpoint)?;
        // SAFETY: live socket, valid C string.
        check(unsafe { (api().zmq_connect)(self.raw, e.as_ptr()) }).map(|_| ())
    }

    /// Stops binding to an endpoint.
    pub fn unbind(&self, endpoint: &str) -> Result<()> {
        let e = cstring(endpoint)?;
        // SAFETY: live socket, valid C string.
        check(unsafe { (api().zmq_unbind)(self.raw, e.as_ptr()) }).map(|_| ())
    }

    /// Disconnects from an endpoint.
    pub fn disconnect(&self, endpoint: &str) -> Result<()> {
        let e = cstring(endpoint)?;
        // SAFETY: live socket, valid C string.
        check(unsafe { (api().zmq_disconnect)(self.raw, e.as_ptr()) }).map(|_| ())
    }

    /// Sends a copy of `data` as one frame.
    pub fn send(&self, data: impl AsRef<[u8]>, flags: i32) -> Result<()> {
        let d = data.as_ref();
        // SAFETY: live socket; libzmq copies the bytes before returning.
        check(unsafe { (api().zmq_send)(self.raw, d.as_ptr() as *const c_void, d.len(), flags) })
            .map(|_| ())
    }

    /// Receives one frame as bytes.
    pub fn recv_bytes(&self, flags: i32) -> Result<Vec<u8>> {
        let api = api();
        let mut m = std::mem::MaybeUninit::<ffi::zmq_msg_t>::uninit();
        // SAFETY: the message is initialised before use and closed once; the data pointer
        // covers the size libzmq returned.
        unsafe {
            (api.zmq_msg_init)(m.as_mut_ptr());
            let rc = (api.zmq_msg_recv)(m.as_mut_ptr(), self.raw, flags);
            if rc < 0 {
                let e = Error::last();
                (api.zmq_msg_close)(m.as_mut_ptr());
                return Err(e);
            }
            let data = (api.zmq_msg_data)(m.as_mut_ptr()) as *const u8;
            let bytes = std::slice::from_raw_parts(data, rc as usize).to_vec();
            (api.zmq_msg_close)(m.as_mut_ptr());
            Ok(bytes)
        }
    }

    /// Receives every frame of the next message.
    pub fn recv_multipart(&self, flags: i32) -> Result<Vec<Vec<u8>>> {
        let mut parts = vec![self.recv_bytes(flags)?];
        while self.get_rcvmore()? {
            parts.push(self.recv_bytes(flags)?);
        }
        Ok(parts)
    }

    /// Starts libzmq's monitor of this socket on an inproc endpoint (`zmq_socket_monitor`).
    pub fn monitor(&self, endpoint: &str, events: i32) -> Result<()> {
        let e = cstring(endpoint)?;
        // SAFETY: live socket, valid C string.
        check(unsafe { (api().zmq_socket_monitor)(self.raw, e.as_ptr(), events) }).map(|_| ())
    }

    /// Sets an integer option.
    pub fn set_int(&self, option: c_int, value: i32) -> Result<()> {
        // SAFETY: the value is a live i32 of the size given.
        check(unsafe {
            (api().zmq_setsockopt)(
                self.raw,
                option,
                &value as *const i32 as *const c_void,
                std::mem::size_of::<i32>(),
            )
        })
        .map(|_| ())
    }

    /// Sets a bytes option.
    pub fn set_bytes(&self, option: c_int, value: &[u8]) -> Result<()> {
        // SAFETY: the bytes are live for the call; libzmq copies them.
        check(unsafe {
            (api().zmq_setsockopt)(
                self.raw,
                option,
                value.as_ptr() as *const c_void,
                value.len(),
            )
        })
        .map(|_| ())
    }

    fn get_raw(&self, option: c_int, buf: &mut [u8]) -> Result<usize> {
        let mut len = buf.len();
        // SAFETY: buf and len describe a live buffer libzmq writes at most len bytes into.
        check(unsafe {
            (api().zmq_getsockopt)(self.raw, option, buf.as_mut_ptr() as *mut c_void, &mut len)
        })?;
        Ok(len)
    }

    /// Reads an integer option.
    pub fn get_int(&self, option: c_int) -> Result<i32> {
        let mut b = [0u8; 4];
        self.get_raw(option, &mut b)?;
        Ok(i32::from_ne_bytes(b))
    }

    pub fn set_linger(&self, ms: i32) -> Result<()> {
        self.set_int(ZMQ_LINGER, ms)
    }
    pub fn set_rcvtimeo(&self, ms: i32) -> Result<()> {
        self.set_int(ZMQ_RCVTIMEO, ms)
    }
    pub fn set_sndtimeo(&self, ms: i32) -> Result<()> {
        self.set_int(ZMQ_SNDTIMEO, ms)
    }
    pub fn set_sndhwm(&self, n: i32) -> Result<()> {
        self.set_int(ZMQ_SNDHWM, n)
    }
    pub fn set_rcvhwm(&self, n: i32) -> Result<()> {
        self.set_int(ZMQ_RCVHWM, n)
    }
    pub fn set_sndbuf(&self, n: i32) -> Result<()> {
        self.set_int(ZMQ_SNDBUF, n)
    }
    pub fn set_rcvbuf(&self, n: i32) -> Result<()> {
        self.set_int(ZMQ_RCVBUF, n)
    }
    pub fn set_backlog(&self, n: i32) -> Result<()> {
        self.set_int(ZMQ_BACKLOG, n)
    }
    pub fn set_tcp_keepalive(&self, v: i32) -> Result<()> {
        self.set_int(ZMQ_TCP_KEEPALIVE, v)
    }
    pub fn set_immediate(&self, on: bool) -> Result<()> {
        self.set_int(ZMQ_IMMEDIATE, on as i32)
    }
    /// The largest frame a peer may send (ZMQ_MAXMSGSIZE, an int64; -1: no limit). A peer
    /// that declares a larger one is disconnected before its bytes are taken in.
    pub fn set_maxmsgsize(&self, bytes: i64) -> Result<()> {
        // SAFETY: the value is a live i64 of the size given.
        check(unsafe {
            (api().zmq_setsockopt)(
                self.raw,
                ZMQ_MAXMSGSIZE,
                &bytes as *const i64 as *const c_void,
                std::mem::size_of::<i64>(),
            )
        })
        .map(|_| ())
    }
    pub fn set_ipv6(&self, on: bool) -> Result<()> {
        self.set_int(ZMQ_IPV6, on as i32)
    }
    pub fn set_subscribe(&self, prefix: &[u8]) -> Result<()> {
        self.set_bytes(ZMQ_SUBSCRIBE, prefix)
    }
    pub fn set_identity(&self, id: &[u8]) -> Result<()> {
        self.set_bytes(ZMQ_ROUTING_ID, id)
    }

    /// Whether more frames of the message follow the one just received.
    pub fn get_rcvmore(&self) -> Result<bool> {
        Ok(self.get_int(ZMQ_RCVMORE)? != 0)
    }

    /// The descriptor libzmq signals on when the socket's events change.
    pub fn get_fd(&self) -> Result<RawFd> {
        self.get_int(ZMQ_FD)
    }

    /// The events ready now.
    pub fn get_events(&self) -> Result<PollEvents> {
        Ok(PollEvents(self.get_int(ZMQ_EVENTS)? as i16))
    }

    /// The endpoint last bound, with a wildcard port resolved (`tcp://127.0.0.1:41234`).
    pub fn get_last_endpoint(&self) -> Result<std::result::Result<String, Vec<u8>>> {
        let mut b = [0u8; 1024];
        let n = self.get_raw(ZMQ_LAST_ENDPOINT, &mut b)?;
        let bytes = b[..n].split(|&c| c == 0).next().unwrap_or(&[]).to_vec();
        Ok(String::from_utf8(bytes).map_err(|e| e.into_bytes()))
    }

    /// A poll item for this socket.
    pub fn as_poll_item(&self, events: PollEvents) -> PollItem<'_> {
        PollItem {
            raw: ffi::zmq_pollitem_t {
                socket: self.raw,
                fd: 0,
                events: events.0,
                revents: 0,
            },
            _socket: PhantomData,
        }
    }

    /// Waits up to `timeout_ms` (-1: for ever) for these events; returns how many are ready.
    pub fn poll(&self, events: PollEvents, timeout_ms: i64) -> Result<i32> {
        poll(&mut [self.as_poll_item(events)], timeout_ms)
    }
}

/// One entry of a [`poll`].
#[repr(transparent)]
pub struct PollItem<'a> {
    raw: ffi::zmq_pollitem_t,
    _socket: PhantomData<&'a Socket>,
}

impl PollItem<'_> {
    /// The events that were ready.
    pub fn get_revents(&self) -> PollEvents {
        PollEvents(self.raw.revents)
    }

    /// Whether a message can be received.
    pub fn is_readable(&self) -> bool {
        self.get_revents().contains(POLLIN)
    }

    /// Whether a message can be sent.
    pub fn is_writable(&self) -> bool {
        self.get_revents().contains(POLLOUT)
    }
}

/// `zmq_poll`: waits up to `timeout_ms` (-1: for ever) for any item; returns how many are
/// ready.
pub fn poll(items: &mut [PollItem], timeout_ms: i64) -> Result<i32> {
    // SAFETY: PollItem is a transparent zmq_pollitem_t; the sockets outlive the call.
    check(unsafe {
        (api().zmq_poll)(
            items.as_mut_ptr() as *mut ffi::zmq_pollitem_t,
            items.len() as c_int,
            timeout_ms as std::ffi::c_long,
        )
    })
}
