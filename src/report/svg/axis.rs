//! Axes: how values map to positions (linear, logarithmic or in nines), the domain, and
//! round, readable ticks.

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Powers of two evenly spaced (message sizes).
    Log2,
    /// Powers of ten evenly spaced.
    Log10,
    /// Values are numbers of nines of a percentile (0 = p0, 1 = p90, 2 = p99, 3 = p99.9);
    /// ticks are labelled as percentiles.
    Nines,
}

/// An axis: its label, scale, domain (in transformed units) and ticks.
pub struct Axis {
    pub(super) label: String,
    pub(super) scale: Scale,
    pub(super) lo: f64,
    pub(super) hi: f64,
    /// (position in transformed units, label)
    pub(super) ticks: Vec<(f64, String)>,
}

/// A step of 1, 2, 2.5 or 5 times a power of ten, close to `raw`.
fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * p
}

impl Axis {
    /// An axis that holds all finite `values` (for log scales, the positive ones). A log
    /// scale with nothing positive to show falls back to linear. Linear axes start at zero
    /// when all values are positive. `fmt` writes tick labels from values.
    pub fn new(
        label: &str,
        scale: Scale,
        values: impl IntoIterator<Item = f64>,
        fmt: fn(f64) -> String,
    ) -> Axis {
        let mut vals: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
        if matches!(scale, Scale::Log2 | Scale::Log10) {
            vals.retain(|&v| v > 0.0);
            if vals.is_empty() {
                return Axis::new(label, Scale::Linear, [0.0, 1.0], fmt);
            }
        }
        let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (min, max) = if vals.is_empty() {
            (0.0, 1.0)
        } else {
            (min, max)
        };
        let label = label.to_string();
        let (lo, hi, ticks) = match scale {
            Scale::Linear => linear_domain(min, max, fmt),
            Scale::Log2 => log2_domain(min, max, fmt),
            Scale::Log10 => log10_domain(min, max, fmt),
            Scale::Nines => nines_domain(max),
        };
        Axis {
            label,
            scale,
            lo,
            hi,
            ticks,
        }
    }

    /// The ticks labelled again, all at once, by `f` from their values: one rule for the
    /// whole axis (e.g. the same unit and decimals on every tick). Nines keep theirs.
    pub fn relabel(mut self, f: fn(&[f64]) -> Vec<String>) -> Axis {
        let value = |t: f64| match self.scale {
            Scale::Linear | Scale::Nines => t,
            Scale::Log2 => 2f64.powf(t),
            Scale::Log10 => 10f64.powf(t),
        };
        if self.scale == Scale::Nines {
            return self;
        }
        let values: Vec<f64> = self.ticks.iter().map(|(t, _)| value(*t)).collect();
        for ((_, label), new) in self.ticks.iter_mut().zip(f(&values)) {
            *label = new;
        }
        self
    }

    pub(super) fn transform(&self, v: f64) -> Option<f64> {
        let t = match self.scale {
            Scale::Linear | Scale::Nines => v,
            Scale::Log2 if v > 0.0 => v.log2(),
            Scale::Log10 if v > 0.0 => v.log10(),
            _ => return None,
        };
        t.is_finite().then_some(t)
    }

    /// Where `v` falls, 0.0 at the low end and 1.0 at the high end.
    pub(super) fn frac(&self, v: f64) -> Option<f64> {
        let t = self.transform(v)?;
        Some((t - self.lo) / (self.hi - self.lo))
    }
}

/// A domain and its ticks: low and high end (in transformed units), (position, label).
type Domain = (f64, f64, Vec<(f64, String)>);

/// A linear domain from zero (or the lowest value, if negative) to a round step past the
/// highest value, ticks on each step.
fn linear_domain(min: f64, max: f64, fmt: fn(f64) -> String) -> Domain {
    let lo = min.min(0.0);
    let mut hi = max.max(lo);
    if hi - lo < 1e-12 {
        hi = lo + 1.0;
    }
    let step = nice_step((hi - lo) / 5.0);
    let lo = (lo / step).floor() * step;
    let hi = (hi / step).ceil() * step;
    let n = ((hi - lo) / step).round() as i64;
    let ticks = (0..=n)
        .map(|i| {
            let v = lo + i as f64 * step;
            (v, fmt(v))
        })
        .collect();
    (lo, hi, ticks)
}

/// Ticks on powers of two; the domain reaches a little past the outer values so their
/// markers are not cut in half by the frame.
fn log2_domain(min: f64, max: f64, fmt: fn(f64) -> String) -> Domain {
    let (mut a, mut b) = (min.log2(), max.log2());
    if b - a < 2.0 {
        let c = (a + b) / 2.0;
        a = c - 1.0;
        b = c + 1.0;
    }
    let (lo, hi) = (a - 0.4, b + 0.4);
    let ticks = (lo.ceil() as i64..=hi.floor() as i64)
        .map(|e| (e as f64, fmt(2f64.powi(e as i32))))
        .collect();
    (lo, hi, ticks)
}

/// Domain and ticks on 1, 2, 5 times powers of ten (only the decades, and the ends, when
/// the domain spans more than three).
fn log10_domain(min: f64, max: f64, fmt: fn(f64) -> String) -> Domain {
    let below = |v: f64| {
        let p = 10f64.powf(v.log10().floor());
        [5.0, 2.0, 1.0]
            .iter()
            .map(|m| m * p)
            .find(|&c| c <= v * (1.0 + 1e-9))
            .unwrap_or(p)
    };
    let above = |v: f64| {
        let p = 10f64.powf(v.log10().floor());
        [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * p)
            .find(|&c| c >= v * (1.0 - 1e-9))
            .unwrap_or(10.0 * p)
    };
    let lo_v = below(min);
    let mut hi_v = above(max);
    if hi_v <= lo_v {
        hi_v = above(lo_v * 1.5);
    }
    let (lo, hi) = (lo_v.log10(), hi_v.log10());
    let decades_only = hi - lo > 3.0;
    let mut ticks = Vec::new();
    let mut e = lo.floor() as i32;
    while (e as f64) <= hi.ceil() {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(e);
            let t = v.log10();
            let ends = (t - lo).abs() < 1e-9 || (t - hi).abs() < 1e-9;
            let keep = m == 1.0 || !decades_only || ends;
            if keep && t >= lo - 1e-9 && t <= hi + 1e-9 {
                ticks.push((t, fmt(v)));
            }
        }
        e += 1;
    }
    (lo, hi, ticks)
}

/// Nines from zero to the whole number of nines at or past the highest value (at least
/// one), a tick on each, labelled as a percentile.
fn nines_domain(max: f64) -> Domain {
    let hi = max.ceil().max(1.0);
    let ticks = (0..=hi as i64)
        .map(|k| (k as f64, nines_label(k as u32)))
        .collect();
    (0.0, hi, ticks)
}

/// `0`, `90`, `99`, `99.9`, `99.99`, ... for 0, 1, 2, 3, 4 nines.
pub fn nines_label(k: u32) -> String {
    match k {
        0 => "0".to_string(),
        1 => "90".to_string(),
        _ => format!("99.{}", "9".repeat(k as usize - 2))
            .trim_end_matches('.')
            .to_string(),
    }
}

/// The scale for values spread over more than `ratio` times: log, else linear.
pub fn auto_scale(values: &[f64], ratio: f64) -> Scale {
    let pos: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let min = pos.iter().copied().fold(f64::INFINITY, f64::min);
    let max = pos.iter().copied().fold(0.0, f64::max);
    if pos.len() == values.len() && !pos.is_empty() && max / min > ratio {
        Scale::Log10
    } else {
        Scale::Linear
    }
}
