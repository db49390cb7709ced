//! Latency samples in an HdrHistogram with ns resolution, plus exact moments.

use super::oneway::ClockCheck;
use counts::Counts;
use hdrhistogram::Histogram;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Highest value the histogram tracks without resizing: one hour, in ns.
const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Significant decimal digits kept by the histogram (values within 0.1%).
const SIGFIG: u8 = 3;
/// Scale of the reciprocals summed for the harmonic mean: 10^21 / x keeps at least 8
/// significant digits for samples up to an hour and cannot overflow for 10^17 samples.
const INV_SCALE: u128 = 1_000_000_000_000_000_000_000;

/// A latency distribution.
///
/// Percentiles come from the HdrHistogram (3 significant digits: within 0.1% of the true
/// sample); count, min, max, mean, standard deviation and harmonic mean are exact. A
/// distribution of one-way delays also carries what its receiver's clock check found
/// ([`ClockCheck`]: converted from another host's clock, or clocks that differ), so the
/// figures never travel without it.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    /// The samples per HdrHistogram slot (the histogram itself is built when read).
    counts: Counts,
    min: u64,
    max: u64,
    sum: u128,
    sum_sq: u128,
    /// Sum of INV_SCALE/x over the samples above zero, in integers so merging is exact.
    sum_inv: u128,
    /// Samples of 0 ns (the harmonic mean is taken over the others).
    zeros: u64,
    /// Which clock the samples were read on (one-way delays; default for round trips).
    clock: ClockCheck,
}

/// The figures a person reads off a distribution. All times in ns.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    /// Number of samples.
    pub count: u64,
    /// Smallest sample (exact).
    pub min_ns: u64,
    /// Median (HdrHistogram, within 0.1%).
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p99_9_ns: u64,
    /// 99.99th percentile.
    pub p99_99_ns: u64,
    /// Largest sample (exact).
    pub max_ns: u64,
    /// Arithmetic mean (exact).
    pub mean_ns: f64,
    /// Population standard deviation (exact).
    pub stddev_ns: f64,
    /// Harmonic mean of the samples above 0 ns (exact).
    pub harmonic_mean_ns: f64,
    /// One-way delays: what the receiver's clock check found (stamps converted from
    /// another host's clock with their error bound, or impossible stamps: clocks that
    /// differ, in which case no figure here may be shown). Absent: every sample was read
    /// on one clock (round trips; one-way on one host).
    #[serde(default, skip_serializing_if = "ClockCheck::is_same_clock")]
    pub clock: ClockCheck,
}

/// INV_SCALE / ns, rounded by one f64 division (a u128 division would cost more on the hot
/// path); the same sample always gives the same integer, so sums still merge exactly.
/// Above [`WIDE_BELOW`] ns the quotient fits in a u64, whose conversion from f64 is a few
/// instructions where the u128's is a call (about 20 instructions): the same integer.
/// From [`NARROW_FROM`] ns to 2^63 ns (both conversions one instruction there) the same
/// integer again, with no range checks.
#[inline(always)]
fn scaled_inverse(ns: u64) -> u128 {
    if (NARROW_FROM..1 << 63).contains(&ns) {
        return narrow_inverse(ns);
    }
    scaled_inverse_wide(ns)
}

/// [`scaled_inverse`] of a sample in [`NARROW_FROM`]..2^63, the common case.
#[inline(always)]
fn narrow_inverse(ns: u64) -> u128 {
    debug_assert!((NARROW_FROM..1 << 63).contains(&ns));
    let q = INV_SCALE as f64 / ns as i64 as f64;
    // SAFETY: for ns in that range, q lies in (10^21 / 2^63, 10^21 / 109] = (108.4,
    // 9.17e18]: finite, and an i64 once truncated; the truncation is `as`'s own. Positive,
    // so widened as a u64 (no sign to extend).
    unsafe { q.to_int_unchecked::<i64>() as u64 as u128 }
}

#[cold]
#[inline(never)]
fn scaled_inverse_wide(ns: u64) -> u128 {
    let q = INV_SCALE as f64 / ns as f64;
    if ns >= WIDE_BELOW {
        (q as u64) as u128
    } else {
        q as u128
    }
}

/// The samples below it have a scaled inverse of 2^64 or more (10^21 / 2^64 = 54.2).
const WIDE_BELOW: u64 = 55;
/// The samples from it on have a scaled inverse below 2^63 (10^21 / 2^63 = 108.4).
const NARROW_FROM: u64 = 109;

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty distribution.
    pub fn new() -> Self {
        LatencyHistogram {
            counts: Counts::default(),
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0,
            sum_inv: 0,
            zeros: 0,
            clock: ClockCheck::default(),
        }
    }

    /// What the receiver's clock check found for these samples.
    pub fn clock(&self) -> &ClockCheck {
        &self.clock
    }

    /// Sets what the receiver's clock check found (once its samples are in).
    pub fn set_clock(&mut self, c: ClockCheck) {
        self.clock = c;
    }

    /// Adds one sample in ns.
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as u128;
        self.record_shape(ns);
    }

    /// The harmonic mean's part of a sample outside [`NARROW_FROM`]..2^63: a zero, or a
    /// scaled inverse that may not fit in 63 bits.
    #[cold]
    #[inline(never)]
    fn record_wide_inverse(&mut self, ns: u64) {
        if ns == 0 {
            self.zeros += 1;
        } else {
            self.sum_inv = self.sum_inv.saturating_add(scaled_inverse(ns));
        }
    }

    /// Adds one sample in ns to everything but the extremes and the plain sum: for a caller
    /// that keeps those per part of its samples anyway (the swarm's subscribers) and gives
    /// them with [`LatencyHistogram::add_extremes_and_sum`] before the histogram is read.
    /// Their second copy would cost the hot path about ten instructions a sample.
    #[inline(always)]
    pub fn record_shape(&mut self, ns: u64) {
        self.counts.add(ns, 1);
        self.sum_sq += ns as u128 * ns as u128;
        if (NARROW_FROM..1 << 63).contains(&ns) {
            // Below 2^63 each: no sum of them reaches 2^128 (that would take 2^65 samples),
            // so the plain add is the saturating one.
            self.sum_inv += narrow_inverse(ns);
        } else {
            self.record_wide_inverse(ns);
        }
    }

    /// The extremes and the sum of samples given to [`LatencyHistogram::record_shape`]
    /// (of some of them: each part in turn).
    pub fn add_extremes_and_sum(&mut self, min: u64, max: u64, sum: u128) {
        self.min = self.min.min(min);
        self.max = self.max.max(max);
        self.sum += sum;
    }

    /// Adds `n` samples of the same value.
    #[inline]
    pub fn record_n(&mut self, ns: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.counts.add(ns, n);
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as u128 * n as u128;
        self.sum_sq += (ns as u128 * ns as u128) * n as u128;
        if ns == 0 {
            self.zeros += n;
        } else {
            self.sum_inv = self.sum_inv.saturating_add(scaled_inverse(ns) * n as u128);
        }
    }

    /// The HdrHistogram of the samples (ns), as the JSON's `hdr` and the interval log
    /// encode it: the same as one that recorded them (built from the counts).
    pub fn hdr(&self) -> Histogram<u64> {
        self.counts.to_hdr()
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.counts.total()
    }

    /// The value at quantile `q` (0.0 ..= 1.0), in ns.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        self.quantile_in(&self.hdr(), q)
    }

    /// The value at quantile `q` of `hdr`, this distribution's histogram.
    fn quantile_in(&self, hdr: &Histogram<u64>, q: f64) -> u64 {
        // As HdrHistogram's reference (Java) does: the quantile taken one step down before
        // the count at it is rounded up, so that 0.9 x 3000 (2700.0000000000005 in floating
        // point) asks for the 2,700th sample, not the 2,701st.
        hdr.value_at_quantile(q.next_down().max(0.0))
            .clamp(self.min, self.max)
    }

    /// Combines another distribution into this one.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.counts.merge(&other.counts);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
        self.sum_inv = self.sum_inv.saturating_add(other.sum_inv);
        self.zeros += other.zeros;
        self.clock.merge(&other.clock);
    }

    /// The samples recorded since `earlier`, a copy of this distribution taken before
    /// (every sample of `earlier` is in this one): an interval's distribution, with no cost
    /// per sample. Its min and max are read from the buckets (to the histogram's precision).
    pub fn since(&self, earlier: &LatencyHistogram) -> LatencyHistogram {
        let mut d = self.clone();
        d.counts.subtract(&earlier.counts);
        d.sum -= earlier.sum;
        d.sum_sq -= earlier.sum_sq;
        d.sum_inv = d.sum_inv.saturating_sub(earlier.sum_inv);
        d.zeros -= earlier.zeros;
        if d.counts.total() == 0 {
            d.min = u64::MAX;
            d.max = 0;
        } else {
            let hdr = d.hdr();
            d.min = hdr.min();
            d.max = hdr.max();
        }
        d
    }

    /// The summary figures.
    pub fn summary(&self) -> LatencySummary {
        let n = self.count();
        if n == 0 {
            return LatencySummary {
                count: 0,
                min_ns: 0,
                p50_ns: 0,
                p90_ns: 0,
                p99_ns: 0,
                p99_9_ns: 0,
                p99_99_ns: 0,
                max_ns: 0,
                mean_ns: 0.0,
                stddev_ns: 0.0,
                harmonic_mean_ns: 0.0,
                clock: self.clock,
            };
        }
        let mean = self.sum as f64 / n as f64;
        // Var = E[x^2] - E[x]^2, computed in integers where it matters to stay exact.
        let var_num = (n as u128 * self.sum_sq).saturating_sub(self.sum * self.sum);
        let var = var_num as f64 / (n as f64 * n as f64);
        let positive = n - self.zeros;
        let hdr = self.hdr();
        LatencySummary {
            count: n,
            min_ns: self.min,
            p50_ns: self.quantile_in(&hdr, 0.5),
            p90_ns: self.quantile_in(&hdr, 0.9),
            p99_ns: self.quantile_in(&hdr, 0.99),
            p99_9_ns: self.quantile_in(&hdr, 0.999),
            p99_99_ns: self.quantile_in(&hdr, 0.9999),
            max_ns: self.max,
            mean_ns: mean,
            stddev_ns: var.sqrt(),
            harmonic_mean_ns: if positive == 0 {
                0.0
            } else {
                positive as f64 * INV_SCALE as f64 / self.sum_inv as f64
            },
            clock: self.clock,
        }
    }

    /// The recorded buckets as (value in ns, count), lowest first: the percentile spectrum.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        self.hdr()
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }
}

impl PartialEq for LatencyHistogram {
    fn eq(&self, other: &Self) -> bool {
        self.counts.same_samples(&other.counts)
            && self.min == other.min
            && self.max == other.max
            && self.sum == other.sum
            && self.sum_sq == other.sum_sq
            && self.zeros == other.zeros
            && self.sum_inv == other.sum_inv
            && self.clock == other.clock
    }
}

/// The serialised form: exact moments plus the distribution, so a reader can merge it
/// again. The distribution is HdrHistogram's own compressed form (`hdr`: V2, deflated,
/// base64), which HdrHistogram's libraries in every language decode; `[value_ns, count]`
/// buckets are read too (runs recorded before it, and the peers' compact form).
#[derive(Serialize, Deserialize)]
struct Wire {
    count: u64,
    min_ns: u64,
    max_ns: u64,
    sum_ns: String,
    sum_sq_ns2: String,
    sum_inv: String,
    zeros: u64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    hdr: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    buckets: Vec<(u64, u64)>,
    /// The clock check of one-way delays (left out when every sample was on one clock).
    #[serde(default, skip_serializing_if = "ClockCheck::is_same_clock")]
    clock: ClockCheck,
}

impl Serialize for LatencyHistogram {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Wire {
            count: self.count(),
            min_ns: if self.count() == 0 { 0 } else { self.min },
            max_ns: self.max,
            sum_ns: self.sum.to_string(),
            sum_sq_ns2: self.sum_sq.to_string(),
            sum_inv: self.sum_inv.to_string(),
            zeros: self.zeros,
            hdr: encode_hdr(&self.hdr()),
            buckets: Vec::new(),
            clock: self.clock,
        }
        .serialize(s)
    }
}

/// `hist` in HdrHistogram's compressed form: V2 encoding, deflated, base64 (what
/// HdrHistogram's `encode()` gives in Java, Python, Go and C).
pub fn encode_hdr(hist: &Histogram<u64>) -> String {
    use base64::Engine as _;
    use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(hist, &mut bytes)
        .expect("a histogram serialises into memory");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A histogram from its compressed form ([`encode_hdr`]), or why it cannot be read.
pub fn decode_hdr(text: &str) -> Result<Histogram<u64>, String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("the histogram's hdr is not base64: {e}"))?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .map_err(|e| format!("the histogram's hdr is not HdrHistogram's encoding: {e:?}"))
}

/// What a reader accepts: the full form, or a peer's compact form (docs/peers.md): only the
/// `[value_ns, count]` buckets, from which the moments are computed.
#[derive(Deserialize)]
#[serde(untagged)]
enum AnyWire {
    Full(Wire),
    Compact {
        buckets: Vec<(u64, u64)>,
        #[serde(default)]
        clock: ClockCheck,
    },
}

impl<'de> Deserialize<'de> for LatencyHistogram {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let w = match AnyWire::deserialize(d)? {
            AnyWire::Full(w) => w,
            AnyWire::Compact { buckets, clock } => {
                let mut h = LatencyHistogram::new();
                for (v, c) in buckets {
                    h.record_n(v, c);
                }
                h.clock = clock;
                return Ok(h);
            }
        };
        let mut h = LatencyHistogram::new();
        if !w.hdr.is_empty() {
            let read = decode_hdr(&w.hdr).map_err(D::Error::custom)?;
            for v in read.iter_recorded() {
                h.counts.add(v.value_iterated_to(), v.count_at_value());
            }
        }
        for (v, c) in &w.buckets {
            h.counts.add(*v, *c);
        }
        if h.count() != w.count {
            return Err(D::Error::custom(
                "histogram bucket counts do not add up to count",
            ));
        }
        h.min = if w.count == 0 { u64::MAX } else { w.min_ns };
        h.max = w.max_ns;
        h.sum = w.sum_ns.parse().map_err(D::Error::custom)?;
        h.sum_sq = w.sum_sq_ns2.parse().map_err(D::Error::custom)?;
        h.sum_inv = w.sum_inv.parse().map_err(D::Error::custom)?;
        h.zeros = w.zeros;
        h.clock = w.clock;
        Ok(h)
    }
}

mod counts;
#[cfg(test)]
mod tests;
