//! Colours, line styles and point markers of the series.

use std::fmt::Write;

/// Colours that stay apart for colour-blind readers (Okabe and Ito), black last.
pub const PALETTE: [&str; 7] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
];

/// Each palette colour (black left out) in three shades: itself, darker and lighter, for
/// charts with more series than the palette has colours: a hue per pattern/transport, a
/// shade per statistic, so every series (and its whiskers) still has a colour of its own.
pub const SHADES: [[&str; 3]; 6] = [
    ["#0072B2", "#00446B", "#80B8D8"],
    ["#D55E00", "#803800", "#EAAE80"],
    ["#009E73", "#005F45", "#80CEB9"],
    ["#CC79A7", "#7A4964", "#E6BCD3"],
    ["#E69F00", "#8A5F00", "#F2CF80"],
    ["#56B4E9", "#346C8C", "#AADAF4"],
];

/// Line style of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dash {
    Solid,
    Dashed,
    Dotted,
    /// Long dash, dot.
    DotDashed,
    /// Long dashes.
    Long,
}

/// Five line styles that stay apart in print and for any colour vision.
pub const DASHES: [Dash; 5] = [
    Dash::Solid,
    Dash::Dashed,
    Dash::Dotted,
    Dash::DotDashed,
    Dash::Long,
];

impl Dash {
    pub(super) fn attr(self) -> &'static str {
        match self {
            Dash::Solid => "",
            Dash::Dashed => " stroke-dasharray=\"7 4\"",
            Dash::Dotted => " stroke-dasharray=\"2 3\"",
            Dash::DotDashed => " stroke-dasharray=\"9 3 2 3\"",
            Dash::Long => " stroke-dasharray=\"14 4\"",
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
