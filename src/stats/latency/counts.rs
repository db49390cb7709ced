//! The counts of a latency distribution, kept in HdrHistogram's own layout (lowest value
//! 1 ns, 3 significant digits) so that recording a sample is an index and an add, and the
//! HdrHistogram that every reader uses is built from them when it is read.
//!
//! The layout: 2,048 slots of 1 ns for 0 to 2,047 ns, then one bucket per power of two,
//! each 1,024 slots wide (the upper half of the slots of the bucket below, doubled), so that
//! a value is kept to within 1 part in 1,024. A slot's index is its bucket's first index
//! plus the value shifted down by the bucket's number. `hdrhistogram` 7 lays its counts out
//! the same way for the same bounds; the tests compare both on every magnitude.

use hdrhistogram::Histogram;

/// Slots per bucket half: a value is kept to within one part in 1,024.
const HALF_MAGNITUDE: u32 = 10;
/// Values below this (2,048) have a slot of their own.
const FIRST: u64 = 2 << HALF_MAGNITUDE;
/// 64 minus the bits of the largest value of the first bucket (2,047: 11 bits).
const LZ_BASE: u32 = 64 - (HALF_MAGNITUDE + 1);

/// The slot of `v`.
#[inline(always)]
fn slot(v: u64) -> usize {
    // The bucket: 0 below 2,048, then one more per doubling.
    let bucket = LZ_BASE - (v | (FIRST - 1)).leading_zeros();
    (((bucket as u64 + 1) << HALF_MAGNITUDE) + (v >> bucket) - (1 << HALF_MAGNITUDE)) as usize
}

/// The lowest value kept in slot `i`.
fn lowest_in(i: usize) -> u64 {
    let i = i as u64;
    let half = 1u64 << HALF_MAGNITUDE;
    match (i >> HALF_MAGNITUDE).checked_sub(1) {
        // The first bucket's slots are the values themselves.
        None | Some(0) => i,
        Some(bucket) => (half + (i & (half - 1))) << bucket,
    }
}

/// The slots needed to keep values up to `v` (whole buckets, as HdrHistogram allocates).
fn slots_for(v: u64) -> usize {
    ((slot(v) >> HALF_MAGNITUDE) + 1) << HALF_MAGNITUDE
}

/// Sample counts per slot, and their total. The slots grow to the largest sample's, up to
/// those of [`super::HIGHEST_NS`]: a larger sample is counted at that bound, as
/// HdrHistogram's saturating record counts it.
#[derive(Debug, Clone, Default)]
pub(super) struct Counts {
    slots: Vec<u64>,
    total: u64,
}

impl Counts {
    /// Adds `n` samples of `v`.
    #[inline(always)]
    pub fn add(&mut self, v: u64, n: u64) {
        let i = slot(v);
        match self.slots.get_mut(i) {
            Some(c) => *c += n,
            None => self.grow_and_add(v, i, n),
        }
        self.total += n;
    }

    #[cold]
    #[inline(never)]
    fn grow_and_add(&mut self, v: u64, i: usize, n: u64) {
        let (v, i) = if i >= slots_for(super::HIGHEST_NS) {
            (super::HIGHEST_NS, slot(super::HIGHEST_NS))
        } else {
            (v, i)
        };
        if i >= self.slots.len() {
            self.slots.resize(slots_for(v), 0);
        }
        self.slots[i] += n;
    }

    pub fn total(&self) -> u64 {
        self.total
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Counts) {
        if other.slots.len() > self.slots.len() {
            self.slots.resize(other.slots.len(), 0);
        }
        for (a, b) in self.slots.iter_mut().zip(&other.slots) {
            *a += b;
        }
        self.total += other.total;
    }

    /// Takes away every sample of `earlier` (a copy of these counts taken before).
    pub fn subtract(&mut self, earlier: &Counts) {
        for (a, b) in self.slots.iter_mut().zip(&earlier.slots) {
            *a -= b;
        }
        self.total -= earlier.total;
    }

    /// The slots that hold samples, as (slot, count), lowest first.
    fn recorded(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (i, c))
    }

    /// Whether both hold the same samples (the same count in every slot).
    pub fn same_samples(&self, other: &Counts) -> bool {
        self.total == other.total && self.recorded().eq(other.recorded())
    }

    /// The HdrHistogram of these samples: the same as one that recorded them directly.
    pub fn to_hdr(&self) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, super::HIGHEST_NS, super::SIGFIG)
            .expect("valid histogram bounds");
        h.auto(true);
        for (i, c) in self.recorded() {
            h.saturating_record_n(lowest_in(i), c);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of every magnitude: each power of two, its neighbours, and values between.
    fn magnitudes() -> Vec<u64> {
        let mut v = vec![0, 1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 12_345];
        for bit in 1..64 {
            let p = 1u64 << bit;
            v.extend([p - 1, p, p + 1, p + p / 3]);
        }
        v.push(u64::MAX);
        v
    }

    #[test]
    fn slots_are_hdrhistograms_own() {
        let h: Histogram<u64> = Histogram::new_with_bounds(1, u64::MAX, 3).unwrap();
        for v in magnitudes() {
            let i = slot(v);
            // The slot's lowest value is where HdrHistogram starts the value's range.
            assert_eq!(lowest_in(i), h.lowest_equivalent(v), "value {v}");
            assert_eq!(slot(lowest_in(i)), i, "value {v}");
            assert_eq!(slot(h.highest_equivalent(v)), i, "value {v}");
        }
    }

    #[test]
    fn the_histogram_built_is_the_one_recorded_directly() {
        // Values of every magnitude, beyond the bound (an hour) too, then many small ones.
        let samples: Vec<u64> = magnitudes()
            .into_iter()
            .chain((0..5000).map(|k| 700 + k * 37 % 90_000))
            .collect();
        let mut direct: Histogram<u64> =
            Histogram::new_with_bounds(1, super::super::HIGHEST_NS, 3).unwrap();
        direct.auto(true);
        let mut c = Counts::default();
        for &v in &samples {
            direct.saturating_record_n(v, 2);
            c.add(v, 2);
        }
        let built = c.to_hdr();
        assert_eq!(built, direct);
        assert_eq!(c.total(), direct.len());
        assert_eq!(built.max(), direct.max());
        assert_eq!(built.min_nz(), direct.min_nz());
        assert_eq!(built.high(), direct.high());
        assert_eq!(
            super::super::encode_hdr(&built),
            super::super::encode_hdr(&direct)
        );
        for q in [0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(
                built.value_at_quantile(q),
                direct.value_at_quantile(q),
                "{q}"
            );
        }
    }
}
