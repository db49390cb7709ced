//! Tests of `compare` across machines: what differs between hosts, and `--by-host`'s columns.

use super::*;

#[test]
fn network_differences_are_noted_only_when_both_runs_record_one() {
    let nic = |name: &str, mtu: u32, loopback: bool| crate::model::NetworkInterface {
        address: "10.0.0.5".into(),
        local_address: "10.0.0.2".into(),
        interface: name.into(),
        loopback,
        mtu: Some(mtu),
        speed_mbps: None,
        driver: None,
    };
    let mut a = baseline();
    let mut b = baseline();
    a.environment.network = vec![nic("eth0", 1500, false)];
    // B ran on ipc alone (or before the field existed): nothing to compare.
    assert!(compare(&a, &b, None).environment_notes.is_empty());
    b.environment.network = vec![nic("eth0", 9000, false)];
    assert_eq!(
        compare(&a, &b, None).environment_notes,
        ["network differs: eth0 mtu 1500 for 10.0.0.5 (from 10.0.0.2) (A), eth0 mtu 9000 for 10.0.0.5 (from 10.0.0.2) (B)"]
    );
    b.environment.network = a.environment.network.clone();
    assert!(compare(&a, &b, None).environment_notes.is_empty());
}

#[test]
fn runs_from_two_machines_name_what_differs() {
    let runs = crate::report::fixture::machine_runs();
    let (hal, haiku) = (&runs[0], &runs[1]);
    let c = compare(hal, haiku, None);
    assert_eq!(c.cases_compared, 5);
    assert_eq!(
        c.environment_notes,
        [
            "host differs: hal (A), haiku (B)",
            "CPU differs: Intel(R) Core(TM) i5-2520M CPU @ 2.50GHz (A), Intel(R) Core(TM) i7-4770K CPU @ 3.50GHz (B)",
            "cores differs: 4 (A), 8 (B)",
        ]
    );
    let text = format_comparison(&c);
    let table = text.find("case ").expect("the table");
    for note in &c.environment_notes {
        let at = text.find(&format!("note: {note}")).expect(note);
        assert!(at < table, "the differences come before the table");
    }
}

#[test]
fn runs_across_hosts_name_each_hosts_differences_and_the_cases_moved() {
    let a = crate::report::fixture::host_pairs_run();
    let mut b = a.clone();
    b.run_id = "B".into();
    // Host c is another machine in B, with jumbo frames; host b is gone, and its cases
    // ran on a new host d.
    let c_host = &mut b.environment.hosts[2];
    c_host.hostname = "ns-c2".into();
    c_host.kernel = "6.12.0".into();
    c_host.nics[1].mtu = Some(9000);
    b.environment.hosts[1].name = "d".into();
    for case in &mut b.cases {
        for n in &mut case.nodes {
            if n.host == "b" {
                n.host = "d".into();
            }
        }
    }
    let c = compare(&a, &b, None);
    let notes = &c.environment_notes;
    assert!(
        notes.contains(&"hosts differ: a, b, c (A), a, c, d (B)".to_string()),
        "{notes:?}"
    );
    assert!(
        notes.contains(&"host c: machine differs: ns-c (A), ns-c2 (B)".to_string()),
        "{notes:?}"
    );
    assert!(
        notes.contains(&"host c: kernel differs: 6.1.0-27-amd64 (A), 6.12.0 (B)".to_string()),
        "{notes:?}"
    );
    assert!(
        notes.contains(
            &"host c: NIC differs: veth-c mtu 1500 10000 Mb/s (A), veth-c mtu 9000 10000 Mb/s (B)"
                .to_string()
        ),
        "{notes:?}"
    );
    assert!(
        notes.contains(
            &"hosts of latency/reqrep[a->b]/tcp/64 differ: a->b (A), a->d (B)".to_string()
        ),
        "{notes:?}"
    );
    assert!(
        notes.contains(&"hosts of latency/reqrep[b->b]/tcp/64 differ: b (A), d (B)".to_string()),
        "{notes:?}"
    );
    // Host a is the same machine in both: nothing said of it.
    assert!(!notes.iter().any(|n| n.starts_with("host a")), "{notes:?}");
    // A run on one host against one across hosts: the hosts differ.
    let one = &crate::report::fixture::machine_runs()[1];
    let c = compare(one, &a, None);
    assert!(
        c.environment_notes
            .contains(&"hosts differ: haiku (A), a, b, c (B)".to_string()),
        "{:?}",
        c.environment_notes
    );
}

#[test]
fn every_case_moved_is_said_once() {
    let a = crate::report::fixture::host_pairs_run();
    let mut b = a.clone();
    for case in &mut b.cases {
        case.nodes[0].host = "z".into();
        case.nodes[1].host = "z".into();
    }
    let notes = compare(&a, &b, None).environment_notes;
    assert!(!notes.iter().any(|n| n.contains("every case")), "{notes:?}");
    // The same pair everywhere: one line for every case.
    let mut a1 = a.clone();
    a1.cases.retain(|c| c.host_path("") == "a->b");
    a1.cases.push(a1.cases[0].clone());
    a1.cases[1].id = "x".into();
    let mut b1 = a1.clone();
    for case in &mut b1.cases {
        case.nodes[1].host = "c".into();
    }
    let notes = compare(&a1, &b1, None).environment_notes;
    assert_eq!(notes, ["hosts of every case differ: a->b (A), a->c (B)"]);
}

#[test]
fn machine_columns() {
    let runs = crate::report::fixture::machine_runs();
    let (cols, tables) = by_host(&runs);
    let labels: Vec<&str> = cols.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(labels, ["hal", "haiku", "yobox"]);
    assert_eq!(cols[0].cpu, "Intel Core i5-2520M");
    assert_eq!(tables.len(), 1);
    let t = &tables[0];
    assert_eq!(t.title, "throughput at 64 B, closed loop: delivered msg/s");
    let rows: Vec<(&str, &str)> = t
        .rows
        .iter()
        .map(|(p, tr, _)| (p.as_str(), tr.as_str()))
        .collect();
    assert_eq!(
        rows,
        [
            ("pubsub", "inproc"),
            ("pubsub", "ipc"),
            ("pubsub", "tcp"),
            ("pushpull", "inproc"),
            ("pushpull", "tcp")
        ]
    );
    // Each cell is that machine's median with its interval.
    let want = crate::report::estimate::estimate_whole(
        runs[1].cases[2].summary.msgs_per_sec.as_ref().unwrap(),
    );
    assert_eq!(t.rows[2].2[1], want);
    let text = format_by_host(&runs);
    let expected_head = "\
  pattern   transport                  hal                haiku               yobox
                       Intel Core i5-2520M  Intel Core i7-4770K  Intel Core i5-7500
";
    assert!(text.contains(expected_head), "{text}");
    assert!(text.contains("  hal: run 20261123-110000-hal; Intel(R) Core(TM) i5-2520M CPU @ 2.50GHz, 4 cores, kernel 6.1.0-27-amd64, libzmq 4.3.5"), "{text}");
}

#[test]
fn machine_columns_of_a_run_across_hosts_and_of_repeated_hosts() {
    // One run across hosts: a column per host pair.
    let run = crate::report::fixture::host_pairs_run();
    let (cols, tables) = by_host(std::slice::from_ref(&run));
    assert_eq!(cols.len(), 9);
    assert_eq!(cols[1].label, "a->b");
    assert_eq!(cols[1].cpu, "Intel Xeon Gold 6248R");
    assert_eq!(
        cols[2].cpu,
        "Intel Xeon Gold 6248R -> AMD EPYC 7763 64-Core"
    );
    assert_eq!(tables.len(), 1);
    // Each pattern (reqrep[a->b], ...) has a value only in its own column.
    let row = &tables[0].rows[1];
    assert_eq!(row.0, "reqrep[a->b]");
    assert!(row.2[1] != "-");
    assert_eq!(row.2.iter().filter(|c| *c == "-").count(), 8);
    // Two runs on the same machine: the run says which column is which; a failed case.
    let mut runs = crate::report::fixture::machine_runs();
    let mut again = runs[1].clone();
    again.run_id = "R2".into();
    again.cases[0].summary = Default::default();
    again.cases[0].error = Some("peer stopped".into());
    runs.push(again);
    let (cols, tables) = by_host(&runs);
    assert_eq!(cols[1].label, "haiku (20261123-110001-haiku)");
    assert_eq!(cols[3].label, "haiku (R2)");
    assert_eq!(tables[0].rows[0].2[3], "failed");
    assert!(format_by_host(&[]).contains("no case"));
}

#[test]
fn cpu_names_are_shortened() {
    assert_eq!(
        short_cpu("Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz"),
        "Intel Xeon Gold 6248R"
    );
    assert_eq!(
        short_cpu("AMD EPYC 7763 64-Core Processor"),
        "AMD EPYC 7763 64-Core"
    );
    assert_eq!(short_cpu(""), "-");
}
