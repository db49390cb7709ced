//! A small SVG chart kit for the HTML report: linear, logarithmic and "nines" (percentile)
//! axes with readable ticks, line series with markers and error bars, horizontal grouped
//! bars, and a legend beside the plot. Text widths are estimated, so labels are laid out
//! without a browser; everything is sized to stay inside the drawing.
//! Colours and line styles are in `style`, axes in `axis`, the shared drawing pieces in
//! `parts`, and each kind of chart in a module of its own.

mod axis;
mod bar;
mod line;
mod parts;
mod style;
#[cfg(test)]
mod tests;

pub use axis::{auto_scale, Axis, Scale};
pub use bar::BarChart;
pub use line::LineChart;
pub(super) use parts::open;
pub use parts::{esc, y_values, Key, Point, Series};
pub use style::{Dash, Marker, DASHES, PALETTE, SHADES};
