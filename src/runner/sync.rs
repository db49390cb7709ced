//! Another host's monotonic clock against the runner's: NTP-style exchanges over the control
//! channel (the runner's t0, the node's t1 at receipt and t2 at reply, the runner's t3), the
//! offset taken from the exchange with the shortest round trip, and its error bounded by
//! half that round trip. Before the start and after the report; the change between the
//! two is the drift over the case, added to the bound.

use serde::{Deserialize, Serialize};

/// One exchange, all in ns: t0 and t3 on the runner's clock, t1 and t2 on the node's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exchange {
    /// The runner wrote the request.
    pub t0: u64,
    /// The node read it.
    pub t1: u64,
    /// The node wrote its answer.
    pub t2: u64,
    /// The runner read the answer.
    pub t3: u64,
}

impl Exchange {
    /// The time on the wire both ways: the whole round trip less the node's own time.
    pub fn round_trip_ns(&self) -> u64 {
        let total = self.t3.saturating_sub(self.t0);
        total.saturating_sub(self.t2.saturating_sub(self.t1))
    }

    /// The node's clock minus the runner's, assuming the two ways take equally long.
    pub fn offset_ns(&self) -> i64 {
        let a = self.t1 as i128 - self.t0 as i128;
        let b = self.t2 as i128 - self.t3 as i128;
        ((a + b) / 2) as i64
    }
}

/// A node's clock against the runner's, as measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockEstimate {
    /// The node's monotonic clock minus the runner's, ns.
    pub offset_ns: i64,
    /// The offset is right to within this, ns (half the best exchange's round trip, plus
    /// the drift seen over the case when it was measured again).
    pub error_ns: u64,
    /// Exchanges the estimate was taken from.
    pub samples: u32,
    /// The best exchange's round trip, ns.
    pub round_trip_ns: u64,
}

/// How fast two hosts' monotonic clocks may run apart while the exchanges last: 100 ppm
/// (NTP slews a clock by at most 500 ppm, and a slewed clock on one host against a free
/// one rarely reaches 100; quartz alone is within 50).
const DRIFT_PPM: u64 = 100;

/// The estimate from a set of exchanges. Each exchange bounds the offset on both sides
/// (neither way takes less than no time): it is at most t1 - t0 and at least t2 - t3. The
/// bounds of all exchanges hold at once, so the offset lies in their intersection, which is
/// never wider than the best single round trip and narrower when the quickest way out and
/// the quickest way back were seen in different exchanges. The clocks may drift apart while
/// the exchanges last: the intersection is widened by [`DRIFT_PPM`] of that time. Where the
/// bounds contradict each other (a clock stepped), the best exchange alone is taken. None for
/// no exchange at all.
pub fn estimate(exchanges: &[Exchange]) -> Option<ClockEstimate> {
    let best = exchanges.iter().min_by_key(|e| e.round_trip_ns())?;
    let rtt = best.round_trip_ns();
    let single = ClockEstimate {
        offset_ns: best.offset_ns(),
        error_ns: rtt.div_ceil(2),
        samples: exchanges.len() as u32,
        round_trip_ns: rtt,
    };
    let low = exchanges
        .iter()
        .map(|e| e.t2 as i128 - e.t3 as i128)
        .max()?;
    let high = exchanges
        .iter()
        .map(|e| e.t1 as i128 - e.t0 as i128)
        .min()?;
    let first = exchanges.iter().map(|e| e.t0).min()?;
    let last = exchanges.iter().map(|e| e.t3).max()?;
    let drift = (last.saturating_sub(first) as u128 * DRIFT_PPM as u128 / 1_000_000) as i128;
    if low > high {
        return Some(single);
    }
    let half = ((high - low) as u128).div_ceil(2) as i128 + drift;
    if half as u64 >= single.error_ns {
        return Some(single);
    }
    Some(ClockEstimate {
        offset_ns: ((low + high) / 2) as i64,
        error_ns: half as u64,
        ..single
    })
}

/// The estimate of a case from the one before its start and the one after its report: the
/// start's offset, applied to the whole case. At the start the true offset is within the
/// first estimate's error of it; at the end within the later estimate's error of that one,
/// so within that error plus how far the two estimates lie apart (drift) of the applied
/// offset; with a drift that is steady over the case, the error in between is at most the
/// larger of the two ends.
pub fn over_case(before: ClockEstimate, after: Option<ClockEstimate>) -> ClockEstimate {
    let Some(after) = after else {
        return before;
    };
    let moved = (after.offset_ns as i128 - before.offset_ns as i128).unsigned_abs() as u64;
    ClockEstimate {
        offset_ns: before.offset_ns,
        error_ns: before.error_ns.max(after.error_ns + moved),
        samples: before.samples + after.samples,
        round_trip_ns: before.round_trip_ns.min(after.round_trip_ns),
    }
}

/// Combines the estimates of several nodes on one host (one clock): the best one.
pub fn best_of(estimates: impl IntoIterator<Item = ClockEstimate>) -> Option<ClockEstimate> {
    estimates.into_iter().min_by_key(|e| e.error_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exchange with a node whose clock is `off` ahead, `out` and `back` ns on the way.
    fn ex(t0: u64, off: i64, out: u64, back: u64, held: u64) -> Exchange {
        let t1 = (t0 as i64 + out as i64 + off) as u64;
        let t2 = t1 + held;
        let t3 = (t2 as i64 - off) as u64 + back;
        Exchange { t0, t1, t2, t3 }
    }

    #[test]
    fn a_symmetric_exchange_finds_the_offset_exactly() {
        let e = ex(1_000, 5_000_000_000_000, 20_000, 20_000, 3_000);
        assert_eq!(e.offset_ns(), 5_000_000_000_000);
        assert_eq!(e.round_trip_ns(), 40_000);
        let e = ex(9_000_000_000_000, -7_000_000_000_000, 500, 500, 10);
        assert_eq!(e.offset_ns(), -7_000_000_000_000);
    }

    #[test]
    fn the_true_offset_lies_within_the_bound_of_the_best_exchange() {
        let off = 1_234_567_890;
        // Asymmetric ways: the estimate is off, but by no more than its bound.
        let exs = [
            ex(0, off, 90_000, 10_000, 1_000),
            ex(1_000_000, off, 30_000, 2_000, 1_000),
            ex(2_000_000, off, 50_000, 50_000, 1_000),
        ];
        let est = estimate(&exs).unwrap();
        assert_eq!(est.round_trip_ns, 32_000);
        assert_eq!(est.samples, 3);
        assert!(
            (est.offset_ns - off).unsigned_abs() <= est.error_ns,
            "{est:?}"
        );
        assert!(estimate(&[]).is_none());
    }

    #[test]
    fn the_quickest_way_out_and_back_of_different_exchanges_narrow_the_bound() {
        let off = -42_000_000;
        // The quickest way out (2 us) and the quickest way back (3 us) are in different
        // exchanges; each exchange alone has a round trip of 52 us or more.
        let exs = [
            ex(0, off, 2_000, 50_000, 1_000),
            ex(1_000_000, off, 60_000, 3_000, 1_000),
            ex(2_000_000, off, 40_000, 40_000, 1_000),
        ];
        let est = estimate(&exs).unwrap();
        assert_eq!(est.round_trip_ns, 52_000);
        // Out 2 us + back 3 us: half of 5 us, plus 100 ppm of the 2.081 ms the exchanges took.
        assert_eq!(est.error_ns, 2_500 + 208);
        assert!(
            (est.offset_ns - off).unsigned_abs() <= est.error_ns,
            "{est:?}"
        );
        // Bounds that contradict each other (a clock stepped between exchanges): the best
        // exchange alone.
        let stepped = [
            ex(0, off, 2_000, 2_000, 10),
            ex(1_000_000, off + 50_000, 2_000, 2_000, 10),
        ];
        let est = estimate(&stepped).unwrap();
        assert_eq!(est.error_ns, 2_000);
    }

    #[test]
    fn drift_over_the_case_widens_the_bound() {
        let b = ClockEstimate {
            offset_ns: 1_000,
            error_ns: 20,
            samples: 32,
            round_trip_ns: 40,
        };
        let a = ClockEstimate {
            offset_ns: 1_300,
            error_ns: 30,
            ..b
        };
        let c = over_case(b, Some(a));
        assert_eq!(c.offset_ns, 1_000);
        // At the end: the later error (30) plus the 300 ns the offset moved.
        assert_eq!(c.error_ns, 330);
        let wide = ClockEstimate { error_ns: 500, ..b };
        assert_eq!(over_case(wide, Some(a)).error_ns, 500);
        assert_eq!(c.samples, 64);
        assert_eq!(over_case(b, None), b);
        assert_eq!(best_of([a, b]), Some(b));
    }
}
