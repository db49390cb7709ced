//! A libzmq socket: bind and connect, send and receive, and its options.

use super::error::check;
use super::*;
use std::ffi::{c_int, c_void, CString};
use std::os::unix::io::RawFd;

/// A libzmq socket, closed when dropped.
pub struct Socket {
    pub(super) raw: *mut c_void,
    pub(super) _ctx: Option<Context>,
    /// The routing id of the peer a PEER connected to ([`Socket::connect_peer`]; 0: none).
    pub(super) peer: u32,
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
        Socket {
            raw,
            _ctx: None,
            peer: 0,
        }
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

    /// A PEER connects to an endpoint (the draft API's `zmq_connect_peer`): the routing id
    /// it returns addresses every message this socket sends ([`Socket::peer_routing_id`]).
    pub fn connect_peer(&mut self, endpoint: &str) -> Result<u32> {
        let f = super::library::peer_api().ok_or(Error::ENOTSUP)?;
        let e = cstring(endpoint)?;
        // SAFETY: live socket, valid C string; 0 is libzmq's failure, with errno set.
        let id = unsafe { (f.zmq_connect_peer)(self.raw, e.as_ptr()) };
        if id == 0 {
            return Err(Error::last());
        }
        self.peer = id;
        Ok(id)
    }

    /// The routing id of the peer this PEER connected to, or None.
    pub fn peer_routing_id(&self) -> Option<u32> {
        (self.peer != 0).then_some(self.peer)
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

    /// A DISH joins a group (the draft API): it takes the RADIO's messages of that group.
    pub fn join(&self, group: &str) -> Result<()> {
        let draft = super::library::draft_api().ok_or(Error::ENOTSUP)?;
        let g = cstring(group)?;
        // SAFETY: live socket, valid C string.
        check(unsafe { (draft.zmq_join)(self.raw, g.as_ptr()) }).map(|_| ())
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
}
