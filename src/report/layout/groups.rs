//! Groups of cases shown together: same kind, pattern, transport and load, in order of
//! message size, and the names of their kind and loop.

use crate::endpoint::Transport;
use crate::model::{CaseResult, Kind, LoopMode, RunResult};
use crate::units::{self, grouped};

/// Cases shown together: same kind, pattern, transport and load (closed loop, or open loop
/// at one rate), in order of message size.
pub struct Group<'a> {
    /// Latency or throughput.
    pub kind: Kind,
    /// Socket pattern.
    pub pattern: &'a str,
    /// Transport.
    pub transport: Transport,
    /// Open loop with its rate, or closed loop (None).
    pub open_rate: Option<OpenRate>,
    /// The cases, smallest message first (ties keep run order).
    pub cases: Vec<&'a CaseResult>,
}

/// The load of an open-loop group: its target rate, if the case gave one.
#[derive(Clone, Copy, PartialEq)]
pub struct OpenRate(pub Option<f64>);

impl Group<'_> {
    /// `reqrep/tcp`: the short name used in chart legends.
    pub fn name(&self) -> String {
        format!("{}/{}", self.pattern, self.transport)
    }

    /// `closed loop` or `open loop at 10,000 msg/s`.
    pub fn load(&self) -> String {
        match self.open_rate {
            None => "closed loop".to_string(),
            Some(OpenRate(Some(r))) => format!("open loop at {} msg/s", units::rate(r)),
            Some(OpenRate(None)) => "open loop".to_string(),
        }
    }

    /// The heading of the group's table, e.g. `reqrep over tcp: latency, closed loop
    /// (10,000 round trips, 3 repetitions)`.
    pub fn title(&self) -> String {
        let kind = kind_name(self.kind);
        let mut t = format!(
            "{} over {}: {kind}, {}",
            self.pattern,
            self.transport,
            self.load()
        );
        t.push_str(&counts_note(self.kind, &self.cases));
        t
    }
}

/// ` (10,000 round trips, 3 repetitions)`: what the cases that ran have in common, or
/// nothing.
pub fn counts_note(kind: Kind, cases: &[&CaseResult]) -> String {
    let ran: Vec<&&CaseResult> = cases.iter().filter(|c| !c.repetitions.is_empty()).collect();
    let Some(first) = ran.first() else {
        return String::new();
    };
    let same_count = ran.iter().all(|c| c.count == first.count);
    let same_reps = ran
        .iter()
        .all(|c| c.repetitions.len() == first.repetitions.len());
    let unit = match kind {
        Kind::Latency => "round trips",
        Kind::Throughput => "messages",
    };
    let mut parts = Vec::new();
    if same_count {
        parts.push(format!("{} {unit}", grouped(first.count)));
    }
    if same_reps {
        let n = first.repetitions.len();
        parts.push(format!("{n} repetition{}", if n == 1 { "" } else { "s" }));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

/// `latency` or `throughput`.
pub fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Latency => "latency",
        Kind::Throughput => "throughput",
    }
}

/// `closed` or `open`.
pub fn loop_name(m: LoopMode) -> &'static str {
    match m {
        LoopMode::Closed => "closed",
        LoopMode::Open => "open",
    }
}

fn open_rate(c: &CaseResult) -> Option<OpenRate> {
    match c.loop_mode {
        LoopMode::Closed => None,
        LoopMode::Open => Some(OpenRate(c.rate)),
    }
}

fn same_rate(a: Option<OpenRate>, b: Option<OpenRate>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(OpenRate(x)), Some(OpenRate(y))) => x.map(f64::to_bits) == y.map(f64::to_bits),
        _ => false,
    }
}

/// The cases in groups, groups in the order their first case ran.
pub fn groups(run: &RunResult) -> Vec<Group<'_>> {
    let mut out: Vec<Group<'_>> = Vec::new();
    for c in &run.cases {
        let rate = open_rate(c);
        let found = out.iter_mut().find(|g| {
            g.kind == c.kind
                && g.pattern == c.pattern
                && g.transport == c.transport
                && same_rate(g.open_rate, rate)
        });
        match found {
            Some(g) => g.cases.push(c),
            None => out.push(Group {
                kind: c.kind,
                pattern: &c.pattern,
                transport: c.transport,
                open_rate: rate,
                cases: vec![c],
            }),
        }
    }
    for g in &mut out {
        g.cases.sort_by_key(|c| c.message_size);
    }
    out
}
