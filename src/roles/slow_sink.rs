//! The slow sink role: a sink that works `work_us` microseconds on every message it takes
//! (`role = "slow_sink"`), so that its queue fills as a real slow consumer's does: behind a
//! PUB it loses what the high-water mark drops, behind a PUSH it holds the sender back.
//!
//! The work is a spin on the clock, not a sleep: a consumer that does real work keeps its
//! core busy, and a sleep would take at least the timer's slack (about 50 to 60 us on
//! Linux) on top of what was asked, and give the core away. Everything else is the sink's:
//! the same state, ledger, latency and end (the work follows each message's record).
//!
//! A slow sink may also hold after its first message until the runner's stop
//! ([`NodeSpec::hold_until_stop`]): it has taken the connection and the subscription, and
//! reads nothing more until told; that loop is a variant of its own, so the plain one does
//! no extra work per message.
//!
//! Or it may pause instead, as a consumer that takes a batch and then works on it does
//! ([`NodeSpec::pause_every`]: a sleep of `pause_us` after every `pause_every` messages),
//! and keep a record of what it took ([`NodeSpec::trace_arrivals`], the sink's record);
//! that loop too is a variant of its own.

use super::control::Control;
use super::fill::Place;
use super::sink::trace::{self, Trace};
use super::{NodeSpec, RoleReport};
use crate::clock::now_ns;
use crate::error::Result;
use crate::msg::RawMsg;
use crate::zmq;
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// The name of its own field, in the node and in its spec's `own`.
const WORK_US: &str = "work_us";
/// Its own field: it pauses after every this many messages...
const PAUSE_EVERY: &str = "pause_every";
/// ...for this many microseconds (a sleep).
const PAUSE_US: &str = "pause_us";

/// Its spec: a sink's, and the work per message.
pub(super) fn fill(p: &Place, spec: &mut NodeSpec) -> Result<()> {
    super::sink::fill(p, spec)?;
    if let Some(us) = p.node().work_us {
        spec.own.insert(WORK_US.to_string(), us);
    }
    Ok(())
}

/// Runs the sink's loop with `work_us` of work after each message (and, if it holds, the
/// hold after the first).
pub(super) fn run(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
) -> Result<RoleReport> {
    let work_ns = spec.own.get(WORK_US).copied().unwrap_or(0) * 1000;
    if spec.holds_until_stop() {
        return run_holding(ctx, spec, ctl, work_ns);
    }
    let pause = Pause::of(spec);
    let trace = Trace::of(spec);
    if pause.is_some() || trace.is_some() {
        return run_pausing(ctx, spec, ctl, work_ns, pause, trace);
    }
    super::sink::run_with(ctx, spec, ctl, |_| work(work_ns))
}

/// The loop of a slow sink that pauses after batches of messages, or keeps a record of
/// them: the record first, then the work, then the pause.
fn run_pausing(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
    work_ns: u64,
    pause: Option<Pause>,
    trace: Option<Trace>,
) -> Result<RoleReport> {
    let mut pause = pause.unwrap_or(Pause::NEVER);
    let after = move |_: &mut RawMsg| {
        if work_ns > 0 {
            work(work_ns);
        }
        pause.after_one();
    };
    match trace {
        Some(t) => trace::run(ctx, spec, ctl, t, after),
        None => super::sink::run_with(ctx, spec, ctl, after),
    }
}

/// A pause after every batch of messages.
#[derive(Debug, Clone, Copy)]
struct Pause {
    every: u64,
    left: u64,
    pause: Duration,
}

impl Pause {
    /// No pause at all.
    const NEVER: Pause = Pause {
        every: u64::MAX,
        left: u64::MAX,
        pause: Duration::ZERO,
    };

    /// The pause `spec` asks for.
    fn of(spec: &NodeSpec) -> Option<Pause> {
        let every = spec.own.get(PAUSE_EVERY).copied().filter(|&n| n > 0)?;
        Some(Pause {
            every,
            left: every,
            pause: Duration::from_micros(spec.own.get(PAUSE_US).copied().unwrap_or(0)),
        })
    }

    /// One more message taken: the pause when it ends a batch.
    #[inline]
    fn after_one(&mut self) {
        self.left -= 1;
        if self.left == 0 {
            self.left = self.every;
            std::thread::sleep(self.pause);
        }
    }
}

impl NodeSpec {
    /// A slow sink that sleeps `pause` after every `every` messages it takes (a consumer
    /// that takes a batch, then works on it).
    pub fn pause_every(&mut self, every: u64, pause: Duration) {
        self.own.insert(PAUSE_EVERY.to_string(), every);
        self.own
            .insert(PAUSE_US.to_string(), pause.as_micros() as u64);
    }
}

/// The work on one message: a spin of `ns` on the clock.
#[inline(always)]
fn work(ns: u64) {
    let until = now_ns() + ns;
    while now_ns() < until {
        std::hint::spin_loop();
    }
}

/// The loop of a slow sink that holds after its first message until the runner's stop
/// (or for at most its timeout).
fn run_holding(
    ctx: &zmq::Context,
    spec: &NodeSpec,
    ctl: &mut dyn Control,
    work_ns: u64,
) -> Result<RoleReport> {
    let ctl = RefCell::new(ctl);
    let mut first = true;
    let longest = spec.timeout();
    let mut shared = Shared {
        ctl: &ctl,
        offsets: Vec::new(),
    };
    super::sink::run_with(ctx, spec, &mut shared, |_| {
        if std::mem::take(&mut first) {
            let until = Instant::now() + longest;
            while !ctl.borrow_mut().stop_requested() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        work(work_ns);
    })
}

/// The control as the sink's loop and the hold share it.
struct Shared<'a, 'c> {
    ctl: &'a RefCell<&'c mut dyn Control>,
    /// The send offsets the start gave.
    offsets: Vec<(u32, i64)>,
}

impl Control for Shared<'_, '_> {
    fn ready(&mut self, endpoints: &[String]) -> Result<()> {
        self.ctl.borrow_mut().ready(endpoints)
    }

    fn wait_start(&mut self, timeout: Duration) -> Result<()> {
        let mut c = self.ctl.borrow_mut();
        c.wait_start(timeout)?;
        self.offsets = c.send_offsets().to_vec();
        Ok(())
    }

    fn sent_with(&mut self, facts: super::SentFacts) -> Result<()> {
        self.ctl.borrow_mut().sent_with(facts)
    }

    fn stop_requested(&mut self) -> bool {
        self.ctl.borrow_mut().stop_requested()
    }

    fn send_offsets(&self) -> &[(u32, i64)] {
        &self.offsets
    }
}
