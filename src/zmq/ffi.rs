//! The libzmq C API as a table of function pointers: filled from the libzmq linked into
//! zmqperf (the default), or from a shared library loaded at run time (`--libzmq`). Every
//! call into libzmq in the project goes through this table.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_short, c_void};

/// `zmq_msg_t`: 64 opaque bytes, 8-aligned (libzmq's own definition on every platform it
/// builds for, in every 4.x release).
#[repr(C, align(8))]
pub struct zmq_msg_t {
    _opaque: [u8; 64],
}

/// `zmq_pollitem_t` on POSIX systems.
#[repr(C)]
pub struct zmq_pollitem_t {
    pub socket: *mut c_void,
    pub fd: c_int,
    pub events: c_short,
    pub revents: c_short,
}

/// `zmq_poller_event_t` (draft API) on POSIX systems.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct zmq_poller_event_t {
    pub socket: *mut c_void,
    pub fd: c_int,
    pub user_data: *mut c_void,
    pub events: c_short,
}

/// Declares the functions once, and from that list: the table, the symbols linked in, and
/// the lookup of each one in a loaded library.
macro_rules! libzmq_api {
    ($(#[$doc:meta])* $api:ident in $linked:ident; $( fn $name:ident ( $($arg:ty),* ) -> $ret:ty ; )*) => {
        $(#[$doc])*
        pub struct $api {
            $( pub $name: unsafe extern "C" fn($($arg),*) -> $ret, )*
        }

        mod $linked {
            #[allow(unused_imports)]
            use super::*;
            extern "C" {
                $( pub fn $name($(_: $arg),*) -> $ret; )*
            }
        }

        impl $api {
            /// The libzmq built into zmqperf.
            pub fn linked() -> $api {
                $api { $( $name: $linked::$name, )* }
            }

            /// Looks every function up in a library opened with `dlopen`.
            ///
            /// # Safety
            /// `handle` must be a live handle from `dlopen` of a libzmq whose functions
            /// have the C signatures above (every 4.x release does), and stay open for the
            /// life of the process.
            pub unsafe fn from_library(handle: *mut c_void) -> Result<$api, &'static str> {
                Ok($api {
                    $( $name: {
                        let p = libc::dlsym(handle, concat!(stringify!($name), "\0").as_ptr() as *const c_char);
                        if p.is_null() {
                            return Err(stringify!($name));
                        }
                        std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> $ret>(p)
                    }, )*
                })
            }
        }
    };
}

libzmq_api! {
    /// The libzmq functions zmqperf calls.
    Api in linked;
    fn zmq_version(*mut c_int, *mut c_int, *mut c_int) -> ();
    fn zmq_has(*const c_char) -> c_int;
    fn zmq_errno() -> c_int;
    fn zmq_strerror(c_int) -> *const c_char;
    fn zmq_ctx_new() -> *mut c_void;
    fn zmq_ctx_term(*mut c_void) -> c_int;
    fn zmq_ctx_set(*mut c_void, c_int, c_int) -> c_int;
    fn zmq_socket(*mut c_void, c_int) -> *mut c_void;
    fn zmq_close(*mut c_void) -> c_int;
    fn zmq_setsockopt(*mut c_void, c_int, *const c_void, usize) -> c_int;
    fn zmq_getsockopt(*mut c_void, c_int, *mut c_void, *mut usize) -> c_int;
    fn zmq_bind(*mut c_void, *const c_char) -> c_int;
    fn zmq_connect(*mut c_void, *const c_char) -> c_int;
    fn zmq_unbind(*mut c_void, *const c_char) -> c_int;
    fn zmq_disconnect(*mut c_void, *const c_char) -> c_int;
    fn zmq_send(*mut c_void, *const c_void, usize, c_int) -> c_int;
    fn zmq_msg_init(*mut zmq_msg_t) -> c_int;
    fn zmq_msg_init_size(*mut zmq_msg_t, usize) -> c_int;
    fn zmq_msg_init_data(*mut zmq_msg_t, *mut c_void, usize, Option<unsafe extern "C" fn(*mut c_void, *mut c_void)>, *mut c_void) -> c_int;
    fn zmq_msg_close(*mut zmq_msg_t) -> c_int;
    fn zmq_msg_data(*mut zmq_msg_t) -> *mut c_void;
    fn zmq_msg_size(*const zmq_msg_t) -> usize;
    fn zmq_msg_more(*const zmq_msg_t) -> c_int;
    fn zmq_msg_send(*mut zmq_msg_t, *mut c_void, c_int) -> c_int;
    fn zmq_msg_recv(*mut zmq_msg_t, *mut c_void, c_int) -> c_int;
    fn zmq_poll(*mut zmq_pollitem_t, c_int, std::ffi::c_long) -> c_int;
    fn zmq_socket_monitor(*mut c_void, *const c_char, c_int) -> c_int;
    fn zmq_curve_keypair(*mut c_char, *mut c_char) -> c_int;
    fn zmq_curve_public(*mut c_char, *const c_char) -> c_int;
}

libzmq_api! {
    /// The draft API's functions zmqperf calls (RADIO/DISH groups, CLIENT/SERVER routing
    /// ids, the poller that waits on thread-safe sockets): the bundled libzmq has them; a library built without the draft API does not.
    DraftApi in linked_draft;
    fn zmq_join(*mut c_void, *const c_char) -> c_int;
    fn zmq_msg_set_group(*mut zmq_msg_t, *const c_char) -> c_int;
    fn zmq_msg_group(*mut zmq_msg_t) -> *const c_char;
    fn zmq_msg_set_routing_id(*mut zmq_msg_t, u32) -> c_int;
    fn zmq_msg_routing_id(*mut zmq_msg_t) -> u32;
    fn zmq_poller_new() -> *mut c_void;
    fn zmq_poller_destroy(*mut *mut c_void) -> c_int;
    fn zmq_poller_add(*mut c_void, *mut c_void, *mut c_void, c_short) -> c_int;
    fn zmq_poller_remove(*mut c_void, *mut c_void) -> c_int;
    fn zmq_poller_wait_all(*mut c_void, *mut zmq_poller_event_t, c_int, std::ffi::c_long) -> c_int;
    fn zmq_poller_fd(*mut c_void, *mut c_int) -> c_int;
}

libzmq_api! {
    /// PEER's connect (the draft API of 4.3.3 and later), apart from [`DraftApi`] so that an
    /// older draft library keeps its other functions.
    PeerApi in linked_peer;
    fn zmq_connect_peer(*mut c_void, *const c_char) -> u32;
}
