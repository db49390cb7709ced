//! What a security mechanism costs: each case run under PLAIN, CURVE or GSSAPI (`zmqperf
//! run --security null,curve`, `--curve-cost`) beside its NULL twin of the same run.

use crate::model::{CaseResult, Kind, RunResult};
use crate::report::estimate;

/// The columns of the security-cost table.
pub const SECURITY_HEADS: [&str; 6] = [
    "case (NULL)",
    "mechanism",
    "figure",
    "NULL",
    "with mechanism",
    "ratio [95% CI]",
];

const MECHANISMS: [&str; 3] = ["curve", "plain", "gssapi"];

/// The case's mechanism (from its pattern label) and the id of its NULL twin.
fn twin(c: &CaseResult) -> Option<(&'static str, String)> {
    let open = c.id.find('[')?;
    let close = open + c.id[open..].find(']')?;
    let parts: Vec<&str> = c.id[open + 1..close].split(',').collect();
    let mech = MECHANISMS.into_iter().find(|m| parts.contains(m))?;
    let rest: Vec<&str> = parts.into_iter().filter(|p| *p != mech).collect();
    let label = if rest.is_empty() {
        String::new()
    } else {
        format!("[{}]", rest.join(","))
    };
    Some((
        mech,
        format!("{}{}{}", &c.id[..open], label, &c.id[close + 1..]),
    ))
}

/// One row per case with a mechanism whose NULL twin is in the run: mean latency (us) for
/// latency cases, delivered msg/s for throughput, and the ratio mechanism / NULL with a
/// conservative 95% interval (the ends of both intervals).
pub fn security_cost(run: &RunResult) -> Vec<[String; 6]> {
    let mut out = Vec::new();
    for c in &run.cases {
        let Some((mech, twin_id)) = twin(c) else {
            continue;
        };
        let Some(null) = run.cases.iter().find(|n| n.id == twin_id) else {
            continue;
        };
        let (figure, a, b) = match c.kind {
            Kind::Latency => (
                "mean latency (us)",
                null.summary.latency_us.as_ref(),
                c.summary.latency_us.as_ref(),
            ),
            Kind::Throughput => (
                "msg/s",
                null.summary.msgs_per_sec.as_ref(),
                c.summary.msgs_per_sec.as_ref(),
            ),
        };
        let (Some(a), Some(b)) = (a, b) else {
            continue;
        };
        out.push([
            twin_id,
            mech.to_uppercase(),
            figure.into(),
            estimate::estimate_value(a),
            estimate::estimate_value(b),
            estimate::ratio_ci(b, a),
        ]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Estimate;

    #[test]
    fn twins_are_found_by_label() {
        let mut run = crate::report::fixture::sample_run();
        let base = run.cases[0].clone();
        let mut curve = base.clone();
        curve.id = base.id.replacen("reqrep", "reqrep[curve]", 1);
        let est = |m: f64| Estimate {
            median: m,
            ci_low: m * 0.9,
            ci_high: m * 1.1,
            spread_pct: 5.0,
            n: 3,
        };
        curve.summary.latency_us =
            Some(est(base.summary.latency_us.as_ref().unwrap().median * 2.0));
        run.cases.push(curve);
        let rows = security_cost(&run);
        assert_eq!(rows.len(), 1, "{rows:?}");
        assert_eq!(rows[0][0], base.id);
        assert_eq!(rows[0][1], "CURVE");
        assert!(rows[0][5].starts_with("2.00 ["), "{}", rows[0][5]);
        // A mechanism case without its NULL twin has no row.
        let mut lone = run.cases.last().unwrap().clone();
        lone.id = "latency/pair-lat[x=1,plain]/tcp/64".into();
        run.cases.push(lone);
        assert_eq!(security_cost(&run).len(), 1);
    }
}
