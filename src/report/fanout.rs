//! The fan-out report for a person: the Node harness's MIN / MAX / MEAN / HARMONIC MEAN
//! lines in ms, then the percentiles, delivery in total and per subscriber, the slowest
//! subscriber, and CPU and memory per process.

use crate::fanout::{FanoutFloor, FanoutReport, ProcessUsage};
use crate::report::first_middle_hole;
use crate::roles::publisher::PubResult;
use crate::roles::swarm::{StopReason, SubReport};
use crate::stats::{cause_of, GapPosition};
use crate::units::grouped;
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

/// The latency block over all deliveries, read on one clock (or converted to it).
fn latency_lines(out: &mut String, r: &FanoutReport) {
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

fn sub_loss(s: &SubReport) -> String {
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

fn publisher_lines(out: &mut String, p: &PubResult, lossy: bool) {
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

/// The report as text.
pub fn text(r: &FanoutReport) -> String {
    let mut out = String::new();
    let asked = r.requested_processes();
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
    if let Some(p) = &r.publisher {
        publisher_lines(&mut out, p, r.lossy);
    }
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
    let _ = writeln!(out, "processes:");
    if let Some(p) = &r.publisher {
        let _ = writeln!(
            out,
            "  publisher       pid {:<8} {}",
            p.usage.pid,
            cpu(&p.usage)
        );
    }
    subscriber_lines(
        &mut out,
        "subscribers",
        "subscribers connected",
        &r.process_list,
    );
    if let Some(f) = &r.floor {
        floor_lines(&mut out, f);
    }
    out
}

/// `x` as a ratio (`4.68x`), or `-`.
fn times(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.2}x"))
}

/// The raw-socket floor beside the libzmq run: delivery, then mean, p99 and CPU per
/// delivery side by side with their ratio, and the floor's processes.
fn floor_lines(out: &mut String, f: &FanoutFloor) {
    let _ = writeln!(
        out,
        "raw-socket floor: the same {} subscribers over plain {} sockets on {} (one process writes each message to every connection; the subscriber processes read with epoll)",
        grouped(f.subscribers),
        f.socket,
        f.endpoint
    );
    let d = &f.delivery;
    let _ = writeln!(
        out,
        "  delivered: {} of {} ({}): {} lost, {} duplicated, {} reordered; {} of {} subscribers got every message",
        grouped(d.received),
        grouped(d.expected),
        percent(d.received, d.expected),
        grouped(d.lost),
        grouped(d.duplicated),
        grouped(d.reordered),
        grouped(f.complete_subscribers),
        grouped(f.subscribers)
    );
    for p in &f.failed_processes {
        let _ = writeln!(out, "  left out: subscriber process {p}");
    }
    let (z, w) = (&f.libzmq, &f.raw);
    let us = |v: f64| format!("{v:.2}");
    let row = |out: &mut String, label: &str, a: String, b: String, r: Option<f64>| {
        let _ = writeln!(out, "  {label:<34}{a:>12}{b:>12}{:>12}", times(r));
    };
    let _ = writeln!(
        out,
        "  {:<34}{:>12}{:>12}{:>12}",
        "", "libzmq", "raw", "libzmq/raw"
    );
    row(
        out,
        "mean latency (ms)",
        ms(z.mean_ns),
        ms(w.mean_ns),
        f.ratio.mean,
    );
    row(
        out,
        "p99 latency (ms)",
        ms(z.p99_ns as f64),
        ms(w.p99_ns as f64),
        f.ratio.p99,
    );
    row(
        out,
        "subscriber CPU per delivery (us)",
        us(z.subscriber_cpu_per_delivery_us),
        us(w.subscriber_cpu_per_delivery_us),
        f.ratio.subscriber_cpu,
    );
    row(
        out,
        "publisher CPU per delivery (us)",
        us(z.publisher_cpu_per_delivery_us),
        us(w.publisher_cpu_per_delivery_us),
        f.ratio.publisher_cpu,
    );
    if let Some(share) = f.zeromq_share_of_mean {
        let _ = writeln!(
            out,
            "  ZeroMQ's part of the mean latency: {:.0}% ({} ms of {} ms is above the raw floor)",
            share * 100.0,
            ms(z.mean_ns - w.mean_ns),
            ms(z.mean_ns)
        );
    }
    let _ = writeln!(
        out,
        "  (CPU per delivery: the processes' CPU time over their whole run, warm-up and connecting included, over {} deliveries made, warm-up included)",
        grouped(w.deliveries_made)
    );
    let _ = writeln!(
        out,
        "  raw publisher     pid {:<8} {} (from the start of the raw run)",
        f.publisher.usage.pid,
        cpu(&f.publisher.usage)
    );
    subscriber_lines(out, "raw subscribers", "connected", &f.process_list);
}

/// One line per subscriber process: pid, CPU and memory, connections, why it stopped.
/// A time in ns as milliseconds with three decimals.
fn ms_text(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

fn subscriber_lines(
    out: &mut String,
    label: &str,
    connected: &str,
    list: &[crate::fanout::ProcessSummary],
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subscriber_with_a_hole_says_where_and_when() {
        use crate::stats::ledger::Gap;
        use crate::stats::{GapPosition, LossSummary};
        let s = SubReport {
            process: 3,
            sub: 17,
            loss: LossSummary {
                expected: 100,
                received: 90,
                lost: 10,
                gap_count: 1,
                lost_in_middle: 10,
                gaps: vec![Gap {
                    first_seq: 40,
                    count: 10,
                    position: GapPosition::Middle,
                    after_ns: Some(2_500_000),
                }],
                ..Default::default()
            },
            ended: true,
            warmup: 0,
            latency_count: 90,
            latency_min_ns: 1,
            latency_max_ns: 2,
            latency_mean_ns: 1.5,
            delivered_per_sec: 10.0,
        };
        assert_eq!(
            sub_loss(&s),
            "proc 3 sub 17 got 90 of 100 (10 lost: 0 at the start, 10 in the middle, 0 at the \
             end; in the middle the first at seq 40 (2.5 ms into the stream))"
        );
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(ms(1_234_567.0), "1.235");
        assert_eq!(percent(5, 5), "100%");
        assert_eq!(percent(1, 3), "33.333%");
        assert_eq!(percent(0, 0), "-");
        assert_eq!(rate(1234.4), "1,234");
        assert_eq!(rate(12.345), "12.35");
        assert_eq!(mib(2048), "2.0 MiB");
        assert_eq!(counted(1, "process", "processes"), "1 process");
        assert_eq!(counted(1000, "message", "messages"), "1,000 messages");
    }
}
