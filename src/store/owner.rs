//! Which process is writing a run, so a run left "running" by a process that died can be
//! told apart from one still going.
//!
//! The owner is recorded as `BOOT_ID:PID:START` (the kernel's boot id, the process id and
//! the process start time in clock ticks since boot): a pid reused by a later process, or
//! the same pid after a reboot, does not pass for the writer. Linux only; elsewhere the
//! owner is unknown and a run's stored status is shown as it is.

use std::fs;

/// Whether the process that wrote a run still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Liveness {
    /// The writer still runs.
    Alive,
    /// The writer is gone (it ended, crashed or was killed, or the machine rebooted).
    Dead,
    /// Cannot tell (no /proc, or no owner recorded).
    Unknown,
}

/// The owner token of this process, None where /proc cannot tell.
pub(crate) fn current() -> Option<String> {
    let boot = boot_id()?;
    let pid = std::process::id();
    let start = start_ticks(pid)?;
    Some(format!("{boot}:{pid}:{start}"))
}

/// Whether the process named by `token` (from [`current`]) still runs.
pub(crate) fn liveness(token: Option<&str>) -> Liveness {
    let Some(token) = token else {
        return Liveness::Unknown;
    };
    let mut parts = token.rsplitn(3, ':');
    let (Some(start), Some(pid), Some(boot)) = (parts.next(), parts.next(), parts.next()) else {
        return Liveness::Unknown;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return Liveness::Unknown;
    };
    let Some(this_boot) = boot_id() else {
        return Liveness::Unknown;
    };
    if this_boot != boot {
        return Liveness::Dead;
    }
    match start_ticks(pid) {
        Some(s) if s == start => Liveness::Alive,
        _ => Liveness::Dead,
    }
}

/// The kernel's id of the current boot.
fn boot_id() -> Option<String> {
    let id = fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let id = id.trim();
    (!id.is_empty()).then(|| id.to_string())
}

/// Start time of process `pid` in clock ticks after boot (field 22 of /proc/PID/stat).
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or ')': the fields
    // that follow start after the last ')'. Field 3 is then the first, so 22 is the 20th.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_others_are_not() {
        let Some(me) = current() else {
            return; // no /proc here
        };
        assert_eq!(liveness(Some(&me)), Liveness::Alive);
        // Same pid, another start time: a reused pid is not the writer.
        let (head, start) = me.rsplit_once(':').unwrap();
        let start: u64 = start.parse().unwrap();
        let other = format!("{head}:{}", start + 1);
        assert_eq!(liveness(Some(&other)), Liveness::Dead);
        // Another boot.
        let (_, pid_start) = me.split_once(':').unwrap();
        assert_eq!(
            liveness(Some(&format!("not-this-boot:{pid_start}"))),
            Liveness::Dead
        );
        assert_eq!(liveness(None), Liveness::Unknown);
        assert_eq!(liveness(Some("junk")), Liveness::Unknown);
    }
}
