//! `ship = true` (runner::ship): the zmqperf binary copied through a host's launcher into
//! `~/.cache/zmqperf/bin/zmqperf-<build-id>` when missing. The hosts here are fake launchers
//! that run the commands on this machine with HOME set to a temporary folder: one passes
//! argv (like `ip netns exec`), one takes a shell line (like ssh).

mod common;

use common::*;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use zmqperf::runner::hosts::{Host, Quoting};
use zmqperf::runner::ship::{ensure_binary_of, CACHE_DIR};

const T: u64 = 600;
/// Each launcher call's bound: stripping and compressing a debug build takes a while on a
/// busy machine.
const CALL: Duration = Duration::from_secs(240);

fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_zmqperf"))
}

fn build_id() -> String {
    zmqperf::build_id::of_file(exe()).expect("the zmqperf binary has a build-id")
}

/// A fresh, empty folder for one test.
fn fresh(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zmqperf-ship-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn host(launch: Vec<String>, quoting: Quoting) -> Host {
    Host {
        name: "b".into(),
        launch,
        quoting,
        addr: "127.0.0.1".into(),
        zmqperf: None,
        ship: true,
        kind: "launch",
    }
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

/// `env HOME=... [PATH=...]` then the words: an argv launcher.
fn argv_host(home: &Path, path: Option<&Path>) -> Host {
    let mut launch = vec!["env".to_string(), format!("HOME={}", home.display())];
    if let Some(p) = path {
        launch.push(format!("PATH={}:/usr/bin:/bin", p.display()));
    }
    host(launch, Quoting::Argv)
}

/// `env HOME=... sh -c LINE`: a launcher that hands one command line to a shell, as ssh does.
fn shell_host(home: &Path) -> Host {
    let mut launch = vec!["env".to_string(), format!("HOME={}", home.display())];
    launch.extend(words(&["sh", "-c"]));
    host(launch, Quoting::Shell)
}

fn cache(home: &Path) -> PathBuf {
    home.join(CACHE_DIR)
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// First call copies, second finds it cached (the same file, not copied again); the copy
/// is smaller (stripped), has the same build-id, and runs.
fn ships_then_finds_it_cached(home: &Path, h: &Host) {
    let id = build_id();
    let want = cache(home).join(format!("zmqperf-{id}"));
    let t0 = Instant::now();
    let got = ensure_binary_of(h, exe(), CALL).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("shipped in {:.1} s", t0.elapsed().as_secs_f64());
    assert_eq!(got, want.display().to_string());
    assert_eq!(listing(&cache(home)), vec![format!("zmqperf-{id}")]);
    let meta = std::fs::metadata(&want).unwrap();
    assert!(
        meta.mode() & 0o111 != 0,
        "not executable: {:o}",
        meta.mode()
    );
    let original = std::fs::metadata(exe()).unwrap().len();
    assert!(
        meta.len() < original,
        "not stripped: {} of {original} bytes",
        meta.len()
    );
    assert_eq!(zmqperf::build_id::of_file(&want), Some(id.clone()));
    let o = run(
        {
            let mut c = std::process::Command::new(&want);
            c.arg("--version");
            c
        },
        60,
    );
    assert_eq!(o.code, Some(0), "{o:?}");
    assert!(
        o.stdout.contains(&format!("build-id: {id}")),
        "{}",
        o.stdout
    );

    let t0 = Instant::now();
    let again = ensure_binary_of(h, exe(), CALL).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again, got);
    let meta2 = std::fs::metadata(&want).unwrap();
    assert_eq!(
        (meta2.ino(), meta2.mtime()),
        (meta.ino(), meta.mtime()),
        "copied again"
    );
    eprintln!("found cached in {:.2} s", t0.elapsed().as_secs_f64());
}

#[test]
fn an_argv_launcher_gets_the_binary_once() {
    with_watchdog(T, || {
        let home = fresh("argv");
        ships_then_finds_it_cached(&home, &argv_host(&home, None));
        std::fs::remove_dir_all(&home).unwrap();
    });
}

#[test]
fn a_shell_launcher_gets_the_binary_once() {
    with_watchdog(T, || {
        let home = fresh("shell");
        ships_then_finds_it_cached(&home, &shell_host(&home));
        std::fs::remove_dir_all(&home).unwrap();
    });
}

#[test]
fn two_runners_shipping_at_once_leave_one_whole_copy() {
    with_watchdog(T, || {
        let home = fresh("race");
        let h = argv_host(&home, None);
        let runners: Vec<_> = (0..2)
            .map(|_| {
                let h = h.clone();
                std::thread::spawn(move || ensure_binary_of(&h, exe(), CALL))
            })
            .collect();
        let paths: Vec<String> = runners
            .into_iter()
            .map(|r| r.join().unwrap().unwrap_or_else(|e| panic!("{e}")))
            .collect();
        assert_eq!(paths[0], paths[1]);
        assert_eq!(
            listing(&cache(&home)),
            vec![format!("zmqperf-{}", build_id())]
        );
        let o = run(
            {
                let mut c = std::process::Command::new(&paths[0]);
                c.arg("--version");
                c
            },
            60,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        std::fs::remove_dir_all(&home).unwrap();
    });
}

#[test]
fn without_ship_the_hosts_own_path_or_the_runners_is_used() {
    let home = fresh("noship");
    let mut h = argv_host(&home, None);
    h.ship = false;
    assert_eq!(
        ensure_binary_of(&h, exe(), CALL).unwrap(),
        exe().display().to_string()
    );
    h.zmqperf = Some("/opt/zmqperf/bin/zmqperf".into());
    assert_eq!(
        ensure_binary_of(&h, exe(), CALL).unwrap(),
        "/opt/zmqperf/bin/zmqperf"
    );
    // The runner's own host never needs a copy.
    let mut local = host(Vec::new(), Quoting::Argv);
    local.kind = "local";
    assert_eq!(
        ensure_binary_of(&local, exe(), CALL).unwrap(),
        exe().display().to_string()
    );
    assert!(listing(&home).is_empty(), "{:?}", listing(&home));
    std::fs::remove_dir_all(&home).unwrap();
}

#[test]
fn a_failing_launcher_is_named_with_its_stderr() {
    with_watchdog(T, || {
        // ssh refusing the key.
        let h = host(
            words(&[
                "sh",
                "-c",
                "echo 'root@b: Permission denied (publickey).' >&2; exit 255",
                "sh",
            ]),
            Quoting::Argv,
        );
        let e = ensure_binary_of(&h, exe(), CALL).unwrap_err().to_string();
        assert_eq!(
            e,
            "ship to host b: sh exited 255: root@b: Permission denied (publickey)."
        );
        // The conversion the runner sees keeps the message.
        let e: zmqperf::Error = ensure_binary_of(&h, exe(), CALL).unwrap_err().into();
        assert!(
            e.to_string().contains("ship to host b: sh exited 255"),
            "{e}"
        );

        let h = host(words(&["/nonexistent/ssh", "b"]), Quoting::Shell);
        let e = ensure_binary_of(&h, exe(), CALL).unwrap_err().to_string();
        assert!(
            e.starts_with("ship to host b: cannot start the launcher /nonexistent/ssh:"),
            "{e}"
        );

        // A launcher that runs something else than the words it is given.
        let h = host(words(&["echo", "Welcome to b"]), Quoting::Argv);
        let e = ensure_binary_of(&h, exe(), CALL).unwrap_err().to_string();
        assert!(e.contains("did not run the probe"), "{e}");

        // One that never answers: bounded by the timeout, killed.
        let h = host(words(&["sh", "-c", "sleep 60", "sh"]), Quoting::Argv);
        let t0 = Instant::now();
        let e = ensure_binary_of(&h, exe(), Duration::from_secs(1))
            .unwrap_err()
            .to_string();
        assert!(e.contains("sh did not finish within 1 s (killed)"), "{e}");
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    });
}

#[test]
fn an_older_glibc_is_refused_before_anything_is_sent() {
    with_watchdog(T, || {
        let home = fresh("oldglibc");
        let bin = home.join("fakebin");
        std::fs::create_dir_all(&bin).unwrap();
        let getconf = bin.join("getconf");
        std::fs::write(&getconf, "#!/bin/sh\necho 'glibc 2.17'\n").unwrap();
        std::fs::set_permissions(
            &getconf,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let need = zmqperf::elf::glibc_required(exe()).unwrap().unwrap();
        let e = ensure_binary_of(&argv_host(&home, Some(&bin)), exe(), CALL)
            .unwrap_err()
            .to_string();
        let want = format!(
            "ship to host b: host b has glibc 2.17, this zmqperf needs {}.{} (GLIBC_{}.{})",
            need.0, need.1, need.0, need.1
        );
        assert!(e.starts_with(&want), "{e}");
        assert!(e.contains("scripts/build-portable.sh"), "{e}");
        assert!(!cache(&home).exists(), "{:?}", listing(&cache(&home)));
        std::fs::remove_dir_all(&home).unwrap();
    });
}

#[test]
fn a_copy_cut_short_leaves_nothing_behind() {
    with_watchdog(T, || {
        let home = fresh("cut");
        let bin = home.join("fakebin");
        std::fs::create_dir_all(&bin).unwrap();
        // gzip that dies half-way through the stream.
        let gzip = bin.join("gzip");
        std::fs::write(
            &gzip,
            "#!/bin/sh\nhead -c 1000 | /bin/gzip -dc 2>/dev/null\necho 'gzip: stdin: unexpected end of file' >&2\nexit 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&gzip, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let e = ensure_binary_of(&argv_host(&home, Some(&bin)), exe(), CALL)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("exited 1") && e.contains("unexpected end of file"),
            "{e}"
        );
        assert!(
            listing(&cache(&home)).is_empty(),
            "{:?}",
            listing(&cache(&home))
        );
        std::fs::remove_dir_all(&home).unwrap();
    });
}

#[test]
fn peer_on_a_shipping_host_runs_the_shipped_copy() {
    with_watchdog(T, || {
        let home = fresh("peer-on");
        let hosts = home.join("hosts.toml");
        std::fs::write(
            &hosts,
            format!(
                "[hosts.b]\nexec = [\"env\", \"HOME={}\"]\naddr = \"127.0.0.1\"\nship = true\n",
                home.display()
            ),
        )
        .unwrap();
        let shipped = cache(&home).join(format!("zmqperf-{}", build_id()));
        let pair = || {
            let ep = free_tcp_endpoint();
            let hosts = hosts.display().to_string();
            let o = run(
                zp(&[
                    "remote_thr",
                    &ep,
                    "64",
                    "5000",
                    "--peer-on",
                    "b",
                    "--hosts",
                    &hosts,
                ]),
                T,
            );
            assert_eq!(o.code, Some(0), "{o:?}");
            o
        };
        let first = pair();
        assert!(
            first.stderr.contains("shipping zmqperf (") && first.stderr.contains(") to host b ..."),
            "{}",
            first.stderr
        );
        assert!(shipped.exists(), "{:?}", listing(&cache(&home)));
        let second = pair();
        assert!(!second.stderr.contains("shipping"), "{}", second.stderr);
        std::fs::remove_dir_all(&home).unwrap();
    });
}
