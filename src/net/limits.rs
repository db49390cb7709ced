//! Open-file limits: how many descriptors a fan-out needs, raising the soft limit towards
//! the hard one, and, when the hard limit is too low, an error that says what to change.
//!
//! The decision ([`plan`]) is a pure function of the need and the limits, so it is tested
//! with made-up limits; [`ensure`] applies it to this process.

use crate::error::{Error, Result};
use crate::units::grouped;

/// Descriptors a process holds besides its measured sockets: stdio, the control pipes,
/// libzmq's own (context mailbox, reaper, io thread poller) and the binary's files.
pub const BASE_FDS: u64 = 64;

/// Descriptors per SUB socket in a subscriber process: the socket's mailbox (an eventfd),
/// its connection, and one spare for a reconnect in flight.
pub const FDS_PER_SUBSCRIBER: u64 = 3;

/// Descriptors per subscriber in the publisher: the accepted connection, and one spare for
/// a connection being torn down while another is accepted.
pub const FDS_PER_CONNECTION: u64 = 2;

/// Where a limit of "no limit" (RLIM_INFINITY) is mapped: larger than any need.
pub const UNLIMITED: u64 = u64::MAX;

/// The open-file limits (RLIMIT_NOFILE) of a process; [`UNLIMITED`] for no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimits {
    /// The limit in force (`ulimit -Sn`); a process may raise it up to `hard`.
    pub soft: u64,
    /// The ceiling (`ulimit -Hn`); only root can raise it.
    pub hard: u64,
}

/// How many descriptors one process needs, and why, for the message when it cannot have them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FdNeed {
    /// Descriptors needed.
    pub fds: u64,
    /// Which process: "the publisher", "each subscriber process".
    pub who: String,
    /// What they are for: "8,000 subscriber connections".
    pub what: String,
    /// The flag the count came from, for the error ("-n", "-c x -s").
    pub flag: String,
    /// The value given, for the error.
    pub value: String,
    /// The other way out besides a higher limit: "fewer subscribers per process (-n)".
    pub fewer: String,
}

/// Descriptors the publisher needs for `subscribers` connections.
pub fn publisher_fds(subscribers: u64) -> u64 {
    subscribers
        .saturating_mul(FDS_PER_CONNECTION)
        .saturating_add(BASE_FDS)
}

/// Descriptors a subscriber process needs for `subs` SUB sockets.
pub fn subscriber_fds(subs: u64) -> u64 {
    subs.saturating_mul(FDS_PER_SUBSCRIBER)
        .saturating_add(BASE_FDS)
}

/// Decides what to do about `need` under `limits`: `Ok(None)` when the soft limit already
/// suffices, `Ok(Some(n))` to raise the soft limit to `n` (the hard limit, or the need
/// when there is no hard limit), and an error naming the numbers and the fix when even the
/// hard limit is too low.
pub fn plan(need: &FdNeed, limits: FdLimits) -> Result<Option<u64>> {
    if need.fds <= limits.soft {
        return Ok(None);
    }
    if limits.hard == UNLIMITED {
        return Ok(Some(need.fds));
    }
    if need.fds <= limits.hard {
        return Ok(Some(limits.hard));
    }
    Err(Error::invalid(
        &need.flag,
        &need.value,
        format!(
            "{} needs about {} open files ({}), but the hard limit on open files is {} \
             (`ulimit -Hn`). Raise it: run `ulimit -n {}` as root (or in a shell whose hard \
             limit allows it) before zmqperf, or add `* hard nofile {}` and `* soft nofile {}` \
             to /etc/security/limits.conf and log in again (LimitNOFILE={} for a systemd \
             service); or use {}",
            need.who,
            grouped(need.fds),
            need.what,
            grouped(limits.hard),
            need.fds,
            need.fds,
            need.fds,
            need.fds,
            need.fewer
        ),
    ))
}

/// The open-file limits of this process.
pub fn current() -> Result<FdLimits> {
    // SAFETY: getrlimit fills the struct we own.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return Err(Error::Io {
            op: "reading the open-file limit (getrlimit)".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    // rlim_t is u64 on Linux, the one system zmqperf runs on.
    let map = |v: u64| {
        if v == libc::RLIM_INFINITY {
            UNLIMITED
        } else {
            v
        }
    };
    Ok(FdLimits {
        soft: map(r.rlim_cur),
        hard: map(r.rlim_max),
    })
}

/// Makes sure this process may open `need.fds` files, raising its soft limit if it must.
/// Child processes started afterwards inherit the raised limit. Returns the limits in force.
pub fn ensure(need: &FdNeed) -> Result<FdLimits> {
    let limits = current()?;
    let Some(soft) = plan(need, limits)? else {
        return Ok(limits);
    };
    let r = libc::rlimit {
        rlim_cur: soft as libc::rlim_t,
        rlim_max: if limits.hard == UNLIMITED {
            libc::RLIM_INFINITY
        } else {
            limits.hard as libc::rlim_t
        },
    };
    // SAFETY: setrlimit reads the struct we own.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) } != 0 {
        return Err(Error::Io {
            op: format!(
                "raising the open-file limit from {} to {} (setrlimit) for {}",
                limits.soft, soft, need.what
            ),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(FdLimits {
        soft,
        hard: limits.hard,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn need(fds: u64) -> FdNeed {
        FdNeed {
            fds,
            who: "each subscriber process".into(),
            what: "1,000 SUB sockets".into(),
            flag: "-n".into(),
            value: "1000".into(),
            fewer: "fewer subscribers per process (-n) and more processes (-c)".into(),
        }
    }

    #[test]
    fn enough_already_changes_nothing() {
        let l = FdLimits {
            soft: 4096,
            hard: 4096,
        };
        assert_eq!(plan(&need(3064), l).unwrap(), None);
    }

    #[test]
    fn raises_the_soft_limit_to_the_hard_one() {
        let l = FdLimits {
            soft: 1024,
            hard: 20_000,
        };
        assert_eq!(plan(&need(3064), l).unwrap(), Some(20_000));
        let unlimited = FdLimits {
            soft: 1024,
            hard: UNLIMITED,
        };
        assert_eq!(plan(&need(3064), unlimited).unwrap(), Some(3064));
    }

    #[test]
    fn a_hard_limit_too_low_names_numbers_and_fix() {
        let l = FdLimits {
            soft: 1024,
            hard: 2000,
        };
        let e = plan(&need(3064), l).unwrap_err();
        assert_eq!(e.exit_code(), 3);
        let m = e.to_string();
        for want in [
            "invalid -n '1000'",
            "3,064 open files",
            "hard limit on open files is 2,000",
            "ulimit -n 3064",
            "/etc/security/limits.conf",
            "nofile 3064",
            "fewer subscribers per process",
        ] {
            assert!(m.contains(want), "'{want}' missing from: {m}");
        }
    }

    #[test]
    fn needs_grow_with_the_counts() {
        assert_eq!(subscriber_fds(1000), 3064);
        assert_eq!(publisher_fds(8000), 16_064);
        assert_eq!(publisher_fds(u64::MAX), u64::MAX);
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(16_064), "16,064");
    }

    #[test]
    fn this_process_has_limits() {
        let l = current().unwrap();
        assert!(l.soft <= l.hard);
        assert!(ensure(&need(16)).is_ok());
    }
}
