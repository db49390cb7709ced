//! The one clock zmqperf measures with (CLOCK_MONOTONIC, in ns) and the cost of reading it;
//! wall-clock times as a run records them (RFC 3339 UTC) and run ids.

use serde::{Deserialize, Serialize};
use std::time::{SystemTime, UNIX_EPOCH};

/// Nanoseconds on the host's monotonic clock. The same clock in every process of a host,
/// so a timestamp written by one process can be compared with `now_ns()` in another.
#[inline(always)]
pub fn now_ns() -> u64 {
    let mut ts = std::mem::MaybeUninit::<libc::timespec>::uninit();
    // SAFETY: clock_gettime writes the whole timespec we own, and cannot fail with
    // CLOCK_MONOTONIC, which always exists on Linux (left uninitialised before the call:
    // zeroing it cost two instructions on every reading).
    let ts = unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, ts.as_mut_ptr());
        ts.assume_init()
    };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What reading the clock costs, measured on this machine.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct TimerCost {
    /// Mean time of one `now_ns()` call, in ns.
    pub mean_ns: f64,
    /// Smallest non-zero step seen between two consecutive readings, in ns.
    pub resolution_ns: u64,
    /// How many readings the figures come from.
    pub samples: u64,
}

/// Measures the clock: `samples` back-to-back readings.
pub fn measure_timer_cost(samples: u64) -> TimerCost {
    let samples = samples.max(2);
    let mut min_step = u64::MAX;
    let start = now_ns();
    let mut prev = start;
    for _ in 0..samples {
        let t = now_ns();
        let step = t - prev;
        if step > 0 && step < min_step {
            min_step = step;
        }
        prev = t;
    }
    TimerCost {
        mean_ns: (prev - start) as f64 / samples as f64,
        resolution_ns: if min_step == u64::MAX { 0 } else { min_step },
        samples,
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn parts(t: SystemTime) -> (i64, u32, u32, u64, u64, u64) {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil((secs / 86_400) as i64);
    let s = secs % 86_400;
    (y, m, d, s / 3600, s / 60 % 60, s % 60)
}

/// A time as RFC 3339 UTC, e.g. `2026-11-21T22:15:30Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let (y, m, d, hh, mm, ss) = parts(t);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
}

/// The time of an RFC 3339 UTC text as [`rfc3339`] writes it (`2026-11-21T22:15:30Z`);
/// None for any other text.
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let b = text.as_bytes();
    if b.len() != 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| text.get(r)?.parse::<i64>().ok();
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    // Days from 1970-01-01 to the date (the proleptic Gregorian calendar, March-based years).
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hh * 3600 + mm * 60 + ss;
    u64::try_from(secs)
        .ok()
        .map(|s| UNIX_EPOCH + std::time::Duration::from_secs(s))
}

/// A new run id: start time plus four hex digits, e.g. `20261121-221530-4f2a`.
pub fn run_id(t: SystemTime) -> String {
    let (y, m, d, hh, mm, ss) = parts(t);
    let salt = (now_ns() ^ u64::from(std::process::id()).rotate_left(17)) & 0xffff;
    format!("{y:04}{m:02}{d:02}-{hh:02}{mm:02}{ss:02}-{salt:04x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_795_299_330); // 2026-11-21 22:15:30 UTC
        assert_eq!(rfc3339(t), "2026-11-21T22:15:30Z");
        assert!(run_id(t).starts_with("20261121-221530-"));
        assert_eq!(civil(11_016), (2000, 2, 29));
        assert_eq!(parse_rfc3339("2026-11-21T22:15:30Z"), Some(t));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(UNIX_EPOCH));
        assert_eq!(
            parse_rfc3339("2000-02-29T00:00:00Z"),
            Some(UNIX_EPOCH + Duration::from_secs(11_016 * 86_400))
        );
        for bad in [
            "",
            "2026-11-21 22:15:30Z",
            "2026-13-01T00:00:00Z",
            "2026-11-21T22:15:30",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn clock_moves_forward_and_costs_something() {
        let a = now_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = now_ns();
        assert!(b - a >= 2_000_000, "{a} {b}");
        let c = measure_timer_cost(10_000);
        assert!(c.mean_ns > 0.0 && c.mean_ns < 100_000.0, "{c:?}");
        assert!(c.resolution_ns > 0, "{c:?}");
    }
}
