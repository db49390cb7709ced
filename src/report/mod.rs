//! Output of zmqperf: the compatible commands' lines ([`compat`]) and the reports of a
//! suite run, one module per format behind the [`Reporter`] trait.

pub mod checked;
pub mod compare;
pub mod compat;
pub mod csv;
pub mod curve;
pub mod estimate;
pub mod fanout;
pub mod file;
#[cfg(any(test, feature = "fixture"))]
#[doc(hidden)]
pub mod fixture;
mod graph;
pub mod history;
pub mod hlog;
#[cfg(test)]
mod hosts_tests;
pub mod html;
pub mod intervals;
pub mod json;
mod layout;
pub use layout::first_middle_hole;
pub mod markdown;
pub mod matrix;
pub use crate::units;
pub mod ptmp;
mod svg;
pub mod table;
mod text_table;

use crate::error::Error;
use crate::model::RunResult;
use std::fmt;

/// A way to show a run.
pub trait Reporter {
    /// The whole report as text, ready to print or write to a file.
    fn render(&self, run: &RunResult) -> String;
}

/// The report formats of `zmqperf run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain text tables for a terminal.
    Table,
    /// The full result as JSON (schema/run-result.schema.json).
    Json,
    /// One row per case.
    Csv,
    /// GitHub Markdown tables.
    Markdown,
    /// One self-contained HTML page with charts.
    Html,
    /// HdrHistogram's interval log: the latency histograms as a time series.
    Hlog,
}

impl Format {
    /// Every format, in the order help texts list them.
    pub const ALL: [Format; 6] = [
        Format::Table,
        Format::Json,
        Format::Csv,
        Format::Markdown,
        Format::Html,
        Format::Hlog,
    ];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Hlog => "hlog",
        }
    }

    /// The usual file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Table => "txt",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Hlog => "hlog",
        }
    }

    /// A format by name (case-insensitive; `text` and `md` are accepted too).
    pub fn parse(s: &str) -> Result<Format, Error> {
        let lower = s.trim().to_ascii_lowercase();
        let found = match lower.as_str() {
            "text" | "txt" => Some(Format::Table),
            "md" => Some(Format::Markdown),
            _ => Format::ALL.into_iter().find(|f| f.name() == lower),
        };
        found.ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            Error::invalid(
                "report format",
                s,
                format!("expected one of {}", names.join(", ")),
            )
        })
    }

    /// The reporter of this format.
    pub fn reporter(self) -> &'static dyn Reporter {
        match self {
            Format::Table => &table::Table,
            Format::Json => &json::Json,
            Format::Csv => &csv::Csv,
            Format::Markdown => &markdown::Markdown,
            Format::Html => &html::Html,
            Format::Hlog => &hlog::Hlog,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        Format::parse(s)
    }
}

/// A run in the given format.
pub fn render(run: &RunResult, format: Format) -> String {
    let text = format.reporter().render(run);
    match format {
        // Read on a terminal: a note or name cannot move the cursor, recolour or hide text.
        Format::Table | Format::Markdown => terminal_safe(&text),
        Format::Json | Format::Csv | Format::Html | Format::Hlog => text,
    }
}

/// `text` with every control character but line feed and tab (escape sequences, carriage
/// return, backspace, C1 controls) and every bidirectional override written out as a
/// visible escape (`\x1b`, `\u{202e}`), so that text read on a terminal shows what it
/// holds and cannot act on the terminal.
pub fn terminal_safe(text: &str) -> String {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.contains(unsafe_char) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !unsafe_char(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CaseResult, CaseSummary, Environment, Kind, LoopMode};

    #[test]
    fn terminal_escapes_and_overrides_are_shown_not_obeyed() {
        let mut run = empty_run();
        run.environment.note = Some("\x1b[31mred\x1b[0m \u{202e}evil\rover".to_string());
        for f in [Format::Table, Format::Markdown] {
            let t = render(&run, f);
            assert!(
                !t.contains('\x1b') && !t.contains('\u{202e}') && !t.contains('\r'),
                "{t}"
            );
            // Markdown escapes the `[` too; the escapes are visible in both.
            assert!(
                t.contains("\\x1b") && t.contains("\\u{202e}evil"),
                "{f}: {t}"
            );
        }
        assert_eq!(terminal_safe("a\tb\nc"), "a\tb\nc");
    }

    #[test]
    fn parses_names_and_rejects_others() {
        for f in Format::ALL {
            assert_eq!(Format::parse(f.name()).unwrap(), f);
        }
        assert_eq!(Format::parse("MD").unwrap(), Format::Markdown);
        assert_eq!(Format::parse("text").unwrap(), Format::Table);
        let e = Format::parse("yaml").unwrap_err().to_string();
        assert!(e.contains("'yaml'"), "{e}");
        assert!(e.contains("table, json, csv, markdown, html"), "{e}");
    }

    fn empty_run() -> RunResult {
        RunResult {
            schema_version: crate::model::SCHEMA_VERSION,
            run_id: String::new(),
            started_at: String::new(),
            finished_at: None,
            status: crate::model::RunStatus::Running,
            command: String::new(),
            workload: None,
            environment: Environment::default(),
            cases: Vec::new(),
            findings: Vec::new(),
            imported: None,
            limits: Vec::new(),
            curves: Vec::new(),
        }
    }

    #[test]
    fn empty_runs_and_empty_cases_render() {
        let mut run = empty_run();
        for f in Format::ALL {
            assert!(!render(&run, f).is_empty(), "{f}");
        }
        // Cases that never ran: no repetitions, no summary, no error, odd values.
        for (kind, mode, rate) in [
            (Kind::Latency, LoopMode::Closed, None),
            (Kind::Throughput, LoopMode::Open, None),
            (Kind::Throughput, LoopMode::Open, Some(f64::NAN)),
        ] {
            run.cases.push(CaseResult {
                id: "x".into(),
                kind,
                pattern: "pair".into(),
                transport: crate::endpoint::Transport::Inproc,
                message_size: 0,
                count: 0,
                rate,
                loop_mode: mode,
                warmup: 0,
                repetitions: Vec::new(),
                summary: CaseSummary::default(),
                floor: None,
                warnings: Vec::new(),
                incomplete: None,
                error: None,
                wall_s: 0.0,
                nodes: Vec::new(),
                edges: Vec::new(),
                sender: None,
                machine: None,
                intervals: Vec::new(),
            });
        }
        for f in Format::ALL {
            assert!(!render(&run, f).is_empty(), "{f}");
        }
    }
}
