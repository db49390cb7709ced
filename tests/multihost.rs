//! One experiment across hosts, in the testbed of scripts/testbed.sh (namespaces a, b, c on
//! a bridge; c's monotonic clock 5000 s ahead and without the binary, which is shipped
//! there): topologies with nodes on other hosts through `ip netns exec`, ssh and srun;
//! delivery exact, one-way times on one clock with their bound; fan-out, ACSflix and the
//! host-pair table across hosts; failures named with their host and cause, fast.

mod common;

use common::testbed::Testbed;
use common::{envelope, with_watchdog, Proc};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The hosts file of `launcher` with a as the runner's own host (its address bound by the
/// nodes there, so the other hosts reach them).
fn hosts_for(tb: &Testbed, launcher: &str) -> PathBuf {
    let mut t = tb.hosts(launcher);
    local_a(tb, &mut t);
    let p = tb.dir().join(format!("run-hosts-{launcher}.toml"));
    std::fs::write(&p, toml::to_string(&t).unwrap()).unwrap();
    p
}

/// Makes host a of a testbed's hosts table the runner's own, reached at its address.
fn local_a(tb: &Testbed, t: &mut toml::Table) {
    let mut a = toml::Table::new();
    a.insert("local".into(), toml::Value::Boolean(true));
    a.insert("addr".into(), toml::Value::String(tb.addr("a")));
    t["hosts"]
        .as_table_mut()
        .expect("a [hosts] table")
        .insert("a".into(), toml::Value::Table(a));
}

/// `zmqperf ARGS` run on host a (the runner's host), with a history of the test's own.
fn on_a(tb: &Testbed, args: &[&str]) -> Command {
    let mut c = tb.on("a", &[common::testbed::bin()]);
    c.args(args).env("ZMQPERF_DB", tb.dir().join("history.db"));
    if let Some(conf) = slurm_conf(tb) {
        c.env("SLURM_CONF", conf);
    }
    c
}

/// The testbed's Slurm configuration, when it has Slurm.
fn slurm_conf(tb: &Testbed) -> Option<String> {
    let env = std::fs::read_to_string(tb.dir().join("env")).ok()?;
    env.lines()
        .find_map(|l| l.strip_prefix("SLURM_CONF="))
        .map(String::from)
}

fn run_out(c: Command, secs: u64) -> (Option<i32>, String, String, Duration) {
    let t0 = Instant::now();
    let out = common::run(c, secs);
    (out.code, out.stdout, out.stderr, t0.elapsed())
}

fn write(tb: &Testbed, name: &str, text: &str) -> String {
    let p = tb.dir().join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// A PUSH/PULL (open loop, so no queue adds to the one-way time) and a REQ/REP, the
/// receiving side on `remote`.
fn pair_files(tb: &Testbed, remote: &str) -> (String, String) {
    let pp = write(
        tb,
        &format!("pp-{remote}.toml"),
        &format!(
            "[params]\ntransport = \"tcp\"\ncount = 3000\nsize = 64\nrate = 3000\n\
             [[nodes]]\nname = \"sender\"\nrole = \"source\"\nsocket = {{ type = \"PUSH\", connect = [\"receiver\"] }}\n\
             [[nodes]]\nname = \"receiver\"\nrole = \"sink\"\nhost = \"{remote}\"\nsocket = {{ type = \"PULL\", bind = [\"auto\"] }}\n"
        ),
    );
    let rr = write(
        tb,
        &format!("rr-{remote}.toml"),
        &format!(
            "[params]\ntransport = \"tcp\"\ncount = 3000\nsize = 64\n\
             [[nodes]]\nname = \"server\"\nrole = \"echo\"\nhost = \"{remote}\"\nsocket = {{ type = \"REP\", bind = [\"auto\"] }}\n\
             [[nodes]]\nname = \"client\"\nrole = \"ping\"\nsocket = {{ type = \"REQ\", connect = [\"server\"] }}\n"
        ),
    );
    (pp, rr)
}

fn json_run(tb: &Testbed, file: &str, hosts: &Path, extra: &[&str]) -> Value {
    let h = hosts.display().to_string();
    let mut args = vec![
        "run",
        file,
        "--hosts",
        &h,
        "--repetitions",
        "2",
        "--no-history",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err, _) = run_out(on_a(tb, &args), 240);
    assert_eq!(code, Some(0), "{file}: {err}\n{out}");
    envelope(&out)
}

/// Delivery exact, the receiver placed remote, and the one-way time of a stream from a to
/// `remote` on one clock: within its stated bound (plus this machine's noise) of half the
/// round trip over the same link, never the 5,000 s between the clocks.
fn check_pair(tb: &Testbed, launcher: &str, remote: &str) -> (f64, f64, u64) {
    let hosts = hosts_for(tb, launcher);
    let (pp, rr) = pair_files(tb, remote);
    let v = json_run(tb, &pp, &hosts, &[]);
    let c = &v["results"]["cases"][0];
    assert!(c["error"].is_null(), "{launcher}: {}", c["error"]);
    let placement: Vec<(&str, &str)> = c["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap(),
                n["placement"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(placement.contains(&("receiver", "remote")), "{placement:?}");
    let e = &c["edges"][0];
    assert_eq!(e["loss"]["expected"], 6000, "{launcher}: {e}");
    assert_eq!(e["loss"]["received"], 6000, "{launcher}: {e}");
    assert_eq!(e["loss"]["lost"], 0, "{launcher}: {e}");
    // The remote host's machine, as its node described it: reached at its address, which
    // is on one of its own interfaces (the namespace's veth, not the runner's).
    let machines = v["environment"]["hosts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let m = machines
        .iter()
        .find(|h| h["name"] == remote)
        .unwrap_or_else(|| {
            panic!("{launcher}: host {remote} not in environment.hosts: {machines:?}")
        });
    let addr = tb.addr(remote);
    assert_eq!(m["addr"], addr.as_str(), "{m}");
    assert!(!m["kernel"].as_str().unwrap().is_empty(), "{m}");
    assert!(m["cores"].as_u64().unwrap() >= 1, "{m}");
    assert!(
        m["libzmq_version"].as_str().unwrap().starts_with('4'),
        "{m}"
    );
    let nics = m["nics"].as_array().unwrap();
    assert!(
        nics.iter()
            .any(|n| n["addresses"].as_array().unwrap().iter().any(|a| a
                .as_str()
                .unwrap()
                .split('/')
                .next()
                == Some(addr.as_str()))
                && n["mtu"].as_u64().is_some()),
        "{launcher}: {remote}'s interfaces lack its address {addr}: {nics:?}"
    );
    let bound = e["clock_error_ns"]
        .as_u64()
        .unwrap_or_else(|| panic!("{launcher}: no clock bound on a cross-host edge: {e}"));
    let one_way = e["latency"]["p50_ns"].as_f64().unwrap();
    let text = c["warnings"].to_string();
    assert!(
        text.contains("across hosts") && text.contains("to within"),
        "{text}"
    );
    let v = json_run(tb, &rr, &hosts, &[]);
    let c = &v["results"]["cases"][0];
    assert!(c["error"].is_null(), "{launcher}: {}", c["error"]);
    let half_rtt = c["edges"][0]["latency"]["p50_ns"].as_f64().unwrap();
    assert_eq!(c["edges"][0]["messages"], 6000);
    // The one-way time and half the round trip cross the same link; they differ by the
    // clocks' error (the bound) and by what this shared 2-core machine adds to either
    // figure (the slack: a scheduler delay on a busy core, half a millisecond at most).
    let slack = 500_000.0;
    assert!(
        one_way > 0.0 && (one_way - half_rtt).abs() <= bound as f64 + slack,
        "{launcher} a->{remote}: one-way p50 {one_way} ns vs RTT/2 p50 {half_rtt} ns, bound {bound} ns"
    );
    eprintln!(
        "{launcher} a->{remote}: one-way p50 {:.1} us, RTT/2 p50 {:.1} us, clock bound ±{:.1} us",
        one_way / 1e3,
        half_rtt / 1e3,
        bound as f64 / 1e3
    );
    (one_way, half_rtt, bound)
}

#[test]
fn nodes_on_another_host_through_netns_ssh_and_srun_measure_on_one_clock() {
    with_watchdog(900, || {
        let tb = Testbed::up(true);
        // c: its clock 5000 s ahead, the binary shipped there by the first run.
        for launcher in ["netns", "ssh", "srun"] {
            let (_, _, bound) = check_pair(&tb, launcher, "c");
            // The target over ssh is 100 us; on this shared 2-core machine the bound
            // measured 75-150 us under load (docs/hosts.md), so the test holds it to 1 ms (a
            // 5,000 s error would be 10 orders of magnitude beyond) and prints the figure.
            if launcher == "ssh" {
                assert!(bound <= 1_000_000, "the clock bound over ssh is {bound} ns");
                eprintln!(
                    "clock bound over ssh: {:.1} us (target 100 us)",
                    bound as f64 / 1e3
                );
            }
        }
        // b shares a's clock: the same figures, the offset near 0.
        check_pair(&tb, "ssh", "b");
        // The text report says the bound.
        let hosts = hosts_for(&tb, "ssh");
        let (pp, _) = pair_files(&tb, "c");
        let h = hosts.display().to_string();
        let (code, out, err, _) = run_out(
            on_a(
                &tb,
                &[
                    "run",
                    &pp,
                    "--hosts",
                    &h,
                    "--repetitions",
                    "1",
                    "--no-history",
                ],
            ),
            120,
        );
        assert_eq!(code, Some(0), "{err}");
        let flat = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("on one clock to within ±"), "{out}");
    });
}

/// The __node processes of this machine in `host`'s network namespace.
/// Whether process `pid` runs in the network namespace of `host` of this testbed (the
/// inodes of the two namespaces are equal; other testbeds' namespaces are not it).
fn in_ns(tb: &Testbed, host: &str, pid: u32) -> bool {
    let ino = |p: String| std::fs::metadata(p).map(|m| std::os::unix::fs::MetadataExt::ino(&m));
    match (
        ino(format!("/run/netns/{}", tb.ns(host))),
        ino(format!("/proc/{pid}/ns/net")),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn nodes_in(tb: &Testbed, host: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains("__node") && in_ns(tb, host, pid) {
            out.push(pid);
        }
    }
    out
}

/// A run of a long REQ/REP with its server on b through ssh, broken after 2 s by `breaks`:
/// the case fails within 5 s of the break, naming host b and `cause`.
fn broken_run(tb: &Testbed, what: &str, cause: &[&str], breaks: impl FnOnce(&Testbed)) {
    let hosts = hosts_for(tb, "ssh");
    let rr = write(
        tb,
        "long.toml",
        "[params]\ntransport = \"tcp\"\ncount = 50000000\nsize = 64\n\
         [[nodes]]\nname = \"server\"\nrole = \"echo\"\nhost = \"b\"\nsocket = { type = \"REP\", bind = [\"auto\"] }\n\
         [[nodes]]\nname = \"client\"\nrole = \"ping\"\nsocket = { type = \"REQ\", connect = [\"server\"] }\n",
    );
    let h = hosts.display().to_string();
    let c = on_a(
        tb,
        &[
            "run",
            &rr,
            "--hosts",
            &h,
            "--repetitions",
            "1",
            "--case-timeout",
            "40s",
            "--timeout",
            "20s",
        ],
    );
    let child = Proc::spawn(c, 120);
    // Wait for the server on b to run, then break.
    let until = Instant::now() + Duration::from_secs(30);
    while nodes_in(tb, "b").is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_secs(2));
    let t_break = Instant::now();
    breaks(tb);
    let out = child.finish();
    let took = t_break.elapsed();
    let all = format!("{}\n{}", out.stdout, out.stderr);
    assert_ne!(out.code, Some(0), "{what}: {all}");
    assert!(
        took <= Duration::from_secs(5) + Duration::from_millis(500),
        "{what}: the case failed {took:?} after the break: {all}"
    );
    assert!(
        all.contains("host b"),
        "{what}: the host is not named: {all}"
    );
    for c in cause {
        assert!(all.contains(c), "{what}: '{c}' not said: {all}");
    }
    eprintln!("{what}: failed {:.2} s after the break", took.as_secs_f64());
}

#[test]
fn a_dead_node_a_cut_link_and_a_killed_ssh_fail_the_case_within_5_s_naming_host_and_cause() {
    with_watchdog(600, || {
        let tb = Testbed::up(false);
        broken_run(&tb, "remote node killed", &["died"], |tb| {
            for pid in nodes_in(tb, "b") {
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            }
        });
        broken_run(&tb, "link cut", &["stopped answering"], |tb| {
            tb.script("link-down", &["b"]);
        });
        // The node on b outlives its cut link only until its deadline (case timeout + 10 s).
        let until = Instant::now() + Duration::from_secs(60);
        while !nodes_in(&tb, "b").is_empty() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(200));
        }
        assert!(
            nodes_in(&tb, "b").is_empty(),
            "a node is left on b after its deadline"
        );
        tb.script("link-up", &["b"]);
        broken_run(&tb, "ssh killed", &["ssh"], |tb| {
            // This testbed's ssh clients only (they run on a): another test's are not ours.
            let out = Command::new("pgrep")
                .args(["-f", "ssh .*BatchMode=yes.*__node"])
                .output()
                .unwrap();
            for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
                if pid.parse().is_ok_and(|p| in_ns(tb, "a", p)) {
                    let _ = Command::new("kill").args(["-9", pid]).status();
                }
            }
        });
    });
}

#[test]
fn seeds_across_hosts_fanout_acsflix_and_the_host_pair_table() {
    with_watchdog(900, || {
        let tb = Testbed::up(false);
        let hosts = hosts_for(&tb, "netns");
        let h = hosts.display().to_string();
        // Seed 002: 8,000 subscribers in 8 processes over a and b, 1 msg/s, 10 ticks.
        let ep = format!("tcp://{}:*", tb.addr("a"));
        let (code, out, err, _) = run_out(
            on_a(
                &tb,
                &[
                    "fanout",
                    "-c",
                    "8",
                    "-s",
                    "1000",
                    "-t",
                    "1000",
                    "-n",
                    "1",
                    "-p",
                    "10",
                    "-h",
                    &ep,
                    "--hosts",
                    &h,
                    "--sub-hosts",
                    "a,b",
                    "--no-history",
                ],
            ),
            300,
        );
        assert_eq!(code, Some(0), "{err}\n{out}");
        assert!(out.contains("delivered: 80,000 of 80,000"), "{out}");
        assert!(out.contains("per host:"), "{out}");
        let per_host: Vec<&str> = out
            .lines()
            .filter(|l| l.contains("4 processes, 4,000 subscribers: delivered 40,000 of 40,000"))
            .collect();
        assert_eq!(per_host.len(), 2, "{out}");
        assert!(out.contains("clocks of two hosts"), "{out}");

        // Seed 003: ACSflix 3x3, the sources on a, the sinks on b: each stream ends on its EOT.
        let acs = std::fs::read_to_string("examples/topologies/acsflix-3x3.toml")
            .unwrap()
            .replace("role = \"sink\"", "role = \"sink\"\nhost = \"b\"");
        let f = write(&tb, "acsflix-ab.toml", &acs);
        let v = json_run(&tb, &f, &hosts, &["--count", "5000", "--sizes", "64"]);
        let c = &v["results"]["cases"][0];
        assert!(c["error"].is_null(), "{}", c["error"]);
        let edges = c["edges"].as_array().unwrap();
        assert_eq!(edges.len(), 3);
        for e in edges {
            assert_eq!(e["messages"], 10000, "{e}");
            assert_eq!(e["loss"]["lost"], 0, "{e}");
        }
        for n in c["nodes"].as_array().unwrap() {
            assert!(n["cut_short"].is_null(), "{n}");
            if n["role"] == "sink" {
                assert_eq!(n["placement"], "remote", "{n}");
            }
        }

        // Seed 001: REQ/REP over every ordered pair of three hosts, in one command.
        let (code, out, err, _) = run_out(
            on_a(
                &tb,
                &[
                    "run",
                    "--patterns",
                    "reqrep",
                    "--transports",
                    "tcp",
                    "--sizes",
                    "64",
                    "--count",
                    "1000",
                    "--repetitions",
                    "2",
                    "--hosts",
                    &h,
                    "--host-pairs",
                    "a,b,c",
                    "--no-history",
                    "--format",
                    "json",
                ],
            ),
            400,
        );
        assert_eq!(code, Some(0), "{err}");
        let v = envelope(&out);
        let mut pairs: Vec<String> = v["results"]["cases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert!(c["error"].is_null(), "{}", c["error"]);
                c["pattern"].as_str().unwrap().to_string()
            })
            .collect();
        pairs.sort();
        assert_eq!(
            pairs,
            [
                "reqrep[a->b]",
                "reqrep[a->c]",
                "reqrep[b->a]",
                "reqrep[b->c]",
                "reqrep[c->a]",
                "reqrep[c->b]"
            ]
        );
    });
}

#[test]
fn another_build_on_a_host_is_refused_naming_both_builds() {
    with_watchdog(120, || {
        let tb = Testbed::up(false);
        // A "zmqperf" on b that says hello as another build.
        let fake = write(
            &tb,
            "other-zmqperf.sh",
            "#!/bin/sh\nread spec\necho '{\"type\":\"hello\",\"v\":2,\"versions\":[1,2],\"version\":\"0.0.9\",\"build_id\":\"0123456789abcdef\",\"pid\":1,\"host\":\"b\"}'\nsleep 5\n",
        );
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let mut t = tb.hosts("netns");
        t["hosts"]["b"]
            .as_table_mut()
            .unwrap()
            .insert("zmqperf".into(), toml::Value::String(fake.clone()));
        local_a(&tb, &mut t);
        let hosts = write(&tb, "other-hosts.toml", &toml::to_string(&t).unwrap());
        let (_, rr) = pair_files(&tb, "b");
        let (code, out, err, took) = run_out(
            on_a(
                &tb,
                &[
                    "run",
                    &rr,
                    "--hosts",
                    &hosts,
                    "--repetitions",
                    "1",
                    "--no-history",
                ],
            ),
            60,
        );
        let all = format!("{out}\n{err}");
        assert_ne!(code, Some(0), "{all}");
        assert!(
            all.contains("0123456789abcdef") && all.contains("not the runner's build"),
            "{all}"
        );
        assert!(all.contains("ship = true"), "{all}");
        assert!(took < Duration::from_secs(30), "{took:?}");
    });
}
