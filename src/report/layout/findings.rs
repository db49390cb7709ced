//! The findings of `zmqperf diagnose` as the human reports show them: measures, gaps and
//! the count of findings by severity written out.

use super::delivery::ms;
use crate::model::{Finding, Measure, RunResult, TimedGap};
use crate::stats::GapPosition;
use crate::units::{self, grouped};

/// A text (a cause or a remedy) that several findings share is written once: in full at
/// the first of them, naming the others' transports, and as a pointer back at the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shared {
    /// Said here, for this finding alone.
    Own,
    /// Said here, and it is also the text of the findings over these transports (or with
    /// these ids, when the transports do not tell them apart); this finding's first.
    For(Vec<String>),
    /// The same as the text of the finding with this id, said above.
    SameAs(String),
}

/// A finding as the human reports show it, its numbers already written out.
pub struct FindingView<'a> {
    /// The finding itself (id, severity, title, observed, cause, remedy, error).
    pub finding: &'a Finding,
    /// Whether its cause is said here or above.
    pub cause: Shared,
    /// Whether its remedy is said here or above.
    pub remedy: Shared,
    /// Its evidence as (name, value) pairs, in name order.
    pub evidence: Vec<(String, String)>,
    /// One sentence per hole in the stream, with its times.
    pub gaps: Vec<String>,
}

/// A measured value as a person reads it: counts with thousands separators, numbers with
/// a few significant digits.
pub fn measure(m: &Measure) -> String {
    match m {
        Measure::Count(v) => grouped(*v),
        Measure::Number(v) => units::value(*v),
        Measure::Text(t) => t.clone(),
    }
}

/// One hole of a diagnosed stream in words, e.g. `1,797 lost at the start (seq 0 to
/// 1,796); the first message after it arrived at 2.81 ms`.
pub fn timed_gap(g: &TimedGap) -> String {
    let last = g.first_seq + g.count.saturating_sub(1);
    let span = if g.count == 1 {
        format!("seq {}", grouped(g.first_seq))
    } else {
        format!("seq {} to {}", grouped(g.first_seq), grouped(last))
    };
    let place = match g.position {
        GapPosition::Start => "at the start",
        GapPosition::Middle => "in the middle",
        GapPosition::End => "at the end",
    };
    let mut s = format!("{} lost {place} ({span})", grouped(g.count));
    match (g.before_ms, g.after_ms) {
        (Some(b), Some(a)) => s.push_str(&format!("; between arrivals at {} and {}", ms(b), ms(a))),
        (None, Some(a)) => s.push_str(&format!(
            "; the first message after it arrived at {}",
            ms(a)
        )),
        (Some(b), None) => s.push_str(&format!(
            "; the last message before it arrived at {}",
            ms(b)
        )),
        (None, None) => {}
    }
    s
}

/// Where each finding's `text` is said: once, at the first finding with that text.
fn sharing<'a>(fs: &'a [Finding], text: impl Fn(&'a Finding) -> &'a str) -> Vec<Shared> {
    fs.iter()
        .enumerate()
        .map(|(i, f)| {
            let t = text(f);
            if t.is_empty() {
                return Shared::Own;
            }
            if let Some(first) = fs[..i].iter().find(|o| text(o) == t) {
                return Shared::SameAs(first.id.clone());
            }
            let all: Vec<&Finding> = fs[i..].iter().filter(|o| text(o) == t).collect();
            if all.len() == 1 {
                return Shared::Own;
            }
            let mut transports: Vec<String> = all.iter().map(|o| o.transport.to_string()).collect();
            let distinct = {
                let mut d = transports.clone();
                d.sort();
                d.dedup();
                d.len() == transports.len()
            };
            if !distinct {
                transports = all.iter().map(|o| o.id.clone()).collect();
            }
            Shared::For(transports)
        })
        .collect()
}

/// The findings of a run, in the order the experiments ran.
pub fn findings(run: &RunResult) -> Vec<FindingView<'_>> {
    let causes = sharing(&run.findings, |f| f.cause.as_str());
    let remedies = sharing(&run.findings, |f| f.remedy.as_str());
    run.findings
        .iter()
        .zip(causes.into_iter().zip(remedies))
        .map(|(f, (cause, remedy))| FindingView {
            finding: f,
            cause,
            remedy,
            evidence: f
                .evidence
                .iter()
                .map(|(k, v)| (k.clone(), measure(v)))
                .collect(),
            gaps: f.gaps.iter().map(timed_gap).collect(),
        })
        .collect()
}

/// A line counting the findings: `5 findings: 3 warnings, 2 info`.
pub fn findings_count(run: &RunResult) -> String {
    let n = run.findings.len();
    let warnings = run
        .findings
        .iter()
        .filter(|f| f.severity == crate::model::Severity::Warning)
        .count();
    format!(
        "{n} finding{}: {warnings} warning{}, {} info.",
        if n == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
        n - warnings
    )
}

/// One line of the triage summary: a cause, what it cost over every finding that names
/// it, and its fix.
#[derive(Debug, Clone, PartialEq)]
pub struct TriageLine {
    /// The cause in a few words.
    pub cause: String,
    /// Messages lost to it, over all its findings.
    pub lost: u64,
    /// How often it was seen, in `unit`s.
    pub count: u64,
    /// What `count` counts.
    pub unit: String,
    /// The transports of its findings, in order, each once.
    pub transports: Vec<String>,
    /// The fix: said once when its findings agree, else each with its transport.
    pub fix: String,
}

/// The triage summary: one line per cause named by the findings, worst first (most
/// messages lost, then the highest count; ties keep the order the findings came in).
pub fn triage(run: &RunResult) -> Vec<TriageLine> {
    // Each line with the (transport, finding id, fix) of its findings.
    type Fixes = Vec<(String, String, String)>;
    let mut lines: Vec<(TriageLine, Fixes)> = Vec::new();
    for f in &run.findings {
        let Some(t) = &f.triage else { continue };
        let transport = f.transport.to_string();
        let i = match lines.iter().position(|(l, _)| l.cause == t.cause) {
            Some(i) => i,
            None => {
                lines.push((
                    TriageLine {
                        cause: t.cause.clone(),
                        lost: 0,
                        count: 0,
                        unit: t.unit.clone(),
                        transports: Vec::new(),
                        fix: String::new(),
                    },
                    Vec::new(),
                ));
                lines.len() - 1
            }
        };
        let (line, fixes) = &mut lines[i];
        line.lost += t.lost;
        line.count += t.count;
        if !line.transports.contains(&transport) {
            line.transports.push(transport.clone());
        }
        fixes.push((transport, f.id.clone(), t.fix.clone()));
    }
    let mut out: Vec<TriageLine> = lines
        .into_iter()
        .map(|(mut line, fixes)| {
            let first = &fixes[0].2;
            line.fix = if fixes.iter().all(|(_, _, f)| f == first) {
                first.clone()
            } else {
                // Each fix once, labelled by the transports that share it (by the finding
                // ids when one transport has several findings of the cause).
                let by_id = line.transports.len() < fixes.len();
                let mut said: Vec<(Vec<String>, &str)> = Vec::new();
                for (t, id, f) in &fixes {
                    let who = if by_id { id } else { t };
                    match said.iter_mut().find(|(_, s)| *s == f.as_str()) {
                        Some((whos, _)) => whos.push(who.clone()),
                        None => said.push((vec![who.clone()], f.as_str())),
                    }
                }
                said.iter()
                    .map(|(whos, f)| format!("{}: {}", whos.join(", "), f.trim_end_matches('.')))
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            line
        })
        .collect();
    out.sort_by(|a, b| b.lost.cmp(&a.lost).then(b.count.cmp(&a.count)));
    out
}

/// A triage line in words: `slow joiner: 1,797 messages lost (tcp, ipc). Fix: ...`.
pub fn triage_text(l: &TriageLine) -> String {
    format!(
        "{}: {} {} ({}). Fix: {}.",
        l.cause,
        grouped(l.count),
        l.unit,
        l.transports.join(", "),
        l.fix.trim_end_matches('.')
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Triage;
    use crate::report::fixture;
    use crate::transport::Transport;

    fn with(id: &str, t: Transport, cause: &str, lost: u64, remedy: &str) -> Finding {
        let mut f = fixture::sample_findings().remove(0);
        f.id = id.to_string();
        f.transport = t;
        f.remedy = remedy.to_string();
        f.triage = Some(Triage {
            cause: cause.to_string(),
            lost,
            count: lost,
            unit: "messages lost".to_string(),
            fix: format!("fix {cause}"),
        });
        f
    }

    #[test]
    fn triage_adds_up_each_cause_and_puts_the_worst_first() {
        let mut run = fixture::sample_run();
        run.findings = vec![
            with("slow-joiner/tcp", Transport::Tcp, "slow joiner", 10, "A"),
            with("hwm/tcp", Transport::Tcp, "high-water mark", 40, "B"),
            with("slow-joiner/ipc", Transport::Ipc, "slow joiner", 25, "A"),
            with("fast-quit/tcp", Transport::Tcp, "fast quit", 0, "C"),
        ];
        let t = triage(&run);
        let causes: Vec<(&str, u64)> = t.iter().map(|l| (l.cause.as_str(), l.lost)).collect();
        assert_eq!(
            causes,
            vec![
                ("high-water mark", 40),
                ("slow joiner", 35),
                ("fast quit", 0)
            ]
        );
        assert_eq!(t[1].transports, vec!["tcp", "ipc"]);
        assert_eq!(
            triage_text(&t[1]),
            "slow joiner: 35 messages lost (tcp, ipc). Fix: fix slow joiner."
        );
        // Fixes that differ are each said once, labelled by who has them.
        let mut other = with(
            "slow-joiner/inproc",
            Transport::Inproc,
            "slow joiner",
            1,
            "A",
        );
        other.triage.as_mut().unwrap().fix = "wait".into();
        let mut run2 = run.clone();
        run2.findings.push(other);
        let sj = triage(&run2)
            .into_iter()
            .find(|l| l.cause == "slow joiner")
            .unwrap();
        assert_eq!(sj.fix, "tcp, ipc: fix slow joiner; inproc: wait");
        // The remedy shared by the two slow-joiner findings is said once.
        let v = findings(&run);
        assert_eq!(v[0].remedy, Shared::For(vec!["tcp".into(), "ipc".into()]));
        assert_eq!(v[1].remedy, Shared::Own);
        assert_eq!(v[2].remedy, Shared::SameAs("slow-joiner/tcp".into()));
        // Their cause text is the fixture's, the same for all four.
        assert_eq!(v[3].cause, Shared::SameAs("slow-joiner/tcp".into()));
        match &v[0].cause {
            Shared::For(ids) => assert_eq!(ids.len(), 4, "{ids:?}"),
            other => panic!("{other:?}"),
        }
    }
}
