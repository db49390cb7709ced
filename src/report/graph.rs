//! The topology of a case drawn as an SVG graph for the HTML report: a labelled box per
//! node (its name, role and replicas), placed in columns by role (sources and pings on the
//! left, proxies in the middle, sinks and echoes on the right), and an arrow per pair of
//! nodes with measured edges, annotated with the delivered rate, the mean latency and any
//! loss. Lossy arrows are drawn in a warning colour. Text widths are estimated, as in
//! [`super::svg`], so the drawing is laid out without a browser.

use super::layout;
use super::numbers;
use super::svg::{self, esc};
use crate::model::{CaseResult, EdgeResult, NodeResult};
use crate::stats::LossSummary;
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

/// The column of a role: 0 for what starts a stream, 1 for what passes it on, 2 for
/// what ends it. Unknown roles go in the middle.
fn column(role: &str) -> usize {
    match role {
        "source" | "ping" => 0,
        "sink" | "echo" => 2,
        _ => 1,
    }
}

/// The node an edge end names: the node itself, or one of its replicas (`src[2]`).
fn node_index(nodes: &[NodeResult], end: &str) -> Option<usize> {
    if let Some(i) = nodes.iter().position(|n| n.name == end) {
        return Some(i);
    }
    let base = end
        .strip_suffix(']')
        .and_then(|s| s.rfind('[').map(|at| &s[..at]))?;
    nodes.iter().position(|n| n.name == base)
}

/// The measured edges between two nodes, merged: replicas of a node send and receive
/// streams of their own, drawn as one arrow.
struct Link {
    from: usize,
    to: usize,
    streams: usize,
    messages: u64,
    /// Sum of the streams' rates, msg/s; None when no stream has one.
    rate: Option<f64>,
    loss: Option<LossSummary>,
    /// Latency samples and their sum, ns, for the mean over all streams.
    samples: u64,
    sum_ns: f64,
}

impl Link {
    fn add(&mut self, e: &EdgeResult) {
        self.streams += 1;
        self.messages += e.messages;
        if let Some(r) = e.msgs_per_sec.filter(|r| r.is_finite()) {
            *self.rate.get_or_insert(0.0) += r;
        }
        if let Some(l) = &e.loss {
            self.loss.get_or_insert_with(LossSummary::default).add(l);
        }
        if let Some(l) = e.latency.as_ref().filter(|l| l.count > 0) {
            self.samples += l.count;
            self.sum_ns += l.mean_ns * l.count as f64;
        }
    }

    fn lossy(&self) -> bool {
        self.loss.as_ref().is_some_and(|l| !l.is_clean())
    }

    /// The lines written along the arrow.
    fn label(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if self.streams > 1 {
            lines.push(format!("{} streams", self.streams));
        }
        lines.push(match self.rate {
            Some(r) => format!("{} msg/s", numbers::grouped_f(r)),
            None => format!("{} messages", numbers::grouped(self.messages)),
        });
        if self.samples > 0 {
            let mean_us = self.sum_ns / self.samples as f64 / 1000.0;
            lines.push(format!("mean {} µs", numbers::value(mean_us)));
        }
        if let Some(l) = self.loss.as_ref().filter(|l| !l.is_clean()) {
            if l.lost > 0 {
                lines.push(format!(
                    "lost {} of {}",
                    numbers::grouped(l.lost),
                    numbers::grouped(l.expected)
                ));
                let places = layout::loss_places(l);
                if !places.is_empty() {
                    lines.push(format!("({})", places.join(", ")));
                }
            }
            lines.extend(layout::loss_extras(l));
        }
        lines
    }
}

/// The arrows of a case: one per ordered pair of nodes with edges, in the order the edges
/// come. Edges naming no node of the case, and a node's edges to itself, are left out.
fn links(c: &CaseResult) -> Vec<Link> {
    let mut out: Vec<Link> = Vec::new();
    for e in &c.edges {
        let (Some(from), Some(to)) = (node_index(&c.nodes, &e.from), node_index(&c.nodes, &e.to))
        else {
            continue;
        };
        if from == to {
            continue;
        }
        let at = match out.iter().position(|l| l.from == from && l.to == to) {
            Some(at) => at,
            None => {
                out.push(Link {
                    from,
                    to,
                    streams: 0,
                    messages: 0,
                    rate: None,
                    loss: None,
                    samples: 0,
                    sum_ns: 0.0,
                });
                out.len() - 1
            }
        };
        out[at].add(e);
    }
    out
}

/// The second line of a node's box: its role, and its replicas when there are several.
fn role_line(n: &NodeResult) -> String {
    if n.replicas > 1 {
        format!("{} ×{}", n.role, n.replicas)
    } else {
        n.role.clone()
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::sample_run;

    #[test]
    fn replicas_resolve_to_their_node() {
        let nodes: Vec<NodeResult> = ["src", "sink"]
            .iter()
            .map(|n| NodeResult {
                name: n.to_string(),
                role: if *n == "src" { "source" } else { "sink" }.to_string(),
                replicas: 3,
                placement: "thread".to_string(),
                cpu_ms: 0.0,
                peak_rss_kib: 0,
                send_msgs_per_sec: None,
                delivered_msgs_per_sec: None,
                forwarded: None,
                cut_short: Vec::new(),
            })
            .collect();
        assert_eq!(node_index(&nodes, "src[2]"), Some(0));
        assert_eq!(node_index(&nodes, "sink"), Some(1));
        assert_eq!(node_index(&nodes, "other[1]"), None);
        assert_eq!(node_index(&nodes, "src["), None);
    }

    #[test]
    fn draws_boxes_arrows_and_the_lossy_edge() {
        let run = sample_run();
        let c = run.cases.iter().find(|c| !c.nodes.is_empty()).unwrap();
        let s = topology("t", c).unwrap();
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert_eq!(s.matches("rx=\"6\"").count(), 3, "a box per node");
        assert_eq!(s.matches("<polygon").count(), 2);
        assert_eq!(s.matches("<path").count(), 2);
        for name in [">pub<", ">sub1<", ">sub2<", ">source<", ">sink<"] {
            assert!(s.contains(name), "{name} missing");
        }
        assert!(
            s.contains(">lost 250 of 600,000<") && s.contains(">(middle 250)<"),
            "{s}"
        );
        assert_eq!(s.matches(&format!("stroke=\"{LOSSY}\"")).count(), 1);
        // The source is left of the sinks.
        let x_of = |name: &str| {
            let at = s.find(&format!(">{name}<")).unwrap();
            let tag = s[..at].rfind("<text x=\"").unwrap();
            s[tag + 9..]
                .split('"')
                .next()
                .unwrap()
                .parse::<f64>()
                .unwrap()
        };
        assert!(x_of("pub") < x_of("sub1"));
        assert_eq!(x_of("sub1"), x_of("sub2"));
    }

    #[test]
    fn merges_replica_streams_and_escapes_names() {
        let mut c = sample_run().cases.pop().unwrap();
        c.nodes[0].name = "p<&>".to_string();
        c.nodes[0].replicas = 2;
        let mut e2 = c.edges[0].clone();
        for e in c.edges.iter_mut() {
            e.from = "p<&>[0]".to_string();
        }
        e2.from = "p<&>[1]".to_string();
        c.edges.push(e2);
        let s = topology("t", &c).unwrap();
        assert!(s.contains(">p&lt;&amp;&gt;<") && !s.contains("p<&>"));
        assert!(s.contains("source ×2"));
        assert_eq!(s.matches("<polygon").count(), 2, "one arrow per pair");
        assert!(s.contains(">2 streams<"));
        assert!(topology("t", &sample_run().cases[0]).is_none());
    }
}
