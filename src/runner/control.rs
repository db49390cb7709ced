//! The control protocol between the runner and a node, versions 1 and 2 ([`VERSION`] the
//! highest): JSON objects, one per line (over a child's stdin and stdout, whatever launcher
//! carries them; over channels for threads, the same values). Version 2 adds the node's
//! `hello`, clock exchanges, heartbeats and the offsets in `start`; a node that says no
//! `hello` (a peer in another language) is spoken to in version 1. Documented in docs/control-protocol.md, with a JSON Schema in
//! schema/control-protocol.schema.json. Measured traffic never travels here.

use crate::roles::RoleReport;
pub use crate::roles::SentFacts;
use serde::{Deserialize, Serialize};

/// The highest protocol version this build speaks.
pub const VERSION: u32 = 2;
/// The first version, which every node speaks (a peer in another language).
pub const V1: u32 = 1;

fn known(v: u64) -> bool {
    (u64::from(V1)..=u64::from(VERSION)).contains(&v)
}

/// Who a node is, as its `hello` says (version 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The protocol versions it speaks.
    pub versions: Vec<u32>,
    /// zmqperf's version.
    pub version: String,
    /// The GNU build-id of its executable (hex; empty when it has none).
    pub build_id: String,
    /// Its process id on its host.
    pub pid: u32,
    /// Its host's name.
    pub host: String,
    /// Its machine: CPU, kernel, libzmq, interfaces (left out by peers and older builds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<Box<crate::model::HostEnvironment>>,
}

/// A node's message to the runner.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ToRunner {
    /// Version 2: the node's first line, once it has its spec.
    Hello {
        v: u32,
        #[serde(flatten)]
        hello: Hello,
    },
    /// Version 2: the answer to a `clock`: the runner's `t0`, the node's clock when it read
    /// the request (`t1`) and when it answered (`t2`), ns.
    Clock { v: u32, t0: u64, t1: u64, t2: u64 },
    /// Version 2: the answer to a `ping` (a heartbeat).
    Pong { v: u32, seq: u64 },
    /// Sockets bound and connected; the endpoints actually bound, in socket then bind order.
    Ready { v: u32, endpoints: Vec<String> },
    /// A source or ping has sent its last message; a source adds what it measured around
    /// its send loop.
    Sent {
        v: u32,
        #[serde(flatten)]
        facts: SentFacts,
    },
    /// The node ended; what it measured.
    Report { v: u32, report: Box<RoleReport> },
    /// Version 2, optional (`--interval`): a receiving node closed an interval (without
    /// its histogram, which comes with the report), for the runner to show as it happens.
    Interval {
        v: u32,
        node: String,
        record: Box<crate::model::IntervalRecord>,
    },
    /// The node failed; why, and the exit code the error carries.
    Error {
        v: u32,
        message: String,
        exit_code: i32,
    },
}

/// The runner's message to a node.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ToNode {
    /// The start barrier: every node is ready. Version 2 adds, for a receiver of streams
    /// sent on other hosts, what to add to each stream's send stamps to bring them onto its
    /// own clock (stream id, ns).
    Start {
        v: u32,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        send_offsets: Vec<(u32, i64)>,
    },
    /// Version 2: a clock exchange; the node answers at once with its clock.
    Clock { v: u32, t0: u64 },
    /// Version 2: a heartbeat; the node answers `pong` at once, whatever its role is doing.
    Ping { v: u32, seq: u64 },
    /// A passive node (sink, echo, proxy) should drain what is queued and report; a source
    /// whose `quit` is `wait-for-stop` closes and reports.
    Stop { v: u32 },
}

impl ToRunner {
    /// Reads one line, saying what is wrong with one that is not a message of this version.
    pub fn read(line: &str) -> std::result::Result<ToRunner, String> {
        if let Some(m) = ToRunner::parse(line) {
            return Ok(m);
        }
        let shown: String = line.chars().take(120).collect();
        match serde_json::from_str::<serde_json::Value>(line) {
            Ok(v) => match v.get("v").and_then(|x| x.as_u64()) {
                Some(n) if !known(n) => Err(format!(
                    "it speaks control protocol version {n}; this runner speaks versions {V1} to {VERSION} (docs/control-protocol.md)"
                )),
                _ => Err(format!(
                    "it wrote a control line this runner cannot read: {shown} (docs/control-protocol.md)"
                )),
            },
            Err(_) => Err(format!(
                "it wrote a line that is not a control message: {shown} (a node's stdout carries only the protocol's JSON lines; write anything else to stderr)"
            )),
        }
    }

    /// One line of the protocol.
    pub fn line(&self) -> String {
        serde_json::to_string(self).expect("control messages serialise")
    }

    /// Reads one line; None for a line that is not a control message of this version.
    pub fn parse(line: &str) -> Option<ToRunner> {
        // Read the envelope first and the report on its own: a report's histograms do not
        // survive serde's buffering of internally tagged enums.
        let mut v: serde_json::Value = serde_json::from_str(line).ok()?;
        if !known(v.get("v")?.as_u64()?) {
            return None;
        }
        if v.get("type")?.as_str()? == "interval" {
            let record = serde_json::from_value(v.get_mut("record")?.take()).ok()?;
            return Some(ToRunner::Interval {
                v: v.get("v")?.as_u64()? as u32,
                node: v.get("node")?.as_str()?.to_string(),
                record: Box::new(record),
            });
        }
        if v.get("type")?.as_str()? == "report" {
            let report = serde_json::from_value(v.get_mut("report")?.take()).ok()?;
            return Some(ToRunner::Report {
                v: v.get("v")?.as_u64()? as u32,
                report: Box::new(report),
            });
        }
        serde_json::from_value(v).ok()
    }
}

impl ToNode {
    /// Reads one line from the runner; None unless it is a message of this version.
    pub fn parse(line: &[u8]) -> Option<ToNode> {
        let m: ToNode = serde_json::from_slice(line).ok()?;
        let (ToNode::Start { v, .. }
        | ToNode::Stop { v }
        | ToNode::Clock { v, .. }
        | ToNode::Ping { v, .. }) = m;
        known(u64::from(v)).then_some(m)
    }

    /// The same message in version `v` (what the node it goes to speaks).
    pub fn in_version(self, v: u32) -> ToNode {
        match self {
            ToNode::Start { send_offsets, .. } => ToNode::Start { v, send_offsets },
            ToNode::Stop { .. } => ToNode::Stop { v },
            ToNode::Clock { t0, .. } => ToNode::Clock { v, t0 },
            ToNode::Ping { seq, .. } => ToNode::Ping { v, seq },
        }
    }

    /// The start barrier in version `v`, without offsets.
    pub fn start(v: u32) -> ToNode {
        ToNode::Start {
            v,
            send_offsets: Vec::new(),
        }
    }

    /// One line of the protocol.
    pub fn line(&self) -> String {
        serde_json::to_string(self).expect("control messages serialise")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_other_versions_are_refused() {
        let r = ToRunner::Ready {
            v: V1,
            endpoints: vec!["tcp://127.0.0.1:5555".into()],
        };
        assert_eq!(
            r.line(),
            r#"{"type":"ready","v":1,"endpoints":["tcp://127.0.0.1:5555"]}"#
        );
        assert!(matches!(
            ToRunner::parse(&r.line()),
            Some(ToRunner::Ready { .. })
        ));
        assert!(ToRunner::parse(r#"{"type":"sent","v":3}"#).is_none());
        assert!(ToRunner::parse(r#"{"type":"sent","v":2}"#).is_some());
        assert!(ToRunner::parse("not json").is_none());
        assert!(ToRunner::read("not json")
            .unwrap_err()
            .contains("not a control message"));
        assert!(ToRunner::read(r#"{"type":"sent","v":3}"#)
            .unwrap_err()
            .contains("version 3"));
        assert!(ToRunner::read(r#"{"type":"bogus","v":1}"#)
            .unwrap_err()
            .contains("cannot read"));
        assert_eq!(
            ToNode::parse(br#"{"type":"stop","v":1}"#),
            Some(ToNode::Stop { v: 1 })
        );
        assert_eq!(ToNode::parse(br#"{"type":"stop","v":9}"#), None);
        let rep = ToRunner::Report {
            v: VERSION,
            report: Box::new(RoleReport {
                latency: Some(crate::stats::LatencyHistogram::new()),
                ..Default::default()
            }),
        };
        assert!(matches!(
            ToRunner::parse(&rep.line()),
            Some(ToRunner::Report { .. })
        ));
        assert_eq!(ToNode::start(1).line(), r#"{"type":"start","v":1}"#);
        let st = ToNode::Start {
            v: 2,
            send_offsets: vec![(3, -5)],
        };
        assert_eq!(
            st.line(),
            r#"{"type":"start","v":2,"send_offsets":[[3,-5]]}"#
        );
        assert_eq!(ToNode::parse(st.line().as_bytes()), Some(st));
        let hello = ToRunner::Hello {
            v: 2,
            hello: Hello {
                versions: vec![1, 2],
                version: "0.1.0".into(),
                build_id: "ab12".into(),
                pid: 7,
                host: "b".into(),
                machine: None,
            },
        };
        assert!(!hello.line().contains("machine"), "{}", hello.line());
        assert!(matches!(
            ToRunner::parse(&hello.line()),
            Some(ToRunner::Hello { hello: h, .. }) if h.build_id == "ab12" && h.pid == 7 && h.machine.is_none()
        ));
        // With its machine, which comes back as it was sent.
        let machine = crate::host::host_environment("");
        let with = ToRunner::Hello {
            v: 2,
            hello: Hello {
                versions: vec![1, 2],
                version: "0.1.0".into(),
                build_id: "ab12".into(),
                pid: 7,
                host: "b".into(),
                machine: Some(Box::new(machine.clone())),
            },
        };
        assert!(matches!(
            ToRunner::parse(&with.line()),
            Some(ToRunner::Hello { hello: h, .. }) if h.machine.as_deref() == Some(&machine)
        ));
        assert!(matches!(
            ToRunner::parse(r#"{"type":"clock","v":2,"t0":1,"t1":2,"t2":3}"#),
            Some(ToRunner::Clock { t2: 3, .. })
        ));
        // A bare sent is whole; a source's figures travel with it and come back.
        assert!(matches!(
            ToRunner::parse(r#"{"type":"sent","v":1}"#),
            Some(ToRunner::Sent { facts, .. }) if facts == SentFacts::default()
        ));
        let facts = SentFacts {
            first_send_ns: Some(5),
            last_send_ns: Some(9),
            rss_before_kib: Some(100),
            rss_after_kib: Some(300),
            rss_peak_kib: Some(310),
        };
        let sent = ToRunner::Sent { v: VERSION, facts }.line();
        assert!(sent.contains(r#""rss_after_kib":300"#), "{sent}");
        assert!(matches!(
            ToRunner::parse(&sent),
            Some(ToRunner::Sent { facts: f, .. }) if f == facts
        ));
        let e = ToRunner::parse(r#"{"type":"error","v":1,"message":"no peer","exit_code":6}"#);
        assert!(matches!(e, Some(ToRunner::Error { exit_code: 6, .. })));
    }
}
