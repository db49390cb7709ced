//! The control protocol between the runner and a node, version [`VERSION`]: JSON objects,
//! one per line (over a child's stdin and stdout; over channels for threads, the same
//! values). Documented in docs/control-protocol.md, with a JSON Schema in
//! schema/control-protocol.schema.json. Measured traffic never travels here.

use crate::roles::RoleReport;
pub use crate::roles::SentFacts;
use serde::{Deserialize, Serialize};

/// The protocol version every message carries.
pub const VERSION: u32 = 1;

/// A node's message to the runner.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ToRunner {
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
    /// The start barrier: every node is ready.
    Start { v: u32 },
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
                Some(n) if n != u64::from(VERSION) => Err(format!(
                    "it speaks control protocol version {n}; this runner speaks version {VERSION} (docs/control-protocol.md)"
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
        if v.get("v")?.as_u64()? != u64::from(VERSION) {
            return None;
        }
        if v.get("type")?.as_str()? == "report" {
            let report = serde_json::from_value(v.get_mut("report")?.take()).ok()?;
            return Some(ToRunner::Report {
                v: VERSION,
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
        let (ToNode::Start { v } | ToNode::Stop { v }) = m;
        (v == VERSION).then_some(m)
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
            v: VERSION,
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
        assert!(ToRunner::parse(r#"{"type":"sent","v":2}"#).is_none());
        assert!(ToRunner::parse("not json").is_none());
        assert!(ToRunner::read("not json")
            .unwrap_err()
            .contains("not a control message"));
        assert!(ToRunner::read(r#"{"type":"sent","v":2}"#)
            .unwrap_err()
            .contains("version 2"));
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
        assert_eq!(ToNode::Start { v: 1 }.line(), r#"{"type":"start","v":1}"#);
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
