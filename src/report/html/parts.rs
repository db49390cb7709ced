//! The building blocks the sections share: a figure with its caption, a table of text
//! cells, a list under a heading, prose with command-line flags set as code, and the
//! value axis of a chart.

use crate::report::layout::Grid;
use crate::report::svg::{self, esc, Axis, Dash, LineChart, Marker, Point, Scale, Series};
use crate::units;
use std::fmt::Write;

pub(super) fn figure(out: &mut String, svg: &str, caption: &str) {
    let _ = writeln!(
        out,
        "<figure>{svg}<figcaption>{}</figcaption></figure>",
        esc(caption)
    );
}

/// Width of the page's text column (`main` less its padding), px.
const PAGE_W: f64 = 1124.0;
/// Estimated advance of a character of table text, px (generous: digits of the usual
/// sans-serif fonts at 16 px are 9 to 10 px wide).
const TABLE_CHAR_W: f64 = 9.5;
/// A cell's padding and border, px.
const CELL_PAD: f64 = 22.0;

/// A grid as tables that fit the page: a grid with more columns than fit is continued in
/// further tables, each with the row labels and its own header, as the text report
/// continues it in blocks (no horizontal scrolling on a desktop window). A matrix's
/// pattern names head their rows.
pub(super) fn grid(out: &mut String, g: &Grid) {
    let _ = writeln!(out, "<h3>{}</h3>", esc(&g.title));
    let text_w = |s: &str| s.chars().count() as f64 * TABLE_CHAR_W;
    let matrix = !g.row_groups.is_empty();
    for block in g.blocks(PAGE_W, CELL_PAD, text_w) {
        out.push_str("<div class=\"tw\"><table class=\"grid\"><thead><tr>");
        if matrix {
            out.push_str("<th class=\"l\">pattern</th><th class=\"l\">figure</th>");
        } else {
            let _ = write!(out, "<th class=\"l\">{}</th>", esc(&g.corner));
        }
        for c in &g.columns[block.clone()] {
            let _ = write!(out, "<th class=\"n\">{}</th>", esc(c));
        }
        out.push_str("</tr></thead><tbody>\n");
        // Where each row group starts: (row index, name, rows).
        let mut starts = Vec::new();
        let mut at = 0;
        for (name, n) in &g.row_groups {
            starts.push((at, name, *n));
            at += n;
        }
        for (r, (label, cells)) in g.rows.iter().enumerate() {
            out.push_str("<tr>");
            if let Some((_, name, n)) = starts.iter().find(|s| s.0 == r) {
                let _ = write!(
                    out,
                    "<th class=\"grp\" rowspan=\"{n}\" scope=\"rowgroup\">{}</th>",
                    esc(name)
                );
            }
            let _ = write!(out, "<th>{}</th>", esc(label));
            for c in &cells[block.clone()] {
                let class = if c == "failed" { "n fail" } else { "n" };
                let _ = write!(out, "<td class=\"{class}\">{}</td>", esc(c));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
    }
}

/// A table whose first `left` columns are text; the cells of `warn` rows' column
/// `warn_col` are marked.
pub(super) fn plain_table<R: AsRef<[String]>>(
    out: &mut String,
    heads: &[&str],
    rows: &[R],
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
        for (i, c) in row.as_ref().iter().enumerate() {
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

/// Text escaped for HTML, with command-line flags (`--count`) set as code so a line is
/// never broken inside them.
pub(super) fn prose(s: &str) -> String {
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

pub(super) fn items(out: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    let _ = writeln!(out, "<h2>{}</h2>\n<ul class=\"items\">", esc(title));
    for i in items {
        let _ = writeln!(out, "<li>{i}</li>");
    }
    out.push_str("</ul>\n");
}

/// The y values of the series' points (not of their intervals).
pub(super) fn medians(series: &[Series]) -> Vec<f64> {
    series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.y))
        .collect()
}

/// A value axis holding `values`: linear from zero, or logarithmic (and labelled so) when
/// the `medians` span more than 30 times.
pub(super) fn y_axis(label: &str, medians: &[f64], values: Vec<f64>) -> Axis {
    let scale = svg::auto_scale(medians, 30.0);
    let label = if scale == Scale::Log10 {
        format!("{label}, log scale")
    } else {
        label.to_string()
    };
    // Every charted quantity (latency, rates, counts) is at least zero.
    let values: Vec<f64> = values.into_iter().map(|v| v.max(0.0)).collect();
    let ticks = if scale == Scale::Log10 {
        units::log_ticks
    } else {
        units::linear_ticks
    };
    Axis::new(&label, scale, values, units::compact).relabel(ticks)
}

/// A latency chart, ms, against `x`: p50 (solid, circles), p99 (dashed, squares) and max
/// (dotted), in the palette's first three colours.
pub(super) fn latency_chart(
    id: String,
    title: String,
    x: Axis,
    [p50, p99, max]: [Vec<Point>; 3],
) -> String {
    let series: Vec<Series> = [
        ("p50", Dash::Solid, Marker::Circle, p50),
        ("p99", Dash::Dashed, Marker::Square, p99),
        ("max", Dash::Dotted, Marker::None, max),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (name, dash, marker, points))| Series {
        name: name.to_string(),
        color: svg::PALETTE[i],
        dash,
        marker,
        points,
    })
    .collect();
    let ys: Vec<f64> = svg::y_values(&series).into_iter().chain([0.0]).collect();
    LineChart {
        id,
        title,
        x,
        y: y_axis("latency (ms)", &medians(&series), ys),
        series,
        legend: Vec::new(),
        end_labels: false,
    }
    .render()
}
