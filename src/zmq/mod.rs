//! zmqperf's own thin layer over libzmq's C API: contexts, sockets, options, polling and
//! errors, over the function table of the libzmq chosen for the run ([`library`]). The one
//! place in the project that talks to libzmq (with [`msg::RawMsg`] for the hot loops): the
//! constants of zmq.h in [`consts`], the bundled library's message layout in [`layout`], the error in [`error`], the context (and its ZAP
//! handler) in [`context`], the socket in [`socket`], polling in [`poll`].

mod consts;
mod context;
mod error;
pub mod ffi;
mod layout;
pub mod library;
pub mod msg;
mod poll;
mod socket;

pub use consts::*;
pub use context::{version, Context};
pub use error::{CallFailed, Error, Result};
pub use library::{api, info as library, LibraryInfo, LIBZMQ_ENV};
pub use poll::{poll, PollEvents, PollItem, SocketPoller, POLLERR, POLLIN, POLLOUT};
pub use socket::Socket;
