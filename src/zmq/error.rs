//! libzmq's error numbers (with the names the project matches on) and the result of a
//! libzmq call.

use super::api;
use std::ffi::{c_int, CStr};
use std::fmt;

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

pub(super) fn check(rc: c_int) -> Result<c_int> {
    if rc < 0 {
        Err(Error::last())
    } else {
        Ok(rc)
    }
}

/// A libzmq call of this layer's own helpers ([`super::msg::RawMsg`]) that failed, with the
/// call's name; `?` turns it into the crate's `Error::Zmq` (error.rs gives the `From`), so
/// this layer needs nothing above it.
#[derive(Debug)]
pub struct CallFailed {
    /// The libzmq call, e.g. `zmq_msg_init_size`.
    pub op: &'static str,
    /// libzmq's error.
    pub source: Error,
}
