//! The stall watch: how a role's blocking receive waits without ZMQ_RCVTIMEO.
//!
//! A receive with a timeout makes libzmq read its clock twice for every message that was not
//! there yet (`clock_t::now_ms`), which libzmq's own perf tools never do. So the ping and the
//! echo wait with no timeout on the socket, and a watch thread beside each of them keeps the
//! bound instead: the role counts a beat for every frame it takes (a plain store), and when
//! a whole step passes with no beat, the watch wakes the role out of its receive (a signal
//! whose handler does nothing; the receive returns EINTR, which [`super::Io`] turns into the
//! EAGAIN that a timeout gave). Every further step of quiet is one more tick, as every
//! further timeout of the socket was.
//!
//! The watch looks once per step (at most every 500 ms), so a tick comes between one step
//! and one step plus that look's period after the last frame. A signal that lands while the
//! role is not inside the receive is sent again at the next look, for as long as the role
//! has not taken the tick and no frame came.

use crate::interrupt::Wakeable;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest pause between two looks of the watch.
const LONGEST_LOOK: Duration = Duration::from_millis(500);

/// What the role and its watch share.
struct Shared {
    /// Frames taken by the role (only the role writes it).
    beats: AtomicU64,
    /// Steps of quiet the watch counted (only the watch writes it).
    ticks: AtomicU64,
    /// Ticks the role has taken, or that a frame made obsolete.
    taken: AtomicU64,
    /// Set when the role ends the watch; the watch waits on it between looks.
    quit: Mutex<bool>,
    wake_watch: Condvar,
}

/// A running watch over the thread that started it; ended (and joined) when dropped.
pub(crate) struct StallWatch {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl StallWatch {
    /// Starts a watch over the calling thread: one tick per `step` without a beat.
    pub fn start(step: Duration) -> std::io::Result<StallWatch> {
        let shared = Arc::new(Shared {
            beats: AtomicU64::new(0),
            ticks: AtomicU64::new(0),
            taken: AtomicU64::new(0),
            quit: Mutex::new(false),
            wake_watch: Condvar::new(),
        });
        let role = Wakeable::this_thread();
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("stall-watch".into())
            .spawn(move || watch(&theirs, role, step.max(Duration::from_millis(1))))?;
        Ok(StallWatch {
            shared,
            thread: Some(thread),
        })
    }

    /// One frame taken.
    #[inline(always)]
    pub fn beat(&self) {
        let b = &self.shared.beats;
        b.store(b.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
    }

    /// After a blocking call returned EINTR: whether the watch sent it (a tick the role had
    /// not taken yet), taking it.
    pub fn take_tick(&mut self) -> bool {
        let ticks = self.shared.ticks.load(Ordering::SeqCst);
        ticks > self.shared.taken.fetch_max(ticks, Ordering::SeqCst)
    }
}

impl Drop for StallWatch {
    fn drop(&mut self) {
        *self.shared.quit.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.shared.wake_watch.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The watch's loop: looks every step (at most [`LONGEST_LOOK`]), ticks after a step
/// without a beat, and wakes the role for every tick until it is taken or a frame comes.
/// It ends when the role drops the watch, which joins it before the role's thread goes on:
/// the role is alive for every signal.
fn watch(shared: &Shared, role: Wakeable, step: Duration) {
    let look = step.min(LONGEST_LOOK);
    let mut seen = shared.beats.load(Ordering::Relaxed);
    let mut quiet_from = Instant::now();
    let mut quit = shared.quit.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        quit = shared
            .wake_watch
            .wait_timeout_while(quit, look, |q| !*q)
            .unwrap_or_else(|p| p.into_inner())
            .0;
        if *quit {
            return;
        }
        let now = Instant::now();
        let beats = shared.beats.load(Ordering::Relaxed);
        if beats != seen {
            seen = beats;
            quiet_from = now;
            // A frame came: a tick not taken is obsolete (the quiet it counted ended).
            let ticks = shared.ticks.load(Ordering::SeqCst);
            shared.taken.fetch_max(ticks, Ordering::SeqCst);
            continue;
        }
        if now.duration_since(quiet_from) >= step {
            shared.ticks.fetch_add(1, Ordering::SeqCst);
            quiet_from = now;
        }
        // A tick not taken yet, with no frame since: wake the role (again, when the last
        // signal landed outside its receive). A taken tick leaves nothing to wake it for.
        if shared.ticks.load(Ordering::SeqCst) > shared.taken.load(Ordering::SeqCst) {
            role.wake();
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::zmq;

    /// Runs `f` on a thread of its own and fails the test if it takes over `secs` (a watch
    /// that never wakes its role would leave the receive waiting for good).
    pub(crate) fn within(secs: u64, f: impl FnOnce() + Send + 'static) {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            f();
            let _ = tx.send(());
        });
        match rx.recv_timeout(Duration::from_secs(secs)) {
            Ok(()) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                panic!("watchdog: the test took longer than {secs} s")
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => panic!("the test panicked"),
        }
    }

    /// A PULL socket with no timeout and nothing sent: the watch ends its wait after about
    /// one step, and the receive reports EINTR with a tick to take, once per step.
    #[test]
    fn a_receive_without_a_timeout_is_woken_after_each_quiet_step() {
        within(20, a_receive_is_woken);
    }

    fn a_receive_is_woken() {
        let ctx = zmq::Context::new();
        let pull = ctx.socket(zmq::PULL).unwrap();
        pull.set_linger(0).unwrap();
        pull.bind("inproc://stall-quiet").unwrap();
        let mut w = StallWatch::start(Duration::from_millis(150)).unwrap();
        let mut m = crate::msg::RawMsg::new();
        let mut sock = pull;
        for _ in 0..2 {
            let t = Instant::now();
            // Signals that missed the receive are sent again: loop on EINTR without a tick.
            let took = loop {
                assert_eq!(m.recv(&mut sock, 0), Err(zmq::Error::EINTR));
                if w.take_tick() {
                    break t.elapsed();
                }
                assert!(t.elapsed() < Duration::from_secs(5), "no tick in 5 s");
            };
            assert!(
                took >= Duration::from_millis(100) && took < Duration::from_secs(3),
                "{took:?}"
            );
        }
        assert!(!w.take_tick(), "a tick taken twice");
    }

    /// Frames that keep coming keep the watch quiet: no tick while the beats go on.
    #[test]
    fn beats_keep_the_watch_from_ticking() {
        let w = StallWatch::start(Duration::from_millis(100)).unwrap();
        let end = Instant::now() + Duration::from_millis(600);
        while Instant::now() < end {
            w.beat();
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(w.shared.ticks.load(Ordering::SeqCst), 0);
    }
}
