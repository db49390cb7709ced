//! Polling: the events of a socket, and `zmq_poll` over several.

use super::error::check;
use super::{api, ffi, Result, Socket};
use std::ffi::c_int;
use std::marker::PhantomData;

/// Poll events (`ZMQ_POLLIN`, `ZMQ_POLLOUT`, `ZMQ_POLLERR`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct PollEvents(pub(super) i16);

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

impl Socket {
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

/// The draft API's `zmq_poller` over thread-safe sockets (DISH, SERVER, ...), which have
/// no ZMQ_FD for an epoll set of one's own: each socket with a token handed back when it
/// has input. Level-triggered: a socket with a message waiting is handed back
/// on every wait. The sockets added must outlive it (it detaches from them when dropped).
pub struct SocketPoller {
    raw: *mut std::ffi::c_void,
    events: Vec<ffi::zmq_poller_event_t>,
}

impl SocketPoller {
    /// An empty poller; ENOTSUP when the library lacks the draft API.
    pub fn new() -> Result<SocketPoller> {
        let draft = super::library::draft_api().ok_or(super::Error::ENOTSUP)?;
        // SAFETY: takes nothing; null means failure.
        let raw = unsafe { (draft.zmq_poller_new)() };
        if raw.is_null() {
            return Err(super::Error::last());
        }
        Ok(SocketPoller {
            raw,
            events: Vec::new(),
        })
    }

    fn draft() -> &'static ffi::DraftApi {
        // A poller exists only where the draft API does (see `new`).
        super::library::draft_api().expect("a SocketPoller exists only with the draft API")
    }

    /// Watches `socket` for input, handing back `token`.
    pub fn add(&mut self, socket: &Socket, token: u64) -> Result<()> {
        // SAFETY: live poller and socket; the token is stored, never dereferenced.
        check(unsafe {
            (Self::draft().zmq_poller_add)(self.raw, socket.raw, token as usize as *mut _, POLLIN.0)
        })?;
        self.grow();
        Ok(())
    }

    fn grow(&mut self) {
        let empty = ffi::zmq_poller_event_t {
            socket: std::ptr::null_mut(),
            fd: -1,
            user_data: std::ptr::null_mut(),
            events: 0,
        };
        self.events.push(empty);
    }

    /// The descriptor that becomes readable when a thread-safe socket added has something
    /// for its owner (a command in its mailbox), until a [`SocketPoller::wait`] takes the
    /// signal: for an epoll set of one's own, a poller per socket.
    pub fn fd(&self) -> Result<c_int> {
        let mut fd: c_int = -1;
        // SAFETY: live poller; writes one int.
        check(unsafe { (Self::draft().zmq_poller_fd)(self.raw, &mut fd) })?;
        Ok(fd)
    }

    /// Stops watching `socket` (before it is closed).
    pub fn remove(&mut self, socket: &Socket) -> Result<()> {
        // SAFETY: live poller and socket.
        check(unsafe { (Self::draft().zmq_poller_remove)(self.raw, socket.raw) })?;
        self.events.pop();
        Ok(())
    }

    /// Waits up to `timeout_ms` and returns the tokens of the ready items (empty on timeout
    /// or on an interrupted wait).
    pub fn wait(&mut self, timeout_ms: i64, ready: &mut Vec<u64>) -> Result<()> {
        ready.clear();
        if self.events.is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(timeout_ms.max(0) as u64));
            return Ok(());
        }
        // SAFETY: the buffer holds events.len() entries, as many as the items watched.
        let rc = unsafe {
            (Self::draft().zmq_poller_wait_all)(
                self.raw,
                self.events.as_mut_ptr(),
                self.events.len() as c_int,
                timeout_ms as std::ffi::c_long,
            )
        };
        match check(rc) {
            Ok(n) => {
                let n = n as usize;
                ready.extend(self.events[..n].iter().map(|e| e.user_data as usize as u64));
                Ok(())
            }
            Err(super::Error::EAGAIN) | Err(super::Error::EINTR) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

impl Drop for SocketPoller {
    fn drop(&mut self) {
        // SAFETY: our poller, destroyed once.
        unsafe { (Self::draft().zmq_poller_destroy)(&mut self.raw) };
    }
}
