//! A multi-host testbed for the integration tests: scripts/testbed.sh's hosts a, b and c
//! (network namespaces on a bridge; sshd on b and c; c with its own monotonic clock and
//! without the binary; optionally Slurm), made for one test and taken down in `Drop`, also
//! when the test panics. A testbed that cannot be built fails the test with the script's log.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How long `up` may take (Slurm included; it takes 1.5-3 s on this kind of machine).
const UP_SECS: u64 = 60;
/// How long `down` may take (it kills what ignores TERM after 3 s).
const DOWN_SECS: u64 = 30;

/// The three hosts, in the order of their addresses (.1, .2, .3).
pub const HOSTS: [&str; 3] = ["a", "b", "c"];

/// One testbed of scripts/testbed.sh, in its own folder.
pub struct Testbed {
    dir: PathBuf,
    env: BTreeMap<String, String>,
    down: bool,
}

/// What a command left when it ended within its deadline.
#[derive(Debug)]
pub struct Ran {
    pub code: Option<i32>,
    pub log: String,
}

/// A process recorded by the script: its name, PID and start time (clock ticks since boot).
#[derive(Debug, Clone)]
pub struct Recorded {
    pub name: String,
    pub pid: u32,
    pub start: String,
}

impl Recorded {
    /// Whether this very process still runs (not ended, not a zombie, PID not recycled).
    pub fn alive(&self) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) else {
            return false;
        };
        let rest = stat.rsplit_once(") ").map(|(_, r)| r).unwrap_or("");
        let f: Vec<&str> = rest.split_whitespace().collect();
        // After the command name: field 3 (state) is f[0], field 22 (start time) is f[19].
        f.first().is_some_and(|s| *s != "Z" && *s != "X") && f.get(19) == Some(&self.start.as_str())
    }
}

/// scripts/testbed.sh in this checkout.
pub fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/testbed.sh")
}

/// The zmqperf binary under test (c's mount namespace hides its folder).
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_zmqperf")
}

/// Runs `cmd` with its stdout and stderr in `log` (a file, not a pipe: a daemon that kept the
/// descriptor could not hold the test), killing it at `secs`. Never panics (Drop uses it).
pub fn run_logged(mut cmd: Command, log: &Path, secs: u64) -> Ran {
    let out = match File::create(log) {
        Ok(f) => f,
        Err(e) => {
            return Ran {
                code: None,
                log: format!("cannot create {}: {e}", log.display()),
            }
        }
    };
    let err = out.try_clone().expect("clone log file");
    let child = cmd.stdin(Stdio::null()).stdout(out).stderr(err).spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return Ran {
                code: None,
                log: format!("cannot start {cmd:?}: {e}"),
            }
        }
    };
    let deadline = Instant::now() + Duration::from_secs(secs);
    let code = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code(),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let mut log = std::fs::read_to_string(log).unwrap_or_default();
    if code.is_none() {
        log.push_str(&format!("\n(killed after {secs} s)\n"));
    }
    Ran { code, log }
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

impl Testbed {
    /// Builds a testbed (with Slurm when `slurm`); panics with the script's log if it cannot.
    pub fn up(slurm: bool) -> Testbed {
        let (tb, ran) = Testbed::start(slurm, &[]);
        if ran.code != Some(0) {
            panic!(
                "the testbed could not be built (scripts/testbed.sh up {} exited {:?}):\n{}",
                tb.dir.display(),
                ran.code,
                ran.log
            );
        }
        tb
    }

    /// Runs `scripts/testbed.sh up` in a fresh folder with `args` and environment `envs`, and
    /// returns the testbed (down in Drop whatever up did) with what up said.
    pub fn start_with(slurm: bool, args: &[&str], envs: &[(&str, &str)]) -> (Testbed, Ran) {
        let dir = std::env::temp_dir().join(format!(
            "zmqperf-testbed-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the testbed folder");
        let mut tb = Testbed {
            dir,
            env: BTreeMap::new(),
            down: false,
        };
        let mut cmd = Command::new("bash");
        cmd.arg(script())
            .arg("up")
            .arg(&tb.dir)
            .args(["--bin", bin()]);
        if slurm {
            cmd.arg("--slurm");
        }
        cmd.args(args);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let ran = run_logged(cmd, &tb.dir.join("up.log"), UP_SECS);
        if let Ok(text) = std::fs::read_to_string(tb.dir.join("env")) {
            tb.env = text
                .lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        }
        (tb, ran)
    }

    /// [`Testbed::start_with`] without extra arguments.
    pub fn start(slurm: bool, envs: &[(&str, &str)]) -> (Testbed, Ran) {
        Testbed::start_with(slurm, &[], envs)
    }

    /// The testbed's folder (hosts files, env, logs, pids/).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A value of the `env` file (ZP_NS_B, ZP_ADDR_C, ZP_SSH_KEY, SLURM_CONF, ...).
    pub fn env(&self, key: &str) -> &str {
        self.env
            .get(key)
            .unwrap_or_else(|| panic!("no {key} in {}/env: {:?}", self.dir.display(), self.env))
    }

    /// The numeric id N of names zpN-* and subnet 10.77.N.0/24.
    pub fn id(&self) -> u32 {
        self.env("ZP_ID").parse().expect("ZP_ID is a number")
    }

    /// The network namespace of `host` (a, b, c, or sw for the bridge).
    pub fn ns(&self, host: &str) -> String {
        self.env(&format!("ZP_NS_{}", host.to_uppercase()))
            .to_string()
    }

    /// The data-plane address of `host`.
    pub fn addr(&self, host: &str) -> String {
        self.env(&format!("ZP_ADDR_{}", host.to_uppercase()))
            .to_string()
    }

    /// The hosts file for a launcher: `netns`, `ssh` or `srun`.
    pub fn hosts_file(&self, launcher: &str) -> PathBuf {
        self.dir.join(format!("hosts-{launcher}.toml"))
    }

    /// The hosts file for a launcher, parsed.
    pub fn hosts(&self, launcher: &str) -> toml::Table {
        let p = self.hosts_file(launcher);
        let text =
            std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
        text.parse()
            .unwrap_or_else(|e| panic!("{} is not TOML: {e}\n{text}", p.display()))
    }

    /// `program args` on `host`, entered the way hosts-netns.toml says (`ip netns exec` for a
    /// and b; for c, nsenter into its network, mount and time namespaces).
    pub fn on(&self, host: &str, argv: &[&str]) -> Command {
        let hosts = self.hosts("netns");
        let exec: Vec<String> = hosts["hosts"][host]["exec"]
            .as_array()
            .unwrap_or_else(|| panic!("no exec for host {host}"))
            .iter()
            .map(|v| v.as_str().expect("exec words are strings").to_string())
            .collect();
        let mut c = Command::new(&exec[0]);
        c.args(&exec[1..]).args(argv);
        c
    }

    /// The ssh command from a to `host` running `remote` (one command line for its shell).
    pub fn ssh(&self, host: &str, remote: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns("a"), "ssh", "-i"])
            .arg(self.env("ZP_SSH_KEY"))
            .args([
                "-o",
                "StrictHostKeyChecking=no",
                "-o",
                "UserKnownHostsFile=/dev/null",
            ])
            .args([
                "-o",
                "LogLevel=ERROR",
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=5",
            ])
            .arg(format!("root@{}", self.addr(host)))
            .arg(remote);
        c
    }

    /// srun from a onto `host`'s Slurm node (b or c), with the testbed's SLURM_CONF.
    pub fn srun(&self, host: &str, argv: &[&str]) -> Command {
        let node = self.env(&format!("ZP_SLURM_NODE_{}", host.to_uppercase()));
        let mut c = Command::new("ip");
        c.args([
            "netns",
            "exec",
            &self.ns("a"),
            "srun",
            "--quiet",
            "-N1",
            "-n1",
            "-w",
            node,
        ])
        .args(argv)
        .env("SLURM_CONF", self.env("SLURM_CONF"));
        c
    }

    /// `scripts/testbed.sh CMD DIR args` (link-down, link-up, shape, loss, unshape); panics
    /// with its output when it fails.
    pub fn script(&self, cmd: &str, args: &[&str]) {
        let mut c = Command::new("bash");
        c.arg(script()).arg(cmd).arg(&self.dir).args(args);
        let r = run_logged(c, &self.dir.join(format!("{cmd}.log")), 30);
        assert_eq!(r.code, Some(0), "testbed.sh {cmd} {args:?}:\n{}", r.log);
    }

    /// The processes the script recorded (pids/NAME.pid).
    pub fn recorded(&self) -> Vec<Recorded> {
        let mut v = Vec::new();
        let Ok(rd) = std::fs::read_dir(self.dir.join("pids")) else {
            return v;
        };
        for e in rd.flatten() {
            let name = e
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".pid")
                .to_string();
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            let mut w = text.split_whitespace();
            if let (Some(pid), Some(start)) = (w.next().and_then(|p| p.parse().ok()), w.next()) {
                v.push(Recorded {
                    name,
                    pid,
                    start: start.to_string(),
                });
            }
        }
        v.sort_by(|a, b| a.name.cmp(&b.name));
        v
    }

    /// The namespaces named zpN-* of this testbed that exist now.
    pub fn namespaces(&self) -> Vec<String> {
        let prefix = format!("zp{}-", self.id());
        namespaces()
            .into_iter()
            .filter(|n| n.starts_with(&prefix))
            .collect()
    }

    /// Takes the testbed down (idempotent) and returns what down said.
    pub fn down(&mut self) -> Ran {
        self.down_with(&[])
    }

    /// The same, with `envs` in down's environment (a failpoint). A down that failed is
    /// tried again when the testbed drops.
    pub fn down_with(&mut self, envs: &[(&str, &str)]) -> Ran {
        let mut c = Command::new("bash");
        c.arg(script()).arg("down").arg(&self.dir);
        for (k, v) in envs {
            c.env(k, v);
        }
        let ran = run_logged(c, &self.dir.join("down.log"), DOWN_SECS);
        self.down = ran.code == Some(0);
        ran
    }

    /// Takes the testbed down and asserts that nothing of it is left: no namespace, no
    /// recorded process.
    pub fn down_and_check(mut self) {
        let recorded = self.recorded();
        assert!(
            !recorded.is_empty(),
            "no process recorded in {}",
            self.dir.display()
        );
        let ran = self.down();
        assert_eq!(ran.code, Some(0), "down failed:\n{}", ran.log);
        assert_gone(&self, &recorded);
    }
}

/// Asserts that no namespace of `tb` is left and that none of `recorded` runs.
pub fn assert_gone(tb: &Testbed, recorded: &[Recorded]) {
    let left = tb.namespaces();
    assert!(left.is_empty(), "namespaces left after down: {left:?}");
    let alive: Vec<&Recorded> = recorded.iter().filter(|r| r.alive()).collect();
    assert!(alive.is_empty(), "processes left after down: {alive:?}");
}

/// Every network namespace on the machine (`ip netns list`).
pub fn namespaces() -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("run ip netns list");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(String::from)
        .collect()
}

impl Drop for Testbed {
    fn drop(&mut self) {
        if !self.down {
            let ran = self.down();
            if ran.code != Some(0) {
                eprintln!("testbed {}: down failed:\n{}", self.dir.display(), ran.log);
            }
        }
        if thread::panicking() {
            eprintln!("testbed folder kept for a look: {}", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
