//! Progress on stderr. [`StatusLine`]: the one status line every progress line of zmqperf
//! is written through (rewritten in place on a terminal, a line per update elsewhere).
//! [`Progress`]: the line of a measuring loop that lasts more than a couple of seconds,
//! shown only when the binary turned it on (stderr is a terminal), so scripts see nothing
//! of it.

use crate::clock::now_ns;
use std::io::{IsTerminal, Write};
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
    line: StatusLine,
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
            line: StatusLine::live(true),
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
        let elapsed = (now - self.start) as f64 / 1e9;
        let left = elapsed * (self.total.saturating_sub(done)) as f64 / done as f64;
        self.line.show(&format!(
            "{}/{} {} ({:.0}%), {:.1} s, about {:.0} s left",
            done,
            self.total,
            self.label,
            done as f64 * 100.0 / self.total as f64,
            elapsed,
            left
        ));
    }

    /// Clears the line if one was shown.
    pub fn finish(&mut self) {
        self.line.clear_shown();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The one status line on stderr: on a terminal a line rewritten in place (`\r`, then
/// erase the line, then the text); elsewhere (a log, a pipe) each update a line of its own.
/// Every progress line of zmqperf is written through it.
#[derive(Debug)]
pub struct StatusLine {
    live: bool,
    shown: bool,
}

/// Back to the start of the line, and erase it.
const ERASE: &str = "\r\x1b[2K";

impl StatusLine {
    /// A status line that rewrites itself when stderr is a terminal.
    pub fn new() -> Self {
        Self::live(std::io::stderr().is_terminal())
    }

    /// A status line that rewrites itself (`live`) or writes a line per update.
    pub fn live(live: bool) -> Self {
        StatusLine { live, shown: false }
    }

    /// Whether updates rewrite one line (stderr is a terminal).
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// Whether a text is shown (and not yet cleared, kept or settled).
    pub fn is_shown(&self) -> bool {
        self.shown
    }

    /// Shows `text`: over the line on a terminal (no newline), else as a line of its own.
    pub fn show(&mut self, text: &str) {
        if self.live {
            eprint!("{ERASE}{text}");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{text}");
        }
        self.shown = true;
    }

    /// Writes `text` as a line that stays (over the status line on a terminal).
    pub fn keep(&mut self, text: &str) {
        if self.live {
            eprintln!("{ERASE}{text}");
        } else {
            eprintln!("{text}");
        }
        self.shown = false;
    }

    /// Erases the line on a terminal, whether or not anything was shown.
    pub fn clear(&mut self) {
        if self.live {
            eprint!("{ERASE}");
            let _ = std::io::stderr().flush();
            self.shown = false;
        }
    }

    /// Erases the line if something is shown on it.
    pub fn clear_shown(&mut self) {
        if self.shown {
            self.clear();
        }
        self.shown = false;
    }

    /// Leaves the text shown where it is: on a terminal the line is ended, so what follows
    /// starts on the next one.
    pub fn settle(&mut self) {
        if self.shown && self.live {
            eprintln!();
        }
        self.shown = false;
    }
}

impl Default for StatusLine {
    fn default() -> Self {
        Self::new()
    }
}
