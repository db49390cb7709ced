//! What a role costs: CPU time of its thread or process and the process's memory.

use super::NodeSpec;
use crate::model::RoleUsage;
use crate::topology::Role;
use std::sync::atomic::{AtomicBool, Ordering};

/// Peak resident set of this process, KiB, from /proc/self/status (VmHWM). Unlike
/// getrusage's ru_maxrss, it is not inherited across exec from the runner that spawned us.
fn peak_rss_kib() -> u64 {
    rss_kib().1
}

/// Resident memory of this process now (VmRSS) and at its peak (VmHWM), KiB.
pub(crate) fn rss_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

static OWN_PROCESS: AtomicBool = AtomicBool::new(false);

/// Marks this process as one that plays a single node (`zmqperf __node`): its CPU time and
/// memory are the node's own.
pub fn set_own_process() {
    OWN_PROCESS.store(true, Ordering::Relaxed);
}

/// "thread" or "process": a child process plays one node, the runner's threads the others.
pub(crate) fn placement() -> &'static str {
    if OWN_PROCESS.load(Ordering::Relaxed) {
        "process"
    } else {
        "thread"
    }
}

/// CPU time of the calling thread (or process) and the process's peak RSS.
pub fn usage(role: &str, placement: &str) -> RoleUsage {
    let who = if placement == "thread" {
        libc::RUSAGE_THREAD
    } else {
        libc::RUSAGE_SELF
    };
    // SAFETY: getrusage fills the struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    RoleUsage {
        role: role.to_string(),
        placement: placement.to_string(),
        cpu_user_ms: ms(ru.ru_utime),
        cpu_sys_ms: ms(ru.ru_stime),
        peak_rss_kib: peak_rss_kib(),
    }
}

/// What this whole process has used so far, `wall` being how long it has run.
pub fn process_usage(wall: std::time::Duration) -> crate::model::ProcessUsage {
    // SAFETY: getrusage fills the struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    let (user, sys) = (ms(ru.ru_utime), ms(ru.ru_stime));
    let wall_s = wall.as_secs_f64();
    crate::model::ProcessUsage {
        cpu_user_ms: user,
        cpu_sys_ms: sys,
        wall_s,
        cpu_core_pct: if wall_s > 0.0 {
            (user + sys) / 10.0 / wall_s
        } else {
            0.0
        },
        peak_rss_kib: status_kib("VmHWM:"),
        peak_virt_kib: status_kib("VmPeak:"),
    }
}

/// A field of /proc/self/status in KiB (0 where it cannot be read).
fn status_kib(name: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// This node's usage now.
pub(crate) fn node_usage(spec: &NodeSpec) -> RoleUsage {
    usage(&legacy_role_name(spec.role), placement())
}

/// The names results have always used for the roles (client, server, sender, receiver).
pub fn legacy_role_name(r: Role) -> String {
    r.info().legacy_name.to_string()
}
