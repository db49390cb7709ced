//! The pieces every chart draws with: sizes and estimated text widths, escaping, points and
//! series, the legend, the opening of an svg element, axis ticks and their labels.

use super::axis::Axis;
use super::style::{marker, Dash, Marker};
use std::fmt::Write;

pub(super) const FONT: f64 = 12.0;
/// Estimated advance of one character at `FONT`, generous so text never overflows.
pub(super) const CHAR_W: f64 = 7.0;
pub(super) const TITLE_FONT: f64 = 14.0;
pub(super) const PLOT_W: f64 = 640.0;
pub(super) const PLOT_H: f64 = 300.0;
pub(super) const LEGEND_ROW: f64 = 20.0;
pub(super) const LEGEND_SWATCH: f64 = 30.0;
pub(super) const GAP: f64 = 36.0;

/// Text escaped for XML and HTML (element content and quoted attributes).
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

pub(super) fn text_w(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_W
}

/// One point, with an optional interval drawn as an error bar.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub lo: Option<f64>,
    pub hi: Option<f64>,
}

impl Point {
    /// A point without an interval.
    pub fn at(x: f64, y: f64) -> Point {
        Point {
            x,
            y,
            lo: None,
            hi: None,
        }
    }
}

/// A named line.
pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub dash: Dash,
    pub marker: Marker,
    pub points: Vec<Point>,
}

/// Values an axis must hold to show these series, error bars included.
pub fn y_values(series: &[Series]) -> Vec<f64> {
    series
        .iter()
        .flat_map(|s| s.points.iter())
        .flat_map(|p| [Some(p.y), p.lo, p.hi])
        .flatten()
        .collect()
}

/// A legend entry drawn beside the plot.
#[derive(Debug, Clone)]
pub struct Key {
    pub name: String,
    pub color: &'static str,
    /// The line style; None draws a filled block, as for bars.
    pub dash: Option<Dash>,
    pub marker: Marker,
}

impl Key {
    /// A line sample.
    pub fn line(name: &str, color: &'static str, dash: Dash, marker: Marker) -> Key {
        Key {
            name: name.to_string(),
            color,
            dash: Some(dash),
            marker,
        }
    }

    /// A filled block.
    pub fn block(name: &str, color: &'static str) -> Key {
        Key {
            name: name.to_string(),
            color,
            dash: None,
            marker: Marker::None,
        }
    }
}

pub(super) fn legend_width(keys: &[Key]) -> f64 {
    keys.iter()
        .map(|k| LEGEND_SWATCH + 8.0 + text_w(&k.name))
        .fold(0.0, f64::max)
}

pub(super) fn legend(out: &mut String, keys: &[Key], x: f64, y: f64) {
    for (i, k) in keys.iter().enumerate() {
        let cy = y + i as f64 * LEGEND_ROW + LEGEND_ROW / 2.0;
        let color = k.color;
        match k.dash {
            Some(dash) => {
                let _ = write!(
                    out,
                    "<line x1=\"{x:.1}\" y1=\"{cy:.1}\" x2=\"{:.1}\" y2=\"{cy:.1}\" \
                     stroke=\"{color}\" stroke-width=\"2\"{}/>",
                    x + LEGEND_SWATCH,
                    dash.attr()
                );
                marker(out, k.marker, x + LEGEND_SWATCH / 2.0, cy, color);
            }
            None => {
                let _ = write!(
                    out,
                    "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"12\" \
                     fill=\"{color}\"/>",
                    x + 4.0,
                    cy - 6.0,
                    LEGEND_SWATCH - 8.0
                );
            }
        }
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" dominant-baseline=\"middle\">{}</text>",
            x + LEGEND_SWATCH + 8.0,
            cy,
            esc(&k.name)
        );
    }
}

/// Opening of an svg element with an accessible title.
pub(in crate::report) fn open(out: &mut String, id: &str, title: &str, w: f64, h: f64) {
    let _ = write!(
        out,
        "<svg class=\"chart\" viewBox=\"0 0 {w:.0} {h:.0}\" width=\"{w:.0}\" height=\"{h:.0}\" \
         role=\"img\" aria-labelledby=\"{id}-t\" font-size=\"{FONT}\">\
         <title id=\"{id}-t\">{}</title>\
         <text class=\"ctitle\" x=\"12\" y=\"20\" font-size=\"{TITLE_FONT}\" \
         font-weight=\"bold\">{}</text>",
        esc(title),
        esc(title)
    );
}

/// The ticks of a horizontal axis drawn `width` wide from `left`, under a plot whose bottom
/// edge is at `bottom`: a mark at every tick, a label where there is room.
pub(super) fn x_ticks(out: &mut String, axis: &Axis, left: f64, width: f64, bottom: f64) {
    let stride = label_stride(&axis.ticks, width, axis.lo, axis.hi, true);
    for (i, (t, label)) in axis.ticks.iter().enumerate() {
        let x = left + (t - axis.lo) / (axis.hi - axis.lo) * width;
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" y1=\"{bottom:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>",
            bottom + 5.0
        );
        if i % stride == 0 {
            let _ = write!(
                out,
                "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                bottom + 19.0,
                esc(label)
            );
        }
    }
}

/// How many tick labels to skip so neighbours do not touch: every `k`-th is drawn. Labels
/// of a horizontal axis need their width, those of a vertical axis their height.
pub(super) fn label_stride(
    ticks: &[(f64, String)],
    span_px: f64,
    lo: f64,
    hi: f64,
    horizontal: bool,
) -> usize {
    if ticks.len() < 2 || hi <= lo {
        return 1;
    }
    let widest = if horizontal {
        ticks.iter().map(|t| text_w(&t.1)).fold(0.0, f64::max) + 10.0
    } else {
        FONT + 4.0
    };
    let closest = ticks
        .windows(2)
        .map(|w| (w[1].0 - w[0].0) / (hi - lo) * span_px)
        .fold(f64::INFINITY, f64::min);
    if closest <= 0.0 {
        return 1;
    }
    ((widest / closest).ceil() as usize).max(1)
}

/// Distance between two lines of an axis label.
pub(super) const LINE_H: f64 = 15.0;

/// An axis label in one line, or two split at the space nearest the middle if it is wider
/// than `room` pixels.
pub(super) fn split_label(label: &str, room: f64) -> Vec<String> {
    if text_w(label) <= room {
        return vec![label.to_string()];
    }
    let mid = label.len() / 2;
    let cut = label
        .char_indices()
        .filter(|&(_, c)| c == ' ')
        .map(|(i, _)| i)
        .min_by_key(|&i| i.abs_diff(mid));
    match cut {
        Some(i) => vec![label[..i].to_string(), label[i + 1..].to_string()],
        None => vec![label.to_string()],
    }
}
