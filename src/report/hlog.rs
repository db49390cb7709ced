//! The HdrHistogram interval log of a run (`--format hlog`): HdrHistogram's own log format
//! (version 1.3), which its tools read (HistogramLogReader in Java, Python, Go and C, and
//! HistogramLogAnalyzer), as a time series of the run's latency histograms. One line per
//! case and repetition, in the order they ran, tagged with the case's id: when the
//! repetition's stream began (seconds after the run's first one), how long it lasted, its
//! largest latency (ms) and its histogram in the compressed form of the JSON's `hdr`, in ns.

use super::Reporter;
use crate::model::{Repetition, RunResult};
use crate::stats::latency::encode_hdr;
use std::fmt::Write as _;

/// Renders a run as an HdrHistogram interval log.
pub struct Hlog;

/// The span of a repetition's stream on its clock (ns): the receiver's, or else the
/// sender's.
fn span(r: &Repetition) -> Option<(u64, u64)> {
    r.delivered
        .as_ref()
        .or(r.send.as_ref())
        .filter(|t| t.end_ns >= t.start_ns && t.start_ns > 0)
        .map(|t| (t.start_ns, t.end_ns))
}

impl Reporter for Hlog {
    fn render(&self, run: &RunResult) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "#[Logged with zmqperf {}]", crate::VERSION);
        let _ = writeln!(out, "#[Histogram log format version 1.3]");
        let start = crate::clock::parse_rfc3339(&run.started_at)
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        if let Some(s) = start {
            let _ = writeln!(
                out,
                "#[StartTime: {:.3} (seconds since epoch), {}]",
                s.as_secs_f64(),
                run.started_at
            );
        }
        let _ = writeln!(
            out,
            "#[zmqperf run {}: one interval per case and repetition, tagged with the case; values in ns, Interval_Max in ms]",
            run.run_id
        );
        let _ = writeln!(out, "#[MaxValueDivisor: 1000000.000]");
        let _ = writeln!(
            out,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        );
        let first = run
            .cases
            .iter()
            .flat_map(|c| &c.repetitions)
            .filter_map(span)
            .map(|(s, _)| s)
            .min();
        // A repetition without a span follows the one before it.
        let mut at = 0.0f64;
        for c in &run.cases {
            for r in &c.repetitions {
                let Some(h) = r.latency_histogram.as_ref().filter(|h| h.count() > 0) else {
                    continue;
                };
                let (from, length) = match (span(r), first) {
                    (Some((s, e)), Some(f)) => ((s - f) as f64 / 1e9, (e - s) as f64 / 1e9),
                    _ => (at, 0.0),
                };
                at = from + length;
                let tag: String =
                    c.id.chars()
                        .map(|ch| {
                            if matches!(ch, ',' | ' ' | '\r' | '\n') {
                                '_'
                            } else {
                                ch
                            }
                        })
                        .collect();
                let _ = writeln!(
                    out,
                    "Tag={tag},{from:.3},{length:.3},{:.3},{}",
                    h.quantile(1.0) as f64 / 1e6,
                    encode_hdr(&h.hdr())
                );
            }
        }
        out
    }
}
