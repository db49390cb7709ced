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
