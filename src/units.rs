//! Number formatting for everything a person reads (reports, findings, error messages):
//! thousands separators, a few significant digits, the compact `±` of a confidence
//! interval, sizes and axis labels. Below every layer that prints, so none of them needs
//! the reports to format a number.

/// `1 case`, `2 cases`.
pub fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// An integer with thousands separators: `1234567` becomes `1,234,567`.
pub fn grouped(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A float rounded to a whole number, with thousands separators; `-` if not finite.
pub fn grouped_f(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let r = v.round();
    let sign = if r < 0.0 { "-" } else { "" };
    // Values beyond u64 are not measurements; saturate rather than fail.
    format!("{sign}{}", grouped(r.abs() as u64))
}

/// A measured value with the precision a person reads: 3 decimals below 1, 2 below 1,000,
/// then a whole number with separators.
pub fn value(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let a = v.abs();
    if a < 1.0 {
        format!("{v:.3}")
    } else if a < 1000.0 {
        format!("{v:.2}")
    } else {
        grouped_f(v)
    }
}

/// A half-width of an interval with two significant digits (`1.2`, `0.35`, `12,000`);
/// None when it is zero, negative or not finite, or rounds to zero at 3 decimals.
pub fn plusminus(h: f64) -> Option<String> {
    if !h.is_finite() || h < 0.0005 {
        return None;
    }
    Some(if h >= 100.0 {
        let mag = 10f64.powi(h.log10().floor() as i32 - 1);
        grouped_f((h / mag).round() * mag)
    } else if h >= 10.0 {
        format!("{h:.0}")
    } else if h >= 1.0 {
        format!("{h:.1}")
    } else if h >= 0.1 {
        format!("{h:.2}")
    } else {
        format!("{h:.3}")
    })
}

/// The smallest step [`value`] shows for `v`.
pub(crate) fn value_step(v: f64) -> f64 {
    let a = v.abs();
    if a < 1.0 {
        0.001
    } else if a < 1000.0 {
        0.01
    } else {
        1.0
    }
}

/// A latency in ns in the unit that reads best: `850 ns`, `52 us`, `1.25 ms`, `2.10 s`.
pub fn latency(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.0} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// A rate in msg/s: whole number with separators, or two decimals below 100.
pub fn rate(r: f64) -> String {
    if r.is_finite() && r < 100.0 && r.fract() != 0.0 {
        format!("{r:.2}")
    } else {
        grouped_f(r)
    }
}

/// A byte count in binary units where exact or large: `64 B`, `1 KiB`, `64 KiB`, `1.5 MiB`.
pub fn bytes(v: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = v as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < UNITS.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 || x.fract() == 0.0 {
        format!("{x:.0} {}", UNITS[u])
    } else {
        format!("{x:.1} {}", UNITS[u])
    }
}

/// A short tick label: `0`, `2.5`, `500`, `1,500`, `20k`, `2.5M`, `1G`.
pub fn compact(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    let a = v.abs();
    let (x, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let mut s = if x.fract().abs() < 1e-9 {
        grouped_f(x)
    } else {
        // Up to 3 decimals, trailing zeros dropped.
        let t = format!("{x:.3}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    s.push_str(suffix);
    s
}

/// A chart label with three significant digits, in k, M or G from a thousand on:
/// `2.36`, `382`, `1.94k`, `1.61M`, `1.63M`, `3.00M`. Every value label of a chart is
/// written by this one rule, so neighbours never differ in precision (`1.61M` beside
/// `1.631M`). `0` for zero, `-` when not finite.
pub fn sig3(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    // Round to 3 significant digits first: 999.7 becomes 1.00k, not 1,000.
    let a = v.abs();
    let m = 10f64.powi(2 - a.log10().floor() as i32);
    let r = (a * m).round() / m;
    let (x, suffix) = unit_of(r, 1e3);
    let decimals = (2 - x.log10().floor() as i32).clamp(0, 6) as usize;
    let sign = if v < 0.0 { "-" } else { "" };
    format!("{sign}{x:.decimals$}{suffix}")
}

/// `v` in the unit it is written in from `k_from` on: (scaled value, suffix).
fn unit_of(a: f64, k_from: f64) -> (f64, &'static str) {
    if a >= 1e9 {
        (a / 1e9, "G")
    } else if a >= 1e6 {
        (a / 1e6, "M")
    } else if a >= k_from {
        (a / 1e3, "k")
    } else {
        (a, "")
    }
}

fn unit_div(suffix: &str) -> f64 {
    match suffix {
        "G" => 1e9,
        "M" => 1e6,
        "k" => 1e3,
        _ => 1.0,
    }
}

/// The tick labels of a linear axis, one rule for all: the unit of the largest tick (k
/// from 10,000 on, M, G) and as many decimals as the step needs, the same on every tick
/// (`0`, `0.5M`, `1.0M`, `1.5M`); whole numbers below 10,000 keep their separators.
pub fn linear_ticks(values: &[f64]) -> Vec<String> {
    let max = values.iter().map(|v| v.abs()).fold(0.0, f64::max);
    let (_, suffix) = unit_of(max, 1e4);
    let div = unit_div(suffix);
    let step = values
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(f64::INFINITY, f64::min);
    // Decimals that show the step exactly (at most 3).
    let decimals = (0..=3)
        .find(|&d| {
            let x = step / div * 10f64.powi(d);
            !step.is_finite() || (x - x.round()).abs() < 1e-6
        })
        .unwrap_or(3) as usize;
    values
        .iter()
        .map(|&v| {
            if v.abs() <= max * 1e-9 {
                "0".to_string()
            } else if suffix.is_empty() && decimals == 0 {
                grouped_f(v)
            } else {
                format!("{:.decimals$}{suffix}", v / div)
            }
        })
        .collect()
}

/// The tick labels of a logarithmic axis (1, 2 and 5 times powers of ten): each in k, M
/// or G from a thousand on, so the axis reads `500`, `1k`, `2k`, `10k`, `1M` (never
/// `2,000` beside `10k`).
pub fn log_ticks(values: &[f64]) -> Vec<String> {
    values
        .iter()
        .map(|&v| {
            let (x, suffix) = unit_of(v.abs(), 1e3);
            let t = format!("{x:.3}");
            let t = t.trim_end_matches('0').trim_end_matches('.');
            format!("{}{t}{suffix}", if v < 0.0 { "-" } else { "" })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped_f(-1234.4), "-1,234");
        assert_eq!(grouped_f(f64::NAN), "-");
    }

    #[test]
    fn values_and_intervals() {
        assert_eq!(value(0.1234), "0.123");
        assert_eq!(value(48.431), "48.43");
        assert_eq!(value(12345.6), "12,346");
        assert_eq!(plusminus(1.23).as_deref(), Some("1.2"));
        assert_eq!(plusminus(0.351).as_deref(), Some("0.35"));
        assert_eq!(plusminus(12_345.0).as_deref(), Some("12,000"));
        assert_eq!(plusminus(0.0), None);
    }

    #[test]
    fn sizes_rates_and_ticks() {
        assert_eq!(bytes(64), "64 B");
        assert_eq!(bytes(1024), "1 KiB");
        assert_eq!(bytes(65536), "64 KiB");
        assert_eq!(bytes(1536 * 1024), "1.5 MiB");
        assert_eq!(rate(10_000.0), "10,000");
        assert_eq!(rate(2.5), "2.50");
        assert_eq!(compact(0.0), "0");
        assert_eq!(compact(2.5), "2.5");
        assert_eq!(compact(1500.0), "1,500");
        assert_eq!(compact(20_000.0), "20k");
        assert_eq!(compact(2_500_000.0), "2.5M");
    }

    #[test]
    fn chart_labels_follow_one_rule() {
        // Three significant digits each, whatever the size.
        let got: Vec<String> = [
            1_610_000.0,
            1_631_000.0,
            3_040_000.0,
            2.364,
            382.46,
            1_941.0,
        ]
        .iter()
        .map(|&v| sig3(v))
        .collect();
        assert_eq!(got, ["1.61M", "1.63M", "3.04M", "2.36", "382", "1.94k"]);
        assert_eq!(sig3(999.7), "1.00k");
        assert_eq!(sig3(999_700.0), "1.00M");
        assert_eq!(sig3(0.012345), "0.0123");
        assert_eq!(sig3(0.0), "0");
        assert_eq!(sig3(f64::NAN), "-");
        // A linear axis: one unit and one number of decimals for every tick.
        assert_eq!(
            linear_ticks(&[0.0, 500_000.0, 1_000_000.0, 1_500_000.0]),
            ["0", "0.5M", "1.0M", "1.5M"]
        );
        assert_eq!(
            linear_ticks(&[0.0, 500.0, 1000.0, 1500.0]),
            ["0", "500", "1,000", "1,500"]
        );
        assert_eq!(
            linear_ticks(&[0.0, 2_500.0, 5_000.0, 7_500.0, 10_000.0]),
            ["0", "2.5k", "5.0k", "7.5k", "10.0k"]
        );
        assert_eq!(linear_ticks(&[0.0, 0.25, 0.5]), ["0", "0.25", "0.50"]);
        // A log axis: k from a thousand on, everywhere.
        assert_eq!(
            log_ticks(&[500.0, 1_000.0, 2_000.0, 10_000.0, 1e6, 0.5]),
            ["500", "1k", "2k", "10k", "1M", "0.5"]
        );
    }
}
