//! Latency percentile spectra: the latency below which each share of the messages fell,
//! one nine more at each step right, so the tail is as visible as the median.

use super::parts::{medians, y_axis};
use crate::endpoint::Transport;
use crate::model::{CaseResult, Kind};
use crate::report::layout::Group;
use crate::report::svg::{self, Axis, LineChart, Marker, Point, Scale, Series};
use crate::units;

/// Points of a percentile spectrum: x in nines (`-log10(1 - q)`), y in us; up to the
/// quantile of the last sample.
fn spectrum(buckets: &[(u64, u64)]) -> Vec<Point> {
    const STEPS: usize = 400;
    let n: u64 = buckets.iter().map(|b| b.1).sum();
    if n == 0 {
        return Vec::new();
    }
    let x_max = (n as f64).log10().max(1.0);
    let mut out = Vec::with_capacity(STEPS + 1);
    let mut b = 0;
    let mut cum = buckets[0].1;
    for i in 0..=STEPS {
        let x = x_max * i as f64 / STEPS as f64;
        let rank = if i == STEPS {
            n
        } else {
            let q = 1.0 - 10f64.powf(-x);
            ((q * n as f64 - 1e-9).ceil() as u64).clamp(1, n)
        };
        while cum < rank && b + 1 < buckets.len() {
            b += 1;
            cum += buckets[b].1;
        }
        let y = buckets[b].0 as f64 / 1000.0;
        out.push(Point::at(x, y));
    }
    out
}

/// A case's percentile spectrum.
type CaseCurve<'a> = (&'a CaseResult, Vec<Point>);

/// The cases of one transport and load, drawn in one spectrum chart.
struct SpectrumPart {
    transport: Transport,
    load: String,
    open_loop: bool,
    curves: Vec<(String, Vec<Point>)>,
}

/// Most lines a spectrum chart draws: beyond five, lines of neighbouring sizes cross and
/// cannot be followed, even with colours and dashes of their own.
const MAX_LINES: usize = 5;

/// Which of `n` ordered curves a chart draws: all up to [`MAX_LINES`], else the first, the
/// last and evenly spaced ones between (for sizes: the smallest, the largest and steps
/// between).
fn shown(n: usize) -> Vec<usize> {
    if n <= MAX_LINES {
        return (0..n).collect();
    }
    let mut v: Vec<usize> = (0..MAX_LINES)
        .map(|k| (k * (n - 1) + (MAX_LINES - 1) / 2) / (MAX_LINES - 1))
        .collect();
    v.dedup();
    v
}

/// A spectrum chart with a line per (name, points), at most [`MAX_LINES`] of them, and a
/// sentence naming the curves left out (empty when none). Each line has its own colour of
/// the colour-blind-safe palette and its own dash, and its name is written at its end.
fn spectrum_chart(
    id: String,
    title: String,
    open_loop: bool,
    curves: Vec<(String, Vec<Point>)>,
) -> (String, String) {
    let keep = shown(curves.len());
    let left_out: Vec<String> = curves
        .iter()
        .enumerate()
        .filter(|(i, _)| !keep.contains(i))
        .map(|(_, c)| c.0.clone())
        .collect();
    let series: Vec<Series> = curves
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .enumerate()
        .map(|(k, (_, (name, points)))| Series {
            name,
            color: svg::PALETTE[k % svg::PALETTE.len()],
            dash: svg::DASHES[k % svg::DASHES.len()],
            marker: Marker::None,
            points,
        })
        .collect();
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    let what = if open_loop {
        "latency from the due send time (µs)"
    } else {
        "one-way latency (µs)"
    };
    let svg = LineChart {
        id,
        title,
        x: Axis::new(
            "percentile (%), log scale of 1 / (1 - p)",
            Scale::Nines,
            xs,
            |v| v.to_string(),
        ),
        y: y_axis(what, &medians(&series), svg::y_values(&series)),
        series,
        legend: Vec::new(),
        end_labels: true,
    }
    .render();
    let note = if left_out.is_empty() {
        String::new()
    } else {
        format!(
            " {} of {} lines drawn, so each can be followed; left out: {} (in the tables).",
            keep.len(),
            keep.len() + left_out.len(),
            left_out.join(", ")
        )
    };
    (svg, note)
}

/// Percentile spectra of the last repetition of the latency and open-loop cases: one chart
/// per group with a line per message size; when every group has a single size, one chart
/// per transport and load with a line per pattern instead.
pub(super) fn spectrum_charts(groups: &[Group<'_>]) -> Vec<(String, String)> {
    let curves: Vec<(&Group<'_>, Vec<CaseCurve<'_>>)> = groups
        .iter()
        .filter(|g| g.kind == Kind::Latency || g.open_rate.is_some())
        .map(|g| {
            let cs = g
                .cases
                .iter()
                // One-way figures from clocks that differ are not drawn (the warnings say why).
                .filter(|c| !crate::report::layout::hides_latency(c))
                .filter_map(|c| {
                    let h = c.repetitions.last()?.latency_histogram.as_ref()?;
                    Some((*c, spectrum(&h.buckets())))
                })
                .filter(|(_, points)| !points.is_empty())
                .collect::<Vec<_>>();
            (g, cs)
        })
        .filter(|(_, cs)| !cs.is_empty())
        .collect();
    let single = curves.len() > 1 && curves.iter().all(|(_, cs)| cs.len() == 1);
    if !single {
        return curves
            .into_iter()
            .enumerate()
            .map(|(i, (g, cs))| {
                spectrum_chart(
                    format!("spec{i}"),
                    format!(
                        "Latency percentiles: {} over {}, {}",
                        g.pattern,
                        g.transport,
                        g.load()
                    ),
                    g.open_rate.is_some(),
                    cs.into_iter()
                        .map(|(c, p)| (units::bytes(c.message_size as u64), p))
                        .collect(),
                )
            })
            .collect();
    }
    // One curve per group: gather the groups of a transport and load in one chart.
    let mut parts: Vec<SpectrumPart> = Vec::new();
    for (g, cs) in curves {
        for (c, points) in cs {
            let name = format!("{} {}", g.pattern, units::bytes(c.message_size as u64));
            let load = g.load();
            match parts
                .iter_mut()
                .find(|p| p.transport == g.transport && p.load == load)
            {
                Some(p) => p.curves.push((name, points)),
                None => parts.push(SpectrumPart {
                    transport: g.transport,
                    load,
                    open_loop: g.open_rate.is_some(),
                    curves: vec![(name, points)],
                }),
            }
        }
    }
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            spectrum_chart(
                format!("spec{i}"),
                format!("Latency percentiles over {}, {}", p.transport, p.load),
                p.open_loop,
                p.curves,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_curves_are_thinned_to_the_ends_and_even_steps() {
        assert_eq!(shown(3), [0, 1, 2]);
        assert_eq!(shown(5), [0, 1, 2, 3, 4]);
        assert_eq!(shown(13), [0, 3, 6, 9, 12]);
        assert_eq!(shown(16), [0, 4, 8, 11, 15]);
        assert_eq!(shown(6), [0, 1, 3, 4, 5]);
    }

    #[test]
    fn spectrum_follows_the_buckets() {
        // 90 samples at 10 us, 9 at 20 us, 1 at 50 us.
        let pts = spectrum(&[(10_000, 90), (20_000, 9), (50_000, 1)]);
        let at = |x: f64| {
            pts.iter()
                .find(|p| (p.x - x).abs() < 1e-9 || p.x > x)
                .map(|p| p.y)
                .unwrap()
        };
        assert_eq!(at(0.0), 10.0);
        assert_eq!(at(0.9), 10.0);
        assert_eq!(at(1.5), 20.0);
        assert_eq!(pts.last().unwrap().y, 50.0);
        assert!(spectrum(&[]).is_empty());
    }
}
