//! Tests of `compare`: matching, noise and thresholds, and the text of the verdict; the runs
//! and cases they are built from are here, the tests by subject beside.

mod gaps;
mod machines;
mod verdicts;

pub(super) use super::*;
pub(super) use crate::compare::{change, compare, parse_percent, Metric, Noise, Verdict};
pub(super) use crate::endpoint::Transport;
pub(super) use crate::model::{
    CaseResult, CaseSummary, Environment, Estimate, Kind, LoopMode, RunResult,
};

pub(super) fn est(median: f64, half: f64) -> Estimate {
    Estimate {
        median,
        ci_low: median - half,
        ci_high: median + half,
        spread_pct: 2.0 * half / median * 100.0,
        n: 3,
    }
}

pub(super) fn latency_case(size: usize, lat: Estimate) -> CaseResult {
    CaseResult {
        id: CaseResult::make_id(Kind::Latency, "reqrep", Transport::Tcp, size, None),
        kind: Kind::Latency,
        pattern: "reqrep".into(),
        transport: Transport::Tcp,
        message_size: size,
        count: 10_000,
        rate: None,
        loop_mode: LoopMode::Closed,
        warmup: 1000,
        repetitions: Vec::new(),
        summary: CaseSummary {
            latency_us: Some(lat),
            p99_us: Some(Estimate {
                median: lat.median * 2.0,
                ci_low: lat.ci_low * 2.0,
                ci_high: lat.ci_high * 2.0,
                ..lat
            }),
            ..CaseSummary::default()
        },
        floor: None,
        warnings: Vec::new(),
        incomplete: None,
        error: None,
        wall_s: 1.5,
        nodes: Vec::new(),
        edges: Vec::new(),
        sender: None,
        machine: None,
        intervals: Vec::new(),
    }
}

pub(super) fn throughput_case(size: usize, rate: Estimate) -> CaseResult {
    let mut c = latency_case(size, rate);
    c.id = CaseResult::make_id(Kind::Throughput, "pushpull", Transport::Tcp, size, None);
    c.kind = Kind::Throughput;
    c.pattern = "pushpull".into();
    c.summary = CaseSummary {
        msgs_per_sec: Some(rate),
        ..CaseSummary::default()
    };
    c
}

pub(super) fn run(id: &str, cases: Vec<CaseResult>) -> RunResult {
    RunResult {
        schema_version: crate::model::SCHEMA_VERSION,
        run_id: id.into(),
        started_at: "2026-11-21T22:15:30Z".into(),
        finished_at: Some("2026-11-21T22:16:00Z".into()),
        status: crate::model::RunStatus::Complete,
        command: "zmqperf run".into(),
        workload: None,
        environment: Environment {
            hostname: "alpha".into(),
            ..Environment::default()
        },
        cases,
        findings: Vec::new(),
        imported: None,
        limits: Vec::new(),
        curves: Vec::new(),
    }
}

pub(super) fn baseline() -> RunResult {
    run(
        "A1",
        vec![
            latency_case(64, est(30.0, 0.5)),
            throughput_case(64, est(1_000_000.0, 10_000.0)),
        ],
    )
}
