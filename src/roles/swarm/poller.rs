//! Waiting on thousands of SUB sockets at once: an epoll set over their ZMQ_FD descriptors,
//! so a wake-up costs in proportion to the sockets that have something, not to all of them
//! (`zmq_poll` asks every socket for its events on every call).
//!
//! A socket's ZMQ_FD becomes readable when libzmq has commands for it (such as "a message
//! arrived in an empty pipe"). The rule that keeps it sound: after a wake-up, receive from
//! that socket with DONTWAIT until EAGAIN; at EAGAIN libzmq has read all its commands, and
//! the next message into the then empty pipe signals the descriptor again.

use crate::error::{zmq_err, Error, Result};
use crate::zmq;
use std::io;
use std::os::fd::RawFd;

/// The poller token of stdin (the runner's pipe), beyond any socket index.
pub(super) const STDIN_TOKEN: u64 = u64::MAX;

/// What a swarm waits on: one epoll set, over its SUB sockets' ZMQ_FDs, or, for
/// thread-safe sockets (a DISH), which have no ZMQ_FD, over the descriptor of a libzmq
/// poller of each socket's own (`zmq_poller_fd`). One poller over all of them would ask
/// every socket for its events on every wake-up: 50 DISHes at 200 msg/s cost 150 us of CPU
/// per delivery that way.
pub(super) struct Watch {
    epoll: Poller,
    fds: Vec<RawFd>,
    /// Each socket's own poller (thread-safe sockets only), by index.
    own: Vec<Option<zmq::SocketPoller>>,
    scratch: Vec<u64>,
}

/// The error of the subscribers' epoll set.
fn poller_err(e: io::Error) -> Error {
    Error::Io {
        op: "watching the subscriber sockets (epoll)".into(),
        source: e,
    }
}

impl Watch {
    /// Every socket (token: its index), and the runner's pipe when the swarm is a process
    /// of its own (a stop, or its end, wakes the swarm).
    pub(super) fn over(
        socks: &[Option<zmq::Socket>],
        thread_safe: bool,
        stdin: bool,
    ) -> Result<Watch> {
        let epoll = Poller::new(socks.len() + 1).map_err(poller_err)?;
        let mut fds = Vec::with_capacity(socks.len());
        let mut own = Vec::with_capacity(if thread_safe { socks.len() } else { 0 });
        for (i, s) in socks.iter().enumerate() {
            let Some(s) = s else {
                fds.push(-1);
                if thread_safe {
                    own.push(None);
                }
                continue;
            };
            let fd = if thread_safe {
                let mut p = zmq::SocketPoller::new().map_err(zmq_err("opening a zmq_poller"))?;
                p.add(s, i as u64)
                    .map_err(zmq_err("adding a socket to its zmq_poller"))?;
                let fd = p.fd().map_err(zmq_err("reading zmq_poller_fd"))?;
                own.push(Some(p));
                fd
            } else {
                s.get_fd().map_err(zmq_err("reading ZMQ_FD"))?
            };
            epoll.add(fd, i as u64).map_err(poller_err)?;
            fds.push(fd);
        }
        if stdin {
            let _ = epoll.add(0, STDIN_TOKEN);
        }
        Ok(Watch {
            epoll,
            fds,
            own,
            scratch: Vec::new(),
        })
    }

    /// Stops watching socket `i` (its stream ended; it stays open until the stop).
    pub(super) fn remove(&mut self, i: usize, sock: &zmq::Socket) {
        self.epoll.remove(self.fds[i]);
        if let Some(p) = self.own.get_mut(i).and_then(Option::take).as_mut() {
            let _ = p.remove(sock);
        }
    }

    /// Waits up to `timeout_ms` for the tokens of the ready sockets. A thread-safe
    /// socket's poller takes its signal here (a wait of 0 ms), before the socket is read:
    /// a command that comes after signals again.
    pub(super) fn wait(&mut self, timeout_ms: i32, ready: &mut Vec<u64>) -> Result<()> {
        self.epoll.wait(timeout_ms, ready).map_err(poller_err)?;
        for &t in ready.iter() {
            if let Some(p) = self.own.get_mut(t as usize).and_then(Option::as_mut) {
                p.wait(0, &mut self.scratch)
                    .map_err(zmq_err("taking a zmq_poller's signal"))?;
            }
        }
        Ok(())
    }
}

/// An epoll set of descriptors, each with a token handed back when it is ready.
pub(super) struct Poller {
    epfd: RawFd,
    events: Vec<libc::epoll_event>,
}

impl Poller {
    /// An empty set that returns at most `batch` ready descriptors per wait.
    pub(super) fn new(batch: usize) -> io::Result<Poller> {
        // SAFETY: epoll_create1 takes only flags; -1 means failure.
        let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epfd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Poller {
            epfd,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; batch.max(1)],
        })
    }

    /// Watches `fd` for input, handing back `token` when it is readable.
    pub(super) fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLERR | libc::EPOLLHUP) as u32,
            u64: token,
        };
        // SAFETY: both descriptors are open; the event struct is ours.
        let rc = unsafe { libc::epoll_ctl(self.epfd, libc::EPOLL_CTL_ADD, fd, &mut ev) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Stops watching `fd` (before its socket is closed).
    pub(super) fn remove(&self, fd: RawFd) {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: as in add; a failure (already gone) is harmless.
        unsafe { libc::epoll_ctl(self.epfd, libc::EPOLL_CTL_DEL, fd, &mut ev) };
    }

    /// Waits up to `timeout_ms` and returns the tokens of the ready descriptors (empty on
    /// timeout or on an interrupted wait).
    pub(super) fn wait(&mut self, timeout_ms: i32, ready: &mut Vec<u64>) -> io::Result<()> {
        ready.clear();
        // SAFETY: the buffer holds events.len() entries, which epoll_wait may fill.
        let n = unsafe {
            libc::epoll_wait(
                self.epfd,
                self.events.as_mut_ptr(),
                self.events.len() as i32,
                timeout_ms,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(e);
        }
        for ev in &self.events[..n as usize] {
            // A copy: the struct is packed on x86_64, so its field cannot be borrowed.
            let token = ev.u64;
            ready.push(token);
        }
        Ok(())
    }
}

impl Drop for Poller {
    fn drop(&mut self) {
        // SAFETY: the descriptor is ours and closed once.
        unsafe { libc::close(self.epfd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zmq;

    #[test]
    fn a_sub_socket_wakes_the_poller_when_a_message_arrives() {
        let ctx = zmq::Context::new();
        let publ = ctx.socket(zmq::XPUB).unwrap();
        publ.bind("inproc://poller-test").unwrap();
        let sub = ctx.socket(zmq::SUB).unwrap();
        sub.set_subscribe(b"").unwrap();
        sub.connect("inproc://poller-test").unwrap();
        publ.set_rcvtimeo(5000).unwrap();
        assert_eq!(publ.recv_bytes(0).unwrap(), vec![1u8], "the subscription");
        let mut p = Poller::new(8).unwrap();
        p.add(sub.get_fd().unwrap(), 42).unwrap();
        // Drain to EAGAIN first, as the rule says.
        assert!(sub.recv_bytes(zmq::DONTWAIT).is_err());
        let mut ready = Vec::new();
        p.wait(0, &mut ready).unwrap();
        assert!(ready.is_empty(), "{ready:?}");
        publ.send("hello", 0).unwrap();
        p.wait(5000, &mut ready).unwrap();
        assert_eq!(ready, vec![42]);
        assert_eq!(sub.recv_bytes(zmq::DONTWAIT).unwrap(), b"hello");
        assert!(sub.recv_bytes(zmq::DONTWAIT).is_err());
        p.remove(sub.get_fd().unwrap());
    }
}
