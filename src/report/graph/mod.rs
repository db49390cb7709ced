//! The topology of a case drawn as an SVG graph for the HTML report: a labelled box per
//! node (its name, role and replicas), placed in columns by role (sources and pings on the
//! left, proxies in the middle, sinks and echoes on the right), and an arrow per pair of
//! nodes with measured edges, annotated with the delivered rate, the mean latency and any
//! loss. Lossy arrows are drawn in a warning colour. Text widths are estimated, as in
//! [`super::svg`], so the drawing is laid out without a browser.
//! Which nodes the arrows join, and what they say, is worked out in `links`; this file lays
//! out and draws the boxes and arrows.

mod links;
#[cfg(test)]
mod tests;

use super::svg::{self, esc};
use crate::model::CaseResult;
use links::{column, links, role_line};
use std::fmt::Write;

const BOX_H: f64 = 44.0;
/// Vertical room between two boxes of a column (labels of arrows fanning out pass there).
const BOX_GAP: f64 = 44.0;
const BOX_PAD: f64 = 12.0;
const BOX_MIN_W: f64 = 96.0;
/// Estimated advance of a character of a box's bold name.
const BOLD_W: f64 = 7.6;
/// Font size of the arrows' labels, the advance of one of their characters, and their
/// line height.
const LABEL_FONT: f64 = 11.0;
const LABEL_W: f64 = 6.4;
const LABEL_LINE: f64 = 13.0;
/// Smallest horizontal room between two columns.
const COL_GAP_MIN: f64 = 150.0;
const MARGIN: f64 = 16.0;
/// Room above the boxes for the title.
const TOP: f64 = 38.0;
/// Where along an arrow its label sits (0 = start, 1 = end): past the middle, where
/// arrows fanning out of one box are further apart.
const LABEL_AT: f64 = 0.6;
const ARROW_LEN: f64 = 9.0;
const ARROW_HALF: f64 = 4.5;

const INK: &str = "#444444";
const LOSSY: &str = "#D55E00";
const BOX_FILL: &str = "#f3f6fa";
const BOX_STROKE: &str = "#5a6b7d";

/// A box placed in the drawing: left, top, width.
#[derive(Clone, Copy)]
struct Place {
    x: f64,
    y: f64,
    w: f64,
}

impl Place {
    fn mid_y(&self) -> f64 {
        self.y + BOX_H / 2.0
    }
}

/// Where a label sits: its centre and its backing's size.
#[derive(Clone, Copy)]
struct Spot {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

fn label_w(lines: &[String]) -> f64 {
    lines
        .iter()
        .map(|l| l.chars().count() as f64 * LABEL_W)
        .fold(0.0, f64::max)
}

/// An arrowhead with its tip at (x, y), pointing along (dx, dy).
fn arrowhead(out: &mut String, x: f64, y: f64, dx: f64, dy: f64, color: &str) {
    let len = (dx * dx + dy * dy).sqrt();
    if len == 0.0 {
        return;
    }
    let (ux, uy) = (dx / len, dy / len);
    let (bx, by) = (x - ux * ARROW_LEN, y - uy * ARROW_LEN);
    let _ = write!(
        out,
        "<polygon points=\"{x:.1},{y:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"{color}\"/>",
        bx - uy * ARROW_HALF,
        by + ux * ARROW_HALF,
        bx + uy * ARROW_HALF,
        by - ux * ARROW_HALF,
    );
}

/// Text lines centred on (x, y), on a pale backing so they stay legible over the arrows.
fn label(out: &mut String, x: f64, y: f64, lines: &[String], color: &str) {
    let n = lines.len() as f64;
    let top = y - (n - 1.0) * LABEL_LINE / 2.0;
    let (w, h) = (label_w(lines) + 8.0, n * LABEL_LINE + 4.0);
    let _ = write!(
        out,
        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"3\" \
         fill=\"#fff\" fill-opacity=\"0.88\"/>\
         <text x=\"{x:.1}\" y=\"{top:.1}\" font-size=\"{LABEL_FONT}\" text-anchor=\"middle\" \
         dominant-baseline=\"middle\" fill=\"{color}\">",
        x - w / 2.0,
        y - h / 2.0,
    );
    for (i, l) in lines.iter().enumerate() {
        let dy = if i == 0 { 0.0 } else { LABEL_LINE };
        let _ = write!(out, "<tspan x=\"{x:.1}\" dy=\"{dy:.0}\">{}</tspan>", esc(l));
    }
    out.push_str("</text>");
}

/// The topology of a case as an `<svg>` element, `id` unique in the page; None when the
/// case has no nodes.
pub fn topology(id: &str, c: &CaseResult) -> Option<String> {
    if c.nodes.is_empty() {
        return None;
    }
    let links = links(c);

    // The columns in use, left to right, and the nodes of each in topology order.
    let mut used: Vec<usize> = c.nodes.iter().map(|n| column(&n.role)).collect();
    used.sort_unstable();
    used.dedup();
    let cols: Vec<Vec<usize>> = used
        .iter()
        .map(|&k| {
            (0..c.nodes.len())
                .filter(|&i| column(&c.nodes[i].role) == k)
                .collect()
        })
        .collect();
    let col_of = |i: usize| used.iter().position(|&k| k == column(&c.nodes[i].role));
    // Streams are measured end to end; one that skips the middle column passes through
    // its proxy when there is only one, and is drawn through it.
    let lone_proxy = used
        .iter()
        .position(|&k| k == 1)
        .filter(|&m| cols[m].len() == 1 && c.nodes[cols[m][0]].role == "proxy")
        .map(|m| cols[m][0]);
    // Which links pass through the lone proxy: streams from a source to a sink.
    let via: Vec<Option<usize>> = links
        .iter()
        .map(|l| {
            lone_proxy.filter(|_| c.nodes[l.from].role == "source" && c.nodes[l.to].role == "sink")
        })
        .collect();
    // Arrows through a proxy share segments: with more than one, each label names its
    // link.
    let named = via.iter().filter(|v| v.is_some()).count() > 1;
    let labels: Vec<Vec<String>> = links
        .iter()
        .zip(&via)
        .map(|(l, v)| {
            let mut lines = l.label();
            if named && v.is_some() {
                let name = format!("{} → {}", c.nodes[l.from].name, c.nodes[l.to].name);
                lines.insert(0, name);
            }
            lines
        })
        .collect();
    let box_w: Vec<f64> = c
        .nodes
        .iter()
        .map(|n| {
            let name = n.name.chars().count() as f64 * BOLD_W;
            let role = role_line(n).chars().count() as f64 * 7.0;
            (name.max(role) + 2.0 * BOX_PAD).max(BOX_MIN_W)
        })
        .collect();
    let col_w: Vec<f64> = cols
        .iter()
        .map(|ns| ns.iter().map(|&i| box_w[i]).fold(0.0, f64::max))
        .collect();
    // Room for the widest label where it sits, clear of the boxes either side.
    let gap = labels
        .iter()
        .map(|l| (label_w(l) / 2.0 + 12.0) / (1.0 - LABEL_AT))
        .fold(COL_GAP_MIN, f64::max);
    let tallest = cols.iter().map(Vec::len).max().unwrap_or(1) as f64;
    let plot_h = tallest * BOX_H + (tallest - 1.0) * BOX_GAP;

    let mut places = vec![
        Place {
            x: 0.0,
            y: 0.0,
            w: 0.0
        };
        c.nodes.len()
    ];
    let mut x = MARGIN;
    for (k, ns) in cols.iter().enumerate() {
        let n = ns.len() as f64;
        let h = n * BOX_H + (n - 1.0) * BOX_GAP;
        let mut y = TOP + (plot_h - h) / 2.0;
        for &i in ns {
            // Boxes narrower than their column are centred in it.
            places[i] = Place {
                x: x + (col_w[k] - box_w[i]) / 2.0,
                y,
                w: box_w[i],
            };
            y += BOX_H + BOX_GAP;
        }
        x += col_w[k] + gap;
    }
    // A link within one column bends out to its right.
    let bend = 60.0;

    // Each link's path (points; a curve has its control point in the middle), and the
    // segment its label sits on.
    let mut paths: Vec<(Vec<(f64, f64)>, bool)> = Vec::new();
    let mut spots: Vec<Spot> = Vec::new();
    for ((l, lines), &via) in links.iter().zip(&labels).zip(&via) {
        let (a, b) = (places[l.from], places[l.to]);
        let (ca, cb) = (col_of(l.from), col_of(l.to));
        let (pts, curve) = if ca == cb {
            let (x1, y1, x2, y2) = (a.x + a.w, a.mid_y(), b.x + b.w, b.mid_y());
            let cx = x1.max(x2) + bend;
            (vec![(x1, y1), (cx, (y1 + y2) / 2.0), (x2, y2)], true)
        } else {
            // Out of the side facing the target, into the side facing the source.
            let fwd = ca < cb;
            let out_of = |p: Place| if fwd { p.x + p.w } else { p.x };
            let into = |p: Place| if fwd { p.x } else { p.x + p.w };
            let mut pts = vec![(out_of(a), a.mid_y())];
            if let Some(v) = via {
                let p = places[v];
                pts.push((into(p), p.mid_y()));
                pts.push((out_of(p), p.mid_y()));
            }
            pts.push((into(b), b.mid_y()));
            (pts, false)
        };
        let (x, y) = if curve {
            // The curve's furthest point is halfway to its control point.
            let (p0, p1, p2) = (pts[0], pts[1], pts[2]);
            ((p0.0 + p2.0) / 4.0 + p1.0 / 2.0, p1.1)
        } else {
            // Through a proxy: on the segment out of it when the links through it share
            // their source, else on the segment into it.
            let n = pts.len();
            let shared_source = via.is_some()
                && links
                    .iter()
                    .filter(|o| o.from == l.from && o.to != l.to)
                    .count()
                    > 0;
            let (p, q) = if n == 4 && !shared_source {
                (pts[0], pts[1])
            } else {
                (pts[n - 2], pts[n - 1])
            };
            (p.0 + (q.0 - p.0) * LABEL_AT, p.1 + (q.1 - p.1) * LABEL_AT)
        };
        let w = label_w(lines) + 8.0;
        let h = lines.len() as f64 * LABEL_LINE + 4.0;
        spots.push(Spot { x, y, w, h });
        paths.push((pts, curve));
    }
    // Labels that would overlap move down, in the order the links come.
    for i in 1..spots.len() {
        let mut moved = true;
        while moved {
            moved = false;
            for j in 0..i {
                let (a, b) = (spots[i], spots[j]);
                let apart_x = (a.x - b.x).abs() >= (a.w + b.w) / 2.0;
                let apart_y = (a.y - b.y).abs() >= (a.h + b.h) / 2.0;
                if !apart_x && !apart_y {
                    spots[i].y = b.y + (a.h + b.h) / 2.0 + 2.0;
                    moved = true;
                }
            }
        }
    }

    let right_bend = paths.iter().any(|(_, curve)| *curve);
    let title = format!("Topology: {}", c.id);
    let width = (x - gap + MARGIN + if right_bend { bend + 20.0 } else { 0.0 })
        .max(title.chars().count() as f64 * 8.5 + 2.0 * MARGIN);
    let height = spots
        .iter()
        .map(|s| s.y + s.h / 2.0 + MARGIN)
        .fold(TOP + plot_h + MARGIN, f64::max);

    let mut out = String::new();
    svg::open(&mut out, id, &title, width, height);
    // Arrows first, then the boxes over their ends, then the labels over everything.
    for (l, (pts, curve)) in links.iter().zip(&paths) {
        let color = if l.lossy() { LOSSY } else { INK };
        let stroke_w = if l.lossy() { 2.5 } else { 1.5 };
        let mut d = String::new();
        for (i, (px, py)) in pts.iter().enumerate() {
            let cmd = match (i, curve) {
                (0, _) => "M",
                (1, true) => "Q",
                (_, true) => " ",
                _ => "L",
            };
            let _ = write!(d, "{cmd}{px:.1},{py:.1}");
        }
        let _ = write!(
            out,
            "<path d=\"{d}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{stroke_w}\"/>"
        );
        let n = pts.len();
        let (tip, before) = (pts[n - 1], pts[n - 2]);
        arrowhead(
            &mut out,
            tip.0,
            tip.1,
            tip.0 - before.0,
            tip.1 - before.1,
            color,
        );
    }
    for (n, p) in c.nodes.iter().zip(&places) {
        let cx = p.x + p.w / 2.0;
        let _ = write!(
            out,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{BOX_H}\" rx=\"6\" \
             fill=\"{BOX_FILL}\" stroke=\"{BOX_STROKE}\" stroke-width=\"1.2\"/>\
             <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>\
             <text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{}</text>",
            p.x,
            p.y,
            p.w,
            p.y + 18.0,
            esc(&n.name),
            p.y + 35.0,
            esc(&role_line(n)),
        );
    }
    for ((l, lines), s) in links.iter().zip(&labels).zip(&spots) {
        let color = if l.lossy() { LOSSY } else { INK };
        label(&mut out, s.x, s.y, lines, color);
    }
    out.push_str("</svg>");
    Some(out)
}
