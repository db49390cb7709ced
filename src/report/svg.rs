//! A small SVG chart kit for the HTML report: linear, logarithmic and "nines" (percentile)
//! axes with readable ticks, line series with markers and error bars, horizontal grouped
//! bars, and a legend beside the plot. Text widths are estimated, so labels are laid out
//! without a browser; everything is sized to stay inside the drawing.

use std::fmt::Write;

/// Colours that stay apart for colour-blind readers (Okabe and Ito), black last.
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

/// A dark-to-light ramp (viridis, its palest end left out) for many ordered series.
const RAMP: [&str; 10] = [
    "#440154", "#482475", "#414487", "#355f8d", "#2a788e", "#21918c", "#22a884", "#44bf70",
    "#7ad151", "#a0da39",
];

/// Colour and line style of series `i` of `n` ordered ones (e.g. message sizes): distinct
/// colours while there are few; with many, a dark-to-light ramp in order, every other
/// line dashed once neighbours may share a colour.
pub fn ordered_style(i: usize, n: usize) -> (&'static str, Dash) {
    if n <= PALETTE.len() {
        return (PALETTE[i % PALETTE.len()], Dash::Solid);
    }
    let color = RAMP[(i * (RAMP.len() - 1) / (n - 1)).min(RAMP.len() - 1)];
    let dash = if n > RAMP.len() && i % 2 == 1 {
        Dash::Dashed
    } else {
        Dash::Solid
    };
    (color, dash)
}

const FONT: f64 = 12.0;
/// Estimated advance of one character at `FONT`, generous so text never overflows.
const CHAR_W: f64 = 7.0;
const TITLE_FONT: f64 = 14.0;
const PLOT_W: f64 = 640.0;
const PLOT_H: f64 = 300.0;
const LEGEND_ROW: f64 = 20.0;
const LEGEND_SWATCH: f64 = 30.0;
const GAP: f64 = 36.0;

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

fn text_w(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_W
}

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Powers of two evenly spaced (message sizes).
    Log2,
    /// Powers of ten evenly spaced.
    Log10,
    /// Values are numbers of nines of a percentile (0 = p0, 1 = p90, 2 = p99, 3 = p99.9);
    /// ticks are labelled as percentiles.
    Nines,
}

/// An axis: its label, scale, domain (in transformed units) and ticks.
pub struct Axis {
    label: String,
    scale: Scale,
    lo: f64,
    hi: f64,
    /// (position in transformed units, label)
    ticks: Vec<(f64, String)>,
}

/// A step of 1, 2, 2.5 or 5 times a power of ten, close to `raw`.
fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * p
}

impl Axis {
    /// An axis that holds all finite `values` (for log scales, the positive ones). A log
    /// scale with nothing positive to show falls back to linear. Linear axes start at zero
    /// when all values are positive. `fmt` writes tick labels from values.
    pub fn new(
        label: &str,
        scale: Scale,
        values: impl IntoIterator<Item = f64>,
        fmt: fn(f64) -> String,
    ) -> Axis {
        let mut vals: Vec<f64> = values.into_iter().filter(|v| v.is_finite()).collect();
        if matches!(scale, Scale::Log2 | Scale::Log10) {
            vals.retain(|&v| v > 0.0);
            if vals.is_empty() {
                return Axis::new(label, Scale::Linear, [0.0, 1.0], fmt);
            }
        }
        let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
        let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (min, max) = if vals.is_empty() {
            (0.0, 1.0)
        } else {
            (min, max)
        };
        let label = label.to_string();
        match scale {
            Scale::Linear => {
                let lo = min.min(0.0);
                let mut hi = max.max(lo);
                if hi - lo < 1e-12 {
                    hi = lo + 1.0;
                }
                let step = nice_step((hi - lo) / 5.0);
                let lo = (lo / step).floor() * step;
                let hi = (hi / step).ceil() * step;
                let n = ((hi - lo) / step).round() as i64;
                let ticks = (0..=n)
                    .map(|i| {
                        let v = lo + i as f64 * step;
                        (v, fmt(v))
                    })
                    .collect();
                Axis {
                    label,
                    scale,
                    lo,
                    hi,
                    ticks,
                }
            }
            Scale::Log2 => {
                // Ticks on powers of two; the domain reaches a little past the outer values
                // so their markers are not cut in half by the frame.
                let (mut a, mut b) = (min.log2(), max.log2());
                if b - a < 2.0 {
                    let c = (a + b) / 2.0;
                    a = c - 1.0;
                    b = c + 1.0;
                }
                let (lo, hi) = (a - 0.4, b + 0.4);
                let ticks = (lo.ceil() as i64..=hi.floor() as i64)
                    .map(|e| (e as f64, fmt(2f64.powi(e as i32))))
                    .collect();
                Axis {
                    label,
                    scale,
                    lo,
                    hi,
                    ticks,
                }
            }
            Scale::Log10 => {
                // Domain and ticks on 1, 2, 5 times powers of ten.
                let below = |v: f64| {
                    let p = 10f64.powf(v.log10().floor());
                    [5.0, 2.0, 1.0]
                        .iter()
                        .map(|m| m * p)
                        .find(|&c| c <= v * (1.0 + 1e-9))
                        .unwrap_or(p)
                };
                let above = |v: f64| {
                    let p = 10f64.powf(v.log10().floor());
                    [1.0, 2.0, 5.0, 10.0]
                        .iter()
                        .map(|m| m * p)
                        .find(|&c| c >= v * (1.0 - 1e-9))
                        .unwrap_or(10.0 * p)
                };
                let lo_v = below(min);
                let mut hi_v = above(max);
                if hi_v <= lo_v {
                    hi_v = above(lo_v * 1.5);
                }
                let (lo, hi) = (lo_v.log10(), hi_v.log10());
                let decades_only = hi - lo > 3.0;
                let mut ticks = Vec::new();
                let mut e = lo.floor() as i32;
                while (e as f64) <= hi.ceil() {
                    for m in [1.0, 2.0, 5.0] {
                        let v = m * 10f64.powi(e);
                        let t = v.log10();
                        let ends = (t - lo).abs() < 1e-9 || (t - hi).abs() < 1e-9;
                        let keep = m == 1.0 || !decades_only || ends;
                        if keep && t >= lo - 1e-9 && t <= hi + 1e-9 {
                            ticks.push((t, fmt(v)));
                        }
                    }
                    e += 1;
                }
                Axis {
                    label,
                    scale,
                    lo,
                    hi,
                    ticks,
                }
            }
            Scale::Nines => {
                let hi = max.ceil().max(1.0);
                let ticks = (0..=hi as i64)
                    .map(|k| (k as f64, nines_label(k as u32)))
                    .collect();
                Axis {
                    label,
                    scale,
                    lo: 0.0,
                    hi,
                    ticks,
                }
            }
        }
    }

    fn transform(&self, v: f64) -> Option<f64> {
        let t = match self.scale {
            Scale::Linear | Scale::Nines => v,
            Scale::Log2 if v > 0.0 => v.log2(),
            Scale::Log10 if v > 0.0 => v.log10(),
            _ => return None,
        };
        t.is_finite().then_some(t)
    }

    /// Where `v` falls, 0.0 at the low end and 1.0 at the high end.
    fn frac(&self, v: f64) -> Option<f64> {
        let t = self.transform(v)?;
        Some((t - self.lo) / (self.hi - self.lo))
    }
}

/// `0`, `90`, `99`, `99.9`, `99.99`, ... for 0, 1, 2, 3, 4 nines.
pub fn nines_label(k: u32) -> String {
    match k {
        0 => "0".to_string(),
        1 => "90".to_string(),
        _ => format!("99.{}", "9".repeat(k as usize - 2))
            .trim_end_matches('.')
            .to_string(),
    }
}

/// The scale for values spread over more than `ratio` times: log, else linear.
pub fn auto_scale(values: &[f64], ratio: f64) -> Scale {
    let pos: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let min = pos.iter().copied().fold(f64::INFINITY, f64::min);
    let max = pos.iter().copied().fold(0.0, f64::max);
    if pos.len() == values.len() && !pos.is_empty() && max / min > ratio {
        Scale::Log10
    } else {
        Scale::Linear
    }
}

/// Line style of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
}

impl Dash {
    fn attr(self) -> &'static str {
        match self {
            Dash::Solid => "",
            Dash::Dashed => " stroke-dasharray=\"7 4\"",
            Dash::Dotted => " stroke-dasharray=\"2 3\"",
        }
    }
}

/// Marker drawn at each point of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    None,
    Circle,
    /// A hollow circle.
    Ring,
    Square,
    Triangle,
}

fn marker(out: &mut String, m: Marker, x: f64, y: f64, color: &str) {
    match m {
        Marker::None => {}
        Marker::Circle => {
            let _ = write!(
                out,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{color}\"/>"
            );
        }
        Marker::Ring => {
            let _ = write!(
                out,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"#fff\" stroke=\"{color}\" \
                 stroke-width=\"1.5\"/>"
            );
        }
        Marker::Square => {
            let _ = write!(
                out,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"7\" height=\"7\" fill=\"{color}\"/>",
                x - 3.5,
                y - 3.5
            );
        }
        Marker::Triangle => {
            let _ = write!(
                out,
                "<path d=\"M{:.1} {:.1}L{:.1} {:.1}L{:.1} {:.1}Z\" fill=\"{color}\"/>",
                x,
                y - 4.5,
                x + 4.5,
                y + 3.5,
                x - 4.5,
                y + 3.5
            );
        }
    }
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

fn legend_width(keys: &[Key]) -> f64 {
    keys.iter()
        .map(|k| LEGEND_SWATCH + 8.0 + text_w(&k.name))
        .fold(0.0, f64::max)
}

fn legend(out: &mut String, keys: &[Key], x: f64, y: f64) {
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
pub(super) fn open(out: &mut String, id: &str, title: &str, w: f64, h: f64) {
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
fn x_ticks(out: &mut String, axis: &Axis, left: f64, width: f64, bottom: f64) {
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
fn label_stride(
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

/// A chart of lines over an x and a y axis.
pub struct LineChart {
    /// Unique in the page (used for ids inside the svg).
    pub id: String,
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// The legend; when empty, one entry per series.
    pub legend: Vec<Key>,
}

impl LineChart {
    /// The chart as an `<svg>` element.
    pub fn render(&self) -> String {
        let y_label_w = self
            .y
            .ticks
            .iter()
            .map(|t| text_w(&t.1))
            .fold(0.0, f64::max);
        let y_lines = split_label(&self.y.label, PLOT_H - 10.0);
        let ml = 30.0 + (y_lines.len() - 1) as f64 * LINE_H + y_label_w + 8.0;
        let mt = 40.0;
        let mb = 56.0;
        let entries: Vec<Key> = if self.legend.is_empty() {
            self.series
                .iter()
                .map(|s| Key::line(&s.name, s.color, s.dash, s.marker))
                .collect()
        } else {
            self.legend.clone()
        };
        let lw = legend_width(&entries);
        let w = ml + PLOT_W + GAP + lw + 12.0;
        let h = (mt + PLOT_H + mb).max(mt + entries.len() as f64 * LEGEND_ROW + 12.0);
        let px = |v: f64| self.x.frac(v).map(|f| ml + f * PLOT_W);
        let py = |v: f64| self.y.frac(v).map(|f| mt + PLOT_H - f * PLOT_H);

        let mut out = String::new();
        open(&mut out, &self.id, &self.title, w, h);
        let _ = write!(
            out,
            "<defs><clipPath id=\"{}-clip\"><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" \
             height=\"{:.1}\"/></clipPath></defs>",
            self.id,
            ml - 6.0,
            mt - 6.0,
            PLOT_W + 12.0,
            PLOT_H + 12.0
        );
        // Grid and y ticks.
        out.push_str("<g class=\"grid\" stroke=\"#ddd\" stroke-width=\"1\">");
        for (t, _) in &self.y.ticks {
            let y = mt + PLOT_H - (t - self.y.lo) / (self.y.hi - self.y.lo) * PLOT_H;
            let _ = write!(
                out,
                "<line x1=\"{ml:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>",
                ml + PLOT_W
            );
        }
        for (t, _) in &self.x.ticks {
            let x = ml + (t - self.x.lo) / (self.x.hi - self.x.lo) * PLOT_W;
            let _ = write!(
                out,
                "<line x1=\"{x:.1}\" y1=\"{mt:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\"/>",
                mt + PLOT_H
            );
        }
        out.push_str("</g>");
        self.axes(&mut out, ml, mt);

        // Series: error bars, line, markers.
        let _ = write!(out, "<g clip-path=\"url(#{}-clip)\">", self.id);
        for s in &self.series {
            let pts: Vec<(f64, f64, &Point)> = s
                .points
                .iter()
                .filter_map(|p| Some((px(p.x)?, py(p.y)?, p)))
                .collect();
            for (x, _, p) in &pts {
                // An end the axis cannot show (zero on a log scale) runs out of the frame.
                let below = mt + PLOT_H + 12.0;
                let lo = p.lo.map(|v| py(v).unwrap_or(below));
                if let (Some(lo), Some(hi)) = (lo, p.hi.and_then(py)) {
                    if (lo - hi).abs() >= 1.0 {
                        let _ = write!(
                            out,
                            "<path d=\"M{:.1} {lo:.1}H{:.1}M{x:.1} {lo:.1}V{hi:.1}M{:.1} \
                             {hi:.1}H{:.1}\" stroke=\"{}\" stroke-width=\"1.2\" fill=\"none\"/>",
                            x - 4.0,
                            x + 4.0,
                            x - 4.0,
                            x + 4.0,
                            s.color
                        );
                    }
                }
            }
            if pts.len() > 1 {
                let coords: Vec<String> = pts
                    .iter()
                    .map(|(x, y, _)| format!("{x:.1},{y:.1}"))
                    .collect();
                let _ = write!(
                    out,
                    "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" \
                     stroke-linejoin=\"round\"{}/>",
                    coords.join(" "),
                    s.color,
                    s.dash.attr()
                );
            }
            for (x, y, _) in &pts {
                let m = match (s.marker, pts.len()) {
                    // A lone point needs a mark to be seen at all.
                    (Marker::None, 1) => Marker::Ring,
                    (m, _) => m,
                };
                marker(&mut out, m, *x, *y, s.color);
            }
        }
        out.push_str("</g>");
        legend(&mut out, &entries, ml + PLOT_W + GAP, mt);
        out.push_str("</svg>");
        out
    }

    fn axes(&self, out: &mut String, ml: f64, mt: f64) {
        let bottom = mt + PLOT_H;
        let _ = write!(
            out,
            "<path d=\"M{ml:.1} {mt:.1}V{bottom:.1}H{:.1}\" stroke=\"#333\" fill=\"none\"/>",
            ml + PLOT_W
        );
        x_ticks(out, &self.x, ml, PLOT_W, bottom);
        let stride = label_stride(&self.y.ticks, PLOT_H, self.y.lo, self.y.hi, false);
        for (i, (t, label)) in self.y.ticks.iter().enumerate() {
            let y = bottom - (t - self.y.lo) / (self.y.hi - self.y.lo) * PLOT_H;
            let _ = write!(
                out,
                "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{ml:.1}\" y2=\"{y:.1}\" stroke=\"#333\"/>",
                ml - 5.0
            );
            if i % stride == 0 {
                let _ = write!(
                    out,
                    "<text x=\"{:.1}\" y=\"{y:.1}\" text-anchor=\"end\" \
                     dominant-baseline=\"middle\">{}</text>",
                    ml - 8.0,
                    esc(label)
                );
            }
        }
        let _ = write!(
            out,
            "<text class=\"alabel\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            ml + PLOT_W / 2.0,
            bottom + 44.0,
            esc(&self.x.label)
        );
        let cy = mt + PLOT_H / 2.0;
        for (i, line) in split_label(&self.y.label, PLOT_H - 10.0).iter().enumerate() {
            let x = 16.0 + i as f64 * LINE_H;
            let _ = write!(
                out,
                "<text class=\"alabel\" x=\"{x:.1}\" y=\"{cy:.1}\" text-anchor=\"middle\" \
                 transform=\"rotate(-90 {x:.1} {cy:.1})\">{}</text>",
                esc(line)
            );
        }
    }
}

/// Distance between two lines of an axis label.
const LINE_H: f64 = 15.0;

/// An axis label in one line, or two split at the space nearest the middle if it is wider
/// than `room` pixels.
fn split_label(label: &str, room: f64) -> Vec<String> {
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

/// Horizontal bars: one band per category, one bar per metric in each band, the value
/// written at the end of each bar.
pub struct BarChart {
    pub id: String,
    pub title: String,
    /// Label of the value axis, with its unit.
    pub x_label: String,
    /// Category labels (drawn left of their band).
    pub categories: Vec<String>,
    /// Metrics: name and colour.
    pub metrics: Vec<(String, &'static str)>,
    /// `values[category][metric]`; None leaves the bar out.
    pub values: Vec<Vec<Option<f64>>>,
    /// Writes the value at the end of each bar.
    pub value_fmt: fn(f64) -> String,
}

impl BarChart {
    /// The chart as an `<svg>` element.
    pub fn render(&self) -> String {
        const BAR: f64 = 12.0;
        const BAR_GAP: f64 = 2.0;
        const BAND_PAD: f64 = 14.0;
        let max = self
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        // Room after the longest bar for its value.
        let x = Axis::new(
            &self.x_label,
            Scale::Linear,
            [0.0, (max * 1.2).max(1.0)],
            super::numbers::compact,
        );
        let ml = self
            .categories
            .iter()
            .map(|c| text_w(c))
            .fold(0.0, f64::max)
            + 24.0;
        let mt = 40.0;
        let entries: Vec<Key> = self.metrics.iter().map(|(n, c)| Key::block(n, c)).collect();
        // Bands widen so the plot is at least as tall as the legend beside it.
        let rows = self.categories.len().max(1) as f64;
        let band = (self.metrics.len() as f64 * (BAR + BAR_GAP) + BAND_PAD)
            .max((entries.len() as f64 * LEGEND_ROW + 8.0) / rows);
        let plot_h = rows * band;
        let lw = legend_width(&entries);
        let plot_w = PLOT_W * 0.8;
        let w = ml + plot_w + GAP + lw + 12.0;
        let bottom = mt + plot_h;
        let h = (bottom + 56.0).max(mt + entries.len() as f64 * LEGEND_ROW + 12.0);
        let px = |v: f64| ml + (v - x.lo) / (x.hi - x.lo) * plot_w;

        let mut out = String::new();
        open(&mut out, &self.id, &self.title, w, h);
        out.push_str("<g class=\"grid\" stroke=\"#ddd\" stroke-width=\"1\">");
        for (t, _) in &x.ticks {
            let _ = write!(
                out,
                "<line x1=\"{:.1}\" y1=\"{mt:.1}\" x2=\"{:.1}\" y2=\"{bottom:.1}\"/>",
                px(*t),
                px(*t)
            );
        }
        out.push_str("</g>");
        for (ci, cat) in self.categories.iter().enumerate() {
            let group_h = self.metrics.len() as f64 * (BAR + BAR_GAP) - BAR_GAP;
            let top = mt + ci as f64 * band + (band - group_h) / 2.0;
            let mid = top + group_h / 2.0;
            let _ = write!(
                out,
                "<text x=\"{:.1}\" y=\"{mid:.1}\" text-anchor=\"end\" \
                 dominant-baseline=\"middle\">{}</text>",
                ml - 10.0,
                esc(cat)
            );
            let row = self.values.get(ci).map(Vec::as_slice).unwrap_or(&[]);
            for (mi, (_, color)) in self.metrics.iter().enumerate() {
                let Some(v) = row.get(mi).copied().flatten().filter(|v| v.is_finite()) else {
                    continue;
                };
                let y = top + mi as f64 * (BAR + BAR_GAP);
                let bw = (px(v.max(0.0)) - ml).max(1.5);
                let _ = write!(
                    out,
                    "<rect x=\"{ml:.1}\" y=\"{y:.1}\" width=\"{bw:.1}\" height=\"{BAR}\" \
                     fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\" \
                     dominant-baseline=\"middle\" font-size=\"11\">{}</text>",
                    ml + bw + 4.0,
                    y + BAR / 2.0,
                    esc(&(self.value_fmt)(v))
                );
            }
        }
        let _ = write!(
            out,
            "<path d=\"M{ml:.1} {mt:.1}V{bottom:.1}H{:.1}\" stroke=\"#333\" fill=\"none\"/>",
            ml + plot_w
        );
        x_ticks(&mut out, &x, ml, plot_w, bottom);
        let _ = write!(
            out,
            "<text class=\"alabel\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            ml + plot_w / 2.0,
            bottom + 44.0,
            esc(&x.label)
        );
        legend(&mut out, &entries, ml + plot_w + GAP, mt);
        out.push_str("</svg>");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(a: &Axis) -> Vec<&str> {
        a.ticks.iter().map(|t| t.1.as_str()).collect()
    }

    #[test]
    fn linear_ticks_are_round() {
        let a = Axis::new("y", Scale::Linear, [3.0, 97.0], |v| format!("{v}"));
        assert_eq!(labels(&a), ["0", "20", "40", "60", "80", "100"]);
        let a = Axis::new("y", Scale::Linear, [], |v| format!("{v}"));
        assert_eq!(a.lo, 0.0);
        assert!(a.hi > 0.0);
    }

    #[test]
    fn log_ticks() {
        let a = Axis::new("x", Scale::Log2, [64.0, 65536.0], |v| format!("{v}"));
        assert_eq!(a.ticks.first().unwrap().1, "64");
        assert_eq!(a.ticks.last().unwrap().1, "65536");
        assert!(
            a.lo < 6.0 && a.hi > 16.0,
            "outer points stay inside the frame"
        );
        let one = Axis::new("x", Scale::Log2, [64.0], |v| format!("{v}"));
        assert_eq!(labels(&one), ["32", "64", "128"]);
        let a = Axis::new("y", Scale::Log10, [30.0, 700.0], |v| format!("{v}"));
        assert_eq!(labels(&a), ["20", "50", "100", "200", "500", "1000"]);
        let none = Axis::new("y", Scale::Log10, [0.0], |v| format!("{v}"));
        assert_eq!(none.scale, Scale::Linear);
    }

    #[test]
    fn nines() {
        assert_eq!(nines_label(0), "0");
        assert_eq!(nines_label(1), "90");
        assert_eq!(nines_label(2), "99");
        assert_eq!(nines_label(4), "99.99");
        let a = Axis::new("p", Scale::Nines, [0.0, 3.2], |v| format!("{v}"));
        assert_eq!(labels(&a), ["0", "90", "99", "99.9", "99.99"]);
    }

    #[test]
    fn long_labels_split_in_two() {
        assert_eq!(split_label("short (us)", 300.0), ["short (us)"]);
        let two = split_label("latency from the due send time (µs), log scale", 300.0);
        assert_eq!(two, ["latency from the due send", "time (µs), log scale"]);
    }

    #[test]
    fn escapes() {
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
