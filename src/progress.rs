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
            // One line that rewrites itself: cut to the width, never wrapped.
            let max = crate::term::width_err().saturating_sub(1);
            let cut: String = text.chars().take(max).collect();
            eprint!("{ERASE}{cut}");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{}", crate::term::fit_err(text));
        }
        self.shown = true;
    }

    /// Writes `text` as a line that stays (over the status line on a terminal).
    pub fn keep(&mut self, text: &str) {
        let text = crate::term::fit_err(text);
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

/// What a piece of work (a case, a step) is planned to take, s: the part its schedule
/// fixes (paced messages: count / rate; a publisher's ticks) and a guess for the rest
/// (an unpaced stream's time per message, the set-up of each repetition), which the time
/// work took so far corrects.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Planned {
    /// Seconds the schedule fixes.
    pub fixed_s: f64,
    /// Seconds guessed.
    pub guess_s: f64,
}

impl Planned {
    /// Adds `other` (work done one after the other).
    pub fn then(self, other: Planned) -> Planned {
        Planned {
            fixed_s: self.fixed_s + other.fixed_s,
            guess_s: self.guess_s + other.guess_s,
        }
    }

    /// `times` repetitions of it.
    pub fn times(self, times: u32) -> Planned {
        Planned {
            fixed_s: self.fixed_s * times as f64,
            guess_s: self.guess_s * times as f64,
        }
    }
}

/// The time left of a list of planned pieces of work done in order: the rest of the
/// current one and all those after it. The guessed parts are scaled by how the guesses
/// of the pieces done compared with their time (what they took beyond their fixed part).
#[derive(Debug, Clone)]
pub struct Eta {
    planned: Vec<Planned>,
    current: usize,
    guessed: f64,
    guessed_took: f64,
}

impl Eta {
    /// The plan, in the order it runs.
    pub fn new(planned: Vec<Planned>) -> Self {
        Eta {
            planned,
            current: 0,
            guessed: 0.0,
            guessed_took: 0.0,
        }
    }

    /// Seconds the whole plan is planned to take (guesses unscaled).
    pub fn total_s(&self) -> f64 {
        self.planned.iter().map(|p| p.fixed_s + p.guess_s).sum()
    }

    /// Piece `index` started.
    pub fn started(&mut self, index: usize) {
        self.current = index;
    }

    /// Piece `index` ended after `took_s`.
    pub fn done(&mut self, index: usize, took_s: f64) {
        if let Some(p) = self.planned.get(index) {
            self.guessed += p.guess_s;
            self.guessed_took += (took_s - p.fixed_s).max(0.0);
        }
        self.current = index + 1;
    }

    /// How the guesses compare with what the pieces done took (1 before any is done).
    fn scale(&self) -> f64 {
        if self.guessed > 0.01 {
            (self.guessed_took / self.guessed).clamp(0.1, 50.0)
        } else {
            1.0
        }
    }

    /// Seconds left, the current piece having run for `in_current_s`.
    pub fn left_s(&self, in_current_s: f64) -> f64 {
        let k = self.scale();
        let time = |p: &Planned| p.fixed_s + k * p.guess_s;
        let rest: f64 = self.planned.iter().skip(self.current + 1).map(time).sum();
        let now = self
            .planned
            .get(self.current)
            .map_or(0.0, |p| (time(p) - in_current_s).max(0.0));
        rest + now
    }
}

/// `ETA 12 s` (or `ETA 3 min 20 s`) for `left_s` seconds left.
pub fn eta_text(left_s: f64) -> String {
    let s = left_s.max(0.0).round() as u64;
    if s >= 60 {
        format!("ETA {} min {:02} s", s / 60, s % 60)
    } else {
        format!("ETA {s} s")
    }
}

/// Whether progress lines are shown: only when stderr is a terminal (a person watches);
/// a pipe, a file or a CI log gets none of them.
pub fn on_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// A status line on stderr kept up to date by a thread of its own (every 250 ms), on a
/// terminal only: its text, and the time left until a planned end, counting down. Lines
/// that stay (notes, failures) go through it so they do not garble the status line; they
/// are written whether or not stderr is a terminal. Cloning gives another handle on the
/// same line; the line is cleared when the last handle goes.
#[derive(Clone)]
pub struct Live {
    shared: std::sync::Arc<LiveShared>,
}

struct LiveShared {
    state: std::sync::Mutex<LiveState>,
    wake: std::sync::Condvar,
    thread: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
}

struct LiveState {
    line: StatusLine,
    text: String,
    ends_at: Option<std::time::Instant>,
    stop: bool,
}

/// How often the live line is redrawn.
pub const LIVE_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

impl Live {
    /// A live line when stderr is a terminal, a silent one otherwise.
    pub fn on_stderr() -> Self {
        Self::new(on_terminal())
    }

    /// A live line (`live`: redrawn on stderr, which is a terminal) or a silent one.
    pub fn new(live: bool) -> Self {
        let shared = std::sync::Arc::new(LiveShared {
            state: std::sync::Mutex::new(LiveState {
                line: StatusLine::live(live),
                text: String::new(),
                ends_at: None,
                stop: !live,
            }),
            wake: std::sync::Condvar::new(),
            thread: std::sync::Mutex::new(None),
        });
        if live {
            let s = shared.clone();
            let t = std::thread::Builder::new()
                .name("progress".into())
                .spawn(move || redraw_loop(&s))
                .ok();
            *shared.thread.lock().unwrap_or_else(|e| e.into_inner()) = t;
        }
        Live { shared }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, LiveState> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the line is shown (stderr is a terminal).
    pub fn is_live(&self) -> bool {
        self.state().line.is_live()
    }

    /// Shows `text`, with the time left until `ends_at` after it (nothing when not live).
    pub fn set(&self, text: String, ends_at: Option<std::time::Instant>) {
        let mut st = self.state();
        if !st.line.is_live() {
            return;
        }
        st.text = text;
        st.ends_at = ends_at;
        draw(&mut st);
    }

    /// Writes `text` as a line that stays, live or not.
    pub fn log(&self, text: &str) {
        let mut st = self.state();
        st.line.keep(text);
        if st.line.is_live() && !st.text.is_empty() {
            draw(&mut st);
        }
    }

    /// Stops redrawing and clears the line.
    pub fn finish(&self) {
        {
            let mut st = self.state();
            st.stop = true;
            st.text.clear();
            st.line.clear_shown();
        }
        self.shared.wake.notify_all();
        let t = self
            .shared
            .thread
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(t) = t {
            let _ = t.join();
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        // The redraw thread holds one handle of its own.
        if std::sync::Arc::strong_count(&self.shared) <= 2 {
            self.finish();
        }
    }
}

/// The text of the live line: its text and the time left (or how far past the plan).
fn live_text(text: &str, ends_at: Option<std::time::Instant>, now: std::time::Instant) -> String {
    match ends_at {
        None => text.to_string(),
        Some(end) if end >= now => format!("{text}  {}", eta_text((end - now).as_secs_f64())),
        Some(end) => format!(
            "{text}  {:.0} s past the planned end",
            (now - end).as_secs_f64()
        ),
    }
}

fn draw(st: &mut LiveState) {
    if st.text.is_empty() {
        return;
    }
    let t = live_text(&st.text, st.ends_at, std::time::Instant::now());
    st.line.show(&t);
}

fn redraw_loop(s: &LiveShared) {
    let mut st = s.state.lock().unwrap_or_else(|e| e.into_inner());
    while !st.stop {
        st = match s.wake.wait_timeout(st, LIVE_EVERY) {
            Ok((g, _)) => g,
            Err(e) => e.into_inner().0,
        };
        if !st.stop {
            draw(&mut st);
        }
    }
}

/// Counts planned cases on a terminal as a plan is made (`planning: 4000 cases so far`),
/// after half a second and then at most every [`LIVE_EVERY`]; silent elsewhere.
pub struct Planning {
    line: Option<StatusLine>,
    start: std::time::Instant,
    last: std::time::Instant,
    count: usize,
}

impl Planning {
    /// A counter shown when stderr is a terminal.
    pub fn on_stderr() -> Self {
        Self::new(on_terminal())
    }

    /// A counter shown (`live`) or silent.
    pub fn new(live: bool) -> Self {
        let now = std::time::Instant::now();
        Planning {
            line: live.then(|| StatusLine::live(true)),
            start: now,
            last: now,
            count: 0,
        }
    }

    /// One more case planned.
    pub fn planned(&mut self, cases: usize) {
        self.count = cases;
        let Some(line) = &mut self.line else { return };
        if !cases.is_multiple_of(64) {
            return;
        }
        let now = std::time::Instant::now();
        if now - self.start < std::time::Duration::from_millis(500) || now - self.last < LIVE_EVERY
        {
            return;
        }
        self.last = now;
        line.show(&format!("planning: {cases} cases so far"));
    }

    /// The plan is made: says how many cases it has when the counter was shown.
    pub fn done(&mut self) {
        if let Some(line) = &mut self.line {
            if line.is_shown() {
                line.keep(&format!("planned {} cases", self.count));
            }
        }
        self.line = None;
    }
}

impl Drop for Planning {
    fn drop(&mut self) {
        if let Some(line) = &mut self.line {
            line.clear_shown();
        }
    }
}

#[cfg(test)]
mod tests;
