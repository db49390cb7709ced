//! Charts of one statistic family (latency, throughput or bandwidth) by message size: lines
//! over the sizes, or bars when every value is at one size.

use super::parts::{medians, y_axis};
use crate::endpoint::Transport;
use crate::model::{CaseResult, Estimate};
use crate::report::layout::Group;
use crate::report::svg::{
    self, Axis, BarChart, Dash, Key, LineChart, Marker, Point, Scale, Series,
};
use crate::units;

fn size_label(v: f64) -> String {
    units::bytes(v.max(0.0) as u64)
}

type Pick = fn(&CaseResult) -> &Option<Estimate>;

/// One statistic a by-size chart shows of each group: its name in the legend, its line
/// style and marker (line chart) or its colour (bar chart), and where it comes from.
pub(super) struct Stat {
    name: &'static str,
    dash: Dash,
    marker: Marker,
    bar: &'static str,
    pick: Pick,
}

pub(super) const LATENCY: [Stat; 3] = [
    Stat {
        name: "p50",
        dash: Dash::Solid,
        marker: Marker::Circle,
        bar: "#0072B2",
        pick: |c| &c.summary.p50_us,
    },
    Stat {
        name: "p99",
        dash: Dash::Dashed,
        marker: Marker::Triangle,
        bar: "#D55E00",
        pick: |c| &c.summary.p99_us,
    },
    Stat {
        name: "mean",
        dash: Dash::Dotted,
        marker: Marker::Square,
        bar: "#009E73",
        pick: |c| &c.summary.latency_us,
    },
];

pub(super) const THROUGHPUT: [Stat; 2] = [
    Stat {
        name: "delivered",
        dash: Dash::Solid,
        marker: Marker::Circle,
        bar: "#0072B2",
        pick: |c| &c.summary.msgs_per_sec,
    },
    Stat {
        name: "sent",
        dash: Dash::Dashed,
        marker: Marker::Ring,
        bar: "#56B4E9",
        pick: |c| &c.summary.send_msgs_per_sec,
    },
];

pub(super) const BANDWIDTH: [Stat; 1] = [Stat {
    name: "delivered",
    dash: Dash::Solid,
    marker: Marker::Circle,
    bar: "#0072B2",
    pick: |c| &c.summary.mbit_per_sec,
}];

/// A chart of one statistic family by message size.
pub(super) struct SizeChart<'a> {
    pub(super) id: &'a str,
    /// What is shown, capitalised: the start of the chart titles.
    pub(super) what: &'a str,
    pub(super) y_label: &'a str,
    pub(super) stats: &'a [Stat],
}

/// The median of an estimate as a point; the interval is cut at zero (the t-interval of
/// two or three repetitions can reach below it, the quantities cannot).
fn point(c: &CaseResult, e: &Option<Estimate>) -> Option<Point> {
    let e = e.as_ref()?;
    if c.message_size == 0 || !e.median.is_finite() {
        return None;
    }
    Some(Point {
        x: c.message_size as f64,
        y: e.median,
        lo: e.ci_low.is_finite().then_some(e.ci_low.max(0.0)),
        hi: e.ci_high.is_finite().then_some(e.ci_high),
    })
}

impl SizeChart<'_> {
    /// The charts of `groups`: none if nothing has a value; bars if every value is at the
    /// same message size; otherwise lines by size, one chart per transport when there are
    /// more groups (over four) than one chart shows legibly. The flag is true for bars.
    pub(super) fn render(&self, groups: &[&Group<'_>]) -> Vec<(String, bool)> {
        let has = |c: &CaseResult| self.stats.iter().any(|s| point(c, (s.pick)(c)).is_some());
        let groups: Vec<&Group<'_>> = groups
            .iter()
            .copied()
            .filter(|g| g.cases.iter().any(|c| has(c)))
            .collect();
        let mut sizes: Vec<usize> = groups
            .iter()
            .flat_map(|g| g.cases.iter().filter(|c| has(c)).map(|c| c.message_size))
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        match sizes.len() {
            0 => Vec::new(),
            1 => vec![(self.bars(&groups, sizes[0]), true)],
            _ if groups.len() > 4 => {
                let mut transports: Vec<Transport> = Vec::new();
                for g in &groups {
                    if !transports.contains(&g.transport) {
                        transports.push(g.transport);
                    }
                }
                transports
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let part: Vec<&Group<'_>> = groups
                            .iter()
                            .copied()
                            .filter(|g| g.transport == *t)
                            .collect();
                        let title = format!("{} by message size over {t} (closed loop)", self.what);
                        (self.lines(&part, &format!("{}{i}", self.id), &title), false)
                    })
                    .collect()
            }
            _ => {
                let title = format!("{} by message size (closed loop)", self.what);
                vec![(self.lines(&groups, self.id, &title), false)]
            }
        }
    }

    fn lines(&self, groups: &[&Group<'_>], id: &str, title: &str) -> String {
        let mut series = Vec::new();
        let mut legend = Vec::new();
        // A colour per series, so each interval's whisker has a colour of its own: the
        // palette's while it has enough, else a hue per pattern/transport and a shade
        // (itself, darker, lighter) per statistic. The dash and the marker tell the
        // statistic too.
        let own = groups.len() * self.stats.len() <= svg::PALETTE.len();
        for (i, g) in groups.iter().enumerate() {
            for (j, st) in self.stats.iter().enumerate() {
                let color = if own {
                    svg::PALETTE[i * self.stats.len() + j]
                } else {
                    svg::SHADES[i % svg::SHADES.len()][j % 3]
                };
                let name = if self.stats.len() > 1 {
                    format!("{} {}", g.name(), st.name)
                } else {
                    g.name()
                };
                let points: Vec<Point> = g
                    .cases
                    .iter()
                    .filter_map(|c| point(c, (st.pick)(c)))
                    .collect();
                if !points.is_empty() {
                    legend.push(Key::line(&name, color, st.dash, st.marker));
                }
                series.push(Series {
                    name,
                    color,
                    dash: st.dash,
                    marker: st.marker,
                    points,
                });
            }
        }
        series.retain(|s| !s.points.is_empty());
        let xs: Vec<f64> = series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.x))
            .collect();
        // The axis holds every median, and the intervals up to half as high again: a wide
        // interval of a short run would otherwise squash all lines flat. Longer whiskers
        // run out of the frame, which shows they go on.
        let top = medians(&series).into_iter().fold(0.0, f64::max);
        let ys: Vec<f64> = svg::y_values(&series)
            .into_iter()
            .map(|v| v.min(top * 1.5))
            .collect();
        LineChart {
            id: id.to_string(),
            title: title.to_string(),
            x: Axis::new(
                "message size (bytes, log2 scale)",
                Scale::Log2,
                xs,
                size_label,
            ),
            y: y_axis(self.y_label, &medians(&series), ys),
            series,
            legend,
            end_labels: false,
        }
        .render()
    }

    fn bars(&self, groups: &[&Group<'_>], size: usize) -> String {
        let at = |g: &Group<'_>, st: &Stat| {
            g.cases
                .iter()
                .find(|c| c.message_size == size)
                .and_then(|c| point(c, (st.pick)(c)))
        };
        BarChart {
            id: self.id.to_string(),
            title: format!(
                "{} at {} (closed loop)",
                self.what,
                units::bytes(size as u64)
            ),
            x_label: self.y_label.to_string(),
            categories: groups.iter().map(|g| g.name()).collect(),
            metrics: self
                .stats
                .iter()
                .map(|s| (s.name.to_string(), s.bar))
                .collect(),
            values: groups
                .iter()
                .map(|g| self.stats.iter().map(|st| at(g, st).map(|p| p.y)).collect())
                .collect(),
            intervals: groups
                .iter()
                .map(|g| {
                    self.stats
                        .iter()
                        .map(|st| at(g, st).and_then(|p| Some((p.lo?, p.hi?))))
                        .collect()
                })
                .collect(),
            value_fmt: units::sig3,
        }
        .render()
    }
}
