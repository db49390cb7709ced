//! Tests of the topology graph: replicas resolved to their node, boxes and arrows drawn,
//! replica streams merged and names escaped.

use super::links::node_index;
use super::*;
use crate::model::NodeResult;
use crate::report::fixture::sample_run;

#[test]
fn replicas_resolve_to_their_node() {
    let nodes: Vec<NodeResult> = ["src", "sink"]
        .iter()
        .map(|n| NodeResult {
            name: n.to_string(),
            role: if *n == "src" { "source" } else { "sink" }.to_string(),
            replicas: 3,
            placement: "thread".to_string(),
            cpu_ms: 0.0,
            peak_rss_kib: 0,
            ..Default::default()
        })
        .collect();
    assert_eq!(node_index(&nodes, "src[2]"), Some(0));
    assert_eq!(node_index(&nodes, "sink"), Some(1));
    assert_eq!(node_index(&nodes, "other[1]"), None);
    assert_eq!(node_index(&nodes, "src["), None);
}

#[test]
fn draws_boxes_arrows_and_the_lossy_edge() {
    let run = sample_run();
    let c = run.cases.iter().find(|c| !c.nodes.is_empty()).unwrap();
    let s = topology("t", c).unwrap();
    assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
    assert_eq!(s.matches("rx=\"6\"").count(), 3, "a box per node");
    assert_eq!(s.matches("<polygon").count(), 2);
    assert_eq!(s.matches("<path").count(), 2);
    for name in [">pub<", ">sub1<", ">sub2<", ">source<", ">sink<"] {
        assert!(s.contains(name), "{name} missing");
    }
    assert!(
        s.contains(">lost 250 of 600,000<") && s.contains(">(middle 250)<"),
        "{s}"
    );
    assert_eq!(s.matches(&format!("stroke=\"{LOSSY}\"")).count(), 1);
    // The source is left of the sinks.
    let x_of = |name: &str| {
        let at = s.find(&format!(">{name}<")).unwrap();
        let tag = s[..at].rfind("<text x=\"").unwrap();
        s[tag + 9..]
            .split('"')
            .next()
            .unwrap()
            .parse::<f64>()
            .unwrap()
    };
    assert!(x_of("pub") < x_of("sub1"));
    assert_eq!(x_of("sub1"), x_of("sub2"));
}

#[test]
fn merges_replica_streams_and_escapes_names() {
    let mut c = sample_run().cases.pop().unwrap();
    c.nodes[0].name = "p<&>".to_string();
    c.nodes[0].replicas = 2;
    let mut e2 = c.edges[0].clone();
    for e in c.edges.iter_mut() {
        e.from = "p<&>[0]".to_string();
    }
    e2.from = "p<&>[1]".to_string();
    c.edges.push(e2);
    let s = topology("t", &c).unwrap();
    assert!(s.contains(">p&lt;&amp;&gt;<") && !s.contains("p<&>"));
    assert!(s.contains("source ×2"));
    assert_eq!(s.matches("<polygon").count(), 2, "one arrow per pair");
    assert!(s.contains(">2 streams<"));
    assert!(topology("t", &sample_run().cases[0]).is_none());
}
