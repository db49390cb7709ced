//! What the human-readable reports show, worked out once as text cells: the environment,
//! the findings of `zmqperf diagnose`, one grid per group of cases (columns = message
//! sizes), warnings, failures, delivery and resource use. The text, Markdown and HTML
//! reporters only lay these cells out.

use super::numbers::{self, grouped};
use crate::endpoint::Transport;
use crate::model::{
    CaseResult, EdgeResult, Estimate, Finding, Kind, LoopMode, Measure, NodeResult, RunResult,
    TimedGap,
};
use crate::stats::{GapPosition, LossSummary};

/// Cases shown together: same kind, pattern, transport and load (closed loop, or open loop
/// at one rate), in order of message size.
pub struct Group<'a> {
    /// Latency or throughput.
    pub kind: Kind,
    /// Socket pattern.
    pub pattern: &'a str,
    /// Transport.
    pub transport: Transport,
    /// Open loop with its rate, or closed loop (None).
    pub open_rate: Option<OpenRate>,
    /// The cases, smallest message first (ties keep run order).
    pub cases: Vec<&'a CaseResult>,
}

/// The load of an open-loop group: its target rate, if the case gave one.
#[derive(Clone, Copy, PartialEq)]
pub struct OpenRate(pub Option<f64>);

impl Group<'_> {
    /// `reqrep/tcp`: the short name used in chart legends.
    pub fn name(&self) -> String {
        format!("{}/{}", self.pattern, self.transport)
    }

    /// `closed loop` or `open loop at 10,000 msg/s`.
    pub fn load(&self) -> String {
        match self.open_rate {
            None => "closed loop".to_string(),
            Some(OpenRate(Some(r))) => format!("open loop at {} msg/s", numbers::rate(r)),
            Some(OpenRate(None)) => "open loop".to_string(),
        }
    }

    /// The heading of the group's table, e.g. `reqrep over tcp: latency, closed loop
    /// (10,000 round trips, 3 repetitions)`.
    pub fn title(&self) -> String {
        let kind = kind_name(self.kind);
        let mut t = format!(
            "{} over {}: {kind}, {}",
            self.pattern,
            self.transport,
            self.load()
        );
        let ran: Vec<&&CaseResult> = self
            .cases
            .iter()
            .filter(|c| !c.repetitions.is_empty())
            .collect();
        if let Some(first) = ran.first() {
            let same_count = ran.iter().all(|c| c.count == first.count);
            let same_reps = ran
                .iter()
                .all(|c| c.repetitions.len() == first.repetitions.len());
            let unit = match self.kind {
                Kind::Latency => "round trips",
                Kind::Throughput => "messages",
            };
            let mut parts = Vec::new();
            if same_count {
                parts.push(format!("{} {unit}", grouped(first.count)));
            }
            if same_reps {
                let n = first.repetitions.len();
                parts.push(format!("{n} repetition{}", if n == 1 { "" } else { "s" }));
            }
            if !parts.is_empty() {
                t.push_str(&format!(" ({})", parts.join(", ")));
            }
        }
        t
    }
}

/// `latency` or `throughput`.
pub fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Latency => "latency",
        Kind::Throughput => "throughput",
    }
}

/// `closed` or `open`.
pub fn loop_name(m: LoopMode) -> &'static str {
    match m {
        LoopMode::Closed => "closed",
        LoopMode::Open => "open",
    }
}

fn open_rate(c: &CaseResult) -> Option<OpenRate> {
    match c.loop_mode {
        LoopMode::Closed => None,
        LoopMode::Open => Some(OpenRate(c.rate)),
    }
}

fn same_rate(a: Option<OpenRate>, b: Option<OpenRate>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(OpenRate(x)), Some(OpenRate(y))) => x.map(f64::to_bits) == y.map(f64::to_bits),
        _ => false,
    }
}

/// The cases in groups, groups in the order their first case ran.
pub fn groups(run: &RunResult) -> Vec<Group<'_>> {
    let mut out: Vec<Group<'_>> = Vec::new();
    for c in &run.cases {
        let rate = open_rate(c);
        let found = out.iter_mut().find(|g| {
            g.kind == c.kind
                && g.pattern == c.pattern
                && g.transport == c.transport
                && same_rate(g.open_rate, rate)
        });
        match found {
            Some(g) => g.cases.push(c),
            None => out.push(Group {
                kind: c.kind,
                pattern: &c.pattern,
                transport: c.transport,
                open_rate: rate,
                cases: vec![c],
            }),
        }
    }
    for g in &mut out {
        g.cases.sort_by_key(|c| c.message_size);
    }
    out
}

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
            Line::Mbit => "Mbit/s",
            Line::Floor => "raw socket floor (us)",
            Line::SendMsgs => "send msg/s",
            Line::SendDelay => "send delay p50 (us)",
            Line::Lost => "lost",
        }
    }

    /// The first three rows are always shown; the others only when some case has a value.
    fn always(self) -> bool {
        matches!(self, Line::Latency | Line::Msgs | Line::Mbit)
    }

    fn cell(self, c: &CaseResult) -> Option<String> {
        let s = &c.summary;
        let est = |e: &Option<Estimate>, f: fn(&Estimate) -> String| e.as_ref().map(f);
        match self {
            Line::Latency => est(&s.latency_us, numbers::estimate_value),
            Line::P99 => est(&s.p99_us, numbers::estimate_value),
            Line::Msgs => est(&s.msgs_per_sec, numbers::estimate_whole),
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
        (false, Kind::Latency) => &[Latency, P99, Msgs, Mbit, Floor],
        (false, Kind::Throughput) => &[Latency, Msgs, Mbit, SendMsgs, Lost],
        (true, _) => &[Latency, P99, Msgs, Mbit, SendMsgs, SendDelay, Lost],
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

/// The header facts of a run, as (label, value) pairs.
pub fn environment(run: &RunResult) -> Vec<(&'static str, String)> {
    let e = &run.environment;
    let or_unknown = |s: &str| {
        if s.is_empty() {
            "unknown".to_string()
        } else {
            s.to_string()
        }
    };
    let mut v = vec![
        ("run id", run.run_id.clone()),
        ("status", run.status.clone()),
        ("command", run.command.clone()),
        ("started", run.started_at.clone()),
        (
            "finished",
            run.finished_at.clone().unwrap_or_else(|| "-".to_string()),
        ),
    ];
    if let Some(w) = &run.workload {
        v.push(("workload", w.path.clone()));
    }
    v.extend([
        ("host", or_unknown(&e.hostname)),
        ("CPU", or_unknown(&e.cpu_model)),
        ("cores", e.cores.to_string()),
        (
            "memory",
            if e.memory_bytes == 0 {
                "unknown".to_string()
            } else {
                numbers::bytes(e.memory_bytes)
            },
        ),
        ("OS", or_unknown(&e.os)),
        ("kernel", or_unknown(&e.kernel)),
        ("libzmq", or_unknown(&e.libzmq_version)),
        ("zmqperf", or_unknown(&e.zmqperf_version)),
    ]);
    v
}

/// Every warning, as (case id, warning), in run order.
pub fn warnings(run: &RunResult) -> Vec<(&str, &str)> {
    run.cases
        .iter()
        .flat_map(|c| c.warnings.iter().map(move |w| (c.id.as_str(), w.as_str())))
        .collect()
}

/// Every failed case, as (case id, error).
pub fn failures(run: &RunResult) -> Vec<(&str, &str)> {
    run.cases
        .iter()
        .filter_map(|c| c.error.as_deref().map(|e| (c.id.as_str(), e)))
        .collect()
}

/// The loss ledger of a case over all its repetitions; None if no repetition kept one.
pub fn loss(c: &CaseResult) -> Option<LossSummary> {
    let mut total: Option<LossSummary> = None;
    for l in c.repetitions.iter().filter_map(|r| r.loss.as_ref()) {
        total.get_or_insert_with(LossSummary::default).add(l);
    }
    total
}

fn cause(p: GapPosition) -> &'static str {
    match p {
        GapPosition::Start => "at the start: a slow joiner",
        GapPosition::Middle => "in the middle: a high-water mark reached",
        GapPosition::End => "at the end: a fast quit",
    }
}

/// Where the first hole in the middle of a stream begins and, when known, when the stream
/// went on after it: `the first at seq 500,000 (94.0 ms into the stream)`.
pub fn first_middle_hole(l: &LossSummary) -> Option<String> {
    let g = l.gaps.iter().find(|g| g.position == GapPosition::Middle)?;
    let mut s = format!("the first at seq {}", grouped(g.first_seq));
    if let Some(ns) = g.after_ns {
        s.push_str(&format!(" ({:.1} ms into the stream)", ns as f64 / 1e6));
    }
    Some(s)
}

/// One sentence per case whose stream lost, duplicated or reordered messages; a single
/// `no loss` sentence when streams were checked and all were clean; nothing when no case
/// kept a ledger.
pub fn delivery(run: &RunResult) -> Vec<String> {
    let mut checked = false;
    let mut out = Vec::new();
    for c in &run.cases {
        let Some(l) = loss(c) else { continue };
        checked = true;
        if l.is_clean() {
            continue;
        }
        let mut where_ = Vec::new();
        for (n, p) in [
            (l.lost_at_start, GapPosition::Start),
            (l.lost_in_middle, GapPosition::Middle),
            (l.lost_at_end, GapPosition::End),
        ] {
            if n == 0 {
                continue;
            }
            let mut part = format!("{} {}", grouped(n), cause(p));
            if let (GapPosition::Middle, Some(first)) = (p, first_middle_hole(&l)) {
                part.push_str(&format!(", {first}"));
            }
            where_.push(part);
        }
        let mut s = format!(
            "{}: {} of {} lost",
            c.id,
            grouped(l.lost),
            grouped(l.expected)
        );
        if !where_.is_empty() {
            s.push_str(&format!(" ({})", where_.join("; ")));
        }
        s.push_str(&format!(
            ", {} duplicated, {} reordered",
            grouped(l.duplicated),
            grouped(l.reordered)
        ));
        out.push(s);
    }
    if checked && out.is_empty() {
        out.push("no loss: every message of every checked stream arrived once and in order".into());
    }
    out
}

/// Heads of the resource table.
pub const RESOURCE_HEADS: [&str; 6] = [
    "case",
    "role",
    "placement",
    "user CPU (ms)",
    "sys CPU (ms)",
    "peak RSS (MiB)",
];

/// CPU time and peak memory of each role in each case's last repetition; the case id is
/// written on the first of its rows only.
pub fn resources(run: &RunResult) -> Vec<[String; 6]> {
    let mut out = Vec::new();
    for c in &run.cases {
        let Some(last) = c.repetitions.last() else {
            continue;
        };
        for (i, r) in last.roles.iter().enumerate() {
            out.push([
                if i == 0 { c.id.clone() } else { String::new() },
                r.role.clone(),
                r.placement.clone(),
                format!("{:.1}", r.cpu_user_ms),
                format!("{:.1}", r.cpu_sys_ms),
                format!("{:.1}", r.peak_rss_kib as f64 / 1024.0),
            ]);
        }
    }
    out
}

/// A finding as the human reports show it, its numbers already written out.
pub struct FindingView<'a> {
    /// The finding itself (id, severity, title, observed, cause, remedy, error).
    pub finding: &'a Finding,
    /// Its evidence as (name, value) pairs, in name order.
    pub evidence: Vec<(String, String)>,
    /// One sentence per hole in the stream, with its times.
    pub gaps: Vec<String>,
}

/// A measured value as a person reads it: counts with thousands separators, numbers with
/// a few significant digits.
pub fn measure(m: &Measure) -> String {
    match m {
        Measure::Count(v) => grouped(*v),
        Measure::Number(v) => numbers::value(*v),
        Measure::Text(t) => t.clone(),
    }
}

fn ms(v: f64) -> String {
    format!("{} ms", numbers::value(v))
}

/// One hole of a diagnosed stream in words, e.g. `1,797 lost at the start (seq 0 to
/// 1,796); the first message after it arrived at 2.81 ms`.
pub fn timed_gap(g: &TimedGap) -> String {
    let last = g.first_seq + g.count.saturating_sub(1);
    let span = if g.count == 1 {
        format!("seq {}", grouped(g.first_seq))
    } else {
        format!("seq {} to {}", grouped(g.first_seq), grouped(last))
    };
    let place = match g.position {
        GapPosition::Start => "at the start",
        GapPosition::Middle => "in the middle",
        GapPosition::End => "at the end",
    };
    let mut s = format!("{} lost {place} ({span})", grouped(g.count));
    match (g.before_ms, g.after_ms) {
        (Some(b), Some(a)) => s.push_str(&format!("; between arrivals at {} and {}", ms(b), ms(a))),
        (None, Some(a)) => s.push_str(&format!(
            "; the first message after it arrived at {}",
            ms(a)
        )),
        (Some(b), None) => s.push_str(&format!(
            "; the last message before it arrived at {}",
            ms(b)
        )),
        (None, None) => {}
    }
    s
}

/// The findings of a run, in the order the experiments ran.
pub fn findings(run: &RunResult) -> Vec<FindingView<'_>> {
    run.findings
        .iter()
        .map(|f| FindingView {
            finding: f,
            evidence: f
                .evidence
                .iter()
                .map(|(k, v)| (k.clone(), measure(v)))
                .collect(),
            gaps: f.gaps.iter().map(timed_gap).collect(),
        })
        .collect()
}

/// A line counting the findings: `5 findings: 3 warnings, 2 info`.
pub fn findings_count(run: &RunResult) -> String {
    let n = run.findings.len();
    let warnings = run
        .findings
        .iter()
        .filter(|f| f.severity == crate::model::Severity::Warning)
        .count();
    format!(
        "{n} finding{}: {warnings} warning{}, {} info.",
        if n == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
        n - warnings
    )
}

/// Whether a case's edges are listed: it has more than one, or one whose stream lost,
/// duplicated or reordered messages.
pub fn lists_edges(c: &CaseResult) -> bool {
    c.edges.len() > 1 || c.edges.iter().any(edge_lossy)
}

/// True when the edge's ledger shows messages lost, duplicated or reordered.
pub fn edge_lossy(e: &EdgeResult) -> bool {
    e.loss.as_ref().is_some_and(|l| !l.is_clean())
}

/// Whether a case's nodes are listed: it ran and has more than two nodes, or a node of it
/// was cut short (a case that never ran keeps its nodes with nothing measured).
pub fn lists_nodes(c: &CaseResult) -> bool {
    (!c.repetitions.is_empty() && c.nodes.len() > 2)
        || c.nodes.iter().any(|n| !n.cut_short.is_empty())
}

/// Heads of the edge table.
pub const EDGE_HEADS: [&str; 7] = [
    "case",
    "edge",
    "delivered",
    "msg/s",
    "lost",
    "mean (us)",
    "p99 (us)",
];

/// The loss of an edge: `250 of 600,000 (middle 250)`, the split by place only when
/// something was lost, duplicates and reordering only when there were some.
pub fn edge_loss(l: &LossSummary) -> String {
    let mut s = format!("{} of {}", grouped(l.lost), grouped(l.expected));
    let parts = loss_places(l);
    if !parts.is_empty() {
        s.push_str(&format!(" ({})", parts.join(", ")));
    }
    for extra in loss_extras(l) {
        s.push_str(&format!(", {extra}"));
    }
    s
}

/// Where the messages of a stream were lost, the places with none left out: `start
/// 1,797`, `middle 250`; nothing when none was lost.
pub fn loss_places(l: &LossSummary) -> Vec<String> {
    if l.lost == 0 {
        return Vec::new();
    }
    [
        ("start", l.lost_at_start),
        ("middle", l.lost_in_middle),
        ("end", l.lost_at_end),
    ]
    .iter()
    .filter(|(_, n)| *n > 0)
    .map(|(place, n)| format!("{place} {}", grouped(*n)))
    .collect()
}

/// The duplicates and reordered messages of a stream when there were some: `3
/// duplicated`, `1 reordered`.
pub fn loss_extras(l: &LossSummary) -> Vec<String> {
    let mut out = Vec::new();
    if l.duplicated > 0 {
        out.push(format!("{} duplicated", grouped(l.duplicated)));
    }
    if l.reordered > 0 {
        out.push(format!("{} reordered", grouped(l.reordered)));
    }
    out
}

fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "-".to_string())
}

/// One row per edge of each case that lists its edges: case id, `from -> to`, messages
/// delivered, msg/s, loss, and mean and p99 latency in us.
pub fn edges(run: &RunResult) -> Vec<[String; 7]> {
    let mut out = Vec::new();
    for c in run.cases.iter().filter(|c| lists_edges(c)) {
        for e in &c.edges {
            let lat = e.latency.as_ref().filter(|l| l.count > 0);
            out.push([
                c.id.clone(),
                format!("{} -> {}", e.from, e.to),
                grouped(e.messages),
                or_dash(e.msgs_per_sec.map(numbers::grouped_f)),
                or_dash(e.loss.as_ref().map(edge_loss)),
                or_dash(lat.map(|l| numbers::value(l.mean_ns / 1000.0))),
                or_dash(lat.map(|l| numbers::value(l.p99_ns as f64 / 1000.0))),
            ]);
        }
    }
    out
}

/// Heads of the node table.
pub const NODE_HEADS: [&str; 9] = [
    "case",
    "node",
    "role",
    "placement",
    "CPU (ms)",
    "peak RSS (MiB)",
    "send msg/s",
    "delivered msg/s",
    "forwarded",
];

/// A node's name with its replicas when it has more than one: `sub x3`.
pub fn node_name(n: &NodeResult) -> String {
    if n.replicas > 1 {
        format!("{} x{}", n.name, n.replicas)
    } else {
        n.name.clone()
    }
}

/// One row per node of each case that lists its nodes: case id, name (with replicas),
/// role, placement, CPU time, peak memory, the rates it sent and received, and what it
/// forwarded.
pub fn nodes(run: &RunResult) -> Vec<[String; 9]> {
    let mut out = Vec::new();
    for c in run.cases.iter().filter(|c| lists_nodes(c)) {
        for n in &c.nodes {
            out.push([
                c.id.clone(),
                node_name(n),
                n.role.clone(),
                if n.placement.is_empty() {
                    "-".to_string()
                } else {
                    n.placement.clone()
                },
                numbers::value(n.cpu_ms),
                format!("{:.1}", n.peak_rss_kib as f64 / 1024.0),
                or_dash(n.send_msgs_per_sec.map(numbers::grouped_f)),
                or_dash(n.delivered_msgs_per_sec.map(numbers::grouped_f)),
                or_dash(n.forwarded.map(grouped)),
            ]);
        }
    }
    out
}

/// Why replicas of the listed nodes were cut short, as (case id, reason), each reason
/// once with how often it recurred over replicas and repetitions: `sub1: idle: ... (2
/// times)`.
pub fn cut_short(run: &RunResult) -> Vec<(&str, String)> {
    let mut out = Vec::new();
    for c in run.cases.iter().filter(|c| lists_nodes(c)) {
        for n in &c.nodes {
            let mut seen: Vec<(&str, usize)> = Vec::new();
            for r in &n.cut_short {
                match seen.iter_mut().find(|(s, _)| *s == r.as_str()) {
                    Some((_, k)) => *k += 1,
                    None => seen.push((r.as_str(), 1)),
                }
            }
            for (r, k) in seen {
                let text = if k > 1 {
                    format!("{r} ({k} times)")
                } else {
                    r.to_string()
                };
                out.push((c.id.as_str(), text));
            }
        }
    }
    out
}
