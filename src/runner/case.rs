//! What the runner runs: a case ([`CaseSpec`], a topology and its parameters, with the
//! names and keys reports give it) and the settings that hold for every case of a run.

use super::hosts;
use crate::endpoint::Transport;
use crate::model::{CaseResult, Kind};
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
    /// Measure the raw-socket floor of latency cases.
    pub floor: bool,
    /// The hosts nodes may be placed on (`--hosts FILE`); a topology may add its own.
    pub hosts: hosts::Hosts,
}
