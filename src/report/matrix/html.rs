//! The matrix as one HTML page: per pattern, one heat map per transport and size side by
//! side, each cell a pair coloured by its figure over the baseline pair's on a diverging
//! scale centred on 1 (blue better, red worse, the legend above says which way), with the
//! pairs that failed, lost messages or did not run marked in the same grid. A pattern fits
//! on one screen; the reasons are listed under it.

use super::{base_name, baseline_text, ratio_text};
use crate::report::svg::esc;
use crate::scenarios::matrix::{Cell, Grid, Matrix, Status};
use crate::units::value;
use std::fmt::Write;

/// Size of a cell, and the font of the grid.
const CELL_W: f64 = 48.0;
const CELL_H: f64 = 22.0;
const FONT: f64 = 11.0;
/// Estimated advance of one character at `FONT`.
const CHAR_W: f64 = 6.4;
/// Height of the column heads (names turned 40 degrees) and of the title above them.
const HEAD_H: f64 = 52.0;
const TITLE_H: f64 = 22.0;

/// The colour of no difference, and of the two ends of the scale.
const NEUTRAL: (f64, f64, f64) = (247.0, 247.0, 247.0);
const BETTER: (f64, f64, f64) = (33.0, 102.0, 172.0);
const WORSE: (f64, f64, f64) = (178.0, 24.0, 43.0);
/// Cells without a ratio: failed, and not run.
const FAIL_FILL: &str = "#4d4d4d";
const NONE_FILL: &str = "#e2e2e2";
/// The outline of a pair that lost messages.
const LOSS_EDGE: &str = "#e69f00";

/// The spans the scale may have (a ratio this many times better or worse is full colour):
/// the smallest that holds every ratio of the page, so nothing saturates below 32 times.
const SPANS: [f64; 5] = [2.0, 4.0, 8.0, 16.0, 32.0];

/// Whether a higher figure is worse (latency) or better (msg/s).
fn higher_is_worse(g: &Grid) -> bool {
    g.pattern == "reqrep"
}

/// The span of the page's scale: the smallest of [`SPANS`] that holds every ratio shown,
/// with an interval or without.
fn span_of(m: &Matrix) -> f64 {
    let far = m
        .grids
        .iter()
        .flat_map(|g| &g.cells)
        .filter_map(|c| c.ratio.map(|r| r.0).or(c.ratio_without_interval))
        .filter(|r| r.is_finite() && *r > 0.0)
        .map(|r| r.max(1.0 / r))
        .fold(1.0, f64::max);
    SPANS
        .iter()
        .copied()
        .find(|s| far <= s * (1.0 + 1e-9))
        .unwrap_or(SPANS[SPANS.len() - 1])
}

/// Where ratio `r` falls on the scale: -1 (span times worse) .. 0 (same) .. 1 (better).
fn position(r: f64, span: f64, worse_up: bool) -> f64 {
    let x = (r.max(1e-12).log2() / span.log2()).clamp(-1.0, 1.0);
    if worse_up {
        -x
    } else {
        x
    }
}

/// The colour at position `x` of the scale, and whether text on it should be white.
fn colour(x: f64) -> (String, bool) {
    let end = if x >= 0.0 { BETTER } else { WORSE };
    let t = x.abs();
    let mix = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    (
        format!(
            "#{:02x}{:02x}{:02x}",
            mix(NEUTRAL.0, end.0),
            mix(NEUTRAL.1, end.1),
            mix(NEUTRAL.2, end.2)
        ),
        t > 0.55,
    )
}

/// The heading of a pattern.
fn pattern_title(pattern: &str) -> &'static str {
    match pattern {
        "reqrep" => "REQ/REP latency, client x server",
        "pushpull" => "PUSH/PULL throughput, sender x receiver",
        _ => "PUB/SUB throughput, publisher x subscriber",
    }
}

/// The page's styles.
const CSS: &str = "
body { font: 14px system-ui, 'Segoe UI', Roboto, Arial, 'DejaVu Sans', sans-serif;
  margin: 16px 24px; color: #1a1a1a; }
h1 { font-size: 1.4em; margin: 0 0 6px; }
h2 { font-size: 1.15em; margin: 22px 0 6px; padding-bottom: 3px; border-bottom: 1px solid #ccc; }
ul.impls { columns: 2; margin: 4px 0; padding-left: 18px; font-size: 13px; }
.note { color: #555; font-size: 13px; margin: 4px 0; }
.grids { display: flex; flex-wrap: wrap; gap: 4px 20px; align-items: flex-start; }
figure { margin: 4px 0; }
figcaption { color: #444; font-size: 12px; max-width: 600px; }
svg.chart { display: block; font-family: inherit; }
svg.chart text { fill: #222; }
details.reasons { font-size: 12px; color: #333; margin: 2px 0 8px; }
details.reasons summary { cursor: pointer; color: #555; }
ol.reasons { margin: 2px 0; padding-left: 28px; }
";

/// The HTML report: one page, a section per pattern.
pub fn html(m: &Matrix) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>zmqperf matrix {}</title>\n<style>{CSS}</style></head><body>\n",
        esc(&m.run_id)
    );
    let _ = writeln!(
        out,
        "<h1>zmqperf matrix {}</h1>\n<p class=\"note\">{} passes, pairs interleaved; each \
         figure over {}'s from the same passes, with its 95% interval in the cell's tooltip.</p>\n\
         <ul class=\"impls\">",
        esc(&m.run_id),
        m.passes,
        esc(&base_name(m))
    );
    for i in &m.impls {
        let _ = writeln!(out, "<li><b>{}</b>: {}</li>", esc(&i.name), esc(&i.label));
    }
    out.push_str("</ul>\n");
    let span = span_of(m);
    let mut patterns: Vec<&str> = Vec::new();
    for g in &m.grids {
        if !patterns.contains(&g.pattern.as_str()) {
            patterns.push(&g.pattern);
        }
    }
    for (k, p) in patterns.iter().enumerate() {
        let grids: Vec<&Grid> = m.grids.iter().filter(|g| g.pattern == *p).collect();
        section(&mut out, m, &grids, k, span);
    }
    out.push_str("</body></html>\n");
    out
}

/// One pattern: its heading, the legend, its heat maps side by side and the reasons.
fn section(out: &mut String, m: &Matrix, grids: &[&Grid], k: usize, span: f64) {
    let worse_up = higher_is_worse(grids[0]);
    let _ = writeln!(
        out,
        "<section class=\"pattern\" id=\"p-{}\">\n<h2>{}: {} over {}'s</h2>",
        esc(&grids[0].pattern),
        pattern_title(&grids[0].pattern),
        if worse_up { "latency" } else { "msg/s" },
        esc(&base_name(m))
    );
    let (rows, columns) = match grids[0].pattern.as_str() {
        "reqrep" => ("client", "server"),
        "pushpull" => ("sender", "receiver"),
        _ => ("publisher", "subscriber"),
    };
    let _ = writeln!(
        out,
        "<p class=\"note\">Rows: the {rows}; columns: the {columns}. Outlined in black: \
         {base} with itself (1.0 by definition).</p>",
        base = esc(&base_name(m))
    );
    out.push_str(&legend(m, &format!("legend{k}"), span, worse_up));
    out.push_str("<div class=\"grids\">\n");
    let mut notes = Vec::new();
    for (j, g) in grids.iter().enumerate() {
        let svg = heat_map(m, g, &format!("heat{k}-{j}"), span, &mut notes);
        let _ = writeln!(
            out,
            "<figure>{svg}<figcaption>{}</figcaption></figure>",
            esc(&baseline_text(m, g))
        );
    }
    out.push_str("</div>\n");
    if !notes.is_empty() {
        // A long list is folded, so the pattern still fits a screen.
        let _ = write!(
            out,
            "<details class=\"reasons\"{}><summary>{} reason{} for the numbered marks</summary>\
             <ol class=\"reasons\">",
            if notes.len() <= 4 { " open" } else { "" },
            notes.len(),
            if notes.len() == 1 { "" } else { "s" }
        );
        for n in &notes {
            let _ = write!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ol></details>\n");
    }
    out.push_str("</section>\n");
}

/// The legend: the colour scale from `1/span` to `span` with 1.0 at its centre, which end
/// is better, and the marks of the cells without a ratio.
fn legend(m: &Matrix, id: &str, span: f64, worse_up: bool) -> String {
    let (x0, w, top, h) = (150.0, 300.0, 26.0, 12.0);
    let total_w = x0 + w + 330.0;
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg class=\"chart legend\" id=\"{id}\" viewBox=\"0 0 {total_w:.0} 62\" width=\"{total_w:.0}\" \
         height=\"62\" role=\"img\" aria-labelledby=\"{id}-t\" font-size=\"{FONT}\">\
         <title id=\"{id}-t\">Colour scale: ratio to {base}, 1.0 in the middle</title>\
         <defs><linearGradient id=\"{id}-g\" x1=\"0\" x2=\"1\" y1=\"0\" y2=\"0\">",
        base = esc(&base_name(m))
    );
    for s in 0..=8 {
        let t = s as f64 / 8.0;
        let r = span.powf(t * 2.0 - 1.0);
        let (c, _) = colour(position(r, span, worse_up));
        let _ = write!(out, "<stop offset=\"{t:.3}\" stop-color=\"{c}\"/>");
    }
    let _ = write!(
        out,
        "</linearGradient></defs>\
         <text x=\"{:.1}\" y=\"14\" text-anchor=\"end\">ratio to {}</text>\
         <rect class=\"scale\" x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" \
         fill=\"url(#{id}-g)\" stroke=\"#999\" stroke-width=\"0.5\"/>",
        x0 - 8.0,
        esc(&base_name(m))
    );
    // Ticks on the powers of two from 1/span to span.
    let n = span.log2().round() as i32;
    for e in -n..=n {
        let r = 2f64.powi(e);
        let x = x0 + (e as f64 / n as f64 + 1.0) / 2.0 * w;
        let label = if r >= 1.0 {
            format!("{r:.1}")
        } else {
            format!("1/{:.0}", 1.0 / r)
        };
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{:.1}\" stroke=\"#333\"/>\
             <text class=\"tick\" data-ratio=\"{r}\" x=\"{x:.1}\" y=\"{:.1}\" \
             text-anchor=\"middle\">{label}</text>",
            top + h,
            top + h + 4.0,
            top + h + 16.0
        );
    }
    let (left, right) = if worse_up {
        ("faster", "slower")
    } else {
        ("slower", "faster")
    };
    let _ = write!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" dominant-baseline=\"middle\">{left} \
         \u{2190}</text><text x=\"{:.1}\" y=\"{:.1}\" dominant-baseline=\"middle\">\u{2192} \
         {right}</text>",
        x0 - 6.0,
        top + h / 2.0,
        x0 + w + 6.0,
        top + h / 2.0
    );
    // The marks of cells without a ratio.
    let kx = x0 + w + 72.0;
    let swatch = |out: &mut String, x: f64, fill: &str, edge: &str, name: &str| {
        let _ = write!(
            out,
            "<rect x=\"{x:.1}\" y=\"{top:.1}\" width=\"16\" height=\"{h:.1}\" fill=\"{fill}\" \
             stroke=\"{edge}\" stroke-width=\"2\"/><text x=\"{:.1}\" y=\"{:.1}\" \
             dominant-baseline=\"middle\">{name}</text>",
            x + 20.0,
            top + h / 2.0
        );
    };
    swatch(&mut out, kx, "#f7f7f7", LOSS_EDGE, "lost messages");
    swatch(&mut out, kx + 112.0, FAIL_FILL, FAIL_FILL, "failed");
    swatch(&mut out, kx + 172.0, NONE_FILL, NONE_FILL, "not run");
    out.push_str("</svg>\n");
    out
}

/// The number of reason `why` in `notes` (from 1), added if new.
fn note(notes: &mut Vec<String>, why: &str) -> usize {
    match notes.iter().position(|n| n == why) {
        Some(k) => k + 1,
        None => {
            notes.push(why.to_string());
            notes.len()
        }
    }
}

/// The text in a cell, and the number of its reason: the ratio (or the figure without a
/// baseline), `FAIL`, `2 of 5` (failed in 2 of 5 passes) or `-` (not run).
fn cell_text(c: &Cell, notes: &mut Vec<String>) -> (String, Option<usize>) {
    match &c.status {
        Status::Works => (short_ratio(c), None),
        Status::Lossy(why) => (short_ratio(c), Some(note(notes, why))),
        Status::Fails(why) => {
            let text = match c.failed_passes {
                Some((failed, run)) => format!("{failed} of {run}"),
                None => "FAIL".to_string(),
            };
            (text, Some(note(notes, why)))
        }
        Status::NotRun(why) => ("-".to_string(), Some(note(notes, why))),
    }
}

/// The ratio with two decimals, or the median itself without a baseline.
fn short_ratio(c: &Cell) -> String {
    match (c.ratio, c.ratio_without_interval, &c.value) {
        (Some((r, _, _)), _, _) | (None, Some(r), _) => format!("{r:.2}"),
        // Without a baseline, the figure itself, short enough for the cell.
        (None, None, Some(v)) => crate::units::sig3(v.median),
        _ => "-".into(),
    }
}

/// One grid as a heat map: clients down, servers across; reasons go to `notes`.
fn heat_map(m: &Matrix, g: &Grid, id: &str, span: f64, notes: &mut Vec<String>) -> String {
    let n = m.impls.len();
    let worse_up = higher_is_worse(g);
    let name_w = m
        .impls
        .iter()
        .map(|i| i.name.chars().count() as f64 * CHAR_W)
        .fold(40.0, f64::max);
    let left = name_w + 14.0;
    let top = TITLE_H + HEAD_H;
    // Room on the right for the last column head, turned.
    let w = left + n as f64 * CELL_W + name_w * 0.7;
    let h = top + n as f64 * CELL_H + 6.0;
    let title = format!(
        "{} over {}, {} B",
        pattern_title(&g.pattern),
        g.transport,
        g.size
    );
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg class=\"chart heat\" id=\"{id}\" viewBox=\"0 0 {w:.0} {h:.0}\" width=\"{w:.0}\" \
         height=\"{h:.0}\" role=\"img\" aria-labelledby=\"{id}-t\" font-size=\"{FONT}\">\
         <title id=\"{id}-t\">{}</title><text x=\"4\" y=\"15\" font-weight=\"bold\" \
         font-size=\"13\">{} {} B</text>",
        esc(&title),
        g.transport,
        g.size
    );
    for (k, i) in m.impls.iter().enumerate() {
        let cx = left + (k as f64 + 0.5) * CELL_W;
        let _ = write!(
            out,
            "<text x=\"{cx:.1}\" y=\"{:.1}\" transform=\"rotate(-40 {cx:.1} {:.1})\">{}</text>",
            top - 5.0,
            top - 5.0,
            esc(&i.name)
        );
        let cy = top + (k as f64 + 0.5) * CELL_H;
        let _ = write!(
            out,
            "<text x=\"{:.1}\" y=\"{cy:.1}\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>",
            left - 6.0,
            esc(&i.name)
        );
    }
    for (a, _) in m.impls.iter().enumerate() {
        for (b, _) in m.impls.iter().enumerate() {
            let Some(c) = g.cells.get(a * n + b) else {
                continue;
            };
            let (x, y) = (left + b as f64 * CELL_W, top + a as f64 * CELL_H);
            cell(&mut out, m, g, c, (x, y), span, worse_up, notes);
        }
    }
    out.push_str("</svg>");
    out
}

/// One cell of a heat map at `(x, y)`: its colour, its text, its outline (lost messages,
/// or the baseline pair) and its tooltip.
#[allow(clippy::too_many_arguments)]
fn cell(
    out: &mut String,
    m: &Matrix,
    g: &Grid,
    c: &Cell,
    (x, y): (f64, f64),
    span: f64,
    worse_up: bool,
    notes: &mut Vec<String>,
) {
    let (class, fill, white) = match (
        &c.status,
        c.ratio.or(c.ratio_without_interval.map(|r| (r, r, r))),
    ) {
        (Status::Fails(_), _) => ("fail", FAIL_FILL.to_string(), true),
        (Status::NotRun(_), _) => ("none", NONE_FILL.to_string(), false),
        (s, Some((r, _, _))) => {
            let (fill, white) = colour(position(r, span, worse_up));
            (
                if matches!(s, Status::Lossy(_)) {
                    "loss"
                } else {
                    "ok"
                },
                fill,
                white,
            )
        }
        (s, None) => (
            if matches!(s, Status::Lossy(_)) {
                "loss"
            } else {
                "ok"
            },
            "#ffffff".to_string(),
            false,
        ),
    };
    let base = c.client == m.baseline && c.server == m.baseline;
    let edge = if class == "loss" {
        format!(" stroke=\"{LOSS_EDGE}\" stroke-width=\"2.5\"")
    } else if base {
        " stroke=\"#000\" stroke-width=\"2\"".to_string()
    } else {
        " stroke=\"#fff\" stroke-width=\"1\"".to_string()
    };
    let why = match &c.status {
        Status::Works => "works".to_string(),
        Status::Lossy(w) | Status::Fails(w) | Status::NotRun(w) => w.clone(),
    };
    let figure = c
        .value
        .as_ref()
        .map(|v| format!("; {} {}", value(v.median), g.unit))
        .unwrap_or_default();
    let (text, reason) = cell_text(c, notes);
    // The reason's number raised after the text, as a footnote mark.
    let reason = reason
        .map(|k| format!("<tspan class=\"fn\" font-size=\"8\" dy=\"-3\">{k}</tspan>"))
        .unwrap_or_default();
    let _ = write!(
        out,
        "<g class=\"cell {class}\"><title>{} \u{2192} {}: {} x {}{}; {}</title>\
         <rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\"{edge}/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" dominant-baseline=\"middle\"{}>{}{reason}</text></g>",
        esc(&c.client),
        esc(&c.server),
        esc(&ratio_text(c)),
        esc(&base_name(m)),
        esc(&figure),
        esc(&why),
        x + 0.5,
        y + 0.5,
        CELL_W - 1.0,
        CELL_H - 1.0,
        x + CELL_W / 2.0,
        y + CELL_H / 2.0,
        if white { " style=\"fill:#fff\"" } else { "" },
        esc(&text)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_span_holds_every_ratio_shown() {
        let mut m = crate::report::fixture::matrix_quick();
        assert_eq!(span_of(&m), 4.0, "ratios up to 4.0");
        m.grids[0].cells[1].ratio = None;
        m.grids[0].cells[1].ratio_without_interval = Some(26.3);
        assert_eq!(span_of(&m), 32.0, "a ratio without an interval counts too");
        m.grids[0].cells[1].ratio_without_interval = Some(1.0 / 40.0);
        assert_eq!(span_of(&m), 32.0, "past 32 times it saturates");
    }

    #[test]
    fn the_scale_is_centred_on_one_and_spans_the_ratios() {
        assert_eq!(position(1.0, 2.0, true), 0.0);
        assert_eq!(position(2.0, 2.0, true), -1.0, "twice the latency is worse");
        assert_eq!(position(2.0, 2.0, false), 1.0, "twice the msg/s is better");
        assert_eq!(position(0.25, 4.0, false), -1.0);
        assert_eq!(colour(0.0).0, "#f7f7f7");
        assert_eq!(colour(1.0).0, "#2166ac");
        assert_eq!(colour(-1.0).0, "#b2182b");
    }
}
