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

/// User and system CPU time of the calling thread (`placement` "thread") or of the whole
/// process, ms.
fn cpu_ms(placement: &str) -> (f64, f64) {
    let who = if placement == "thread" {
        libc::RUSAGE_THREAD
    } else {
        libc::RUSAGE_SELF
    };
    // SAFETY: getrusage fills the struct we own.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(who, &mut ru) };
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    (ms(ru.ru_utime), ms(ru.ru_stime))
}

/// CPU time (user + system) of the calling thread, or of the whole process when
/// `own_process`, ms.
pub(crate) fn cpu_now_ms(own_process: bool) -> f64 {
    let (u, s) = cpu_ms(if own_process { "process" } else { "thread" });
    u + s
}

/// CPU time of the calling thread (or process) and the process's peak RSS and VIRT.
pub fn usage(role: &str, placement: &str) -> RoleUsage {
    let (user, sys) = cpu_ms(placement);
    RoleUsage {
        role: role.to_string(),
        placement: placement.to_string(),
        cpu_user_ms: user,
        cpu_sys_ms: sys,
        peak_rss_kib: peak_rss_kib(),
        peak_virt_kib: status_kib("VmPeak:"),
        run_ms: 0.0,
        run_cpu_ms: 0.0,
    }
}

thread_local! {
    /// When this thread's role passed the start barrier, and its CPU time then (ms).
    static STARTED: std::cell::Cell<Option<(std::time::Instant, f64)>> =
        const { std::cell::Cell::new(None) };
}

/// Notes that the role on this thread passed the start barrier: from here its run is
/// timed ([`RoleUsage::run_ms`], [`RoleUsage::run_cpu_ms`]).
pub(crate) fn mark_start() {
    let (user, sys) = cpu_ms(placement());
    STARTED.with(|s| s.set(Some((std::time::Instant::now(), user + sys))));
}

/// Forgets the mark of a role run earlier on this thread.
pub(crate) fn clear_start() {
    STARTED.with(|s| s.set(None));
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

/// This node's usage now, with its run since the start barrier timed.
pub(crate) fn node_usage(spec: &NodeSpec) -> RoleUsage {
    let mut u = usage(&legacy_role_name(spec.role), placement());
    if let Some((at, cpu)) = STARTED.with(|s| s.get()) {
        u.run_ms = at.elapsed().as_secs_f64() * 1000.0;
        u.run_cpu_ms = (u.cpu_user_ms + u.cpu_sys_ms - cpu).max(0.0);
    }
    u
}

/// The names results have always used for the roles (client, server, sender, receiver).
pub fn legacy_role_name(r: Role) -> String {
    r.info().legacy_name.to_string()
}
