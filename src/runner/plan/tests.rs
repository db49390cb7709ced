//! Tests of the plan: cases from built-in shapes, workload files and sweeps.

use super::*;

#[test]
fn default_suite_covers_every_pattern_and_transport() {
    let p = from_selection(Scope::Default, &Selection::default());
    assert_eq!(p.len(), 7 * 3 * 2);
    assert!(p.iter().all(|c| c.repetitions == 3));
    let full = from_selection(Scope::Full, &Selection::default());
    assert_eq!(full.len(), 7 * 3 * 16);
    assert_eq!(full.iter().map(|c| c.size).min(), Some(2));
    assert_eq!(full.iter().map(|c| c.size).max(), Some(65_536));
}

#[test]
fn security_runs_each_case_per_mechanism_beside_null_and_skips_inproc() {
    let sel = Selection {
        patterns: Some(vec!["reqrep"]),
        sizes: Some(vec![64]),
        security: Some(vec![Mechanism::Null, Mechanism::Curve]),
        ..Default::default()
    };
    let p = from_selection(Scope::Quick, &sel);
    let ids: Vec<String> = p.iter().map(|c| c.id()).collect();
    assert_eq!(
        ids,
        [
            "latency/reqrep/inproc/64",
            "latency/reqrep/ipc/64",
            "latency/reqrep[curve]/ipc/64",
            "latency/reqrep/tcp/64",
            "latency/reqrep[curve]/tcp/64"
        ]
    );
    let curve = &p[2];
    assert!(curve.topology.nodes.iter().all(|n| n
        .all_sockets()
        .iter()
        .all(|s| s.options.security == Some(Mechanism::Curve))));
    assert!(p[1]
        .topology
        .nodes
        .iter()
        .all(|n| n.all_sockets().iter().all(|s| s.options.security.is_none())));
}

#[test]
fn toml_sweep_is_cartesian() {
    let text = r#"
repetitions = 2
[[sweep]]
patterns = ["pushpull", "pubsub"]
transports = ["ipc", "tcp"]
sizes = [64, "1KiB"]
rates = [1000, 5000]
count = "10k"

[[case]]
pattern = "reqrep"
transport = "inproc"
size = 32
"#;
    let p = from_file("w.toml", text).unwrap();
    assert_eq!(p.len(), 1 + 2 * 2 * 2 * 2);
    assert_eq!(p[0].pattern(), "reqrep");
    assert!(p[1..]
        .iter()
        .all(|c| c.count == 10_000 && c.repetitions == 2 && c.rate.is_some()));
    assert!(p.iter().any(|c| c.size == 1024));
}

#[test]
fn json_workloads_too() {
    let p = from_file(
        "w.json",
        r#"{"case": [{"pattern": "pair-lat", "transport": "tcp", "size": 100}]}"#,
    )
    .unwrap();
    assert_eq!(p[0].pattern(), "pair-lat");
}

#[test]
fn bad_files_name_the_field() {
    let cases = [
            ("[[case]]\npattern = \"nope\"\ntransport = \"tcp\"\nsize = 64\n", "case[0].pattern"),
            ("[[case]]\npattern = \"reqrep\"\ntransport = \"udp\"\nsize = 64\n", "case[0].transport"),
            ("[[case]]\npattern = \"reqrep\"\ntransport = \"tcp\"\nsize = -64\n", "case[0].size"),
            ("[[case]]\npattern = \"reqrep\"\ntransport = \"tcp\"\nsize = 64\ncolour = \"red\"\n", "line"),
            ("[[sweep]]\npatterns = [\"pushpull\"]\ntransports = [\"tcp\", \"bogus\"]\nsizes = [64]\n", "sweep[0].transports[1]"),
            ("", "is empty"),
            ("repetitions = 2\n", "lists no"),
        ];
    for (text, want) in cases {
        let e = from_file("bad.toml", text).unwrap_err().to_string();
        assert!(e.contains("bad.toml"), "{e}");
        assert!(e.contains(want), "want '{want}' in: {e}");
    }
    let e = from_file("bad.json", "{\"case\": [ {\"pattern\": 1} ]}")
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.json") && e.contains("line 1"), "{e}");
}

/// T15: a sweep of 100 sizes x 100 high-water marks planned silently for a minute
/// (every new case's id compared with every earlier one's). Planned with a set, its
/// 10,000 cases take well under a second; the bound here is 30 times that, so only the
/// quadratic planning fails it.
#[test]
fn a_sweep_of_ten_thousand_variants_is_planned_at_once() {
    let sizes: Vec<String> = (0..100).map(|i| (64 + i).to_string()).collect();
    let hwms: Vec<String> = (0..100).map(|i| (100 + i).to_string()).collect();
    let text = format!(
        r#"{{"sweep": {{"size": [{}], "sink.socket.rcvhwm": [{}]}},
            "nodes": [
              {{"name": "src", "role": "source", "socket": {{"type": "PUSH", "bind": ["auto"]}}}},
              {{"name": "sink", "role": "sink", "socket": {{"type": "PULL", "connect": ["src"]}}}}]}}"#,
        sizes.join(","),
        hwms.join(",")
    );
    let t0 = std::time::Instant::now();
    let plan = from_file("sweep.json", &text).unwrap();
    assert_eq!(plan.len(), 10_000);
    let took = t0.elapsed();
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
}
