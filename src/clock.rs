//! The one clock zmqperf measures with (CLOCK_MONOTONIC, in ns) and the cost of reading it.

use serde::{Deserialize, Serialize};

/// Nanoseconds on the host's monotonic clock. The same clock in every process of a host,
/// so a timestamp written by one process can be compared with `now_ns()` in another.
#[inline(always)]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
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

#[cfg(test)]
mod tests {
    use super::*;

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
