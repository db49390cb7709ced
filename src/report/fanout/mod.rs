//! The fan-out report for a person: the Node harness's MIN / MAX / MEAN / HARMONIC MEAN
//! lines in ms, then the percentiles, delivery in total and per subscriber, the slowest
//! subscriber, and CPU and memory per process. The lines of each part are in `lines`, the
//! raw-socket floor in `floor`, `fanout --impl A,B` side by side in `side`.

mod floor;
mod lines;
mod side;
#[cfg(test)]
mod tests;

use crate::scenarios::fanout::{FanoutReport, ProcessUsage};
use crate::stats::{cause_of, GapPosition};
use crate::units::grouped;
use floor::floor_lines;
use lines::{latency_lines, publisher_lines, sub_loss, subscriber_lines};
pub use lines::{publisher_text, sub_name};
pub use side::SideBySide;
use std::fmt::Write;

/// `n` with its noun: `1 process`, `8 processes`.
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", grouped(n), if n == 1 { one } else { many })
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    let p = part as f64 * 100.0 / whole as f64;
    if part == whole {
        "100%".into()
    } else {
        format!("{p:.3}%")
    }
}

fn rate(v: f64) -> String {
    if v >= 100.0 {
        grouped(v.round() as u64)
    } else {
        format!("{v:.2}")
    }
}

fn cpu(u: &ProcessUsage) -> String {
    format!(
        "cpu {:.2} s user + {:.2} s sys, peak RSS {}",
        u.cpu_user_ms / 1000.0,
        u.cpu_sys_ms / 1000.0,
        mib(u.peak_rss_kib)
    )
}

fn ms_text(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

/// The report as text.
pub fn text(r: &FanoutReport) -> String {
    let mut out = String::new();
    let asked = r.requested_processes();
    headline(&mut out, r, asked);
    if let Some(p) = &r.publisher {
        publisher_lines(&mut out, p, r.lossy);
    }
    delivery_lines(&mut out, r, asked);
    let l = &r.latency;
    if let Some(line) = l.clock.not_shown() {
        // The publisher on another host's clock: no latency figure, what the check found.
        let _ = writeln!(out, "latency: {line}");
    } else {
        latency_lines(&mut out, r);
    }
    // A rate over one message would be its latency upside down.
    let dr = &r.delivered_per_sec;
    if dr.max > 0.0 && r.expected_per_subscriber >= 2 {
        let _ = writeln!(
            out,
            "delivered rate per subscriber: min {}, mean {}, max {} msg/s",
            rate(dr.min),
            rate(dr.mean),
            rate(dr.max)
        );
    }
    if let Some(t) = &r.ticks {
        let _ = writeln!(
            out,
            "per tick ({} record{} of {}): {}",
            t.records.len(),
            if t.records.len() == 1 { "" } else { "s" },
            crate::error::fmt_duration(std::time::Duration::from_secs_f64(t.interval_ms / 1e3)),
            t.drift.said
        );
    }
    host_lines(&mut out, r);
    process_lines(&mut out, r);
    if let Some(f) = &r.floor {
        floor_lines(&mut out, f);
    }
    out
}

/// The first line: the command, the transport, the subscribers and processes (what was
/// asked and what reported when processes were left out), and who played the subscribers.
fn headline(out: &mut String, r: &FanoutReport, asked: u32) {
    if asked == r.processes {
        let _ = writeln!(
            out,
            "{} over {}: {} subscribers ({} x {}) on {}",
            r.command,
            r.transport,
            grouped(r.subscribers),
            counted(r.processes as u64, "process", "processes"),
            grouped(r.subs_per_process as u64),
            r.endpoint
        );
    } else {
        // Processes were left out: the headline says what was asked and what reported.
        let _ = writeln!(
            out,
            "{} over {}: {} of {} subscribers reported ({} of {} x {}) on {}",
            r.command,
            r.transport,
            grouped(r.subscribers),
            grouped(asked as u64 * r.subs_per_process as u64),
            r.processes,
            counted(asked as u64, "process", "processes"),
            grouped(r.subs_per_process as u64),
            r.endpoint
        );
    }
    if let Some(i) = &r.implementation {
        let _ = writeln!(out, "subscribers played by {i}");
    }
}

/// Delivery in total, the processes left out, where the losses fell and their causes, and
/// the subscribers that missed messages.
fn delivery_lines(out: &mut String, r: &FanoutReport, asked: u32) {
    let d = &r.delivery;
    let _ = writeln!(
        out,
        "delivered: {} of {} ({}): {} lost, {} duplicated, {} reordered{}",
        grouped(d.received),
        grouped(d.expected),
        percent(d.received, d.expected),
        grouped(d.lost),
        grouped(d.duplicated),
        grouped(d.reordered),
        if asked == r.processes {
            ""
        } else {
            " (to the subscribers that reported)"
        }
    );
    for f in &r.failed_processes {
        let _ = writeln!(out, "  left out: subscriber process {f}");
    }
    if !r.stream_ended {
        let _ = writeln!(
            out,
            "  cut short: the end of the stream never came; {} messages per subscriber arrived at most, and how many the publisher meant to send is unknown (the loss above counts only holes before the last one seen)",
            grouped(r.expected_per_subscriber)
        );
    }
    if d.lost > 0 {
        let f = r.facts();
        let _ = writeln!(
            out,
            "  lost at the start {} ({}), in the middle {} ({}), at the end {} ({})",
            grouped(d.lost_at_start),
            cause_of(GapPosition::Start, &f).name(),
            grouped(d.lost_in_middle),
            cause_of(GapPosition::Middle, &f).name(),
            grouped(d.lost_at_end),
            cause_of(GapPosition::End, &f).name(),
        );
    }
    let _ = writeln!(
        out,
        "  {} of {} subscribers got all {}",
        grouped(r.complete_subscribers),
        grouped(r.subscribers),
        counted(r.expected_per_subscriber, "message", "messages")
    );
    for s in &r.worst {
        let _ = writeln!(out, "  {}", sub_loss(s));
    }
    let missing = (r.subscribers - r.complete_subscribers) as usize;
    if missing > r.worst.len() {
        let _ = writeln!(
            out,
            "  ... and {} more (--json lists every subscriber)",
            missing - r.worst.len()
        );
    }
}

/// One line per host of a fan-out across hosts: delivery and latency.
fn host_lines(out: &mut String, r: &FanoutReport) {
    if !r.per_host.is_empty() {
        let _ = writeln!(out, "per host:");
        for h in &r.per_host {
            let l = &h.latency;
            let _ = writeln!(
                out,
                "  {:<12} {} processes, {} subscribers: delivered {} of {} ({} lost, {} duplicated); latency mean {}, p50 {}, p99 {}, max {}{}",
                h.host,
                h.processes,
                grouped(h.subscribers),
                grouped(h.delivery.received),
                grouped(h.delivery.expected),
                grouped(h.delivery.lost),
                grouped(h.delivery.duplicated),
                ms_text(l.mean_ns),
                ms_text(l.p50_ns as f64),
                ms_text(l.p99_ns as f64),
                ms_text(l.max_ns as f64),
                h.clock_error_ns
                    .map(|e| format!(" (clocks of two hosts: within ±{})", ms_text(e as f64)))
                    .unwrap_or_default()
            );
        }
    }
}

/// The publisher's and the subscriber processes' pid, CPU and memory.
fn process_lines(out: &mut String, r: &FanoutReport) {
    let _ = writeln!(out, "processes:");
    if let Some(p) = &r.publisher {
        let _ = writeln!(
            out,
            "  publisher       pid {:<8} {}",
            p.usage.pid,
            cpu(&p.usage)
        );
    }
    subscriber_lines(out, "subscribers", "subscribers connected", &r.process_list);
}
