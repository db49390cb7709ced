//! The portable build (scripts/build-portable.sh): it needs no glibc symbol newer than 2.28
//! and no C++ runtime at run time, it carries a GNU build-id, its libzmq has the same
//! features as the normal build's (the trap: a CMake that believes it cross-compiles drops
//! some silently), and it runs. Built here by the script when it is missing or older than the
//! normal build (minutes from scratch: progress on stderr), with Cargo.toml's `portable-check`
//! profile: the toolchain, glibc and link of the build users get (the script's default,
//! `release`), at a lower optimisation level and without debug information, which take most
//! of the build's time. Never skipped: a build that cannot be made fails with why.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use zmqperf::elf;

/// The newest glibc the portable build may need: RHEL 8, Ubuntu 20.04, Debian 10.
const MAX_GLIBC: (u32, u32) = (2, 28);
/// How long the build may take: 3.5 min from scratch on 2 idle cores, far more under load.
const BUILD_SECS: u64 = 2400;
/// The Cargo.toml profile the script builds here (`--profile`), and so its folders.
const PROFILE: &str = "portable-check";

fn normal() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_zmqperf"))
}

fn modified(p: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// target/portable/portable-check/zmqperf, (re)built by the script when missing or older
/// than the normal build (whose sources then changed); once per test process.
fn portable() -> &'static Path {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BIN.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(|t| root.join(t))
            .unwrap_or_else(|| root.join("target"));
        let bin = target.join("portable").join(PROFILE).join("zmqperf");
        let why = match (modified(&bin), modified(&normal())) {
            (None, _) => "missing",
            (Some(p), Some(n)) if p < n => "older than the normal build",
            _ => return Ok(bin),
        };
        eprintln!(
            "tests/portable.rs: {} is {why}: running scripts/build-portable.sh --profile {PROFILE} (minutes from scratch)",
            bin.display()
        );
        build(&root, &bin)?;
        Ok(bin)
    });
    match built {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// Runs the script with its progress on this process's stderr, under a deadline; on
/// timeout its whole process group (it and the cargo it started) is killed.
fn build(root: &Path, bin: &Path) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let started = Instant::now();
    let mut child = Command::new("bash")
        .arg(root.join("scripts/build-portable.sh"))
        .args(["--profile", PROFILE])
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start bash scripts/build-portable.sh: {e}"))?;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if started.elapsed() > Duration::from_secs(BUILD_SECS) {
            // The group this test made for the script: its id is the script's pid.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            return Err(format!(
                "scripts/build-portable.sh did not finish within {BUILD_SECS} s (killed); run it by hand to see where it stalls"
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if !status.success() {
        return Err(format!(
            "scripts/build-portable.sh failed ({status}): its error is above; it needs python3 with venv and pip, PyPI, and the crates in cargo's cache"
        ));
    }
    if !bin.exists() {
        return Err(format!(
            "scripts/build-portable.sh succeeded but left no {}",
            bin.display()
        ));
    }
    eprintln!(
        "tests/portable.rs: portable build done in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn version(bin: &Path) -> String {
    let o = run(
        {
            let mut c = Command::new(bin);
            c.arg("--version");
            c
        },
        60,
    );
    assert_eq!(o.code, Some(0), "{} --version: {o:?}", bin.display());
    o.stdout
}

/// The line of `--version` that starts (after indentation) with `prefix`.
fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .map(str::trim)
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no '{prefix}' line in --version:\n{text}"))
}

#[test]
fn the_portable_build_needs_nothing_newer_than_glibc_2_28_and_no_cxx_runtime() {
    with_watchdog(BUILD_SECS + 120, || {
        let bin = portable();
        let needs = elf::version_needs(bin).unwrap();
        let needed = elf::needed_libraries(bin).unwrap();
        let newest = elf::max_glibc(&needs);
        eprintln!(
            "portable: NEEDED {needed:?}; newest glibc {newest:?}; versions {:?}",
            needs
                .iter()
                .map(|n| format!("{}: {}", n.file, n.versions.join(" ")))
                .collect::<Vec<_>>()
        );
        let newest = newest.unwrap_or_else(|| panic!("no GLIBC_ version needed: {needs:?}"));
        let too_new: Vec<&String> = needs
            .iter()
            .flat_map(|n| n.versions.iter())
            .filter(|v| elf::parse_glibc(v).is_some_and(|g| g > MAX_GLIBC))
            .collect();
        assert!(
            newest <= MAX_GLIBC && too_new.is_empty(),
            "{} needs glibc {}.{} ({too_new:?}): more than {}.{}",
            bin.display(),
            newest.0,
            newest.1,
            MAX_GLIBC.0,
            MAX_GLIBC.1
        );
        for lib in &needed {
            assert!(
                !lib.starts_with("libstdc++") && !lib.starts_with("libgcc_s"),
                "{} needs {lib} at run time: {needed:?}",
                bin.display()
            );
        }
        for n in &needs {
            assert!(
                !n.versions
                    .iter()
                    .any(|v| v.starts_with("GLIBCXX") || v.starts_with("CXXABI")),
                "{} needs C++ runtime symbols from {}: {:?}",
                bin.display(),
                n.file,
                n.versions
            );
        }
    });
}

#[test]
fn the_portable_builds_libzmq_has_the_normal_builds_features() {
    with_watchdog(BUILD_SECS + 120, || {
        let ours = version(portable());
        let theirs = version(&normal());
        for prefix in ["capabilities (zmq_has):", "built:"] {
            assert_eq!(
                line(&ours, prefix),
                line(&theirs, prefix),
                "the portable build's libzmq differs from the normal build's (a CMake that believed it cross-compiled?)\nportable:\n{ours}\nnormal:\n{theirs}"
            );
        }
        // The libzmq version line names each build's own path; the version must agree.
        let lib = |t: &str| line(t, "libzmq ").split(" (").next().unwrap().to_string();
        assert_eq!(lib(&ours), lib(&theirs));
        eprintln!("portable --version:\n{ours}");
    });
}

/// The `#define` lines of the platform.hpp libzmq's CMake generated for the newest build
/// under `build_dir` (as scripts/build-c-perf.sh finds it: the newest libzmq-build.env).
fn platform_defines(build_dir: &Path) -> Vec<String> {
    let newest = std::fs::read_dir(build_dir)
        .unwrap_or_else(|e| panic!("{}: {e}", build_dir.display()))
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("zmqperf-"))
        .map(|e| e.path().join("out/libzmq-build.env"))
        .filter_map(|p| Some((modified(&p)?, p)))
        .max()
        .unwrap_or_else(|| {
            panic!(
                "no zmqperf-*/out/libzmq-build.env under {}",
                build_dir.display()
            )
        })
        .1;
    let env = std::fs::read_to_string(&newest).unwrap();
    let dir = env
        .lines()
        .find_map(|l| l.strip_prefix("LIBZMQ_PLATFORM="))
        .unwrap_or_else(|| panic!("no LIBZMQ_PLATFORM in {}", newest.display()));
    let hpp = Path::new(dir).join("platform.hpp");
    let text = std::fs::read_to_string(&hpp).unwrap_or_else(|e| panic!("{}: {e}", hpp.display()));
    let mut defines: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("#define "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    defines.sort();
    defines
}

#[test]
fn the_portable_builds_libzmq_was_configured_like_the_normal_builds() {
    with_watchdog(BUILD_SECS + 120, || {
        portable();
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(|t| root.join(t))
            .unwrap_or_else(|| root.join("target"));
        let host = if cfg!(target_arch = "aarch64") {
            "aarch64-unknown-linux-gnu"
        } else {
            "x86_64-unknown-linux-gnu"
        };
        let profile = if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        };
        let normal = platform_defines(&target.join(profile).join("build"));
        let ours = platform_defines(&target.join(format!("portable-build/{host}/{PROFILE}/build")));
        let missing: Vec<&String> = normal.iter().filter(|d| !ours.contains(d)).collect();
        let extra: Vec<&String> = ours.iter().filter(|d| !normal.contains(d)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "libzmq's platform.hpp differs: the portable build lacks {missing:?} and adds {extra:?} (a CMake that believed it cross-compiled skips its run-time probes)"
        );
        assert!(normal.len() > 20, "{normal:?}");
    });
}

#[test]
fn both_builds_carry_a_gnu_build_id_and_say_it() {
    with_watchdog(BUILD_SECS + 120, || {
        for bin in [portable(), normal().as_path()] {
            let id = elf::build_id(bin).unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
            assert_eq!(
                line(&version(bin), "build-id:"),
                format!("build-id: {id}"),
                "{}",
                bin.display()
            );
        }
    });
}

#[test]
fn the_portable_build_measures() {
    with_watchdog(BUILD_SECS + 120, || {
        let bin = portable();
        let mut c = Command::new(bin);
        c.args(["inproc_lat", "64", "2000"]);
        let o = run(c, 60);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("average latency:"), "{}", o.stdout);
        // tcp through the kernel, both sides the portable build.
        let ep = free_tcp_endpoint();
        let mut server = Command::new(bin);
        server.args(["local_thr", &ep, "64", "20000"]);
        let server = Proc::spawn(server, 60);
        std::thread::sleep(Duration::from_millis(300));
        let mut client = Command::new(bin);
        client.args(["remote_thr", &ep, "64", "20000"]);
        let c = run(client, 60);
        assert_eq!(c.code, Some(0), "{c:?}");
        let s = server.finish();
        assert_eq!(s.code, Some(0), "{s:?}");
        assert!(s.stdout.contains("mean throughput:"), "{}", s.stdout);
    });
}
