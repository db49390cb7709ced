//! The grid of a group: one column per message size, one row per figure the group's kind
//! has.

use super::groups::{groups, Group};
use crate::model::{CaseResult, Estimate, Kind, RunResult};
use crate::report::numbers::{self, grouped};

/// A table of text cells: a corner label, column heads, and labelled rows.
pub struct Grid {
    /// The group's heading.
    pub title: String,
    /// Label of the header row (`size (B)`).
    pub corner: String,
    /// Column heads (message sizes).
    pub columns: Vec<String>,
    /// Rows: a label and one cell per column.
    pub rows: Vec<(String, Vec<String>)>,
}

/// The rows a grid can have.
#[derive(Clone, Copy, PartialEq)]
enum Line {
    Latency,
    P99,
    Msgs,
    RoundTrips,
    Mbit,
    Floor,
    SendMsgs,
    SendDelay,
    Lost,
}

impl Line {
    fn label(self) -> &'static str {
        match self {
            Line::Latency => "latency (us)",
            Line::P99 => "p99 (us)",
            Line::Msgs => "msg/s",
            Line::RoundTrips => "round trips/s",
            Line::Mbit => "Mbit/s",
            Line::Floor => "raw socket floor (us)",
            Line::SendMsgs => "send msg/s",
            Line::SendDelay => "send delay p50 (us)",
            Line::Lost => "lost",
        }
    }

    /// The first three rows are always shown; the others only when some case has a value.
    fn always(self) -> bool {
        matches!(
            self,
            Line::Latency | Line::Msgs | Line::RoundTrips | Line::Mbit
        )
    }

    fn cell(self, c: &CaseResult) -> Option<String> {
        let s = &c.summary;
        let est = |e: &Option<Estimate>, f: fn(&Estimate) -> String| e.as_ref().map(f);
        match self {
            Line::Latency => est(&s.latency_us, numbers::estimate_value),
            Line::P99 => est(&s.p99_us, numbers::estimate_value),
            Line::Msgs | Line::RoundTrips => est(&s.msgs_per_sec, numbers::estimate_whole),
            Line::Mbit => est(&s.mbit_per_sec, numbers::estimate_value),
            Line::Floor => c.floor.as_ref().map(|f| numbers::value(f.latency_us)),
            Line::SendMsgs => est(&s.send_msgs_per_sec, numbers::estimate_whole),
            Line::SendDelay => est(&s.send_delay_p50_us, numbers::estimate_value),
            Line::Lost => (!c.repetitions.is_empty()).then(|| grouped(s.lost)),
        }
    }
}

fn lines(g: &Group<'_>) -> &'static [Line] {
    use Line::*;
    match (g.open_rate.is_some(), g.kind) {
        (false, Kind::Latency) => &[Latency, P99, RoundTrips, Mbit, Floor],
        (false, Kind::Throughput) => &[Latency, Msgs, Mbit, SendMsgs, Lost],
        // Floor: a fan-out (open loop on ticks) with its raw-socket floor (`fanout --floor`).
        (true, _) => &[Latency, P99, Msgs, Mbit, SendMsgs, SendDelay, Lost, Floor],
    }
}

/// The grid of one group. A cell without a value reads `failed` if its case failed and
/// `-` otherwise.
pub fn grid(g: &Group<'_>) -> Grid {
    let columns = g.cases.iter().map(|c| c.message_size.to_string()).collect();
    let mut rows = Vec::new();
    for &line in lines(g) {
        let cells: Vec<Option<String>> = g.cases.iter().map(|c| line.cell(c)).collect();
        if !line.always() && cells.iter().all(Option::is_none) {
            continue;
        }
        let cells = cells
            .into_iter()
            .zip(&g.cases)
            .map(|(cell, c)| match (cell, &c.error) {
                (Some(v), _) => v,
                (None, Some(_)) => "failed".to_string(),
                (None, None) => "-".to_string(),
            })
            .collect();
        rows.push((line.label().to_string(), cells));
    }
    Grid {
        title: g.title(),
        corner: "size (B)".to_string(),
        columns,
        rows,
    }
}

/// All grids of a run, one per group.
pub fn grids(run: &RunResult) -> Vec<Grid> {
    groups(run).iter().map(grid).collect()
}
