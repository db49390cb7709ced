//! The one cause rule of a broken step: what set the limit (a loss and where it fell, a
//! node's CPU, the machine's cores, file descriptors, a failure), in words.

use super::slo::first_sentence;
use super::{Figures, Slo};
use crate::model::CaseResult;
use crate::units::grouped;

/// How busy a node was in a step: its name, its role and its CPU as a share of one core, %.
#[derive(Debug, Clone)]
pub struct Busy {
    pub node: String,
    pub role: String,
    pub core_pct: f64,
}

impl Busy {
    /// The nodes of a run's case that say their CPU share.
    pub fn of_case(case: &CaseResult) -> Vec<Busy> {
        case.nodes
            .iter()
            .filter_map(|n| {
                n.cpu_core_pct.map(|p| Busy {
                    node: n.name.clone(),
                    role: n.role.clone(),
                    core_pct: p / (n.replicas.max(1) as f64),
                })
            })
            .collect()
    }
}

/// A node at this share of one core (or more) is saturated: it could go no faster.
pub const SATURATED_PCT: f64 = 90.0;

/// How a cause begins when no node's CPU explains a step.
pub const NOT_CPU: &str = "not the nodes' CPU";

/// The nodes together at this share of all the machine's cores (or more) filled them.
pub const MACHINE_PCT: f64 = 80.0;

/// Where a run's case lost its messages and why, by the one cause rule with what its
/// sender did (None: it kept no loss ledger).
pub fn loss_of_case(case: &CaseResult) -> Option<String> {
    let mut total: Option<crate::stats::LossSummary> = None;
    for l in case.repetitions.iter().filter_map(|r| r.loss.as_ref()) {
        total.get_or_insert_with(Default::default).add(l);
    }
    let facts = match case.sender {
        Some(f) => crate::stats::Facts::of_run(f),
        None => crate::stats::Facts {
            placed: true,
            ..Default::default()
        },
    };
    total.map(|l| crate::stats::loss_causes(&l, &facts, |_, _| None))
}

/// The case's own cause of a rate held below what was asked, when its warnings name one
/// that no node's CPU shows (the multicast rate limit: OpenPGM holds a PUB to its
/// ZMQ_RATE), without its `cause: ` prefix.
pub fn pace_of(warnings: &[String]) -> Option<String> {
    warnings
        .iter()
        .find_map(|w| w.strip_prefix("cause: the multicast rate limit"))
        .map(|rest| format!("the multicast rate limit{rest}"))
}

/// Why a step broke the service level, by one rule, in a line: a failure by its error (the
/// open-files limit named as such); loss by `loss` (the one cause rule of `stats::cause`
/// on where the holes fell, as the caller words it); latency or a rate not kept up by the
/// busiest node when it saturated a core (a slow consumer, the sender's or a proxy's CPU),
/// else by the machine's cores when the nodes together filled them, else said to be
/// outside what the nodes' CPU shows (`cores`: the machine's).
pub fn cause(f: &Figures, slo: &Slo, busy: &[Busy], cores: usize, loss: Option<String>) -> String {
    if let Some(e) = &f.error {
        if e.contains("Too many open files") || e.contains("open files") || e.contains("EMFILE") {
            return format!(
                "file descriptors: a process reached its limit of open files (raise it with ulimit -n, or spread the sockets over more processes): {}",
                first_sentence(e)
            );
        }
        return format!("the step failed: {}", first_sentence(e));
    }
    if f.lost > slo.max_lost {
        return loss.unwrap_or_else(|| {
            format!("{} lost; where they fell was not recorded", grouped(f.lost))
        });
    }
    if slo.max_p99_ns.is_some() && f.p99_ns.is_none() {
        return format!(
            "no latency was measured: a message shorter than the measurement header ({} B) carries no time stamp, and a stream without samples has no p99",
            crate::header::HEADER_LEN
        );
    }
    let top = busy.iter().max_by(|a, b| a.core_pct.total_cmp(&b.core_pct));
    if let Some(b) = top.filter(|b| b.core_pct >= SATURATED_PCT) {
        let what = match b.role.as_str() {
            "slow_sink" | "sink" | "swarm" => "a slow consumer",
            "source" | "publisher" => "the sender's CPU",
            "proxy" => "the proxy's CPU",
            _ => "CPU",
        };
        return format!(
            "{what}: {} ({}) used {:.0}% of a core",
            b.node, b.role, b.core_pct
        );
    }
    let sum: f64 = busy.iter().map(|b| b.core_pct).sum();
    if cores > 0 && sum >= MACHINE_PCT * cores as f64 {
        return format!(
            "the machine's CPUs: the nodes together used {sum:.0}% of its {cores} cores"
        );
    }
    format!(
        "{NOT_CPU} (the busiest, {}, used {}): a queue between them (a high-water mark's back-pressure, the kernel's socket buffers) or a node's own pace",
        top.map_or("none".into(), |b| b.node.clone()),
        top.map_or("-".into(), |b| format!("{:.0}% of a core", b.core_pct))
    )
}
