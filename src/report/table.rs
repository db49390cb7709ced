//! The terminal report: plain text (no colours), lines kept within the width of
//! [`crate::term`] (80 columns and up; 120 for files). The environment first, then the findings of `zmqperf diagnose`, then
//! one table per group of cases with the message sizes as columns, the edges and nodes of
//! the topologies worth a closer look, then warnings, failed cases, delivery and resource
//! use.

use super::layout::{self, Grid};
use super::Reporter;
use crate::model::RunResult;
use std::fmt::Write;

/// Renders a run as plain text for a terminal.
pub struct Table;

const INDENT: &str = "  ";

fn width(s: &str) -> usize {
    s.chars().count()
}

fn heading(out: &mut String, title: &str, rule: char) {
    let _ = writeln!(out, "{title}");
    let _ = writeln!(out, "{}", rule.to_string().repeat(width(title)));
}

/// The width lines are kept within ([`crate::term::width`]).
fn room() -> usize {
    crate::term::width()
}

/// Words of `text` in lines of at most [`room`] characters, the first starting with
/// `first`, the others with as many spaces (or four, when `first` takes more than half the
/// line). A word longer than a line stays whole here (the printer cuts it).
fn wrap(out: &mut String, first: &str, text: &str) {
    let max = room();
    let pad = " ".repeat(if width(first) > max / 2 {
        4
    } else {
        width(first)
    });
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && width(&line) + 1 + width(word) > max {
            let _ = writeln!(out, "{line}");
            line = pad.clone();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    let _ = writeln!(out, "{line}");
}

/// A grid in blocks of as many columns as fit in [`room`], each with its header.
fn grid(out: &mut String, g: &Grid) {
    let _ = writeln!(out, "{}", g.title);
    let rows = g.labelled_rows();
    let lw = rows
        .iter()
        .map(|(l, _)| width(l))
        .chain([width(&g.corner)])
        .max()
        .unwrap_or(0);
    let cw: Vec<usize> = (0..g.columns.len())
        .map(|i| {
            g.rows
                .iter()
                .map(|(_, cells)| cells.get(i).map_or(0, |c| width(c)))
                .chain([width(&g.columns[i])])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let room = room().saturating_sub(INDENT.len()) as f64;
    for (b, block) in g
        .blocks(room, 3.0, |s| width(s) as f64)
        .into_iter()
        .enumerate()
    {
        let (start, end) = (block.start, block.end);
        if b > 0 {
            out.push('\n');
        }
        let mut head = format!("{INDENT}{:<lw$}", g.corner);
        let mut rule = format!("{INDENT}{}", "-".repeat(lw));
        for (col, &w) in g.columns[start..end].iter().zip(&cw[start..end]) {
            let _ = write!(head, " | {col:>w$}");
            let _ = write!(rule, "-+-{}", "-".repeat(w));
        }
        let _ = writeln!(out, "{head}");
        let _ = writeln!(out, "{rule}");
        for (label, cells) in &rows {
            // A matrix's pattern name stands on a line of its own.
            let Some(cells) = cells else {
                let _ = writeln!(out, "{INDENT}{label}");
                continue;
            };
            let mut line = format!("{INDENT}{label:<lw$}");
            for (i, &w) in cw.iter().enumerate().take(end).skip(start) {
                let cell = cells.get(i).map_or("", String::as_str);
                let _ = write!(line, " | {cell:>w$}");
            }
            let _ = writeln!(out, "{line}");
        }
    }
}

/// A table with a header row; the first `left` columns are aligned left, the rest right.
fn plain_table<R: AsRef<[String]>>(out: &mut String, heads: &[&str], rows: &[R], left: usize) {
    let w: Vec<usize> = (0..heads.len())
        .map(|i| {
            rows.iter()
                .map(|r| width(&r.as_ref()[i]))
                .chain([width(heads[i])])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut s = INDENT.to_string();
        for (i, c) in cells.enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            if i < left {
                let _ = write!(s, "{c:<w$}", w = w[i]);
            } else {
                let _ = write!(s, "{c:>w$}", w = w[i]);
            }
        }
        s.trim_end().to_string()
    };
    let _ = writeln!(out, "{}", line(&mut heads.iter().copied()));
    for r in rows {
        let _ = writeln!(out, "{}", line(&mut r.as_ref().iter().map(String::as_str)));
    }
}

/// A table whose first column is the case id (empty on the rows after the first of a case,
/// if the caller likes). When it would be wider than [`room`], the case id moves out of the
/// rows onto a line of its own above them, and the rows are indented under it.
fn case_table<R: AsRef<[String]>>(out: &mut String, heads: &[&str], rows: &[R], left: usize) {
    let mut whole = String::new();
    plain_table(&mut whole, heads, rows, left);
    if whole.lines().all(|l| width(l) <= room()) {
        out.push_str(&whole);
        return;
    }
    let rest: Vec<&[String]> = rows.iter().map(|r| &r.as_ref()[1..]).collect();
    let mut table = String::new();
    plain_table(&mut table, &heads[1..], &rest, left.saturating_sub(1));
    let mut lines = table.lines();
    if let Some(head) = lines.next() {
        let _ = writeln!(out, "{INDENT}{head}");
    }
    let mut case: Option<&str> = None;
    for (r, line) in rows.iter().zip(lines) {
        let id = r.as_ref()[0].as_str();
        if !id.is_empty() && case != Some(id) {
            let _ = writeln!(out, "{INDENT}{id}");
            case = Some(id);
        }
        let _ = writeln!(out, "{INDENT}{line}");
    }
}

/// The edges and nodes of the cases that list them, each a section; nothing when no case
/// has them.
fn topology(out: &mut String, run: &RunResult) {
    let edges = layout::edges(run);
    if !edges.is_empty() {
        out.push('\n');
        heading(out, "Edges", '-');
        wrap(
            out,
            "",
            "Each stream from a sending replica to a receiver, over all repetitions: messages \
             delivered, their rate (median over the repetitions), loss, and mean and 99th \
             percentile latency end to end.",
        );
        case_table(out, &layout::EDGE_HEADS, &edges, 2);
    }
    let streams = layout::streams(run);
    if !streams.is_empty() {
        out.push('\n');
        heading(out, "Streams", '-');
        wrap(out, "", "Each stream (a group of flows) of a case, and all of them: its flows' delivered rates added up (medians over the repetitions), in msg/s and Mbit/s, and the messages still on their way when its end of transmission arrived (a worker that stopped there would lose them).");
        case_table(out, &layout::STREAM_HEADS, &streams, 2);
    }
    let nodes = layout::nodes(run);
    if !nodes.is_empty() {
        out.push('\n');
        heading(out, "Nodes", '-');
        wrap(
            out,
            "",
            "Each node with its replicas, over all repetitions: CPU as % of one core while \
             it ran (all replicas: 3 busy replicas make 300), largest peak memory of a \
             replica (resident/virtual), rates sent and delivered (medians over the \
             repetitions) and messages forwarded.",
        );
        case_table(
            out,
            &layout::node_heads(run),
            &nodes,
            layout::node_text_columns(run),
        );
        let per_host = layout::host_cpu(run);
        if !per_host.is_empty() {
            let _ = writeln!(out, "CPU per host (the nodes' shares added):");
            for (id, text) in per_host {
                wrap(out, "- ", &format!("{id}: {text}"));
            }
        }
        let cut = layout::cut_short(run);
        if !cut.is_empty() {
            let _ = writeln!(out, "Cut short (the end of a stream never came):");
            for (id, why) in cut {
                wrap(out, "- ", &format!("{id}: {why}"));
            }
        }
    }
}

/// Only the findings of a run, as the terminal report shows them (what `zmqperf diagnose`
/// prints); empty when there are none.
pub fn findings_text(run: &RunResult) -> String {
    let mut out = String::new();
    if !run.findings.is_empty() {
        findings(&mut out, run);
    }
    out
}

/// The findings of `zmqperf diagnose`: for each, a heading line, then what happened, the
/// cause, the remedy, the evidence and the gaps, each wrapped under its label.
fn findings(out: &mut String, run: &RunResult) {
    heading(out, "Findings", '-');
    let _ = writeln!(out, "{}", layout::findings_count(run));
    let triage = layout::triage(run);
    if !triage.is_empty() {
        let _ = writeln!(out, "\nTriage, worst first:");
        for (i, line) in triage.iter().enumerate() {
            wrap(out, &format!("{:>3}. ", i + 1), &layout::triage_text(line));
        }
    }
    for v in layout::findings(run) {
        let f = v.finding;
        out.push('\n');
        wrap(
            out,
            &format!("[{}] ", f.severity.name()),
            &format!("{}: {}", f.id, f.title),
        );
        if let Some(e) = &f.error {
            wrap(out, "  Failed: ", e);
        }
        wrap(out, "  What happened: ", &f.observed);
        shared(out, "Cause", &f.cause, &v.cause);
        shared(out, "Remedy", &f.remedy, &v.remedy);
        if !v.evidence.is_empty() {
            let pairs: Vec<String> = v
                .evidence
                .iter()
                .map(|(k, val)| format!("{k}={val}"))
                .collect();
            wrap(out, "  Evidence: ", &pairs.join(" "));
        }
        for g in &v.gaps {
            wrap(out, "  Gap: ", g);
        }
    }
}

/// A cause or remedy, said in full once and pointed back to when another finding has the
/// same text: `  Remedy (for tcp, ipc): ...`, then `  Remedy: as for slow-joiner/tcp above.`
fn shared(out: &mut String, label: &str, text: &str, how: &layout::Shared) {
    match how {
        layout::Shared::Own => wrap(out, &format!("  {label}: "), text),
        layout::Shared::For(who) => {
            wrap(out, &format!("  {label} (for {}): ", who.join(", ")), text)
        }
        layout::Shared::SameAs(id) => {
            wrap(out, &format!("  {label}: "), &format!("as for {id} above."))
        }
    }
}

impl Reporter for Table {
    fn render(&self, run: &RunResult) -> String {
        let mut out = String::new();
        heading(&mut out, &format!("zmqperf run {}", run.run_id), '=');
        environment(&mut out, run);
        if !run.findings.is_empty() {
            out.push('\n');
            findings(&mut out, run);
        }
        results(&mut out, run);
        lists(&mut out, run);
        resource_tables(&mut out, run);
        out
    }
}

/// The environment, the run's then each host's, keys aligned.
fn environment(out: &mut String, run: &RunResult) {
    let env: Vec<(String, String)> = layout::environment(run)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .chain(layout::host_environments(run))
        .collect();
    let kw = env.iter().map(|(k, _)| width(k)).max().unwrap_or(0);
    for (k, v) in &env {
        wrap(out, &format!("{k:<kw$}  "), v);
    }
}

/// The results: a note on the figures, the host pairs, each group's grid and the
/// topology cases (or a line that there are no cases, when there are no findings either).
fn results(out: &mut String, run: &RunResult) {
    let grids = layout::grids(run);
    if !grids.is_empty() || run.findings.is_empty() {
        out.push('\n');
        heading(out, "Results", '-');
    }
    if grids.is_empty() {
        if run.findings.is_empty() {
            let _ = writeln!(out, "No cases in this run.");
        }
    } else {
        wrap(
            out,
            "",
            "Figures are medians over the repetitions; ± is half the width of their 95% \
             confidence interval. Latency is the mean one-way time (round trip / 2 for \
             latency cases).",
        );
    }
    if let Some(hp) = layout::host_pairs(run) {
        out.push('\n');
        heading(out, "Host pairs", '-');
        wrap(out, "", layout::HOST_PAIRS_NOTE);
        plain_table(out, &hp.heads, &hp.rows, hp.text_columns);
    }
    for g in &grids {
        out.push('\n');
        grid(out, g);
    }
    topology(out, run);
}

/// The lists: warnings and failed cases (each tagged with its case), and delivery.
fn lists(out: &mut String, run: &RunResult) {
    let warnings = layout::warnings(run);
    if !warnings.is_empty() {
        out.push('\n');
        heading(out, "Warnings", '-');
        for (id, w) in warnings {
            wrap(out, "- ", &format!("{id}: {w}"));
        }
    }
    let failures = layout::failures(run);
    if !failures.is_empty() {
        out.push('\n');
        heading(out, "Failed cases", '-');
        for (id, e) in failures {
            wrap(out, "- ", &format!("{id}: {e}"));
        }
    }
    let delivery = layout::delivery(run);
    if !delivery.is_empty() {
        out.push('\n');
        heading(out, "Delivery", '-');
        for d in delivery {
            wrap(out, "- ", &d);
        }
    }
    let over_time: Vec<(String, Vec<String>)> = run
        .cases
        .iter()
        .filter(|c| !c.intervals.is_empty())
        .map(|c| (c.id.clone(), super::intervals::verdicts(c)))
        .collect();
    if !over_time.is_empty() {
        out.push('\n');
        heading(
            out,
            "Over time (--interval: does latency or loss drift?)",
            '-',
        );
        for (id, lines) in over_time {
            for l in lines {
                wrap(out, "- ", &format!("{id}: {l}"));
            }
        }
    }
}

/// The tables of security cost and of resource use (each left out when empty).
fn resource_tables(out: &mut String, run: &RunResult) {
    let security = layout::security_cost(run);
    if !security.is_empty() {
        out.push('\n');
        heading(
            out,
            "Security cost (each mechanism beside its NULL twin)",
            '-',
        );
        case_table(out, &layout::SECURITY_HEADS, &security, 3);
    }
    let resources = layout::resources(run);
    if !resources.is_empty() {
        out.push('\n');
        heading(out, "Resources (last repetition of each case)", '-');
        case_table(out, &layout::RESOURCE_HEADS, &resources, 3);
    }
}
