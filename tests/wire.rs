//! What crosses the wire and what a receiver accepts from it: fan-out over IPv6, the size a
//! receiver will take from a stray peer, headers it cannot read, the exit codes of senders
//! whose messages went to no one, and how a stream ends.

mod common;

use common::*;

/// Longest a test here may take.
const T: u64 = 120;

/// A free tcp endpoint on the IPv6 loopback address. The test fails (it does not skip) on
/// a machine without it: these tests are about IPv6.
fn free_tcp6_endpoint() -> String {
    let l = std::net::TcpListener::bind("[::1]:0")
        .expect("this test needs the IPv6 loopback address ::1 (bind [::1]:0 failed)");
    let port = l.local_addr().unwrap().port();
    format!("tcp://[::1]:{port}")
}

#[test]
fn fanout_over_ipv6_connects_every_subscriber() {
    with_watchdog(T, || {
        // The bind address makes sure ::1 exists (see free_tcp6_endpoint).
        drop(free_tcp6_endpoint());
        let o = run(
            zp(&[
                "fanout",
                "-c",
                "1",
                "-s",
                "3",
                "-t",
                "0",
                "-n",
                "20",
                "-p",
                "2",
                "-h",
                "tcp://[::1]:*",
                "--no-history",
                "--timeout",
                "20s",
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stdout.contains("delivered: 120 of 120 (100%)"),
            "{}",
            o.stdout
        );
    });
}

#[test]
fn pub_and_sub_cluster_over_ipv6() {
    with_watchdog(T, || {
        let ep = free_tcp6_endpoint();
        let subs = Proc::spawn(
            zp(&[
                "sub-cluster",
                "-c",
                "1",
                "-n",
                "2",
                "-h",
                &ep,
                "--timeout",
                "20s",
                "--no-history",
            ]),
            T,
        );
        subs.wait_stderr("waiting for the publisher");
        let p = run(
            zp(&[
                "pub",
                "-h",
                &ep,
                "--subs",
                "2",
                "-t",
                "0",
                "-n",
                "5",
                "-p",
                "2",
                "--timeout",
                "20s",
            ]),
            T,
        );
        assert_eq!(p.code, Some(0), "{p:?}");
        let o = subs.finish();
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("delivered: 20 of 20 (100%)"), "{o:?}");
    });
}
