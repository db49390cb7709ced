//! The HTML report: one self-contained page (inline CSS and SVG; no script, font or other
//! file is fetched) to open in any browser. The environment first, then the findings of
//! `zmqperf diagnose`, then charts of latency, throughput and bandwidth by message size,
//! latency percentile spectra, delivery, and the same tables as the Markdown report, each
//! topology case drawn as a graph of its nodes and edges under its group's table.

use super::layout::{self, Grid, Group};
use super::svg::{self, esc, Axis, BarChart, Dash, Key, LineChart, Marker, Point, Scale, Series};
use super::Reporter;
use super::{graph, numbers};
use crate::endpoint::Transport;
use crate::model::{CaseResult, Estimate, Finding, Kind, Measure, RunResult};
use std::fmt::Write;

/// Styles of the topology graphs and tables, on pages that have them.
const TOPOLOGY_CSS: &str = "td.warn { color: #a32a00; }
h4 { font-size: 0.95em; margin: 16px 0 4px; }
";

/// Renders a run as one HTML page.
pub struct Html;

const CSS: &str = "
:root { color-scheme: light; }
body { font-family: system-ui, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, 'DejaVu Sans', sans-serif;
  color: #1a1a1a; background: #fff; margin: 0; line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.25em; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.02em; margin: 22px 0 8px; }
.sub { color: #555; margin: 0 0 16px; }
.status { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 0.85em;
  background: #e3f1e3; color: #1d5c1d; }
.status.bad { background: #fbe3d6; color: #8a2b00; }
.env { display: grid; grid-template-columns: max-content 1fr; gap: 3px 18px; margin: 0;
  padding: 12px 16px; background: #f6f7f9; border: 1px solid #dde1e6; border-radius: 6px; }
.env dt { font-weight: 600; color: #444; }
.env dd { margin: 0; overflow-wrap: anywhere; }
figure { margin: 12px 0 24px; overflow-x: auto; }
figcaption { color: #555; font-size: 0.9em; margin-top: 4px; max-width: 900px; }
svg.chart { max-width: 100%; height: auto; display: block; font-family: inherit; }
svg.chart text { fill: #222; }
svg.chart .alabel { font-weight: 600; }
.tw { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 6px 0 14px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d5d9de; padding: 4px 10px; }
thead th { background: #f0f2f5; }
td.n, th.n { text-align: right; white-space: nowrap; }
td.l, th.l { text-align: left; }
td.fail { color: #a32a00; font-weight: 600; }
tbody th { text-align: left; font-weight: 600; background: #fafbfc; white-space: nowrap; }
ul.items li { margin: 3px 0; }
code { white-space: nowrap; font-family: ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 0.92em; }
.note { color: #555; }
code.cmd { white-space: pre-wrap; overflow-wrap: anywhere; }
.finding { border: 1px solid #dde1e6; border-left: 5px solid #0072B2; border-radius: 6px;
  padding: 4px 16px 8px; margin: 14px 0; background: #fbfcfd; }
.finding.warning { border-left-color: #D55E00; }
.finding h3 { margin: 10px 0 6px; }
.finding p { margin: 6px 0; max-width: 980px; }
.sev { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 0.8em;
  font-weight: 600; background: #e1eef8; color: #004d80; vertical-align: 1px; }
.sev.warning { background: #fbe3d6; color: #8a2b00; }
ul.ev { columns: 3 240px; margin: 6px 0; padding-left: 18px; font-variant-numeric: tabular-nums; }
ul.ev li { break-inside: avoid; }
";

fn size_label(v: f64) -> String {
    numbers::bytes(v.max(0.0) as u64)
}

type Pick = fn(&CaseResult) -> &Option<Estimate>;

/// One statistic a by-size chart shows of each group: its name in the legend, its line
/// style and marker (line chart) or its colour (bar chart), and where it comes from.
struct Stat {
    name: &'static str,
    dash: Dash,
    marker: Marker,
    bar: &'static str,
    pick: Pick,
}

const LATENCY: [Stat; 3] = [
    Stat {
        name: "p50",
        dash: Dash::Solid,
        marker: Marker::Circle,
        bar: "#0072B2",
        pick: |c| &c.summary.p50_us,
    },
    Stat {
        name: "p99",
        dash: Dash::Dashed,
        marker: Marker::Triangle,
        bar: "#D55E00",
        pick: |c| &c.summary.p99_us,
    },
    Stat {
        name: "mean",
        dash: Dash::Dotted,
        marker: Marker::Square,
        bar: "#009E73",
        pick: |c| &c.summary.latency_us,
    },
];

const THROUGHPUT: [Stat; 2] = [
    Stat {
        name: "delivered",
        dash: Dash::Solid,
        marker: Marker::Circle,
        bar: "#0072B2",
        pick: |c| &c.summary.msgs_per_sec,
    },
    Stat {
        name: "sent",
        dash: Dash::Dashed,
        marker: Marker::Ring,
        bar: "#56B4E9",
        pick: |c| &c.summary.send_msgs_per_sec,
    },
];

const BANDWIDTH: [Stat; 1] = [Stat {
    name: "delivered",
    dash: Dash::Solid,
    marker: Marker::Circle,
    bar: "#0072B2",
    pick: |c| &c.summary.mbit_per_sec,
}];

/// A chart of one statistic family by message size.
struct SizeChart<'a> {
    id: &'a str,
    /// What is shown, capitalised: the start of the chart titles.
    what: &'a str,
    y_label: &'a str,
    stats: &'a [Stat],
    /// Formats values written on bars.
    value_fmt: fn(f64) -> String,
}

/// The median of an estimate as a point; the interval is cut at zero (the t-interval of
/// two or three repetitions can reach below it, the quantities cannot).
fn point(c: &CaseResult, e: &Option<Estimate>) -> Option<Point> {
    let e = e.as_ref()?;
    if c.message_size == 0 || !e.median.is_finite() {
        return None;
    }
    Some(Point {
        x: c.message_size as f64,
        y: e.median,
        lo: e.ci_low.is_finite().then_some(e.ci_low.max(0.0)),
        hi: e.ci_high.is_finite().then_some(e.ci_high),
    })
}

impl SizeChart<'_> {
    /// The charts of `groups`: none if nothing has a value; bars if every value is at the
    /// same message size; otherwise lines by size, one chart per transport when there are
    /// more groups (over four) than one chart shows legibly. The flag is true for bars.
    fn render(&self, groups: &[&Group<'_>]) -> Vec<(String, bool)> {
        let has = |c: &CaseResult| self.stats.iter().any(|s| point(c, (s.pick)(c)).is_some());
        let groups: Vec<&Group<'_>> = groups
            .iter()
            .copied()
            .filter(|g| g.cases.iter().any(|c| has(c)))
            .collect();
        let mut sizes: Vec<usize> = groups
            .iter()
            .flat_map(|g| g.cases.iter().filter(|c| has(c)).map(|c| c.message_size))
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        match sizes.len() {
            0 => Vec::new(),
            1 => vec![(self.bars(&groups, sizes[0]), true)],
            _ if groups.len() > 4 => {
                let mut transports: Vec<Transport> = Vec::new();
                for g in &groups {
                    if !transports.contains(&g.transport) {
                        transports.push(g.transport);
                    }
                }
                transports
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let part: Vec<&Group<'_>> = groups
                            .iter()
                            .copied()
                            .filter(|g| g.transport == *t)
                            .collect();
                        let title = format!("{} by message size over {t} (closed loop)", self.what);
                        (self.lines(&part, &format!("{}{i}", self.id), &title), false)
                    })
                    .collect()
            }
            _ => {
                let title = format!("{} by message size (closed loop)", self.what);
                vec![(self.lines(&groups, self.id, &title), false)]
            }
        }
    }

    fn lines(&self, groups: &[&Group<'_>], id: &str, title: &str) -> String {
        let mut series = Vec::new();
        let mut legend = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            let color = svg::PALETTE[i % svg::PALETTE.len()];
            for st in self.stats {
                series.push(Series {
                    name: format!("{} {}", g.name(), st.name),
                    color,
                    dash: st.dash,
                    marker: st.marker,
                    points: g
                        .cases
                        .iter()
                        .filter_map(|c| point(c, (st.pick)(c)))
                        .collect(),
                });
            }
            legend.push(Key::line(&g.name(), color, Dash::Solid, Marker::None));
        }
        if self.stats.len() > 1 {
            for st in self.stats {
                legend.push(Key::line(st.name, "#555555", st.dash, st.marker));
            }
        }
        series.retain(|s| !s.points.is_empty());
        let xs: Vec<f64> = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.x))
            .collect();
        // The axis holds every median, and the intervals up to half as high again: a wide
        // interval of a short run would otherwise squash all lines flat. Longer whiskers
        // run out of the frame, which shows they go on.
        let top = medians(&series).into_iter().fold(0.0, f64::max);
        let ys: Vec<f64> = svg::y_values(&series)
            .into_iter()
            .map(|v| v.min(top * 1.5))
            .collect();
        LineChart {
            id: id.to_string(),
            title: title.to_string(),
            x: Axis::new(
                "message size (bytes, log2 scale)",
                Scale::Log2,
                xs,
                size_label,
            ),
            y: y_axis(self.y_label, &medians(&series), ys),
            series,
            legend,
        }
        .render()
    }

    fn bars(&self, groups: &[&Group<'_>], size: usize) -> String {
        let value = |g: &Group<'_>, st: &Stat| {
            g.cases
                .iter()
                .find(|c| c.message_size == size)
                .and_then(|c| point(c, (st.pick)(c)))
                .map(|p| p.y)
        };
        BarChart {
            id: self.id.to_string(),
            title: format!(
                "{} at {} (closed loop)",
                self.what,
                numbers::bytes(size as u64)
            ),
            x_label: self.y_label.to_string(),
            categories: groups.iter().map(|g| g.name()).collect(),
            metrics: self
                .stats
                .iter()
                .map(|s| (s.name.to_string(), s.bar))
                .collect(),
            values: groups
                .iter()
                .map(|g| self.stats.iter().map(|st| value(g, st)).collect())
                .collect(),
            value_fmt: self.value_fmt,
        }
        .render()
    }
}

/// The y values of the series' points (not of their intervals).
fn medians(series: &[Series]) -> Vec<f64> {
    series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.y))
        .collect()
}

/// A value axis holding `values`: linear from zero, or logarithmic (and labelled so) when
/// the `medians` span more than 30 times.
fn y_axis(label: &str, medians: &[f64], values: Vec<f64>) -> Axis {
    let scale = svg::auto_scale(medians, 30.0);
    let label = if scale == Scale::Log10 {
        format!("{label}, log scale")
    } else {
        label.to_string()
    };
    // Every charted quantity (latency, rates, counts) is at least zero.
    let values: Vec<f64> = values.into_iter().map(|v| v.max(0.0)).collect();
    Axis::new(&label, scale, values, numbers::compact)
}

/// Points of a percentile spectrum: x in nines (`-log10(1 - q)`), y in us; up to the
/// quantile of the last sample.
fn spectrum(buckets: &[(u64, u64)]) -> Vec<Point> {
    const STEPS: usize = 400;
    let n: u64 = buckets.iter().map(|b| b.1).sum();
    if n == 0 {
        return Vec::new();
    }
    let x_max = (n as f64).log10().max(1.0);
    let mut out = Vec::with_capacity(STEPS + 1);
    let mut b = 0;
    let mut cum = buckets[0].1;
    for i in 0..=STEPS {
        let x = x_max * i as f64 / STEPS as f64;
        let rank = if i == STEPS {
            n
        } else {
            let q = 1.0 - 10f64.powf(-x);
            ((q * n as f64 - 1e-9).ceil() as u64).clamp(1, n)
        };
        while cum < rank && b + 1 < buckets.len() {
            b += 1;
            cum += buckets[b].1;
        }
        let y = buckets[b].0 as f64 / 1000.0;
        out.push(Point::at(x, y));
    }
    out
}

/// A case's percentile spectrum.
type CaseCurve<'a> = (&'a CaseResult, Vec<Point>);

/// The cases of one transport and load, drawn in one spectrum chart.
struct SpectrumPart {
    transport: Transport,
    load: String,
    open_loop: bool,
    curves: Vec<(String, Vec<Point>)>,
}

/// A spectrum chart with one line per (name, points).
fn spectrum_chart(
    id: String,
    title: String,
    open_loop: bool,
    curves: Vec<(String, Vec<Point>)>,
) -> String {
    let n = curves.len();
    let series: Vec<Series> = curves
        .into_iter()
        .enumerate()
        .map(|(i, (name, points))| {
            let (color, dash) = svg::ordered_style(i, n);
            Series {
                name,
                color,
                dash,
                marker: Marker::None,
                points,
            }
        })
        .collect();
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    let what = if open_loop {
        "latency from the due send time (µs)"
    } else {
        "one-way latency (µs)"
    };
    LineChart {
        id,
        title,
        x: Axis::new(
            "percentile (%), log scale of 1 / (1 - p)",
            Scale::Nines,
            xs,
            |v| v.to_string(),
        ),
        y: y_axis(what, &medians(&series), svg::y_values(&series)),
        series,
        legend: Vec::new(),
    }
    .render()
}

/// Percentile spectra of the last repetition of the latency and open-loop cases: one chart
/// per group with a line per message size; when every group has a single size, one chart
/// per transport and load with a line per pattern instead.
fn spectrum_charts(groups: &[Group<'_>]) -> Vec<String> {
    let curves: Vec<(&Group<'_>, Vec<CaseCurve<'_>>)> = groups
        .iter()
        .filter(|g| g.kind == Kind::Latency || g.open_rate.is_some())
        .map(|g| {
            let cs = g
                .cases
                .iter()
                .filter_map(|c| {
                    let h = c.repetitions.last()?.latency_histogram.as_ref()?;
                    Some((*c, spectrum(&h.buckets())))
                })
                .filter(|(_, points)| !points.is_empty())
                .collect::<Vec<_>>();
            (g, cs)
        })
        .filter(|(_, cs)| !cs.is_empty())
        .collect();
    let single = curves.len() > 1 && curves.iter().all(|(_, cs)| cs.len() == 1);
    if !single {
        return curves
            .into_iter()
            .enumerate()
            .map(|(i, (g, cs))| {
                spectrum_chart(
                    format!("spec{i}"),
                    format!(
                        "Latency percentiles: {} over {}, {}",
                        g.pattern,
                        g.transport,
                        g.load()
                    ),
                    g.open_rate.is_some(),
                    cs.into_iter()
                        .map(|(c, p)| (numbers::bytes(c.message_size as u64), p))
                        .collect(),
                )
            })
            .collect();
    }
    // One curve per group: gather the groups of a transport and load in one chart.
    let mut parts: Vec<SpectrumPart> = Vec::new();
    for (g, cs) in curves {
        for (c, points) in cs {
            let name = format!("{} {}", g.pattern, numbers::bytes(c.message_size as u64));
            let load = g.load();
            match parts
                .iter_mut()
                .find(|p| p.transport == g.transport && p.load == load)
            {
                Some(p) => p.curves.push((name, points)),
                None => parts.push(SpectrumPart {
                    transport: g.transport,
                    load,
                    open_loop: g.open_rate.is_some(),
                    curves: vec![(name, points)],
                }),
            }
        }
    }
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            spectrum_chart(
                format!("spec{i}"),
                format!("Latency percentiles over {}, {}", p.transport, p.load),
                p.open_loop,
                p.curves,
            )
        })
        .collect()
}

fn lossy(c: &CaseResult) -> bool {
    c.summary.lost > 0 || c.summary.duplicated > 0 || c.summary.reordered > 0
}

/// The delivery figure: bars for the cases that lost, duplicated or reordered messages, a
/// sentence when every checked stream was clean, nothing when no case checked its stream.
/// True when a chart was drawn.
fn delivery(out: &mut String, run: &RunResult) -> bool {
    let checked = run
        .cases
        .iter()
        .filter(|c| lossy(c) || layout::loss(c).is_some())
        .count();
    let bad: Vec<&CaseResult> = run.cases.iter().filter(|c| lossy(c)).collect();
    if bad.is_empty() {
        if checked > 0 {
            out.push_str(
                "<p><strong>Delivery: no loss.</strong> Every message of every checked stream \
                 arrived once and in order.</p>\n",
            );
        }
        return false;
    }
    let chart = BarChart {
        id: "loss".to_string(),
        title: "Delivery problems per case, over all repetitions".to_string(),
        x_label: "messages".to_string(),
        categories: bad.iter().map(|c| c.id.clone()).collect(),
        metrics: vec![
            ("lost".to_string(), "#D55E00"),
            ("duplicated".to_string(), "#E69F00"),
            ("reordered".to_string(), "#0072B2"),
        ],
        values: bad
            .iter()
            .map(|c| {
                [c.summary.lost, c.summary.duplicated, c.summary.reordered]
                    .iter()
                    .map(|&v| Some(v as f64))
                    .collect()
            })
            .collect(),
        value_fmt: numbers::grouped_f,
    };
    let mut caption = "Messages lost, duplicated or reordered, from the sequence numbers of \
                       each stream."
        .to_string();
    match checked - bad.len() {
        0 => {}
        1 => caption.push_str(" The other case that checked its stream had no loss."),
        n => caption.push_str(&format!(
            " The {n} other cases that checked their streams had no loss."
        )),
    }
    figure(out, &chart.render(), &caption);
    true
}

fn figure(out: &mut String, svg: &str, caption: &str) {
    let _ = writeln!(
        out,
        "<figure>{svg}<figcaption>{}</figcaption></figure>",
        esc(caption)
    );
}

fn grid(out: &mut String, g: &Grid) {
    let _ = writeln!(out, "<h3>{}</h3>", esc(&g.title));
    out.push_str("<div class=\"tw\"><table><thead><tr>");
    let _ = write!(out, "<th class=\"l\">{}</th>", esc(&g.corner));
    for c in &g.columns {
        let _ = write!(out, "<th class=\"n\">{}</th>", esc(c));
    }
    out.push_str("</tr></thead><tbody>\n");
    for (label, cells) in &g.rows {
        let _ = write!(out, "<tr><th>{}</th>", esc(label));
        for c in cells {
            let class = if c == "failed" { "n fail" } else { "n" };
            let _ = write!(out, "<td class=\"{class}\">{}</td>", esc(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// The graph of a topology case, under a heading naming the case.
fn topology_figure(out: &mut String, run: &RunResult, c: &CaseResult) {
    let n = run
        .cases
        .iter()
        .position(|x| std::ptr::eq(x, c))
        .unwrap_or(0);
    let Some(svg) = graph::topology(&format!("topo{n}"), c) else {
        return;
    };
    let _ = writeln!(
        out,
        "<h4 id=\"topology-{n}\">Topology of <code>{}</code></h4>",
        esc(&c.id)
    );
    figure(
        out,
        &svg,
        "Nodes by role: sources and pings on the left, proxies in the middle, sinks and \
         echoes on the right; ×N counts a node's replicas. Each arrow carries the streams \
         measured between two nodes over all repetitions: messages per second delivered \
         (median over the repetitions), mean latency end to end, and loss; lossy arrows \
         are orange.",
    );
}

/// A table whose first `left` columns are text; the cells of `warn` rows' column
/// `warn_col` are marked.
fn plain_table<const N: usize>(
    out: &mut String,
    heads: &[&str; N],
    rows: &[[String; N]],
    left: usize,
    warn: &[bool],
    warn_col: usize,
) {
    out.push_str("<div class=\"tw\"><table><thead><tr>");
    for (i, h) in heads.iter().enumerate() {
        let class = if i < left { "l" } else { "n" };
        let _ = write!(out, "<th class=\"{class}\">{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>\n");
    for (r, row) in rows.iter().enumerate() {
        out.push_str("<tr>");
        for (i, c) in row.iter().enumerate() {
            let class = match (i < left, warn.get(r) == Some(&true) && i == warn_col) {
                (true, _) => "l",
                (false, true) => "n warn",
                (false, false) => "n",
            };
            let _ = write!(out, "<td class=\"{class}\">{}</td>", esc(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// The edges and nodes of the cases that list them, as in the other reports.
fn topology_tables(out: &mut String, run: &RunResult) {
    let edges = layout::edges(run);
    if !edges.is_empty() {
        out.push_str(
            "<h2>Edges</h2>\n<p class=\"note\">Each stream from a sending replica to a \
             receiver, over all repetitions: messages delivered, their rate (median over the \
             repetitions), loss, and mean and 99th percentile latency end to end.</p>\n",
        );
        let lossy: Vec<bool> = run
            .cases
            .iter()
            .filter(|c| layout::lists_edges(c))
            .flat_map(|c| c.edges.iter().map(layout::edge_lossy))
            .collect();
        plain_table(out, &layout::EDGE_HEADS, &edges, 2, &lossy, 4);
    }
    let nodes = layout::nodes(run);
    if !nodes.is_empty() {
        out.push_str(
            "<h2>Nodes</h2>\n<p class=\"note\">Each node with its replicas, over all \
             repetitions: CPU time (user + system), largest peak memory of a replica, rates \
             sent and delivered (medians over the repetitions) and messages forwarded.</p>\n",
        );
        plain_table(out, &layout::NODE_HEADS, &nodes, 4, &[], 0);
        let cut = layout::cut_short(run);
        if !cut.is_empty() {
            out.push_str("<p>Cut short (idle for the timeout):</p>\n<ul class=\"items\">\n");
            for (id, why) in cut {
                let _ = writeln!(out, "<li><code>{}</code>: {}</li>", esc(id), esc(&why));
            }
            out.push_str("</ul>\n");
        }
    }
}

/// Text escaped for HTML, with command-line flags (`--count`) set as code so a line is
/// never broken inside them.
fn prose(s: &str) -> String {
    let words: Vec<String> = s
        .split(' ')
        .map(|w| {
            let end = w.trim_end_matches(['.', ',', ';', ':', ')']);
            if end.len() > 2 && end.starts_with("--") {
                format!("<code>{}</code>{}", esc(end), esc(&w[end.len()..]))
            } else {
                esc(w)
            }
        })
        .collect();
    words.join(" ")
}

/// The findings of `zmqperf diagnose`: a box per finding with its severity, title, what
/// happened, cause, remedy, evidence and gaps.
fn findings(out: &mut String, run: &RunResult) {
    out.push_str("<h2>Findings</h2>\n");
    let _ = writeln!(
        out,
        "<p class=\"note\">{}</p>",
        esc(&layout::findings_count(run))
    );
    for v in layout::findings(run) {
        let f = v.finding;
        let sev = f.severity.name();
        let _ = writeln!(
            out,
            "<div class=\"finding {sev}\" id=\"finding-{}\">\n<h3><span class=\"sev {sev}\">{sev}</span> \
             {}</h3>\n<p><code>{}</code> &middot; {}</p>",
            esc(&f.id.replace('/', "-")),
            esc(&f.title),
            esc(&f.id),
            prose(&f.observed)
        );
        if let Some(e) = &f.error {
            let _ = writeln!(out, "<p><strong>Failed:</strong> {}</p>", prose(e));
        }
        let _ = writeln!(
            out,
            "<p><strong>Cause:</strong> {}</p>\n<p><strong>Remedy:</strong> {}</p>",
            prose(&f.cause),
            prose(&f.remedy)
        );
        if !v.evidence.is_empty() {
            out.push_str("<ul class=\"ev\">");
            for (k, val) in &v.evidence {
                let _ = write!(out, "<li><code>{}</code> {}</li>", esc(k), esc(val));
            }
            out.push_str("</ul>\n");
        }
        if let Some(chart) = depth_chart(f) {
            figure(
                out,
                &chart,
                "Latency of the messages a quarter, half, three quarters of the way through the \
                 stream and at its end, against the number of messages queued ahead of each when \
                 it was sent; dashed: that number divided by the consumer's measured rate \
                 (Little's law).",
            );
        }
        if !v.gaps.is_empty() {
            out.push_str("<ul class=\"items\">");
            for g in &v.gaps {
                let _ = write!(out, "<li>Gap: {}</li>", esc(g));
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</div>\n");
    }
}

/// For a deep-queue finding, latency against queue depth from its evidence, with the wait
/// Little's law predicts from the consumer's rate; None for other findings.
fn depth_chart(f: &Finding) -> Option<String> {
    if f.experiment != "deep-queue" {
        return None;
    }
    let num = |k: &str| match f.evidence.get(k)? {
        Measure::Count(v) => Some(*v as f64),
        Measure::Number(v) => Some(*v),
        Measure::Text(_) => None,
    };
    let mut measured = Vec::new();
    for q in [25, 50, 75, 100] {
        measured.push(Point::at(
            num(&format!("depth_at_{q}pct"))?,
            num(&format!("latency_at_{q}pct_ms"))?,
        ));
    }
    let rate = num("consumer_msgs_per_s").filter(|r| *r > 0.0)?;
    let predicted = measured
        .iter()
        .map(|p| Point::at(p.x, p.x / rate * 1000.0))
        .collect();
    let series = vec![
        Series {
            name: "measured".to_string(),
            color: svg::PALETTE[0],
            dash: Dash::Solid,
            marker: Marker::Circle,
            points: measured,
        },
        Series {
            name: "depth / consumer rate".to_string(),
            color: "#555555",
            dash: Dash::Dashed,
            marker: Marker::None,
            points: predicted,
        },
    ];
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .chain([0.0])
        .collect();
    let ys: Vec<f64> = svg::y_values(&series).into_iter().chain([0.0]).collect();
    Some(
        LineChart {
            id: format!("dq-{}", f.id.replace('/', "-")),
            title: format!("Latency by queue depth: {}", f.id),
            x: Axis::new(
                "messages queued ahead when sent",
                Scale::Linear,
                xs,
                numbers::compact,
            ),
            y: y_axis("latency (ms)", &medians(&series), ys),
            series,
            legend: Vec::new(),
        }
        .render(),
    )
}

fn items(out: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "<h2>{}</h2>\n<ul class=\"items\">", esc(title));
    for i in items {
        let _ = writeln!(out, "<li>{i}</li>");
    }
    out.push_str("</ul>\n");
}

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
            esc(&run.status)
        );
        if run.status == "interrupted" {
            out.push_str(
                "<p class=\"note\">This run was cut short: the cases below are those that \
                 finished.</p>\n",
            );
        }

        out.push_str("<h2>Environment</h2>\n<dl class=\"env\">\n");
        for (k, v) in layout::environment(run) {
            let v = if k == "command" {
                format!("<code class=\"cmd\">{}</code>", esc(&v))
            } else {
                esc(&v)
            };
            let _ = writeln!(out, "<dt>{}</dt><dd>{v}</dd>", esc(k));
        }
        out.push_str("</dl>\n");

        if !run.findings.is_empty() {
            findings(&mut out, run);
        }
        // A run of `zmqperf diagnose` has findings and no cases: no charts or tables.
        if !run.cases.is_empty() || run.findings.is_empty() {
            cases(&mut out, run);
        }
        let _ = writeln!(
            out,
            "<p class=\"note\">Made by zmqperf {}.</p>\n</main>\n</body>\n</html>",
            esc(&run.environment.zmqperf_version)
        );
        out
    }
}

/// The charts, tables, warnings, failures, delivery and resources of the cases.
fn cases(out: &mut String, run: &RunResult) {
    let groups = layout::groups(run);
    let closed = |k: Kind| -> Vec<&Group<'_>> {
        groups
            .iter()
            .filter(|g| g.kind == k && g.open_rate.is_none())
            .collect()
    };
    out.push_str("<h2>Charts</h2>\n");
    let lines_note = "Markers are medians over the repetitions; whiskers show the 95% \
                          confidence interval where it is wider than a pixel.";
    let bars_note = "Bars are medians over the repetitions; their 95% confidence intervals \
                         are in the tables below.";
    let mut drawn = 0;
    let charts = [
        (
            SizeChart {
                id: "lat",
                what: "Latency",
                y_label: "one-way latency (µs)",
                stats: &LATENCY,
                value_fmt: numbers::value,
            },
            Kind::Latency,
            "Latency cases: median (p50), 99th percentile (p99) and mean one-way latency \
                 (round trip / 2).",
        ),
        (
            SizeChart {
                id: "thr",
                what: "Throughput",
                y_label: "messages per second (msg/s)",
                stats: &THROUGHPUT,
                value_fmt: numbers::compact,
            },
            Kind::Throughput,
            "Throughput cases at full speed: messages delivered per second at the receiver \
                 and accepted per second by the sender.",
        ),
        (
            SizeChart {
                id: "bw",
                what: "Bandwidth",
                y_label: "payload bandwidth (Mbit/s)",
                stats: &BANDWIDTH,
                value_fmt: numbers::value,
            },
            Kind::Throughput,
            "Payload delivered, ZeroMQ framing not counted.",
        ),
    ];
    for (chart, kind, caption) in &charts {
        for (s, bars) in chart.render(&closed(*kind)) {
            let note = if bars { bars_note } else { lines_note };
            figure(out, &s, &format!("{caption} {note}"));
            drawn += 1;
        }
    }
    for s in spectrum_charts(&groups) {
        figure(
            out,
            &s,
            "Percentile spectrum of the last repetition: the latency below which each \
                 share of the messages fell. Each step right adds a nine (90%, 99%, 99.9%, ...), \
                 so the tail is as visible as the median.",
        );
        drawn += 1;
    }
    if delivery(out, run) {
        drawn += 1;
    }
    if drawn == 0 {
        out.push_str("<p class=\"note\">Nothing to chart: no case produced figures.</p>\n");
    }

    out.push_str("<h2>Tables</h2>\n");
    let grids = layout::grids(run);
    if grids.is_empty() {
        out.push_str("<p>No cases in this run.</p>\n");
    } else {
        out.push_str(
            "<p class=\"note\">Figures are medians over the repetitions; ± is half the \
                 width of their 95% confidence interval. Latency is the mean one-way time \
                 (round trip / 2 for latency cases).</p>\n",
        );
    }
    for (g, group) in grids.iter().zip(&groups) {
        grid(out, g);
        for c in group.cases.iter().filter(|c| !c.nodes.is_empty()) {
            topology_figure(out, run, c);
        }
    }
    topology_tables(out, run);

    let tagged = |v: Vec<(&str, &str)>| -> Vec<String> {
        v.into_iter()
            .map(|(id, t)| format!("<code>{}</code>: {}", esc(id), prose(t)))
            .collect()
    };
    items(out, "Warnings", &tagged(layout::warnings(run)));
    items(out, "Failed cases", &tagged(layout::failures(run)));
    let delivery: Vec<String> = layout::delivery(run).iter().map(|d| esc(d)).collect();
    items(out, "Delivery", &delivery);

    let resources = layout::resources(run);
    if !resources.is_empty() {
        out.push_str(
                "<h2>Resources (last repetition of each case)</h2>\n<div class=\"tw\"><table><thead><tr>",
            );
        for (i, h) in layout::RESOURCE_HEADS.iter().enumerate() {
            let class = if i < 3 { "l" } else { "n" };
            let _ = write!(out, "<th class=\"{class}\">{}</th>", esc(h));
        }
        out.push_str("</tr></thead><tbody>\n");
        for r in &resources {
            out.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                let class = if i < 3 { "l" } else { "n" };
                let _ = write!(out, "<td class=\"{class}\">{}</td>", esc(c));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spectrum_follows_the_buckets() {
        // 90 samples at 10 us, 9 at 20 us, 1 at 50 us.
        let pts = spectrum(&[(10_000, 90), (20_000, 9), (50_000, 1)]);
        let at = |x: f64| {
            pts.iter()
                .find(|p| (p.x - x).abs() < 1e-9 || p.x > x)
                .map(|p| p.y)
                .unwrap()
        };
        assert_eq!(at(0.0), 10.0);
        assert_eq!(at(0.9), 10.0);
        assert_eq!(at(1.5), 20.0);
        assert_eq!(pts.last().unwrap().y, 50.0);
        assert!(spectrum(&[]).is_empty());
    }
}
