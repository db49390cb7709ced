//! The bindings matrix as a person reads it: for each pattern, transport and size, the
//! interop grid (works, loses, fails: the reasons listed below it) and the performance grid
//! (each pair's figure over C-C's, with the 95% interval), in text, Markdown, HTML heat
//! maps or JSON.

mod html;
mod markdown;

use crate::scenarios::matrix::{Cell, Grid, Matrix, Status};
use crate::units::value;
pub use html::html;
pub use markdown::{markdown, LIMIT as MARKDOWN_LIMIT};
use std::fmt::Write;

/// The short mark of a cell in the interop grid; reasons are numbered in `notes`.
fn mark(c: &Cell, notes: &mut Vec<String>) -> String {
    let mut note = |why: &str| {
        let k = match notes.iter().position(|n| n == why) {
            Some(k) => k,
            None => {
                notes.push(why.to_string());
                notes.len() - 1
            }
        };
        k + 1
    };
    match &c.status {
        Status::Works => "ok".into(),
        Status::Lossy(why) => format!("loss [{}]", note(why)),
        Status::Fails(why) => match c.failed_passes {
            Some((failed, run)) => format!("FAIL {failed} of {run} [{}]", note(why)),
            None => format!("FAIL [{}]", note(why)),
        },
        Status::NotRun(why) => format!("- [{}]", note(why)),
    }
}

fn ratio_text(c: &Cell) -> String {
    match (c.ratio, c.ratio_without_interval) {
        (Some((r, lo, hi)), _) => format!("{r:.2} ({}-{})", two_digits(lo), two_digits(hi)),
        (None, Some(r)) => format!("{r:.2} (1 pass: no interval)"),
        (None, None) => match &c.status {
            Status::Works | Status::Lossy(_) => c
                .value
                .as_ref()
                .map(|v| format!("{} abs", value(v.median)))
                .unwrap_or_else(|| "-".into()),
            _ => "-".into(),
        },
    }
}

/// A ratio with two decimals, or two significant digits when it is below 0.01 (an interval
/// end is never 0 and is not shown as one).
fn two_digits(x: f64) -> String {
    if x > 0.0 && x < 0.005 {
        format!("{x:.1e}")
    } else {
        format!("{x:.2}")
    }
}

fn title(g: &Grid) -> String {
    let what = if g.pattern == "reqrep" {
        "REQ/REP latency, client x server"
    } else if g.pattern == "pushpull" {
        "PUSH/PULL throughput, sender x receiver"
    } else {
        "PUB/SUB throughput, publisher x subscriber"
    };
    format!("{} over {}, {} B", what, g.transport, g.size)
}

/// The baseline pair's name: C-C for the c peer.
fn base_name(m: &Matrix) -> String {
    if m.baseline == crate::scenarios::matrix::BASELINE {
        "C-C".into()
    } else {
        format!("{0}-{0}", m.baseline)
    }
}

fn baseline_text(m: &Matrix, g: &Grid) -> String {
    match &g.baseline {
        Some(b) => format!(
            "{}: {} {} [{}, {}]",
            base_name(m),
            value(b.median),
            g.unit,
            value(b.ci_low),
            value(b.ci_high)
        ),
        None => format!(
            "{} did not run: no ratios (set up the {} peer, or choose --baseline)",
            base_name(m),
            m.baseline
        ),
    }
}

fn direction(m: &Matrix, g: &Grid) -> String {
    if g.pattern == "reqrep" {
        format!("ratio of latency to {}'s: above 1 is slower", base_name(m))
    } else {
        format!("ratio of msg/s to {}'s: below 1 is slower", base_name(m))
    }
}

/// A grid's cell texts (client-major, n x n) as aligned text rows, the server columns in
/// blocks as wide as the width allows ([`crate::term::width`]), each block with the clients.
fn text_grid(m: &Matrix, texts: &[String]) -> String {
    text_grid_in(m, texts, crate::term::width())
}

fn text_grid_in(m: &Matrix, texts: &[String], room: usize) -> String {
    let names: Vec<&str> = m.impls.iter().map(|i| i.name.as_str()).collect();
    let n = names.len();
    let first = names.iter().map(|s| s.len()).max().unwrap_or(6).max(15);
    let mut widths = vec![0usize; n];
    for (k, w) in widths.iter_mut().enumerate() {
        *w = names[k].len();
        for a in 0..n {
            *w = (*w).max(texts[a * n + k].len());
        }
    }
    let mut blocks: Vec<std::ops::Range<usize>> = Vec::new();
    let mut start = 0;
    let mut used = 2 + first;
    for (k, w) in widths.iter().enumerate() {
        if k > start && used + 3 + w > room {
            blocks.push(start..k);
            start = k;
            used = 2 + first;
        }
        used += 3 + w;
    }
    blocks.push(start..n);
    let mut out = String::new();
    for (b, block) in blocks.into_iter().enumerate() {
        if b > 0 {
            out.push('\n');
        }
        let _ = write!(out, "  {:<first$}", "client \\ server");
        for k in block.clone() {
            let _ = write!(out, " | {:>w$}", names[k], w = widths[k]);
        }
        out.push('\n');
        for (a, name) in names.iter().enumerate() {
            let _ = write!(out, "  {name:<first$}");
            for k in block.clone() {
                let _ = write!(out, " | {:>w$}", texts[a * n + k], w = widths[k]);
            }
            out.push('\n');
        }
    }
    out
}

/// The text report.
pub fn text(m: &Matrix) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "zmqperf matrix {} ({} passes, pairs interleaved)",
        m.run_id, m.passes
    );
    for i in &m.impls {
        let _ = writeln!(out, "  {:<10} {}", i.name, i.label);
    }
    for g in &m.grids {
        let mut notes = Vec::new();
        let _ = writeln!(out, "\n{}", title(g));
        let _ = writeln!(out, "interop:");
        let marks: Vec<String> = g.cells.iter().map(|c| mark(c, &mut notes)).collect();
        out.push_str(&text_grid(m, &marks));
        for (k, n) in notes.iter().enumerate() {
            let _ = writeln!(out, "    [{}] {}", k + 1, n);
        }
        let _ = writeln!(
            out,
            "{} ({}; {}):",
            g.unit,
            baseline_text(m, g),
            direction(m, g)
        );
        let ratios: Vec<String> = g.cells.iter().map(ratio_text).collect();
        out.push_str(&text_grid(m, &ratios));
    }
    out
}

/// The line `zmqperf matrix` writes to stderr before it starts: the implementations, the
/// pairs, the passes, the cases and the pairs that cannot run.
pub fn plan_line(impls: usize, pairs: usize, passes: u32, cases: usize, skipped: usize) -> String {
    format!(
        "zmqperf: matrix of {impls} implementations, {pairs} pairs x {passes} passes = {cases} cases ({skipped} pairs not run)"
    )
}

/// The line `zmqperf matrix` writes to stderr at its end: how many pairs work, lost
/// messages, failed or were not run.
pub fn summary_line(m: &Matrix) -> String {
    let count = |f: fn(&Status) -> bool| {
        m.grids
            .iter()
            .flat_map(|g| &g.cells)
            .filter(|c| f(&c.status))
            .count()
    };
    format!(
        "zmqperf: {} pairs work, {} lost messages, {} failed, {} not run",
        count(|s| matches!(s, Status::Works)),
        count(|s| matches!(s, Status::Lossy(_))),
        count(|s| matches!(s, Status::Fails(_))),
        count(|s| matches!(s, Status::NotRun(_)))
    )
}

/// The JSON report: the matrix in the envelope (report::json), with the run it was read
/// from and its environment.
pub fn json(m: &Matrix, run: &crate::model::RunResult) -> String {
    super::json::envelope(
        "matrix",
        Some(&super::json::RunInfo::of(run)),
        Some(&run.environment),
        m,
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::Transport;
    use crate::scenarios::matrix::Impl;

    fn cell(client: &str, server: &str, status: Status) -> Cell {
        Cell {
            client: client.into(),
            server: server.into(),
            status,
            value: None,
            ratio: None,
            ratio_without_interval: None,
            failed_passes: None,
        }
    }

    /// MX2 and the ratios: a pair that failed in one pass of two reads "FAIL 1 of 2", one
    /// that failed in all "FAIL"; a ratio has two interval ends above 0, or says it has none.
    #[test]
    fn partial_failures_and_ratios_as_text() {
        let imp = |name: &str| Impl {
            name: name.into(),
            label: name.into(),
            ready: true,
            transports: vec!["tcp".into()],
        };
        let mut partly = cell(
            "zmqperf",
            "c",
            Status::Fails("failed in 1 of 2 passes (pass 1: peer c died)".into()),
        );
        partly.failed_passes = Some((1, 2));
        partly.ratio_without_interval = Some(1.25);
        let mut base = cell("c", "c", Status::Works);
        base.ratio = Some((1.0, 0.001, 4.0));
        let mut core = cell("zmqperf", "zmqperf", Status::Works);
        core.ratio = Some((0.9, 0.8, 1.1));
        let m = Matrix {
            run_id: "r".into(),
            impls: vec![imp("zmqperf"), imp("c")],
            grids: vec![Grid {
                pattern: "reqrep".into(),
                transport: Transport::Tcp,
                size: 64,
                unit: "latency (us)".into(),
                baseline: None,
                cells: vec![
                    core,
                    partly,
                    cell("c", "zmqperf", Status::Fails("pass 1: refused".into())),
                    base,
                ],
            }],
            passes: 2,
            baseline: "c".into(),
        };
        let t = text(&m);
        assert!(t.contains("FAIL 1 of 2 [1]"), "{t}");
        assert!(
            t.contains("failed in 1 of 2 passes (pass 1: peer c died)"),
            "{t}"
        );
        assert!(t.contains("FAIL [2]"), "{t}");
        assert!(t.contains("1.25 (1 pass: no interval)"), "{t}");
        assert!(t.contains("1.00 (1.0e-3-4.00)"), "{t}");
        assert!(t.contains("0.90 (0.80-1.10)"), "{t}");
    }

    #[test]
    fn a_wide_grid_is_cut_into_blocks_of_servers_that_fit() {
        let names = [
            "zmqperf", "c", "ffi-rzmq", "jeromq", "node", "pyzmq", "zmq4-go",
        ];
        let impls = names
            .iter()
            .map(|n| Impl {
                name: n.to_string(),
                label: n.to_string(),
                ready: true,
                transports: vec!["tcp".into()],
            })
            .collect();
        let m = Matrix {
            run_id: "r".into(),
            impls,
            grids: vec![],
            passes: 2,
            baseline: "c".into(),
        };
        let texts: Vec<String> = (0..names.len() * names.len())
            .map(|i| format!("1.{i:02} (0.50-2.00)"))
            .collect();
        let t = text_grid_in(&m, &texts, 80);
        assert!(t.lines().all(|l| l.len() <= 80), "{t}");
        // Every cell is there once, and every client heads a row of each block.
        for x in &texts {
            assert_eq!(t.matches(x.as_str()).count(), 1, "{x} in {t}");
        }
        let blocks = t.matches("client \\ server").count();
        assert!(blocks >= 2, "{t}");
        assert_eq!(
            t.lines().filter(|l| l.starts_with("  jeromq ")).count(),
            blocks
        );
        // Wide enough: one block.
        assert_eq!(text_grid_in(&m, &texts, 400).matches("client").count(), 1);
    }
}
