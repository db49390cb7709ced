//! The parts of the fan-out report: the latency block, a subscriber's loss, the
//! publisher's lines and the subscriber processes.

use super::{counted, cpu, ms, rate};
use crate::report::first_middle_hole;
use crate::roles::publisher::PubResult;
use crate::roles::swarm::{StopReason, SubReport};
use crate::scenarios::fanout::FanoutReport;
use crate::units::grouped;
use std::fmt::Write;

/// The latency block over all deliveries, read on one clock (or converted to it).
pub(super) fn latency_lines(out: &mut String, r: &FanoutReport) {
    let l = &r.latency;
    let _ = writeln!(
        out,
        "latency of {} deliveries, from the publisher's send call to the subscriber's receipt{}:",
        grouped(l.count),
        if l.clock.is_same_clock() {
            String::new()
        } else {
            format!(" ({})", l.clock.provenance())
        }
    );
    let _ = writeln!(out, "  MIN: {}ms", ms(l.min_ns as f64));
    let _ = writeln!(out, "  MAX: {}ms", ms(l.max_ns as f64));
    let _ = writeln!(out, "  MEAN: {}ms", ms(l.mean_ns));
    let _ = writeln!(out, "  HARMONIC MEAN: {}ms", ms(l.harmonic_mean_ns));
    let _ = writeln!(
        out,
        "  {:>9}{:>9}{:>9}{:>9}{:>9}{:>9}",
        "p50", "p90", "p99", "p99.9", "p99.99", "stddev"
    );
    let _ = writeln!(
        out,
        "  {:>9}{:>9}{:>9}{:>9}{:>9}{:>9}  [ms]",
        ms(l.p50_ns as f64),
        ms(l.p90_ns as f64),
        ms(l.p99_ns as f64),
        ms(l.p99_9_ns as f64),
        ms(l.p99_99_ns as f64),
        ms(l.stddev_ns)
    );
    if let Some(s) = &r.slowest {
        let _ = writeln!(
            out,
            "slowest subscriber: {}: mean {} ms, min {} ms, max {} ms over {}",
            sub_name(s),
            ms(s.latency_mean_ns),
            ms(s.latency_min_ns as f64),
            ms(s.latency_max_ns as f64),
            counted(s.latency_count, "message", "messages")
        );
    }
    if let Some(note) = l.clock.error_note(l.p50_ns as f64) {
        let _ = writeln!(out, "  note: {note}");
    }
}

fn stop_text(s: StopReason) -> &'static str {
    match s {
        StopReason::AllEnded => "every subscriber saw the end",
        StopReason::Idle => "idle (the end never came to some subscribers)",
        StopReason::NothingArrived => "nothing arrived",
        StopReason::ParentGone => "told to stop by the runner (or its parent went away) before every subscriber saw the end",
    }
}

/// A subscriber's name in the report: `proc 3 sub 417`.
pub fn sub_name(s: &SubReport) -> String {
    format!("proc {} sub {}", s.process, s.sub)
}

pub(super) fn sub_loss(s: &SubReport) -> String {
    let l = &s.loss;
    let mut t = format!(
        "{} got {} of {}",
        sub_name(s),
        grouped(l.received),
        grouped(l.expected)
    );
    if l.lost > 0 {
        let _ = write!(
            t,
            " ({} lost: {} at the start, {} in the middle, {} at the end",
            grouped(l.lost),
            l.lost_at_start,
            l.lost_in_middle,
            l.lost_at_end
        );
        if let Some(first) = first_middle_hole(l) {
            let _ = write!(t, "; in the middle {first}");
        }
        t.push(')');
    }
    if l.duplicated > 0 || l.reordered > 0 {
        let _ = write!(
            t,
            " ({} duplicated, {} reordered)",
            l.duplicated, l.reordered
        );
    }
    t
}

pub(super) fn publisher_lines(out: &mut String, p: &PubResult, lossy: bool) {
    let schedule = if p.interval_ms > 0.0 {
        format!("every {} ms", p.interval_ms)
    } else {
        "as fast as possible".to_string()
    };
    let warm = match p.warmup_ticks {
        0 => String::new(),
        1 => " after 1 warm-up tick".to_string(),
        n => format!(" after {n} warm-up ticks"),
    };
    let _ = writeln!(
        out,
        "publisher: {} messages of {} B ({} passes x {} {schedule}{warm}) to {} subscribers, {} {:.2} s",
        grouped(p.messages),
        p.message_size,
        grouped(p.passes),
        grouped(p.per_tick),
        grouped(p.subscribers),
        if lossy {
            "present when it started (--lossy: no wait) after"
        } else {
            "who joined in"
        },
        p.join_wait_ns as f64 / 1e9
    );
    if let Some(why) = &p.interrupted {
        let _ = writeln!(
            out,
            "  {why}: its last message carried the end mark; the figures cover the {} messages sent",
            grouped(p.messages)
        );
    }
    let _ = write!(
        out,
        "  sent in {:.3} s ({} msg/s admitted)",
        p.send.elapsed_ns() as f64 / 1e9,
        rate(p.send.msgs_per_sec())
    );
    if let Some(d) = &p.send_delay {
        let _ = write!(
            out,
            "; send call behind its tick: p50 {} ms, p99 {} ms, max {} ms",
            ms(d.p50_ns as f64),
            ms(d.p99_ns as f64),
            ms(d.max_ns as f64)
        );
    }
    out.push('\n');
    if p.left_early > 0 {
        let _ = writeln!(
            out,
            "  warning: {} of {} subscribers left before the last message{}: they missed the rest of the stream",
            grouped(p.left_early),
            grouped(p.subscribers),
            p.first_left_tick
                .map(|t| format!(" (the first before tick {} of {})", grouped(t + 1), grouped(p.passes)))
                .unwrap_or_default()
        );
    }
    if !p.all_left {
        let _ = writeln!(
            out,
            "  warning: {} of {} subscribers had not left when the publisher closed; messages still queued then may be lost",
            grouped(p.subscribers.saturating_sub(p.left)),
            grouped(p.subscribers)
        );
    }
}

/// What `zmqperf pub` prints on its own: what it sent, and its CPU and memory.
pub fn publisher_text(p: &PubResult) -> String {
    let mut out = String::new();
    publisher_lines(&mut out, p, false);
    let _ = writeln!(out, "  publisher pid {}: {}", p.usage.pid, cpu(&p.usage));
    out
}

/// One line per subscriber process: pid, CPU and memory, connections, why it stopped.
pub(super) fn subscriber_lines(
    out: &mut String,
    label: &str,
    connected: &str,
    list: &[crate::scenarios::fanout::ProcessSummary],
) {
    for p in list {
        let _ = writeln!(
            out,
            "  {label} {:<3} pid {:<8}{} {}; {} {connected} in {:.2} s; stopped: {}",
            p.process,
            p.pid,
            p.host
                .as_ref()
                .map(|h| format!(" on {h}"))
                .unwrap_or_default(),
            cpu(&p.usage),
            grouped(p.subscribers as u64),
            p.connect_ns as f64 / 1e9,
            stop_text(p.stop)
        );
    }
}
