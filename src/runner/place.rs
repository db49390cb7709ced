//! Placing roles: on threads of this process (inproc) or in child processes (ipc, tcp),
//! the same binary re-executed with the hidden `__role` command. Control traffic (ready,
//! start, report) goes over channels or the child's stdin and stdout, never over the
//! measured sockets.

use crate::child::ChildProc;
use crate::error::{Error, Result};
use crate::roles::{run_role, Control, RoleReport, RoleSpec, CHILD_ENV};
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

/// What a role tells the runner.
#[derive(Debug)]
pub enum Event {
    /// Bound or connected, with the endpoint actually bound.
    Ready(String),
    /// Done: its report, or why it failed.
    Done(Box<std::result::Result<RoleReport, String>>),
}

/// A role started somewhere, driven by the runner.
pub struct Placed {
    name: String,
    events: Receiver<Event>,
    /// On a thread: the start signal's channel; in a child process: None (its stdin).
    start: Option<Sender<()>>,
    child: Option<ChildProc>,
}

impl Placed {
    /// Waits for the role's ready message until `deadline`.
    pub fn ready(&mut self, deadline: Instant) -> Result<String> {
        match self.next(deadline)? {
            Event::Ready(ep) => Ok(ep),
            Event::Done(r) => match *r {
                Err(e) => Err(Error::Protocol(format!("{} failed: {e}", self.name))),
                Ok(_) => Err(Error::Protocol(format!(
                    "{} ended before it was ready",
                    self.name
                ))),
            },
        }
    }

    /// Sends the start signal.
    pub fn start(&mut self) -> Result<()> {
        let sent = match (&self.start, &mut self.child) {
            (Some(tx), _) => tx
                .send(())
                .map_err(|_| std::io::Error::other("the role thread has ended")),
            (None, Some(c)) => c.write_line("START"),
            (None, None) => Err(std::io::Error::other("nowhere to send it")),
        };
        sent.map_err(|e| Error::Io {
            op: format!("starting {}", self.name),
            source: e,
        })
    }

    /// Waits for the role's report until `deadline`.
    pub fn finish(&mut self, deadline: Instant) -> Result<RoleReport> {
        match self.next(deadline)? {
            Event::Done(r) => {
                (*r).map_err(|e| Error::Protocol(format!("{} failed: {e}", self.name)))
            }
            Event::Ready(_) => Err(Error::Protocol(format!("{} said ready twice", self.name))),
        }
    }

    fn next(&mut self, deadline: Instant) -> Result<Event> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.events.recv_timeout(left) {
            Ok(ev) => Ok(ev),
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Err(Error::Protocol(format!(
                    "{} did not answer in time and was stopped (a hang, or a count too large for --case-timeout)",
                    self.name
                )))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let why = self.exit_reason();
                Err(Error::Protocol(format!("{} died: {why}", self.name)))
            }
        }
    }

    fn exit_reason(&mut self) -> String {
        match self.child.as_mut() {
            Some(child) => child.exit_reason(),
            None => "its thread ended without a report".into(),
        }
    }

    /// Ends a child process (only the one this runner started, by its handle).
    pub fn kill(&mut self) {
        if let Some(c) = self.child.as_mut() {
            c.kill();
        }
    }
}

struct ThreadControl {
    events: Sender<Event>,
    start: Receiver<()>,
}

impl Control for ThreadControl {
    fn ready(&mut self, endpoint: &str) -> Result<()> {
        self.events
            .send(Event::Ready(endpoint.to_string()))
            .map_err(|_| Error::Protocol("the runner went away".into()))
    }

    fn wait_start(&mut self, timeout: Duration) -> Result<()> {
        self.start
            .recv_timeout(timeout)
            .map_err(|_| Error::Protocol("no start signal from the runner".into()))
    }
}

/// Starts a role on a thread of this process, sharing `ctx` (needed for inproc).
pub fn on_thread(ctx: &zmq::Context, spec: RoleSpec, name: String) -> Placed {
    let (etx, erx) = mpsc::channel();
    let (stx, srx) = mpsc::channel();
    let ctx = ctx.clone();
    thread::spawn(move || {
        let mut ctl = ThreadControl {
            events: etx.clone(),
            start: srx,
        };
        let r = run_role(&ctx, &spec, &mut ctl).map_err(|e| e.to_string());
        let _ = etx.send(Event::Done(Box::new(r)));
    });
    Placed {
        name,
        events: erx,
        start: Some(stx),
        child: None,
    }
}

/// Starts a role in a child process: `exe __role '<spec as JSON>'`.
pub fn in_process(exe: &Path, spec: &RoleSpec, name: String) -> Result<Placed> {
    let json = serde_json::to_string(spec).expect("specs serialise");
    let (etx, erx) = mpsc::channel();
    let child = ChildProc::spawn(
        exe,
        &["__role", &json],
        &[(CHILD_ENV, "1")],
        &name,
        etx,
        |line| {
            if let Some(ep) = line.strip_prefix("READY ") {
                Some(Event::Ready(ep.to_string()))
            } else if let Some(json) = line.strip_prefix("REPORT ") {
                Some(Event::Done(Box::new(
                    serde_json::from_str(json).map_err(|e| format!("unreadable report: {e}")),
                )))
            } else {
                line.strip_prefix("ERROR ")
                    .map(|err| Event::Done(Box::new(Err(err.to_string()))))
            }
        },
        None,
    )?;
    Ok(Placed {
        name,
        events: erx,
        start: None,
        child: Some(child),
    })
}

/// The child's side: speaks the line protocol on stdin and stdout.
pub struct StdioControl;

impl Control for StdioControl {
    fn ready(&mut self, endpoint: &str) -> Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "READY {endpoint}")
            .and_then(|_| out.flush())
            .map_err(|e| Error::Io {
                op: "telling the runner".into(),
                source: e,
            })
    }

    fn wait_start(&mut self, timeout: Duration) -> Result<()> {
        let mut fds = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one pollfd we own, for stdin.
        let n = unsafe { libc::poll(&mut fds, 1, ms) };
        if n <= 0 {
            return Err(Error::Protocol("no start signal from the runner".into()));
        }
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map_err(|e| Error::Io {
                op: "reading the start signal".into(),
                source: e,
            })?;
        if line.trim() != "START" {
            return Err(Error::Protocol(format!(
                "expected START, got '{}'",
                line.trim()
            )));
        }
        Ok(())
    }
}

/// The hidden `__role` command: plays one role and prints its report.
pub fn child_main(spec_json: &str) -> i32 {
    let spec: RoleSpec = match serde_json::from_str(spec_json) {
        Ok(s) => s,
        Err(e) => {
            println!("ERROR bad role spec: {e}");
            return 2;
        }
    };
    let ctx = zmq::Context::new();
    let r = run_role(&ctx, &spec, &mut StdioControl);
    match r {
        Ok(report) => {
            println!(
                "REPORT {}",
                serde_json::to_string(&report).expect("reports serialise")
            );
            0
        }
        Err(e) => {
            println!("ERROR {e}");
            e.exit_code()
        }
    }
}
