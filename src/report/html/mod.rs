//! The HTML report: one self-contained page (inline CSS and SVG; no script, font or other
//! file is fetched) to open in any browser. The environment first, then the findings of
//! `zmqperf diagnose`, then charts of latency, throughput and bandwidth by message size,
//! latency percentile spectra, delivery, and the same tables as the Markdown report, each
//! topology case drawn as a graph of its nodes and edges under its group's table.
//! This file holds the page's skeleton; each section is drawn by a module of its own.

mod cases;
mod delivery;
mod fanout;
mod findings;
mod floor;
mod intervals;
mod limits;
mod parts;
mod sizes;
mod spectrum;
mod style;
mod topology;

use super::layout;
use super::svg::esc;
use super::Reporter;
use crate::model::RunResult;
use std::fmt::Write;
use style::{CSS, TOPOLOGY_CSS};

/// Renders a run as one HTML page.
pub struct Html;

impl Reporter for Html {
    fn render(&self, run: &RunResult) -> String {
        let mut out = String::new();
        let title = format!("zmqperf run {}", run.run_id);
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{CSS}{}</style>\n</head>\n<body>\n<main>\n",
            esc(&title),
            if run.cases.iter().any(|c| !c.nodes.is_empty()) {
                TOPOLOGY_CSS
            } else {
                ""
            }
        );
        let bad = if run.status == "complete" { "" } else { " bad" };
        let _ = writeln!(
            out,
            "<h1>{}</h1>\n<p class=\"sub\">Started {} &middot; {} case{}{} &middot; \
             <span class=\"status{bad}\">{}</span></p>",
            esc(&title),
            esc(&run.started_at),
            run.cases.len(),
            if run.cases.len() == 1 { "" } else { "s" },
            match run.findings.len() {
                0 => String::new(),
                1 => " &middot; 1 finding".to_string(),
                n => format!(" &middot; {n} findings"),
            },
            esc(run.status.as_str())
        );
        if run.status == "interrupted" {
            out.push_str(
                "<p class=\"note\">This run was cut short: the cases below are those that \
                 finished.</p>\n",
            );
        }
        if run.status == "partial" {
            out.push_str(
                "<p class=\"note\">Some cases of this run could not be written to the history \
                 (the reason was said when it ran): the cases below are those it holds.</p>\n",
            );
        }

        // What diagnose found, worst first, before anything else.
        findings::triage(&mut out, run);

        out.push_str("<h2>Environment</h2>\n<dl class=\"env\">\n");
        for (k, v) in layout::environment(run) {
            let v = if k == "command" {
                format!("<code class=\"cmd\">{}</code>", esc(&v))
            } else {
                esc(&v)
            };
            let _ = writeln!(out, "<dt>{}</dt><dd>{v}</dd>", esc(k));
        }
        for (k, v) in layout::host_environments(run) {
            let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", esc(&k), esc(&v));
        }
        out.push_str("</dl>\n");

        if !run.findings.is_empty() {
            findings::findings(&mut out, run);
        }
        // A run of `zmqperf diagnose` has findings and no cases: no charts or tables.
        if !run.cases.is_empty() || run.findings.is_empty() {
            cases::cases(&mut out, run);
        }
        intervals::over_time(&mut out, run);
        limits::limits_and_curves(&mut out, run);
        let _ = writeln!(
            out,
            "<p class=\"note\">Made by zmqperf {}.</p>\n</main>\n</body>\n</html>",
            esc(&run.environment.zmqperf_version)
        );
        out
    }
}
