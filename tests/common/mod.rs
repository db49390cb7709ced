//! Shared helpers of the integration tests: a watchdog for every run, the zmqperf binary,
//! ephemeral endpoints, libzmq's C perf tools built from the zeromq-src sources, and the
//! multi-host testbed (`testbed`).
#![allow(dead_code)]

pub mod testbed;

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

/// Runs `f` on its own thread and fails the test if it takes longer than `secs`.
pub fn with_watchdog<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(v) => {
            h.join().expect("test thread");
            v
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("watchdog: test took longer than {secs} s"),
        Err(mpsc::RecvTimeoutError::Disconnected) => match h.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => unreachable!("sender dropped without sending"),
        },
    }
}

/// Holds the machine for one test of this test binary at a time, for the tests whose
/// figures another test beside them would move (CPU shares, latency trends): each takes it
/// first (before its watchdog starts). A panic in one does not lock out the rest.
pub fn alone() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    ONE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The zmqperf binary under test. Its history goes to a file of this test process in the
/// temp folder (a test may point ZMQPERF_DB elsewhere), never to the user's.
pub fn zmqperf() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zmqperf"));
    c.env(
        "ZMQPERF_DB",
        std::env::temp_dir().join(format!("zmqperf-tests-{}.db", std::process::id())),
    );
    c
}

/// A child process with its output collected, killed (by its PID) if it outlives its deadline.
pub struct Proc {
    child: Child,
    deadline: Instant,
    stderr_lines: mpsc::Receiver<String>,
    stderr_all: std::sync::Arc<std::sync::Mutex<String>>,
    stdout: Option<thread::JoinHandle<String>>,
}

/// What a finished process left.
#[derive(Debug)]
pub struct Output {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Proc {
    /// Starts `cmd` with a deadline of `secs`.
    pub fn spawn(mut cmd: Command, secs: u64) -> Proc {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let (tx, rx) = mpsc::channel();
        let all = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let all2 = all.clone();
        // Drain stdout as it comes: a report larger than the pipe buffer would block the child.
        let mut out = child.stdout.take().expect("stdout");
        let stdout = thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        let err = child.stderr.take().expect("stderr");
        thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                all2.lock().unwrap().push_str(&line);
                all2.lock().unwrap().push('\n');
                let _ = tx.send(line);
            }
        });
        Proc {
            child,
            deadline: Instant::now() + Duration::from_secs(secs),
            stderr_lines: rx,
            stderr_all: all,
            stdout: Some(stdout),
        }
    }

    /// Waits for the stderr line announcing the bound endpoint and returns the endpoint.
    pub fn bound_endpoint(&self) -> String {
        let left = self.deadline.saturating_duration_since(Instant::now());
        loop {
            let line = self
                .stderr_lines
                .recv_timeout(left)
                .expect("no 'listening on' line before the deadline");
            if let Some(ep) = line.split("listening on ").nth(1) {
                return ep.trim().to_string();
            }
        }
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for a stderr line containing `needle` (panics at the deadline).
    pub fn wait_stderr(&self, needle: &str) -> String {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            let line = self
                .stderr_lines
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no stderr line with '{needle}' before the deadline"));
            if line.contains(needle) {
                return line;
            }
        }
    }

    /// Waits for the end (killing the process at its deadline) and collects its output.
    pub fn finish(mut self) -> Output {
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                let stdout = self
                    .stdout
                    .take()
                    .map(|h| h.join().expect("stdout reader"))
                    .unwrap_or_default();
                // Let the reader thread drain what is left of stderr.
                thread::sleep(Duration::from_millis(20));
                let stderr = self.stderr_all.lock().unwrap().clone();
                return Output {
                    code: status.code(),
                    stdout,
                    stderr,
                };
            }
            if Instant::now() > self.deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "watchdog: process {} outlived its deadline",
                    self.child.id()
                );
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Runs a command to its end under a deadline.
pub fn run(cmd: Command, secs: u64) -> Output {
    Proc::spawn(cmd, secs).finish()
}

/// A zmqperf command with arguments.
pub fn zp(args: &[&str]) -> Command {
    let mut c = zmqperf();
    c.args(args);
    c
}

static IPC_N: AtomicUsize = AtomicUsize::new(0);

/// A fresh ipc endpoint in the temp folder, unique to this test process.
pub fn ipc_endpoint() -> String {
    let n = IPC_N.fetch_add(1, Ordering::SeqCst);
    let p = std::env::temp_dir().join(format!("zmqperf-t{}-{n}.sock", std::process::id()));
    let _ = std::fs::remove_file(&p);
    format!("ipc://{}", p.display())
}

/// A tcp endpoint on a free loopback port (for the C tools, which cannot bind to `*`).
pub fn free_tcp_endpoint() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    let port = l.local_addr().unwrap().port();
    format!("tcp://127.0.0.1:{port}")
}

/// The folder with libzmq's C perf tools, built once per test process by
/// scripts/build-c-perf.sh from the zeromq-src sources and the libzmq.a cargo built.
pub fn c_tools() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let profile = if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        };
        let out = Command::new("bash")
            .arg(root.join("scripts/build-c-perf.sh"))
            .args([profile, "--no-cargo"])
            .current_dir(&root)
            .output()
            .expect("run build-c-perf.sh");
        assert!(
            out.status.success(),
            "building the C perf tools failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        PathBuf::from(stdout.lines().last().expect("folder line").trim())
    })
    .clone()
}

/// A history database path in the temp folder, unique to this test process and `name`,
/// with no file there yet.
pub fn fresh_db(name: &str) -> String {
    let p = std::env::temp_dir().join(format!("zmqperf-{name}-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p.display().to_string()
}

/// `zmqperf run` of one small inproc case (64 B, one repetition) recorded in `db`:
/// `pattern` and `count`, then `extra` arguments.
pub fn inproc_run(pattern: &str, count: &str, db: &str, extra: &[&str]) -> Command {
    let mut c = zp(&[
        "run",
        "--patterns",
        pattern,
        "--transports",
        "inproc",
        "--sizes",
        "64",
        "--count",
        count,
        "--repetitions",
        "1",
        "--db",
        db,
    ]);
    c.args(extra);
    c
}

/// A C perf tool command.
pub fn c_tool(name: &str, args: &[&str]) -> Command {
    let mut c = Command::new(c_tools().join(name));
    c.args(args);
    c
}

/// The value after `key: ` on a line of libzmq-style output, without its unit.
pub fn field(out: &str, key: &str) -> String {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("no '{key}' line in:\n{out}"))
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// Serves the project's own schemas by their ids (`urn:zmqperf:schema:NAME:VERSION` is
/// `schema/NAME.schema.json`), so one schema can refer to another without a network.
struct SchemaFolder;

impl jsonschema::Retrieve for SchemaFolder {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<serde_json::Value, Box<dyn std::error::Error + Send + Sync>> {
        let id = uri.as_str();
        let name = id
            .strip_prefix("urn:zmqperf:schema:")
            .and_then(|rest| rest.split(':').next())
            .ok_or_else(|| format!("not one of zmqperf's schemas: {id}"))?;
        Ok(read_schema(&format!("{name}.schema.json")))
    }
}

fn read_schema(file: &str) -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(file);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// A validator for `schema/FILE`, resolving references to the other schemas there.
pub fn schema_validator(file: &str) -> jsonschema::Validator {
    schema_validator_of(&read_schema(file))
}

/// A validator for `schema` (which may refer to the project's schemas by id).
pub fn schema_validator_of(schema: &serde_json::Value) -> jsonschema::Validator {
    jsonschema::options()
        .with_retriever(SchemaFolder)
        .build(schema)
        .unwrap_or_else(|e| panic!("schema does not compile: {e}"))
}

/// Every way `instance` breaks the schema, one line each (empty when valid).
pub fn schema_errors(v: &jsonschema::Validator, instance: &serde_json::Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

/// Runs `zmqperf args` (at most `secs`) and asserts it exits with `code`, says `needle` on
/// stderr, and did not panic.
pub fn fails_within(secs: u64, args: &[&str], code: i32, needle: &str) {
    let o = run(zp(args), secs);
    assert_eq!(o.code, Some(code), "{args:?}: {o:?}");
    assert!(
        o.stderr.contains(needle),
        "{args:?}: stderr lacks '{needle}': {}",
        o.stderr
    );
    assert!(!o.stderr.contains("panicked"), "{args:?}: {}", o.stderr);
}

/// A Python venv under target/ named `name` with `package` (one or more, space-separated)
/// installed from PyPI (once: a marker file says it is done); fails with python's or pip's
/// words when it cannot be made (Debian: python3-venv). Returns the venv's folder.
pub fn pip_venv(name: &str, package: &str) -> PathBuf {
    // Tests of one binary run on several threads: the first makes the venv while the others
    // wait for it, so that no pip reads a package another pip is still writing.
    static MAKING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = MAKING.lock().unwrap_or_else(|e| e.into_inner());
    let venv = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let ready = venv.join("zmqperf-installed");
    if std::fs::read_to_string(&ready).is_ok_and(|p| p == package) {
        return venv;
    }
    // A venv without the marker is one an earlier run left half made: start afresh.
    let _ = std::fs::remove_dir_all(&venv);
    let mut mk = Command::new("python3");
    mk.arg("-m").arg("venv").arg(&venv);
    let o = run(mk, 120);
    assert_eq!(
        o.code,
        Some(0),
        "python3 -m venv {} failed (Debian: python3-venv): {o:?}",
        venv.display()
    );
    let mut pip = Command::new(venv.join("bin/pip"));
    // `package` may name several, separated by spaces.
    pip.args(["install", "-q", "--disable-pip-version-check"])
        .args(package.split_whitespace());
    let o = run(pip, 600);
    assert_eq!(o.code, Some(0), "pip install {package} failed: {o:?}");
    std::fs::write(&ready, package).unwrap();
    venv
}

/// One command's JSON output (`--format json`, `--json`): parsed, and checked against
/// schema/envelope.schema.json, which checks its `results` against the schema of its kind;
/// the whole envelope (`kind`, `version`, `run`, `environment`, `results`).
pub fn envelope(text: &str) -> serde_json::Value {
    static V: std::sync::OnceLock<jsonschema::Validator> = std::sync::OnceLock::new();
    let v: serde_json::Value = serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("not one JSON object ({e}):\n{text}"));
    let errors = schema_errors(
        V.get_or_init(|| schema_validator("envelope.schema.json")),
        &v,
    );
    assert!(
        errors.is_empty(),
        "breaks schema/envelope.schema.json:\n{}\n{text}",
        errors.join("\n")
    );
    v
}

/// The `results` of one command's JSON output, its envelope checked as [`envelope`] does.
pub fn results(text: &str) -> serde_json::Value {
    envelope(text)["results"].take()
}

/// Where a system program is (on PATH, or in /usr/sbin where Debian puts daemons); missing,
/// the test fails saying how to install it (`how`, such as `apt-get install smcroute`).
pub fn installed(program: &str, how: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin")])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "\n\n*** {program} not found: `{how}` (.ci/run does). This test does not skip without it ***\n"
            )
        })
}
