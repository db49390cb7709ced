//! The fan-out's raw-socket floor beside libzmq: for each fan-out case measured with
//! `--floor`, bars of the mean, median and 99th percentile latency of every delivery over
//! libzmq and over plain sockets, so the share that is ZeroMQ's can be seen.

use super::parts::figure;
use crate::model::{CaseResult, LoopMode, RunResult};
use crate::report::svg::BarChart;
use crate::units;

/// A fan-out case with its floor: an open-loop case (a publisher on ticks) that carries
/// one (latency cases carry theirs in the tables' "raw socket floor" row).
fn fanout_with_floor(c: &CaseResult) -> bool {
    c.loop_mode == LoopMode::Open && c.floor.is_some()
}

/// The floor charts of the run's fan-out cases; how many were drawn.
pub(super) fn floor_charts(out: &mut String, run: &RunResult) -> usize {
    let mut drawn = 0;
    for (i, c) in run
        .cases
        .iter()
        .filter(|c| fanout_with_floor(c))
        .enumerate()
    {
        let Some(f) = &c.floor else { continue };
        let s = &c.summary;
        let ms = |v: Option<f64>| v.filter(|v| v.is_finite()).map(|v| v / 1000.0);
        let rows = [
            (
                "mean",
                ms(s.latency_us.map(|e| e.median)),
                ms(Some(f.latency_us)),
            ),
            ("p50", ms(s.p50_us.map(|e| e.median)), ms(f.p50_us)),
            ("p99", ms(s.p99_us.map(|e| e.median)), ms(f.p99_us)),
        ];
        let rows: Vec<_> = rows
            .into_iter()
            .filter(|(_, z, r)| z.is_some() || r.is_some())
            .collect();
        let chart = BarChart {
            id: format!("floor{i}"),
            title: format!(
                "{} over {}: libzmq beside the raw-socket floor",
                c.pattern, c.transport
            ),
            x_label: "latency of a delivery (ms)".to_string(),
            categories: rows.iter().map(|r| format!("{} latency", r.0)).collect(),
            metrics: vec![
                ("libzmq".to_string(), "#0072B2"),
                (format!("raw {} sockets (floor)", f.socket), "#E69F00"),
            ],
            values: rows.iter().map(|r| vec![r.1, r.2]).collect(),
            intervals: Vec::new(),
            value_fmt: units::sig3,
        };
        let share = match (s.latency_us, f.latency_us) {
            (Some(z), raw) if z.median > 0.0 && raw.is_finite() => format!(
                " ZeroMQ's part of the mean latency: {:.0}% ({} ms of {} ms is above the floor).",
                (1.0 - raw / z.median).max(0.0) * 100.0,
                units::sig3((z.median - raw).max(0.0) / 1000.0),
                units::sig3(z.median / 1000.0)
            ),
            _ => String::new(),
        };
        figure(
            out,
            &chart.render(),
            &format!(
                "The same fan-out ({} deliveries of {}) over libzmq and over plain {} \
                 sockets (zmqperf fanout --floor): latency from the publisher's send to \
                 the subscriber's receipt, one measurement each, so no interval.{share}",
                units::grouped(f.roundtrips),
                units::bytes(c.message_size as u64),
                f.socket
            ),
        );
        drawn += 1;
    }
    drawn
}
