//! The environment recorded with every run, and run ids and timestamps.

use crate::model::Environment;
use std::time::{SystemTime, UNIX_EPOCH};

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Reads the machine's description.
pub fn environment() -> Environment {
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .unwrap_or(0);
    // SAFETY: uname fills the struct we own.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    unsafe { libc::uname(&mut u) };
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Environment {
        cpu_model,
        cores: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        memory_bytes,
        kernel: field(&u.release),
        os: format!("{} {}", field(&u.sysname), field(&u.machine)),
        hostname: field(&u.nodename),
        libzmq_version: crate::libzmq_version(),
        libzmq: Some(crate::zmq::library().clone()),
        note: None,
        network: Vec::new(),
        zmqperf_version: crate::VERSION.to_string(),
        hosts: Vec::new(),
    }
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn parts(t: SystemTime) -> (i64, u32, u32, u64, u64, u64) {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, m, d) = civil((secs / 86_400) as i64);
    let s = secs % 86_400;
    (y, m, d, s / 3600, s / 60 % 60, s % 60)
}

/// A time as RFC 3339 UTC, e.g. `2026-11-21T22:15:30Z`.
pub fn rfc3339(t: SystemTime) -> String {
    let (y, m, d, hh, mm, ss) = parts(t);
    format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
}

/// A new run id: start time plus four hex digits, e.g. `20261121-221530-4f2a`.
pub fn run_id(t: SystemTime) -> String {
    let (y, m, d, hh, mm, ss) = parts(t);
    let salt = (crate::clock::now_ns() ^ u64::from(std::process::id()).rotate_left(17)) & 0xffff;
    format!("{y:04}{m:02}{d:02}-{hh:02}{mm:02}{ss:02}-{salt:04x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_795_299_330); // 2026-11-21 22:15:30 UTC
        assert_eq!(rfc3339(t), "2026-11-21T22:15:30Z");
        assert!(run_id(t).starts_with("20261121-221530-"));
        assert_eq!(civil(11_016), (2000, 2, 29));
    }

    #[test]
    fn environment_is_filled() {
        let e = environment();
        assert!(e.cores >= 1);
        assert!(!e.kernel.is_empty());
        assert!(e.libzmq_version.starts_with('4'));
    }
}
