//! The raw-socket floor beside a fan-out (`--floor`): its delivery, then libzmq and the raw
//! sockets side by side with their ratio, and the floor's processes.

use super::{cpu, ms, percent, subscriber_lines};
use crate::scenarios::fanout::FanoutFloor;
use crate::units::grouped;
use std::fmt::Write;

/// `x` as a ratio (`4.68x`), or `-`.
fn times(x: Option<f64>) -> String {
    x.map_or("-".into(), |x| format!("{x:.2}x"))
}

/// The raw-socket floor beside the libzmq run: delivery, then mean, p99 and CPU per
/// delivery side by side with their ratio, and the floor's processes.
pub(super) fn floor_lines(out: &mut String, f: &FanoutFloor) {
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
    ratio_rows(out, f);
    let _ = writeln!(
        out,
        "  (CPU per delivery: the processes' CPU time over their whole run, warm-up and connecting included, over {} deliveries made, warm-up included)",
        grouped(f.raw.deliveries_made)
    );
    let _ = writeln!(
        out,
        "  raw publisher     pid {:<8} {} (from the start of the raw run)",
        f.publisher.usage.pid,
        cpu(&f.publisher.usage)
    );
    subscriber_lines(out, "raw subscribers", "connected", &f.process_list);
}

/// libzmq and the raw sockets side by side: mean and p99 latency, subscriber and publisher
/// CPU per delivery, with their ratio, and ZeroMQ's part of the mean latency.
fn ratio_rows(out: &mut String, f: &FanoutFloor) {
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
}
