//! Every example of the README is run. Each `zmqperf ...` line of its `sh` blocks is listed
//! in [`EXAMPLES`] with how this test runs it: as written (in a scratch folder with its own
//! history and home, the repository's examples beside it), as written with `--dry-run` (every
//! input checked and the plan printed: the measurement would take minutes), or by another
//! test that builds what the line needs (a hosts file of a namespace testbed, peers, a live
//! stream), named with the text that test must hold. A line the README gains without being
//! listed here fails the test, and so does a listed line the README lost.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// How a README line is run.
#[derive(Clone, Copy)]
enum How {
    /// As written; it exits with one of these codes.
    Run(&'static [i32]),
    /// The binding side of a pair (local_lat, local_thr): run as written on an ephemeral
    /// endpoint in place of the README's port or path, until the next line (its peer) ends.
    Bind,
    /// The connecting side of the pair before it: run as written, on the endpoint bound.
    Connect,
    /// As written, after setting up those of these peers that are not ready (a test run
    /// before it usually has).
    Peers(&'static [&'static str]),
    /// As written with `--dry-run`: everything checked, the plan printed, nothing measured.
    DryRun(&'static str),
    /// Run by another test: (its file, a text the file holds, why not here).
    Elsewhere(&'static str, &'static str, &'static str),
}

const OK: How = How::Run(&[0]);

/// Every README example, in README order, with how it is run.
const EXAMPLES: &[(&str, How)] = &[
    (
        "zmqperf completions bash > ~/.local/share/bash-completion/completions/zmqperf",
        OK,
    ),
    ("zmqperf man --dir ~/.local/share/man/man1", OK),
    ("zmqperf --version", OK),
    ("zmqperf run --quick", OK),
    ("zmqperf run --full", How::DryRun("336 cases, minutes")),
    ("zmqperf run --full --dry-run", OK),
    (
        "zmqperf run --patterns pushpull --transports tcp --find max-rate --slo \"loss=0,p99<=5ms\"",
        OK,
    ),
    (
        "zmqperf fanout -c 2 -t 1000 -n 1 -p 5 --find max-subscribers --slo \"loss=0,p99<=50ms\"",
        How::Elsewhere(
            "tests/limit.rs",
            "max-subscribers",
            "a search of whole fan-outs at 1 msg/s takes minutes; the test searches at 50 ticks a second under an open-files limit",
        ),
    ),
    (
        "zmqperf run --patterns pushpull --transports tcp --rate 20000 --duration 30s --interval 1s",
        How::Elsewhere(
            "tests/intervals.rs",
            "\"--interval\"",
            "30 s of messages; the test runs the same for 10 s, once clean and once with a stall planted",
        ),
    ),
    (
        "zmqperf run --patterns pushpull --transports tcp --sizes 64,1KiB --rate 10000,100000",
        How::DryRun("paced at 10,000 msg/s: over a minute"),
    ),
    ("zmqperf run examples/workloads/workload.toml", OK),
    ("zmqperf history", OK),
    ("zmqperf show last", OK),
    ("zmqperf report last --format html -o report.html", OK),
    // The gate's verdicts: passed, regressed, could not judge (here: the README's workload
    // run against --quick, which has other cases), undecided.
    (
        "zmqperf compare last~1 last --fail-above 5%",
        How::Run(&[0, 15, 18, 22]),
    ),
    ("zmqperf import b-run.json", OK),
    ("zmqperf compare --by-host RUN1 RUN2 RUN3", OK),
    (
        "zmqperf diagnose",
        How::Elsewhere(
            "tests/diagnose.rs",
            r#"zp(&["diagnose", "--json", "--quick"])"#,
            "every experiment, smaller (--quick): the full set takes minutes",
        ),
    ),
    (
        "zmqperf diagnose --connect tcp://host:5556 --type SUB",
        How::Elsewhere(
            "tests/diagnose_stream.rs",
            "\"--connect\"",
            "needs a live stream to listen to, which that test sends",
        ),
    ),
    ("zmqperf run --lossy", How::DryRun("48 cases, over a minute")),
    ("zmqperf fanout -c 2 -s 50 -t 0 -n 1000 -p 20 --lossy", OK),
    ("zmqperf run --curve-cost", How::DryRun("16 cases up to 64 KiB")),
    ("zmqperf --libzmq system run --quick", OK),
    (
        "zmqperf run --quick --vs-libzmq system",
        How::DryRun("both libraries, two rounds"),
    ),
    (
        "zmqperf run graph.toml --hosts hosts.toml",
        How::Elsewhere(
            "tests/multihost.rs",
            "\"--hosts\"",
            "needs other hosts: that test's namespace testbed and its hosts file",
        ),
    ),
    (
        "zmqperf run --patterns reqrep --transports tcp --hosts hosts.toml --host-pairs a,b,c",
        How::Elsewhere(
            "tests/multihost.rs",
            "\"--host-pairs\"",
            "needs other hosts: that test's namespace testbed",
        ),
    ),
    (
        "zmqperf fanout -c 8 -s 1000 -t 1000 -p 10 -h 'tcp://10.0.0.1:*' --hosts hosts.toml --sub-hosts a,b",
        How::Elsewhere(
            "tests/multihost.rs",
            "\"--sub-hosts\"",
            "needs other hosts: that test's namespace testbed",
        ),
    ),
    (
        "zmqperf remote_lat tcp://10.0.0.2:5555 64 100k --peer-on b --hosts hosts.toml",
        How::Elsewhere(
            "tests/ship.rs",
            "\"--peer-on\"",
            "needs another host: that test's host b, which it reaches through its own command",
        ),
    ),
    ("zmqperf k8s manifest -o k8s/", OK),
    ("zmqperf topology check examples/topologies/ptmp-pubsub.json", OK),
    ("zmqperf run examples/topologies/ptmp-pubsub.json", OK),
    ("zmqperf run examples/topologies/log-pipeline.toml", OK),
    ("zmqperf run examples/topologies/acsflix-3x3.toml", OK),
    ("zmqperf run examples/topologies/frames.toml", OK),
    (
        "zmqperf run examples/topologies/log-pipeline.toml --transports ipc,tcp",
        OK,
    ),
    ("zmqperf run examples/topologies/io-modes.toml", OK),
    (
        "zmqperf run examples/topologies/ptmp-pubsub-sweep.toml",
        How::DryRun("18 cases, paced: over a minute"),
    ),
    ("zmqperf run topologies/fanout.toml", OK),
    (
        "zmqperf local_lat tcp://127.0.0.1:5555 64 100_000",
        How::Bind,
    ),
    (
        "zmqperf remote_lat tcp://127.0.0.1:5555 64 100_000 --detail",
        How::Connect,
    ),
    (
        "zmqperf local_thr tcp://127.0.0.1:5556 1KiB 1M --detail",
        How::Bind,
    ),
    ("zmqperf remote_thr tcp://127.0.0.1:5556 1KiB 1M", How::Connect),
    (
        "zmqperf local_thr ipc:///tmp/zp.sock 64 1M --pattern pubsub",
        How::Bind,
    ),
    (
        "zmqperf remote_thr ipc:///tmp/zp.sock 64 1M --pattern pubsub",
        How::Connect,
    ),
    ("zmqperf inproc_lat 64 100000 --json", OK),
    (
        "zmqperf check_recv 10 SUB bind ipc://junk.txt",
        How::Elsewhere(
            "tests/ptmp.rs",
            "\"ipc://junk.txt\"",
            "PTMP's README examples, each pair in its two shells, with their gap lines",
        ),
    ),
    (
        "zmqperf check_send 10000 PUB connect ipc://junk.txt 1",
        How::Elsewhere("tests/ptmp.rs", "\"10000\"", "with the check_recv above"),
    ),
    (
        "zmqperf check_recv 10000 PAIR bind ipc://junk.txt 1500",
        How::Elsewhere("tests/ptmp.rs", "\"1500\"", "with the check_send below"),
    ),
    (
        "zmqperf check_send 10000 PAIR connect ipc://junk.txt",
        How::Elsewhere("tests/ptmp.rs", "\"PAIR\"", "the fast quit, named"),
    ),
    (
        "zmqperf check_sendrecv 1000000 bind pubsub inproc://sendrecv",
        How::Elsewhere("tests/ptmp.rs", "\"check_sendrecv\"", "in one process"),
    ),
    (
        "zmqperf peers setup",
        How::Elsewhere(
            "tests/peers.rs",
            r#"vec!["peers", "setup"]"#,
            "sets every peer up from its registry: minutes",
        ),
    ),
    ("zmqperf peers list", OK),
    (
        "zmqperf run --patterns reqrep --transports tcp --impl c,ffi-rzmq,zmqperf",
        How::Peers(&["c", "ffi-rzmq"]),
    ),
    (
        "zmqperf matrix --quick",
        How::Elsewhere(
            "tests/peers.rs",
            "\"matrix\"",
            "needs peers set up; that test runs the matrix with its own",
        ),
    ),
    (
        "zmqperf fanout -c 2 -s 50 -t 10 -n 10 -p 20 --impl zmqperf,node --repetitions 3",
        How::Peers(&["node"]),
    ),
];

/// The `zmqperf` lines of the README's `sh` blocks, without their comments, and with
/// `target/release/zmqperf` as `zmqperf`.
fn readme_lines() -> Vec<String> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = !in_sh && t == "```sh";
            continue;
        }
        if !in_sh {
            continue;
        }
        let t = t.strip_prefix("target/release/").unwrap_or(t);
        if !t.starts_with("zmqperf ") {
            continue;
        }
        let t = t.split(" # ").next().unwrap().trim();
        out.push(t.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    out
}

/// A scratch folder: a `zmqperf` history, a home, and the repository's examples beside.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = std::env::temp_dir().join(format!("zmqperf-readme-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("home")).unwrap();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        for d in ["examples", "topologies"] {
            std::os::unix::fs::symlink(repo.join(d), dir.join(d)).unwrap();
        }
        Scratch { dir }
    }

    /// `args` as a command in the scratch folder (`~/` in them is its home folder).
    fn cmd(&self, args: &[String], db: &str) -> Command {
        let home = self.dir.join("home");
        let mut c = zmqperf();
        // The home stays the user's (the peers set up are there); `~` is the scratch one.
        c.current_dir(&self.dir)
            .env("ZMQPERF_DB", self.dir.join(db));
        c.args(args.iter().map(|a| match a.strip_prefix("~/") {
            Some(rest) => home.join(rest).display().to_string(),
            None => a.clone(),
        }));
        c
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The words of a line after `zmqperf` (a quoted word unquoted, as a shell does; no
/// example quotes a space), with a `> FILE` redirection split off.
fn words(line: &str) -> (Vec<String>, Option<String>) {
    let unquote = |w: &str| {
        let q = w.starts_with(['"', '\'']) && w.len() >= 2 && w.ends_with(&w[..1]);
        if q {
            w[1..w.len() - 1].to_string()
        } else {
            w.to_string()
        }
    };
    let mut w: Vec<String> = line.split_whitespace().skip(1).map(unquote).collect();
    let mut to = None;
    if let Some(i) = w.iter().position(|x| x == ">") {
        to = w.get(i + 1).cloned();
        w.truncate(i);
    }
    (w, to)
}

/// Sets up those of `names` that `zmqperf peers list` does not say are ready.
fn ready(names: &[&str]) {
    let o = run(zp(&["peers", "list", "--json"]), 60);
    assert_eq!(o.code, Some(0), "{o:?}");
    let listed = results(&o.stdout);
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| {
            !listed["peers"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == *n && p["ready"] == true)
        })
        .collect();
    if !missing.is_empty() {
        let mut args = vec!["peers", "setup"];
        args.extend(&missing);
        let o = run(zp(&args), 10 * 60);
        assert_eq!(o.code, Some(0), "peers setup {missing:?}: {o:?}");
    }
}

#[test]
fn every_readme_example_is_listed_with_how_it_runs() {
    let readme = readme_lines();
    let listed: Vec<&str> = EXAMPLES.iter().map(|(l, _)| *l).collect();
    let unlisted: Vec<&String> = readme
        .iter()
        .filter(|l| !listed.contains(&l.as_str()))
        .collect();
    let gone: Vec<&&str> = listed
        .iter()
        .filter(|l| !readme.iter().any(|r| r == *l))
        .collect();
    assert!(
        unlisted.is_empty() && gone.is_empty(),
        "README examples not listed in tests/readme.rs: {unlisted:#?}\nlisted but no longer in the README: {gone:#?}"
    );
    // The lines run elsewhere are run there: the named test holds the text.
    for (line, how) in EXAMPLES {
        if let How::Elsewhere(file, needle, why) = how {
            let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file))
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(
                text.contains(needle),
                "`{line}` is said to run in {file} ({why}), which has no {needle}"
            );
        }
    }
}

#[test]
fn every_readme_example_runs() {
    with_watchdog(25 * 60, || {
        let s = Scratch::new();
        // `import b-run.json` takes a run made elsewhere: one from a second history.
        let other = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            run(s.cmd(&args, "other.db"), 120)
        };
        let o = other(&["run", "examples/topologies/log-pipeline.toml"]);
        assert_eq!(o.code, Some(0), "{o:?}");
        let o = other(&["report", "last", "--format", "json", "-o", "b-run.json"]);
        assert_eq!(o.code, Some(0), "{o:?}");
        // The binding side running: its process, the README's endpoint, the one it bound.
        let mut bound: Option<(Proc, String, String)> = None;
        let mut report = Vec::new();
        for (line, how) in EXAMPLES {
            let (mut args, to) = words(line);
            let started = std::time::Instant::now();
            let o = match how {
                How::Elsewhere(file, _, why) => {
                    report.push(format!("{line}\n    in {file}: {why}"));
                    continue;
                }
                How::Bind => {
                    // The README's port or path, as an ephemeral one of this test's.
                    let ep = &mut args[1];
                    let given = ep.clone();
                    *ep = if given.starts_with("tcp://") {
                        "tcp://127.0.0.1:*".to_string()
                    } else {
                        format!("ipc://{}/zp.sock", s.dir.display())
                    };
                    let p = Proc::spawn(s.cmd(&args, "history.db"), 300);
                    // A tcp wildcard says the port it got; an ipc path is the path.
                    let ep = if given.starts_with("tcp://") {
                        p.bound_endpoint()
                    } else {
                        args[1].clone()
                    };
                    report.push(format!("{line}\n    on {ep}"));
                    bound = Some((p, given, ep));
                    continue;
                }
                How::Connect => {
                    let (p, given, ep) = bound.take().expect("a Connect line after its Bind");
                    assert_eq!(
                        args[1], given,
                        "{line}: not the endpoint of the line before"
                    );
                    args[1] = ep;
                    let c = run(s.cmd(&args, "history.db"), 300);
                    let l = p.finish();
                    assert_eq!(l.code, Some(0), "the binding side of `{line}`: {l:?}");
                    c
                }
                How::DryRun(_) => {
                    args.push("--dry-run".into());
                    run(s.cmd(&args, "history.db"), 120)
                }
                How::Peers(names) => {
                    ready(names);
                    run(s.cmd(&args, "history.db"), 300)
                }
                How::Run(_) => {
                    if *line == "zmqperf compare --by-host RUN1 RUN2 RUN3" {
                        // The three runs named: the newest three of the history.
                        args.truncate(2);
                        args.extend(["last~2", "last~1", "last"].map(String::from));
                    }
                    run(s.cmd(&args, "history.db"), 300)
                }
            };
            let codes: &[i32] = match how {
                How::Run(codes) => codes,
                _ => &[0],
            };
            assert!(
                o.code.is_some_and(|c| codes.contains(&c)),
                "`{line}` exited {:?}, not one of {codes:?}:\n{}\n{}",
                o.code,
                o.stdout,
                o.stderr
            );
            if let Some(file) = to {
                let path = match file.strip_prefix("~/") {
                    Some(rest) => s.dir.join("home").join(rest),
                    None => s.dir.join(file),
                };
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &o.stdout).unwrap();
            }
            match how {
                How::DryRun(why) => {
                    assert!(o.stdout.starts_with("dry run: "), "{line}: {}", o.stdout);
                    report.push(format!(
                        "{line}\n    --dry-run ({why}): {}",
                        o.stdout.lines().next().unwrap()
                    ));
                }
                _ => report.push(format!(
                    "{line}\n    exit {:?} in {:.1} s",
                    o.code.unwrap(),
                    started.elapsed().as_secs_f64()
                )),
            }
        }
        eprintln!("{}", report.join("\n"));
        // What the lines wrote is there, and is what they say.
        let home = s.dir.join("home");
        let completions =
            std::fs::read_to_string(home.join(".local/share/bash-completion/completions/zmqperf"))
                .unwrap();
        assert!(completions.contains("complete -F"), "{completions}");
        assert!(home.join(".local/share/man/man1/zmqperf-run.1").is_file());
        let html = std::fs::read_to_string(s.dir.join("report.html")).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..80]);
        assert!(s.dir.join("k8s").is_dir());
    });
}
