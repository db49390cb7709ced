//! `run --interval 1s --duration`: a line per interval as it closes, the intervals stored
//! with the case (every message counted in exactly one of them), and the drift verdict: a
//! planted stall (the case's processes stopped for 2 s mid-run) is out of line with its
//! time; a clean run has no interval starved and nothing lost, and its verdict is read.
//!
//! Whether a clean run's p99 trends is up to the machine's other load (a run that starts
//! beside a busy neighbour and ends alone "falls"), which no test can hold still: the trend
//! rule is tested on fixed series in `stats/drift.rs`, and here only that it is read. The
//! tests of this file run one at a time, so they are not each other's neighbour.

mod common;
use common::*;
use std::process::Command;
use std::time::Duration;

const T: u64 = 180;

/// The drift verdict of series `s` was read: enough intervals, a trend figure with its
/// interval, and a sentence that opens with its kind.
fn assert_verdict_read(s: &serde_json::Value) {
    let kind = s["drift"]["kind"].as_str().unwrap();
    let said = s["drift"]["said"].as_str().unwrap();
    let head = match kind {
        "steady" => "steady:",
        "rising" => "drifts: latency rises",
        "falling" => "drifts: latency falls",
        "irregular" => "irregular:",
        other => panic!("verdict {other}: {said}"),
    };
    assert!(said.starts_with(head), "{kind}: {said}");
    let change = s["drift"]["p99_change_pct"]
        .as_array()
        .expect("a trend figure");
    assert_eq!(change.len(), 3, "{s}");
    let f: Vec<f64> = change.iter().map(|v| v.as_f64().unwrap()).collect();
    assert!(f[1] <= f[0] && f[0] <= f[2], "{f:?}");
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: the comm may hold spaces, so read after its ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(p);
        }
    }
    out
}

fn signal(pids: &[u32], sig: &str) {
    for p in pids {
        let _ = Command::new("kill").args([sig, &p.to_string()]).status();
    }
}

/// Continues the stopped processes whatever happens to the test.
struct Resume(Vec<u32>);

impl Drop for Resume {
    fn drop(&mut self) {
        signal(&self.0, "-CONT");
    }
}

fn interval_run(db: &str) -> Command {
    zp(&[
        "run",
        "--patterns",
        "pushpull",
        "--transports",
        "tcp",
        "--sizes",
        "64",
        "--rate",
        "2000",
        "--duration",
        "10s",
        "--interval",
        "1s",
        "--repetitions",
        "1",
        "--db",
        db,
    ])
}

/// The messages of a series' records, all together.
fn messages_in(records: &[serde_json::Value]) -> u64 {
    records
        .iter()
        .map(|r| r["messages"].as_u64().unwrap())
        .sum()
}

/// The one series of the last run in `db`, from its JSON.
fn series(db: &str) -> serde_json::Value {
    let v = envelope(&run(zp(&["show", "last", "--format", "json", "--db", db]), 60).stdout);
    let s = &v["results"]["cases"][0]["intervals"];
    assert_eq!(s.as_array().map(Vec::len), Some(1), "{v}");
    s[0].clone()
}

#[test]
fn a_clean_run_prints_and_stores_its_intervals_and_its_verdict() {
    let _machine = alone();
    with_watchdog(T, || {
        let dir = std::env::temp_dir().join(format!("zmqperf-iv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("h.db").display().to_string();
        let o = run(interval_run(&db), T - 30);
        assert_eq!(o.code, Some(0), "{o:?}");
        // A line per interval as it closed: 10 whole ones (and a partial last one, if any).
        let lines: Vec<&str> = o
            .stderr
            .lines()
            .filter(|l| l.starts_with("[sink]"))
            .collect();
        assert!((10..=11).contains(&lines.len()), "{}", o.stderr);
        assert!(
            lines[0].contains("0.0-1.0 s") && lines[0].contains("msg/s"),
            "{}",
            lines[0]
        );
        let s = series(&db);
        let records = s["records"].as_array().unwrap();
        assert_eq!(records.len(), lines.len(), "{s}");
        // Every message in exactly one interval.
        let total = messages_in(records);
        assert_eq!(total, 20_000, "{s}");
        assert!(records.iter().all(|r| r["lost"] == 0), "{s}");
        assert!(records[0]["latency"]["p99_ns"].as_u64().unwrap() > 0, "{s}");
        assert!(records[0]["histogram"]["count"].as_u64().is_some(), "{s}");
        // No interval starved (the sender is open loop), the verdict read.
        let said = s["drift"]["said"].as_str().unwrap();
        assert!(!said.contains(" delivered "), "{said}");
        assert_verdict_read(&s);
        assert!(o.stdout.contains("Over time (--interval"), "{}", o.stdout);
        // The HTML draws each series over time, its verdict as the caption.
        let html = run(zp(&["report", "last", "--format", "html", "--db", &db]), 60).stdout;
        assert!(html.contains("<h2>Over time</h2>"), "{html}");
        assert!(
            html.contains("Latency per interval: sink"),
            "no latency chart"
        );
        assert!(
            html.contains("Delivered per interval: sink"),
            "no rate chart"
        );
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn a_stall_planted_mid_run_shows_in_the_intervals_and_the_verdict() {
    let _machine = alone();
    with_watchdog(T, || {
        let dir = std::env::temp_dir().join(format!("zmqperf-ivs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("h.db").display().to_string();
        let p = Proc::spawn(interval_run(&db), T - 30);
        p.wait_stderr("[sink]   2.0-3.0 s");
        // The source and the sink (over tcp each in a process of its own) stop for 2 s.
        let nodes = children(p.pid());
        assert!(!nodes.is_empty(), "no node processes");
        let resume = Resume(nodes.clone());
        signal(&nodes, "-STOP");
        std::thread::sleep(Duration::from_secs(2));
        drop(resume);
        let o = p.finish();
        assert_eq!(o.code, Some(0), "{o:?}");
        let s = series(&db);
        let records = s["records"].as_array().unwrap();
        let total = messages_in(records);
        assert_eq!(total, 20_000, "{s}");
        // At least one whole interval delivered nothing, and the verdict names it.
        assert!(
            records[..records.len() - 1]
                .iter()
                .any(|r| r["messages"] == 0),
            "{s}"
        );
        assert_eq!(s["drift"]["kind"], "irregular", "{s}");
        let said = s["drift"]["said"].as_str().unwrap();
        assert!(
            said.contains("out of line") && said.contains("delivered 0 msg/s"),
            "{said}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// A fan-out of 2 processes x 20 subscribers, a message a second for `secs` seconds.
fn fanout_ticks(db: &str, secs: u32) -> Command {
    zp(&[
        "fanout",
        "-c",
        "2",
        "-s",
        "20",
        "-t",
        "1s",
        "--duration",
        &format!("{secs}s"),
        "--db",
        db,
    ])
}

/// The lines of whole ticks a fan-out printed.
fn tick_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("[subscribers] tick"))
        .collect()
}

#[test]
fn a_30_second_fanout_prints_and_stores_a_record_per_tick_and_its_verdict() {
    let _machine = alone();
    with_watchdog(T, || {
        let dir = std::env::temp_dir().join(format!("zmqperf-ivf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("h.db").display().to_string();
        let o = run(fanout_ticks(&db, 30), T - 30);
        assert_eq!(o.code, Some(0), "{o:?}");
        let lines = tick_lines(&o.stderr);
        assert_eq!(lines.len(), 30, "{}", o.stderr);
        // Seed 002's figures per tick, and the run so far ("current").
        for want in [
            "40 of 40",
            "min ",
            "max ",
            "mean ",
            "hmean ",
            "so far: mean",
        ] {
            assert!(lines[0].contains(want), "{want}: {}", lines[0]);
        }
        assert!(
            lines[29].starts_with("[subscribers] tick 30 "),
            "{}",
            lines[29]
        );
        let s = series(&db);
        let records = s["records"].as_array().unwrap();
        assert_eq!(records.len(), 30, "{s}");
        assert_eq!(s["interval_ms"], 1000.0, "{s}");
        let total = messages_in(records);
        assert_eq!(total, 30 * 40, "{s}");
        assert!(records.iter().all(|r| r["lost"] == 0), "{s}");
        assert!(
            records
                .iter()
                .all(|r| r["latency"]["max_ns"].as_u64().unwrap() < 500_000_000),
            "{s}"
        );
        // Nothing lost, the verdict read.
        let said = s["drift"]["said"].as_str().unwrap();
        assert!(!said.contains("lost"), "{said}");
        assert_verdict_read(&s);
        assert!(
            o.stdout.contains("per tick (30 records of 1 s)"),
            "{}",
            o.stdout
        );
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn a_subscriber_process_stopped_for_2_s_shows_in_its_ticks_and_the_verdict() {
    let _machine = alone();
    with_watchdog(T, || {
        let dir = std::env::temp_dir().join(format!("zmqperf-ivfs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("h.db").display().to_string();
        let p = Proc::spawn(fanout_ticks(&db, 12), T - 30);
        p.wait_stderr("[subscribers] tick 4 ");
        // One of the two subscriber processes (the publisher is a thread of the runner).
        let nodes = children(p.pid());
        assert_eq!(nodes.len(), 2, "subscriber processes: {nodes:?}");
        let resume = Resume(vec![nodes[1]]);
        signal(&nodes[1..], "-STOP");
        std::thread::sleep(Duration::from_secs(2));
        drop(resume);
        let o = p.finish();
        assert_eq!(o.code, Some(0), "{o:?}");
        assert_eq!(tick_lines(&o.stderr).len(), 12, "{}", o.stderr);
        let s = series(&db);
        let records = s["records"].as_array().unwrap();
        // Nothing lost: the stopped process's messages waited in its queues.
        let total = messages_in(records);
        assert_eq!(total, 12 * 40, "{s}");
        // The ticks sent while it was stopped arrived a second or more late.
        let late = records
            .iter()
            .filter(|r| r["latency"]["max_ns"].as_u64().unwrap() >= 1_000_000_000)
            .count();
        assert!((1..=3).contains(&late), "{s}");
        assert_eq!(s["drift"]["kind"], "irregular", "{s}");
        let said = s["drift"]["said"].as_str().unwrap();
        assert!(
            said.contains("out of line") && said.contains("the median"),
            "{said}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// `local_thr` taking 2,000,000 messages of 64 B with `--interval every --json`, from the
/// sender `sender` makes for its endpoint; both succeeded.
fn local_thr_against(every: &str, sender: impl FnOnce(&str) -> Command) -> Output {
    let l = Proc::spawn(
        zp(&[
            "local_thr",
            "tcp://127.0.0.1:*",
            "64",
            "2000000",
            "--interval",
            every,
            "--json",
        ]),
        T - 30,
    );
    let ep = l.bound_endpoint();
    let s = run(sender(&ep), T - 30);
    assert_eq!(s.code, Some(0), "{s:?}");
    let o = l.finish();
    assert_eq!(o.code, Some(0), "{o:?}");
    o
}

#[test]
fn local_thr_prints_its_intervals_on_stderr_and_puts_them_in_its_json() {
    let _machine = alone();
    with_watchdog(T, || {
        let o = local_thr_against("200ms", |ep| zp(&["remote_thr", ep, "64", "2000000"]));
        let lines: Vec<&str> = o
            .stderr
            .lines()
            .filter(|l| l.starts_with("[local_thr]"))
            .collect();
        let v = envelope(&o.stdout);
        let iv = &v["results"]["intervals"];
        let records = iv["records"].as_array().unwrap();
        assert!(!records.is_empty(), "{iv}");
        assert_eq!(records.len(), lines.len(), "{}", o.stderr);
        assert!(
            lines[0].contains("0.0-0.2 s") && lines[0].contains("msg/s"),
            "{}",
            lines[0]
        );
        // Every message in exactly one interval, none lost.
        let total = messages_in(records);
        assert_eq!(total, 2_000_000, "{iv}");
        assert!(records.iter().all(|r| r["lost"] == 0), "{iv}");
        assert_eq!(iv["interval_ms"], 200.0, "{iv}");
        assert!(iv["drift"]["said"].as_str().is_some(), "{iv}");
    });
}

#[test]
fn remote_lat_and_a_latency_case_take_intervals_of_round_trips() {
    let _machine = alone();
    with_watchdog(T, || {
        let l = Proc::spawn(
            zp(&["local_lat", "tcp://127.0.0.1:*", "64", "8000"]),
            T - 30,
        );
        let ep = l.bound_endpoint();
        let o = run(
            zp(&[
                "remote_lat",
                &ep,
                "64",
                "8000",
                "--interval",
                "100ms",
                "--json",
            ]),
            T - 30,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        assert_eq!(l.finish().code, Some(0));
        let lines: Vec<&str> = o
            .stderr
            .lines()
            .filter(|l| l.starts_with("[remote_lat]"))
            .collect();
        assert!(
            lines[0].contains("0.0-0.1 s") && lines[0].contains("round trips/s"),
            "{}",
            o.stderr
        );
        assert!(o.stderr.contains("zmqperf: over time: "), "{}", o.stderr);
        let v = envelope(&o.stdout);
        let iv = &v["results"]["intervals"];
        let records = iv["records"].as_array().unwrap();
        assert_eq!(records.len(), lines.len(), "{}", o.stderr);
        // Every round trip in exactly one interval, each timed.
        assert_eq!(messages_in(records), 8000, "{iv}");
        assert!(records.iter().all(|r| r["round_trips"] == true), "{iv}");
        assert!(
            records
                .iter()
                .all(|r| r["latency"]["p50_ns"].as_u64().unwrap() > 0),
            "{iv}"
        );
        // `run` on a latency case: the client's series, of round trips.
        let dir = std::env::temp_dir().join(format!("zmqperf-ivl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("h.db").display().to_string();
        let o = run(
            zp(&[
                "run",
                "--patterns",
                "reqrep",
                "--transports",
                "ipc",
                "--sizes",
                "64",
                "--count",
                "5000",
                "--interval",
                "100ms",
                "--repetitions",
                "1",
                "--db",
                &db,
            ]),
            T - 30,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stderr.contains("round trips/s"), "{}", o.stderr);
        let s = series(&db);
        let records = s["records"].as_array().unwrap();
        // The warm-up's round trips are not measured, the count's are.
        assert_eq!(messages_in(records), 5000, "{s}");
        assert!(records.iter().all(|r| r["round_trips"] == true), "{s}");
        let _ = std::fs::remove_dir_all(&dir);
    });
}

#[test]
fn local_thr_closes_intervals_of_a_stream_without_the_header() {
    let _machine = alone();
    with_watchdog(T, || {
        // libzmq's C remote_thr: no header, so no stamp to read the time from.
        let o = local_thr_against("100ms", |ep| c_tool("remote_thr", &[ep, "64", "2000000"]));
        let lines = o
            .stderr
            .lines()
            .filter(|l| l.starts_with("[local_thr]"))
            .count();
        let v = envelope(&o.stdout);
        let records = v["results"]["intervals"]["records"].as_array().unwrap();
        assert!(!records.is_empty(), "{}", o.stderr);
        assert_eq!(records.len(), lines, "{}", o.stderr);
        // Every message in exactly one interval; rate and CPU, no latency.
        assert_eq!(messages_in(records), 2_000_000, "{v}");
        assert!(records.iter().all(|r| r["latency"].is_null()), "{v}");
        assert!(records[0]["cpu_pct"].as_f64().is_some(), "{v}");
    });
}
