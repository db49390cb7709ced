//! Bar charts: horizontal bars in one band per category, one bar per metric, each value
//! written at the end of its bar, and its confidence interval as a whisker in the bar's
//! colour, cut at the plot's edge with an arrowhead when it runs further.

use super::axis::{Axis, Scale};
use super::parts::*;
use std::fmt::Write;

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
    /// The 95% interval of each value, `[category][metric]` as `values` (low, high); None
    /// (or an empty list) draws no whisker.
    pub intervals: Vec<Vec<Option<(f64, f64)>>>,
    /// Writes the value at the end of each bar.
    pub value_fmt: fn(f64) -> String,
}

/// Height of a bar, the gap between the bars of a band, and the padding of a band.
const BAR: f64 = 12.0;
const BAR_GAP: f64 = 2.0;
const BAND_PAD: f64 = 14.0;

/// Where the parts of a bar chart go: the value axis, the margins, the height of a band,
/// the plot's width, the room past it for cut whiskers' values, and the whole size.
struct Layout {
    x: Axis,
    /// Left margin (the category labels) and top margin.
    ml: f64,
    mt: f64,
    band: f64,
    plot_w: f64,
    spill: f64,
    /// The plot's bottom edge.
    bottom: f64,
    w: f64,
    h: f64,
    entries: Vec<Key>,
}

impl Layout {
    /// The x position of value `v`.
    fn px(&self, v: f64) -> f64 {
        self.ml + (v - self.x.lo) / (self.x.hi - self.x.lo) * self.plot_w
    }

    /// The vertical grid lines, one per tick.
    fn grid(&self, out: &mut String) {
        let (mt, bottom) = (self.mt, self.bottom);
        out.push_str("<g class=\"grid\" stroke=\"#ddd\" stroke-width=\"1\">");
        for (t, _) in &self.x.ticks {
            let _ = write!(
                out,
                "<line x1=\"{:.1}\" y1=\"{mt:.1}\" x2=\"{:.1}\" y2=\"{bottom:.1}\"/>",
                self.px(*t),
                self.px(*t)
            );
        }
        out.push_str("</g>");
    }

    /// The frame, the ticks and label of the value axis, and the legend.
    fn frame(&self, out: &mut String) {
        let (ml, mt, bottom, plot_w) = (self.ml, self.mt, self.bottom, self.plot_w);
        let _ = write!(
            out,
            "<path d=\"M{ml:.1} {mt:.1}V{bottom:.1}H{:.1}\" stroke=\"#333\" fill=\"none\"/>",
            ml + plot_w
        );
        x_ticks(out, &self.x, ml, plot_w, bottom);
        let _ = write!(
            out,
            "<text class=\"alabel\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            ml + plot_w / 2.0,
            bottom + 44.0,
            esc(&self.x.label)
        );
        legend(out, &self.entries, ml + plot_w + self.spill + GAP, mt);
    }
}

impl BarChart {
    /// The chart as an `<svg>` element.
    pub fn render(&self) -> String {
        let l = self.layout();
        let mut out = String::new();
        open(&mut out, &self.id, &self.title, l.w, l.h);
        l.grid(&mut out);
        for (ci, cat) in self.categories.iter().enumerate() {
            self.band(&mut out, &l, ci, cat);
        }
        l.frame(&mut out);
        out.push_str("</svg>");
        out
    }

    /// The axis, margins and sizes: the axis holds every bar and room for its value.
    fn layout(&self) -> Layout {
        let max = self
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        // The axis holds every bar and the intervals up to half as long again; a longer
        // whisker is cut at the edge with a mark, so one wide interval of a short run does
        // not squash every bar.
        let reach = self
            .intervals
            .iter()
            .flatten()
            .flatten()
            .map(|&(_, hi)| hi)
            .filter(|v| v.is_finite())
            .fold(max, f64::max)
            .min(max * 1.5);
        // Room after the longest bar for its value.
        let x = Axis::new(
            &self.x_label,
            Scale::Linear,
            [0.0, (reach * 1.2).max(1.0)],
            crate::report::units::compact,
        )
        .relabel(crate::report::units::linear_ticks);
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
        // A whisker cut at the edge has its value written past it: room for that.
        let cut = self
            .intervals
            .iter()
            .flatten()
            .flatten()
            .any(|&(_, hi)| hi > x.hi);
        let spill = if cut { 60.0 } else { 0.0 };
        let w = ml + plot_w + spill + GAP + lw + 12.0;
        let bottom = mt + plot_h;
        let h = (bottom + 56.0).max(mt + entries.len() as f64 * LEGEND_ROW + 12.0);
        Layout {
            x,
            ml,
            mt,
            band,
            plot_w,
            spill,
            bottom,
            w,
            h,
            entries,
        }
    }

    /// The band of category `ci`: its label, then one bar per metric with its whisker and
    /// its value.
    fn band(&self, out: &mut String, l: &Layout, ci: usize, cat: &str) {
        let ml = l.ml;
        let group_h = self.metrics.len() as f64 * (BAR + BAR_GAP) - BAR_GAP;
        let top = l.mt + ci as f64 * l.band + (l.band - group_h) / 2.0;
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
            let bw = (l.px(v.max(0.0)) - ml).max(1.5);
            let _ = write!(
                out,
                "<rect x=\"{ml:.1}\" y=\"{y:.1}\" width=\"{bw:.1}\" height=\"{BAR}\" \
                 fill=\"{color}\"/>"
            );
            let interval = self
                .intervals
                .get(ci)
                .and_then(|r| r.get(mi))
                .copied()
                .flatten()
                .filter(|(lo, hi)| lo.is_finite() && hi.is_finite() && hi > lo);
            let mut text_x = ml + bw + 4.0;
            if let Some((lo, hi)) = interval {
                let right = ml + l.plot_w;
                let end = whisker(
                    out,
                    l.px(lo.max(0.0)),
                    l.px(hi),
                    right,
                    y + BAR / 2.0,
                    color,
                );
                text_x = text_x.max(end + 4.0);
            }
            let _ = write!(
                out,
                "<text x=\"{text_x:.1}\" y=\"{:.1}\" dominant-baseline=\"middle\" \
                 font-size=\"11\">{}</text>",
                y + BAR / 2.0,
                esc(&(self.value_fmt)(v))
            );
        }
    }
}

/// A horizontal whisker from `x0` to `x1` at `y` in `color`. Its line is in the bar's
/// colour (so it merges with its bar and shows beyond it); its end caps have a white edge,
/// so the low one shows on the bar too. An end beyond `right` (the plot's edge) is cut
/// there and marked with an arrowhead pointing on. Returns where the drawing ends on the
/// right.
fn whisker(out: &mut String, x0: f64, x1: f64, right: f64, y: f64, color: &str) -> f64 {
    let cut = x1 > right;
    let x1 = x1.min(right);
    let cap = |x: f64| format!("M{x:.1} {:.1}V{:.1}", y - 4.5, y + 4.5);
    let caps = format!("{}{}", cap(x0), if cut { String::new() } else { cap(x1) });
    let _ = write!(
        out,
        "<g class=\"whisker\"><path d=\"M{x0:.1} {y:.1}H{x1:.1}\" stroke=\"{color}\" \
         stroke-width=\"1.5\" fill=\"none\"/><path d=\"{caps}\" stroke=\"#fff\" \
         stroke-width=\"4\" fill=\"none\"/><path d=\"{caps}\" stroke=\"{color}\" \
         stroke-width=\"1.8\" fill=\"none\"/>"
    );
    if cut {
        let _ = write!(
            out,
            "<path class=\"cut\" d=\"M{:.1} {:.1}L{x1:.1} {y:.1}L{:.1} {:.1}Z\" fill=\"{color}\" \
             stroke=\"#fff\" stroke-width=\"0.8\"/>",
            x1 - 7.0,
            y - 4.5,
            x1 - 7.0,
            y + 4.5
        );
    }
    out.push_str("</g>");
    x1
}
