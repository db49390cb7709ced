//! The multi-host testbed (scripts/testbed.sh, through tests/common/testbed.rs): hosts reached
//! through `ip netns exec`, ssh and srun; c's own clock and missing binary; a PUSH/PULL across
//! the bridge; the link helpers; and nothing left behind by down, after a half-built up, or
//! when the owner goes away.

mod common;

use common::testbed::{assert_gone, bin, namespaces, Recorded, Testbed, HOSTS};
use common::{run, with_watchdog, Output, Proc};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

/// This build's `--version` first line.
fn version_line() -> String {
    format!("zmqperf {}", env!("CARGO_PKG_VERSION"))
}

/// CLOCK_MONOTONIC in seconds, as python3 reads it (here or, given a launcher, on a host).
const MONOTONIC: &str = "import time; print(time.clock_gettime(time.CLOCK_MONOTONIC))";

fn local_monotonic() -> f64 {
    let mut c = Command::new("python3");
    c.args(["-c", MONOTONIC]);
    seconds(&run(c, 10))
}

fn seconds(o: &Output) -> f64 {
    assert_eq!(o.code, Some(0), "{o:?}");
    o.stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("not seconds: {o:?}"))
}

/// Asserts that the monotonic clock read by `cmd` is `offset` s ahead of this host's: read
/// between two local readings, it lies in [before + offset, after + offset] (no timing luck:
/// the bounds hold however slow the launcher is).
fn assert_clock_ahead(what: &str, cmd: Command, offset: f64) {
    let before = local_monotonic();
    let there = seconds(&run(cmd, 20));
    let after = local_monotonic();
    let slack = 0.01; // python prints about 1 us; the offset is whole seconds
    assert!(
        there >= before + offset - slack && there <= after + offset + slack,
        "{what}: monotonic clock {there} s, expected {offset} s ahead of [{before}, {after}]"
    );
}

fn ok(o: &Output, what: &str) {
    assert_eq!(o.code, Some(0), "{what}: {o:?}");
}

#[test]
fn hosts_answer_through_netns_and_ssh_and_c_is_a_host_of_its_own() {
    with_watchdog(60, || {
        let tb = Testbed::up(false);
        let v = version_line();

        // ip netns exec on b runs the binary; so does ssh to b.
        let o = run(tb.on("b", &[bin(), "--version"]), 20);
        ok(&o, "ip netns exec b zmqperf --version");
        assert!(o.stdout.starts_with(&v), "{o:?}");
        let o = run(tb.ssh("b", &format!("{} --version", bin())), 20);
        ok(&o, "ssh b zmqperf --version");
        assert!(o.stdout.starts_with(&v), "{o:?}");

        // b is a's data network neighbour: its address is on its eth0, and only there.
        let o = run(tb.on("b", &["ip", "-br", "-4", "addr", "show", "eth0"]), 10);
        ok(&o, "b's eth0");
        assert!(o.stdout.contains(&format!("{}/24", tb.addr("b"))), "{o:?}");

        // c does not see the binary (through ssh, nor through its exec launcher); a does.
        let probe = format!("test -e {} && echo present || echo absent", bin());
        let o = run(tb.ssh("c", &probe), 20);
        ok(&o, "ssh c test -e");
        assert_eq!(o.stdout.trim(), "absent", "{o:?}");
        let o = run(tb.on("c", &["sh", "-c", &probe]), 10);
        assert_eq!(o.stdout.trim(), "absent", "{o:?}");
        let o = run(tb.on("a", &["sh", "-c", &probe]), 10);
        assert_eq!(o.stdout.trim(), "present", "{o:?}");

        // c's CLOCK_MONOTONIC is 5000 s ahead of a's (this process's); b's is a's.
        let offset: f64 = tb.env("ZP_C_MONOTONIC_OFFSET").parse().unwrap();
        assert_eq!(offset, 5000.0);
        let py = format!("python3 -c '{MONOTONIC}'");
        assert_clock_ahead("ssh c", tb.ssh("c", &py), offset);
        assert_clock_ahead("exec c", tb.on("c", &["python3", "-c", MONOTONIC]), offset);
        assert_clock_ahead("ssh b", tb.ssh("b", &py), 0.0);

        tb.down_and_check();
    });
}

#[test]
fn hosts_files_name_every_host_with_its_launcher_and_address() {
    with_watchdog(60, || {
        let tb = Testbed::up(false);
        let key = tb.env("ZP_SSH_KEY").to_string();
        for launcher in ["netns", "ssh"] {
            let t = tb.hosts(launcher);
            let hosts = t["hosts"].as_table().expect("[hosts.*] tables");
            assert_eq!(
                hosts.keys().collect::<Vec<_>>(),
                HOSTS.iter().collect::<Vec<_>>()
            );
            for h in HOSTS {
                let host = hosts[h].as_table().unwrap();
                assert_eq!(
                    host["addr"].as_str(),
                    Some(tb.addr(h).as_str()),
                    "{launcher} {h}"
                );
                // c lacks the binary: it is shipped there; a and b name it.
                if h == "c" {
                    assert_eq!(host["ship"].as_bool(), Some(true), "{launcher} c");
                    assert!(!host.contains_key("zmqperf"), "{launcher} c");
                } else {
                    assert_eq!(host["zmqperf"].as_str(), Some(bin()), "{launcher} {h}");
                }
                let uses_exec = launcher == "netns" || h == "a";
                assert_eq!(
                    host.contains_key("exec"),
                    uses_exec,
                    "{launcher} {h}: {host:?}"
                );
                assert_eq!(
                    host.contains_key("ssh"),
                    !uses_exec,
                    "{launcher} {h}: {host:?}"
                );
            }
            if launcher == "ssh" {
                for h in ["b", "c"] {
                    assert_eq!(
                        hosts[h]["ssh"].as_str(),
                        Some(format!("root@{}", tb.addr(h)).as_str())
                    );
                    let opts: Vec<&str> = hosts[h]["ssh_options"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap())
                        .collect();
                    assert_eq!(&opts[..2], ["-i", key.as_str()], "{opts:?}");
                }
            }
        }
        let netns = tb.hosts("netns");
        let exec_b: Vec<&str> = netns["hosts"]["b"]["exec"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(exec_b, ["ip", "netns", "exec", tb.ns("b").as_str()]);
        assert!(
            !tb.hosts_file("srun").exists(),
            "no Slurm asked, no hosts-srun.toml"
        );
        // Names and subnet are this testbed's own.
        let n = tb.id();
        assert_eq!(tb.addr("c"), format!("10.77.{n}.3"));
        for h in ["a", "b", "c", "sw"] {
            assert_eq!(tb.ns(h), format!("zp{n}-{h}"));
        }
        tb.down_and_check();
    });
}

#[test]
fn a_push_pull_crosses_the_bridge_with_the_compatible_commands() {
    with_watchdog(60, || {
        let tb = Testbed::up(false);
        let bind = format!("tcp://{}:*", tb.addr("b"));
        let mut local = tb.on("b", &[bin(), "local_thr", &bind, "64", "10000"]);
        local.args(["--timeout", "20s"]);
        let receiver = Proc::spawn(local, 40);
        let ep = receiver.bound_endpoint();
        assert!(ep.starts_with(&format!("tcp://{}:", tb.addr("b"))), "{ep}");
        let mut remote = tb.on("a", &[bin(), "remote_thr", &ep, "64", "10000"]);
        remote.args(["--timeout", "20s"]);
        let sender = run(remote, 40);
        ok(&sender, "remote_thr on a");
        let got = receiver.finish();
        ok(&got, "local_thr on b");
        assert_eq!(common::field(&got.stdout, "message size"), "64", "{got:?}");
        assert_eq!(
            common::field(&got.stdout, "message count"),
            "10000",
            "{got:?}"
        );
        let rate: f64 = common::field(&got.stdout, "mean throughput")
            .parse()
            .unwrap();
        assert!(rate > 0.0, "{got:?}");
        tb.down_and_check();
    });
}

/// Whether a TCP connection from a to `host`'s sshd opens within 1 s.
fn reaches(tb: &Testbed, host: &str) -> bool {
    let code = "import socket, sys; socket.create_connection((sys.argv[1], 22), timeout=1).close()";
    let o = run(tb.on("a", &["python3", "-c", code, &tb.addr(host)]), 10);
    o.code == Some(0)
}

/// Waits (at most 5 s) until a reaches `host` as `want` says.
fn until_reaches(tb: &Testbed, host: &str, want: bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while reaches(tb, host) != want {
        assert!(
            Instant::now() < deadline,
            "a reaches {host}: still {} after 5 s",
            !want
        );
        thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn link_helpers_cut_shape_and_drop_on_one_host_only() {
    with_watchdog(60, || {
        let tb = Testbed::up(false);
        assert!(reaches(&tb, "b") && reaches(&tb, "c"));

        tb.script("link-down", &["b"]);
        assert!(!reaches(&tb, "b"), "b's link is down");
        assert!(reaches(&tb, "c"), "c's link is up");
        tb.script("link-up", &["b"]);
        until_reaches(&tb, "b", true);

        tb.script("loss", &["b", "100"]);
        assert!(!reaches(&tb, "b"), "every packet to b is dropped");
        assert!(reaches(&tb, "c"));
        tb.script("unshape", &["b"]);
        until_reaches(&tb, "b", true);

        tb.script("shape", &["b", "10mbit"]);
        for (ns, dev) in [
            (tb.ns("b"), "eth0".to_string()),
            (tb.ns("sw"), "p-b".to_string()),
        ] {
            let o = run(
                {
                    let mut c = Command::new("tc");
                    c.args(["-n", &ns, "qdisc", "show", "dev", &dev]);
                    c
                },
                10,
            );
            assert!(
                o.stdout.contains("tbf") && o.stdout.contains("rate 10Mbit"),
                "{o:?}"
            );
        }
        tb.script("loss", &["b", "2.5"]);
        let o = run(tb.on("b", &["nft", "list", "table", "inet", "zploss"]), 10);
        assert_eq!(
            o.stdout.matches("numgen random mod 10000 < 250").count(),
            2,
            "{o:?}"
        );
        tb.script("unshape", &["b"]);
        let o = run(tb.on("b", &["tc", "qdisc", "show", "dev", "eth0"]), 10);
        assert!(!o.stdout.contains("tbf"), "{o:?}");
        assert!(reaches(&tb, "b"));
        tb.down_and_check();
    });
}

#[test]
fn srun_runs_on_the_slurm_nodes_of_two_testbeds_side_by_side() {
    with_watchdog(60, || {
        // Two Slurm testbeds at once: each has its own munged, key and namespaces.
        let other = thread::spawn(|| Testbed::up(true));
        let tb = Testbed::up(true);
        let tb2 = other
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        assert_ne!(tb.id(), tb2.id());
        for t in [&tb, &tb2] {
            let o = run(t.srun("b", &[bin(), "--version"]), 30);
            ok(&o, "srun on b");
            assert!(o.stdout.starts_with(&version_line()), "{o:?}");
            // The node on c is c: its clock, without the binary.
            assert_clock_ahead("srun c", t.srun("c", &["python3", "-c", MONOTONIC]), 5000.0);
            let o = run(t.srun("c", &["test", "-e", bin()]), 30);
            assert_eq!(o.code, Some(1), "c lacks the binary: {o:?}");
            let srun = t.hosts("srun");
            assert_eq!(
                srun["hosts"]["b"]["srun"].as_str(),
                Some(t.env("ZP_SLURM_NODE_B"))
            );
            assert_eq!(
                srun["hosts"]["c"]["srun"].as_str(),
                Some(t.env("ZP_SLURM_NODE_C"))
            );
        }
        let names: Vec<String> = tb.recorded().into_iter().map(|r| r.name).collect();
        for daemon in [
            "munged",
            "slurmctld",
            "slurmd-b",
            "slurmd-c",
            "sshd-b",
            "sshd-c",
        ] {
            assert!(
                names.iter().any(|n| n == daemon),
                "{daemon} not in {names:?}"
            );
        }
        tb.down_and_check();
        tb2.down_and_check();
    });
}

#[test]
fn down_cleans_up_after_an_up_that_failed_half_way_and_twice() {
    with_watchdog(60, || {
        let (mut tb, ran) = Testbed::start(true, &[("ZP_TESTBED_FAIL_AT", "slurm")]);
        assert_eq!(ran.code, Some(1), "{ran:?}");
        assert!(ran.log.contains("failing at 'slurm'"), "{}", ran.log);
        // The half-built testbed is there: its namespaces and daemons.
        let id: u32 = std::fs::read_to_string(tb.dir().join("id"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let ns: Vec<String> = namespaces()
            .into_iter()
            .filter(|n| n.starts_with(&format!("zp{id}-")))
            .collect();
        assert_eq!(ns.len(), 4, "{ns:?}");
        let recorded: Vec<Recorded> = tb.recorded();
        assert!(
            recorded.iter().any(|r| r.name == "slurmctld" && r.alive()),
            "{recorded:?}"
        );
        let first = tb.down();
        assert_eq!(first.code, Some(0), "{first:?}");
        let second = tb.down();
        assert_eq!(second.code, Some(0), "{second:?}");
        assert!(second.log.contains("nothing was made"), "{second:?}");
        let left: Vec<String> = namespaces()
            .into_iter()
            .filter(|n| n.starts_with(&format!("zp{id}-")))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        assert!(recorded.iter().all(|r| !r.alive()), "{recorded:?}");
    });
}

/// Ends the testbed's owner, then waits (10 s at most) until the reaper has taken the
/// testbed down: no namespace, no recorded process. The reaper looks twice a second, and
/// down takes about a second.
fn end_owner_and_wait_for_the_reaper(
    mut owner: std::process::Child,
    tb: &Testbed,
    recorded: &[Recorded],
) {
    owner.kill().unwrap();
    owner.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !tb.namespaces().is_empty() || recorded.iter().any(|r| r.alive()) {
        assert!(Instant::now() < deadline, "the reaper left the testbed up");
        thread::sleep(Duration::from_millis(100));
    }
    assert_gone(tb, recorded);
}

/// A down that stops part-way (its caller ended by a signal, here a failpoint after the
/// daemons) leaves the reaper watching: once the owner is gone, it takes the namespaces down.
#[test]
fn a_down_stopped_part_way_is_finished_by_the_reaper() {
    with_watchdog(60, || {
        let owner = Command::new("sleep").arg("30").spawn().expect("sleep");
        let pid = owner.id().to_string();
        let (mut tb, ran) = Testbed::start_with(false, &["--owner", &pid], &[]);
        assert_eq!(ran.code, Some(0), "{ran:?}");
        let recorded = tb.recorded();
        let stopped = tb.down_with(&[("ZP_TESTBED_FAIL_AT", "down")]);
        assert_eq!(stopped.code, Some(1), "{stopped:?}");
        assert_eq!(
            tb.namespaces().len(),
            4,
            "the failpoint came before the namespaces"
        );
        end_owner_and_wait_for_the_reaper(owner, &tb, &recorded);
    });
}

#[test]
fn the_reaper_takes_the_testbed_down_when_its_owner_is_gone() {
    with_watchdog(60, || {
        let owner = Command::new("sleep").arg("30").spawn().expect("sleep");
        let pid = owner.id().to_string();
        let (tb, ran) = Testbed::start_with(false, &["--owner", &pid], &[]);
        assert_eq!(ran.code, Some(0), "{ran:?}");
        let recorded = tb.recorded();
        assert_eq!(tb.namespaces().len(), 4);
        end_owner_and_wait_for_the_reaper(owner, &tb, &recorded);
        let log = std::fs::read_to_string(tb.dir().join("reaper.log")).unwrap();
        assert!(log.contains("owner") && log.contains("gone"), "{log}");
    });
}
