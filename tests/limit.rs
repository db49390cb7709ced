//! `run --find max-rate`: the highest offered rate a case holds under a service level. A
//! sink that works 500 us on every message takes at most 2,000 msg/s, so the limit found
//! (held twice, delivered at least 95% of the offered rate, nothing lost) lies below that
//! and above a quarter of it; the steps are printed as they run and recorded as cases.

mod common;
use common::*;

const T: u64 = 300;

const SLOW: &str = r#"name = "slow-pushpull"
params = { size = 64, repetitions = 1, warmup = 0 }
[[nodes]]
name = "src"
role = "source"
socket = { type = "PUSH", bind = ["auto"] }
[[nodes]]
name = "slow"
role = "slow_sink"
work_us = 500
socket = { type = "PULL", connect = ["src"] }
"#;

#[test]
fn the_limit_of_a_slow_sink_is_found_below_what_it_can_take() {
    with_watchdog(T, || {
        let dir = std::env::temp_dir().join(format!("zmqperf-limit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("slow.toml");
        std::fs::write(&file, SLOW).unwrap();
        let db = dir.join("h.db").display().to_string();
        let o = run(
            zp(&[
                "run",
                &file.display().to_string(),
                "--transports",
                "tcp",
                "--find",
                "max-rate",
                "--rate",
                "250",
                "--db",
                &db,
            ]),
            T - 30,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let last = o.stdout.lines().last().unwrap_or("");
        let held: f64 = last
            .split("max rate ")
            .nth(1)
            .and_then(|r| r.split(" msg/s").next())
            .map(|r| r.replace(',', "").parse().unwrap())
            .unwrap_or_else(|| panic!("no limit found:\n{}", o.stdout));
        assert!(last.contains("held twice"), "{last}");
        assert!(
            (500.0..=2_000.0).contains(&held),
            "{held} msg/s:\n{}",
            o.stdout
        );
        let steps: Vec<&str> = o.stdout.lines().filter(|l| l.contains(" step ")).collect();
        assert!(steps.len() >= 4, "{}", o.stdout);
        assert!(
            steps.iter().any(|l| l.contains("broke  delivered")),
            "{}",
            o.stdout
        );
        // Every step is a case of the recorded run, at its rate.
        let v = envelope(&run(zp(&["show", "last", "--format", "json", "--db", &db]), 60).stdout);
        let cases = v["results"]["cases"].as_array().unwrap();
        assert_eq!(cases.len(), steps.len(), "{}", o.stdout);
        assert!(cases.iter().all(|c| c["rate"].as_f64().is_some()), "{v}");
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn a_search_without_a_rate_to_offer_or_with_a_bad_service_level_is_refused() {
    with_watchdog(60, || {
        let o = run(
            zp(&[
                "run",
                "--patterns",
                "reqrep",
                "--find",
                "max-rate",
                "--no-history",
            ]),
            30,
        );
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr.contains("search a throughput pattern"),
            "{}",
            o.stderr
        );
        let o = run(
            zp(&[
                "run",
                "--patterns",
                "pushpull",
                "--find",
                "max-rate",
                "--slo",
                "p99<5ms",
                "--no-history",
            ]),
            30,
        );
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(
            o.stderr.contains("use loss=N, p99<=DURATION"),
            "{}",
            o.stderr
        );
    });
}
