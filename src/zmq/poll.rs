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
