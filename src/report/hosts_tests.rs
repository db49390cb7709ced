//! Tests of the host columns of every report: a run across hosts shows each node's host,
//! each host's machine and the host-pair table; a run on one host shows none of them.

use super::{fixture, render, Format};
use crate::model::RunResult;

fn across() -> RunResult {
    fixture::host_pairs_run()
}

#[test]
fn text_shows_hosts_host_pairs_and_node_hosts() {
    let run = across();
    let text = render(&run, Format::Table);
    assert!(text.contains("host b    ns-b, Intel(R) Xeon(R)"), "{text}");
    let pairs = text
        .find("Host pairs\n----------")
        .expect("host pairs section");
    let first_grid = text.find("latency at 64 B over tcp").expect("a grid");
    assert!(pairs < first_grid, "the host pairs lead the results");
    assert!(text.contains(
        "  source  destination  link                                    pattern             req/s  latency (us)     p50 (us)\n  \
         a       a            same host                               reqrep[a->a]  10,054 ±520    49.73 ±2.5   49.09 ±2.4\n  \
         a       b            10.0.0.2 on veth-b mtu 1500 10000 Mb/s  reqrep[a->b]   5,489 ±260    91.10 ±4.2   90.50 ±4.4\n"
    ), "{text}");
    // The nodes with their hosts: the cases ran on two hosts each.
    let nodes =
        &text[text.find("Nodes\n-----").expect("node table")..text.find("Resources").unwrap()];
    // Each node with its host, its share of a core and its memory resident/virtual
    // (whether the case id is in front or heads its rows depends on the width).
    assert!(
        nodes.contains("node  host  role  placement  %CPU"),
        "{nodes}"
    );
    assert!(
        nodes.contains("ping  a     ping  process      32         9.0/152"),
        "{nodes}"
    );
    assert!(
        nodes.contains("echo  b     echo  process      30"),
        "{nodes}"
    );
    // And the nodes' shares per host, with the host's cores.
    assert!(
        nodes.contains(
            "- latency/reqrep[a->c]/tcp/64: a 32% of one core (2 cores), c 30% of one core (4 cores)"
        ),
        "{nodes}"
    );
    // A case on one host has nothing to say about its nodes here.
    assert!(!nodes.contains("reqrep[a->a]"), "{nodes}");
}

#[test]
fn markdown_and_html_show_them_too() {
    let run = across();
    let md = render(&run, Format::Markdown);
    assert!(md.contains("### Host pairs"), "{md}");
    assert!(md.contains("| source | destination | link "), "{md}");
    assert!(md.contains("- **host c**: ns-c, AMD EPYC 7763"), "{md}");
    assert!(md.contains("| case "), "{md}");
    assert!(md.contains("| node | host | role |"), "{md}");
    let html = render(&run, Format::Html);
    assert!(html.contains("<h3>Host pairs</h3>"), "{html}");
    assert!(html.contains("<dt>host a</dt><dd>ns-a, "), "{html}");
    assert!(html.contains("<th class=\"l\">host</th>"), "{html}");
    assert!(
        html.contains("<td class=\"l\">10.0.0.2 on veth-b mtu 1500 10000 Mb/s</td>"),
        "{html}"
    );
}

#[test]
fn csv_says_where_each_case_ran() {
    let run = across();
    let csv = render(&run, Format::Csv);
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).expect(n);
    let (hosts, node_hosts) = (col("hosts"), col("node_hosts"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows[0][hosts], "a");
    assert_eq!(rows[0][node_hosts], "ping=a;echo=a");
    assert_eq!(rows[1][hosts], "a->b");
    assert_eq!(rows[1][node_hosts], "ping=a;echo=b");
    // A run on one host: its host name; nodes of old runs take the run's host.
    let hal = &fixture::machine_runs()[0];
    let csv = render(hal, Format::Csv);
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[hosts], "hal");
    assert_eq!(row[node_hosts], "src=hal;sink=hal");
    // A case without nodes.
    let csv = render(&fixture::sample_run(), Format::Csv);
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(row[hosts], "bench-01");
    assert_eq!(row[node_hosts], "");
}

#[test]
fn a_run_on_one_host_shows_no_host_column() {
    for run in [fixture::sample_run(), fixture::machine_runs().remove(1)] {
        for f in [Format::Table, Format::Markdown, Format::Html] {
            let out = render(&run, f);
            assert!(!out.contains("Host pairs"), "{f}");
            assert!(!out.contains("| host |"), "{f}");
            assert!(!out.contains("<th class=\"l\">host</th>"), "{f}");
            assert!(!out.contains("node  host"), "{f}");
        }
    }
}
