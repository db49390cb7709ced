//! `fanout --find max-subscribers`: the most subscribers a fan-out holds under `--slo`,
//! searched over the SUB sockets per process (scenarios::limit); every step a whole fan-out,
//! printed as it ends and recorded as a case of one run. `--tune` then tries the fan-out's
//! flags that may move the limit (cli::tune).

use super::{live_notes, planned_end, FanoutArgs};
use crate::cli::limit::{outcome, step_done, Broken, Find, MAX_STEPS};
use crate::cli::tune::{tune, Tuning};
use zmqperf::error::{Error, Result};
use zmqperf::progress::Live;
use zmqperf::scenarios::fanout::{self, FanoutConfig, FanoutReport};
use zmqperf::scenarios::limit::{self, Busy, Figures, Search, Slo};
use zmqperf::scenarios::tune::{fan_candidates, FanKnob};
use zmqperf::units::grouped;

/// What a fan-out step measured, as the service level judges it: every subscriber's loss,
/// the p99 of every delivery, and a failure (a process that failed, a limit on open files).
fn figures(r: &Result<FanoutReport>) -> Figures {
    match r {
        Err(e) => Figures {
            error: Some(e.to_string()),
            ..Figures::default()
        },
        Ok(r) => Figures {
            error: (!r.failed_processes.is_empty()).then(|| r.failed_processes.join("; ")),
            lost: r.delivery.lost,
            p99_ns: (r.latency.count > 0).then_some(r.latency.p99_ns as f64),
            delivered: None,
            offered: None,
        },
    }
}

/// How busy the publisher and each subscriber process were over the step's `wall_s`
/// seconds, % of one core.
fn busy(r: &FanoutReport, wall_s: f64) -> Vec<Busy> {
    let pct = |u: &zmqperf::roles::swarm::ProcessUsage| {
        (u.cpu_user_ms + u.cpu_sys_ms) / 10.0 / wall_s.max(1e-3)
    };
    let mut b: Vec<Busy> = r
        .process_list
        .iter()
        .map(|p| Busy {
            node: format!("subs[{}]", p.process),
            role: "swarm".into(),
            core_pct: pct(&p.usage),
        })
        .collect();
    if let Some(p) = &r.publisher {
        b.push(Busy {
            node: "pub".into(),
            role: "publisher".into(),
            core_pct: pct(&p.usage),
        });
    }
    b
}

/// The cause of a broken fan-out step: the one rule of [`limit::cause`], with the loss put
/// down by the fan-out's own ledger; latency with no core saturated is the time one
/// message takes to reach every subscriber, measured from the first delivery to the last.
fn cause(f: &Figures, slo: &Slo, r: &Result<FanoutReport>, wall_s: f64, cores: usize) -> String {
    let Ok(r) = r else {
        return limit::cause(f, slo, &[], cores, None);
    };
    let said = limit::cause(f, slo, &busy(r, wall_s), cores, Some(r.loss_cause()));
    if said.starts_with("not the nodes' CPU") && f.lost <= slo.max_lost {
        let l = &r.latency;
        return format!(
            "the fan-out's spread: a message reached the first subscriber {} after its send and the last {} after, one copy per subscriber written in turn by the publisher's I/O thread ({} subscribers; the busiest process used {:.0}% of a core over the run)",
            zmqperf::units::latency(l.min_ns as f64),
            zmqperf::units::latency(l.max_ns as f64),
            grouped(r.subscribers),
            busy(r, wall_s).iter().map(|b| b.core_pct).fold(0.0, f64::max)
        );
    }
    said
}

/// The fan-out searches of one run: every step run, printed and recorded in it.
struct Searching<'a> {
    slo: &'a Slo,
    what: Find,
    cores: usize,
    run: &'a mut zmqperf::model::RunResult,
    session: &'a mut zmqperf::runner::session::Session,
}

impl Searching<'_> {
    /// Searches the fan-out `cfg` from `start` subscribers per process; its steps are
    /// recorded with `tag` (the settings tried) in their pattern.
    fn search(&mut self, cfg: &FanoutConfig, start: f64, tag: &str) -> (Search, Vec<Broken>) {
        let (slo, what, cores) = (self.slo, self.what, self.cores);
        let mut search =
            Search::new(start, fanout::MAX_SUBS_PER_PROCESS as f64, 0.05, MAX_STEPS).whole();
        let mut broken: Vec<Broken> = Vec::new();
        while let Some(v) = search.next_rate() {
            let live = Live::on_stderr();
            let mut step = cfg.clone();
            step.subs_per_process = v as u32;
            live.set(
                format!(
                    "fanout --find: step {}: {} subscribers",
                    search.steps + 1,
                    what.show(v)
                ),
                Some(planned_end(fanout::planned(&step), 1)),
            );
            let started = std::time::Instant::now();
            let r = fanout::fanout(&step, live_notes(&live));
            let wall_s = started.elapsed().as_secs_f64();
            if let Ok(r) = &r {
                let mut case = fanout::to_case(r, wall_s);
                if !tag.is_empty() {
                    case.pattern = format!("{}[{tag}]", case.pattern);
                    case.id = zmqperf::model::CaseResult::make_id(
                        case.kind,
                        &case.pattern,
                        case.transport,
                        case.message_size,
                        None,
                    );
                }
                self.session.case_done(&case);
                self.run.cases.push(case);
            }
            live.finish();
            if zmqperf::runner::interrupted() {
                break;
            }
            let f = figures(&r);
            step_done(&mut search, slo, what, v, &f, &mut broken, |f| {
                cause(f, slo, &r, wall_s, cores)
            });
        }
        (search, broken)
    }
}

/// `fanout --tune`: the fan-out's flags tried at its limit.
struct FanTuning<'a, 'b> {
    searching: &'a mut Searching<'b>,
    cfg: &'a FanoutConfig,
    id: &'a str,
}

impl Tuning for FanTuning<'_, '_> {
    type Knob = FanKnob;

    fn id(&self) -> String {
        self.id.to_string()
    }

    fn what(&self) -> Find {
        self.searching.what
    }

    fn said(&self, k: &FanKnob) -> String {
        k.said()
    }

    fn on(&self, k: &FanKnob) -> &'static str {
        k.on()
    }

    fn search(&mut self, knobs: &[FanKnob], start: f64) -> Option<(Search, Vec<Broken>)> {
        let mut cfg = self.cfg.clone();
        let mut changed = false;
        for k in knobs {
            changed |= k.apply(&mut cfg);
        }
        if !knobs.is_empty() && !changed {
            return None;
        }
        let tag = knobs
            .iter()
            .map(|k| k.said().trim_start_matches("--").replace(' ', "="))
            .collect::<Vec<_>>()
            .join(",");
        Some(self.searching.search(&cfg, start, &tag))
    }

    fn interrupted(&self) -> bool {
        zmqperf::runner::interrupted()
    }

    fn suggestion(&self, best: &[FanKnob], _slo: &str) -> String {
        let flags: Vec<String> = best
            .iter()
            .filter(|k| **k != FanKnob::NoDrop)
            .map(FanKnob::said)
            .collect();
        let mut out = format!(
            "  suggested: {} (measured above). On the command line: add {}",
            best.iter()
                .map(FanKnob::said)
                .collect::<Vec<_>>()
                .join(", "),
            flags.join(" ")
        );
        if best.contains(&FanKnob::NoDrop) {
            out.push_str(if flags.is_empty() {
                "nothing, and drop --lossy"
            } else {
                ", and drop --lossy"
            });
        }
        out.push('\n');
        out
    }
}

/// Runs the search: each step the fan-out `cfg` with its subscribers per process set by
/// the search, printed and kept as a case of one recorded run; with `--tune`, the flags
/// that may move the limit after it.
pub fn max_subscribers(cfg: &FanoutConfig, a: &FanoutArgs) -> Result<()> {
    let slo = Slo::parse(&a.slo)?;
    if cfg.publisher.lossy && slo.max_lost == 0 {
        zmqperf::errln!(
            "zmqperf: note: --lossy with loss=0: a PUB that does not wait for its subscribers loses its first messages to slow joiners at any count"
        );
    }
    let what = Find::Subscribers {
        processes: cfg.processes,
    };
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let mut run = zmqperf::runner::new_run(command, None);
    let mut session = a.db.session(a.no_history, &run)?;
    let id = format!("fanout/{}", cfg.publisher.endpoint.transport());
    println!("{id}: the most subscribers that hold {}", a.slo);
    let mut searching = Searching {
        slo: &slo,
        what,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        run: &mut run,
        session: &mut session,
    };
    let first = searching.search(cfg, cfg.subs_per_process as f64, "");
    let mut interrupted = zmqperf::runner::interrupted();
    if !interrupted {
        print!("{}", outcome(&id, what, &first.0, &first.1));
        let mut found = crate::cli::limit::limit_result(&id, what, &a.slo, &first.0, &first.1);
        if a.tune {
            let mut t = FanTuning {
                searching: &mut searching,
                cfg,
                id: &id,
            };
            found.tuned = tune(&mut t, &first, &a.slo, fan_candidates);
            interrupted = zmqperf::runner::interrupted();
        }
        run.limits.push(found);
    }
    zmqperf::runner::finish(
        &mut run,
        if interrupted {
            zmqperf::model::RunStatus::Interrupted
        } else {
            zmqperf::model::RunStatus::Complete
        },
    );
    session.finish(&run)?;
    session.announce()?;
    if interrupted {
        return Err(Error::Interrupted(
            "the steps so far are printed and recorded".into(),
        ));
    }
    Ok(())
}
