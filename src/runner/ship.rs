//! Which zmqperf runs on a host, and `ship = true`: the runner's own executable, stripped and
//! gzip-compressed, copied through the host's launcher into
//! `~/.cache/zmqperf/bin/zmqperf-<build-id>` when that file is missing, after checking that the
//! host's glibc and machine can run it. docs/portable.md describes it for users.

use super::hosts::Host;
use super::notice::{tell, Notice};
use crate::elf;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Where shipped builds live, under the remote user's home.
pub const CACHE_DIR: &str = ".cache/zmqperf/bin";

/// Why zmqperf could not be put on (or found for) a host: names the host and the cause.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ship to host {host}: {why}")]
pub struct ShipError {
    /// The host's name in the hosts file.
    pub host: String,
    /// What failed, with the launcher's own stderr where it said something.
    pub why: String,
}

impl From<ShipError> for crate::Error {
    fn from(e: ShipError) -> Self {
        // As runner::remote reports a host's launcher failing.
        crate::Error::NodeGone(e.to_string())
    }
}

/// The zmqperf path to run on `host`: the runner's own on its own host; its `zmqperf` when
/// it has one and does not ship; with `ship = true` the runner's own build in the host's
/// cache, copied there first if missing; otherwise the runner's own path (a shared
/// filesystem, or the same install everywhere). Every launcher call is bounded by `timeout`.
pub fn ensure_binary(host: &Host, timeout: Duration) -> crate::Result<String> {
    let exe = std::env::current_exe().map_err(|e| ShipError {
        host: host.name.clone(),
        why: format!("cannot find the runner's own executable: {e}"),
    })?;
    Ok(ensure_binary_of(host, &exe, timeout)?)
}

/// [`ensure_binary`] for another executable than the running one (tests ship the zmqperf
/// binary from a test process), with the typed error.
pub fn ensure_binary_of(host: &Host, exe: &Path, timeout: Duration) -> Result<String, ShipError> {
    if host.is_local() {
        return Ok(exe.display().to_string());
    }
    if !host.ship {
        return Ok(host
            .zmqperf
            .clone()
            .unwrap_or_else(|| exe.display().to_string()));
    }
    let fail = |why: String| ShipError {
        host: host.name.clone(),
        why,
    };
    let id = elf::build_id(exe).map_err(|e| fail(e.to_string()))?;
    let answer = call(host, &probe_words(&id), None, timeout)?;
    let probe = Probe::parse(&answer).map_err(fail)?;
    let remote = format!("{}/zmqperf-{id}", probe.dir);
    if probe.cached {
        return Ok(remote);
    }
    check_machine(&host.name, &probe, exe).map_err(fail)?;
    let payload = payload(exe).map_err(fail)?;
    let started = Instant::now();
    tell(&Notice::Shipping {
        host: &host.name,
        bytes: payload.gz.len(),
    });
    let said = call(
        host,
        &install_words(&probe.dir, &id),
        Some(&payload.gz),
        timeout,
    )?;
    if !said.lines().any(|l| l.trim() == "shipped") {
        return Err(fail(format!(
            "the copy did not confirm (it printed {:?})",
            said.trim()
        )));
    }
    tell(&Notice::Shipped {
        host: &host.name,
        remote: &remote,
        took: started.elapsed(),
    });
    Ok(remote)
}

/// What one launcher call learns before copying.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Probe {
    /// The cache folder, absolute ($HOME resolved on the host).
    dir: String,
    /// The build is there already.
    cached: bool,
    /// The first line of `getconf GNU_LIBC_VERSION` (or `ldd --version`); empty if neither ran.
    libc: String,
    /// `uname -m`.
    machine: String,
}

/// The probe: a shell is asked for $HOME (an argv launcher has none of its own), whether the
/// build is cached, the C library and the machine; the build-id is its first argument.
const PROBE: &str = r#"echo "home=$HOME"
if [ -x "$HOME/.cache/zmqperf/bin/zmqperf-$1" ]; then echo cached=yes; else echo cached=no; fi
echo "libc=$( (getconf GNU_LIBC_VERSION 2>/dev/null || ldd --version 2>&1) | head -n 1)"
echo "machine=$(uname -m)""#;

/// The copy: the gzip stream on stdin goes to a temporary name in the cache folder, is made
/// executable, must start and say the expected build-id, then is renamed into place (a copy
/// cut short never looks complete; a concurrent runner's rename is of a whole file too).
const INSTALL: &str = r#"set -e
d=$1; f="$1/zmqperf-$2"; t="$1/.zmqperf-$2.$$"
mkdir -p "$d"
trap 'rm -f "$t"' EXIT
gzip -dc > "$t"
chmod 755 "$t"
v=$("$t" --version 2>&1) || { echo "the copy does not start there: $v" >&2; exit 1; }
case "$v" in *"build-id: $2"*) ;; *) echo "the copy says another build-id: $v" >&2; exit 1 ;; esac
mv -f "$t" "$f"
echo shipped"#;

fn probe_words(id: &str) -> Vec<String> {
    ["sh", "-c", PROBE, "sh", id].map(String::from).to_vec()
}

fn install_words(dir: &str, id: &str) -> Vec<String> {
    ["sh", "-c", INSTALL, "sh", dir, id]
        .map(String::from)
        .to_vec()
}

impl Probe {
    fn parse(text: &str) -> Result<Probe, String> {
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                .map(|v| v.trim().to_string())
        };
        let Some(home) = field("home") else {
            return Err(format!(
                "the launcher did not run the probe (it printed {:?})",
                text.trim()
            ));
        };
        if !home.starts_with('/') {
            return Err(format!(
                "$HOME there is {home:?}, not an absolute path: set HOME for the remote user"
            ));
        }
        Ok(Probe {
            dir: format!("{}/{CACHE_DIR}", home.trim_end_matches('/')),
            cached: field("cached").as_deref() == Some("yes"),
            libc: field("libc").unwrap_or_default(),
            machine: field("machine").unwrap_or_default(),
        })
    }
}

/// Refuses a host whose machine or glibc cannot run `exe`, before anything is sent. A host
/// whose C library could not be read goes on: the copy is started there before it is kept.
fn check_machine(host: &str, probe: &Probe, exe: &Path) -> Result<(), String> {
    let ours = std::env::consts::ARCH;
    let theirs = match probe.machine.as_str() {
        "arm64" => "aarch64",
        m => m,
    };
    if !theirs.is_empty() && theirs != ours {
        return Err(format!(
            "host {host} is {theirs}, this zmqperf is built for {ours}: give host {host} a zmqperf of its own (zmqperf = \"PATH\")"
        ));
    }
    let Some(need) = elf::glibc_required(exe).map_err(|e| e.to_string())? else {
        return Ok(());
    };
    let build_hint = format!(
        "run the portable build (scripts/build-portable.sh: glibc 2.28) as the runner, or give host {host} a zmqperf of its own (zmqperf = \"PATH\")"
    );
    match elf::parse_libc_version(&probe.libc) {
        Some(have) if have < need => Err(format!(
            "host {host} has glibc {}.{}, this zmqperf needs {}.{} (GLIBC_{}.{}): {build_hint}",
            have.0, have.1, need.0, need.1, need.0, need.1
        )),
        Some(_) => Ok(()),
        None if probe.libc.is_empty() => Ok(()),
        None if probe.libc.contains("not found") => Ok(()),
        None => Err(format!(
            "host {host}'s C library is not glibc ({:?}), this zmqperf needs glibc {}.{}: give host {host} a zmqperf of its own (zmqperf = \"PATH\")",
            probe.libc, need.0, need.1
        )),
    }
}

/// What is sent: the executable, stripped when a tool for it is on PATH, gzip-compressed.
struct Payload {
    gz: Vec<u8>,
}

/// The payload of `exe`, made once per process and executable.
fn payload(exe: &Path) -> Result<Arc<Payload>, String> {
    static MADE: OnceLock<Mutex<HashMap<PathBuf, Arc<Payload>>>> = OnceLock::new();
    let mut made = MADE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(p) = made.get(exe) {
        return Ok(p.clone());
    }
    let bytes = match stripped(exe)? {
        Some(b) => b,
        None => {
            static SAID: AtomicBool = AtomicBool::new(false);
            if !SAID.swap(true, Ordering::Relaxed) {
                tell(&Notice::ShippingUnstripped { exe });
            }
            std::fs::read(exe).map_err(|e| format!("cannot read {}: {e}", exe.display()))?
        }
    };
    let mut gz = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 2),
        flate2::Compression::default(),
    );
    gz.write_all(&bytes)
        .map_err(|e| format!("compressing {}: {e}", exe.display()))?;
    let gz = gz
        .finish()
        .map_err(|e| format!("compressing {}: {e}", exe.display()))?;
    let p = Arc::new(Payload { gz });
    made.insert(exe.to_path_buf(), p.clone());
    Ok(p)
}

/// `exe` without its symbols and debug information (`strip`, else `objcopy --strip-all`);
/// None when neither tool is on PATH. The GNU build-id note stays.
fn stripped(exe: &Path) -> Result<Option<Vec<u8>>, String> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let tmp = std::env::temp_dir().join(format!(
        "zmqperf-ship-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let tries: [(&str, Vec<&std::ffi::OsStr>); 2] = [
        (
            "strip",
            vec!["-o".as_ref(), tmp.as_os_str(), exe.as_os_str()],
        ),
        (
            "objcopy",
            vec!["--strip-all".as_ref(), exe.as_os_str(), tmp.as_os_str()],
        ),
    ];
    for (tool, args) in tries {
        let out = match Command::new(tool).args(args).stdin(Stdio::null()).output() {
            Ok(o) => o,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("cannot run {tool}: {e}")),
        };
        let read = std::fs::read(&tmp);
        let _ = std::fs::remove_file(&tmp);
        if !out.status.success() {
            return Err(format!(
                "{tool} {} failed ({}): {}",
                exe.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        return read
            .map(Some)
            .map_err(|e| format!("{tool} left no {}: {e}", tmp.display()));
    }
    Ok(None)
}

/// Runs `words` on `host` through its launcher, `input` on its stdin, within `timeout`;
/// returns its stdout. A launcher that cannot start, exits non-zero or overruns is an error
/// with its stderr ("ssh exited 255: Permission denied (publickey)."); on a timeout the
/// launcher's process group (made for it here) is killed.
fn call(
    host: &Host,
    words: &[String],
    input: Option<&[u8]>,
    timeout: Duration,
) -> Result<String, ShipError> {
    use std::os::unix::process::CommandExt;
    let fail = |why: String| ShipError {
        host: host.name.clone(),
        why,
    };
    let argv = host.command(words);
    let Some((program, args)) = argv.split_first() else {
        return Err(fail("the host has an empty launcher".into()));
    };
    let name = Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| program.clone());
    let mut child = Command::new(program)
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| fail(format!("cannot start the launcher {program}: {e}")))?;
    if let (Some(data), Some(mut stdin)) = (input, child.stdin.take()) {
        // A thread of its own: a launcher that does not read would block the runner. It ends
        // when the pipe closes (the launcher exits or is killed).
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&data);
        });
    }
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => return Err(fail(format!("waiting for {name}: {e}"))),
        }
        if Instant::now() >= deadline {
            // The group made for this launcher: its id is the launcher's pid.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            let said = collect(&err, Duration::from_millis(200));
            return Err(fail(format!(
                "{name} did not finish within {:.0} s (killed){}",
                timeout.as_secs_f64(),
                tail(&said).map(|t| format!(": {t}")).unwrap_or_default()
            )));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // The launcher has exited; what it wrote is in the pipes (a remote process that outlives
    // it must not hold the runner: the reads are bounded too).
    let stdout = collect(&out, Duration::from_secs(2));
    let stderr = collect(&err, Duration::from_secs(2));
    if !status.success() {
        return Err(fail(failed(&name, status, &stderr)));
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

/// Reads all of `r` on a thread of its own; what it read comes on the channel.
fn drain(mut r: Box<dyn Read + Send>) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = r.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

/// How launcher `name` failed: its exit code or signal, and the last of its stderr.
fn failed(name: &str, status: std::process::ExitStatus, stderr: &[u8]) -> String {
    use std::os::unix::process::ExitStatusExt;
    let how = match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited {c}"),
        (None, Some(s)) => format!("was killed by signal {s}"),
        _ => format!("ended ({status})"),
    };
    format!(
        "{name} {how}{}",
        tail(stderr)
            .map(|t| format!(": {t}"))
            .unwrap_or_else(|| " (nothing on stderr)".into())
    )
}

fn collect(rx: &mpsc::Receiver<Vec<u8>>, wait: Duration) -> Vec<u8> {
    rx.recv_timeout(wait).unwrap_or_default()
}

/// The last lines of a launcher's stderr, joined, for an error message (None when empty).
fn tail(stderr: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return None;
    }
    let mut t = lines[lines.len().saturating_sub(3)..].join(" / ");
    if t.len() > 400 {
        let cut = (0..=400)
            .rev()
            .find(|&i| t.is_char_boundary(i))
            .unwrap_or(0);
        t.truncate(cut);
        t.push_str(" ...");
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_answer_is_read_and_checked() {
        let p =
            Probe::parse("home=/home/u/\ncached=no\nlibc=glibc 2.36\nmachine=x86_64\n").unwrap();
        assert_eq!(p.dir, "/home/u/.cache/zmqperf/bin");
        assert!(!p.cached);
        assert_eq!(p.libc, "glibc 2.36");
        assert_eq!(p.machine, "x86_64");
        let p = Probe::parse("motd\nhome=/root\ncached=yes\nlibc=\nmachine=\n").unwrap();
        assert!(p.cached && p.libc.is_empty());
        let e = Probe::parse("home=\ncached=no\n").unwrap_err();
        assert!(e.contains("not an absolute path"), "{e}");
        let e = Probe::parse("Welcome!\n").unwrap_err();
        assert!(
            e.contains("did not run the probe") && e.contains("Welcome!"),
            "{e}"
        );
    }

    #[test]
    fn an_old_glibc_a_foreign_libc_or_machine_is_refused_naming_both_sides() {
        let me = std::env::current_exe().unwrap();
        let need = elf::glibc_required(&me).unwrap().expect("a glibc build");
        let probe = |libc: &str, machine: &str| Probe {
            dir: "/h/.cache/zmqperf/bin".into(),
            cached: false,
            libc: libc.into(),
            machine: machine.into(),
        };
        let here = std::env::consts::ARCH;
        let e = check_machine("b", &probe("glibc 2.17", here), &me).unwrap_err();
        let want = format!(
            "host b has glibc 2.17, this zmqperf needs {}.{}",
            need.0, need.1
        );
        assert!(e.contains(&want), "{e}");
        assert!(e.contains("scripts/build-portable.sh"), "{e}");
        check_machine("b", &probe("glibc 9.99", here), &me).unwrap();
        check_machine("b", &probe("", here), &me).unwrap();
        let e = check_machine("b", &probe("musl libc (x86_64)", here), &me).unwrap_err();
        assert!(e.contains("not glibc"), "{e}");
        let e = check_machine("b", &probe("glibc 9.99", "riscv64"), &me).unwrap_err();
        assert!(e.contains("host b is riscv64") && e.contains(here), "{e}");
    }

    #[test]
    fn a_launchers_stderr_is_cut_to_its_last_lines() {
        assert_eq!(tail(b""), None);
        assert_eq!(tail(b"\n  \n"), None);
        assert_eq!(
            tail(b"Warning: x\nroot@b: Permission denied (publickey).\n").unwrap(),
            "Warning: x / root@b: Permission denied (publickey)."
        );
        assert_eq!(tail(b"1\n2\n3\n4\n").unwrap(), "2 / 3 / 4");
        assert!(tail(&[b'x'; 1000]).unwrap().ends_with(" ..."));
    }
}
