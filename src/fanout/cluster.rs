//! The parent side of a sub-cluster: starts the subscriber processes (this binary
//! re-executed with the hidden `__subs` command), reads their lines, and stops them (each
//! by its own handle, only those it started) when they fail or overrun.

use super::publisher::PubResult;
use super::subscribers::{ChildReport, ChildSpec};
use crate::child::ChildProc;
use crate::error::{Error, Result};
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// The hidden command a subscriber process runs.
pub const CHILD_COMMAND: &str = "__subs";

/// What the parent hears, from the subscriber processes or the publisher thread.
#[derive(Debug)]
pub enum Event {
    /// Subscriber process `n` has connected all its sockets.
    Ready(u32),
    /// Subscriber process `n` is done, with its report.
    Report(u32, Box<ChildReport>),
    /// Subscriber process `n` failed, with its message.
    Failed(u32, String),
    /// Subscriber process `n` closed its output (it ended or died).
    Closed(u32),
    /// The publisher thread ended.
    Publisher(Box<Result<PubResult>>),
}

struct Member {
    /// Its stdin is held open until the child is released (or the parent is gone): it then
    /// closes its sockets and exits.
    proc: ChildProc,
    report: Option<ChildReport>,
}

/// The running subscriber processes.
pub struct Cluster {
    members: Vec<Member>,
}

impl Cluster {
    /// Starts one process per spec; their lines arrive on `events`.
    pub fn spawn(exe: &Path, specs: &[ChildSpec], events: &Sender<Event>) -> Result<Cluster> {
        let mut cluster = Cluster {
            members: Vec::with_capacity(specs.len()),
        };
        for spec in specs {
            let json = serde_json::to_string(spec).expect("specs serialise");
            let n = spec.process;
            let proc = ChildProc::spawn(
                exe,
                &[CHILD_COMMAND, &json],
                &[],
                &format!("subscriber process {n}"),
                events.clone(),
                move |line| {
                    if line == "READY" {
                        Some(Event::Ready(n))
                    } else if let Some(json) = line.strip_prefix("REPORT ") {
                        Some(match serde_json::from_str(json) {
                            Ok(r) => Event::Report(n, Box::new(r)),
                            Err(e) => Event::Failed(n, format!("unreadable report: {e}")),
                        })
                    } else {
                        line.strip_prefix("ERROR ")
                            .map(|msg| Event::Failed(n, msg.to_string()))
                    }
                },
                Some(Event::Closed(n)),
            )?;
            cluster.members.push(Member { proc, report: None });
        }
        Ok(cluster)
    }

    /// Takes in one event about a subscriber process. Returns an error when the process
    /// failed; `Ready` and the publisher's events are handed back.
    pub fn absorb(&mut self, ev: Event) -> Result<Option<Event>> {
        match ev {
            Event::Ready(n) => Ok(Some(Event::Ready(n))),
            Event::Report(n, r) => {
                if let Some(m) = self.members.get_mut(n as usize) {
                    m.report = Some(*r);
                }
                Ok(None)
            }
            Event::Failed(n, msg) => Err(Error::Protocol(format!(
                "subscriber process {n} failed: {msg}"
            ))),
            Event::Closed(n) => {
                let Some(m) = self.members.get_mut(n as usize) else {
                    return Ok(None);
                };
                if m.report.is_some() {
                    return Ok(None);
                }
                let why = m.proc.exit_reason();
                Err(Error::Protocol(format!(
                    "subscriber process {n} (pid {}) died without a report: {why}",
                    m.proc.id()
                )))
            }
            other @ Event::Publisher(_) => Ok(Some(other)),
        }
    }

    /// Whether every process has reported.
    pub fn all_reported(&self) -> bool {
        self.members.iter().all(|m| m.report.is_some())
    }

    /// Waits for events until every process has reported or `deadline` passes, handing
    /// other events to `other`. On failure or overrun, every process is stopped.
    pub fn collect(
        &mut self,
        events: &Receiver<Event>,
        deadline: Instant,
        other: &mut dyn FnMut(Event) -> Result<()>,
    ) -> Result<()> {
        while !self.all_reported() {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = match events.recv_timeout(left) {
                Ok(ev) => ev,
                Err(RecvTimeoutError::Timeout) => {
                    let missing: Vec<String> = self
                        .members
                        .iter()
                        .enumerate()
                        .filter(|(_, m)| m.report.is_none())
                        .map(|(i, _)| i.to_string())
                        .collect();
                    self.kill_all();
                    return Err(Error::Protocol(format!(
                        "subscriber processes {} did not report in time and were stopped (a hang, or a run longer than the timeouts allow)",
                        missing.join(", ")
                    )));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.kill_all();
                    return Err(Error::Protocol(
                        "lost contact with the subscriber processes".into(),
                    ));
                }
            };
            let handed = match self.absorb(ev) {
                Ok(h) => h,
                Err(e) => {
                    self.kill_all();
                    return Err(e);
                }
            };
            if let Some(ev) = handed {
                if let Err(e) = other(ev) {
                    self.kill_all();
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Lets every process close its sockets and exit (closes their stdin).
    pub fn release(&mut self) {
        for m in &mut self.members {
            m.proc.close_stdin();
        }
    }

    /// Stops every process still running (each by its own handle) and reaps it.
    pub fn kill_all(&mut self) {
        for m in &mut self.members {
            m.proc.kill();
        }
    }

    /// The reports, in process order, once every process has reported; releases them.
    pub fn into_reports(mut self) -> Vec<ChildReport> {
        self.release();
        let reports = self
            .members
            .iter_mut()
            .filter_map(|m| m.report.take())
            .collect();
        // Reap the processes; they exit right after their report.
        let until = Instant::now() + Duration::from_secs(5);
        for m in &mut self.members {
            m.proc.wait_until(until);
        }
        reports
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.kill_all();
    }
}
