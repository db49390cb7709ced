//! The reports of topology cases: the Edges and Nodes sections in text and Markdown, the
//! graph and tables in HTML, cut-short reasons, and width limits, on the fixture's
//! pub -> sub1, sub2 case.

use zmqperf::report::fixture::sample_run;
use zmqperf::report::{render, Format};

/// The text of a section of the table report, from its heading to the next blank line.
fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("no section {heading:?} in:\n{text}"));
    let rest = &text[start + 1..];
    &rest[..rest.find("\n\n").unwrap_or(rest.len())]
}

#[test]
fn edges_and_nodes_show_in_every_human_format() {
    let run = sample_run();
    let text = render(&run, Format::Table);
    let edges = section(&text, "Edges");
    let lossy = edges
        .lines()
        .find(|l| l.contains("pub -> sub2"))
        .expect("the lossy edge");
    for cell in [
        "throughput/ptmp/tcp/64",
        "599,750",
        "250 of 600,000 (middle 250)",
    ] {
        assert!(lossy.contains(cell), "no {cell:?} in {lossy:?}");
    }
    let clean = edges
        .lines()
        .find(|l| l.contains("pub -> sub1"))
        .expect("the clean edge");
    assert!(
        clean.contains("0 of 600,000") && !clean.contains("middle"),
        "{clean}"
    );
    let nodes = section(&text, "Nodes");
    for name in ["pub ", "sub1 ", "sub2 "] {
        assert!(nodes.contains(name), "no node {name:?} in:\n{nodes}");
    }
    assert!(nodes.contains("source") && nodes.contains("sink") && nodes.contains("process"));
    for l in text.lines() {
        assert!(l.chars().count() <= 120, "line over 120 characters: {l}");
    }

    let md = render(&run, Format::Markdown);
    assert!(md.contains("\n## Edges\n") && md.contains("\n## Nodes\n"));
    let row = md
        .lines()
        .find(|l| l.starts_with("| throughput/ptmp/tcp/64 | pub -\\> sub2"))
        .expect("the lossy edge's row");
    assert!(row.contains("250 of 600,000 (middle 250)"), "{row}");
    assert!(md.contains("| sub1 ") && md.contains("| sub2 "));

    let html = render(&run, Format::Html);
    assert!(html.contains("Topology of <code>throughput/ptmp/tcp/64</code>"));
    for needle in [
        ">pub<",
        ">sub1<",
        ">sub2<",
        ">lost 250 of 600,000<",
        ">(middle 250)<",
    ] {
        assert!(html.contains(needle), "no {needle:?} in the topology graph");
    }
    assert!(
        html.contains("<td class=\"l\">pub -&gt; sub2</td>"),
        "edge table, escaped"
    );
    assert!(html.contains("<td class=\"n warn\">250 of 600,000 (middle 250)</td>"));
    // The graph sits under its group's table, before the edge table.
    let table = html
        .find("<h3>ptmp over tcp: throughput")
        .expect("the group's table");
    let graph = html.find("Topology of").expect("the graph");
    let edge_table = html.find("<h2>Edges</h2>").expect("the edge table");
    assert!(table < graph && graph < edge_table);
}

#[test]
fn cases_without_nodes_or_edges_add_nothing() {
    let mut run = sample_run();
    let ptmp = run.cases.last_mut().expect("the topology case");
    ptmp.nodes.clear();
    ptmp.edges.clear();
    let text = render(&run, Format::Table);
    assert!(!text.contains("\nEdges\n") && !text.contains("\nNodes\n"));
    let md = render(&run, Format::Markdown);
    assert!(!md.contains("## Edges") && !md.contains("## Nodes"));
    let html = render(&run, Format::Html);
    assert!(!html.contains("Topology of") && !html.contains("<h2>Edges</h2>"));

    // One clean edge and two nodes: nothing worth listing either.
    let mut run = sample_run();
    let ptmp = run.cases.last_mut().expect("the topology case");
    ptmp.edges.truncate(1);
    ptmp.nodes.truncate(2);
    let text = render(&run, Format::Table);
    assert!(!text.contains("\nEdges\n") && !text.contains("\nNodes\n"));
    // The graph is still drawn.
    assert!(render(&run, Format::Html).contains("Topology of"));
}

#[test]
fn cut_short_nodes_are_listed_with_their_reasons() {
    let mut run = sample_run();
    let ptmp = run.cases.last_mut().expect("the topology case");
    ptmp.nodes.truncate(2);
    ptmp.edges.truncate(1);
    let why = "sub1: idle: nothing for 10.0 s after 700 of 3000 messages";
    ptmp.nodes[1].cut_short = vec![why.to_string(), why.to_string()];
    ptmp.nodes[1].replicas = 4;
    let text = render(&run, Format::Table);
    let nodes = section(&text, "Nodes");
    assert!(nodes.contains("sub1 x4"), "{nodes}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&format!("- throughput/ptmp/tcp/64: {why} (2 times)")),
        "{text}"
    );
    let md = render(&run, Format::Markdown);
    assert!(
        md.contains(&format!("- `throughput/ptmp/tcp/64`: {why} (2 times)")),
        "{md}"
    );
    let html = render(&run, Format::Html);
    assert!(html.contains("sink ×4"), "replicas in the graph");
}

#[test]
fn wide_topology_tables_keep_within_120_columns() {
    let mut run = sample_run();
    let ptmp = run.cases.last_mut().expect("the topology case");
    ptmp.id = "throughput/a-rather-long-topology-name/tcp/65536/100000".to_string();
    let text = render(&run, Format::Table);
    for l in text.lines() {
        assert!(l.chars().count() <= 120, "line over 120 characters: {l}");
    }
    // The case id moves to a line of its own above its rows.
    let edges = section(&text, "Edges");
    assert!(
        edges.contains(
            "\n  throughput/a-rather-long-topology-name/tcp/65536/100000\n    pub -> sub1"
        ),
        "{edges}"
    );
}
