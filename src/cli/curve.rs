//! `run --curve`: latency under a rising offered load. Each throughput case runs at a
//! rate that rises by half each step (open loop: every message is due at its time, so a
//! slow receiver shows as latency, not as a slower sender), until a step breaks `--slo`:
//! loss, a delivered rate that no longer follows the offered one, or p99 past its bound.
//! The curve is printed as a table with its knee marked, kept with the run and drawn in
//! the HTML report.

use super::limit::{Searching, MAX_STEPS};
use zmqperf::model::{CurvePoint, LoadCurve};
use zmqperf::runner::CaseSpec;

/// Each step offers this much more than the last.
const RISE: f64 = 1.5;

/// The curve of `case` from `start` msg/s.
pub fn curve(ctx: &mut Searching, case: &CaseSpec, start: f64, slo: &str) -> LoadCurve {
    let mut points = Vec::new();
    let mut v = start;
    for n in 1..=MAX_STEPS {
        let Some((done, f)) = ctx.measure(case, v) else {
            break;
        };
        let (held, why) = ctx.slo.judge(&f);
        println!(
            "  step {n:>2}: {:>14}  {}  {why}",
            ctx.what.show(v),
            if held { "holds" } else { "broke" }
        );
        let max = done
            .repetitions
            .iter()
            .filter_map(|r| r.latency)
            .map(|l| l.max_ns as f64)
            .reduce(f64::max);
        points.push(CurvePoint {
            offered: v,
            delivered: f.delivered.unwrap_or(0.0),
            p50_ns: done.summary.p50_us.map(|e| e.median * 1e3),
            p99_ns: f.p99_ns,
            max_ns: max,
            lost: f.lost,
            held,
        });
        if !held || v >= ctx.ceiling {
            break;
        }
        v = (v * RISE).round().min(ctx.ceiling);
    }
    let knee = LoadCurve::knee_of(&points);
    let c = LoadCurve {
        case: case.id(),
        slo: slo.to_string(),
        points,
        knee,
    };
    print!("{}", zmqperf::report::curve::text(&c));
    c
}
