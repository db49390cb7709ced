//! `run --find ... --tune`: once a case's limit is found, the settings that may move it
//! (scenarios::tune, chosen by the cause of the step that broke it) are tried one at a
//! time, each by the same search from the limit found; those that raised it beyond both
//! bands are then tried together. The gains are printed best first, with their intervals,
//! and the tuned topology is printed as a file to save and run.

use super::limit::{breaking, Broken, Searching};
use zmqperf::model::TunedSetting;
use zmqperf::runner::CaseSpec;
use zmqperf::scenarios::limit::{Found, Search};
use zmqperf::scenarios::tune::{candidates, Gain, Knob, Limit};

/// The limit a search found, with its band (None: it found none).
fn limit_of(search: &Search) -> Option<Limit> {
    // With no upper bound (every value that broke also held once, or all held up to the
    // ceiling), the limit itself is the top of its band.
    search.limit().map(|(low, held, high)| Limit {
        low,
        held,
        high: high.unwrap_or(held),
    })
}

/// What one try of settings found.
struct Tried {
    knobs: Vec<Knob>,
    limit: Option<Limit>,
    /// Why there is no limit, when there is none.
    none: String,
}

/// The settings of `knobs`, in words.
fn said(knobs: &[Knob]) -> String {
    knobs.iter().map(Knob::said).collect::<Vec<_>>().join(", ")
}

/// `case` with `knobs` set (None: none of them changed anything), named for them in the
/// history.
fn tuned(case: &CaseSpec, knobs: &[Knob]) -> Option<CaseSpec> {
    let mut c = case.clone();
    let mut changed = false;
    for k in knobs {
        changed |= k.apply(&mut c.topology);
    }
    let tag = knobs
        .iter()
        .map(|k| k.said().replace(' ', ""))
        .collect::<Vec<_>>()
        .join(",");
    c.label = if c.label.is_empty() {
        tag
    } else {
        format!("{},{tag}", c.label)
    };
    changed.then_some(c)
}

/// Searches `case` with `knobs` set, from `start`; None when nothing takes them.
fn try_knobs(ctx: &mut Searching, case: &CaseSpec, knobs: Vec<Knob>, start: f64) -> Option<Tried> {
    let Some(c) = tuned(case, &knobs) else {
        println!(
            "  {}: nothing in the topology takes it, or it is set so already",
            said(&knobs)
        );
        return None;
    };
    let on = if knobs.len() == 1 {
        knobs[0].on()
    } else {
        "together"
    };
    println!("{} with {} {on}:", case.id(), said(&knobs));
    let (search, broken): (Search, Vec<Broken>) = ctx.search(&c, start);
    let limit = limit_of(&search);
    let none = match search.found() {
        Found::BelowStart { .. } => "no limit: even the lowest value tried broke".to_string(),
        Found::OutOfSteps { held, .. } => format!(
            "no limit within {} steps (the noise kept the boundary open); held up to {}",
            search.steps,
            held.map_or("none".into(), |v| ctx.what.show(v))
        ),
        _ => String::new(),
    };
    match (limit, breaking(&search, &broken)) {
        (Some(l), _) => println!(
            "  limit {} [{} .. {}]",
            ctx.what.show(l.held),
            ctx.what.show(l.low),
            ctx.what.show(l.high)
        ),
        (None, Some(b)) => println!("  no limit found: broke at {}: {}", ctx.what.show(b.0), b.2),
        (None, None) => println!("  no limit found"),
    }
    Some(Tried { knobs, limit, none })
}

/// `--tune` on `case`, whose first search is `first`: what each try found, best first.
pub fn tune(
    ctx: &mut Searching,
    case: &CaseSpec,
    first: &(Search, Vec<Broken>),
    slo: &str,
) -> Vec<TunedSetting> {
    let id = case.id();
    let Some(base) = limit_of(&first.0) else {
        println!("{id}: --tune: no limit was found, so there is none to move");
        return Vec::new();
    };
    let cause = breaking(&first.0, &first.1)
        .map(|b| b.3.clone())
        .unwrap_or_default();
    let knobs = candidates(&cause);
    if knobs.is_empty() {
        println!("{id}: --tune: nothing to try: the limit is set by {cause}, which no socket option moves");
        return Vec::new();
    }
    println!(
        "{id}: --tune: {} settings that may move a limit set by this cause, one at a time, each searched from {}",
        knobs.len(),
        ctx.what.show(base.held)
    );
    let mut tried = Vec::new();
    for k in knobs {
        if let Some(t) = try_knobs(ctx, case, vec![k], base.held) {
            tried.push(t);
        }
        if ctx.interrupted() {
            return kept(base, &tried);
        }
    }
    // The machine drifts between minutes more than within one search: the untuned case
    // searched again now, and the two limits' ratio widens every tuned band.
    let Some((base, drift)) = again(ctx, case, base) else {
        return kept(base, &tried);
    };
    for t in &mut tried {
        t.limit = t.limit.map(|l| l.widened(drift));
    }
    let helping: Vec<Knob> = tried
        .iter()
        .filter(|t| t.limit.is_some_and(|l| Gain::of(base, l).helps()))
        .flat_map(|t| t.knobs.clone())
        .collect();
    if helping.len() >= 2 {
        if let Some(mut t) = try_knobs(ctx, case, helping, base.held) {
            t.limit = t.limit.map(|l| l.widened(drift));
            tried.push(t);
        }
        if ctx.interrupted() {
            return kept(base, &tried);
        }
    }
    print!("{}", summary(ctx, case, base, &tried, slo));
    kept(base, &tried)
}

/// The untuned `case` searched again after the tries: the first limit's band widened to
/// take in the second's, and the drift between them (their ratio, at least 1). None: a
/// signal ended the run.
fn again(ctx: &mut Searching, case: &CaseSpec, base: Limit) -> Option<(Limit, f64)> {
    println!(
        "{} untuned again (the machine's drift between minutes):",
        case.id()
    );
    let (search, _) = ctx.search(case, base.held);
    if ctx.interrupted() {
        return None;
    }
    let Some(b) = limit_of(&search) else {
        println!("  no limit found this time: the bands are left as they are");
        return Some((base, 1.0));
    };
    let drift = (b.held / base.held).max(base.held / b.held);
    println!(
        "  limit {} (first {}): every tuned band is widened by {:.0}%, the drift between the two",
        ctx.what.show(b.held),
        ctx.what.show(base.held),
        100.0 * (drift - 1.0)
    );
    Some((
        Limit {
            low: base.low.min(b.low),
            held: base.held,
            high: base.high.max(b.high),
        },
        drift,
    ))
}

/// The tries as the run keeps them, best first.
fn kept(base: Limit, tried: &[Tried]) -> Vec<TunedSetting> {
    let mut out: Vec<TunedSetting> = tried
        .iter()
        .map(|t| {
            let gain = t.limit.map(|l| Gain::of(base, l));
            TunedSetting {
                settings: said(&t.knobs),
                held: t.limit.map(|l| l.held),
                low: t.limit.map(|l| l.low),
                high: t.limit.map(|l| l.high),
                gain: gain.map(|g| [g.ratio, g.low, g.high]),
                helps: gain.is_some_and(|g| g.helps()),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        let r = |t: &TunedSetting| t.gain.map_or(0.0, |g| g[0]);
        r(b).total_cmp(&r(a))
    });
    out
}

/// The gains best first, and the best settings as a topology file.
fn summary(ctx: &Searching, case: &CaseSpec, base: Limit, tried: &[Tried], slo: &str) -> String {
    let what = ctx.what;
    let mut rows: Vec<(&Tried, Option<Gain>)> = tried
        .iter()
        .map(|t| (t, t.limit.map(|l| Gain::of(base, l))))
        .collect();
    rows.sort_by(|a, b| {
        let r = |g: &Option<Gain>| g.map_or(0.0, |g| g.ratio);
        r(&b.1).total_cmp(&r(&a.1))
    });
    let mut out = format!(
        "{}: tuned, best first (the limit without them: {} [{} .. {}]):\n",
        case.id(),
        what.show(base.held),
        what.show(base.low),
        what.show(base.high)
    );
    for (t, g) in &rows {
        let effect = match (t.limit, g) {
            (Some(l), Some(g)) => format!("{}  {}", what.show(l.held), g.said()),
            _ => t.none.clone(),
        };
        out.push_str(&format!("  {:<40} {effect}\n", said(&t.knobs)));
    }
    let best = rows
        .iter()
        .find(|(_, g)| g.is_some_and(|g| g.helps()))
        .map(|(t, _)| t);
    match best.and_then(|t| tuned(case, &t.knobs)) {
        None => out.push_str(
            "  none raised the limit beyond the noise: the topology is best left as it is\n",
        ),
        Some(mut c) => {
            c.topology.name = format!("{}-tuned", c.topology.name);
            let text = toml::to_string(&c.topology).unwrap_or_default();
            out.push_str(&format!(
                "  suggested: {} (measured above). As a topology file, to save as tuned.toml and run: zmqperf run tuned.toml --transports {} --sizes {} --find {} --slo \"{slo}\"\n",
                said(&best.map(|t| t.knobs.clone()).unwrap_or_default()),
                case.transport,
                case.size,
                match what {
                    super::limit::Find::Size => "max-size",
                    _ => "max-rate",
                },
            ));
            out.push_str("# --- tuned topology ---\n");
            out.push_str(&text);
            out.push_str("# --- end ---\n");
        }
    }
    out
}
