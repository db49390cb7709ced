//! The raw publisher's listening socket (TCP or Unix, with a backlog for thousands of
//! subscribers) and the thread that accepts their connections from the moment it is bound.

use super::{io_err, RawAddr};
use crate::clock::now_ns;
use crate::error::{Error, Result};
use crate::roles::publisher::dur_ns;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A listening plain socket. A Unix socket's file is removed when it closes.
pub(super) enum Listener {
    Tcp(std::net::TcpListener),
    Unix(std::os::unix::net::UnixListener, PathBuf),
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, p) = self {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Listener {
    /// Binds `endpoint` (tcp:// or ipc://, `*` for a free port or a fresh path) with a
    /// backlog of `backlog` (the kernel caps it at somaxconn); returns the listener and the
    /// endpoint the subscribers connect to.
    pub(super) fn bind(endpoint: &str, backlog: i32) -> Result<(Listener, String)> {
        let in_use = |e: std::io::Error| {
            if e.kind() == std::io::ErrorKind::AddrInUse {
                crate::net::address_in_use(endpoint)
            } else {
                Error::Io {
                    op: format!("listening on {endpoint} (raw floor)"),
                    source: e,
                }
            }
        };
        let (l, bound) = match RawAddr::parse(endpoint)? {
            RawAddr::Tcp(a) => {
                let l = std::net::TcpListener::bind(&a).map_err(in_use)?;
                let bound = format!("tcp://{}", l.local_addr().map_err(in_use)?);
                (Listener::Tcp(l), crate::net::connect_endpoint(&bound))
            }
            RawAddr::Unix(path) => {
                let path = path.unwrap_or_else(|| {
                    std::env::temp_dir().join(format!(
                        "zmqperf-raw-{}-{}.sock",
                        std::process::id(),
                        now_ns()
                    ))
                });
                // A socket file left by an earlier run would refuse the bind.
                if std::fs::symlink_metadata(&path)
                    .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()))
                {
                    let _ = std::fs::remove_file(&path);
                }
                let l = std::os::unix::net::UnixListener::bind(&path).map_err(in_use)?;
                let bound = format!("ipc://{}", path.display());
                (Listener::Unix(l, path), bound)
            }
        };
        // std listens with a backlog of 128; thousands of subscribers connect at once.
        // SAFETY: listen on a descriptor we own; a second listen only changes the backlog.
        if unsafe { libc::listen(l.fd(), backlog) } != 0 {
            return Err(in_use(std::io::Error::last_os_error()));
        }
        match &l {
            Listener::Tcp(t) => t.set_nonblocking(true),
            Listener::Unix(u, _) => u.set_nonblocking(true),
        }
        .map_err(in_use)?;
        Ok((l, bound))
    }

    fn fd(&self) -> RawFd {
        match self {
            Listener::Tcp(l) => l.as_raw_fd(),
            Listener::Unix(l, _) => l.as_raw_fd(),
        }
    }

    /// One waiting connection (blocking, Nagle off for TCP), or WouldBlock.
    fn accept(&self) -> std::io::Result<OwnedFd> {
        match self {
            Listener::Tcp(l) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                s.set_nodelay(true)?;
                Ok(s.into())
            }
            Listener::Unix(l, _) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                Ok(s.into())
            }
        }
    }
}

/// Accepts the subscribers' connections on a thread of its own from the moment the
/// listener is bound (as libzmq's io thread does): the subscriber processes connect before
/// the start, and a backlog that filled up would hold them back. It stops at `want`
/// connections, or when told to (dropped).
pub(super) struct Acceptor {
    stop: Arc<AtomicBool>,
    want: u64,
    handle: Option<JoinHandle<std::io::Result<Vec<OwnedFd>>>>,
}

impl Acceptor {
    pub(super) fn spawn(listener: Listener, want: u64) -> Acceptor {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut conns = Vec::with_capacity(want as usize);
            while (conns.len() as u64) < want && !s.load(Ordering::Relaxed) {
                let mut p = libc::pollfd {
                    fd: listener.fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one pollfd we own; 100 ms at most, so a stop is seen soon.
                unsafe { libc::poll(&mut p, 1, 100) };
                while (conns.len() as u64) < want {
                    match listener.accept() {
                        Ok(c) => conns.push(c),
                        Err(e) => match e.kind() {
                            std::io::ErrorKind::WouldBlock => break,
                            std::io::ErrorKind::Interrupted
                            | std::io::ErrorKind::ConnectionAborted => {}
                            _ => return Err(e),
                        },
                    }
                }
            }
            // The listener closes here: nobody else is expected.
            drop(listener);
            Ok(conns)
        });
        Acceptor {
            stop,
            want,
            handle: Some(handle),
        }
    }

    /// Waits up to `timeout` for every connection; Err holds how many came.
    pub(super) fn wait(
        mut self,
        timeout: Duration,
    ) -> Result<std::result::Result<Vec<OwnedFd>, u64>> {
        let deadline = now_ns().saturating_add(dur_ns(timeout));
        let h = self.handle.take().expect("joined once");
        while !h.is_finished() && now_ns() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.stop.store(true, Ordering::Relaxed);
        let conns = h
            .join()
            .map_err(|_| Error::Internal("the raw publisher's accepting thread panicked".into()))?
            .map_err(io_err("accepting raw subscriber connections"))?;
        let n = conns.len() as u64;
        Ok(if n == self.want { Ok(conns) } else { Err(n) })
    }
}

impl Drop for Acceptor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
