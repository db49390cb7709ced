//! Whether the run was interrupted, and by which signal: two atomics the signal handler
//! stores to and every layer reads, and the waker that interrupts the role threads out of
//! their blocking calls ([`waker`]). It sits below the error type, whose exit code for an
//! interruption is 128 + the signal.

mod waker;

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
pub use waker::{catch_signals, Wakeable, WokenOnStop};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The signal that interrupted the run (0: none, or [`interrupt`] called directly).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The signals that end a measurement cleanly: Ctrl-C, and what `timeout`, systemd, CI
/// cancellations (SIGTERM) and a closed terminal (SIGHUP) send.
pub const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Marks the run as interrupted (from a signal handler: only an atomic store).
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Marks the run as interrupted by `sig` (from a signal handler: only atomic stores).
pub fn interrupt_by(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
    interrupt();
}

/// Whether the run was interrupted.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The name of the signal that interrupted the run ("SIGTERM"), or "Ctrl-C" when none is
/// known.
pub fn interrupted_by() -> &'static str {
    match SIGNAL.load(Ordering::SeqCst) {
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT (Ctrl-C)",
        _ => "Ctrl-C",
    }
}

/// The exit code of an interrupted run: 128 + the signal, as shells report it (130 when
/// none is known).
pub fn interrupted_code() -> i32 {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => 130,
        s => 128 + s,
    }
}
