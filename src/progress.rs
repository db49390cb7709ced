//! A progress line on stderr for runs that last more than a couple of seconds, shown only
//! when the binary turned it on (stderr is a terminal), so scripts see nothing of it.

use crate::clock::now_ns;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Turns progress lines on or off for this process.
pub fn enable(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Progress of one loop.
pub struct Progress {
    label: &'static str,
    total: u64,
    start: u64,
    last: u64,
    enabled: bool,
    shown: bool,
}

const QUIET_NS: u64 = 2_000_000_000;
const EVERY_NS: u64 = 250_000_000;

impl Progress {
    /// Starts counting `total` units of `label` ("round trips", "messages").
    pub fn new(label: &'static str, total: u64) -> Self {
        let now = now_ns();
        Progress {
            label,
            total,
            start: now,
            last: now,
            enabled: ENABLED.load(Ordering::Relaxed),
            shown: false,
        }
    }

    /// Notes that `done` units are done; looks at the clock once every 256 units.
    #[inline]
    pub fn tick(&mut self, done: u64) {
        if self.enabled && done & 0xFF == 0 {
            self.show(done);
        }
    }

    #[cold]
    fn show(&mut self, done: u64) {
        let now = now_ns();
        if now - self.start < QUIET_NS || now - self.last < EVERY_NS || done == 0 {
            return;
        }
        self.last = now;
        self.shown = true;
        let elapsed = (now - self.start) as f64 / 1e9;
        let left = elapsed * (self.total.saturating_sub(done)) as f64 / done as f64;
        eprint!(
            "\r\x1b[2K{}/{} {} ({:.0}%), {:.1} s, about {:.0} s left",
            done,
            self.total,
            self.label,
            done as f64 * 100.0 / self.total as f64,
            elapsed,
            left
        );
        let _ = std::io::stderr().flush();
    }

    /// Clears the line if one was shown.
    pub fn finish(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
            self.shown = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
