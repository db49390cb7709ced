//! Was the machine idle? `zmqperf run` names the other processes that used more than a
//! tenth of a core during a case (a busy loop started by the test), records the load
//! average around it, and never names zmqperf itself or its children. Each under a
//! watchdog; the busy loop ends by itself after 60 s and is killed by its PID at the end.

mod common;

use common::*;
use serde_json::Value;
use std::process::{Child, Command, Stdio};

const T: u64 = 120;

/// A process that spins on one core for at most 60 s, killed (by its PID) when dropped.
struct BusyLoop(Child);

impl BusyLoop {
    fn start() -> Self {
        // bash's SECONDS is a builtin: the loop forks nothing, all its time is its own.
        let child = Command::new("bash")
            .args(["-c", "while [ $SECONDS -lt 60 ]; do :; done"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("bash starts a busy loop");
        BusyLoop(child)
    }
}

impl Drop for BusyLoop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A paced case of about a second: 10,000 messages at 10,000 msg/s over inproc.
/// Its output, the run's JSON and the pid of the zmqperf that ran it.
fn paced_run(name: &str) -> (Output, Value, u32) {
    let db = std::env::temp_dir().join(format!("zmqperf-busy-{}-{name}.db", std::process::id()));
    let _ = std::fs::remove_file(&db);
    let db = db.display().to_string();
    let extra = ["--warmup", "0", "--rate", "10000", "--format", "json"];
    let c = inproc_run("pushpull", "10000", &db, &extra);
    let p = Proc::spawn(c, T);
    let pid = p.pid();
    let o = p.finish();
    assert_eq!(o.code, Some(0), "{o:?}");
    let v = envelope(&o.stdout);
    (o, v, pid)
}

#[test]
fn a_busy_loop_beside_a_case_is_named_with_its_share_of_a_core() {
    with_watchdog(T, || {
        let busy = BusyLoop::start();
        let pid = busy.0.id();
        // Let it get going before the case reads the processes.
        std::thread::sleep(std::time::Duration::from_millis(200));
        let (o, v, _) = paced_run("busy");
        drop(busy);
        let case = &v["results"]["cases"][0];
        let m = &case["machine"];
        assert_eq!(m["load_before"].as_array().map(Vec::len), Some(3), "{m}");
        assert_eq!(m["load_after"].as_array().map(Vec::len), Some(3), "{m}");
        let named = m["busy"].as_array().expect("a busy list");
        let it = named
            .iter()
            .find(|b| b["pid"].as_u64() == Some(pid as u64))
            .unwrap_or_else(|| panic!("the busy loop (pid {pid}) is not named: {m}"));
        assert_eq!(it["command"], "bash", "{it}");
        assert!(it["core_pct"].as_f64().unwrap() > 10.0, "{it}");
        let warning = format!("pid {pid} (bash)");
        let warned = case["warnings"].as_array().unwrap().iter().any(|w| {
            w.as_str().unwrap().starts_with("the machine was busy")
                && w.as_str().unwrap().contains(&warning)
        });
        assert!(warned, "{}", case["warnings"]);
        // Off a terminal the warning is also a line of the log on stderr, and no live
        // progress (time left) is written.
        assert!(o.stderr.contains(&warning), "{}", o.stderr);
        assert!(!o.stderr.contains("ETA"), "{}", o.stderr);
    });
}

#[test]
fn the_zmqperf_that_runs_is_never_named_busy() {
    with_watchdog(T, || {
        // The machine is shared: others may be busy (another zmqperf among them, such
        // as the other test's); this zmqperf must never count itself.
        let (_, v, pid) = paced_run("idle");
        let m = &v["results"]["cases"][0]["machine"];
        assert!(m.is_object(), "{v}");
        for b in m["busy"].as_array().into_iter().flatten() {
            assert_ne!(b["pid"].as_u64(), Some(pid as u64), "{m}");
        }
        // Each node says its share of a core while it ran; a node on a thread counts that
        // thread, which cannot use more than one core. VIRT is beside RSS.
        let nodes = v["results"]["cases"][0]["nodes"].as_array().expect("nodes");
        assert!(!nodes.is_empty());
        for n in nodes {
            assert_eq!(n["placement"], "thread", "{n}");
            let pct = n["cpu_core_pct"].as_f64().unwrap_or_else(|| panic!("{n}"));
            assert!((0.0..=105.0).contains(&pct), "{n}");
            let (rss, virt) = (n["peak_rss_kib"].as_u64(), n["peak_virt_kib"].as_u64());
            assert!(virt.unwrap_or(0) >= rss.unwrap_or(u64::MAX), "{n}");
        }
    });
}
