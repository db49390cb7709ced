//! `zmqperf diagnose`: each experiment yields its finding on loopback, with parameters
//! that make the phenomenon certain, within bounded time (a watchdog per test); and the
//! command end to end: JSON valid against the schema, the findings in the history and in
//! the HTML report. Temp databases only (ZMQPERF_DB), never the user's history.

mod common;

use common::*;
use std::path::PathBuf;
use zmqperf::endpoint::Transport;
use zmqperf::model::{Finding, Measure};
use zmqperf::scenarios::diagnose::{run_step, Config, Part, Step};
use zmqperf::stats::GapPosition;

/// Seconds a single experiment may take under the watchdog.
const T: u64 = 60;

fn config() -> Config {
    let mut c = Config::new(PathBuf::from(env!("CARGO_BIN_EXE_zmqperf")));
    c.quick = true;
    c
}

/// Runs one part over one transport; it must give one finding and not fail.
fn finding(part: Part, transport: Transport) -> Finding {
    with_watchdog(T, move || {
        let mut fs = run_step(&config(), &Step { part, transport });
        assert_eq!(fs.len(), 1, "{fs:#?}");
        let f = fs.remove(0);
        assert!(f.error.is_none(), "the experiment failed: {f:#?}");
        assert!(!f.observed.is_empty() && !f.cause.is_empty() && !f.remedy.is_empty());
        assert!(f.wall_s < T as f64, "{}", f.wall_s);
        let t = f
            .triage
            .as_ref()
            .expect("every experiment's finding has its triage line");
        assert!(
            !t.cause.is_empty() && !t.fix.is_empty() && !t.unit.is_empty(),
            "{t:?}"
        );
        f
    })
}

fn count(f: &Finding, key: &str) -> u64 {
    match f.evidence.get(key) {
        Some(Measure::Count(v)) => *v,
        other => panic!("{key} is {other:?}, not a count, in {f:#?}"),
    }
}

fn number(f: &Finding, key: &str) -> f64 {
    match f.evidence.get(key) {
        Some(Measure::Count(v)) => *v as f64,
        Some(Measure::Number(v)) => *v,
        other => panic!("{key} is {other:?}, not a number, in {f:#?}"),
    }
}

fn slow_joiner(t: Transport) {
    let f = finding(Part::SlowJoiner, t);
    assert_eq!(f.id, format!("slow-joiner/{t}"));
    let lost = count(&f, "lost_at_start");
    assert!(lost > 0, "no loss at the start without a wait: {f:#?}");
    assert_eq!(count(&f, "lost_in_middle"), 0, "{f:#?}");
    assert_eq!(count(&f, "lost_at_end"), 0, "{f:#?}");
    assert_eq!(count(&f, "received") + lost, count(&f, "sent"));
    assert!(number(&f, "subscription_ms") > 0.0);
    assert_eq!(f.gaps.len(), 1, "{f:#?}");
    assert_eq!(f.gaps[0].position, GapPosition::Start);
    assert_eq!(f.gaps[0].count, lost);
    assert!(f.gaps[0].after_ms.is_some());
    assert_eq!(
        count(&f, "xpub_lost"),
        0,
        "the XPUB handshake lost messages: {f:#?}"
    );
    assert_eq!(count(&f, "handshake_lost"), 0, "{f:#?}");
    assert!(f.title.contains("lost at the start"), "{}", f.title);
    let t = f.triage.as_ref().unwrap();
    assert_eq!((t.cause.as_str(), t.lost), ("slow joiner", lost));
    assert!(t.fix.contains("both lost 0 here"), "{}", t.fix);
}

#[test]
fn slow_joiner_over_tcp_loses_the_start_and_the_xpub_remedy_loses_nothing() {
    slow_joiner(Transport::Tcp);
}

#[test]
fn slow_joiner_over_ipc_loses_the_start_and_the_xpub_remedy_loses_nothing() {
    slow_joiner(Transport::Ipc);
}

#[test]
fn slow_joiner_over_inproc_remedies_lose_nothing() {
    // Over inproc the race is short; whatever happened is reported, the remedies hold.
    let f = finding(Part::SlowJoiner, Transport::Inproc);
    assert_eq!(count(&f, "xpub_lost"), 0, "{f:#?}");
    assert_eq!(count(&f, "handshake_lost"), 0, "{f:#?}");
    assert_eq!(count(&f, "lost_in_middle") + count(&f, "lost_at_end"), 0);
}

fn hwm(t: Transport) {
    let f = finding(Part::HwmDropOrBlock, t);
    assert_eq!(f.id, format!("hwm/{t}"));
    let dropped = count(&f, "pub_lost_hwm_10");
    assert!(dropped > 0, "PUB with HWM 10 dropped nothing: {f:#?}");
    assert_eq!(count(&f, "pub_hwm_10_lost_in_middle"), dropped, "{f:#?}");
    assert_eq!(count(&f, "pub_hwm_10_lost_at_start"), 0);
    assert_eq!(count(&f, "pub_hwm_10_lost_at_end"), 0);
    assert!(!f.gaps.is_empty());
    assert!(f.gaps.iter().all(|g| g.position == GapPosition::Middle
        && g.before_ms.is_some()
        && g.after_ms.is_some()));
    assert_eq!(
        count(&f, "push_lost_hwm_10"),
        0,
        "PUSH lost messages: {f:#?}"
    );
    assert_eq!(count(&f, "push_lost_hwm_1000"), 0);
    let t = f.triage.as_ref().unwrap();
    assert_eq!(t.cause, "high-water mark");
    assert!(t.lost >= dropped, "{t:?}");
    assert!(
        number(&f, "push_blocked_ms_hwm_10") > 0.0,
        "PUSH did not block: {f:#?}"
    );
}

#[test]
fn hwm_over_inproc_pub_drops_in_the_middle_and_push_blocks() {
    hwm(Transport::Inproc);
}

#[test]
fn hwm_over_tcp_pub_drops_in_the_middle_and_push_blocks() {
    hwm(Transport::Tcp);
}

#[test]
fn hwm_memory_grows_without_a_high_water_mark() {
    let f = finding(Part::HwmMemory, Transport::Tcp);
    assert_eq!(f.id, "hwm-memory/tcp");
    assert_eq!(f.experiment, "hwm-memory");
    let n = count(&f, "messages");
    assert_eq!(count(&f, "unbounded_lost"), 0, "{f:#?}");
    assert!(count(&f, "hwm_1000_lost") > 0, "{f:#?}");
    let grew = count(&f, "unbounded_rss_growth_kib");
    // 1 KiB messages: most of them wait in the sender.
    assert!(grew > n / 4, "the sender grew by only {grew} KiB: {f:#?}");
    assert!(grew > 2 * count(&f, "hwm_1000_rss_growth_kib"), "{f:#?}");
}

fn fast_quit(part: Part, t: Transport, id: &str) {
    let f = finding(part, t);
    assert_eq!(f.id, id);
    assert_eq!(f.experiment, "fast-quit");
    let lost = count(&f, "linger0_lost");
    assert!(lost > 0, "linger 0 lost nothing: {f:#?}");
    assert_eq!(count(&f, "linger0_lost_at_end"), lost, "{f:#?}");
    assert_eq!(count(&f, "linger0_lost_at_start"), 0);
    let last = f.gaps.last().expect("a gap");
    assert_eq!(last.position, GapPosition::End);
    assert!(last.before_ms.is_some() || count(&f, "linger0_received") == 0);
    assert_eq!(
        count(&f, "wait_for_peer_lost"),
        0,
        "waiting for the peer lost messages: {f:#?}"
    );
}

#[test]
fn fast_quit_pushpull_over_tcp_loses_the_end_with_linger_0_and_nothing_when_waiting() {
    fast_quit(
        Part::FastQuitPushPull,
        Transport::Tcp,
        "fast-quit/pushpull/tcp",
    );
}

#[test]
fn fast_quit_pair_over_ipc_loses_the_end_with_linger_0_and_nothing_when_waiting() {
    fast_quit(Part::FastQuitPair, Transport::Ipc, "fast-quit/pair/ipc");
}

fn sender_stops(t: Transport) {
    let f = finding(Part::SenderStops, t);
    let timeout = number(&f, "timeout_ms");
    let silence = number(&f, "silence_ms");
    assert!(
        silence >= timeout,
        "silence {silence} below the timeout {timeout}"
    );
    assert!(
        silence < timeout + 1000.0,
        "noticed only after {silence} ms (timeout {timeout} ms)"
    );
    assert_eq!(count(&f, "received"), count(&f, "sent"));
    assert_eq!(count(&f, "last_seq") + 1, count(&f, "sent"));
    assert!(f.gaps.is_empty());
}

#[test]
fn sender_stops_is_noticed_within_the_timeout_over_every_transport() {
    for t in [Transport::Inproc, Transport::Ipc, Transport::Tcp] {
        sender_stops(t);
    }
}

#[test]
fn deep_queue_latency_grows_with_depth() {
    let f = finding(Part::DeepQueue, Transport::Tcp);
    assert_eq!(count(&f, "lost_in_middle") + count(&f, "lost_at_end"), 0);
    assert_eq!(count(&f, "received"), count(&f, "sent"));
    let first = number(&f, "latency_first_tenth_ms");
    let last = number(&f, "latency_last_tenth_ms");
    assert!(
        last > first * 5.0,
        "latency {first} ms -> {last} ms: {f:#?}"
    );
    assert!(count(&f, "depth_max") > 100, "{f:#?}");
    assert!(number(&f, "us_per_queued_message") > 0.0);
    // Later messages wait longer: the quartiles rise up to the deepest point.
    assert!(number(&f, "latency_at_50pct_ms") > number(&f, "latency_at_25pct_ms") * 0.9);
}

fn temp_db(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("zmqperf-diag-{}-{name}.db", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

#[test]
fn diagnose_json_quick_has_every_experiment_and_is_recorded() {
    with_watchdog(180, || {
        let db = temp_db("json");
        let mut cmd = zp(&["diagnose", "--json", "--quick"]);
        cmd.env("ZMQPERF_DB", &db);
        let o = run(cmd, 170);
        assert_eq!(o.code, Some(0), "{o:?}");
        let v = envelope(&o.stdout);
        assert_eq!(v["run"]["status"], "complete");
        assert_eq!(v["results"]["cases"].as_array().unwrap().len(), 0);
        let findings = v["results"]["findings"].as_array().unwrap();
        let kinds: std::collections::BTreeSet<&str> = findings
            .iter()
            .map(|f| f["experiment"].as_str().unwrap())
            .collect();
        for k in [
            "slow-joiner",
            "hwm",
            "fast-quit",
            "sender-stops",
            "deep-queue",
        ] {
            assert!(kinds.contains(k), "no {k} finding: {kinds:?}");
        }
        for f in findings {
            assert!(f["error"].is_null(), "{} failed: {}", f["id"], f["error"]);
        }
        assert!(o.stderr.contains("recorded in"), "{}", o.stderr);

        // The history has the run with its findings.
        let mut show = zp(&["show", "last", "--format", "json"]);
        show.env("ZMQPERF_DB", &db);
        let s = run(show, 30);
        assert_eq!(s.code, Some(0), "{s:?}");
        let shown = envelope(&s.stdout);
        assert_eq!(shown["results"]["findings"], v["results"]["findings"]);
        assert!(shown["run"]["command"]
            .as_str()
            .unwrap()
            .contains("diagnose"));

        // And the HTML report shows them.
        let mut report = zp(&["report", "last", "--format", "html"]);
        report.env("ZMQPERF_DB", &db);
        let r = run(report, 30);
        assert_eq!(r.code, Some(0), "{r:?}");
        assert!(r.stdout.contains("<h2>Findings</h2>"));
        for f in findings {
            let title = f["title"].as_str().unwrap().replace('&', "&amp;");
            assert!(r.stdout.contains(&title), "no {title:?} in the HTML");
        }
        let mut text = zp(&["show", "last"]);
        text.env("ZMQPERF_DB", &db);
        let t = run(text, 30);
        assert!(t.stdout.contains("Findings"), "{}", t.stdout);
        assert!(t.stdout.contains("Remedy: "), "{}", t.stdout);
        let _ = std::fs::remove_file(&db);
    });
}

#[test]
fn diagnose_text_names_the_findings_and_no_history_records_nothing() {
    with_watchdog(T, || {
        let db = temp_db("text");
        let mut cmd = zp(&[
            "diagnose",
            "--quick",
            "--only",
            "sender-stops",
            "--transports",
            "inproc",
            "--no-history",
        ]);
        cmd.env("ZMQPERF_DB", &db);
        let o = run(cmd, T - 5);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout.contains("[info] sender-stops/inproc"),
            "{}",
            o.stdout
        );
        assert!(o.stdout.contains("Remedy: "));
        assert!(!db.exists(), "--no-history wrote {}", db.display());
    });
}

#[test]
fn diagnose_refuses_bad_options() {
    with_watchdog(T, || {
        let o = run(zp(&["diagnose", "--only", "lag", "--no-history"]), 20);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(o.stderr.contains("slow-joiner, hwm"), "{}", o.stderr);
        let o = run(
            zp(&[
                "diagnose",
                "--only",
                "fast-quit",
                "--transports",
                "inproc",
                "--no-history",
            ]),
            20,
        );
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(o.stderr.contains("add tcp or ipc"), "{}", o.stderr);
        let o = run(zp(&["diagnose", "--transports", "udp", "--no-history"]), 20);
        assert_eq!(o.code, Some(3), "{o:?}");
        let o = run(zp(&["diagnose", "--timeout", "1ms", "--no-history"]), 20);
        assert_eq!(o.code, Some(3), "{o:?}");
        assert!(o.stderr.contains("--timeout"), "{}", o.stderr);
    });
}

#[test]
fn ctrl_c_during_diagnose_keeps_what_was_found_and_exits_130() {
    with_watchdog(T, || {
        let db = temp_db("ctrlc");
        // Seven steps over tcp, a few seconds in all: interrupted after the first.
        let mut cmd = zp(&["diagnose", "--transports", "tcp"]);
        cmd.env("ZMQPERF_DB", &db);
        let p = Proc::spawn(cmd, T);
        // One progress line per step when stderr is not a terminal.
        p.wait_stderr("[2/7]");
        // SAFETY: a signal to the child this test started, by its pid.
        unsafe { libc::kill(p.pid() as i32, libc::SIGINT) };
        let o = p.finish();
        assert_eq!(o.code, Some(130), "Ctrl-C has its own exit code: {o:?}");
        assert!(o.stderr.contains("interrupted"), "{}", o.stderr);
        assert!(
            o.stdout.contains("slow-joiner/tcp"),
            "what was found is printed: {}",
            o.stdout
        );
        // And recorded, as an interrupted run.
        let mut show = zmqperf();
        show.args(["show", "last", "--format", "json"])
            .env("ZMQPERF_DB", &db);
        let v = envelope(&run(show, T).stdout);
        assert_eq!(v["run"]["status"], "interrupted");
        let _ = std::fs::remove_file(&db);
    });
}
