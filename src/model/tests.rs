//! Tests of the result model: where cases ran, and the JSON of a run.

use super::*;
use crate::report::fixture::{host_pairs_run, machine_runs, sample_run};

#[test]
fn where_cases_ran() {
    let run = host_pairs_run();
    assert_eq!(run.hosts(), ["a", "b", "c"]);
    assert!(run.is_multi_host());
    assert_eq!(run.cases[0].host_path("bench-01"), "a");
    assert_eq!(run.cases[1].host_path("bench-01"), "a->b");
    assert_eq!(run.cases[7].host_path("bench-01"), "c->b");
    // A node that names no host ran on the run's own host.
    let hal = &machine_runs()[0];
    assert_eq!(hal.hosts(), ["hal"]);
    assert!(!hal.is_multi_host());
    assert_eq!(hal.node_host(&hal.cases[0].nodes[0]), "hal");
    assert_eq!(hal.cases[0].host_path("hal"), "hal");
    // A case without nodes ran on the run's host.
    let s = sample_run();
    assert_eq!(s.cases[0].hosts("bench-01"), ["bench-01"]);
    assert_eq!(s.hosts(), ["bench-01"]);
    // Sources on two hosts into one sink; a proxy is neither side.
    let mut c = run.cases[1].clone();
    c.nodes[0].role = "source".into();
    c.nodes.push(NodeResult {
        name: "src2".into(),
        role: "source".into(),
        host: "c".into(),
        ..Default::default()
    });
    c.nodes.push(NodeResult {
        name: "fwd".into(),
        role: "proxy".into(),
        host: "d".into(),
        ..Default::default()
    });
    c.nodes[1].role = "sink".into();
    assert_eq!(c.host_path("x"), "a+c->b");
    // Nothing that sends: every host, in node order.
    for n in &mut c.nodes {
        n.role = "proxy".into();
    }
    assert_eq!(c.host_path("x"), "a+b+c+d");
}

#[test]
fn hosts_by_name_and_the_runs_own_host() {
    let run = host_pairs_run();
    let e = &run.environment;
    assert_eq!(e.host("b").unwrap().hostname, "ns-b");
    assert!(e.host("d").is_none());
    // The runner's own host, by its name or by none, from the environment's fields.
    let own = e.host("bench-01").unwrap();
    assert_eq!(own.cpu_model, e.cpu_model);
    assert_eq!(e.host("").unwrap(), own);
    assert_eq!(e.host_list().len(), 3);
    // One host: the environment itself, its interfaces those its tcp addresses used.
    let s = sample_run();
    let list = s.environment.host_list();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].name, "bench-01");
    assert_eq!(list[0].nics.len(), 1);
    assert_eq!(list[0].nics[0].name, "lo");
    assert_eq!(list[0].nics[0].addresses, ["127.0.0.1"]);
    assert_eq!(list[0].nics[0].describe(), "lo (loopback) mtu 65536");
    assert_eq!(
        run.environment.hosts[0].wired_nics(),
        "veth-a mtu 1500 10000 Mb/s"
    );
    assert_eq!(
        run.environment.hosts[0].nic_of("10.0.0.1").unwrap().name,
        "veth-a"
    );
    assert!(run.environment.hosts[0].nic_of("10.0.0.9").is_none());
}

#[test]
fn results_without_hosts_still_load() {
    // A node and an environment as written before hosts existed.
    let node: NodeResult = serde_json::from_str(
        r#"{"name":"pub","role":"source","replicas":1,"placement":"thread",
            "cpu_ms":1.5,"peak_rss_kib":100}"#,
    )
    .unwrap();
    assert_eq!(node.host, "");
    let env: Environment = serde_json::from_str(
        r#"{"cpu_model":"x","cores":2,"memory_bytes":1,"kernel":"k","os":"o",
            "hostname":"h","libzmq_version":"4.3.5","zmqperf_version":"0.1.0"}"#,
    )
    .unwrap();
    assert!(env.hosts.is_empty());
    // And nothing new is written for them.
    assert!(!serde_json::to_string(&node).unwrap().contains("host"));
    assert!(!serde_json::to_string(&env).unwrap().contains("hosts"));
    let run = sample_run();
    let json = serde_json::to_string(&run).unwrap();
    assert!(!json.contains("\"imported\""));
    // A run across hosts reads back whole.
    let r = host_pairs_run();
    let back: RunResult = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back, r);
}

#[test]
fn the_sides_of_a_case_come_from_the_roles_descriptors() {
    for r in ["ping", "source"] {
        assert!(super::is_sending_role(r), "{r} sends");
        assert!(!super::is_receiving_role(r), "{r} does not receive");
    }
    for r in ["echo", "sink", "swarm", "slow_sink"] {
        assert!(super::is_receiving_role(r), "{r} receives");
        assert!(!super::is_sending_role(r), "{r} does not send");
    }
    for r in ["proxy", "client", "nonsense"] {
        assert!(
            !super::is_receiving_role(r) && !super::is_sending_role(r),
            "{r}"
        );
    }
}
