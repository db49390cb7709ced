//! The delivery figure: bars for the cases whose streams lost, duplicated or reordered
//! messages, or a sentence when every checked stream was clean.

use super::parts::figure;
use crate::model::{CaseResult, RunResult};
use crate::report::layout;
use crate::report::svg::BarChart;
use crate::units;

fn lossy(c: &CaseResult) -> bool {
    c.summary.lost > 0 || c.summary.duplicated > 0 || c.summary.reordered > 0
}

/// The delivery figure: bars for the cases that lost, duplicated or reordered messages, a
/// sentence when every checked stream was clean, nothing when no case checked its stream.
/// True when a chart was drawn.
pub(super) fn delivery(out: &mut String, run: &RunResult) -> bool {
    let checked = run
        .cases
        .iter()
        .filter(|c| lossy(c) || layout::loss(c).is_some())
        .count();
    let bad: Vec<&CaseResult> = run.cases.iter().filter(|c| lossy(c)).collect();
    if bad.is_empty() {
        if checked > 0 {
            out.push_str(
                "<p><strong>Delivery: no loss.</strong> Every message of every checked stream \
                 arrived once and in order.</p>\n",
            );
        }
        return false;
    }
    let chart = BarChart {
        id: "loss".to_string(),
        title: "Delivery problems per case, over all repetitions".to_string(),
        x_label: "messages".to_string(),
        categories: bad.iter().map(|c| c.id.clone()).collect(),
        metrics: vec![
            ("lost".to_string(), "#D55E00"),
            ("duplicated".to_string(), "#E69F00"),
            ("reordered".to_string(), "#0072B2"),
        ],
        values: bad
            .iter()
            .map(|c| {
                [c.summary.lost, c.summary.duplicated, c.summary.reordered]
                    .iter()
                    .map(|&v| Some(v as f64))
                    .collect()
            })
            .collect(),
        intervals: Vec::new(),
        value_fmt: units::grouped_f,
    };
    let mut caption = "Messages lost, duplicated or reordered, from the sequence numbers of \
                       each stream."
        .to_string();
    match checked - bad.len() {
        0 => {}
        1 => caption.push_str(" The other case that checked its stream had no loss."),
        n => caption.push_str(&format!(
            " The {n} other cases that checked their streams had no loss."
        )),
    }
    figure(out, &chart.render(), &caption);
    true
}
