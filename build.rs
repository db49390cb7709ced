//! Builds the libzmq that zmqperf measures by default: libzmq 4.3.5 from the sources in the
//! zeromq-src crate, configured and compiled by libzmq's own CMake build (so eventfd, epoll and
//! every other option it detects on this machine are on, as in the builds users deploy),
//! statically linked, with CURVE through libsodium (built from the libsodium-sys-stable
//! crate's sources; see docs/libzmq.md for why).
//!
//! Writes `$OUT_DIR/libzmq_build.rs` (what was built, included by src/zmq/build_info.rs) and
//! `$OUT_DIR/libzmq-build.env` (the paths scripts/build-c-perf.sh links libzmq's C tools
//! against, so both sides of an interop test run the same library).

use sha2::{Digest, Sha256};
use std::env;
use std::fs;
use std::path::{Path, PathBuf};

/// The zeromq-src release whose sources are built (pinned in Cargo.toml).
const ZEROMQ_SRC: &str = "zeromq-src-0.3.6+4.3.5";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=ZMQPERF_LIBZMQ_SRC");
    commit();
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let vendor = libzmq_sources();
    let sodium_include = PathBuf::from(dep("INCLUDE"));
    let sodium_lib_dir = PathBuf::from(dep("LIB"));
    let sodium_lib = sodium_lib_dir.join("libsodium.a");
    assert!(
        sodium_lib.exists(),
        "libsodium-sys-stable did not leave {}",
        sodium_lib.display()
    );

    let dst = cmake::Config::new(&vendor)
        // libzmq is always built optimised, whatever the profile of zmqperf itself: the
        // figures are libzmq's, not those of a debug build.
        .profile("Release")
        .define("BUILD_SHARED", "OFF")
        .define("BUILD_STATIC", "ON")
        .define("BUILD_TESTS", "OFF")
        .define("WITH_PERF_TOOL", "OFF")
        .define("WITH_DOCS", "OFF")
        .define("WITH_DOC", "OFF")
        // The draft API: RADIO/DISH over udp, CLIENT/SERVER, SCATTER/GATHER, PEER/CHANNEL
        // and ws://. It adds sockets and transports and leaves the others' code as it was:
        // instructions per message of the compatible commands are the same within 0.3%
        // (scripts/bench-instructions.py, both builds side by side). No TLS: wss:// would
        // link GnuTLS, which the static, portable binary does not carry.
        .define("ENABLE_DRAFTS", "ON")
        .define("ENABLE_WS", "ON")
        .define("WITH_TLS", "OFF")
        .define("ENABLE_CPACK", "OFF")
        .define("ENABLE_PRECOMPILED", "OFF")
        // A libbsd found on the build machine would add a run-time dependency for strlcpy.
        .define("WITH_LIBBSD", "OFF")
        .define("ENABLE_CURVE", "ON")
        .define("WITH_LIBSODIUM", "ON")
        .define("WITH_LIBSODIUM_STATIC", "ON")
        // Found here rather than by pkg-config, which knows only a system libsodium.
        .define("SODIUM_INCLUDE_DIRS", &sodium_include)
        .define("SODIUM_LIBRARIES", &sodium_lib)
        .build();

    let lib_dir = dst.join("lib");
    let libzmq_a = lib_dir.join("libzmq.a");
    assert!(
        libzmq_a.exists(),
        "CMake did not install {}",
        libzmq_a.display()
    );
    println!("cargo:rustc-link-search=native={}", lib_dir.display());
    println!("cargo:rustc-link-lib=static=zmq");
    println!("cargo:rustc-link-lib=dylib=stdc++");

    let platform = fs::read_to_string(dst.join("build/platform.hpp")).unwrap_or_default();
    let defined = |name: &str| {
        platform.lines().any(|l| {
            l.trim() == format!("#define {name}") || l.starts_with(&format!("#define {name} "))
        })
    };
    let mut features = Vec::new();
    for (name, macro_name) in [
        ("eventfd", "ZMQ_HAVE_EVENTFD"),
        ("epoll", "ZMQ_IOTHREAD_POLLER_USE_EPOLL"),
        ("libsodium", "ZMQ_USE_LIBSODIUM"),
        ("curve", "ZMQ_HAVE_CURVE"),
        ("ipc", "ZMQ_HAVE_IPC"),
        ("tcp-keepalive", "ZMQ_HAVE_TCP_KEEPIDLE"),
        ("so-keepalive", "ZMQ_HAVE_SO_KEEPALIVE"),
        ("so-peercred", "ZMQ_HAVE_SO_PEERCRED"),
        ("accept4", "HAVE_ACCEPT4"),
        // What a CMake that believes it cross-compiles drops without a word (its run-time
        // probes are skipped): listed so two builds' `--version` tell them apart.
        ("sock-cloexec", "ZMQ_HAVE_SOCK_CLOEXEC"),
        ("eventfd-cloexec", "ZMQ_HAVE_EVENTFD_CLOEXEC"),
        ("tipc", "ZMQ_HAVE_TIPC"),
        ("ws", "ZMQ_HAVE_WS"),
    ] {
        if defined(macro_name) {
            features.push(name);
        }
    }
    let sodium_version = fs::read_to_string(sodium_include.join("sodium/version.h"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.contains("SODIUM_VERSION_STRING"))
                .and_then(|l| l.split('"').nth(1).map(String::from))
        })
        .unwrap_or_else(|| "unknown".into());
    let sha = hex(&Sha256::digest(fs::read(&libzmq_a).unwrap()));
    let info = format!(
        "/// The release built.\npub const SOURCE: &str = {:?};\n\
         /// Options libzmq's CMake configuration turned on, as its platform.hpp says.\n\
         pub const FEATURES: &[&str] = &{:?};\n\
         /// The libsodium linked in for CURVE.\npub const SODIUM_VERSION: &str = {:?};\n\
         /// SHA-256 of the libzmq.a linked in.\npub const SHA256: &str = {:?};\n",
        ZEROMQ_SRC, features, sodium_version, sha
    );
    fs::write(out.join("libzmq_build.rs"), info).unwrap();
    fs::write(
        out.join("libzmq-build.env"),
        format!(
            "LIBZMQ_A={}\nSODIUM_A={}\nLIBZMQ_INCLUDE={}\nLIBZMQ_SRC={}\nLIBZMQ_PLATFORM={}\n",
            libzmq_a.display(),
            sodium_lib.display(),
            dst.join("include").display(),
            vendor.display(),
            dst.join("build").display()
        ),
    )
    .unwrap();
}

/// A value libsodium-sys-stable passed on (`cargo:include`, `cargo:lib`).
fn dep(key: &str) -> String {
    env::var(format!("DEP_SODIUM_{key}"))
        .unwrap_or_else(|_| panic!("libsodium-sys-stable did not set DEP_SODIUM_{key}"))
}

/// The libzmq source tree: `ZMQPERF_LIBZMQ_SRC` if set, else the vendor folder of the
/// zeromq-src crate in cargo's registry (or a `cargo vendor` folder beside the project).
fn libzmq_sources() -> PathBuf {
    if let Ok(p) = env::var("ZMQPERF_LIBZMQ_SRC") {
        return PathBuf::from(p);
    }
    let cargo_home = env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .expect("neither CARGO_HOME nor HOME is set");
    let mut candidates = Vec::new();
    if let Ok(registries) = fs::read_dir(cargo_home.join("registry/src")) {
        for r in registries.flatten() {
            candidates.push(r.path().join(ZEROMQ_SRC).join("vendor"));
        }
    }
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    candidates.push(manifest.join("vendor").join(ZEROMQ_SRC).join("vendor"));
    candidates
        .into_iter()
        .find(|p| p.join("CMakeLists.txt").exists())
        .unwrap_or_else(|| {
            panic!(
                "the libzmq sources of {ZEROMQ_SRC} were not found under {}/registry/src; \
                 run `cargo fetch`, or set ZMQPERF_LIBZMQ_SRC to a libzmq source tree",
                cargo_home.display()
            )
        })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The commit this build is of, for `--version`: `$ZMQPERF_COMMIT` when set (a build from a
/// tarball, which has no .git), else git's short id of HEAD; nothing outside a git checkout.
/// The build script runs again when HEAD moves (a commit, a checkout), not on every edit.
fn commit() {
    println!("cargo:rerun-if-env-changed=ZMQPERF_COMMIT");
    let git = |args: &[&str]| -> Option<String> {
        let o = std::process::Command::new("git")
            .args(args)
            .current_dir(env::var("CARGO_MANIFEST_DIR").ok()?)
            .output()
            .ok()?;
        let s = String::from_utf8(o.stdout).ok()?.trim().to_string();
        (o.status.success() && !s.is_empty()).then_some(s)
    };
    let id = env::var("ZMQPERF_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]));
    if env::var("ZMQPERF_COMMIT").map_or(true, |c| c.is_empty()) {
        for path in ["HEAD", "packed-refs"] {
            if let Some(p) = git(&["rev-parse", "--git-path", path]) {
                println!("cargo:rerun-if-changed={p}");
            }
        }
        if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
            if let Some(p) = git(&["rev-parse", "--git-path", &r]) {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
    if let Some(id) = id {
        println!("cargo:rustc-env=ZMQPERF_COMMIT={id}");
    }
}
