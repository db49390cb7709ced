//! Bar charts: horizontal bars in one band per category, one bar per metric, each value
//! written in a column right of the plot, and its confidence interval as a whisker in the
//! bar's colour. The value axis is scaled to the bars of the first metric (the medians), so
//! short bars stay readable: a longer bar is clipped at the plot's edge with a break mark,
//! a longer whisker with an arrowhead.

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

/// How far the value axis reaches past the longest bar of the first metric: other bars and
/// whiskers up to this many times its length are drawn whole, longer ones are clipped.
const REACH: f64 = 2.0;

/// Where the parts of a bar chart go: the value axis, the margins, the height of a band,
/// the plot's width, the column of values right of it, and the whole size.
struct Layout {
    x: Axis,
    /// Left margin (the category labels) and top margin.
    ml: f64,
    mt: f64,
    band: f64,
    plot_w: f64,
    /// Width of the column of values right of the plot.
    values_w: f64,
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

    /// The plot's right edge.
    fn right(&self) -> f64 {
        self.ml + self.plot_w
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
            "<path class=\"frame\" d=\"M{ml:.1} {mt:.1}V{bottom:.1}H{:.1}\" stroke=\"#333\" \
             fill=\"none\"/>",
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
        legend(out, &self.entries, self.right() + self.values_w + GAP, mt);
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

    /// The finite values of metric `mi` (all metrics when None).
    fn finite(&self, mi: Option<usize>) -> impl Iterator<Item = f64> + '_ {
        self.values
            .iter()
            .flat_map(move |row| {
                row.iter()
                    .enumerate()
                    .filter(move |(k, _)| mi.is_none_or(|m| m == *k))
                    .map(|(_, v)| *v)
            })
            .flatten()
            .filter(|v| v.is_finite())
    }

    /// The axis, margins and sizes. The axis is scaled to the medians: it holds the longest
    /// bar of the first metric, and the other bars and whiskers up to [`REACH`] times as
    /// long; what runs further is clipped with a mark, so one long tail or one wide
    /// interval does not squash every bar into a sliver.
    fn layout(&self) -> Layout {
        let head = self.finite(Some(0)).fold(0.0, f64::max);
        let all = self.finite(None).fold(0.0, f64::max);
        let whiskers = self
            .intervals
            .iter()
            .flatten()
            .flatten()
            .map(|&(_, hi)| hi)
            .filter(|v| v.is_finite())
            .fold(all, f64::max);
        let reach = if head > 0.0 {
            whiskers.min(head * REACH).max(head)
        } else {
            all
        };
        let x = Axis::new(
            &self.x_label,
            Scale::Linear,
            [0.0, reach.max(f64::MIN_POSITIVE)],
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
        // The column of values: the widest value, and the room for a clipped bar's mark.
        let values_w = self
            .finite(None)
            .map(|v| text_w(&(self.value_fmt)(v)))
            .fold(0.0, f64::max)
            + 22.0;
        let w = ml + plot_w + values_w + GAP + lw + 12.0;
        let bottom = mt + plot_h;
        let h = (bottom + 56.0).max(mt + entries.len() as f64 * LEGEND_ROW + 12.0);
        Layout {
            x,
            ml,
            mt,
            band,
            plot_w,
            values_w,
            bottom,
            w,
            h,
            entries,
        }
    }

    /// The band of category `ci`: its label, then one bar per metric with its whisker, and
    /// its value in the column right of the plot.
    fn band(&self, out: &mut String, l: &Layout, ci: usize, cat: &str) {
        let ml = l.ml;
        let right = l.right();
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
            let clipped = l.px(v) > right + 0.05;
            let bw = (l.px(v.max(0.0)).min(right) - ml).max(1.5);
            let _ = write!(
                out,
                "<rect class=\"bar m{mi}\" x=\"{ml:.1}\" y=\"{y:.1}\" width=\"{bw:.1}\" \
                 height=\"{BAR}\" fill=\"{color}\"/>"
            );
            if clipped {
                clip_mark(out, right, y);
            }
            let interval = self
                .intervals
                .get(ci)
                .and_then(|r| r.get(mi))
                .copied()
                .flatten()
                .filter(|(lo, hi)| lo.is_finite() && hi.is_finite() && hi > lo);
            if let Some((lo, hi)) = interval {
                let x0 = l.px(lo.max(0.0));
                // A whisker wholly past the edge has nothing to show but the clip mark.
                if x0 < right - 0.5 {
                    whisker(out, x0, l.px(hi), right, y + BAR / 2.0, color);
                }
            }
            let _ = write!(
                out,
                "<text class=\"value{}\" x=\"{:.1}\" y=\"{:.1}\" dominant-baseline=\"middle\" \
                 font-size=\"11\">{}{}</text>",
                if clipped { " off" } else { "" },
                right + 8.0,
                y + BAR / 2.0,
                if clipped { "\u{00bb} " } else { "" },
                esc(&(self.value_fmt)(v))
            );
        }
    }
}

/// The mark of a bar clipped at the plot's edge `right` (its top at `y`): two white slashes
/// across its end, a break in the bar, so it reads as running on past the axis.
fn clip_mark(out: &mut String, right: f64, y: f64) {
    let slash = |x: f64| {
        format!(
            "M{:.1} {:.1}L{:.1} {:.1}",
            x - 3.0,
            y + BAR + 1.0,
            x + 3.0,
            y - 1.0
        )
    };
    let _ = write!(
        out,
        "<path class=\"clip\" d=\"{}{}\" stroke=\"#fff\" stroke-width=\"2.2\" fill=\"none\"/>",
        slash(right - 12.0),
        slash(right - 7.0)
    );
}

/// A horizontal whisker from `x0` to `x1` at `y` in `color`. Its line is in the bar's
/// colour (so it merges with its bar and shows beyond it); its end caps have a white edge,
/// so the low one shows on the bar too. An end beyond `right` (the plot's edge) is cut
/// there and marked with an arrowhead pointing on.
fn whisker(out: &mut String, x0: f64, x1: f64, right: f64, y: f64, color: &str) {
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
}
