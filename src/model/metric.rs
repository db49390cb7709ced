//! The one table of a case's figures: each summary estimate with its name (the field of
//! [`CaseSummary`] and of the JSON), unit, which way is better, its label in the report's
//! grids, its CSV columns, and whether `compare` judges it. The CSV report, the grids and
//! `compare` iterate this table; where they differ on purpose (a figure not compared, not in
//! the CSV, not a grid row) that is a field of its row.

use super::{CaseSummary, Estimate};
use serde::Serialize;

/// A figure of a case's summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Mean latency, us (lower is better).
    LatencyUs,
    /// Median latency, us (lower is better).
    P50Us,
    /// 99th percentile latency, us (lower is better).
    P99Us,
    /// Delivered messages per second (higher is better).
    MsgsPerSec,
    /// Delivered megabits per second (higher is better).
    MbitPerSec,
    /// The sender's messages per second (higher is better).
    SendMsgsPerSec,
    /// Open loop: median send delay, us (lower is better).
    SendDelayP50Us,
}

/// Everything the reports need to know of one [`Metric`].
pub struct MetricRow {
    /// The metric.
    pub metric: Metric,
    /// The field name in [`CaseSummary`] (and in the JSON report).
    pub name: &'static str,
    /// Its unit.
    pub unit: &'static str,
    /// Whether a smaller value is the better one.
    pub lower_is_better: bool,
    /// A one-way time: not shown when it was read across clocks that differ.
    pub one_way: bool,
    /// Written as a whole number in the grids (a rate of messages).
    pub whole: bool,
    /// Its row label in the report's grids; None when the grids have no such row.
    pub label: Option<&'static str>,
    /// A grid row shown even when no case has a value.
    pub always_in_grid: bool,
    /// Its CSV columns: none, the median alone, or the median and its 95% interval.
    pub csv: &'static [&'static str],
    /// Whether `compare` judges it.
    pub compared: bool,
    /// The estimate in a case summary, if the case has one.
    pub of: fn(&CaseSummary) -> Option<Estimate>,
}

/// The table, in the order the CSV columns and the comparison list the figures.
pub const METRICS: [MetricRow; 7] = [
    MetricRow {
        metric: Metric::LatencyUs,
        name: "latency_us",
        unit: "us",
        lower_is_better: true,
        one_way: true,
        whole: false,
        label: Some("latency (us)"),
        always_in_grid: true,
        csv: &[
            "latency_us_median",
            "latency_us_ci_low",
            "latency_us_ci_high",
        ],
        compared: true,
        of: |s| s.latency_us,
    },
    MetricRow {
        metric: Metric::P50Us,
        name: "p50_us",
        unit: "us",
        lower_is_better: true,
        one_way: true,
        whole: false,
        label: None,
        always_in_grid: false,
        csv: &["p50_us"],
        compared: false,
        of: |s| s.p50_us,
    },
    MetricRow {
        metric: Metric::P99Us,
        name: "p99_us",
        unit: "us",
        lower_is_better: true,
        one_way: true,
        whole: false,
        label: Some("p99 (us)"),
        always_in_grid: false,
        csv: &["p99_us"],
        compared: true,
        of: |s| s.p99_us,
    },
    MetricRow {
        metric: Metric::MsgsPerSec,
        name: "msgs_per_sec",
        unit: "msg/s",
        lower_is_better: false,
        one_way: false,
        whole: true,
        label: Some("msg/s"),
        always_in_grid: true,
        csv: &[
            "msgs_per_sec_median",
            "msgs_per_sec_ci_low",
            "msgs_per_sec_ci_high",
        ],
        compared: true,
        of: |s| s.msgs_per_sec,
    },
    MetricRow {
        metric: Metric::MbitPerSec,
        name: "mbit_per_sec",
        unit: "Mbit/s",
        lower_is_better: false,
        one_way: false,
        whole: false,
        label: Some("Mbit/s"),
        always_in_grid: true,
        csv: &["mbit_per_sec"],
        compared: true,
        of: |s| s.mbit_per_sec,
    },
    MetricRow {
        metric: Metric::SendMsgsPerSec,
        name: "send_msgs_per_sec",
        unit: "msg/s",
        lower_is_better: false,
        one_way: false,
        whole: true,
        label: Some("send msg/s"),
        always_in_grid: false,
        csv: &["send_msgs_per_sec"],
        compared: false,
        of: |s| s.send_msgs_per_sec,
    },
    MetricRow {
        metric: Metric::SendDelayP50Us,
        name: "send_delay_p50_us",
        unit: "us",
        lower_is_better: true,
        one_way: false,
        whole: false,
        label: Some("send delay p50 (us)"),
        always_in_grid: false,
        csv: &[],
        compared: false,
        of: |s| s.send_delay_p50_us,
    },
];

impl Metric {
    /// Every metric, in the table's order.
    pub const ALL: [Metric; 7] = [
        Metric::LatencyUs,
        Metric::P50Us,
        Metric::P99Us,
        Metric::MsgsPerSec,
        Metric::MbitPerSec,
        Metric::SendMsgsPerSec,
        Metric::SendDelayP50Us,
    ];

    /// Its row of the table.
    pub fn row(self) -> &'static MetricRow {
        &METRICS[self as usize]
    }

    /// The metrics `compare` judges, in the order it lists them.
    pub fn compared() -> impl Iterator<Item = Metric> {
        METRICS.iter().filter(|r| r.compared).map(|r| r.metric)
    }

    /// The field name in [`CaseSummary`] (and in the JSON report).
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// Whether a smaller value is the better one.
    pub fn lower_is_better(self) -> bool {
        self.row().lower_is_better
    }

    /// The estimate of this metric in a case summary, if the case has one.
    pub fn of(self, s: &CaseSummary) -> Option<Estimate> {
        (self.row().of)(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_the_order_of_the_enum() {
        for (k, m) in Metric::ALL.iter().enumerate() {
            assert_eq!(METRICS[k].metric, *m);
            assert_eq!(m.row().metric, *m);
        }
        let compared: Vec<_> = Metric::compared().map(Metric::name).collect();
        assert_eq!(
            compared,
            ["latency_us", "p99_us", "msgs_per_sec", "mbit_per_sec"]
        );
    }
}
