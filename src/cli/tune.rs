//! `--tune` (`run --find ... --tune`, `fanout --find max-subscribers --tune`): once a limit
//! is found, the settings that may move it (scenarios::tune, chosen by the cause of the step
//! that broke it) are tried one at a time, each by the same search from the limit found;
//! those that raised it beyond both bands are then tried together. The gains are printed
//! best first, with their intervals, and the tuned settings as something to paste. What is
//! tuned (a case's topology, a fan-out's flags) is a [`Tuning`]; the rest is one loop.

use super::limit::{breaking, Broken, Find, Searching};
use zmqperf::model::TunedSetting;
use zmqperf::runner::CaseSpec;
use zmqperf::scenarios::limit::{Found, Search};
use zmqperf::scenarios::tune::{candidates_for, Gain, Knob, Limit};

/// What `--tune` tunes: the searches it runs with settings, and how it names them.
pub trait Tuning {
    type Knob: Clone;
    /// The tuned thing's name (a case's id).
    fn id(&self) -> String;
    /// What the search varies.
    fn what(&self) -> Find;
    /// A setting in words, as the user would write it.
    fn said(&self, k: &Self::Knob) -> String;
    /// Where it goes.
    fn on(&self, k: &Self::Knob) -> &'static str;
    /// Searches with `knobs` set (none: untuned) from `start`: every step run, printed and
    /// recorded. None when nothing takes them (or they are set so already).
    fn search(&mut self, knobs: &[Self::Knob], start: f64) -> Option<(Search, Vec<Broken>)>;
    /// Whether a signal ended the run.
    fn interrupted(&self) -> bool;
    /// The best settings `best`, measured, as something to paste: a topology file, a
    /// command line.
    fn suggestion(&self, best: &[Self::Knob], slo: &str) -> String;
}

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
struct Tried<K> {
    knobs: Vec<K>,
    limit: Option<Limit>,
    /// Why there is no limit, when there is none.
    none: String,
}

/// The settings of `knobs`, in words.
fn said<T: Tuning>(t: &T, knobs: &[T::Knob]) -> String {
    knobs
        .iter()
        .map(|k| t.said(k))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Searches with `knobs` set, from `start`; None when nothing takes them.
fn try_knobs<T: Tuning>(t: &mut T, knobs: Vec<T::Knob>, start: f64) -> Option<Tried<T::Knob>> {
    let on = if knobs.len() == 1 {
        t.on(&knobs[0])
    } else {
        "together"
    };
    println!("{} with {} {on}:", t.id(), said(t, &knobs));
    let Some((search, broken)) = t.search(&knobs, start) else {
        println!("  nothing takes it, or it is set so already");
        return None;
    };
    let what = t.what();
    let limit = limit_of(&search);
    let none = match search.found() {
        Found::BelowStart { .. } => "no limit: even the lowest value tried broke".to_string(),
        Found::OutOfSteps { held, .. } => format!(
            "no limit within {} steps (the noise kept the boundary open); held up to {}",
            search.steps,
            held.map_or("none".into(), |v| what.show(v))
        ),
        _ => String::new(),
    };
    match (limit, breaking(&search, &broken)) {
        (Some(l), _) => println!(
            "  limit {} [{} .. {}]",
            what.show(l.held),
            what.show(l.low),
            what.show(l.high)
        ),
        (None, Some(b)) => println!("  no limit found: broke at {}: {}", what.show(b.0), b.2),
        (None, None) => println!("  no limit found"),
    }
    Some(Tried { knobs, limit, none })
}

/// `--tune` of `t`, whose first search is `first`, trying `knobs_for(cause)`: what each try
/// found, best first.
pub fn tune<T: Tuning>(
    t: &mut T,
    first: &(Search, Vec<Broken>),
    slo: &str,
    knobs_for: impl FnOnce(&str) -> Vec<T::Knob>,
) -> Vec<TunedSetting> {
    let id = t.id();
    let what = t.what();
    let Some(base) = limit_of(&first.0) else {
        println!("{id}: --tune: no limit was found, so there is none to move");
        return Vec::new();
    };
    let cause = breaking(&first.0, &first.1)
        .map(|b| b.3.clone())
        .unwrap_or_default();
    let knobs = knobs_for(&cause);
    if knobs.is_empty() {
        println!("{id}: --tune: nothing to try: the limit is set by {cause}, which no setting here moves");
        return Vec::new();
    }
    println!(
        "{id}: --tune: {} setting{} that may move a limit set by this cause, one at a time, each searched from {}",
        knobs.len(),
        if knobs.len() == 1 { "" } else { "s" },
        what.show(base.held)
    );
    let mut tried = Vec::new();
    for k in knobs {
        if let Some(one) = try_knobs(t, vec![k], base.held) {
            tried.push(one);
        }
        if t.interrupted() {
            return kept(t, base, &tried);
        }
    }
    // The machine drifts between minutes more than within one search: the untuned case
    // searched again now, and the two limits' ratio widens every tuned band.
    let Some((base, drift)) = again(t, base) else {
        return kept(t, base, &tried);
    };
    for one in &mut tried {
        one.limit = one.limit.map(|l| l.widened(drift));
    }
    let helping: Vec<T::Knob> = tried
        .iter()
        .filter(|one| one.limit.is_some_and(|l| Gain::of(base, l).helps()))
        .flat_map(|one| one.knobs.clone())
        .collect();
    if helping.len() >= 2 {
        if let Some(mut one) = try_knobs(t, helping, base.held) {
            one.limit = one.limit.map(|l| l.widened(drift));
            tried.push(one);
        }
        if t.interrupted() {
            return kept(t, base, &tried);
        }
    }
    print!("{}", summary(t, base, &tried, slo));
    kept(t, base, &tried)
}

/// The untuned thing searched again after the tries: the first limit's band widened to
/// take in the second's, and the drift between them (their ratio, at least 1). None: a
/// signal ended the run.
fn again<T: Tuning>(t: &mut T, base: Limit) -> Option<(Limit, f64)> {
    println!(
        "{} untuned again (the machine's drift between minutes):",
        t.id()
    );
    let what = t.what();
    let (search, _) = t.search(&[], base.held)?;
    if t.interrupted() {
        return None;
    }
    let Some(b) = limit_of(&search) else {
        println!("  no limit found this time: the bands are left as they are");
        return Some((base, 1.0));
    };
    let drift = (b.held / base.held).max(base.held / b.held);
    println!(
        "  limit {} (first {}): every tuned band is widened by {:.0}%, the drift between the two",
        what.show(b.held),
        what.show(base.held),
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
fn kept<T: Tuning>(t: &T, base: Limit, tried: &[Tried<T::Knob>]) -> Vec<TunedSetting> {
    let mut out: Vec<TunedSetting> = tried
        .iter()
        .map(|one| {
            let gain = one.limit.map(|l| Gain::of(base, l));
            TunedSetting {
                settings: said(t, &one.knobs),
                held: one.limit.map(|l| l.held),
                low: one.limit.map(|l| l.low),
                high: one.limit.map(|l| l.high),
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

/// The gains best first, and the best settings to paste.
fn summary<T: Tuning>(t: &T, base: Limit, tried: &[Tried<T::Knob>], slo: &str) -> String {
    let what = t.what();
    let mut rows: Vec<(&Tried<T::Knob>, Option<Gain>)> = tried
        .iter()
        .map(|one| (one, one.limit.map(|l| Gain::of(base, l))))
        .collect();
    rows.sort_by(|a, b| {
        let r = |g: &Option<Gain>| g.map_or(0.0, |g| g.ratio);
        r(&b.1).total_cmp(&r(&a.1))
    });
    let mut out = format!(
        "{}: tuned, best first (the limit without them: {} [{} .. {}]):\n",
        t.id(),
        what.show(base.held),
        what.show(base.low),
        what.show(base.high)
    );
    // The settings' column: at least two spaces after the longest (a combined setting can
    // be longer than the usual 39 characters).
    let names: Vec<String> = rows.iter().map(|(one, _)| said(t, &one.knobs)).collect();
    let w = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0)
        .max(39);
    for ((one, g), name) in rows.iter().zip(&names) {
        let effect = match (one.limit, g) {
            (Some(l), Some(g)) => format!("{}  {}", what.show(l.held), g.said()),
            _ => one.none.clone(),
        };
        out.push_str(&format!("  {name:<w$}  {effect}\n"));
    }
    match rows.iter().find(|(_, g)| g.is_some_and(|g| g.helps())) {
        None => out.push_str(
            "  none raised the limit beyond the noise: the settings are best left as they are\n",
        ),
        Some((best, _)) => out.push_str(&t.suggestion(&best.knobs, slo)),
    }
    out
}

/// A case of the suite tuned: its topology's socket options and calls.
pub struct CaseTuning<'a, 'b> {
    pub ctx: &'a mut Searching<'b>,
    pub case: &'a CaseSpec,
}

impl CaseTuning<'_, '_> {
    /// The case with `knobs` set (None: none of them changed anything), named for them in
    /// the history.
    fn tuned(&self, knobs: &[Knob]) -> Option<CaseSpec> {
        let mut c = self.case.clone();
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
}

impl Tuning for CaseTuning<'_, '_> {
    type Knob = Knob;

    fn id(&self) -> String {
        self.case.id()
    }

    fn what(&self) -> Find {
        self.ctx.what
    }

    fn said(&self, k: &Knob) -> String {
        k.said()
    }

    fn on(&self, k: &Knob) -> &'static str {
        k.on()
    }

    fn search(&mut self, knobs: &[Knob], start: f64) -> Option<(Search, Vec<Broken>)> {
        if knobs.is_empty() {
            return Some(self.ctx.search(self.case, start));
        }
        let c = self.tuned(knobs)?;
        Some(self.ctx.search(&c, start))
    }

    fn interrupted(&self) -> bool {
        self.ctx.interrupted()
    }

    fn suggestion(&self, best: &[Knob], slo: &str) -> String {
        let Some(mut c) = self.tuned(best) else {
            return String::new();
        };
        c.topology.name = format!("{}-tuned", c.topology.name);
        let text = toml::to_string(&c.topology).unwrap_or_default();
        format!(
            "  suggested: {} (measured above). As a topology file, to save as tuned.toml and run: zmqperf run tuned.toml --transports {} --sizes {} --find {} --slo \"{slo}\"\n# --- tuned topology ---\n{text}# --- end ---\n",
            said(self, best),
            c.transport,
            c.size,
            match self.ctx.what {
                Find::Size => "max-size",
                _ => "max-rate",
            },
        )
    }
}

/// `--tune` of a case of the suite, whose first search is `first`.
pub fn tune_case(
    ctx: &mut Searching,
    case: &CaseSpec,
    first: &(Search, Vec<Broken>),
    slo: &str,
) -> Vec<TunedSetting> {
    // A publisher over multicast (or a RADIO over udp) also tries its multicast settings.
    let multicast = case.topology.nodes.iter().any(|n| {
        n.role.info().publishes.is_some()
            && n.all_sockets()
                .first()
                .is_some_and(|s| s.transports(case.transport).any(|t| t.one_way()))
    });
    tune(&mut CaseTuning { ctx, case }, first, slo, |cause| {
        candidates_for(cause, multicast)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Settings named by themselves, searched by nobody: the table alone.
    struct Named;

    impl Tuning for Named {
        type Knob = String;
        fn id(&self) -> String {
            "case".into()
        }
        fn what(&self) -> Find {
            Find::Rate
        }
        fn said(&self, k: &String) -> String {
            k.clone()
        }
        fn on(&self, _: &String) -> &'static str {
            "socket"
        }
        fn search(&mut self, _: &[String], _: f64) -> Option<(Search, Vec<Broken>)> {
            None
        }
        fn interrupted(&self) -> bool {
            false
        }
        fn suggestion(&self, _: &[String], _: &str) -> String {
            String::new()
        }
    }

    #[test]
    fn a_setting_longer_than_the_column_keeps_two_spaces_before_its_figure() {
        let base = Limit {
            low: 80_000.0,
            held: 83_000.0,
            high: 90_000.0,
        };
        let tried = |knobs: &[&str], held: f64| Tried {
            knobs: knobs.iter().map(|k| k.to_string()).collect(),
            limit: Some(Limit {
                low: held * 0.95,
                held,
                high: held * 1.05,
            }),
            none: String::new(),
        };
        let long = ["sndbuf = rcvbuf = 4194304", "xpub_nodrop = true"];
        let rows = [
            tried(&long, 700_000.0),
            tried(&["sndhwm = 10000"], 280_000.0),
        ];
        let table = summary(&Named, base, &rows, "loss=0");
        let lines: Vec<&str> = table.lines().skip(1).take(2).collect();
        // Each row: the setting, two spaces at least, its rate; the rates in one column.
        let at: Vec<usize> = lines.iter().map(|l| l.find(" msg/s").unwrap()).collect();
        assert_eq!(at[0], at[1], "{table}");
        assert!(
            lines[0].starts_with(&format!("  {}  ", long.join(", "))),
            "{table}"
        );
        assert!(lines[1].starts_with("  sndhwm = 10000   "), "{table}");
    }
}
