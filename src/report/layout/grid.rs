//! The grid of a group: one column per message size, one row per figure the group's kind
//! has.

use super::groups::{counts_note, groups, kind_name, Group};
use crate::model::{CaseResult, Estimate, Kind, Metric, RunResult};
use crate::report::estimate;
use crate::units::{self, grouped};
use std::ops::Range;

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
    /// A matrix's row groups, in order: a name (the pattern) and how many of the rows
    /// that follow are its. Empty for a grid of one group.
    pub row_groups: Vec<(String, usize)>,
}

/// What a matrix's figure labels are indented by under their pattern's name (text).
pub const ROW_INDENT: &str = "  ";

impl Grid {
    /// The row labels as the text report shows them, with the names of a matrix's row
    /// groups on lines of their own (`None` for a name line, whose cells are empty).
    pub fn labelled_rows(&self) -> Vec<(String, Option<&Vec<String>>)> {
        if self.row_groups.is_empty() {
            return self
                .rows
                .iter()
                .map(|(l, c)| (l.clone(), Some(c)))
                .collect();
        }
        let mut out = Vec::new();
        let mut rows = self.rows.iter();
        for (name, n) in &self.row_groups {
            out.push((name.clone(), None));
            for (l, c) in rows.by_ref().take(*n) {
                out.push((format!("{ROW_INDENT}{l}"), Some(c)));
            }
        }
        out
    }

    /// The columns in blocks of as many as fit in `room`, each block at least one column,
    /// in order: how a wide grid is continued in further tables, each with the row labels
    /// and its own header. `width` measures a text; every column costs `sep` beside its
    /// widest text, and the label column comes first in every block.
    pub fn blocks(&self, room: f64, sep: f64, width: impl Fn(&str) -> f64) -> Vec<Range<usize>> {
        // A matrix's figure labels are indented under their pattern's name.
        let indent = if self.row_groups.is_empty() {
            0.0
        } else {
            width(ROW_INDENT)
        };
        let label_w = self
            .rows
            .iter()
            .map(|(l, _)| indent + width(l))
            .chain(self.row_groups.iter().map(|(n, _)| width(n)))
            .chain([width(&self.corner)])
            .fold(0.0, f64::max);
        let col_w: Vec<f64> = (0..self.columns.len())
            .map(|i| {
                self.rows
                    .iter()
                    .map(|(_, cells)| cells.get(i).map_or(0.0, |c| width(c)))
                    .chain([width(&self.columns[i])])
                    .fold(0.0, f64::max)
            })
            .collect();
        let mut out = Vec::new();
        let mut start = 0;
        while start < col_w.len() {
            let mut end = start;
            let mut w = label_w;
            while end < col_w.len() && (end == start || w + sep + col_w[end] <= room) {
                w += sep + col_w[end];
                end += 1;
            }
            out.push(start..end);
            start = end;
        }
        out
    }
}

/// The rows a grid can have: a figure of the metric table (its label, whether it is always
/// shown and how it is written come from there), the delivered rate of a latency case as
/// round trips, the raw-socket floor, and the messages lost.
#[derive(Clone, Copy, PartialEq)]
enum Line {
    Figure(Metric),
    RoundTrips,
    Floor,
    Lost,
}

impl Line {
    fn label(self) -> &'static str {
        match self {
            Line::Figure(m) => m.row().label.expect("a grid row has a label"),
            Line::RoundTrips => "round trips/s",
            Line::Floor => "raw socket floor (us)",
            Line::Lost => "lost",
        }
    }

    /// Latency, the delivered rate and Mbit/s are always shown; the others only when some
    /// case has a value.
    fn always(self) -> bool {
        match self {
            Line::Figure(m) => m.row().always_in_grid,
            Line::RoundTrips => true,
            Line::Floor | Line::Lost => false,
        }
    }

    fn cell(self, c: &CaseResult) -> Option<String> {
        let s = &c.summary;
        match self {
            Line::Figure(m) => figure(m, c),
            Line::RoundTrips => figure(Metric::MsgsPerSec, c),
            Line::Floor => c.floor.as_ref().map(|f| units::value(f.latency_us)),
            Line::Lost => (!c.repetitions.is_empty()).then(|| grouped(s.lost)),
        }
    }
}

/// A figure's cell: its estimate, written whole for rates of messages; a one-way figure
/// from clocks that differ is not shown (the warnings say why).
fn figure(m: Metric, c: &CaseResult) -> Option<String> {
    let row = m.row();
    if row.one_way && super::hides_latency(c) {
        return Some(super::CLOCKS_DIFFER.to_string());
    }
    let write: fn(&Estimate) -> String = if row.whole {
        estimate::estimate_whole
    } else {
        estimate::estimate_value
    };
    (row.of)(&c.summary).as_ref().map(write)
}

fn lines(g: &Group<'_>) -> &'static [Line] {
    use Line::{Floor, Lost, RoundTrips};
    const LATENCY: Line = Line::Figure(Metric::LatencyUs);
    const P99: Line = Line::Figure(Metric::P99Us);
    const MSGS: Line = Line::Figure(Metric::MsgsPerSec);
    const MBIT: Line = Line::Figure(Metric::MbitPerSec);
    const SEND_MSGS: Line = Line::Figure(Metric::SendMsgsPerSec);
    const SEND_DELAY: Line = Line::Figure(Metric::SendDelayP50Us);
    match (g.open_rate.is_some(), g.kind) {
        (false, Kind::Latency) => &[LATENCY, P99, RoundTrips, MBIT, Floor],
        (false, Kind::Throughput) => &[LATENCY, MSGS, MBIT, SEND_MSGS, Lost],
        // Floor: a fan-out (open loop on ticks) with its raw-socket floor (`fanout --floor`).
        (true, _) => &[LATENCY, P99, MSGS, MBIT, SEND_MSGS, SEND_DELAY, Lost, Floor],
    }
}

/// The grid of one group. A cell without a value reads `failed` if its case failed and
/// `-` otherwise.
pub fn grid(g: &Group<'_>) -> Grid {
    let columns = g.cases.iter().map(|c| c.message_size.to_string()).collect();
    let cases: Vec<Option<&CaseResult>> = g.cases.iter().map(|&c| Some(c)).collect();
    let rows = lines(g)
        .iter()
        .filter_map(|&line| Some((line.label().to_string(), cells(line, &cases)?)))
        .collect();
    Grid {
        title: g.title(),
        corner: "size (B)".to_string(),
        columns,
        rows,
        row_groups: Vec::new(),
    }
}

/// The cells of `line` for some cases, `None` where there is no case: `-` when the case or
/// its value is missing, `failed` when the case failed.
fn cells(line: Line, cases: &[Option<&CaseResult>]) -> Option<Vec<String>> {
    let values: Vec<Option<String>> = cases.iter().map(|c| c.and_then(|c| line.cell(c))).collect();
    if !line.always() && values.iter().all(Option::is_none) {
        return None;
    }
    Some(
        values
            .into_iter()
            .zip(cases)
            .map(|(v, c)| match (v, c.and_then(|c| c.error.as_ref())) {
                (Some(v), _) => v,
                (None, Some(_)) => "failed".to_string(),
                (None, None) => "-".to_string(),
            })
            .collect(),
    )
}

/// Groups of one kind and load that are worth a pattern x transport matrix: at least two,
/// each a single case, all of the same message size (the shape of `run --quick`).
fn matrix_worthy(gs: &[&Group<'_>]) -> bool {
    gs.len() >= 2
        && gs.iter().all(|g| g.cases.len() == 1)
        && gs
            .iter()
            .all(|g| g.cases[0].message_size == gs[0].cases[0].message_size)
}

/// One table for groups of one kind, load and size: a column per transport, and per
/// pattern a block of rows (its figures), as `run --quick` is best read.
fn matrix(gs: &[&Group<'_>]) -> Grid {
    let mut transports = Vec::new();
    let mut patterns: Vec<&str> = Vec::new();
    for g in gs {
        if !transports.contains(&g.transport) {
            transports.push(g.transport);
        }
        if !patterns.contains(&g.pattern) {
            patterns.push(g.pattern);
        }
    }
    let mut rows = Vec::new();
    let mut row_groups = Vec::new();
    for p in &patterns {
        let cases: Vec<Option<&CaseResult>> = transports
            .iter()
            .map(|t| {
                gs.iter()
                    .find(|g| g.pattern == *p && g.transport == *t)
                    .map(|g| g.cases[0])
            })
            .collect();
        let before = rows.len();
        for &line in lines(gs[0]) {
            if let Some(c) = cells(line, &cases) {
                rows.push((line.label().to_string(), c));
            }
        }
        row_groups.push((p.to_string(), rows.len() - before));
    }
    let all: Vec<&CaseResult> = gs.iter().map(|g| g.cases[0]).collect();
    let names: Vec<String> = transports.iter().map(|t| t.to_string()).collect();
    Grid {
        title: format!(
            "{} at {} over {}: {}{}",
            kind_name(gs[0].kind),
            units::bytes(all[0].message_size as u64),
            names.join(", "),
            gs[0].load(),
            counts_note(gs[0].kind, &all)
        ),
        corner: "pattern / figure".to_string(),
        columns: names,
        rows,
        row_groups,
    }
}

/// The tables of a run with the cases each shows, in the order of their first case: a
/// grid per group, except that the groups of one kind and load that each hold one case of
/// the same size (the quick suite) share a pattern x transport matrix.
pub fn tables(run: &RunResult) -> Vec<(Grid, Vec<&CaseResult>)> {
    let gs = groups(run);
    let same_load = |a: &Group<'_>, b: &Group<'_>| a.kind == b.kind && a.load() == b.load();
    let mut out = Vec::new();
    let mut done = vec![false; gs.len()];
    for i in 0..gs.len() {
        if done[i] {
            continue;
        }
        // Every group of this kind and load, so a matrix is all of them or none.
        let peers: Vec<usize> = (0..gs.len())
            .filter(|&j| same_load(&gs[i], &gs[j]))
            .collect();
        let members: Vec<&Group<'_>> = peers.iter().map(|&j| &gs[j]).collect();
        if matrix_worthy(&members) {
            for &j in &peers {
                done[j] = true;
            }
            let cases = members.iter().map(|g| g.cases[0]).collect();
            out.push((matrix(&members), cases));
        } else {
            done[i] = true;
            out.push((grid(&gs[i]), gs[i].cases.clone()));
        }
    }
    out
}

/// All tables of a run (see [`tables`]).
pub fn grids(run: &RunResult) -> Vec<Grid> {
    tables(run).into_iter().map(|(g, _)| g).collect()
}
