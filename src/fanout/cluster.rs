//! The parent side of a sub-cluster: starts the subscriber processes (swarm nodes in child
//! processes, speaking the control protocol of docs/control-protocol.md), starts each as
//! soon as it is ready, waits until every one has measured, releases them together, and
//! collects their reports. Each is stopped by its own handle, only those it started, when
//! one fails or the run overruns.

use crate::error::{Error, Result};
use crate::roles::publisher::PubResult;
use crate::roles::swarm::ChildReport;
use crate::roles::NodeSpec;
use crate::runner::control::{ToNode, VERSION};
use crate::runner::place::{in_process, Event as NodeEvent, Placed};
use std::path::Path;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// What the parent hears besides the subscriber processes: the publisher thread's end.
#[derive(Debug)]
pub enum Event {
    /// The publisher thread ended.
    Publisher(Box<Result<PubResult>>),
}

/// What a collecting caller is told as the run goes.
pub enum Heard {
    /// A subscriber process has connected all its sockets.
    Ready,
    /// The publisher thread ended.
    Publisher(Box<Result<PubResult>>),
}

struct Member {
    node: Box<dyn Placed>,
    measured: bool,
    report: Option<ChildReport>,
}

/// The running subscriber processes.
pub struct Cluster {
    members: Vec<Member>,
}

impl Cluster {
    /// Starts one process per swarm spec.
    pub fn spawn(exe: &Path, specs: &[NodeSpec]) -> Result<Cluster> {
        let mut members = Vec::with_capacity(specs.len());
        for spec in specs {
            members.push(Member {
                node: in_process(exe, spec)?,
                measured: false,
                report: None,
            });
        }
        Ok(Cluster { members })
    }

    fn fail(&mut self, e: Error) -> Error {
        self.kill_all();
        e
    }

    /// Takes in what subscriber process `i` said so far.
    fn poll_member(&mut self, i: usize, heard: &mut dyn FnMut(Heard) -> Result<()>) -> Result<()> {
        loop {
            let m = &mut self.members[i];
            let ev = match m.node.try_next() {
                Ok(Some(ev)) => ev,
                Ok(None) => return Ok(()),
                Err(e) => return Err(Error::Protocol(format!("subscriber process {i}: {e}"))),
            };
            match ev {
                NodeEvent::Ready(_) => {
                    m.node.send(ToNode::Start { v: VERSION })?;
                    heard(Heard::Ready)?;
                }
                NodeEvent::Sent => m.measured = true,
                NodeEvent::Done(r) => match *r {
                    Ok(r) => {
                        m.measured = true;
                        m.report = r.swarm.map(|b| *b);
                    }
                    Err(e) => {
                        return Err(Error::Protocol(format!(
                            "subscriber process {i} failed: {e}"
                        )))
                    }
                },
            }
        }
    }

    /// Waits until every process has measured or `deadline` passes, handing the publisher's
    /// end (from `publisher`) and each process's readiness to `heard`. On failure or
    /// overrun, every process is stopped.
    pub fn collect(
        &mut self,
        publisher: Option<&Receiver<Event>>,
        deadline: Instant,
        heard: &mut dyn FnMut(Heard) -> Result<()>,
    ) -> Result<()> {
        loop {
            for i in 0..self.members.len() {
                if let Err(e) = self.poll_member(i, heard) {
                    return Err(self.fail(e));
                }
            }
            if let Some(rx) = publisher {
                match rx.try_recv() {
                    Ok(Event::Publisher(r)) => {
                        if let Err(e) = heard(Heard::Publisher(r)) {
                            return Err(self.fail(e));
                        }
                    }
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => {}
                }
            }
            if self.members.iter().all(|m| m.measured) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let missing: Vec<String> = self
                    .members
                    .iter()
                    .enumerate()
                    .filter(|(_, m)| !m.measured)
                    .map(|(i, _)| i.to_string())
                    .collect();
                return Err(self.fail(Error::Protocol(format!(
                    "subscriber processes {} did not report in time and were stopped (a hang, or a run longer than the timeouts allow)",
                    missing.join(", ")
                ))));
            }
            // A look every 10 ms: readiness and the end of a measurement need no sharper
            // timing, and the publisher thread of this process keeps the CPU.
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Lets every process close its sockets and report (the control protocol's stop).
    pub fn release(&mut self) {
        for m in &mut self.members {
            let _ = m.node.send(ToNode::Stop { v: VERSION });
        }
    }

    /// Stops every process still running (each by its own handle) and reaps it.
    pub fn kill_all(&mut self) {
        for m in &mut self.members {
            m.node.kill();
        }
    }

    /// Releases the processes and takes their reports, in process order.
    pub fn into_reports(mut self) -> Result<Vec<ChildReport>> {
        self.release();
        let until = Instant::now() + Duration::from_secs(30);
        let mut reports = Vec::with_capacity(self.members.len());
        for i in 0..self.members.len() {
            while self.members[i].report.is_none() {
                let m = &mut self.members[i];
                match m.node.next(until) {
                    Ok(NodeEvent::Done(r)) => match *r {
                        Ok(r) => {
                            m.report = Some(r.swarm.map(|b| *b).ok_or_else(|| {
                                Error::Protocol(format!(
                                    "subscriber process {i} sent no swarm report"
                                ))
                            })?)
                        }
                        Err(e) => {
                            return Err(self.fail(Error::Protocol(format!(
                                "subscriber process {i} failed: {e}"
                            ))))
                        }
                    },
                    Ok(_) => {}
                    Err(e) => {
                        return Err(
                            self.fail(Error::Protocol(format!("subscriber process {i}: {e}")))
                        )
                    }
                }
            }
            reports.push(self.members[i].report.take().expect("just set"));
        }
        Ok(reports)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.kill_all();
    }
}
