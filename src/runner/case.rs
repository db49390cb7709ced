//! What the runner runs: a case ([`CaseSpec`], a topology and its parameters, with the
//! names and keys reports give it) and the settings that hold for every case of a run.

use super::hosts;
use crate::endpoint::Transport;
use crate::model::{CaseResult, Kind};
use crate::progress::Planned;
use crate::topology::{Latency, StreamPart, Topology};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// One case to run: a topology and its parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseSpec {
    /// The topology (a built-in shape, or a user's file).
    pub topology: Topology,
    /// Where the topology came from, for errors (a file path or `built-in NAME`).
    pub origin: String,
    /// The swept values that made this case, beyond size, transport and rate.
    pub label: String,
    /// Transport.
    pub transport: Transport,
    /// Payload bytes.
    pub size: usize,
    /// Measured round trips or messages per repetition.
    pub count: u64,
    /// Unmeasured round trips or messages before each repetition.
    pub warmup: u64,
    /// Repetitions.
    pub repetitions: u32,
    /// Open loop at this many msg/s (throughput patterns only).
    pub rate: Option<f64>,
}

impl CaseSpec {
    /// The pattern column: the topology's name, with the swept node values if any.
    pub fn pattern(&self) -> String {
        if self.label.is_empty() {
            self.topology.name.clone()
        } else {
            format!("{}[{}]", self.topology.name, self.label)
        }
    }

    /// The case's stable id.
    pub fn id(&self) -> String {
        CaseResult::make_id(
            self.kind(),
            &self.pattern(),
            self.transport,
            self.measured_size(),
            self.rate,
        )
    }

    /// The message size the case measures: its sources' own `size` where every source
    /// gives the same one (a node's size overrides the case's), else the case's.
    pub fn measured_size(&self) -> usize {
        let mut own = None;
        for n in self
            .topology
            .nodes
            .iter()
            .filter(|n| n.role.info().stream == StreamPart::Sends)
        {
            let size = crate::topology::value_u64(&n.size, "size", |w, s| {
                crate::parse::parse_size(w, s).map(|x| x as u64)
            })
            .ok()
            .flatten();
            match (size, own) {
                (None, _) => return self.size,
                (Some(s), None) => own = Some(s),
                (Some(s), Some(o)) if s != o => return self.size,
                _ => {}
            }
        }
        own.map_or(self.size, |s| s as usize)
    }

    /// The hosts of the tcp endpoints the case binds and connects to, in node order:
    /// `auto` binds on tcp are `127.0.0.1`; connects that name a node reach its binds.
    pub fn tcp_hosts(&self) -> Vec<String> {
        let mut out = Vec::new();
        for s in self.topology.nodes.iter().flat_map(|n| n.all_sockets()) {
            for b in &s.bind {
                if b == "auto" {
                    if self.transport == Transport::Tcp {
                        out.push("127.0.0.1".to_string());
                    }
                } else if let Some(h) = crate::net::iface::tcp_host(b) {
                    out.push(h);
                }
            }
            out.extend(
                s.connect
                    .iter()
                    .filter_map(|c| crate::net::iface::tcp_host(c)),
            );
        }
        out
    }

    /// Whether the topology measures round trips (it has a ping).
    pub fn is_latency(&self) -> bool {
        self.topology
            .nodes
            .iter()
            .any(|n| n.role.info().latency == Latency::RoundTrip)
    }

    /// What the case is planned to take ([`Planned`]): per repetition, the longest of
    /// its paced sources ((warm-up + count) / rate), ticking publishers (interval x
    /// ticks, and their wait for subscribers) and slow sinks (count x work) is fixed; an
    /// unpaced stream or round trips get a guess of their time per message (60 us a
    /// round trip, 1 us a message, more for large ones), and every repetition a set-up
    /// guess (10 ms inproc, 60 ms else: sockets, processes).
    pub fn planned(&self) -> Planned {
        let count_of = |n: &crate::topology::Node| {
            crate::topology::value_u64(&n.count, "count", crate::parse::parse_count)
                .ok()
                .flatten()
                .unwrap_or(self.count)
        };
        let mut fixed = 0.0f64;
        let mut unpaced = self.is_latency();
        for n in &self.topology.nodes {
            if let Some(t) = &n.ticks {
                let ticks = (t.passes + t.warmup) as f64;
                fixed = fixed.max(t.interval_ms * ticks / 1e3 + t.wait_ms as f64 / 1e3);
                continue;
            }
            if let Some(w) = n.work_us {
                fixed = fixed.max((count_of(n) + self.warmup) as f64 * w as f64 / 1e6);
            }
            if n.role.info().stream != StreamPart::Sends {
                continue;
            }
            match n.rate.or(self.rate) {
                Some(r) if r > 0.0 => {
                    fixed = fixed.max((count_of(n) + self.warmup) as f64 / r);
                }
                _ => unpaced = true,
            }
        }
        let base = if self.transport == Transport::Inproc {
            0.01
        } else {
            0.06
        };
        let per = if self.is_latency() { 60e-6 } else { 1e-6 } * (1.0 + self.size as f64 / 8192.0);
        let guess = if unpaced {
            base + (self.count + self.warmup) as f64 * per
        } else {
            base
        };
        Planned {
            fixed_s: fixed,
            guess_s: guess,
        }
        .times(self.repetitions)
    }

    /// Latency or throughput.
    pub fn kind(&self) -> Kind {
        if self.is_latency() {
            Kind::Latency
        } else {
            Kind::Throughput
        }
    }
}

/// Settings that hold for every case of a run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Longest wait for a peer, per message.
    pub timeout: Duration,
    /// Longest a repetition may take before its roles are stopped.
    pub case_timeout: Duration,
    /// The binary to re-execute for child roles.
    pub exe: PathBuf,
    /// Time-stamp every n-th message of a full-speed stream.
    pub stamp_every: u64,
    /// `--interval`: the sinks close an interval of figures this often.
    pub interval: Option<std::time::Duration>,
    /// Measure the raw-socket floor of latency cases.
    pub floor: bool,
    /// The hosts nodes may be placed on (`--hosts FILE`); a topology may add its own.
    pub hosts: hosts::Hosts,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::builtin;

    fn case(pattern: &str, count: u64, rate: Option<f64>, reps: u32) -> CaseSpec {
        crate::runner::plan::builtin_case(
            builtin::parse_name(pattern).unwrap(),
            Transport::Tcp,
            64,
            count,
            count / 10,
            reps,
            rate,
        )
    }

    #[test]
    fn a_paced_case_is_planned_at_its_count_over_its_rate() {
        // 20,000 messages and 2,000 of warm-up at 10,000 msg/s: 2.2 s a repetition.
        let p = case("pushpull", 20_000, Some(10_000.0), 3).planned();
        assert!((p.fixed_s - 6.6).abs() < 1e-9, "{p:?}");
        assert!((p.guess_s - 0.18).abs() < 1e-9, "set-up only: {p:?}");
    }

    #[test]
    fn unpaced_cases_are_guessed_per_message() {
        let thr = case("pushpull", 1_000_000, None, 2).planned();
        assert_eq!(thr.fixed_s, 0.0);
        let per_rep = 0.06 + 1_100_000.0 * 1e-6 * (1.0 + 64.0 / 8192.0);
        assert!((thr.guess_s - 2.0 * per_rep).abs() < 1e-9, "{thr:?}");
        let lat = case("reqrep", 10_000, None, 1).planned();
        assert!(lat.guess_s > 0.6 && lat.fixed_s == 0.0, "{lat:?}");
    }

    #[test]
    fn a_plan_of_paced_and_unpaced_cases_adds_up() {
        let plan = [
            case("pushpull", 20_000, Some(10_000.0), 1),
            case("pushpull", 100_000, None, 1),
        ];
        let total = plan
            .iter()
            .fold(Planned::default(), |t, c| t.then(c.planned()));
        assert!((total.fixed_s - 2.2).abs() < 1e-9, "{total:?}");
        let eta = crate::progress::Eta::new(plan.iter().map(CaseSpec::planned).collect());
        assert!((eta.left_s(0.0) - (total.fixed_s + total.guess_s)).abs() < 1e-9);
    }
}
