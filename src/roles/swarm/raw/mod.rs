//! The raw-socket floor of a fan-out: the same ticks written by one process to one plain
//! stream socket per subscriber (TCP for a tcp:// fan-out, a Unix socket for ipc://) and
//! read by the same subscriber processes with one epoll set, with the same measurement
//! header, ledger and histograms as the libzmq run. What the libzmq figures add to these is
//! ZeroMQ's part of the fan-out's cost.
//!
//! - [`frame`]: the length prefix that keeps message boundaries on a byte stream.
//! - [`reader`]: the swarm's raw mode (a subscriber process).
//! - [`writer`]: the raw publisher (a source on ticks with `raw = true`), which listens and
//!   accepts its subscribers with [`listen`].

pub(crate) mod frame;
mod listen;
pub(super) mod reader;
pub(crate) mod writer;

use crate::error::{Error, Result};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::Duration;

/// Where a raw publisher listens, or a raw subscriber connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RawAddr {
    /// `host:port` (port 0: any free one).
    Tcp(String),
    /// A Unix socket path (None: a fresh path in the temp folder).
    Unix(Option<PathBuf>),
}

impl RawAddr {
    /// The plain socket of a zmq-style endpoint: `tcp://HOST:PORT` (`*` for any host or a
    /// free port) or `ipc:///path` (`ipc://*` for a fresh path).
    pub(crate) fn parse(endpoint: &str) -> Result<RawAddr> {
        let bad = |reason: &str| Error::Endpoint {
            endpoint: endpoint.to_string(),
            reason: reason.to_string(),
        };
        if let Some(rest) = endpoint.strip_prefix("tcp://") {
            let (host, port) = rest
                .rsplit_once(':')
                .ok_or_else(|| bad("the raw floor needs tcp://HOST:PORT"))?;
            let host = if host == "*" { "0.0.0.0" } else { host };
            let port = if port == "*" { "0" } else { port };
            return Ok(RawAddr::Tcp(format!("{host}:{port}")));
        }
        if let Some(path) = endpoint.strip_prefix("ipc://") {
            return Ok(RawAddr::Unix((path != "*").then(|| PathBuf::from(path))));
        }
        Err(bad(
            "the raw floor runs over tcp:// (TCP sockets) or ipc:// (Unix sockets)",
        ))
    }

    /// Connects one plain stream socket, waiting up to `timeout` for a TCP handshake.
    pub(crate) fn connect(&self, timeout: Duration) -> std::io::Result<OwnedFd> {
        match self {
            RawAddr::Tcp(a) => {
                use std::net::ToSocketAddrs;
                let mut last = std::io::Error::other(format!("{a} resolves to no address"));
                for addr in a.to_socket_addrs()? {
                    match std::net::TcpStream::connect_timeout(&addr, timeout) {
                        Ok(s) => return Ok(s.into()),
                        Err(e) => last = e,
                    }
                }
                Err(last)
            }
            RawAddr::Unix(Some(p)) => Ok(std::os::unix::net::UnixStream::connect(p)?.into()),
            RawAddr::Unix(None) => Err(std::io::Error::other("no socket path to connect to")),
        }
    }
}

/// Sets `O_NONBLOCK` on a descriptor.
pub(crate) fn set_nonblocking(fd: &OwnedFd) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a descriptor we own, with integer arguments.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFL) };
    if flags < 0
        // SAFETY: as above.
        || unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Wraps an I/O error with the name of the failed operation.
fn io_err(op: &str) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::Io {
        op: op.to_string(),
        source: e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_become_plain_addresses() {
        assert_eq!(
            RawAddr::parse("tcp://127.0.0.1:*").unwrap(),
            RawAddr::Tcp("127.0.0.1:0".into())
        );
        assert_eq!(
            RawAddr::parse("tcp://*:5555").unwrap(),
            RawAddr::Tcp("0.0.0.0:5555".into())
        );
        assert_eq!(
            RawAddr::parse("tcp://[::1]:7").unwrap(),
            RawAddr::Tcp("[::1]:7".into())
        );
        assert_eq!(
            RawAddr::parse("ipc:///tmp/x.sock").unwrap(),
            RawAddr::Unix(Some("/tmp/x.sock".into()))
        );
        assert_eq!(RawAddr::parse("ipc://*").unwrap(), RawAddr::Unix(None));
        assert!(RawAddr::parse("inproc://x").is_err());
    }
}
