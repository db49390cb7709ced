//! The lines libzmq's perf tools print (kept byte for byte, so scripts that parse them
//! keep working), the `--detail` block that may follow, and the `--json` envelope.

use crate::clock::TimerCost;
use crate::scenarios::compat::{EchoResult, LatencyResult, ReceiverResult, SenderResult};
use crate::stats::{LatencySummary, LossSummary, Throughput};
use serde::Serialize;
use std::fmt::Write;

/// remote_lat's and inproc_lat's lines.
pub fn latency_lines(r: &LatencyResult) -> String {
    format!(
        "message size: {} [B]\nroundtrip count: {}\naverage latency: {:.3} [us]\n",
        r.message_size, r.roundtrip_count, r.average_latency_us
    )
}

/// local_thr's and inproc_thr's lines.
pub fn throughput_lines(r: &ReceiverResult) -> String {
    format!(
        "message size: {} [B]\nmessage count: {}\nmean throughput: {} [msg/s]\nmean throughput: {:.3} [Mb/s]\n",
        r.side.message_size, r.side.message_count, r.mean_throughput_msgs, r.mean_throughput_mbps
    )
}

/// A value's name as the JSON spells it ("middle", "zero-copy"), so the text and the JSON
/// agree.
fn wire_name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

fn us(ns: f64) -> String {
    format!("{:.3}", ns / 1000.0)
}

/// A distribution as a two-line table in microseconds.
pub fn distribution_table(s: &LatencySummary) -> String {
    let heads = [
        "min", "p50", "p90", "p99", "p99.9", "p99.99", "max", "mean", "stddev", "hmean",
    ];
    let vals = [
        us(s.min_ns as f64),
        us(s.p50_ns as f64),
        us(s.p90_ns as f64),
        us(s.p99_ns as f64),
        us(s.p99_9_ns as f64),
        us(s.p99_99_ns as f64),
        us(s.max_ns as f64),
        us(s.mean_ns),
        us(s.stddev_ns),
        us(s.harmonic_mean_ns),
    ];
    let w = vals.iter().map(|v| v.len()).max().unwrap_or(6).max(7);
    let mut out = String::new();
    for h in heads {
        let _ = write!(out, " {h:>w$}");
    }
    out.push('\n');
    for v in &vals {
        let _ = write!(out, " {v:>w$}");
    }
    out.push_str("  [us]\n");
    out
}

fn timer_line(t: &TimerCost, per: &str) -> String {
    format!(
        "timer: {:.1} ns per clock reading (resolution {} ns), {per}\n",
        t.mean_ns, t.resolution_ns
    )
}

fn rate_line(label: &str, t: &Throughput) -> String {
    format!(
        "{label}: {:.0} [msg/s], {:.3} [Mb/s] over {:.3} [ms]\n",
        t.msgs_per_sec(),
        t.mbit_per_sec(),
        t.elapsed_ns() as f64 / 1e6
    )
}

/// The loss ledger in words.
pub fn loss_lines(l: &LossSummary) -> String {
    let mut out = format!(
        "delivery: {} of {} received, {} lost, {} duplicated, {} reordered\n",
        l.received, l.expected, l.lost, l.duplicated, l.reordered
    );
    if l.lost > 0 {
        let _ = writeln!(
            out,
            "  lost at start {}, in the middle {}, at the end {} ({} gaps)",
            l.lost_at_start, l.lost_in_middle, l.lost_at_end, l.gap_count
        );
        for g in &l.gaps {
            let _ = writeln!(
                out,
                "  gap: {} messages from #{} ({})",
                g.count,
                g.first_seq,
                wire_name(&g.position)
            );
        }
    }
    out
}

/// remote_lat's `--detail` block.
pub fn latency_detail(r: &LatencyResult) -> String {
    let mut out = String::from("\n");
    match &r.rtt {
        Some(s) => {
            let _ = writeln!(
                out,
                "round-trip latency: {} samples, closed loop (one request in flight){}, {}",
                s.count,
                if s.count + 1 == r.roundtrip_count {
                    " (the first round trip, which carries the connection's handshake, left out)"
                } else {
                    ""
                },
                if r.header {
                    "measurement header checked on every reply"
                } else {
                    "no header (message smaller than 24 B or peer rewrote it)"
                }
            );
            out.push_str(&distribution_table(s));
            let _ = writeln!(
                out,
                "one-way estimate (round trip / 2): p50 {} [us], mean {} [us]",
                us(s.p50_ns as f64 / 2.0),
                us(s.mean_ns / 2.0)
            );
        }
        None => out.push_str(
            "plain mode: no per-round-trip samples (drop --plain to get the distribution)\n",
        ),
    }
    out.push_str(&timer_line(&r.timer, "2 readings per round trip"));
    out
}

/// local_lat's `--detail` block (local_lat prints nothing by default, as libzmq's).
pub fn echo_detail(r: &EchoResult) -> String {
    let mut out = format!(
        "echoed {} messages of {} [B] ({} echo) in {:.3} [ms]\n",
        r.echoed,
        r.message_size,
        wire_name(&r.echo),
        r.elapsed_ns as f64 / 1e6
    );
    if let Some(l) = &r.loss {
        out.push_str(&loss_lines(l));
    }
    out
}

/// local_thr's `--detail` block.
pub fn receiver_detail(r: &ReceiverResult) -> String {
    let mut out = String::from("\n");
    out.push_str(&rate_line("delivered rate (receiver)", &r.delivered));
    match (&r.loss, &r.one_way, r.clock.not_shown()) {
        // Send stamps of another host's clock: what the check found, and no figure.
        (Some(l), _, Some(line)) => {
            out.push_str(&loss_lines(l));
            let _ = writeln!(out, "{line}");
        }
        (Some(l), Some(s), None) => {
            out.push_str(&loss_lines(l));
            let _ = writeln!(
                out,
                "one-way latency, send to receipt ({}), {} time-stamped messages:",
                s.clock.provenance(),
                s.count
            );
            out.push_str(&distribution_table(s));
        }
        _ => out.push_str(
            "the sender sent plain bytes (no measurement header): no loss ledger or one-way latency\n",
        ),
    }
    out.push_str(&timer_line(&r.timer, "1 reading per time-stamped message"));
    out
}

/// remote_thr's `--detail` block (remote_thr prints nothing by default, as libzmq's).
pub fn sender_detail(r: &SenderResult) -> String {
    let mut out = rate_line("send rate (sender)", &r.send);
    if let Some(w) = r.subscription_wait_ns {
        let _ = writeln!(
            out,
            "waited {:.3} [ms] for the subscription before sending (no slow-joiner loss)",
            w as f64 / 1e6
        );
    }
    out
}

/// Where a compatible command measured: the libzmq, and for a tcp endpoint the network
/// interface that carried it (as in a run's environment).
#[derive(Serialize)]
pub struct CompatEnvironment {
    /// The measured libzmq's version.
    pub libzmq_version: String,
    /// The libzmq measured: file, capabilities, hash.
    pub libzmq: &'static crate::zmq::LibraryInfo,
    /// The interface of the tcp endpoint (none for ipc and inproc).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::model::NetworkInterface>,
}

impl CompatEnvironment {
    /// The libzmq in use, and `network`.
    pub fn here(network: Option<crate::model::NetworkInterface>) -> Self {
        CompatEnvironment {
            libzmq_version: crate::libzmq_version(),
            libzmq: crate::zmq::library(),
            network,
        }
    }
}

/// The `--json` line of the compatible command `kind`: its result in the envelope
/// (report::json), with the libzmq and the network as its environment; no newline.
pub fn json<T: Serialize>(
    kind: &str,
    result: &T,
    network: Option<crate::model::NetworkInterface>,
) -> String {
    let env = CompatEnvironment::here(network);
    let mut line = super::json::envelope(kind, None, Some(&env), result, false);
    line.pop();
    line
}
