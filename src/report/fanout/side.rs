//! `fanout --impl A,B[,...]`: the same fan-out with each implementation's subscribers, the
//! figures side by side (medians over the rounds with 95% intervals) and the ratios to the
//! first implementation, as text or as JSON.

use super::text;
use crate::report::estimate::ratio_ci;
use crate::scenarios::fanout::FanoutReport;
use crate::stats::estimate;
use crate::units::value;
use std::fmt::Write;

/// The figures of one fan-out run that `--impl` compares, in the order of [`FIGURES`].
pub type Figures = [f64; 5];

/// What each of [`Figures`] is, as the table's rows name it.
const FIGURES: [&str; 5] = [
    "latency mean (us)",
    "latency p99 (us)",
    "subscriber CPU per message (us)",
    "peak RSS per process (MiB)",
    "delivered (%)",
];

/// The figures of one run: mean and p99 latency (us), subscriber CPU per delivered message
/// (us), the largest peak RSS of a process (MiB), and the share delivered (%).
fn figures(r: &FanoutReport) -> Figures {
    let cpu_ms: f64 = r
        .process_list
        .iter()
        .map(|p| p.usage.cpu_user_ms + p.usage.cpu_sys_ms)
        .sum();
    let rss = r
        .process_list
        .iter()
        .map(|p| p.usage.peak_rss_kib)
        .max()
        .unwrap_or(0);
    let received = r.delivery.received.max(1) as f64;
    [
        r.latency.mean_ns / 1000.0,
        r.latency.p99_ns as f64 / 1000.0,
        // Subscriber CPU per delivered message, us.
        cpu_ms * 1000.0 / received,
        rss as f64 / 1024.0,
        r.delivery.received as f64 / (r.subscribers * r.expected_per_subscriber).max(1) as f64
            * 100.0,
    ]
}

/// The runs of a side-by-side comparison as they come in: per implementation, its label,
/// the figures of each round and the report of the last.
pub struct SideBySide {
    impls: Vec<String>,
    rounds: u32,
    labels: Vec<String>,
    runs: Vec<Vec<Figures>>,
    last: Vec<Option<FanoutReport>>,
}

impl SideBySide {
    /// An empty comparison of `impls` (the first is the base of the ratios) over `rounds`.
    pub fn new(impls: &[String], rounds: u32) -> SideBySide {
        SideBySide {
            impls: impls.to_vec(),
            rounds,
            labels: impls.to_vec(),
            runs: vec![Vec::new(); impls.len()],
            last: vec![None; impls.len()],
        }
    }

    /// One round's run of the `k`th implementation.
    pub fn add(&mut self, k: usize, r: FanoutReport) {
        if let Some(l) = &r.implementation {
            self.labels[k] = format!("{}: {l}", self.impls[k]);
        }
        self.runs[k].push(figures(&r));
        self.last[k] = Some(r);
    }

    /// The comparison as one line of JSON: per implementation its name, label, the figures
    /// of each round and the last round's report.
    pub fn json(&self) -> String {
        let v: Vec<serde_json::Value> = self
            .impls
            .iter()
            .enumerate()
            .map(|(k, n)| {
                serde_json::json!({
                    "impl": n,
                    "label": self.labels[k],
                    "rounds": self.runs[k].iter().map(|f| serde_json::json!({
                        "latency_mean_us": f[0], "latency_p99_us": f[1],
                        "subscriber_cpu_us_per_msg": f[2], "peak_rss_mib": f[3],
                        "delivered_pct": f[4]})).collect::<Vec<_>>(),
                    "report": self.last[k],
                })
            })
            .collect();
        super::super::json::envelope::<(), _>(
            "fanout-comparison",
            None,
            None,
            &serde_json::json!({ "implementations": v }),
            false,
        )
    }

    /// The comparison as text: each implementation's last report, then the table of
    /// medians with their intervals and the ratios to the first implementation.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for r in self.last.iter().flatten() {
            out.push_str(&text(r));
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "Side by side ({} round{}, medians with 95% intervals; ratios to {}):",
            self.rounds,
            if self.rounds == 1 { "" } else { "s" },
            self.impls[0]
        );
        for l in &self.labels {
            let _ = writeln!(out, "  {l}");
        }
        let mut head = format!("  {:<32}", "");
        for n in &self.impls {
            let _ = write!(head, " | {n:>28}");
        }
        let _ = writeln!(out, "{head}");
        for (f, what) in FIGURES.iter().enumerate() {
            let _ = writeln!(out, "{}", self.row(f, what));
        }
        out
    }

    /// The row of figure `f`: each implementation's median, and its ratio to the first's
    /// (not for the share delivered).
    fn row(&self, f: usize, what: &str) -> String {
        let runs = &self.runs;
        let mut line = format!("  {what:<32}");
        let base = estimate(&runs[0].iter().map(|x| x[f]).collect::<Vec<_>>());
        for run in runs {
            let e = estimate(&run.iter().map(|x| x[f]).collect::<Vec<_>>());
            let cell = match (&e, &base) {
                (Some(e), Some(b)) if !std::ptr::eq(run, &runs[0]) && f < 4 => {
                    format!("{} x{}", value(e.median), ratio_ci(e, b))
                }
                (Some(e), _) => value(e.median),
                (None, _) => "-".into(),
            };
            let _ = write!(line, " | {cell:>28}");
        }
        line
    }
}
