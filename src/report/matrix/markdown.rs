//! The matrix in Markdown, short enough for a GitHub comment (under [`LIMIT`] characters
//! for ten implementations, three patterns, two transports and two sizes): per pattern a
//! line of the baselines and the best and worst pairs, then one grid per transport and
//! size whose cells hold the ratio or the mark (FAIL, loss, not run) with a numbered
//! reason; the intervals are in the HTML and JSON reports.

use super::{base_name, mark};
use crate::scenarios::matrix::{Cell, Grid, Matrix, Status};
use crate::units::value;
use std::fmt::Write;

/// The most characters the report should have: a GitHub comment holds 65,536.
pub const LIMIT: usize = 60_000;

/// Reasons listed per pattern, and the longest a reason is written.
const REASONS: usize = 24;
const REASON_CHARS: usize = 200;

/// Markdown's special characters in a cell or a line, escaped (`>` only starts a quote at
/// the start of a line, which no escaped text is).
fn md(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '|' | '*' | '_' | '`' | '[' | ']' | '<' | '\\') {
            out.push('\\');
        }
        if c == '\n' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// A cell: its ratio (two decimals), or its figure without a baseline, with its mark.
fn cell_text(c: &Cell, notes: &mut Vec<String>) -> String {
    let ratio = match (c.ratio, c.ratio_without_interval, &c.value) {
        (Some((r, _, _)), _, _) | (None, Some(r), _) => Some(format!("{r:.2}")),
        (None, None, Some(v)) => Some(format!("{} abs", value(v.median))),
        _ => None,
    };
    match (&c.status, ratio) {
        (Status::Works, Some(r)) => r,
        (Status::Lossy(_), Some(r)) => {
            let m = mark(c, notes);
            format!("{r} {m}")
        }
        _ => mark(c, notes),
    }
}

/// The best and the worst working pair of a pattern (by ratio, lower latency or higher
/// msg/s is better), as a sentence.
fn extremes(grids: &[&Grid]) -> String {
    let latency = grids[0].pattern == "reqrep";
    let better = |r: f64| if latency { 1.0 / r } else { r };
    let mut ranked: Vec<(f64, String)> = Vec::new();
    for g in grids {
        for c in &g.cells {
            if let (Status::Works, Some((r, _, _))) = (&c.status, c.ratio) {
                if c.client == c.server && g.baseline.is_some() && r == 1.0 {
                    continue;
                }
                ranked.push((
                    r,
                    format!("{}>{} ({} {} B)", c.client, c.server, g.transport, g.size),
                ));
            }
        }
    }
    ranked.sort_by(|a, b| better(b.0).total_cmp(&better(a.0)));
    match (ranked.first(), ranked.last()) {
        (Some(best), Some(worst)) if ranked.len() > 1 => format!(
            "Best pair {} at {:.2}, worst working pair {} at {:.2}.",
            md(&best.1),
            best.0,
            md(&worst.1),
            worst.0
        ),
        _ => String::new(),
    }
}

/// Counts of the pattern's cells: works, lost, failed, not run.
fn counts(grids: &[&Grid]) -> String {
    let n = |f: fn(&Status) -> bool| {
        grids
            .iter()
            .flat_map(|g| &g.cells)
            .filter(|c| f(&c.status))
            .count()
    };
    format!(
        "{} pairs work, {} lost messages, {} failed, {} not run.",
        n(|s| matches!(s, Status::Works)),
        n(|s| matches!(s, Status::Lossy(_))),
        n(|s| matches!(s, Status::Fails(_))),
        n(|s| matches!(s, Status::NotRun(_)))
    )
}

/// The Markdown report.
pub fn markdown(m: &Matrix) -> String {
    let mut out = format!("# zmqperf matrix {}\n\n", md(&m.run_id));
    let _ = writeln!(
        out,
        "{} passes, pairs interleaved. Each cell is the pair's figure over {}'s from the same \
         passes (the 95% intervals are in `--format html` and `--format json`).\n",
        m.passes,
        base_name(m)
    );
    for i in &m.impls {
        let _ = writeln!(out, "- **{}**: {}", md(&i.name), md(&i.label));
    }
    let mut patterns: Vec<&str> = Vec::new();
    for g in &m.grids {
        if !patterns.contains(&g.pattern.as_str()) {
            patterns.push(&g.pattern);
        }
    }
    for p in patterns {
        let grids: Vec<&Grid> = m.grids.iter().filter(|g| g.pattern == p).collect();
        section(&mut out, m, &grids);
    }
    out
}

/// One pattern: its heading, its baselines and extremes, its grids and its reasons.
fn section(out: &mut String, m: &Matrix, grids: &[&Grid]) {
    let latency = grids[0].pattern == "reqrep";
    let (what, way) = if latency {
        ("REQ/REP latency, client x server", "above 1 is slower")
    } else if grids[0].pattern == "pushpull" {
        (
            "PUSH/PULL throughput, sender x receiver",
            "below 1 is slower",
        )
    } else {
        (
            "PUB/SUB throughput, publisher x subscriber",
            "below 1 is slower",
        )
    };
    let _ = writeln!(
        out,
        "\n## {what}\n\nRatio of {} to {}'s: {way}. {} {}",
        if latency { "latency" } else { "msg/s" },
        base_name(m),
        counts(grids),
        extremes(grids)
    );
    let bases: Vec<String> = grids
        .iter()
        .map(|g| match &g.baseline {
            Some(b) => format!(
                "{} {} B: {} {}",
                g.transport,
                g.size,
                value(b.median),
                g.unit
            ),
            None => format!("{} {} B: did not run", g.transport, g.size),
        })
        .collect();
    let _ = writeln!(out, "\n{}: {}.", base_name(m), bases.join("; "));
    let mut notes = Vec::new();
    let n = m.impls.len();
    for g in grids {
        let _ = write!(out, "\n| {} {} B |", g.transport, g.size);
        for i in &m.impls {
            let _ = write!(out, " {} |", md(&i.name));
        }
        out.push_str("\n|---|");
        out.push_str(&"--:|".repeat(n));
        out.push('\n');
        for (a, i) in m.impls.iter().enumerate() {
            let _ = write!(out, "| **{}** |", md(&i.name));
            for c in g.cells.iter().skip(a * n).take(n) {
                let _ = write!(out, " {} |", md(&cell_text(c, &mut notes)));
            }
            out.push('\n');
        }
    }
    if !notes.is_empty() {
        out.push('\n');
        for (k, note) in notes.iter().take(REASONS).enumerate() {
            let short: String = if note.chars().count() > REASON_CHARS {
                let cut: String = note.chars().take(REASON_CHARS - 1).collect();
                format!("{cut}\u{2026}")
            } else {
                note.clone()
            };
            let _ = writeln!(out, "{}. {}", k + 1, md(&short));
        }
        if notes.len() > REASONS {
            let _ = writeln!(
                out,
                "\n...and {} more reasons (`--format json` lists every one).",
                notes.len() - REASONS
            );
        }
    }
}
