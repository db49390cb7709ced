//! Where a run's nodes ran, for a run across hosts: each host's machine in the environment,
//! and seed 001's table of request/reply between host pairs (source, destination, link,
//! round trips per second and latency with their intervals). Nothing of this is shown for
//! a run on one host, where it would repeat the host on every line.

use crate::endpoint::Transport;
use crate::model::{CaseResult, HostEnvironment, Kind, RunResult};
use crate::report::estimate;

/// The environment lines of a run across hosts: one per host, `host NAME` and its machine,
/// CPU, cores, kernel, libzmq and the interface it was reached on. Empty for a run on one
/// host, or one whose hosts did not describe themselves.
pub fn host_environments(run: &RunResult) -> Vec<(String, String)> {
    if !run.is_multi_host() || run.environment.hosts.is_empty() {
        return Vec::new();
    }
    run.environment
        .hosts
        .iter()
        .map(|h| (format!("host {}", h.name), describe_host(h)))
        .collect()
}

/// `b-02, Intel(R) Xeon(R) ..., 8 cores, kernel 6.1.0, libzmq 4.3.5 (bundled), reached at
/// 10.0.0.2 on eth1 mtu 1500 1000 Mb/s`.
pub fn describe_host(h: &HostEnvironment) -> String {
    let mut s = format!(
        "{}, {}, {} cores, kernel {}, libzmq {}",
        if h.hostname.is_empty() {
            "-"
        } else {
            &h.hostname
        },
        if h.cpu_model.is_empty() {
            "unknown CPU"
        } else {
            &h.cpu_model
        },
        h.cores,
        if h.kernel.is_empty() { "-" } else { &h.kernel },
        if h.libzmq_version.is_empty() {
            "-"
        } else {
            &h.libzmq_version
        }
    );
    if !h.libzmq_source.is_empty() {
        s.push_str(&format!(" ({})", h.libzmq_source));
    }
    match &h.addr {
        Some(addr) => {
            s.push_str(&format!(", reached at {addr}"));
            if let Some(n) = h.nic_of(addr) {
                s.push_str(&format!(" on {}", n.describe()));
            }
        }
        None => {
            let wired = h.wired_nics();
            if wired != "-" {
                s.push_str(&format!(", interfaces {wired}"));
            }
        }
    }
    s
}

/// The link between two hosts of a case: `same host` (with the transport when it is not
/// tcp), or the destination's address and interface where the run knows them
/// (`10.0.0.2 on eth1 mtu 1500`), else `network`.
pub fn link(run: &RunResult, from: &str, to: &str, transport: Transport) -> String {
    if from == to {
        return match transport {
            Transport::Tcp => "same host".to_string(),
            t => format!("same host, {t}"),
        };
    }
    let Some(h) = run.environment.host(to) else {
        return "network".to_string();
    };
    match &h.addr {
        Some(addr) => match h.nic_of(addr) {
            Some(n) => format!("{addr} on {}", n.describe()),
            None => addr.clone(),
        },
        None => "network".to_string(),
    }
}

/// The ping's and the echo's host of a latency case with one of each, if it has them.
fn pair_of<'a>(run: &'a RunResult, c: &'a CaseResult) -> Option<(&'a str, &'a str)> {
    if c.kind != Kind::Latency {
        return None;
    }
    let ping = c.nodes.iter().find(|n| n.role == "ping")?;
    let echo = c.nodes.iter().find(|n| n.role == "echo")?;
    Some((run.node_host(ping), run.node_host(echo)))
}

/// Seed 001's table: a row per latency case with a ping and an echo, by the hosts they ran
/// on.
#[derive(Debug, Clone, PartialEq)]
pub struct HostPairs {
    /// Column heads.
    pub heads: Vec<&'static str>,
    /// Rows of text cells, one per case, in run order.
    pub rows: Vec<Vec<String>>,
    /// How many of the first columns are text (the rest are numbers).
    pub text_columns: usize,
}

/// What the host-pair table says, for the reports to print above it.
pub const HOST_PAIRS_NOTE: &str = "Each request/reply case by the hosts its ping (source) \
     and echo (destination) ran on: round trips per second and the mean and median one-way \
     latency (round trip / 2, which needs no clock shared between the hosts), medians over \
     the repetitions ± half their 95% confidence interval.";

/// The host-pair table of a run whose latency cases (each with a ping and an echo) ran on
/// more than one pair of hosts; None otherwise. Pattern, transport and size get a column
/// only when the cases differ in them.
pub fn host_pairs(run: &RunResult) -> Option<HostPairs> {
    let cases: Vec<(&CaseResult, (&str, &str))> = run
        .cases
        .iter()
        .filter_map(|c| Some((c, pair_of(run, c)?)))
        .collect();
    let mut pairs: Vec<(&str, &str)> = cases.iter().map(|(_, p)| *p).collect();
    pairs.sort_unstable();
    pairs.dedup();
    if pairs.len() < 2 {
        return None;
    }
    let varies = |f: &dyn Fn(&CaseResult) -> String| {
        let first = f(cases[0].0);
        cases.iter().any(|(c, _)| f(c) != first)
    };
    let show_pattern = varies(&|c| c.pattern.clone());
    let show_transport = varies(&|c| c.transport.to_string());
    let show_size = varies(&|c| c.message_size.to_string());
    let mut heads = vec!["source", "destination", "link"];
    if show_pattern {
        heads.push("pattern");
    }
    if show_transport {
        heads.push("transport");
    }
    let text_columns = heads.len();
    if show_size {
        heads.push("size (B)");
    }
    heads.extend(["req/s", "latency (us)", "p50 (us)"]);
    let or_dash = |v: Option<String>, c: &CaseResult| match (v, &c.error) {
        (Some(v), _) => v,
        (None, Some(_)) => "failed".to_string(),
        (None, None) => "-".to_string(),
    };
    let rows = cases
        .iter()
        .map(|(c, (from, to))| {
            let mut r = vec![
                from.to_string(),
                to.to_string(),
                link(run, from, to, c.transport),
            ];
            if show_pattern {
                r.push(c.pattern.clone());
            }
            if show_transport {
                r.push(c.transport.to_string());
            }
            if show_size {
                r.push(c.message_size.to_string());
            }
            let s = &c.summary;
            r.push(or_dash(
                s.msgs_per_sec.as_ref().map(estimate::estimate_whole),
                c,
            ));
            r.push(or_dash(
                s.latency_us.as_ref().map(estimate::estimate_value),
                c,
            ));
            r.push(or_dash(s.p50_us.as_ref().map(estimate::estimate_value), c));
            r
        })
        .collect();
    Some(HostPairs {
        heads,
        rows,
        text_columns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::{host_pairs_run, machine_runs, sample_run};

    #[test]
    fn a_run_across_hosts_has_a_table_of_its_host_pairs() {
        let run = host_pairs_run();
        let t = host_pairs(&run).expect("9 cases on 9 host pairs");
        // The cases share their transport and size; their patterns differ by the pair.
        assert_eq!(
            t.heads,
            [
                "source",
                "destination",
                "link",
                "pattern",
                "req/s",
                "latency (us)",
                "p50 (us)"
            ]
        );
        assert_eq!(t.text_columns, 4);
        assert_eq!(t.rows.len(), 9);
        assert_eq!(t.rows[0][..4], ["a", "a", "same host", "reqrep[a->a]"]);
        assert_eq!(
            t.rows[1][..4],
            [
                "a",
                "b",
                "10.0.0.2 on veth-b mtu 1500 10000 Mb/s",
                "reqrep[a->b]"
            ]
        );
        // Every figure is a median with its interval, as `show` prints them.
        for r in &t.rows {
            for cell in &r[4..] {
                assert!(cell.contains(" ±"), "{cell}");
            }
        }
        let c = &run.cases[1];
        assert_eq!(
            t.rows[1][5],
            estimate::estimate_value(c.summary.latency_us.as_ref().unwrap())
        );
        assert_eq!(
            t.rows[1][4],
            estimate::estimate_whole(c.summary.msgs_per_sec.as_ref().unwrap())
        );
    }

    #[test]
    fn runs_on_one_host_have_no_host_pairs_or_host_lines() {
        let mut one = sample_run();
        assert!(host_pairs(&one).is_none());
        assert!(host_environments(&one).is_empty());
        // One host pair only (a ping and an echo on the same two hosts): no table either.
        let mut pairs = host_pairs_run();
        pairs.cases.truncate(1);
        assert!(host_pairs(&pairs).is_none());
        for m in machine_runs() {
            assert!(host_pairs(&m).is_none());
            assert!(host_environments(&m).is_empty());
        }
        // A failed case reads `failed`, not a blank.
        one = host_pairs_run();
        one.cases[4].summary = Default::default();
        one.cases[4].error = Some("node echo on host b died".into());
        let t = host_pairs(&one).unwrap();
        assert_eq!(t.rows[4][4..], ["failed", "failed", "failed"]);
    }

    #[test]
    fn each_host_is_described_in_the_environment() {
        let run = host_pairs_run();
        let lines = host_environments(&run);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1].0, "host b");
        assert_eq!(
            lines[1].1,
            "ns-b, Intel(R) Xeon(R) Gold 6248R CPU @ 3.00GHz, 2 cores, kernel 6.1.0-27-amd64, \
             libzmq 4.3.5 (bundled), reached at 10.0.0.2 on veth-b mtu 1500 10000 Mb/s"
        );
    }

    #[test]
    fn links() {
        let run = host_pairs_run();
        assert_eq!(link(&run, "a", "a", Transport::Ipc), "same host, ipc");
        assert_eq!(
            link(&run, "b", "c", Transport::Tcp),
            "10.0.0.3 on veth-c mtu 1500 10000 Mb/s"
        );
        assert_eq!(link(&run, "b", "nowhere", Transport::Tcp), "network");
        let mut bare = run.clone();
        bare.environment.hosts[2].addr = None;
        assert_eq!(link(&bare, "b", "c", Transport::Tcp), "network");
        bare.environment.hosts[2].addr = Some("10.9.9.9".into());
        assert_eq!(link(&bare, "b", "c", Transport::Tcp), "10.9.9.9");
    }
}
