//! The Markdown report (GitHub flavour): the environment as a list, the findings of
//! `zmqperf diagnose`, then the same tables as the terminal report as pipe tables (with
//! the edges and nodes of the topologies), then warnings, failed cases, delivery and
//! resources.

use super::layout::{self, Grid};
use super::Reporter;
use crate::model::RunResult;
use std::fmt::Write;

/// Renders a run as GitHub Markdown.
pub struct Markdown;

/// Text made safe inside a table cell or list item: pipes and the characters Markdown
/// would read as markup are escaped, line breaks become spaces.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '\\' | '*' | '_' | '`' | '<' | '>' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// A pipe table; columns from `right_from` on are aligned right. Cells are padded so the
/// source lines up too.
fn pipe_table(out: &mut String, heads: &[String], rows: &[Vec<String>], right_from: usize) {
    let heads: Vec<String> = heads.iter().map(|h| esc(h)).collect();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| esc(c)).collect())
        .collect();
    let w: Vec<usize> = (0..heads.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .chain([heads[i].chars().count(), 3])
                .max()
                .unwrap_or(3)
        })
        .collect();
    let line = |cells: &[String]| {
        let mut s = String::from("|");
        for (i, wi) in w.iter().enumerate() {
            let c = cells.get(i).map_or("", String::as_str);
            if i < right_from {
                let _ = write!(s, " {c:<wi$} |");
            } else {
                let _ = write!(s, " {c:>wi$} |");
            }
        }
        s
    };
    let _ = writeln!(out, "{}", line(&heads));
    let mut rule = String::from("|");
    for (i, wi) in w.iter().enumerate() {
        if i < right_from {
            let _ = write!(rule, ":{}|", "-".repeat(wi + 1));
        } else {
            let _ = write!(rule, "{}:|", "-".repeat(wi + 1));
        }
    }
    let _ = writeln!(out, "{rule}");
    for r in &rows {
        let _ = writeln!(out, "{}", line(r));
    }
}

fn grid(out: &mut String, g: &Grid) {
    let _ = writeln!(out, "### {}\n", esc(&g.title));
    if g.row_groups.is_empty() {
        let heads: Vec<String> = [g.corner.clone()]
            .into_iter()
            .chain(g.columns.iter().cloned())
            .collect();
        let rows: Vec<Vec<String>> = g
            .rows
            .iter()
            .map(|(label, cells)| {
                [label.clone()]
                    .into_iter()
                    .chain(cells.iter().cloned())
                    .collect()
            })
            .collect();
        pipe_table(out, &heads, &rows, 1);
        return;
    }
    // A matrix: the pattern in the first column, on the first row of its figures.
    let heads: Vec<String> = ["pattern".to_string(), "figure".to_string()]
        .into_iter()
        .chain(g.columns.iter().cloned())
        .collect();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut figures = g.rows.iter();
    for (name, n) in &g.row_groups {
        for (i, (label, cells)) in figures.by_ref().take(*n).enumerate() {
            let first = if i == 0 { name.clone() } else { String::new() };
            rows.push(
                [first, label.clone()]
                    .into_iter()
                    .chain(cells.iter().cloned())
                    .collect(),
            );
        }
    }
    pipe_table(out, &heads, &rows, 2);
}

/// The findings: a heading per finding, then what happened, cause, remedy, evidence and
/// gaps as a list.
fn findings(out: &mut String, run: &RunResult) {
    let _ = writeln!(out, "\n## Findings\n");
    let _ = writeln!(out, "{}", layout::findings_count(run));
    let triage = layout::triage(run);
    if !triage.is_empty() {
        let _ = writeln!(out, "\nTriage, worst first:\n");
        for (i, line) in triage.iter().enumerate() {
            let _ = writeln!(out, "{}. {}", i + 1, esc(&layout::triage_text(line)));
        }
    }
    for v in layout::findings(run) {
        let f = v.finding;
        let _ = writeln!(out, "\n### {}: {}\n", esc(&f.id), esc(&f.title));
        let _ = writeln!(out, "**{}**. {}\n", f.severity.name(), esc(&f.observed));
        if let Some(e) = &f.error {
            let _ = writeln!(out, "- **Failed**: {}", esc(e));
        }
        for (label, text, how) in [
            ("Cause", &f.cause, &v.cause),
            ("Remedy", &f.remedy, &v.remedy),
        ] {
            let _ = match how {
                layout::Shared::Own => writeln!(out, "- **{label}**: {}", esc(text)),
                layout::Shared::For(who) => writeln!(
                    out,
                    "- **{label}** (for {}): {}",
                    esc(&who.join(", ")),
                    esc(text)
                ),
                layout::Shared::SameAs(id) => {
                    writeln!(out, "- **{label}**: as for {} above.", esc(id))
                }
            };
        }
        if !v.evidence.is_empty() {
            let pairs: Vec<String> = v
                .evidence
                .iter()
                .map(|(k, val)| format!("`{k}` {}", esc(val)))
                .collect();
            let _ = writeln!(out, "- **Evidence**: {}", pairs.join(", "));
        }
        for g in &v.gaps {
            let _ = writeln!(out, "- **Gap**: {}", esc(g));
        }
    }
}

/// Rows of fixed width as the rows `pipe_table` takes.
fn rows<const N: usize>(rows: Vec<[String; N]>) -> Vec<Vec<String>> {
    rows.into_iter().map(Vec::from).collect()
}

fn heads(heads: &[&str]) -> Vec<String> {
    heads.iter().map(|h| h.to_string()).collect()
}

/// The edges and nodes of the cases that list them, each a section with a table; nothing
/// when no case has them.
fn topology(out: &mut String, run: &RunResult) {
    let edges = layout::edges(run);
    if !edges.is_empty() {
        let _ = writeln!(out, "\n## Edges\n");
        let _ = writeln!(
            out,
            "Each stream from a sending replica to a receiver, over all repetitions: messages \
             delivered, their rate (median over the repetitions), loss, and mean and 99th \
             percentile latency end to end.\n"
        );
        pipe_table(out, &heads(&layout::EDGE_HEADS), &rows(edges), 2);
    }
    let streams = layout::streams(run);
    if !streams.is_empty() {
        let _ = writeln!(out, "\n## Streams\n");
        let _ = writeln!(out, "Each stream (a group of flows) of a case, and all of them: its flows' delivered rates added up (medians over the repetitions), in msg/s and Mbit/s, and the messages still on their way when its end of transmission arrived (a worker that stopped there would lose them).\n");
        pipe_table(out, &heads(&layout::STREAM_HEADS), &rows(streams), 2);
    }
    let nodes = layout::nodes(run);
    if !nodes.is_empty() {
        let _ = writeln!(out, "\n## Nodes\n");
        let _ = writeln!(
            out,
            "Each node with its replicas, over all repetitions: CPU time (user + system), \
             largest peak memory of a replica, rates sent and delivered (medians over the \
             repetitions) and messages forwarded.\n"
        );
        pipe_table(
            out,
            &heads(&layout::node_heads(run)),
            &nodes,
            layout::node_text_columns(run),
        );
        let cut = layout::cut_short(run);
        if !cut.is_empty() {
            let _ = writeln!(out, "\nCut short (the end of a stream never came):\n");
            for (id, why) in cut {
                let _ = writeln!(out, "- `{id}`: {}", esc(&why));
            }
        }
    }
}

impl Reporter for Markdown {
    fn render(&self, run: &RunResult) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# zmqperf run {}\n", esc(&run.run_id));
        environment(&mut out, run);
        if !run.findings.is_empty() {
            findings(&mut out, run);
        }
        results(&mut out, run);
        lists(&mut out, run);
        resource_tables(&mut out, run);
        out
    }
}

/// The environment: the run's, then each host's.
fn environment(out: &mut String, run: &RunResult) {
    let _ = writeln!(out, "## Environment\n");
    for (k, v) in layout::environment(run) {
        let _ = writeln!(out, "- **{k}**: {}", esc(&v));
    }
    for (k, v) in layout::host_environments(run) {
        let _ = writeln!(out, "- **{}**: {}", esc(&k), esc(&v));
    }
}

/// The results: a note on the figures, the host pairs, each group's grid and the
/// topology cases (or a line that there are no cases, when there are no findings either).
fn results(out: &mut String, run: &RunResult) {
    let grids = layout::grids(run);
    if !grids.is_empty() || run.findings.is_empty() {
        let _ = writeln!(out, "\n## Results\n");
    }
    if grids.is_empty() {
        if run.findings.is_empty() {
            let _ = writeln!(out, "No cases in this run.");
        }
    } else {
        let _ = writeln!(
            out,
            "Figures are medians over the repetitions; ± is half the width of their 95% \
             confidence interval. Latency is the mean one-way time (round trip / 2 for \
             latency cases)."
        );
    }
    if let Some(hp) = layout::host_pairs(run) {
        let _ = writeln!(out, "\n### Host pairs\n");
        let _ = writeln!(out, "{}\n", layout::HOST_PAIRS_NOTE);
        pipe_table(out, &heads(&hp.heads), &hp.rows, hp.text_columns);
    }
    for g in &grids {
        out.push('\n');
        grid(out, g);
    }
    topology(out, run);
}

/// The lists: warnings and failed cases (each tagged with its case), and delivery.
fn lists(out: &mut String, run: &RunResult) {
    let list = |out: &mut String, title: &str, items: Vec<String>| {
        if !items.is_empty() {
            let _ = writeln!(out, "\n## {title}\n");
            for i in items {
                let _ = writeln!(out, "- {i}");
            }
        }
    };
    let item = |(id, text): (&str, &str)| format!("`{id}`: {}", esc(text));
    list(
        out,
        "Warnings",
        layout::warnings(run)
            .iter()
            .map(|(id, w)| item((*id, w.as_str())))
            .collect(),
    );
    list(
        out,
        "Failed cases",
        layout::failures(run).into_iter().map(item).collect(),
    );
    list(
        out,
        "Delivery",
        layout::delivery(run).iter().map(|d| esc(d)).collect(),
    );
}

/// The tables of security cost and of resource use (each left out when empty).
fn resource_tables(out: &mut String, run: &RunResult) {
    let security = layout::security_cost(run);
    if !security.is_empty() {
        let _ = writeln!(
            out,
            "\n## Security cost (each mechanism beside its NULL twin)\n"
        );
        let heads: Vec<String> = layout::SECURITY_HEADS
            .iter()
            .map(|h| h.to_string())
            .collect();
        let rows: Vec<Vec<String>> = security.into_iter().map(Vec::from).collect();
        pipe_table(out, &heads, &rows, 3);
    }
    let resources = layout::resources(run);
    if !resources.is_empty() {
        let _ = writeln!(out, "\n## Resources (last repetition of each case)\n");
        let heads: Vec<String> = layout::RESOURCE_HEADS
            .iter()
            .map(|h| h.to_string())
            .collect();
        let rows: Vec<Vec<String>> = resources.into_iter().map(Vec::from).collect();
        pipe_table(out, &heads, &rows, 3);
    }
}
