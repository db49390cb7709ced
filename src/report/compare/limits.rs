//! The limits of two runs of `--find` side by side: a row per limit, its band in each run,
//! the ratio, and whether it moved beyond the bands' noise.

use crate::compare::{Comparison, LimitChange};

/// `245,146 [240,000 .. 260,000]`, or `none` when no limit was found.
fn band(b: &[Option<f64>; 3]) -> String {
    let n = |v: f64| crate::units::grouped(v.round() as u64);
    match b {
        [Some(lo), Some(v), Some(hi)] => format!("{} [{} .. {}]", n(*v), n(*lo), n(*hi)),
        [_, Some(v), _] => n(*v),
        _ => "none".into(),
    }
}

fn verdict(l: &LimitChange) -> &'static str {
    if l.regressed {
        "dropped beyond noise  REGRESSED"
    } else if l.dropped_beyond_noise {
        "dropped beyond noise"
    } else if l.rose_beyond_noise {
        "rose beyond noise"
    } else {
        "within noise"
    }
}

/// The table of limits (empty when the runs searched nothing).
pub fn table(c: &Comparison) -> String {
    if c.limits.is_empty() {
        return String::new();
    }
    let mut rows = vec![["limit", "A", "B", "B / A", "verdict"]
        .map(String::from)
        .to_vec()];
    for l in &c.limits {
        rows.push(vec![
            format!("{} (max {}, {})", l.case, l.what, l.slo),
            band(&l.a),
            band(&l.b),
            l.ratio.map_or("-".into(), |r| format!("{r:.3}")),
            verdict(l).to_string(),
        ]);
    }
    crate::report::text_table::table(&rows, &[3])
}

/// How many limits dropped past the threshold.
pub fn regressed(c: &Comparison) -> usize {
    c.limits.iter().filter(|l| l.regressed).count()
}
