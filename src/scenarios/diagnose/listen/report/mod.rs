//! A listened stream turned into findings: one that sums the stream up (its ledger, rate,
//! latency and holes), then one per cause seen, each with its triage line. The summary is
//! in `summary.rs`; the causes, one function each, in a file per subject: loss by its
//! place in the stream, the order of the numbers, silences, messages that cannot be read.

mod idle;
mod loss;
mod sequence;
mod summary;
mod unreadable;

use super::{EndedBy, ListenConfig, Listened};
use crate::endpoint::{Endpoint, Transport};
use crate::model::{Finding, TimedGap};
use crate::scenarios::diagnose::FindingDraft;
use crate::stats::ledger::GAPS_LISTED;
use crate::stats::{cause_of, Cause, Facts, GapPosition, LossSummary};
use crate::units::grouped;

/// The experiment name of every finding of a listen.
const EXPERIMENT: &str = "listen";

/// Streams whose figures the evidence lists one by one.
const STREAMS_LISTED: usize = 8;

/// The findings of the causes, in the order they are reported; each gives one when its
/// cause was seen.
const CAUSES: [fn(&View) -> Option<Finding>; 8] = [
    loss::slow_joiner,
    loss::hwm,
    loss::stopped,
    sequence::reordering,
    sequence::duplicates,
    sequence::restart,
    idle::idle,
    unreadable::unreadable,
];

/// The findings of a listen: the summary first, then one per cause seen.
pub fn findings(cfg: &ListenConfig, l: &Listened) -> Vec<Finding> {
    let v = View::new(cfg, l);
    let mut out = vec![summary::summary(&v)];
    out.extend(CAUSES.iter().filter_map(|cause| cause(&v)));
    out
}

/// One run of one stream, summed up.
struct RunView {
    stream: u64,
    loss: LossSummary,
    gaps: Vec<TimedGap>,
}

/// What the findings are written from.
struct Totals {
    loss: LossSummary,
    gaps: Vec<TimedGap>,
    runs: Vec<RunView>,
    /// Streams whose last run stopped with no end mark, a silence of at least the idle
    /// threshold before the listen ended: (stream, last seq, silence ns).
    stopped: Vec<(u64, u64, u64)>,
}

fn totals(cfg: &ListenConfig, l: &Listened) -> Totals {
    let seen = &l.seen;
    let origin = seen.first_ns.unwrap_or(l.started_ns);
    let mut loss = LossSummary::default();
    let mut gaps = Vec::new();
    let mut runs = Vec::new();
    let mut stopped = Vec::new();
    for (&stream, state) in &seen.streams {
        let last = state.epochs.len() - 1;
        for (i, e) in state.epochs.iter().enumerate() {
            let top = e.tally.highest_seq().map_or(0, |t| t + 1);
            let expected = match cfg.expect {
                Some(n) if i == last && !e.ended => n.max(top),
                _ => top,
            };
            let s = e.tally.summary(expected);
            let g = e.tally.gaps(expected, origin);
            loss.add(&s);
            for gap in &g {
                if gaps.len() < GAPS_LISTED {
                    gaps.push(*gap);
                }
            }
            runs.push(RunView {
                stream,
                loss: s,
                gaps: g,
            });
        }
        let current = state.current();
        let silence = l.ended_ns.saturating_sub(state.last_ns);
        if !current.ended && l.ended_by != EndedBy::Count && silence >= seen.idle_ns {
            let last_seq = current.tally.highest_seq().unwrap_or(0);
            stopped.push((stream, last_seq, silence));
        }
    }
    Totals {
        loss,
        gaps,
        runs,
        stopped,
    }
}

/// A listen as every finding reads it: the settings, what was seen, its totals, and what
/// the listener knows for the one rule of the causes.
struct View<'a> {
    cfg: &'a ListenConfig,
    l: &'a Listened,
    t: Totals,
    transport: Transport,
    /// Its own socket type, and sequence numbers; nothing of what the sender did.
    facts: Facts,
}

impl<'a> View<'a> {
    fn new(cfg: &'a ListenConfig, l: &'a Listened) -> View<'a> {
        let transport = Endpoint::parse(&l.endpoint, cfg.side)
            .map(|e| e.transport())
            .unwrap_or(Transport::Tcp);
        View {
            cfg,
            l,
            t: totals(cfg, l),
            transport,
            facts: Facts {
                receiver: Some(cfg.kind),
                placed: true,
                ..Facts::default()
            },
        }
    }

    /// The cause of a loss at `p`, by the one rule.
    fn cause_at(&self, p: GapPosition) -> Cause {
        cause_of(p, &self.facts)
    }

    /// An empty finding `listen/{name}`.
    fn draft(&self, name: &str) -> FindingDraft {
        FindingDraft::of(&format!("listen/{name}"), EXPERIMENT, self.transport)
    }

    /// Whether more than one stream arrived.
    fn several(&self) -> bool {
        self.l.seen.streams.len() > 1
    }

    /// ` of stream 7` when there are several, else nothing.
    fn of_stream(&self, s: u64) -> String {
        if self.several() {
            format!(" of stream {s}")
        } else {
            String::new()
        }
    }

    /// The first holes at `p`, of every run.
    fn gaps_at(&self, p: GapPosition) -> Vec<TimedGap> {
        self.t
            .runs
            .iter()
            .flat_map(|r| r.gaps.iter().copied())
            .filter(|g| g.position == p)
            .take(GAPS_LISTED)
            .collect()
    }
}

/// `seq 100 to 199` or `seq 7`.
fn span(g: TimedGap) -> String {
    if g.count == 1 {
        format!("seq {}", grouped(g.first_seq))
    } else {
        format!(
            "seq {} to {}",
            grouped(g.first_seq),
            grouped(g.first_seq + g.count - 1)
        )
    }
}
