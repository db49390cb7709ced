//! Tests of the bindings matrix: the plan of pairs, the passes merged, and the grids read.

use super::*;

fn imp(name: &str, ready: bool, transports: &[&str]) -> Impl {
    Impl {
        name: name.into(),
        label: name.into(),
        ready,
        transports: transports.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn every_pair_is_planned_or_left_out_with_why() {
    let impls = [
        imp(CORE, true, &["tcp", "ipc"]),
        imp("c", true, &["tcp", "ipc"]),
        imp("jeromq", true, &["tcp"]),
        imp("node", false, &["tcp", "ipc"]),
    ];
    let mut shape = Shape::quick();
    shape.transports = vec![Transport::Tcp, Transport::Ipc];
    let (cases, skipped) = plan(&impls, &shape);
    assert_eq!(cases.len() + skipped.len(), 3 * 2 * 16);
    // tcp: 9 pairs run (node not set up); ipc: 4 (jeromq has no ipc, node not set up).
    assert_eq!(cases.len(), 3 * (9 + 4));
    let c = cases
        .iter()
        .find(|c| c.label == "jeromq>c" && c.topology.name == "reqrep")
        .unwrap();
    for n in &c.topology.nodes {
        let want = if n.role == Role::Ping { "jeromq" } else { "c" };
        assert_eq!(n.implementation.as_deref(), Some(want));
    }
    let core = cases.iter().find(|c| c.label == "zmqperf>zmqperf").unwrap();
    assert!(core
        .topology
        .nodes
        .iter()
        .all(|n| n.implementation.is_none()));
    assert!(skipped
        .iter()
        .any(|s| s.why == "jeromq has no ipc transport" && s.id.contains("[c>jeromq]/ipc")));
    assert!(skipped.iter().any(|s| s
        .why
        .contains("node is not set up (zmqperf peers setup node)")));
}

#[test]
fn the_ratio_interval_is_on_the_log_scale_and_never_reaches_zero() {
    let e = |xs: &[f64]| crate::stats::estimate(xs).unwrap();
    let (r, lo, hi) = ratio(&e(&[18.0, 20.0, 22.0]), &e(&[9.0, 10.0, 11.0])).unwrap();
    assert_eq!(r, 2.0);
    assert!(lo > 1.0 && lo < 2.0 && hi > 2.0, "{lo} {hi}");
    // A baseline spread over a factor of 20: the old interval was [0.00, 12.51].
    let (_, lo, hi) = ratio(&e(&[1.0, 8.0, 0.4]), &e(&[0.5, 10.0, 0.6])).unwrap();
    assert!(lo > 0.0 && hi.is_finite(), "{lo} {hi}");
    let zero = Estimate {
        median: 0.0,
        ci_low: 0.0,
        ci_high: 0.0,
        spread_pct: 0.0,
        n: 3,
    };
    assert!(ratio(&e(&[1.0, 1.0]), &zero).is_none());
    // One pass: no interval.
    assert!(ratio(&e(&[1.0]), &e(&[1.0, 2.0])).is_none());
}

fn pass_case(id: &str, latency_us: Option<f64>, error: Option<&str>) -> CaseResult {
    let mut c = crate::report::fixture::sample_run().cases[0].clone();
    c.id = id.into();
    c.error = error.map(String::from);
    c.incomplete = None;
    c.repetitions.truncate(1);
    match latency_us {
        Some(us) => {
            let l = c.repetitions[0].latency.as_mut().unwrap();
            l.mean_ns = us * 1e3;
        }
        None => c.repetitions.clear(),
    }
    c
}

/// MX2: a pair that failed in pass 1 and worked in pass 2 is not a plain FAIL: its
/// merged case keeps what pass 2 measured, says it failed in 1 of 2 passes, and has no
/// error; a pair that failed in every pass keeps its first error.
#[test]
fn a_pair_that_failed_in_one_pass_of_two_says_so() {
    let passes = vec![
        vec![
            pass_case("x", None, Some("peer c died")),
            pass_case("y", None, Some("refused")),
        ],
        vec![
            pass_case("x", Some(30.0), None),
            pass_case("y", None, Some("refused again")),
        ],
    ];
    let merged = merge_passes(passes);
    let x = merged.iter().find(|c| c.id == "x").unwrap();
    assert!(x.error.is_none(), "{:?}", x.error);
    assert_eq!(
        x.incomplete.as_deref(),
        Some("failed in 1 of 2 passes (pass 1: peer c died)")
    );
    assert_eq!(x.repetitions.len(), 1);
    assert_eq!(failed_passes(x), Some((1, 2)));
    let y = merged.iter().find(|c| c.id == "y").unwrap();
    assert_eq!(y.error.as_deref(), Some("pass 1: refused"));
    assert_eq!(failed_passes(y), None);
}
