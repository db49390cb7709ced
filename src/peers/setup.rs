//! `zmqperf peers setup`: checks what a peer requires, runs its setup steps and its
//! conformance test (each bounded in time, its output kept in the cache folder), and marks
//! it ready with its versions.

use super::{Manifest, Ready};
use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Longest one setup step or test may take (a cold Maven or cargo build on 2 cores).
const STEP_LIMIT: Duration = Duration::from_secs(20 * 60);

/// How one peer's setup went.
#[derive(Debug, Clone)]
pub struct SetupOutcome {
    /// The peer.
    pub name: String,
    /// Its versions once ready, or why it is not.
    pub result: std::result::Result<Ready, String>,
    /// Seconds taken.
    pub seconds: f64,
}

/// Whether `cmd` is a program on PATH (or a path that exists).
fn on_path(cmd: &str) -> bool {
    if cmd.contains('/') {
        return Path::new(cmd).exists();
    }
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(cmd).is_file()))
        .unwrap_or(false)
}

/// Runs one argv to its end (at most [`STEP_LIMIT`]), its output appended to `log`; the
/// error says which step failed and ends with the last lines of its output.
fn step(argv: &[String], log: &Path, what: &str) -> Result<String> {
    let (prog, args) = argv
        .split_first()
        .ok_or_else(|| Error::Protocol(format!("{what}: an empty command in the manifest")))?;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| Error::Io {
            op: format!("opening {}", log.display()),
            source: e,
        })?;
    let _ = writeln!(f, "$ {}", argv.join(" "));
    let out_path = log.with_extension("out");
    let out = std::fs::File::create(&out_path).map_err(|e| Error::Io {
        op: format!("creating {}", out_path.display()),
        source: e,
    })?;
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out.try_clone().map_err(|e| Error::Io {
            op: "sharing the log".into(),
            source: e,
        })?)
        .stderr(out)
        .spawn()
        .map_err(|e| Error::Io {
            op: format!("{what}: starting {prog}"),
            source: e,
        })?;
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| Error::Io {
            op: format!("{what}: waiting for {prog}"),
            source: e,
        })? {
            break Some(s);
        }
        if started.elapsed() > STEP_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let text = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = f.write_all(text.as_bytes());
    let tail: Vec<&str> = text.lines().rev().take(15).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    match status {
        Some(s) if s.success() => Ok(text),
        Some(s) => Err(Error::Protocol(format!(
            "{what} failed ({}): {}\n{}\n(the whole output: {})",
            crate::child::describe_status(s),
            argv.join(" "),
            tail.join("\n"),
            log.display()
        ))),
        None => Err(Error::Protocol(format!(
            "{what} took more than {} min and was stopped: {}",
            STEP_LIMIT.as_secs() / 60,
            argv.join(" ")
        ))),
    }
}

/// The versions a peer prints with its `version` command.
fn versions(m: &Manifest, log: &Path) -> Result<(String, String)> {
    let out = step(&m.expand(&m.version), log, "the version command")?;
    let line = out
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .unwrap_or("");
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| {
        Error::Protocol(format!(
            "peer {}: its version command printed no JSON line ({e}): {out}",
            m.name
        ))
    })?;
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("?").to_string();
    Ok((field("binding"), field("engine")))
}

fn setup_one(m: &Manifest, progress: &mut dyn FnMut(&str)) -> Result<Ready> {
    let started = Instant::now();
    let missing: Vec<String> = m
        .requires
        .iter()
        .filter(|r| !on_path(&r.command))
        .map(|r| format!("`{}` (install it: {})", r.command, r.install))
        .collect();
    if !missing.is_empty() {
        return Err(Error::Protocol(format!(
            "peer {} needs {}",
            m.name,
            missing.join(" and ")
        )));
    }
    let cache = m.cache();
    std::fs::create_dir_all(&cache).map_err(|e| Error::Io {
        op: format!("creating {}", cache.display()),
        source: e,
    })?;
    let _ = std::fs::remove_file(cache.join("ready.json"));
    let log = cache.join("setup.log");
    let _ = std::fs::remove_file(&log);
    let n = m.setup.len();
    for (i, s) in m.setup.iter().enumerate() {
        progress(&format!(
            "{}: setup step {}/{n}: {}",
            m.name,
            i + 1,
            s.join(" ")
        ));
        step(
            &m.expand(s),
            &log,
            &format!("peer {}: setup step {}", m.name, i + 1),
        )?;
    }
    progress(&format!("{}: conformance test", m.name));
    step(
        &m.expand(&m.test),
        &log,
        &format!("peer {}: the conformance test", m.name),
    )?;
    let (binding, engine) = versions(m, &log)?;
    let ready = Ready {
        binding,
        engine,
        setup_s: started.elapsed().as_secs_f64(),
        at_unix: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        sources: m.sources(),
    };
    let path = cache.join("ready.json");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&ready).expect("serialises"),
    )
    .map_err(|e| Error::Io {
        op: format!("writing {}", path.display()),
        source: e,
    })?;
    Ok(ready)
}

/// Sets up the peers named (every peer when `names` is empty), one after another; a failure
/// of one does not stop the others.
pub fn setup(names: &[String], progress: &mut dyn FnMut(&str)) -> Result<Vec<SetupOutcome>> {
    let all = super::all()?;
    let chosen: Vec<Manifest> = if names.is_empty() {
        all
    } else {
        names
            .iter()
            .map(|n| super::get(n))
            .collect::<Result<Vec<_>>>()?
    };
    let mut out = Vec::new();
    for m in chosen {
        let t = Instant::now();
        let result = setup_one(&m, progress).map_err(|e| e.to_string());
        out.push(SetupOutcome {
            name: m.name.clone(),
            result,
            seconds: t.elapsed().as_secs_f64(),
        });
    }
    Ok(out)
}
