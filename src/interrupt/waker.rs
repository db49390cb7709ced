//! Signals that end a run cleanly: SIGINT, SIGTERM and SIGHUP mark it interrupted, and a
//! waker thread interrupts every role thread out of its blocking ZeroMQ call, so that what
//! was measured is kept, printed and recorded.

use super::{interrupt_by, STOP_SIGNALS};
use std::sync::atomic::Ordering;

/// The write end of the pipe that tells the waker thread a stop signal came (-1: none).
static WAKE_FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);
/// The threads running a role now, which the waker interrupts out of blocking calls.
static ROLE_THREADS: std::sync::Mutex<Vec<libc::pthread_t>> = std::sync::Mutex::new(Vec::new());
/// The signal the waker sends to role threads: its handler does nothing, and without
/// SA_RESTART a blocking ZeroMQ call it lands in returns EINTR.
const WAKE_SIGNAL: libc::c_int = libc::SIGURG;

extern "C" fn on_stop_signal(sig: libc::c_int) {
    interrupt_by(sig);
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        // SAFETY: write(2) is async-signal-safe; the byte is ours.
        unsafe { libc::write(fd, [1u8].as_ptr().cast(), 1) };
    }
}

extern "C" fn on_wake(_: libc::c_int) {}

/// Installs the handler of [`WAKE_SIGNAL`] (once): a handler that does nothing, without
/// SA_RESTART, so that the signal interrupts a blocking call (ignored, it would not).
fn install_wake_handler() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // SAFETY: a handler that does nothing; the struct is ours and initialised.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_wake as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(WAKE_SIGNAL, &sa, std::ptr::null_mut());
        }
    });
}

/// A thread that can be woken out of a blocking ZeroMQ call on request ([`Wakeable::wake`]:
/// the call returns EINTR), by another thread for as long as the thread lives.
#[derive(Debug, Clone, Copy)]
pub struct Wakeable(libc::pthread_t);

impl Wakeable {
    /// The calling thread.
    pub fn this_thread() -> Wakeable {
        install_wake_handler();
        // SAFETY: pthread_self has no preconditions.
        Wakeable(unsafe { libc::pthread_self() })
    }

    /// Interrupts the thread's blocking call, if it is in one (the caller makes sure the
    /// thread is alive: it joins the waking thread before the woken one ends).
    pub fn wake(self) {
        // SAFETY: the thread is alive (above); the handler does nothing.
        unsafe { libc::pthread_kill(self.0, WAKE_SIGNAL) };
    }
}

/// A role's thread, registered for as long as the guard lives: a stop signal (which the
/// kernel gives to any one thread of the process) wakes it out of a blocking ZeroMQ call,
/// so that it ends with what it measured instead of waiting out its timeout.
pub struct WokenOnStop(libc::pthread_t);

impl WokenOnStop {
    /// Registers the calling thread.
    pub fn register() -> WokenOnStop {
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() };
        ROLE_THREADS
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(me);
        WokenOnStop(me)
    }
}

impl Drop for WokenOnStop {
    fn drop(&mut self) {
        let mut v = ROLE_THREADS.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = v.iter().position(|t| *t == self.0) {
            v.swap_remove(i);
        }
    }
}

/// The waker: blocks until a stop signal writes to its pipe, then interrupts every role
/// thread a few times (a thread between two calls when the first one lands is caught by
/// the next), 50 ms apart, at most 20 times.
fn start_waker() {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    install_wake_handler();
    WAKE_FD.store(fds[1], Ordering::SeqCst);
    let read_fd = fds[0];
    let _ = std::thread::Builder::new()
        .name("stop-waker".into())
        .spawn(move || {
            let mut b = [0u8; 1];
            // SAFETY: reading one byte into our buffer from our pipe.
            while unsafe { libc::read(read_fd, b.as_mut_ptr().cast(), 1) } < 0 {}
            for _ in 0..20 {
                {
                    // Held while signalling: a thread removes itself under this lock
                    // before it ends, so every one signalled is alive.
                    let threads = ROLE_THREADS.lock().unwrap_or_else(|p| p.into_inner());
                    if threads.is_empty() {
                        break;
                    }
                    for &t in threads.iter() {
                        // SAFETY: the thread is alive (above); the handler does nothing.
                        unsafe { libc::pthread_kill(t, WAKE_SIGNAL) };
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        });
}

/// Makes SIGINT, SIGTERM and SIGHUP end the run cleanly: what was measured is kept,
/// printed and recorded, and the process exits with 128 + the signal. A second signal of
/// the same kind ends the process at once (the handler is reset after the first).
pub fn catch_signals() {
    static WAKER: std::sync::Once = std::sync::Once::new();
    WAKER.call_once(start_waker);
    for sig in STOP_SIGNALS {
        // SAFETY: the handler only stores to atomics, which is async-signal-safe; the
        // struct is ours and fully initialised.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}
