//! Child processes of this binary (roles of the suite, subscriber processes of a fan-out,
//! the sender of a diagnose experiment): started with piped stdio, their stdout lines
//! turned into events on a channel by a reader thread, their stderr kept for the error
//! message if they die, and stopped by their own handle (never by name or group) if they
//! are still running when dropped.

use crate::error::{Error, Result};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// A running child process.
pub struct ChildProc {
    child: Child,
    stdin: Input,
    stderr: Option<thread::JoinHandle<String>>,
}

/// A child's stdin, shared by whoever writes it lines (the runner, a heartbeat).
#[derive(Clone)]
pub struct Input(Arc<Mutex<Option<ChildStdin>>>);

impl Input {
    /// Writes one line (whole, under the lock).
    pub fn write_line(&self, line: &str) -> std::io::Result<()> {
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let s = g
            .as_mut()
            .ok_or_else(|| std::io::Error::other("its input is closed"))?;
        writeln!(s, "{line}")?;
        s.flush()
    }

    /// Closes it.
    pub fn close(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Whether it is closed.
    pub fn is_closed(&self) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).is_none()
    }
}

impl ChildProc {
    /// Starts `exe args...` (with `envs` added), describing it as `what` in errors. Each
    /// line it prints goes through `parse`; what that returns is sent on `events`. When its
    /// output ends, `on_close` (if any) is sent.
    pub fn spawn<E: Send + 'static>(
        exe: &Path,
        args: &[&str],
        envs: &[(&str, &str)],
        what: &str,
        events: Sender<E>,
        parse: impl Fn(String) -> Option<E> + Send + 'static,
        on_close: Option<E>,
    ) -> Result<ChildProc> {
        let mut child = Command::new(exe)
            .args(args)
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::Io {
                op: format!("starting {what} ({})", exe.display()),
                source: e,
            })?;
        let out = child.stdout.take().expect("stdout is piped");
        thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
                if let Some(ev) = parse(line) {
                    if events.send(ev).is_err() {
                        return;
                    }
                }
            }
            if let Some(ev) = on_close {
                let _ = events.send(ev);
            }
        });
        let mut err = child.stderr.take().expect("stderr is piped");
        let stderr = thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        });
        Ok(ChildProc {
            stdin: Input(Arc::new(Mutex::new(child.stdin.take()))),
            child,
            stderr: Some(stderr),
        })
    }

    /// Its process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Writes one line to its stdin.
    pub fn write_line(&mut self, line: &str) -> std::io::Result<()> {
        self.stdin.write_line(line)
    }

    /// Its stdin, to write lines from another thread.
    pub fn input(&self) -> Input {
        self.stdin.clone()
    }

    /// Closes its stdin (the children here take that as "finish and exit").
    pub fn close_stdin(&mut self) {
        self.stdin.close();
    }

    /// Its exit code, once it has ended (None while it runs, or when a signal ended it).
    pub fn exit_code(&mut self) -> Option<i32> {
        self.child.try_wait().ok().flatten().and_then(|s| s.code())
    }

    /// Whether it has ended.
    pub fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits until `deadline` for it to end; stops it if it does not. True if it ended by
    /// itself.
    pub fn wait_until(&mut self, deadline: Instant) -> bool {
        loop {
            if self.exited() {
                return true;
            }
            if Instant::now() >= deadline {
                self.kill();
                return false;
            }
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// Stops it (by its handle) and reaps it.
    pub fn kill(&mut self) {
        if !self.exited() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }

    /// How it ended, for an error message: its exit status and the last lines it wrote on
    /// stderr. Waits up to 2 s for it to end, then stops it.
    pub fn exit_reason(&mut self) -> String {
        self.wait_until(Instant::now() + Duration::from_secs(2));
        let status = self
            .child
            .wait()
            .map(describe_status)
            .unwrap_or_else(|e| e.to_string());
        let err = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        let tail: Vec<&str> = err.lines().rev().take(3).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        if tail.is_empty() {
            status
        } else {
            format!("{status}: {}", tail.join(" / "))
        }
    }
}

/// How long a child whose input is closed (told to finish: a node that reported) may take
/// to end by itself when its handle goes, before it is stopped: its exit (libzmq's context
/// ended, a tool's report over it) is its own.
const EXIT_GRACE: Duration = Duration::from_secs(2);

impl Drop for ChildProc {
    fn drop(&mut self) {
        if self.stdin.is_closed() {
            self.wait_until(Instant::now() + EXIT_GRACE);
        }
        self.kill();
    }
}

/// How a process ended, in words: "exited with code 3", "killed by signal 9 (SIGKILL)".
pub fn describe_status(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = s.code() {
        return format!("exited with code {code}");
    }
    match s.signal() {
        Some(sig) => {
            let name = match sig {
                1 => " (SIGHUP)",
                2 => " (SIGINT)",
                6 => " (SIGABRT)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                13 => " (SIGPIPE)",
                15 => " (SIGTERM)",
                _ => "",
            };
            let core = if s.core_dumped() { ", core dumped" } else { "" };
            format!("killed by signal {sig}{name}{core}")
        }
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn sh(script: &str, on_close: Option<String>) -> (ChildProc, mpsc::Receiver<String>) {
        let (tx, rx) = mpsc::channel();
        let p = ChildProc::spawn(
            Path::new("/bin/sh"),
            &["-c", script],
            &[("ZP_CHILD_TEST", "yes")],
            "a test shell",
            tx,
            |l| l.strip_prefix("SAY ").map(str::to_string),
            on_close,
        )
        .expect("sh starts");
        (p, rx)
    }

    #[test]
    fn lines_become_events_and_the_close_is_announced() {
        let (mut p, rx) = sh(
            "read x; echo \"SAY $x $ZP_CHILD_TEST\"; echo noise; echo 'SAY bye'",
            Some("closed".into()),
        );
        p.write_line("hello").unwrap();
        let t = Duration::from_secs(10);
        assert_eq!(rx.recv_timeout(t).unwrap(), "hello yes");
        assert_eq!(rx.recv_timeout(t).unwrap(), "bye");
        assert_eq!(rx.recv_timeout(t).unwrap(), "closed");
        assert!(p.wait_until(Instant::now() + t));
    }

    #[test]
    fn a_dead_child_says_why_and_a_hung_one_is_stopped() {
        let (mut p, _rx) = sh("echo one >&2; echo two >&2; exit 3", None);
        let why = p.exit_reason();
        assert!(why.contains("3") && why.ends_with("one / two"), "{why}");

        let (mut p, _rx) = sh("sleep 30", None);
        let t0 = Instant::now();
        assert!(!p.wait_until(Instant::now() + Duration::from_millis(50)));
        assert!(p.exited());
        assert!(t0.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn exit_statuses_are_said_in_words() {
        use std::os::unix::process::ExitStatusExt;
        let st = |raw| describe_status(std::process::ExitStatus::from_raw(raw));
        assert_eq!(st(3 << 8), "exited with code 3");
        assert_eq!(st(9), "killed by signal 9 (SIGKILL)");
        assert_eq!(st(11 | 0x80), "killed by signal 11 (SIGSEGV), core dumped");
    }
}
