//! PTMP's gap lines, `i - seq = diff : t s`: i counts the messages received (from 0), seq
//! is the message's sequence number, diff = i - seq, and t the seconds since the receiver
//! started, printed as C++ streams print a double (six significant digits). A line is
//! due for the first message and wherever diff changes (a hole, a duplicate, a message out
//! of order); with verbose, for every message.

use serde::Serialize;

/// One gap line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GapLine {
    /// Index of the message among those received, from 0.
    pub index: u64,
    /// Its sequence number.
    pub seq: u64,
    /// index - seq (negative when messages were lost before it).
    pub diff: i64,
    /// When it arrived, ns since the receiver started.
    pub at_ns: u64,
}

impl std::fmt::Display for GapLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} - {} = {} : {}s",
            self.index,
            self.seq,
            self.diff,
            format_seconds(self.at_ns as f64 / 1e9)
        )
    }
}

/// Decides which messages get a line.
#[derive(Debug, Clone, Default)]
pub struct GapTracker {
    next_index: u64,
    last_diff: Option<i64>,
    verbose: bool,
}

impl GapTracker {
    /// A tracker; `verbose` gives every message a line.
    pub fn new(verbose: bool) -> Self {
        GapTracker {
            verbose,
            ..Default::default()
        }
    }

    /// Notes the next message received, `seq`, arrived `at_ns` after the start; returns
    /// its line if one is due.
    #[inline]
    pub fn next(&mut self, seq: u64, at_ns: u64) -> Option<GapLine> {
        let index = self.next_index;
        self.next_index += 1;
        let diff = (index as i128 - seq as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        let changed = self.last_diff != Some(diff);
        self.last_diff = Some(diff);
        (changed || self.verbose).then_some(GapLine {
            index,
            seq,
            diff,
            at_ns,
        })
    }

    /// Messages noted so far.
    pub fn count(&self) -> u64 {
        self.next_index
    }
}

/// A number of seconds as `std::cout << x` prints a double: six significant digits,
/// trailing zeros dropped, and the exponent form (`1e-05`, `1.23457e+06`) outside
/// 10^-4 .. 10^6, as C's `%g`.
pub fn format_seconds(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if x == 0.0 {
        return "0".into();
    }
    // The exponent of the %e form with 6 significant digits, after its rounding.
    let e_form = format!("{x:.5e}");
    let (mantissa, exp) = e_form.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp) as usize;
        trim_zeros(&format!("{x:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim_zeros(mantissa), exp.abs())
    }
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_as_cpp_prints_them() {
        // The seed's figures.
        assert_eq!(format_seconds(2.749_244), "2.74924");
        assert_eq!(format_seconds(1.419_17), "1.41917");
        assert_eq!(format_seconds(0.5), "0.5");
        assert_eq!(format_seconds(10.0), "10");
        assert_eq!(format_seconds(9.999_996), "10");
        assert_eq!(format_seconds(123.456_78), "123.457");
        assert_eq!(format_seconds(0.000_123_456_7), "0.000123457");
        assert_eq!(format_seconds(0.000_012_3), "1.23e-05");
        assert_eq!(format_seconds(1_234_567.0), "1.23457e+06");
        assert_eq!(format_seconds(999_999.7), "1e+06");
        assert_eq!(format_seconds(0.0), "0");
    }

    #[test]
    fn a_line_for_the_first_message_and_each_change_of_diff() {
        let mut g = GapTracker::new(false);
        let a = g.next(1797, 2_749_240_000).expect("first line");
        assert_eq!(a.to_string(), "0 - 1797 = -1797 : 2.74924s");
        assert_eq!(g.next(1798, 2_749_280_000), None, "same diff: no line");
        let hole = g.next(1805, 2_750_000_000).expect("a hole changes diff");
        assert_eq!(hole.to_string(), "2 - 1805 = -1803 : 2.75s");
        assert_eq!(g.next(1806, 2_751_000_000), None);
        // A duplicate moves diff the other way.
        assert_eq!(
            g.next(1806, 2_752_000_000).unwrap().to_string(),
            "4 - 1806 = -1802 : 2.752s"
        );
        assert_eq!(g.count(), 5);
    }

    #[test]
    fn in_order_from_zero_is_one_line_unless_verbose() {
        let mut quiet = GapTracker::new(false);
        let lines: Vec<_> = (0..100).filter_map(|s| quiet.next(s, s * 1000)).collect();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].to_string(), "0 - 0 = 0 : 0s");
        let mut loud = GapTracker::new(true);
        let lines: Vec<_> = (0..100).filter_map(|s| loud.next(s, s * 1000)).collect();
        assert_eq!(lines.len(), 100);
        assert_eq!(lines[99].to_string(), "99 - 99 = 0 : 9.9e-05s");
    }
}
