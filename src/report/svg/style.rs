//! Colours, line styles and point markers of the series.

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

/// Line style of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
}

impl Dash {
    pub(super) fn attr(self) -> &'static str {
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

pub(super) fn marker(out: &mut String, m: Marker, x: f64, y: f64, color: &str) {
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
