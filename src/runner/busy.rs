//! Was the machine idle? Around each case the runner reads the load average and every
//! process's CPU time from /proc (before the first repetition and after the last, never
//! during one), and names the other processes (not zmqperf's own, not its children) that
//! used more than a tenth of a core over the case: their work competed with the measured
//! one. A process that started and ended within the case is not seen.

use crate::model::{BusyProcess, MachineLoad};
use std::collections::HashMap;
use std::time::Instant;

/// A process's share of one core over the case above which the machine counts as busy.
pub const BUSY_CORE_SHARE: f64 = 0.1;

/// How many busy processes a warning names.
const NAMED: usize = 5;

/// How a busy machine's warning starts.
pub const WARNING: &str = "the machine was busy";

/// One process as /proc/PID/stat shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Proc {
    /// Its parent.
    pub ppid: u32,
    /// Its command name (comm).
    pub command: String,
    /// User + system CPU time of all its threads, clock ticks.
    pub ticks: u64,
    /// When it started, clock ticks after boot (tells a reused pid).
    pub started: u64,
}

/// Every process at one moment.
#[derive(Debug, Clone)]
pub struct Table {
    /// When it was read.
    pub at: Instant,
    /// By pid.
    pub procs: HashMap<u32, Proc>,
    /// Load average over 1, 5 and 15 minutes.
    pub load: [f64; 3],
}

/// A line of /proc/PID/stat read: (ppid, command, utime + stime, starttime).
pub fn parse_stat(line: &str) -> Option<Proc> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    let command = line.get(open + 1..close)?.to_string();
    // After the command: state(3) ppid(4) ... utime(14) stime(15) ... starttime(22).
    let f: Vec<&str> = line.get(close + 1..)?.split_whitespace().collect();
    let at = |field: usize| f.get(field - 3)?.parse::<u64>().ok();
    Some(Proc {
        ppid: at(4)? as u32,
        command,
        ticks: at(14)? + at(15)?,
        started: at(22)?,
    })
}

/// The load average of /proc/loadavg (zeros where it cannot be read).
pub fn load_average() -> [f64; 3] {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut out = [0.0; 3];
    for (o, v) in out.iter_mut().zip(text.split_whitespace()) {
        *o = v.parse().unwrap_or(0.0);
    }
    out
}

/// Reads every process of /proc now (a few milliseconds for some hundred processes).
pub fn read_table() -> Table {
    let mut procs = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(line) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            if let Some(p) = parse_stat(&line) {
                procs.insert(pid, p);
            }
        }
    }
    Table {
        at: Instant::now(),
        procs,
        load: load_average(),
    }
}

/// Clock ticks per second of /proc's times.
fn ticks_per_s() -> f64 {
    // SAFETY: sysconf reads a constant.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// Whether `pid` is `own` or one of its descendants, as `table` knows them.
fn is_own(table: &Table, pid: u32, own: u32) -> bool {
    let mut p = pid;
    for _ in 0..64 {
        if p == own {
            return true;
        }
        match table.procs.get(&p) {
            Some(x) if x.ppid != 0 && x.ppid != p => p = x.ppid,
            _ => return false,
        }
    }
    false
}

/// The processes other than `own` and its descendants that used more than
/// [`BUSY_CORE_SHARE`] of a core between `before` and `after`, busiest first. A process
/// seen only `after` (or whose pid was reused) counts all its time, as it started within.
pub fn busy(before: &Table, after: &Table, own: u32, ticks_per_s: f64) -> Vec<BusyProcess> {
    let wall = after.at.saturating_duration_since(before.at).as_secs_f64();
    if wall <= 0.0 {
        return Vec::new();
    }
    let mut out: Vec<BusyProcess> = after
        .procs
        .iter()
        .filter(|(pid, _)| !is_own(after, **pid, own) && !is_own(before, **pid, own))
        .filter_map(|(pid, p)| {
            let was = match before.procs.get(pid) {
                Some(b) if b.started == p.started => b.ticks,
                _ => 0,
            };
            let share = p.ticks.saturating_sub(was) as f64 / ticks_per_s / wall;
            (share > BUSY_CORE_SHARE).then(|| BusyProcess {
                pid: *pid,
                command: p.command.clone(),
                core_pct: (share * 1000.0).round() / 10.0,
            })
        })
        .collect();
    out.sort_by(|a, b| b.core_pct.total_cmp(&a.core_pct).then(a.pid.cmp(&b.pid)));
    out
}

/// The warning for a busy machine: `the machine was busy: pid 4242 (yes) used 99% of a
/// core, ...` naming the busiest few.
pub fn warning(busy: &[BusyProcess]) -> Option<String> {
    if busy.is_empty() {
        return None;
    }
    let named: Vec<String> = busy
        .iter()
        .take(NAMED)
        .map(|b| format!("pid {} ({}) {:.0}%", b.pid, b.command, b.core_pct))
        .collect();
    let more = if busy.len() > NAMED {
        format!(" and {} more", busy.len() - NAMED)
    } else {
        String::new()
    };
    Some(format!(
        "{WARNING}: other processes used more than {:.0}% of a core during the case ({}{more}); the figures may be slower and more spread than on an idle machine",
        BUSY_CORE_SHARE * 100.0,
        named.join(", ")
    ))
}

/// The watch over one case: the table before it.
pub struct Watch {
    before: Table,
}

impl Watch {
    /// Reads the machine before the case.
    pub fn start() -> Self {
        Watch {
            before: read_table(),
        }
    }

    /// Reads it after the case: the load before and after and the busy processes.
    pub fn end(self) -> MachineLoad {
        let after = read_table();
        MachineLoad {
            load_before: self.before.load,
            load_after: after.load,
            busy: busy(&self.before, &after, std::process::id(), ticks_per_s()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn table(at: Instant, procs: &[(u32, u32, &str, u64)]) -> Table {
        Table {
            at,
            procs: procs
                .iter()
                .map(|&(pid, ppid, c, ticks)| {
                    (
                        pid,
                        Proc {
                            ppid,
                            command: c.into(),
                            ticks,
                            started: pid as u64,
                        },
                    )
                })
                .collect(),
            load: [0.5, 0.4, 0.3],
        }
    }

    #[test]
    fn stat_lines_are_read_past_a_command_with_spaces_and_parentheses() {
        let line = "4242 (my (odd) cmd) R 17 4242 17 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 98765 1000 10 18446744073709551615";
        let p = parse_stat(line).unwrap();
        assert_eq!(p.ppid, 17);
        assert_eq!(p.command, "my (odd) cmd");
        assert_eq!(p.ticks, 300);
        assert_eq!(p.started, 98765);
        assert!(parse_stat("garbage").is_none());
    }

    #[test]
    fn only_other_processes_above_a_tenth_of_a_core_are_named() {
        let t0 = Instant::now();
        let t1 = t0 + Duration::from_secs(2);
        // 100 ticks a second, over 2 s: 200 ticks is a whole core.
        let before = table(
            t0,
            &[
                (1, 0, "init", 0),
                (10, 1, "zmqperf", 0),
                (11, 10, "zmqperf", 0),
                (20, 1, "yes", 1000),
                (21, 1, "cron", 0),
                (22, 1, "sshd", 0),
            ],
        );
        let after = table(
            t1,
            &[
                (1, 0, "init", 1),
                (10, 1, "zmqperf", 400),
                (11, 10, "zmqperf", 200),
                (12, 10, "zmqperf", 150),
                (20, 1, "yes", 1198),
                (21, 1, "cron", 20),
                (22, 1, "sshd", 21),
                (30, 1, "cc1", 100),
            ],
        );
        let b = busy(&before, &after, 10, 100.0);
        let named: Vec<(u32, &str, f64)> = b
            .iter()
            .map(|b| (b.pid, b.command.as_str(), b.core_pct))
            .collect();
        // zmqperf (10) and its children (11, and 12 born within) are its own; cron at
        // exactly a tenth is not above it; cc1 started within the case.
        assert_eq!(
            named,
            vec![(20, "yes", 99.0), (30, "cc1", 50.0), (22, "sshd", 10.5)]
        );
        let w = warning(&b).unwrap();
        assert!(w.starts_with(WARNING), "{w}");
        assert!(w.contains("pid 20 (yes) 99%"), "{w}");
    }

    #[test]
    fn an_idle_machine_has_no_warning_and_a_reused_pid_counts_from_its_start() {
        let t0 = Instant::now();
        let before = table(t0, &[(1, 0, "init", 0), (5, 1, "old", 5000)]);
        let mut after = table(t0 + Duration::from_secs(1), &[(1, 0, "init", 2)]);
        assert!(busy(&before, &after, 99, 100.0).is_empty());
        assert_eq!(warning(&[]), None);
        after.procs.insert(
            5,
            Proc {
                ppid: 1,
                command: "new".into(),
                ticks: 30,
                started: 777,
            },
        );
        let b = busy(&before, &after, 99, 100.0);
        assert_eq!((b[0].pid, b[0].core_pct), (5, 30.0));
    }

    #[test]
    fn this_process_is_never_named_on_the_real_machine() {
        let w = Watch::start();
        let mut x = 0u64;
        let end = Instant::now() + Duration::from_millis(300);
        while Instant::now() < end {
            x = x.wrapping_add(1);
        }
        assert!(x > 0);
        let m = w.end();
        assert!(m.load_before.iter().all(|l| *l >= 0.0));
        let me = std::process::id();
        assert!(m.busy.iter().all(|b| b.pid != me), "{:?}", m.busy);
    }
}
