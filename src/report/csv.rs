//! The CSV report: one row per case with its summary figures, for spreadsheets and scripts.
//!
//! RFC 4180 quoting: a field holding a comma, a double quote or a line break is put in
//! double quotes, with inner quotes doubled. Lines end in `\n`. Missing values are empty;
//! numbers are written in full precision.

use super::layout::{kind_name, loop_name};
use super::Reporter;
use crate::model::{CaseResult, Estimate, RunResult};

/// Renders a run as CSV.
pub struct Csv;

/// The header row.
pub const COLUMNS: [&str; 24] = [
    "id",
    "kind",
    "pattern",
    "transport",
    "message_size",
    "count",
    "rate",
    "loop_mode",
    "latency_us_median",
    "latency_us_ci_low",
    "latency_us_ci_high",
    "p50_us",
    "p99_us",
    "msgs_per_sec_median",
    "msgs_per_sec_ci_low",
    "msgs_per_sec_ci_high",
    "mbit_per_sec",
    "send_msgs_per_sec",
    "lost",
    "duplicated",
    "reordered",
    "floor_latency_us",
    "warnings",
    "error",
];

/// One field, quoted if it needs to be.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(v: f64) -> String {
    if v.is_finite() {
        v.to_string()
    } else {
        String::new()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(num).unwrap_or_default()
}

fn median(e: &Option<Estimate>) -> String {
    opt(e.map(|e| e.median))
}

fn row(c: &CaseResult) -> Vec<String> {
    let s = &c.summary;
    let ran = !c.repetitions.is_empty();
    let count_if_ran = |n: u64| if ran { n.to_string() } else { String::new() };
    vec![
        c.id.clone(),
        kind_name(c.kind).to_string(),
        c.pattern.clone(),
        c.transport.to_string(),
        c.message_size.to_string(),
        c.count.to_string(),
        opt(c.rate),
        loop_name(c.loop_mode).to_string(),
        median(&s.latency_us),
        opt(s.latency_us.map(|e| e.ci_low)),
        opt(s.latency_us.map(|e| e.ci_high)),
        median(&s.p50_us),
        median(&s.p99_us),
        median(&s.msgs_per_sec),
        opt(s.msgs_per_sec.map(|e| e.ci_low)),
        opt(s.msgs_per_sec.map(|e| e.ci_high)),
        median(&s.mbit_per_sec),
        median(&s.send_msgs_per_sec),
        count_if_ran(s.lost),
        count_if_ran(s.duplicated),
        count_if_ran(s.reordered),
        opt(c.floor.as_ref().map(|f| f.latency_us)),
        c.warnings.join("; "),
        c.error.clone().unwrap_or_default(),
    ]
}

impl Reporter for Csv {
    fn render(&self, run: &RunResult) -> String {
        let mut out = COLUMNS.join(",");
        out.push('\n');
        for c in &run.cases {
            let fields: Vec<String> = row(c).iter().map(|f| field(f)).collect();
            out.push_str(&fields.join(","));
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(field(""), "");
    }
}
