//! The bindings matrix: every implementation against every other (client x server for
//! REQ/REP latency, sender x receiver for PUSH/PULL and PUB/SUB throughput), as cases of
//! the built-in topologies with each side's `impl` set. The passes run every pair once in
//! turn, so each pair and the C-C baseline are interleaved in time; the grids are read back
//! from the run: whether each pair works (or why not) and its figure as a ratio to C-C.

use crate::endpoint::Transport;
use crate::model::{CaseResult, Estimate, RunResult};
use crate::peers::{self, CORE};
use crate::runner::plan::{builtin_case, peer_gap};
use crate::runner::{summarise, CaseSpec};
use crate::topology::Role;
use serde::Serialize;

/// The implementation every ratio is taken against by default: libzmq's C API on both
/// sides.
pub const BASELINE: &str = "c";

/// The patterns of the matrix.
pub const PATTERNS: [&str; 3] = ["reqrep", "pushpull", "pubsub"];

/// One implementation in the matrix.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Impl {
    /// `zmqperf` or a peer's name.
    pub name: String,
    /// Its versions (`pyzmq 26.2.0 (libzmq 4.3.5)`), or why it is not there.
    pub label: String,
    /// Set up and usable.
    pub ready: bool,
    /// Transports it has.
    pub transports: Vec<String>,
}

/// The implementations: zmqperf's core first, then every peer in the repository (or the
/// ones named).
pub fn implementations(names: Option<&[String]>) -> crate::Result<Vec<Impl>> {
    let mut out = Vec::new();
    let wanted = |n: &str| names.is_none_or(|ns| ns.iter().any(|x| x == n));
    if wanted(CORE) {
        out.push(Impl {
            name: CORE.into(),
            label: format!(
                "zmqperf {} (libzmq {})",
                crate::VERSION,
                crate::libzmq_version()
            ),
            ready: true,
            transports: vec!["tcp".into(), "ipc".into()],
        });
    }
    for m in peers::all()? {
        if !wanted(&m.name) {
            continue;
        }
        let why = m.not_ready();
        out.push(Impl {
            label: match &why {
                None => m.label(),
                Some(w) => w.clone(),
            },
            name: m.name.clone(),
            ready: why.is_none(),
            transports: m.transports.clone(),
        });
    }
    Ok(out)
}

/// What the matrix runs.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Patterns (of [`PATTERNS`]).
    pub patterns: Vec<String>,
    /// Transports.
    pub transports: Vec<Transport>,
    /// Message sizes, bytes.
    pub sizes: Vec<usize>,
    /// Round trips of a latency case.
    pub round_trips: u64,
    /// Messages of a throughput case.
    pub messages: u64,
    /// Passes: each pair runs once per pass, interleaved with the others.
    pub passes: u32,
}

impl Shape {
    /// `matrix --quick`: tcp, 64 B, three passes of short cases.
    pub fn quick() -> Shape {
        Shape {
            patterns: PATTERNS.iter().map(|s| s.to_string()).collect(),
            transports: vec![Transport::Tcp],
            sizes: vec![64],
            round_trips: 500,
            messages: 20_000,
            passes: 3,
        }
    }

    /// The default: tcp and ipc, 64 B and 1 KiB, five passes.
    pub fn full() -> Shape {
        Shape {
            patterns: PATTERNS.iter().map(|s| s.to_string()).collect(),
            transports: vec![Transport::Tcp, Transport::Ipc],
            sizes: vec![64, 1024],
            round_trips: 2_000,
            messages: 100_000,
            passes: 5,
        }
    }
}

/// The label of a pair's case: `client>server`.
fn pair_label(client: &str, server: &str) -> String {
    format!("{client}>{server}")
}

/// Why a pair is not run (a side not set up, or without the transport), or None.
fn not_played(a: &Impl, b: &Impl, t: Transport) -> Option<String> {
    for x in [a, b] {
        if !x.ready {
            return Some(format!(
                "{} is not set up (zmqperf peers setup {})",
                x.name, x.name
            ));
        }
        if !x.transports.iter().any(|y| *y == t.to_string()) {
            return Some(format!("{} has no {t} transport", x.name));
        }
    }
    None
}

/// The case of one pair: the built-in pattern with its client (ping, source) played by
/// `client` and its server (echo, sink) by `server`.
fn pair_case(
    pattern: &str,
    t: Transport,
    size: usize,
    shape: &Shape,
    a: &str,
    b: &str,
) -> CaseSpec {
    let latency = pattern == "reqrep";
    let count = if latency {
        shape.round_trips
    } else {
        shape.messages
    };
    let mut c = builtin_case(
        pattern,
        t,
        size,
        count,
        (count / 10).clamp(1, 1000),
        1,
        None,
    );
    for n in &mut c.topology.nodes {
        let side = match n.role {
            Role::Ping | Role::Source => a,
            _ => b,
        };
        if side != CORE {
            n.implementation = Some(side.to_string());
        }
    }
    c.label = pair_label(a, b);
    c
}

/// The cases of one pass, pair after pair, and the pairs left out with why.
pub fn plan(impls: &[Impl], shape: &Shape) -> (Vec<CaseSpec>, Vec<Skipped>) {
    let mut cases = Vec::new();
    let mut skipped = Vec::new();
    for p in &shape.patterns {
        for &t in &shape.transports {
            for &size in &shape.sizes {
                for a in impls {
                    for b in impls {
                        let c = pair_case(p, t, size, shape, &a.name, &b.name);
                        match not_played(a, b, t).or_else(|| peer_gap(&c)) {
                            Some(why) => skipped.push(Skipped { id: c.id(), why }),
                            None => cases.push(c),
                        }
                    }
                }
            }
        }
    }
    (cases, skipped)
}

/// A pair left out of the run.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// Its case id.
    pub id: String,
    /// Why.
    pub why: String,
}

/// The passes' results of each case merged into one (repetitions appended, the summary
/// taken again). A case that failed in every pass it ran keeps the first error, with the
/// pass it came from; one that failed in some passes and worked in others keeps what it
/// measured and says so in `incomplete` ("failed in 1 of 2 passes (pass 1: ...)").
pub fn merge_passes(passes: Vec<Vec<CaseResult>>) -> Vec<CaseResult> {
    // Per merged case: passes run, passes failed, the first failure.
    let mut out: Vec<(CaseResult, u32, u32, Option<String>)> = Vec::new();
    for (k, pass) in passes.into_iter().enumerate() {
        for mut c in pass {
            let failure = c.error.take().map(|e| format!("pass {}: {e}", k + 1));
            let failed = u32::from(failure.is_some());
            match out.iter_mut().find(|o| o.0.id == c.id) {
                None => out.push((c, 1, failed, failure)),
                Some((o, run, fails, first)) => {
                    *run += 1;
                    *fails += failed;
                    if first.is_none() {
                        *first = failure;
                    }
                    o.repetitions.extend(c.repetitions);
                    o.wall_s += c.wall_s;
                    o.warnings.extend(c.warnings);
                    if o.incomplete.is_none() {
                        o.incomplete = c.incomplete;
                    }
                    if o.nodes.is_empty() {
                        o.nodes = c.nodes;
                        o.edges = c.edges;
                    }
                }
            }
        }
    }
    out.into_iter()
        .map(|(mut o, run, failed, first)| {
            o.summary = summarise(&o.repetitions);
            if failed == run {
                o.error = first;
            } else if let Some(first) = first {
                o.incomplete = Some(format!("failed in {failed} of {run} passes ({first})"));
            }
            o
        })
        .collect()
}

/// For a case merged by [`merge_passes`]: the passes it failed in and the passes it ran,
/// when it failed in some but not all.
pub fn failed_passes(c: &CaseResult) -> Option<(u32, u32)> {
    if c.error.is_some() {
        return None;
    }
    let rest = c.incomplete.as_deref()?.strip_prefix("failed in ")?;
    let (failed, rest) = rest.split_once(" of ")?;
    let (run, _) = rest.split_once(" passes")?;
    Some((failed.parse().ok()?, run.parse().ok()?))
}

/// How a pair did.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "kebab-case", tag = "status", content = "why")]
pub enum Status {
    /// Every message arrived, in every pass.
    Works,
    /// It ran, but messages were lost (how many, and where).
    Lossy(String),
    /// It failed: the first error.
    Fails(String),
    /// Not run: a side not set up, or without the transport.
    NotRun(String),
}

/// One cell: a client (or sender) and a server (or receiver).
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    /// Client, sender.
    pub client: String,
    /// Server, receiver.
    pub server: String,
    /// Works, or why not.
    #[serde(flatten)]
    pub status: Status,
    /// Its figure: latency in us (REQ/REP) or delivered msg/s, median over the passes.
    pub value: Option<Estimate>,
    /// The figure over C-C's: (median, low, high of the 95% interval, on the log scale).
    pub ratio: Option<(f64, f64, f64)>,
    /// The figure over C-C's when a side has too few passes for an interval (one).
    pub ratio_without_interval: Option<f64>,
    /// (failed, run): the passes this pair failed in and ran, when it failed in some and
    /// worked in others (the grid shows "FAIL 1 of 2").
    pub failed_passes: Option<(u32, u32)>,
}

/// One grid: a pattern over a transport at a size.
#[derive(Debug, Clone, Serialize)]
pub struct Grid {
    /// reqrep, pushpull, pubsub.
    pub pattern: String,
    /// tcp, ipc.
    pub transport: Transport,
    /// Bytes.
    pub size: usize,
    /// "latency (us)" or "msg/s".
    pub unit: String,
    /// C-C's figure, when it ran.
    pub baseline: Option<Estimate>,
    /// Every pair, client-major.
    pub cells: Vec<Cell>,
}

/// The matrix read back from a run.
#[derive(Debug, Clone, Serialize)]
pub struct Matrix {
    /// The run it was read from.
    pub run_id: String,
    /// The implementations, in grid order.
    pub impls: Vec<Impl>,
    /// The grids.
    pub grids: Vec<Grid>,
    /// Passes.
    pub passes: u32,
    /// The implementation of the baseline pair (both sides).
    pub baseline: String,
}

/// The ratio of a pair to the baseline pass by pass (the two ran side by side in each
/// pass, so their ratio cancels what the machine did then): the median of the per-pass
/// ratios with its 95% interval; None unless both have every pass.
fn paired_ratio(c: &CaseResult, base: &CaseResult, latency: bool) -> Option<(f64, f64, f64)> {
    let v = |r: &crate::model::Repetition| {
        if latency {
            r.latency.filter(|l| l.count > 0).map(|l| l.mean_ns)
        } else {
            r.delivered.map(|t| t.msgs_per_sec())
        }
    };
    if c.repetitions.len() != base.repetitions.len() || c.repetitions.len() < 2 {
        return None;
    }
    let mut xs = Vec::new();
    for (a, b) in c.repetitions.iter().zip(&base.repetitions) {
        match (v(a), v(b)) {
            (Some(x), Some(y)) if y > 0.0 => xs.push(x / y),
            _ => return None,
        }
    }
    crate::stats::estimate(&xs).map(|e| (e.median, e.ci_low, e.ci_high))
}

/// The ratio of two separately measured estimates with its 95% interval on the log scale
/// (`stats::estimate::ratio_interval`); None when either has one repetition or no positive
/// median.
fn ratio(x: &Estimate, base: &Estimate) -> Option<(f64, f64, f64)> {
    crate::stats::estimate::ratio_interval(x, base).map(|r| (r.value, r.low, r.high))
}

/// What the grids are read from: the merged run, the implementations, the shape asked for,
/// the pairs skipped (and why) and the implementation the ratios are to.
struct Reader<'a> {
    run: &'a RunResult,
    impls: &'a [Impl],
    shape: &'a Shape,
    skipped: &'a [Skipped],
    baseline: &'a str,
}

/// Reads the grids back from the merged cases.
pub fn read(
    run: &RunResult,
    impls: &[Impl],
    shape: &Shape,
    skipped: &[Skipped],
    baseline: &str,
) -> Matrix {
    let reader = Reader {
        run,
        impls,
        shape,
        skipped,
        baseline,
    };
    let mut grids = Vec::new();
    for p in &shape.patterns {
        for &t in &shape.transports {
            for &size in &shape.sizes {
                grids.push(reader.grid(p, t, size));
            }
        }
    }
    Matrix {
        run_id: run.run_id.clone(),
        impls: impls.to_vec(),
        grids,
        passes: shape.passes,
        baseline: baseline.to_string(),
    }
}

impl Reader<'_> {
    /// The grid of one pattern, transport and size: a cell per client and server, with
    /// its ratio to the baseline pair.
    fn grid(&self, p: &str, t: Transport, size: usize) -> Grid {
        let latency = p == "reqrep";
        let value_of = |c: &CaseResult| {
            if latency {
                c.summary.latency_us
            } else {
                c.summary.msgs_per_sec
            }
        };
        let case_of = |a: &str, b: &str| {
            let id = pair_case(p, t, size, self.shape, a, b).id();
            self.run.cases.iter().find(|c| c.id == id).cloned()
        };
        let base_case = case_of(self.baseline, self.baseline).filter(|c| c.error.is_none());
        let base = base_case.as_ref().and_then(value_of);
        let mut cells = Vec::new();
        for a in self.impls {
            for b in self.impls {
                let id = pair_case(p, t, size, self.shape, &a.name, &b.name).id();
                let case = case_of(&a.name, &b.name);
                let status = status(case.as_ref(), &id, self.skipped);
                let value = case.as_ref().and_then(value_of);
                let paired = match (&case, &base_case) {
                    (Some(c), Some(b)) if c.error.is_none() => paired_ratio(c, b, latency),
                    _ => None,
                };
                let ratio = paired.or(match (&value, &base) {
                    (Some(v), Some(b)) => ratio(v, b),
                    _ => None,
                });
                let ratio_without_interval = match (&ratio, &value, &base) {
                    (None, Some(v), Some(b)) if b.median > 0.0 => Some(v.median / b.median),
                    _ => None,
                };
                cells.push(Cell {
                    client: a.name.clone(),
                    server: b.name.clone(),
                    status,
                    value,
                    ratio,
                    ratio_without_interval,
                    failed_passes: case.as_ref().and_then(failed_passes),
                });
            }
        }
        Grid {
            pattern: p.to_string(),
            transport: t,
            size,
            unit: if latency { "latency (us)" } else { "msg/s" }.into(),
            baseline: base,
            cells,
        }
    }
}

/// How the pair of case `id` went: not run (why, from `skipped`), fails, lossy (where the
/// messages were lost) or works.
fn status(case: Option<&CaseResult>, id: &str, skipped: &[Skipped]) -> Status {
    let Some(c) = case else {
        return Status::NotRun(
            skipped
                .iter()
                .find(|s| s.id == id)
                .map(|s| s.why.clone())
                .unwrap_or_else(|| "not run (interrupted)".into()),
        );
    };
    let lost = c.summary.lost;
    match (&c.error, &c.incomplete) {
        (Some(e), _) => Status::Fails(e.clone()),
        (None, Some(why)) if failed_passes(c).is_some() => Status::Fails(why.clone()),
        _ if lost > 0 => {
            let (mut st, mut mid, mut end) = (0, 0, 0);
            for l in c.repetitions.iter().filter_map(|r| r.loss.as_ref()) {
                st += l.lost_at_start;
                mid += l.lost_in_middle;
                end += l.lost_at_end;
            }
            Status::Lossy(format!(
                "{lost} messages lost over {} passes (at the start {st}, in the middle {mid}, at the end {end})",
                c.repetitions.len()
            ))
        }
        _ => Status::Works,
    }
}

#[cfg(test)]
mod tests;
