//! The history and the outputs next to it, kept safe from the user's own mistakes and from
//! other local users: `--db` that is not a file, `-o` that is the history through a link,
//! standard output closed or full, CURVE secret keys on command lines, in the history and
//! in reports, and a bad libzmq for commands that never load one.

mod common;

use common::{fails_within, inproc_run, run, with_watchdog, zp, Proc};
use std::path::PathBuf;
use std::process::Command;

/// A folder of this test, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("zmqperf-hs-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp folder");
        Dir(d)
    }

    fn file(&self, name: &str) -> String {
        self.0.join(name).to_string_lossy().into_owned()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A quick recorded run (a few thousand inproc messages) in the history `db`.
fn quick_run(db: &str) {
    let o = run(inproc_run("pushpull", "2000", db, &[]), 60);
    assert_eq!(o.code, Some(0), "{o:?}");
}

/// `sh -c` with the binary as `$0`: a redirection the test's Command cannot make.
fn sh(script: &str, args: &[&str]) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_zmqperf"))
        .args(args);
    c
}

#[test]
fn a_db_that_is_not_a_regular_file_is_refused_at_once() {
    with_watchdog(60, || {
        let d = Dir::new("kinds");
        let fifo = d.file("f.db");
        let st = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
        assert!(st.success());
        // It blocked in open() before; now each is refused with exit 13 and the fix.
        for cmd in ["history", "show", "run"] {
            let mut args = vec![cmd];
            if cmd == "show" {
                args.push("last");
            }
            if cmd == "run" {
                args.extend(["--quick", "--transports", "inproc"]);
            }
            args.extend(["--db", &fifo]);
            fails_within(20, &args, 13, "it is a named pipe (FIFO), not a file");
        }
        fails_within(20, &["history", "--db", &d.file("")], 13, "it is a folder");
        fails_within(
            20,
            &["history", "--db", "/dev/null"],
            13,
            "a character device",
        );
    });
}

#[test]
fn report_o_naming_the_history_by_any_link_is_refused_and_it_survives() {
    with_watchdog(120, || {
        let d = Dir::new("links");
        let db = d.file("h.db");
        quick_run(&db);
        std::fs::hard_link(&db, d.file("hard.html")).unwrap();
        std::os::unix::fs::symlink(&db, d.file("soft.html")).unwrap();
        std::fs::create_dir(d.file("sub")).unwrap();
        for out in [
            d.file("hard.html"),
            d.file("soft.html"),
            d.file("sub/../h.db"),
        ] {
            fails_within(
                20,
                &[
                    "report", "last", "--db", &db, "--format", "html", "-o", &out,
                ],
                3,
                "that is the history database",
            );
        }
        let o = run(zp(&["history", "--db", &db]), 20);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("complete"), "{o:?}");
        // An ordinary -o is written whole, with nothing left beside it.
        let o = run(
            zp(&[
                "report",
                "last",
                "--db",
                &db,
                "--format",
                "json",
                "-o",
                &d.file("r.json"),
            ]),
            20,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let text = std::fs::read_to_string(d.file("r.json")).unwrap();
        assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok());
        let leftovers: Vec<_> = std::fs::read_dir(&d.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    });
}

#[test]
fn stdout_full_or_closed_is_an_error_that_points_to_a_run_only_when_one_was_recorded() {
    with_watchdog(120, || {
        let d = Dir::new("stdout");
        let db = d.file("h.db");
        // Commands that record nothing: exit 11, and no "run is in the history".
        for args in [
            &["curve-keys"][..],
            &["inproc_lat", "64", "1000"],
            &["inproc_thr", "64", "10000", "--json"],
        ] {
            for redirect in [">/dev/full", ">&-"] {
                let o = run(sh(&format!("exec \"$0\" \"$@\" {redirect}"), args), 30);
                assert_eq!(o.code, Some(11), "{args:?} {redirect}: {o:?}");
                assert!(!o.stderr.contains("history"), "{args:?} {redirect}: {o:?}");
                if redirect == ">&-" {
                    assert!(
                        o.stderr.contains("standard output is closed"),
                        "{args:?}: {o:?}"
                    );
                }
            }
        }
        // A run that was recorded names itself.
        let o = run(
            sh(
                "exec \"$0\" \"$@\" >&-",
                &[
                    "run",
                    "--patterns",
                    "pushpull",
                    "--transports",
                    "inproc",
                    "--sizes",
                    "64",
                    "--count",
                    "2000",
                    "--repetitions",
                    "1",
                    "--db",
                    &db,
                ],
            ),
            60,
        );
        assert_eq!(o.code, Some(11), "{o:?}");
        assert!(
            o.stderr.contains("standard output is closed")
                && o.stderr
                    .contains("is in the history already: zmqperf show 2"),
            "{o:?}"
        );
        // `> /dev/null` is not a closed standard output.
        let o = run(sh("exec \"$0\" \"$@\" >/dev/null", &["curve-keys"]), 30);
        assert_eq!(o.code, Some(0), "{o:?}");
    });
}

#[test]
fn history_commands_do_not_need_a_loadable_libzmq() {
    with_watchdog(120, || {
        let d = Dir::new("libzmq");
        let db = d.file("h.db");
        quick_run(&db);
        for args in [
            &["history", "--db", &db][..],
            &["show", "last", "--db", &db],
            &["report", "last", "--format", "csv", "--db", &db],
            &["compare", "last", "last", "--db", &db],
        ] {
            let mut c = zp(args);
            c.env("ZMQPERF_LIBZMQ", "/etc/hostname");
            let o = run(c, 20);
            assert_eq!(o.code, Some(0), "{args:?}: {o:?}");
        }
        // A command that measures still refuses it.
        let mut c = zp(&["inproc_lat", "64", "10"]);
        c.env("ZMQPERF_LIBZMQ", "/etc/hostname");
        assert_eq!(run(c, 20).code, Some(3));
    });
}

/// The pids of the children of `pid` (from /proc).
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for t in tasks.flatten() {
        if let Ok(s) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(s.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
        }
    }
    out
}

#[test]
fn curve_secret_keys_reach_no_command_line_no_history_and_no_report() {
    with_watchdog(180, || {
        let d = Dir::new("curve");
        let db = d.file("c.db");
        // Keys of this test (the perf tools' fixed pair would be a poor secret to look for).
        let keys = run(zp(&["curve-keys"]), 20).stdout;
        let secret = |name: &str| -> String {
            let t: toml::Table = toml::from_str(&keys).unwrap();
            t[name].as_str().unwrap().to_string()
        };
        let (server_secret, client_secret) = (secret("server_secret"), secret("client_secret"));
        let inline = keys.trim().replace('\n', ", ");
        // A paced source: the run lasts seconds, the nodes are child processes all along.
        let topology = format!(
            "name = \"curve-secret\"\n[params]\nsize = 64\ncount = 6000\nrate = 2000\nrepetitions = 1\ntransport = \"tcp\"\n\
             [[node]]\nname = \"tx\"\nrole = \"source\"\nplacement = \"process\"\n\
             socket = {{ type = \"PUSH\", bind = [\"auto\"], security = \"curve\", curve_keys = {{ {inline} }} }}\n\
             [[node]]\nname = \"rx\"\nrole = \"sink\"\nplacement = \"process\"\n\
             socket = {{ type = \"PULL\", connect = [\"tx\"], security = \"curve\", curve_keys = {{ {inline} }} }}\n"
        );
        let file = d.file("curve.toml");
        std::fs::write(&file, &topology).unwrap();
        let p = Proc::spawn(zp(&["run", &file, "--db", &db, "--format", "json"]), 150);
        // Wait (bounded by the deadline) until the node processes are up, then read their
        // command lines and environments.
        let mut seen = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while seen.len() < 2 && std::time::Instant::now() < deadline {
            for c in children_of(p.pid()) {
                if seen.contains(&c) {
                    continue;
                }
                let Ok(cmdline) = std::fs::read(format!("/proc/{c}/cmdline")) else {
                    continue;
                };
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                if !cmdline.contains("__node") {
                    continue;
                }
                for s in [&server_secret, &client_secret] {
                    assert!(!cmdline.contains(s.as_str()), "secret in argv: {cmdline}");
                }
                seen.push(c);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let o = p.finish();
        assert_eq!(o.code, Some(0), "{o:?}");
        assert_eq!(seen.len(), 2, "the two node processes were not seen: {o:?}");
        let shown = run(zp(&["show", "last", "--db", &db, "--format", "json"]), 20);
        assert_eq!(shown.code, Some(0), "{shown:?}");
        let stored = std::fs::read(&db).unwrap();
        let wal = std::fs::read(format!("{db}-wal")).unwrap_or_default();
        for s in [&server_secret, &client_secret] {
            for (what, text) in [
                ("run --format json", o.stdout.as_bytes()),
                ("show --format json", shown.stdout.as_bytes()),
                ("the history file", &stored[..]),
                ("the history's log", &wal[..]),
            ] {
                let found = text.windows(s.len()).any(|w| w == s.as_bytes());
                assert!(!found, "a CURVE secret is in {what}");
            }
        }
        assert!(shown.stdout.contains("<redacted>"), "{}", shown.stdout);
    });
}

#[test]
fn with_home_unset_the_announce_says_the_history_is_in_the_current_folder() {
    with_watchdog(120, || {
        let d = Dir::new("nohome");
        let mut c = zp(&[
            "run",
            "--patterns",
            "pushpull",
            "--transports",
            "inproc",
            "--sizes",
            "64",
            "--count",
            "2000",
            "--repetitions",
            "1",
        ]);
        c.env_remove("HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("ZMQPERF_DB")
            .current_dir(&d.0);
        let o = run(c, 60);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stderr
                .contains("zmqperf-history.db in the current folder (HOME is not set"),
            "{}",
            o.stderr
        );
        assert!(d.0.join("zmqperf-history.db").is_file());
    });
}
