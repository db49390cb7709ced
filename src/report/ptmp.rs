//! The text of check_send, check_recv and check_sendrecv: the gap lines, then the send
//! line in PTMP's shape, then zmqperf's ledger and rates.

use crate::error::fmt_duration;
use crate::scenarios::ptmp::{Ended, GapLine, PtmpSummary, RecvResult, SendRecvResult, SendResult};
use crate::stats::{LossSummary, Throughput};
use crate::units::grouped;
use std::time::Duration;

/// A gap line as PTMP prints it: `i - seq = diff : ts`, the seconds as C++ streams print a
/// double (six significant digits).
pub fn gap_line(l: &GapLine) -> String {
    format!(
        "{} - {} = {} : {}s",
        l.index,
        l.seq,
        l.diff,
        format_seconds(l.at_ns as f64 / 1e9)
    )
}

/// A number of seconds as `std::cout << x` prints a double: six significant digits,
/// trailing zeros dropped, and the exponent form (`1e-05`, `1.23457e+06`) outside
/// 10^-4 .. 10^6, as C's `%g`.
pub fn format_seconds(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    if x == 0.0 {
        return "0".into();
    }
    // The exponent of the %e form with 6 significant digits, after its rounding.
    let e_form = format!("{x:.5e}");
    let (mantissa, exp) = e_form.split_once('e').expect("exponent form");
    let exp: i32 = exp.parse().expect("exponent");
    if (-4..6).contains(&exp) {
        let decimals = (5 - exp) as usize;
        trim_zeros(&format!("{x:.decimals$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim_zeros(mantissa), exp.abs())
    }
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

/// A span in the unit that reads best: us, ms or s.
fn span(ns: u64) -> String {
    let ns = ns as f64;
    if ns < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// `N in SPAN: R msg/s`.
fn rate(t: &Throughput) -> String {
    format!(
        "{} in {}: {} msg/s",
        grouped(t.messages),
        span(t.elapsed_ns()),
        grouped(t.msgs_per_sec().round() as u64)
    )
}

/// The ledger line.
pub fn ledger_line(l: &LossSummary) -> String {
    format!(
        "ledger: received {}, lost {} (at the start {}, in the middle {}, at the end {}), duplicates {}, reordered {}\n",
        grouped(l.received),
        grouped(l.lost),
        grouped(l.lost_at_start),
        grouped(l.lost_in_middle),
        grouped(l.lost_at_end),
        grouped(l.duplicated),
        grouped(l.reordered)
    )
}

/// check_send's lines: PTMP's `send N in T s or R kHz`, then the settings that decide
/// what arrives.
pub fn send_text(r: &SendResult) -> String {
    let secs = r.send.elapsed_ns() as f64 / 1e9;
    let khz = if secs > 0.0 {
        r.sent as f64 / secs / 1000.0
    } else {
        0.0
    };
    format!(
        "send {} in {secs:.3} s or {khz:.1} kHz\n\
         check_send: {} {} {}, {} {}messages of {} B at {} msg/s (admission), start delay {} ms, quit delay {} ms, linger {} ms (czmq's default: what is still queued at close is dropped)\n",
        r.sent,
        r.socket.socket_type.name(),
        r.socket.side,
        r.socket.endpoint,
        grouped(r.sent),
        match r.wire {
            crate::ptmp_wire::Wire::Ptmp => "PTMP ",
            crate::ptmp_wire::Wire::Zmqperf => "",
        },
        r.message_size,
        grouped(r.send.msgs_per_sec().round() as u64),
        r.start_delay_ms,
        r.quit_delay_ms,
        r.linger_ms
    ) + &resources_line("check_send", &r.resources)
}

/// What a check command's process used, as `top` shows it: `check_recv: CPU 41% of a core
/// (12.3 ms user + 4.5 ms system over 0.041 s), peak RSS 10.1 MiB, VIRT 150.2 MiB`.
pub fn resources_line(command: &str, u: &crate::model::ProcessUsage) -> String {
    let mib = |kib: u64| kib as f64 / 1024.0;
    format!(
        "{command}: CPU {:.0}% of a core ({:.1} ms user + {:.1} ms system over {:.3} s), peak RSS {:.1} MiB, VIRT {:.1} MiB\n",
        u.cpu_core_pct,
        u.cpu_user_ms,
        u.cpu_sys_ms,
        u.wall_s,
        mib(u.peak_rss_kib),
        mib(u.peak_virt_kib)
    )
}

/// PTMP's check_recv's last line, as czmq's `zsys_info` prints it: `I: `, the local time
/// as `%y-%m-%d %H:%M:%S`, then `recv COUNT in T s or R kHz, missed M` (PTMP's words and
/// figures, for the scripts that parse them).
pub fn ptmp_summary_line(p: &PtmpSummary) -> String {
    format!(
        "I: {} recv {} in {:.3} s or {:.1} kHz, missed {}\n",
        czmq_time(p.at_unix_s),
        p.count,
        p.elapsed_s,
        p.khz,
        p.missed
    )
}

/// `at` (seconds since the Unix epoch) in local time as czmq's log prefix shows it.
fn czmq_time(at: i64) -> String {
    let t: libc::time_t = at as libc::time_t;
    // SAFETY: localtime_r writes only the tm it is given; a zeroed tm is a valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return "00-00-00 00:00:00".into();
    }
    format!(
        "{:02}-{:02}-{:02} {:02}:{:02}:{:02}",
        tm.tm_year.rem_euclid(100),
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// check_recv's lines after the gap lines: PTMP's summary line, then zmqperf's.
pub fn recv_text(r: &RecvResult) -> String {
    let how = match r.ended {
        Ended::Count => "COUNT reached".to_string(),
        Ended::EndMark => format!(
            "the sender's last message arrived (its stream had {} messages)",
            grouped(r.loss.expected)
        ),
        Ended::ProtocolError => format!(
            "stopped at message #{}, which broke the protocol (below)",
            grouped(r.received)
        ),
        Ended::Timeout => format!(
            "then nothing for {}{}",
            fmt_duration(Duration::from_millis(r.timeout_ms)),
            match r.sender_disconnected {
                Some(true) => " (the sender had disconnected)",
                Some(false) => " (the sender is still connected)",
                None => "",
            }
        ),
        Ended::Interrupted => format!(
            "interrupted by {}; the figures are of what arrived before it",
            crate::interrupt::interrupted_by()
        ),
    };
    let mut t = ptmp_summary_line(&r.ptmp_summary);
    t.push_str(&format!(
        "recv {} of {}: {how}{}\n",
        grouped(r.received),
        grouped(r.socket.count),
        match r.wire {
            Some(crate::ptmp_wire::Wire::Ptmp) => " (PTMP's TPSet messages: count is the sequence)",
            _ => "",
        }
    ));
    match r.first_after_ns {
        Some(first) => t.push_str(&format!(
            "rate: {} from the first message to the last (the first arrived {} after the start)\n",
            rate(&r.delivered),
            span(first)
        )),
        None => t.push_str("rate: none, nothing arrived\n"),
    }
    t.push_str(&ledger_line(&r.loss));
    t.push_str(&resources_line("check_recv", &r.resources));
    t
}

/// check_sendrecv's lines.
pub fn sendrecv_text(r: &SendRecvResult) -> String {
    let (binds, connects) = if r.sender_side == "bind" {
        (r.sender.name(), r.receiver.name())
    } else {
        (r.receiver.name(), r.sender.name())
    };
    format!(
        "check_sendrecv: {} over {} ({binds} binds, {connects} connects), {} messages of {} B\n\
         send:    {} (admission)\n\
         receive: {} (first message to last)\n{}",
        r.pattern,
        r.endpoint,
        grouped(r.count),
        r.message_size,
        rate(&r.send),
        rate(&r.delivered),
        ledger_line(&r.loss)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_as_cpp_prints_them() {
        // The seed's figures.
        assert_eq!(format_seconds(2.749_244), "2.74924");
        assert_eq!(format_seconds(1.419_17), "1.41917");
        assert_eq!(format_seconds(0.5), "0.5");
        assert_eq!(format_seconds(10.0), "10");
        assert_eq!(format_seconds(9.999_996), "10");
        assert_eq!(format_seconds(123.456_78), "123.457");
        assert_eq!(format_seconds(0.000_123_456_7), "0.000123457");
        assert_eq!(format_seconds(0.000_012_3), "1.23e-05");
        assert_eq!(format_seconds(1_234_567.0), "1.23457e+06");
        assert_eq!(format_seconds(999_999.7), "1e+06");
        assert_eq!(format_seconds(0.0), "0");
    }

    #[test]
    fn ledger_line_has_every_figure_with_separators() {
        let l = LossSummary {
            expected: 11_807,
            received: 10_000,
            lost: 1_807,
            lost_at_start: 1_797,
            lost_in_middle: 10,
            duplicated: 2,
            reordered: 1,
            ..Default::default()
        };
        assert_eq!(
            ledger_line(&l),
            "ledger: received 10,000, lost 1,807 (at the start 1,797, in the middle 10, at the end 0), duplicates 2, reordered 1\n"
        );
    }

    #[test]
    fn ptmps_summary_line_has_its_words_and_figures() {
        let p = PtmpSummary {
            count: 10_000,
            elapsed_s: 0.512_34,
            khz: 19.518,
            missed: 514,
            at_unix_s: 0,
        };
        let line = ptmp_summary_line(&p);
        let (prefix, rest) = line.split_at(21);
        assert_eq!(rest, "recv 10000 in 0.512 s or 19.5 kHz, missed 514\n");
        // "I: yy-mm-dd HH:MM:SS ": the epoch in whatever zone the test runs.
        assert!(
            prefix.starts_with("I: 70-01-01 ") || prefix.starts_with("I: 69-12-31 "),
            "{prefix}"
        );
        assert_eq!(prefix.len(), 21);
    }

    #[test]
    fn spans_and_rates_carry_units() {
        assert_eq!(span(4_100), "4.1 us");
        assert_eq!(span(12_340_000), "12.3 ms");
        assert_eq!(span(2_749_240_000), "2.749 s");
        let t = Throughput {
            messages: 10_000,
            payload_bytes: 0,
            start_ns: 0,
            end_ns: 4_000_000,
        };
        assert_eq!(rate(&t), "10,000 in 4.0 ms: 2,500,000 msg/s");
    }
}
