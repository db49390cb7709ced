//! One-way delays from send stamps: the one place a receiver turns a header's `send_ns`
//! into a delay on its own clock ([`OneWay`]), applying the sending host's clock offset when
//! one is known, and counting, never recording, the stamps no single clock can give
//! ([`ClockCheck`]: stamps from the receiver's future, stamps older than its timeout).
//!
//! `send_ns` is the sender's CLOCK_MONOTONIC; two hosts' monotonic clocks are unrelated
//! (each counts from its boot). On one host `now - send_ns` is the delay; across hosts it
//! is the delay plus the difference of the clocks, which is why a stamp is brought onto the
//! receiver's clock by an offset (estimated by the runner over the control channel) or the
//! figure is not shown at all.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A stamp may lie this far in the receiver's future (beyond the offset's error bound) and
/// still be read as a delay of 0: two readings of one monotonic clock on two cores.
pub const FUTURE_TOLERANCE_NS: u64 = 1_000;

/// A converted one-way figure is flagged when its offset's error bound exceeds this share of
/// it (the report then points to round trips, which need no offset).
pub const ERROR_SHARE: f64 = 0.10;

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// What a receiver's check of its send stamps found, and whether they were converted from
/// another host's clock. Mergeable: counts add, the largest error bound and the furthest
/// stamps are kept. The default (all zero) means every stamp was read on one clock and
/// none was impossible: "same host clock".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockCheck {
    /// Stamps brought onto the receiver's clock with the offset of their sender's host.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub converted: u64,
    /// The largest error bound of the offsets applied, ns; absent when an offset came
    /// without one (or none was applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_ns: Option<u64>,
    /// Stamps from the receiver's future (beyond the tolerance and the offset's error
    /// bound): impossible on one clock; counted, not recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub future: u64,
    /// How far in the future the furthest of them was, ns.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub future_max_ns: u64,
    /// Stamps sent more than the receiver's timeout before its first time-stamped message
    /// arrived: impossible on one clock for a live stream; counted, not recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stale: u64,
    /// The oldest of them, ns before its receipt.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub stale_max_ns: u64,
}

impl ClockCheck {
    /// Nothing converted, nothing impossible: every sample was read on one clock.
    pub fn is_same_clock(&self) -> bool {
        *self == ClockCheck::default()
    }

    /// Whether the check found stamps no single clock can give: the sender's clock is not
    /// the receiver's (nor was it converted right), and no one-way figure may be shown.
    pub fn differs(&self) -> bool {
        self.future > 0 || self.stale > 0
    }

    /// An offset was applied and its error bound was given for every converted stamp.
    fn unbounded(&self) -> bool {
        self.converted > 0 && self.error_ns.is_none()
    }

    /// Combines the check of other samples into this one.
    pub fn merge(&mut self, o: &ClockCheck) {
        let unbounded = self.unbounded() || o.unbounded();
        self.converted += o.converted;
        self.error_ns = if unbounded {
            None
        } else {
            self.error_ns.max(o.error_ns)
        };
        self.future += o.future;
        self.future_max_ns = self.future_max_ns.max(o.future_max_ns);
        self.stale += o.stale;
        self.stale_max_ns = self.stale_max_ns.max(o.stale_max_ns);
    }

    /// Where a one-way figure's clock comes from, in a few words: `same host clock`,
    /// `converted, error <= 24 us`, or `clocks differ: 1,000 stamps from the future`.
    pub fn provenance(&self) -> String {
        if self.differs() {
            let mut parts = Vec::new();
            if self.future > 0 {
                parts.push(format!(
                    "{} from the future",
                    stamps(self.future, "stamp", "stamps")
                ));
            }
            if self.stale > 0 {
                parts.push(format!(
                    "{} older than the timeout",
                    stamps(self.stale, "stamp", "stamps")
                ));
            }
            return format!("clocks differ: {}", parts.join(", "));
        }
        if self.converted > 0 {
            return match self.error_ns {
                Some(e) => format!("converted, error <= {}", span(e)),
                None => "converted, error bound not given".to_string(),
            };
        }
        "same host clock".to_string()
    }

    /// Why the clocks are taken to differ, for a receiver without a control channel:
    /// `1,000 send stamps up to 5,000 s in this host's future`. None when they do not.
    pub fn differ_reason(&self) -> Option<String> {
        if !self.differs() {
            return None;
        }
        let mut parts = Vec::new();
        if self.future > 0 {
            parts.push(format!(
                "{} up to {} in this host's future",
                stamps(self.future, "send stamp", "send stamps"),
                span(self.future_max_ns)
            ));
        }
        if self.stale > 0 {
            parts.push(format!(
                "{} older than the timeout, up to {} old",
                stamps(self.stale, "send stamp", "send stamps"),
                span(self.stale_max_ns)
            ));
        }
        Some(parts.join("; "))
    }

    /// The line a receiver prints instead of a one-way figure when the clocks differ and
    /// no offset can be had (no control channel): None when they do not differ.
    pub fn not_shown(&self) -> Option<String> {
        self.differ_reason().map(|why| {
            format!(
                "clocks differ ({why}): one-way latency not shown; use round trips \
                 (local_lat/remote_lat) or run both sides under `zmqperf run` with a hosts file"
            )
        })
    }

    /// For a converted figure whose offset's error bound is more than [`ERROR_SHARE`] of
    /// `figure_ns` (or not given): what the report says beside it. None otherwise.
    pub fn error_note(&self, figure_ns: f64) -> Option<String> {
        if self.converted == 0 || self.differs() {
            return None;
        }
        let rtt = "round trips (RTT/2) need no clock offset";
        match self.error_ns {
            None => Some(format!(
                "one-way latency converted from another host's clock without an error bound; {rtt}"
            )),
            Some(e) if e as f64 > ERROR_SHARE * figure_ns => Some(format!(
                "one-way latency converted from another host's clock: its error (<= {}) is more \
                 than {:.0}% of the figure ({}); {rtt}",
                span(e),
                ERROR_SHARE * 100.0,
                span(figure_ns.max(0.0) as u64)
            )),
            Some(_) => None,
        }
    }
}

/// `1 stamp`, `1,000 stamps`.
fn stamps(n: u64, one: &str, many: &str) -> String {
    format!(
        "{} {}",
        crate::units::grouped(n),
        if n == 1 { one } else { many }
    )
}

/// A time span a person reads: `850 ns`, `24 us`, `12.5 ms`, `5,000 s`.
pub fn span(ns: u64) -> String {
    let v = |x: f64| crate::units::value(x);
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{} us", v(ns as f64 / 1e3))
    } else if ns < 1_000_000_000 {
        format!("{} ms", v(ns as f64 / 1e6))
    } else {
        format!("{} s", v(ns as f64 / 1e9))
    }
}

/// [`OneWay`]'s floor before its first stamp.
const UNSET: u64 = u64::MAX;

/// A receiver's reading of one stream's send stamps: the offset that brings them onto its
/// clock (none on one host), what may pass as a delay, and what its check found.
///
/// A stamp is impossible, and counted instead of recorded, when it lies in the receiver's
/// future beyond a tolerance (the offset's error bound plus [`FUTURE_TOLERANCE_NS`]), or
/// when it was sent more than the receiver's timeout before the first time-stamped message
/// arrived (a message cannot have waited longer than its sender's patience before a live
/// stream began; later messages were sent later still).
#[derive(Debug, Clone)]
pub struct OneWay {
    /// Added to a send stamp to bring it onto the receiver's clock, ns.
    offset_ns: i64,
    /// 1 when an offset was given (each delay counts as converted), else 0.
    converted: u64,
    /// How far in the future a stamp may be and still read as 0.
    tolerance_ns: u64,
    /// The receiver's timeout, ns.
    timeout_ns: u64,
    /// Receiver's clock at its first time-stamped arrival less the timeout ([`UNSET`]
    /// until then): a stamp before it is stale.
    floor_ns: u64,
    check: ClockCheck,
}

impl OneWay {
    /// A stream on the receiver's own clock (one host), with the receiver's `timeout`.
    pub fn same_clock(timeout: Duration) -> OneWay {
        OneWay {
            offset_ns: 0,
            converted: 0,
            tolerance_ns: FUTURE_TOLERANCE_NS,
            timeout_ns: timeout.as_nanos().min(u64::MAX as u128) as u64,
            floor_ns: UNSET,
            check: ClockCheck::default(),
        }
    }

    /// A stream from another host's clock: `offset_ns` is added to each send stamp to bring
    /// it onto the receiver's clock, known to within `error_ns` (None: not given).
    pub fn converted(offset_ns: i64, error_ns: Option<u64>, timeout: Duration) -> OneWay {
        let mut w = OneWay::same_clock(timeout);
        w.offset_ns = offset_ns;
        w.converted = 1;
        w.tolerance_ns = FUTURE_TOLERANCE_NS.saturating_add(error_ns.unwrap_or(0));
        w.check.error_ns = error_ns;
        w
    }

    /// The reading of stream `stream` as a node spec gives it: its offset from `offsets`
    /// (stream id -> ns to add to its send stamps) with its error bound from `errors`, or
    /// the receiver's own clock when the stream has no offset.
    pub fn for_stream(
        offsets: &[(u32, i64)],
        errors: &[(u32, u64)],
        stream: u32,
        timeout: Duration,
    ) -> OneWay {
        match offsets.iter().find(|(id, _)| *id == stream) {
            Some(&(_, off)) => {
                let err = errors.iter().find(|(id, _)| *id == stream).map(|e| e.1);
                OneWay::converted(off, err, timeout)
            }
            None => OneWay::same_clock(timeout),
        }
    }

    /// The one-way delay of a message stamped `send_ns` (the sender's clock) and received
    /// at `now` (this receiver's clock), ns; None for an impossible stamp, which is counted
    /// in [`OneWay::check`] instead.
    #[inline]
    pub fn delay(&mut self, send_ns: u64, now: u64) -> Option<u64> {
        if self.floor_ns == UNSET {
            self.floor_ns = now.saturating_sub(self.timeout_ns).min(UNSET - 1);
        }
        // A stamp the offset takes below 0 is before this host's boot: as stale as can be.
        let sent = match send_ns.checked_add_signed(self.offset_ns) {
            Some(s) => s,
            None if self.offset_ns < 0 => return self.stale(now),
            None => return self.future(u64::MAX - now),
        };
        if sent > now {
            let ahead = sent - now;
            if ahead > self.tolerance_ns {
                return self.future(ahead);
            }
            self.check.converted += self.converted;
            return Some(0);
        }
        if sent < self.floor_ns {
            return self.stale(now - sent);
        }
        self.check.converted += self.converted;
        Some(now - sent)
    }

    /// [`OneWay::delay`] where it has nothing to decide: after the first stamp, for a stamp
    /// that the offset brings between the floor and `now`. None (with nothing changed)
    /// everywhere else, for `delay` to take.
    #[inline(always)]
    pub fn settled_delay(&mut self, send_ns: u64, now: u64) -> Option<u64> {
        let (sent, over) = send_ns.overflowing_add_signed(self.offset_ns);
        // Before the first stamp the floor is above every stamp but u64::MAX, which is
        // above every reading of the clock.
        if over || sent < self.floor_ns || sent > now {
            return None;
        }
        self.check.converted += self.converted;
        Some(now - sent)
    }

    #[cold]
    fn future(&mut self, ahead: u64) -> Option<u64> {
        self.check.future += 1;
        self.check.future_max_ns = self.check.future_max_ns.max(ahead);
        None
    }

    #[cold]
    fn stale(&mut self, age: u64) -> Option<u64> {
        self.check.stale += 1;
        self.check.stale_max_ns = self.check.stale_max_ns.max(age);
        None
    }

    /// What the check found so far.
    pub fn check(&self) -> ClockCheck {
        self.check
    }
}

#[cfg(test)]
mod tests;
