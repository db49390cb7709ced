//! The CSV report: one row per case with its summary figures, then one row per edge of the
//! case (`row` says which: `case` or `edge`), for spreadsheets and scripts. Every row says
//! which run it is of (`run_id`), where it was made (`host`, the run's machine) and when
//! (`started`, the run's start, UTC), and where its case ran: `hosts` (one host, or `a->b`
//! from the sending nodes' hosts to the receiving nodes') and `node_hosts` (each node with
//! its host), so rows of many runs and machines can be put in one sheet.
//!
//! RFC 4180 quoting: a field holding a comma, a double quote or a line break is put in
//! double quotes, with inner quotes doubled. Lines end in `\n`. Missing values are empty.
//! Numbers are rounded to what they can tell: times in microseconds to the nanosecond (3
//! decimals), CPU milliseconds to the microsecond, Mbit/s to 3 decimals, message rates and
//! counts whole. A text field that a spreadsheet would take for a
//! formula (it begins with `=`, `+`, `-`, `@`, a tab or a carriage return, and is not a
//! number) gets a leading `'`, so opening the file runs nothing.

use super::layout::{self, kind_name, loop_name};
use super::Reporter;
use crate::model::{CaseResult, EdgeResult, Estimate, Metric, RunResult, METRICS};
use crate::stats::LossSummary;

/// Renders a run as CSV.
pub struct Csv;

/// The columns before the figures: which run, and what the case (or edge) is.
const CASE_COLUMNS: [&str; 13] = [
    "run_id",
    "host",
    "started",
    "row",
    "id",
    "edge",
    "kind",
    "pattern",
    "transport",
    "message_size",
    "count",
    "rate",
    "loop_mode",
];

/// The columns after the figures: delivery, the floor, notes, resources and hosts.
const REST_COLUMNS: [&str; 13] = [
    "lost",
    "duplicated",
    "reordered",
    "floor_latency_us",
    "warnings",
    "error",
    "repetitions",
    "cpu_ms",
    "cpu_core_pct",
    "peak_rss_kib",
    "peak_virt_kib",
    "hosts",
    "node_hosts",
];

/// The header row: the case's columns, each figure's columns from the metric table
/// ([`METRICS`]: the median alone, or with its 95% interval), then the rest.
pub const COLUMNS: [&str; 36] = columns();

const fn columns() -> [&'static str; 36] {
    let mut out = [""; 36];
    let mut k = 0;
    let mut i = 0;
    while i < CASE_COLUMNS.len() {
        out[k] = CASE_COLUMNS[i];
        (k, i) = (k + 1, i + 1);
    }
    let mut m = 0;
    while m < METRICS.len() {
        let mut j = 0;
        while j < METRICS[m].csv.len() {
            out[k] = METRICS[m].csv[j];
            (k, j) = (k + 1, j + 1);
        }
        m += 1;
    }
    let mut i = 0;
    while i < REST_COLUMNS.len() {
        out[k] = REST_COLUMNS[i];
        (k, i) = (k + 1, i + 1);
    }
    assert!(k == out.len(), "COLUMNS' length is the sum of its parts");
    out
}

/// One field, quoted if it needs to be, and kept from being read as a formula.
pub fn field(s: &str) -> String {
    let formula = s.starts_with(['=', '+', '-', '@', '\t', '\r']) && s.parse::<f64>().is_err();
    let s = if formula {
        std::borrow::Cow::Owned(format!("'{s}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `v` with `decimals` decimals (none: a whole number); empty when it is not finite.
fn num(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        String::new()
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map(|v| num(v, decimals)).unwrap_or_default()
}

/// The decimals a figure of `unit` is written with: whole rates and counts, 3 for times in
/// microseconds (a nanosecond) and everything else.
fn decimals(unit: &str, whole: bool) -> usize {
    if whole || unit == "msg/s" {
        0
    } else {
        3
    }
}

/// CPU time (user + system, ms) of everything the case ran, over all its repetitions, and
/// the largest peak RSS (KiB) of one of its processes: from its nodes when it has them
/// (topologies, fan-outs), else from the roles of each repetition. None when neither was
/// recorded.
pub fn resources(c: &CaseResult) -> Option<(f64, u64)> {
    if !c.nodes.is_empty() {
        let cpu = c.nodes.iter().map(|n| n.cpu_ms).sum();
        let rss = c.nodes.iter().map(|n| n.peak_rss_kib).max().unwrap_or(0);
        return Some((cpu, rss));
    }
    let roles: Vec<_> = c.repetitions.iter().flat_map(|r| &r.roles).collect();
    if roles.is_empty() {
        return None;
    }
    let cpu = roles.iter().map(|r| r.cpu_user_ms + r.cpu_sys_ms).sum();
    let rss = roles.iter().map(|r| r.peak_rss_kib).max().unwrap_or(0);
    Some((cpu, rss))
}

/// The CPU of the case's nodes as a share of one core, % (their sum: 250 is two and a half
/// cores busy); None without nodes that say it (a case of the suite's roles, older runs).
pub fn core_pct(c: &CaseResult) -> Option<f64> {
    let pcts: Vec<f64> = c.nodes.iter().filter_map(|n| n.cpu_core_pct).collect();
    (!pcts.is_empty()).then(|| pcts.iter().sum())
}

/// The largest peak virtual memory (VIRT, KiB) of one of the case's processes, beside
/// [`resources`]' RSS and from the same source (its nodes, else its roles); None where none
/// was recorded (older runs, peers that do not say).
pub fn peak_virt(c: &CaseResult) -> Option<u64> {
    let peak = if c.nodes.is_empty() {
        let roles = c.repetitions.iter().flat_map(|r| &r.roles);
        roles.map(|r| r.peak_virt_kib).max()
    } else {
        c.nodes.iter().map(|n| n.peak_virt_kib).max()
    };
    peak.filter(|v| *v > 0)
}

/// Each node of a case with its host, `name=host` joined by `;` (`ping=a;echo=b`); empty
/// for a case without nodes.
pub fn node_hosts(run: &RunResult, c: &CaseResult) -> String {
    let all: Vec<String> = c
        .nodes
        .iter()
        .map(|n| format!("{}={}", n.name, run.node_host(n)))
        .collect();
    all.join(";")
}

/// Each figure's fields in the order of [`COLUMNS`]: the median, and the ends of its 95%
/// interval where the table asks for them.
fn figures(c: &CaseResult) -> impl Iterator<Item = String> + '_ {
    // One-way figures from clocks that differ are left empty (the warnings say why).
    let hidden = layout::hides_latency(c);
    METRICS.iter().flat_map(move |m| {
        let e: Option<Estimate> = (m.of)(&c.summary).filter(|_| !(hidden && m.one_way));
        let d = decimals(m.unit, m.whole);
        let all = [
            opt(e.map(|e| e.median), d),
            opt(e.map(|e| e.ci_low), d),
            opt(e.map(|e| e.ci_high), d),
        ];
        all.into_iter().take(m.csv.len())
    })
}

/// The columns every row of a case starts with: the run, then the case.
fn lead(run: &RunResult, c: &CaseResult, row: &str, edge: &str) -> Vec<String> {
    vec![
        run.run_id.clone(),
        run.environment.hostname.clone(),
        run.started_at.clone(),
        row.to_string(),
        c.id.clone(),
        edge.to_string(),
        kind_name(c.kind).to_string(),
        c.pattern.clone(),
        c.transport.to_string(),
        c.message_size.to_string(),
        c.count.to_string(),
        opt(c.rate, 0),
        loop_name(c.loop_mode).to_string(),
    ]
}

/// An edge's row: its stream's figures where the case's columns have them (mean and p99
/// latency, delivered msg/s, its ledger), the rest empty.
fn edge_row(run: &RunResult, c: &CaseResult, e: &EdgeResult) -> Vec<String> {
    let mut row = lead(run, c, "edge", &format!("{} -> {}", e.from, e.to));
    let lat = e
        .latency
        .as_ref()
        .filter(|l| l.count > 0 && !layout::edge_hides_latency(e));
    for m in METRICS.iter() {
        let v = match m.metric {
            Metric::LatencyUs => lat.map(|l| l.mean_ns / 1000.0),
            Metric::P50Us => lat.map(|l| l.p50_ns as f64 / 1000.0),
            Metric::P99Us => lat.map(|l| l.p99_ns as f64 / 1000.0),
            Metric::MsgsPerSec => e.msgs_per_sec,
            _ => None,
        };
        let d = decimals(m.unit, m.whole);
        row.extend((0..m.csv.len()).map(|k| if k == 0 { opt(v, d) } else { String::new() }));
    }
    let ledger = |f: fn(&LossSummary) -> u64| e.loss.as_ref().map(|l| f(l).to_string());
    row.extend([
        ledger(|l| l.lost).unwrap_or_default(),
        ledger(|l| l.duplicated).unwrap_or_default(),
        ledger(|l| l.reordered).unwrap_or_default(),
    ]);
    // The rest is the case's: empty on an edge row.
    row.extend(std::iter::repeat_n(String::new(), REST_COLUMNS.len() - 3));
    row
}

fn row(run: &RunResult, c: &CaseResult) -> Vec<String> {
    let s = &c.summary;
    let ran = !c.repetitions.is_empty();
    let count_if_ran = |n: u64| if ran { n.to_string() } else { String::new() };
    let mut row = lead(run, c, "case", "");
    row.extend(figures(c));
    row.extend([
        count_if_ran(s.lost),
        count_if_ran(s.duplicated),
        count_if_ran(s.reordered),
        opt(c.floor.as_ref().map(|f| f.latency_us), 3),
        c.warnings
            .iter()
            .cloned()
            .chain(layout::clock_note(c))
            .collect::<Vec<_>>()
            .join("; "),
        c.error.clone().unwrap_or_default(),
        c.repetitions.len().to_string(),
        opt(resources(c).map(|r| r.0), 3),
        opt(core_pct(c), 1),
        resources(c).map(|r| r.1.to_string()).unwrap_or_default(),
        peak_virt(c).map(|v| v.to_string()).unwrap_or_default(),
        c.host_path(&run.environment.hostname),
        node_hosts(run, c),
    ]);
    row
}

impl Reporter for Csv {
    fn render(&self, run: &RunResult) -> String {
        let mut out = COLUMNS.join(",");
        out.push('\n');
        let mut line = |row: Vec<String>| {
            debug_assert_eq!(row.len(), COLUMNS.len());
            let fields: Vec<String> = row.iter().map(|f| field(f)).collect();
            out.push_str(&fields.join(","));
            out.push('\n');
        };
        for c in &run.cases {
            line(row(run, c));
            for e in &c.edges {
                line(edge_row(run, c, e));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(field(""), "");
        assert_eq!(field("=HYPERLINK(1),x"), "\"'=HYPERLINK(1),x\"");
        for f in ["+1+cmd", "-x", "@SUM(A1)", "\tx"] {
            assert!(field(f).trim_start_matches('"').starts_with('\''), "{f}");
        }
        assert_eq!(field("-1.5"), "-1.5");
        assert_eq!(field("+3"), "+3");
    }

    #[test]
    fn repetitions_cpu_and_rss_per_case() {
        let run = crate::report::fixture::sample_run();
        let text = Csv.render(&run);
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().expect("header").split(',').collect();
        let col = |name: &str| head.iter().position(|h| *h == name).expect(name);
        let (reps, cpu, rss) = (col("repetitions"), col("cpu_ms"), col("peak_rss_kib"));
        // The first case: a latency case of 3 repetitions with a client and a server.
        let first: Vec<&str> = lines.next().expect("a row").split(',').collect();
        let c = &run.cases[0];
        assert_eq!(first[reps], "3");
        let want: f64 = c
            .repetitions
            .iter()
            .flat_map(|r| &r.roles)
            .map(|r| r.cpu_user_ms + r.cpu_sys_ms)
            .sum();
        let got: f64 = first[cpu].parse().expect("cpu_ms is a number");
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        assert_eq!(first[rss], "14464", "the largest role's peak, KiB");
        // The topology case takes its figures from its nodes.
        let topo = run
            .cases
            .iter()
            .find(|c| !c.nodes.is_empty())
            .expect("topology");
        let (cpu_n, rss_n) = resources(topo).expect("nodes");
        assert_eq!(cpu_n, topo.nodes.iter().map(|n| n.cpu_ms).sum::<f64>());
        assert_eq!(Some(rss_n), topo.nodes.iter().map(|n| n.peak_rss_kib).max());
        // A case that never ran has 0 repetitions and no resources.
        let failed = run
            .cases
            .iter()
            .find(|c| c.error.is_some())
            .expect("failed");
        assert_eq!(resources(failed), None);
        assert_eq!((core_pct(failed), peak_virt(failed)), (None, None));
    }

    #[test]
    fn share_of_a_core_and_virt_per_case() {
        let mut run = crate::report::fixture::sample_run();
        let i = run
            .cases
            .iter()
            .position(|c| !c.nodes.is_empty())
            .expect("topology");
        let c = &mut run.cases[i];
        for (k, n) in c.nodes.iter_mut().enumerate() {
            n.cpu_core_pct = Some(40.0 + k as f64 * 10.0);
            n.peak_virt_kib = 100_000 + k as u64;
        }
        let k = c.nodes.len();
        let want_pct: f64 = (0..k).map(|k| 40.0 + k as f64 * 10.0).sum();
        let want_virt = 100_000 + k as u64 - 1;
        let text = Csv.render(&run);
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().expect("header").split(',').collect();
        let col = |name: &str| head.iter().position(|h| *h == name).expect(name);
        let line = text
            .lines()
            .find(|l| l.contains(&format!(",case,{},", run.cases[i].id)))
            .expect("the case's row");
        // Its fields, quoted ones (a warning with commas) kept whole.
        let (mut row, mut cur, mut quoted) = (Vec::new(), String::new(), false);
        for ch in line.chars() {
            match ch {
                '"' => quoted = !quoted,
                ',' if !quoted => row.push(std::mem::take(&mut cur)),
                _ => cur.push(ch),
            }
        }
        row.push(cur);
        assert_eq!(row.len(), COLUMNS.len(), "{line}");
        assert_eq!(row[col("cpu_core_pct")], format!("{want_pct:.1}"));
        assert_eq!(row[col("peak_virt_kib")], want_virt.to_string());
        // Nodes that do not say leave them empty.
        let plain = &run.cases[0];
        assert!(plain.nodes.is_empty());
        assert_eq!(core_pct(plain), None);
    }
}
