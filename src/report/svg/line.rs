//! Line charts: series of points over an x and a y axis, with markers, error bars and a
//! legend.

use super::axis::Axis;
use super::parts::*;
use super::style::{marker, Marker};
use std::fmt::Write;

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
    /// Write each series' name at the end of its line, in its colour, instead of a legend
    /// (for many lines, which a legend beside the plot matches poorly).
    pub end_labels: bool,
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
        let entries: Vec<Key> = if self.end_labels {
            Vec::new()
        } else if self.legend.is_empty() {
            self.series
                .iter()
                .map(|s| Key::line(&s.name, s.color, s.dash, s.marker))
                .collect()
        } else {
            self.legend.clone()
        };
        let lw = if self.end_labels {
            self.series
                .iter()
                .map(|s| text_w(&s.name))
                .fold(0.0, f64::max)
                + 10.0
        } else {
            legend_width(&entries)
        };
        let w = ml + PLOT_W + GAP + lw + 12.0;
        let h = (mt + PLOT_H + mb).max(mt + entries.len() as f64 * LEGEND_ROW + 12.0);
        let px = |v: f64| self.x.frac(v).map(|f| ml + f * PLOT_W);
        let py = |v: f64| self.y.frac(v).map(|f| mt + PLOT_H - f * PLOT_H);

        let mut out = String::new();
        open(&mut out, &self.id, &self.title, w, h);
        self.grid(&mut out, ml, mt);
        self.axes(&mut out, ml, mt);

        // Series: error bars, line, markers.
        let _ = write!(out, "<g clip-path=\"url(#{}-clip)\">", self.id);
        for (si, s) in self.series.iter().enumerate() {
            self.draw_series(&mut out, si, s, mt, &px, &py);
        }
        out.push_str("</g>");
        if self.end_labels {
            self.end_labels(&mut out, ml, mt, &px, &py);
        }
        legend(&mut out, &entries, ml + PLOT_W + GAP, mt);
        out.push_str("</svg>");
        out
    }

    /// The clip path of the plot, and the grid: a line at each tick of either axis.
    fn grid(&self, out: &mut String, ml: f64, mt: f64) {
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
    }

    /// Series `si` (`s`): its error bars, its line and its markers, at positions `px`, `py`.
    fn draw_series(
        &self,
        out: &mut String,
        si: usize,
        s: &Series,
        mt: f64,
        px: &dyn Fn(f64) -> Option<f64>,
        py: &dyn Fn(f64) -> Option<f64>,
    ) {
        let n = self.series.len();
        let pts: Vec<(f64, f64, &Point)> = s
            .points
            .iter()
            .filter_map(|p| Some((px(p.x)?, py(p.y)?, p)))
            .collect();
        // Whiskers of the series at one size stand a little apart, each in its
        // series' colour, so overlapping intervals stay told apart.
        let dx = ((si as f64 - (n as f64 - 1.0) / 2.0) * 2.5).clamp(-8.0, 8.0);
        for (x, _, p) in &pts {
            // An end the axis cannot show (zero on a log scale) is below the frame.
            let below = mt + PLOT_H + 12.0;
            let lo = p.lo.map(|v| py(v).unwrap_or(below));
            if let (Some(lo), Some(hi)) = (lo, p.hi.and_then(py)) {
                if (lo - hi).abs() >= 1.0 {
                    whisker(out, x + dx, lo, hi, mt, mt + PLOT_H, s.color);
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
            marker(out, m, *x, *y, s.color);
        }
    }

    /// Each series' name right of the plot at the height its line ends, moved apart where
    /// they would touch, joined to the line's end by a thin leader in its colour.
    fn end_labels(
        &self,
        out: &mut String,
        ml: f64,
        mt: f64,
        px: &dyn Fn(f64) -> Option<f64>,
        py: &dyn Fn(f64) -> Option<f64>,
    ) {
        const ROW: f64 = 14.0;
        let mut ends: Vec<(f64, f64, &Series)> = self
            .series
            .iter()
            .filter_map(|s| {
                let p = s.points.last()?;
                let y = py(p.y)?.clamp(mt, mt + PLOT_H);
                Some((px(p.x)?, y, s))
            })
            .collect();
        ends.sort_by(|a, b| a.1.total_cmp(&b.1));
        // Push labels down until none overlaps the one above, then back up if the last
        // ran past the bottom.
        let mut ys: Vec<f64> = Vec::with_capacity(ends.len());
        for (_, y, _) in &ends {
            let y = ys.last().map_or(*y, |&prev: &f64| y.max(prev + ROW));
            ys.push(y);
        }
        let limit = mt + PLOT_H + 20.0;
        if let Some(&last) = ys.last() {
            if last > limit {
                let shift = last - limit;
                for y in ys.iter_mut() {
                    *y -= shift;
                }
                for i in (0..ys.len().saturating_sub(1)).rev() {
                    ys[i] = ys[i].min(ys[i + 1] - ROW);
                }
            }
        }
        let lx = ml + PLOT_W + 10.0;
        for ((x, y, s), ly) in ends.iter().zip(&ys) {
            let _ = write!(
                out,
                "<g class=\"endlabel\"><path d=\"M{x:.1} {y:.1}L{:.1} {ly:.1}\" stroke=\"{}\" \
                 stroke-width=\"0.8\" fill=\"none\"/><text x=\"{lx:.1}\" y=\"{ly:.1}\" \
                 dominant-baseline=\"middle\" fill=\"{}\" style=\"fill:{}\" \
                 font-weight=\"600\">{}</text></g>",
                lx - 3.0,
                s.color,
                s.color,
                s.color,
                esc(&s.name)
            );
        }
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

/// A vertical whisker at `x` from `lo` down to `hi` up (pixels) in `color`, over a white
/// halo. An end beyond the plot (`top`, `bottom`) is cut at the frame and marked there
/// with an arrowhead pointing on, so a cut interval is never mistaken for a short one.
fn whisker(out: &mut String, x: f64, lo: f64, hi: f64, top: f64, bottom: f64, color: &str) {
    let (cut_hi, cut_lo) = (hi < top, lo > bottom);
    let (hi, lo) = (hi.max(top), lo.min(bottom));
    if lo - hi < 1.0 && !(cut_hi || cut_lo) {
        return;
    }
    let cap = |y: f64| format!("M{:.1} {y:.1}H{:.1}", x - 4.0, x + 4.0);
    let d = format!(
        "{}M{x:.1} {lo:.1}V{hi:.1}{}",
        if cut_lo { String::new() } else { cap(lo) },
        if cut_hi { String::new() } else { cap(hi) }
    );
    let _ = write!(
        out,
        "<g class=\"whisker\"><path d=\"{d}\" stroke=\"#fff\" stroke-width=\"3\" \
         fill=\"none\"/><path d=\"{d}\" stroke=\"{color}\" stroke-width=\"1.2\" \
         fill=\"none\"/>"
    );
    // Arrowheads at a cut end: pointing up at the top, down at the bottom.
    for (cut, y, dir) in [(cut_hi, hi, -1.0), (cut_lo, lo, 1.0)] {
        if cut {
            let _ = write!(
                out,
                "<path class=\"cut\" d=\"M{:.1} {:.1}L{x:.1} {y:.1}L{:.1} {:.1}Z\" \
                 fill=\"{color}\" stroke=\"#fff\" stroke-width=\"0.8\"/>",
                x - 4.5,
                y - dir * 7.0,
                x + 4.5,
                y - dir * 7.0
            );
        }
    }
    out.push_str("</g>");
}
