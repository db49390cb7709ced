//! A latency-under-load curve in words: a row per step (offered and delivered rates, p50,
//! p99 and max latency, loss), the knee marked, and how it ended.

use crate::model::LoadCurve;
use crate::units::{grouped, latency};

/// The curve's table, then its knee and its end.
pub fn text(c: &LoadCurve) -> String {
    let ns = |v: Option<f64>| v.map_or("-".into(), latency);
    let mut rows = vec![[
        "offered msg/s",
        "delivered msg/s",
        "p50",
        "p99",
        "max",
        "lost",
        "",
    ]
    .map(String::from)
    .to_vec()];
    for (i, p) in c.points.iter().enumerate() {
        rows.push(vec![
            grouped(p.offered.round() as u64),
            grouped(p.delivered.round() as u64),
            ns(p.p50_ns),
            ns(p.p99_ns),
            ns(p.max_ns),
            grouped(p.lost),
            if c.knee == Some(i) {
                "<- knee".into()
            } else if !p.held {
                "broke".into()
            } else {
                String::new()
            },
        ]);
    }
    let mut out = format!("{}: latency under load ({})\n", c.case, c.slo);
    for line in crate::report::text_table::table(&rows, &[0, 1, 5]).lines() {
        out.push_str("  ");
        out.push_str(line);
        out.push('\n');
    }
    match c.knee.map(|k| &c.points[k]) {
        Some(k) => out.push_str(&format!(
            "  knee: {} msg/s offered, the highest before p99 rose past twice its value at the lightest load and stayed there, or the service level broke\n",
            grouped(k.offered.round() as u64)
        )),
        None => out.push_str("  no knee: even the lightest load broke the service level\n"),
    }
    let end = match c.points.last() {
        Some(p) if !p.held => "the last step broke the service level",
        Some(_) => "no step broke the service level (the ceiling or the step limit came first)",
        None => "no step ran",
    };
    out.push_str(&format!("  ended: {end}\n"));
    out
}
