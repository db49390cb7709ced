//! PTMP's README examples with `zmqperf` in place of `./build/test/`: check_recv and
//! check_send as two processes in a temp folder (so `ipc://junk.txt` is a path of its
//! own), under watchdogs, with short TIMEOUT arguments. The phenomena are races by nature,
//! so each example is tried up to ATTEMPTS times: the conditions make the expected outcome
//! essentially certain, every attempt is printed, and the test fails only when no attempt
//! shows it. Plus check_sendrecv, the JSON schema and the usage errors.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const ATTEMPTS: usize = 5;
const T: u64 = 30;

static DIR_N: AtomicUsize = AtomicUsize::new(0);

/// A fresh, empty working folder of this test process.
fn temp_dir() -> PathBuf {
    let n = DIR_N.fetch_add(1, Ordering::SeqCst);
    let d = std::env::temp_dir().join(format!("zmqperf-ptmp-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn in_dir(dir: &Path, args: &[&str]) -> Command {
    let mut c = zp(args);
    c.current_dir(dir);
    c
}

/// Waits until the receiver has bound `ipc://junk.txt` (the socket file exists).
fn wait_bound(dir: &Path) {
    let path = dir.join("junk.txt");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !path.exists() {
        assert!(Instant::now() < deadline, "check_recv never bound {path:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// One run of a seed example: check_recv started first (and bound), then check_send to
/// its end, then check_recv to its end.
fn seed(recv: &[&str], send: &[&str]) -> (Output, Output) {
    let dir = temp_dir();
    let r = Proc::spawn(in_dir(&dir, recv), T);
    wait_bound(&dir);
    let s = run(in_dir(&dir, send), T);
    let r = r.finish();
    let _ = std::fs::remove_dir_all(&dir);
    (r, s)
}

/// Runs the example up to ATTEMPTS times until `wanted` holds for one, printing each.
fn until(what: &str, recv: &[&str], send: &[&str], wanted: impl Fn(&Output, &Output) -> bool) {
    for attempt in 1..=ATTEMPTS {
        let (r, s) = seed(recv, send);
        println!(
            "{what}, attempt {attempt}: check_recv exit {:?}\n{}{}check_send exit {:?}\n{}{}",
            r.code, r.stdout, r.stderr, s.code, s.stdout, s.stderr
        );
        assert!(!r.stderr.contains("panicked") && !s.stderr.contains("panicked"));
        if wanted(&r, &s) {
            return;
        }
    }
    panic!("{what}: not seen in {ATTEMPTS} attempts (each printed above)");
}

/// The gap lines of an output: `i - seq = diff : ts`, parsed.
fn gap_lines(out: &str) -> Vec<(u64, u64, i64, f64)> {
    out.lines()
        .filter_map(|l| {
            let (left, t) = l.split_once(" : ")?;
            let t: f64 = t.strip_suffix('s')?.parse().ok()?;
            let (sub, diff) = left.split_once(" = ")?;
            let (i, seq) = sub.split_once(" - ")?;
            Some((i.parse().ok()?, seq.parse().ok()?, diff.parse().ok()?, t))
        })
        .collect()
}

/// The figure after `word ` on the ledger line.
fn ledger(out: &str, word: &str) -> u64 {
    let line = out
        .lines()
        .find(|l| l.starts_with("ledger: "))
        .unwrap_or_else(|| panic!("no ledger line in:\n{out}"));
    let at = line
        .find(&format!("{word} "))
        .unwrap_or_else(|| panic!("no '{word}' in {line}"));
    line[at + word.len() + 1..]
        .split(|c: char| !(c.is_ascii_digit() || c == ','))
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap()
}

/// Seed: `check_recv 10 SUB bind ipc://junk.txt` + `check_send 10000 PUB connect
/// ipc://junk.txt 0`: the start of the stream is lost and the slow joiner is named. The
/// publisher sends 10,000 messages at once after connecting, in well under the time a
/// subscription takes, so the whole stream may go before it (nothing arrives: exit 17)
/// or only its start (exit 12); either way the loss is at the start. When it went before
/// check_send's connection was even seen (a loaded machine), check_send says so (exit 6).
#[test]
fn slow_joiner_with_no_start_delay_loses_the_start_and_is_named() {
    with_watchdog(ATTEMPTS as u64 * T, || {
        until(
            "slow joiner",
            &["check_recv", "10", "SUB", "bind", "ipc://junk.txt", "1000"],
            &[
                "check_send",
                "10000",
                "PUB",
                "connect",
                "ipc://junk.txt",
                "0",
            ],
            |r, s| {
                // check_send exits 0, or 6 when the whole stream went before its
                // connection was even seen (then nothing arrived: check_recv exits 17).
                let sender_ok = s.code == Some(0)
                    || (s.code == Some(6)
                        && r.code == Some(17)
                        && s.stderr.contains("no receiver was seen connected"));
                sender_ok
                    && matches!(r.code, Some(12) | Some(17))
                    && r.stderr.contains("Likely cause: slow joiner")
                    && ledger(&r.stdout, "at the start") > 0
                    && ledger(&r.stdout, "at the end") == 0
            },
        );
    });
}

/// The seed's gap line, `0 - 1797 = -1797 : 2.74924s`: with a stream long enough to
/// outlast the subscription (100,000 messages), the first message received is not seq 0,
/// its line says by how much, and the fix names a START_DELAY_MS measured from the
/// trailer of check_send's messages.
#[test]
fn slow_joiner_gap_line_has_the_seeds_shape() {
    with_watchdog(ATTEMPTS as u64 * T, || {
        until(
            "slow joiner gap line",
            &["check_recv", "10", "SUB", "bind", "ipc://junk.txt", "1000"],
            &[
                "check_send",
                "100000",
                "PUB",
                "connect",
                "ipc://junk.txt",
                "0",
            ],
            |r, _| {
                let lines = gap_lines(&r.stdout);
                let Some(&(i, seq, diff, t)) = lines.first() else {
                    return false;
                };
                r.code == Some(12)
                    && i == 0
                    && seq > 0
                    && diff == -(seq as i64)
                    && t > 0.0
                    && lines.len() == 1
                    && ledger(&r.stdout, "at the start") == seq
                    && r.stderr.contains("took effect")
                    && r.stderr.contains("START_DELAY_MS of ")
            },
        );
    });
}

/// Seed: the same with `check_send ... 1`: a 1 ms start delay, and the receiver sees seq 0.
#[test]
fn start_delay_of_1_ms_lets_the_receiver_see_seq_0() {
    with_watchdog(ATTEMPTS as u64 * T, || {
        until(
            "start delay 1 ms",
            &["check_recv", "10", "SUB", "bind", "ipc://junk.txt", "1000"],
            &[
                "check_send",
                "10000",
                "PUB",
                "connect",
                "ipc://junk.txt",
                "1",
            ],
            |r, _| {
                r.code == Some(0)
                    && r.stdout.starts_with("0 - 0 = 0 : ")
                    && gap_lines(&r.stdout).len() == 1
                    && ledger(&r.stdout, "lost") == 0
                    && ledger(&r.stdout, "received") == 10
            },
        );
    });
}

/// Seed: `check_recv 10000 PAIR bind` + `check_send 10000 PAIR connect`: the sender quits
/// with linger 0 while its queue is full; PTMP's receiver hung, zmqperf's ends after its
/// TIMEOUT (1500 ms; a waiting line after 1 s) with the ledger, the sender's disconnection, and the fast quit named.
#[test]
fn fast_quit_ends_after_the_timeout_with_the_ledger_and_the_cause() {
    with_watchdog(ATTEMPTS as u64 * T, || {
        until(
            "fast quit",
            &[
                "check_recv",
                "10000",
                "PAIR",
                "bind",
                "ipc://junk.txt",
                "1500",
            ],
            &["check_send", "10000", "PAIR", "connect", "ipc://junk.txt"],
            |r, s| {
                s.code == Some(0)
                    && r.code == Some(17)
                    && r.stdout
                        .contains("then nothing for 1.5 s (the sender had disconnected)")
                    && ledger(&r.stdout, "at the end") > 0
                    && ledger(&r.stdout, "received") + ledger(&r.stdout, "at the end") == 10_000
                    && r.stderr.contains("Likely cause: fast quit")
                    && r.stderr.contains("QUIT_DELAY_MS of ")
                    && r.stderr.contains("waiting: ")
            },
        );
    });
}

/// Seed: `check_send 10000 PAIR connect ipc://junk.txt 0 1000`: a 1 s quit delay, and all
/// 10,000 arrive.
#[test]
fn quit_delay_of_1000_ms_delivers_everything() {
    with_watchdog(ATTEMPTS as u64 * T, || {
        until(
            "quit delay 1000 ms",
            &[
                "check_recv",
                "10000",
                "PAIR",
                "bind",
                "ipc://junk.txt",
                "1000",
            ],
            &[
                "check_send",
                "10000",
                "PAIR",
                "connect",
                "ipc://junk.txt",
                "0",
                "1000",
            ],
            |r, _| {
                r.code == Some(0)
                    && ledger(&r.stdout, "received") == 10_000
                    && ledger(&r.stdout, "lost") == 0
                    && r.stdout.starts_with("0 - 0 = 0 : ")
            },
        );
    });
}

/// check_sendrecv over the blocking patterns loses nothing, on every transport, and says
/// both rates.
#[test]
fn sendrecv_blocking_patterns_deliver_everything() {
    with_watchdog(120, || {
        for pattern in ["pipe", "pushpull"] {
            for (side, addr) in [
                ("bind", "inproc://sendrecv".to_string()),
                ("connect", ipc_endpoint()),
                ("bind", "tcp://127.0.0.1:*".to_string()),
            ] {
                let args = ["check_sendrecv", "20000", side, pattern, &addr];
                let o = run(zp(&args), T);
                assert_eq!(o.code, Some(0), "{args:?}: {o:?}");
                assert!(o.stdout.contains("send:    20,000 in "), "{}", o.stdout);
                assert!(o.stdout.contains("receive: 20,000 in "), "{}", o.stdout);
                assert_eq!(ledger(&o.stdout, "lost"), 0, "{}", o.stdout);
            }
        }
    });
}

/// check_sendrecv pubsub: whatever is lost is accounted for and, if anything, named.
#[test]
fn sendrecv_pubsub_accounts_for_every_message() {
    with_watchdog(60, || {
        let o = run(
            zp(&[
                "check_sendrecv",
                "100000",
                "bind",
                "pubsub",
                "inproc://ps",
                "--json",
            ]),
            T,
        );
        assert!(matches!(o.code, Some(0) | Some(12)), "{o:?}");
        let v = results(&o.stdout);
        let l = &v["loss"];
        assert_eq!(l["expected"], 100_000);
        assert_eq!(
            l["received"].as_u64().unwrap() + l["lost"].as_u64().unwrap(),
            100_000
        );
        assert_eq!(o.code == Some(12), l["lost"].as_u64().unwrap() > 0);
        if o.code == Some(12) {
            assert!(o.stderr.contains("Likely cause: "), "{}", o.stderr);
        }
        assert!(v["send_rate_msgs_per_s"].as_f64().unwrap() > 0.0);
    });
}

/// Every --json object follows schema/ptmp-result.schema.json: check_send, check_recv
/// (complete, and cut short), check_sendrecv.
#[test]
fn every_json_output_follows_the_schema() {
    with_watchdog(120, || {
        let mut outputs = Vec::new();
        let (r, s) = seed(
            &[
                "check_recv",
                "1000",
                "PULL",
                "bind",
                "ipc://junk.txt",
                "1000",
                "--json",
            ],
            &[
                "check_send",
                "1000",
                "PUSH",
                "connect",
                "ipc://junk.txt",
                "0",
                "500",
                "--json",
            ],
        );
        assert_eq!(r.code, Some(0), "{r:?}");
        outputs.push(("check_recv", r.stdout));
        outputs.push(("check_send", s.stdout));
        // More expected than sent: the end mark ends it (all of the shorter stream came).
        let (r, _) = seed(
            &[
                "check_recv",
                "2000",
                "PULL",
                "bind",
                "ipc://junk.txt",
                "2000",
                "--json",
            ],
            &[
                "check_send",
                "1000",
                "PUSH",
                "connect",
                "ipc://junk.txt",
                "0",
                "500",
                "--size",
                "24",
            ],
        );
        assert_eq!(r.code, Some(0), "{r:?}");
        assert!(r.stderr.contains("fewer than COUNT"), "{}", r.stderr);
        outputs.push(("check_recv short", r.stdout));
        let o = run(
            zp(&[
                "check_sendrecv",
                "1000",
                "connect",
                "pair",
                "tcp://127.0.0.1:*",
                "--json",
            ]),
            T,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        outputs.push(("check_sendrecv", o.stdout));
        for (what, text) in outputs {
            // The envelope's schema checks the results against ptmp-result.schema.json.
            let value = envelope(&text);
            assert_eq!(value["kind"], what.split(' ').next().unwrap(), "{text}");
        }
    });
}

/// Usage errors: a type of the wrong end (3, naming the types that fit), a bad COUNT (3),
/// --size with PTMP's messages (3), a missing ADDR (2), a bad side (3), inproc between
/// processes (4).
#[test]
fn argument_errors_name_the_fix() {
    with_watchdog(60, || {
        fails_within(
            10,
            &["check_send", "10", "SUB", "connect", "ipc://x"],
            3,
            "check_send takes PAIR, PUB or PUSH",
        );
        fails_within(
            10,
            &["check_recv", "10", "push", "bind", "ipc://x"],
            3,
            "give PULL here and PUSH to check_send",
        );
        fails_within(
            10,
            &["check_recv", "ten", "SUB", "bind", "ipc://x"],
            3,
            "<COUNT>",
        );
        // PTMP's messages have no size of their own to set.
        fails_within(
            10,
            &[
                "check_send",
                "10",
                "PUSH",
                "bind",
                "ipc://x",
                "--wire",
                "ptmp",
                "--size",
                "100",
            ],
            3,
            "--size '100': does not apply with --wire ptmp",
        );
        fails_within(
            10,
            &["check_send", "0", "PUB", "bind", "ipc://x"],
            3,
            "<COUNT>",
        );
        fails_within(10, &["check_send", "10", "PUB", "connect"], 2, "<ADDR>");
        fails_within(
            10,
            &["check_recv", "10", "SUB", "listen", "ipc://x"],
            3,
            "bind or connect",
        );
        fails_within(
            10,
            &["check_recv", "10", "SUB", "bind", "inproc://x"],
            4,
            "check_sendrecv",
        );
        fails_within(
            10,
            &["check_sendrecv", "10", "bind", "reqrep", "inproc://x"],
            3,
            "pushpull",
        );
    });
}

/// Types that do not pair (a PUB sending to a PULL): the receiver names the handshake
/// failure (exit 9) instead of waiting for ever.
#[test]
fn types_that_do_not_pair_are_named() {
    with_watchdog(60, || {
        let (r, _) = seed(
            &["check_recv", "10", "PULL", "bind", "ipc://junk.txt", "1000"],
            &[
                "check_send",
                "10",
                "PUB",
                "connect",
                "ipc://junk.txt",
                "0",
                "1500",
            ],
        );
        assert_eq!(r.code, Some(9), "{r:?}");
        assert!(r.stderr.contains("cannot talk to this one"), "{}", r.stderr);
    });
}

/// Nothing sent at all: check_recv ends after its TIMEOUT with exit 6 and a waiting line.
#[test]
fn no_sender_ends_after_the_timeout() {
    with_watchdog(30, || {
        let dir = temp_dir();
        let started = Instant::now();
        let o = run(
            in_dir(
                &dir,
                &["check_recv", "10", "SUB", "bind", "ipc://junk.txt", "1500"],
            ),
            T,
        );
        assert_eq!(o.code, Some(6), "{o:?}");
        assert!(started.elapsed() >= Duration::from_millis(1500));
        assert!(
            o.stderr.contains("waiting: 0 of 10 received"),
            "{}",
            o.stderr
        );
        assert!(
            o.stderr.contains("Start the other side (check_send)"),
            "{}",
            o.stderr
        );
        // check_recv has no --timeout: the advice names its TIMEOUT argument.
        assert!(
            o.stderr
                .contains("or raise TIMEOUT (check_recv's last argument, in ms)")
                && !o.stderr.contains("--timeout"),
            "{}",
            o.stderr
        );
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// The number after `word` at the start of the first line of `out` that starts with it
/// (`recv 1,234 of ...` -> 1234 for "recv"; PTMP's summary line, `I: ... recv COUNT ...`,
/// is not that line).
fn figure_after(out: &str, word: &str) -> u64 {
    let line = out
        .lines()
        .find(|l| l.starts_with(word))
        .unwrap_or_else(|| panic!("no line starting '{word}' in {out}"));
    line[word.len()..]
        .trim_start()
        .split(|c: char| !(c.is_ascii_digit() || c == ','))
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("no number after '{word}' in {out}"))
}

/// check_recv of 50,000,000 messages bound on ipc://junk.txt in a fresh folder, and
/// check_send of as many with `send_tail` (its delays and options) connected to it, both
/// 800 ms into the stream (which takes tens of seconds).
fn mid_stream(send_tail: &[&str]) -> (PathBuf, Proc, Proc) {
    let dir = temp_dir();
    let recv = [
        "check_recv",
        "50000000",
        "PULL",
        "bind",
        "ipc://junk.txt",
        "20000",
    ];
    let r = Proc::spawn(in_dir(&dir, &recv), T);
    wait_bound(&dir);
    let mut send = vec![
        "check_send",
        "50000000",
        "PUSH",
        "connect",
        "ipc://junk.txt",
    ];
    send.extend_from_slice(send_tail);
    let s = Proc::spawn(in_dir(&dir, &send), T);
    std::thread::sleep(Duration::from_millis(800));
    (dir, r, s)
}

/// SIGTERM (timeout, systemd, CI) ends check_recv and check_send as Ctrl-C would: each
/// prints what it did, exits 128 + 15, and what was still to come is not counted as lost.
/// Whether or not anything had arrived when the signal came, the report says so.
#[test]
fn sigterm_ends_check_recv_and_check_send_with_their_figures() {
    with_watchdog(T, || {
        // The receiver stopped mid-stream (50,000,000 messages take tens of seconds).
        let (dir, r, s) = mid_stream(&["0", "0", "--timeout", "2s"]);
        unsafe { libc::kill(r.pid() as i32, libc::SIGTERM) };
        let ro = r.finish();
        assert_eq!(ro.code, Some(143), "{ro:?}");
        assert!(ro.stdout.contains("interrupted by SIGTERM"), "{ro:?}");
        assert!(ro.stdout.contains("lost 0"), "{ro:?}");
        assert!(ro.stderr.contains("interrupted: after"), "{ro:?}");
        // The sender, its receiver gone, blocks: SIGTERM ends the wait with its figures.
        unsafe { libc::kill(s.pid() as i32, libc::SIGTERM) };
        let so = s.finish();
        assert_eq!(so.code, Some(143), "{so:?}");
        assert!(figure_after(&so.stdout, "send") < 50_000_000, "{so:?}");
        let _ = std::fs::remove_dir_all(&dir);

        // The sender stopped mid-stream: its last message carries the end mark and its quit
        // delay still lets its queue drain, so the receiver knows the stream's length and
        // that every message of it arrived.
        let (dir, r, s) = mid_stream(&["0", "3000"]);
        unsafe { libc::kill(s.pid() as i32, libc::SIGTERM) };
        let so = s.finish();
        let ro = r.finish();
        assert_eq!(so.code, Some(143), "{so:?}");
        let sent = figure_after(&so.stdout, "send");
        assert!(sent < 50_000_000, "{so:?}");
        assert_eq!(ro.code, Some(0), "{ro:?}");
        assert!(
            ro.stdout.contains("the sender's last message arrived"),
            "{ro:?}"
        );
        assert_eq!(figure_after(&ro.stdout, "recv"), sent, "{ro:?}\n{so:?}");
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// A sender without the measurement header (remote_thr --plain): check_recv stops at
/// message #0 with exit 9. It said "then nothing for 2 s", counted all COUNT as lost and,
/// for a SUB, named a slow joiner.
#[test]
fn a_protocol_error_at_the_first_message_claims_no_timeout_loss_or_cause() {
    with_watchdog(2 * T, || {
        for kind in ["PULL", "SUB"] {
            let r = Proc::spawn(
                zp(&[
                    "check_recv",
                    "100",
                    kind,
                    "bind",
                    "tcp://127.0.0.1:*",
                    "5000",
                    "--json",
                ]),
                T,
            );
            let ep = r.bound_endpoint();
            let mut send = vec![
                "remote_thr",
                &ep,
                "64",
                "100000",
                "--plain",
                "--timeout",
                "5s",
            ];
            if kind == "SUB" {
                send.extend(["--pattern", "pubsub"]);
            }
            let s = Proc::spawn(zp(&send), T);
            let r = r.finish();
            // remote_thr may wait for a hang-up that the receiver gave by leaving.
            let _ = s.finish();
            assert_eq!(r.code, Some(9), "{kind}: {r:?}");
            let v = results(&r.stdout);
            assert_eq!(v["ended"], "protocol_error", "{kind}: {v}");
            assert_eq!(v["loss"]["lost"], 0, "{kind}: {v}");
            assert_eq!(v["causes"], Value::Array(vec![]), "{kind}: {v}");
            assert!(
                v["protocol_error"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("message #0 ")),
                "{kind}: {v}"
            );
        }
    });
}

/// PTMP's two-process PUB/SUB with a 1 s quit delay (`check_send 1000000 PUB connect ADDR 5
/// 1000`): the publisher outruns the subscriber and its lost tail is its high-water mark's.
/// It was "fast quit ... QUIT_DELAY_MS of 157" though the sender had waited 1000 ms.
#[test]
fn a_publisher_that_waited_a_second_is_not_called_a_fast_quit() {
    with_watchdog(ATTEMPTS as u64 * T, || {
        until(
            "a PUB's tail lost though it waited 1000 ms",
            &[
                "check_recv",
                "1000000",
                "SUB",
                "bind",
                "ipc://junk.txt",
                "1500",
            ],
            &[
                "check_send",
                "1000000",
                "PUB",
                "connect",
                "ipc://junk.txt",
                "5",
                "1000",
            ],
            |r, _| {
                assert!(
                    !r.stderr.contains("fast quit:") && !r.stderr.contains("QUIT_DELAY_MS of"),
                    "{}",
                    r.stderr
                );
                r.code == Some(17)
                    && ledger(&r.stdout, "at the end") > 0
                    && r.stderr.contains(
                        "though the sender waited 1000 ms after its last message (its QUIT_DELAY_MS), so not a fast quit",
                    )
            },
        );
    });
}

/// Seed 004's table has CPU (110%) and RSS beside the rates: check_send and check_recv say
/// what their process used, as a share of one core, peak RSS and VIRT, in the text and the
/// JSON.
#[test]
fn check_send_and_check_recv_report_cpu_rss_and_virt() {
    with_watchdog(ATTEMPTS as u64 * T, || {
        let (r, s) = seed(
            &[
                "check_recv",
                "2000",
                "PULL",
                "bind",
                "ipc://junk.txt",
                "5000",
                "--json",
            ],
            &[
                "check_send",
                "2000",
                "PUSH",
                "connect",
                "ipc://junk.txt",
                "0",
                "500",
            ],
        );
        assert_eq!((r.code, s.code), (Some(0), Some(0)), "{r:?}\n{s:?}");
        let line = s
            .stdout
            .lines()
            .find(|l| l.starts_with("check_send: CPU "))
            .unwrap_or_else(|| panic!("no resources line in:\n{}", s.stdout));
        assert!(
            line.contains("% of a core") && line.contains("peak RSS") && line.contains("VIRT"),
            "{line}"
        );
        let v = results(&r.stdout);
        let u = &v["resources"];
        let rss = u["peak_rss_kib"].as_u64().unwrap();
        let virt = u["peak_virt_kib"].as_u64().unwrap();
        assert!(rss > 1024 && virt >= rss, "{u}");
        let pct = u["cpu_core_pct"].as_f64().unwrap();
        let wall = u["wall_s"].as_f64().unwrap();
        let cpu_ms = u["cpu_user_ms"].as_f64().unwrap() + u["cpu_sys_ms"].as_f64().unwrap();
        assert!(
            wall > 0.0 && (pct - cpu_ms / 10.0 / wall).abs() < 1e-6,
            "{u}"
        );
    });
}

/// pyzmq and protobuf for the PTMP peer written in Python below.
const PTMP_PY_PACKAGES: &str = "pyzmq==27.3.0 protobuf==5.29.3";

/// A PTMP sender and reader in Python: pyzmq for the sockets, the `protobuf` package for
/// the TPSet, its class built at run time from a descriptor of PTMP's ptmp.proto (fields
/// and numbers as there), so nothing is shared with zmqperf's own encoder.
/// `send EP N HOLES`: PUSH connects to EP and sends counts 0..N-1 but HOLES (comma
/// separated), each as PTMP's TPSender does (a 4-byte int 0, then the TPSet), then closes
/// with a linger that lets them all go. `recv EP N`: PULL binds EP and reads N messages
/// (each wait bounded), printing one JSON line with what each held.
const PTMP_PY: &str = r#"
import json, struct, sys, time
import zmq
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto
fdp = descriptor_pb2.FileDescriptorProto(name="ptmp.proto", package="ptmp.data", syntax="proto2")
tp = fdp.message_type.add(name="TrigPrim")
for name, num, typ, lab in [("channel", 1, F.TYPE_UINT32, F.LABEL_REQUIRED),
                            ("tstart", 2, F.TYPE_UINT64, F.LABEL_REQUIRED),
                            ("tspan", 3, F.TYPE_UINT32, F.LABEL_OPTIONAL),
                            ("adcsum", 4, F.TYPE_UINT32, F.LABEL_OPTIONAL),
                            ("adcpeak", 5, F.TYPE_UINT32, F.LABEL_OPTIONAL),
                            ("flags", 6, F.TYPE_UINT32, F.LABEL_OPTIONAL)]:
    tp.field.add(name=name, number=num, type=typ, label=lab)
ts = fdp.message_type.add(name="TPSet")
for name, num, typ, lab in [("count", 1, F.TYPE_UINT32, F.LABEL_REQUIRED),
                            ("detid", 2, F.TYPE_UINT32, F.LABEL_REQUIRED),
                            ("created", 3, F.TYPE_INT64, F.LABEL_REQUIRED),
                            ("tstart", 4, F.TYPE_UINT64, F.LABEL_REQUIRED),
                            ("tspan", 5, F.TYPE_UINT32, F.LABEL_OPTIONAL),
                            ("chanbeg", 6, F.TYPE_UINT32, F.LABEL_OPTIONAL),
                            ("chanend", 7, F.TYPE_UINT32, F.LABEL_OPTIONAL),
                            ("totaladc", 8, F.TYPE_UINT32, F.LABEL_OPTIONAL)]:
    ts.field.add(name=name, number=num, type=typ, label=lab)
ts.field.add(name="tps", number=9, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
             type_name=".ptmp.data.TrigPrim")
pool = descriptor_pool.DescriptorPool()
pool.Add(fdp)
TPSet = message_factory.GetMessageClass(pool.FindMessageTypeByName("ptmp.data.TPSet"))

mode, ep, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
ctx = zmq.Context()
if mode == "send":
    holes = {int(h) for h in sys.argv[4].split(",") if h}
    s = ctx.socket(zmq.PUSH)
    s.setsockopt(zmq.LINGER, 10000)
    s.setsockopt(zmq.SNDTIMEO, 10000)
    s.connect(ep)
    for count in range(n):
        if count in holes:
            continue
        now = int(time.time() * 1e6)
        tps = TPSet(count=count, detid=4, created=now, tstart=now * 50)
        tps.tps.add(channel=count % 7, tstart=now * 50, adcsum=100 + count)
        s.send_multipart([struct.pack("<i", 0), tps.SerializeToString()])
    s.close()
    ctx.term()
else:
    s = ctx.socket(zmq.PULL)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.RCVTIMEO, 10000)
    s.bind(ep)
    out = []
    for _ in range(n):
        frames = s.recv_multipart()
        tps = TPSet()
        tps.ParseFromString(frames[-1])
        out.append({"frames": len(frames), "type_len": len(frames[0]),
                    "type": struct.unpack("<i", frames[0])[0] if len(frames[0]) == 4 else None,
                    "count": tps.count, "detid": tps.detid, "created": tps.created,
                    "tstart": tps.tstart, "initialized": tps.IsInitialized()})
    print(json.dumps({"messages": out, "now": int(time.time() * 1e6)}))
    s.close()
    ctx.term()
"#;

/// The venv's python with pyzmq and protobuf, and the script written into `dir`.
fn ptmp_python(dir: &Path) -> (PathBuf, PathBuf) {
    let py = pip_venv("ptmp-py-venv", PTMP_PY_PACKAGES).join("bin/python");
    let script = dir.join("ptmp_peer.py");
    std::fs::write(&script, PTMP_PY).expect("writing the script");
    (py, script)
}

/// A PTMP sender (Python: pyzmq + protobuf) with holes at 5, 6, 7 and 20 of 0..49, read
/// by `zmqperf check_recv`: the format is told from the first message, the gap lines are
/// exactly PTMP's, PTMP's summary line counts the 4 missed, the ledger places them in the
/// middle (exit 12), and the JSON says the wire was PTMP's.
#[test]
fn check_recv_reads_a_ptmp_sender_with_exact_gap_lines() {
    with_watchdog(700, || {
        let dir = temp_dir();
        let (py, script) = ptmp_python(&dir);
        // 46 messages are sent: COUNT reached ends it as soon as the last is in.
        let recv = |json: bool| {
            let mut a = vec!["check_recv", "46", "PULL", "bind", "ipc://junk.txt", "5000"];
            if json {
                a.push("--json");
            }
            let r = Proc::spawn(in_dir(&dir, &a), T);
            wait_bound(&dir);
            let mut send = Command::new(&py);
            send.current_dir(&dir)
                .arg(&script)
                .args(["send", "ipc://junk.txt", "50", "5,6,7,20"]);
            let s = run(send, T);
            assert_eq!(s.code, Some(0), "the Python sender: {s:?}");
            let r = r.finish();
            let _ = std::fs::remove_file(dir.join("junk.txt"));
            r
        };
        let r = recv(false);
        println!("check_recv: exit {:?}\n{}{}", r.code, r.stdout, r.stderr);
        assert_eq!(r.code, Some(12), "4 lost: {r:?}");
        let lines: Vec<(u64, u64, i64)> = gap_lines(&r.stdout)
            .into_iter()
            .map(|(i, s, d, _)| (i, s, d))
            .collect();
        assert_eq!(lines, [(0, 0, 0), (5, 8, -3), (17, 21, -4)], "{}", r.stdout);
        let summary = r
            .stdout
            .lines()
            .find(|l| l.starts_with("I: ") && l.contains(" recv 46 in "))
            .unwrap_or_else(|| panic!("no PTMP summary line:\n{}", r.stdout));
        assert!(summary.ends_with(" kHz, missed 4"), "{summary}");
        assert!(r.stdout.contains("PTMP's TPSet messages"), "{}", r.stdout);
        assert_eq!(ledger(&r.stdout, "received"), 46);
        assert_eq!(ledger(&r.stdout, "in the middle"), 4);
        assert_eq!(ledger(&r.stdout, "at the start"), 0);
        let r = recv(true);
        assert_eq!(r.code, Some(12), "{r:?}");
        let v = results(&r.stdout);
        assert_eq!(v["wire"], "ptmp", "{v}");
        assert_eq!(v["ptmp_summary"]["missed"], 4, "{v}");
        assert_eq!(v["loss"]["lost_in_middle"], 4, "{v}");
        let _ = std::fs::remove_dir_all(&dir);
    });
}

/// `zmqperf check_send --wire ptmp` read by the Python reader: every message is PTMP's
/// two frames (a 4-byte type 0, a TPSet with every required field), the counts are
/// 0..N-1 in order, detid is the stream id check_send reports, and created is the wall
/// clock (us) with tstart in PTMP's 50 MHz ticks.
#[test]
fn check_send_speaks_ptmp_to_a_ptmp_reader() {
    with_watchdog(700, || {
        let dir = temp_dir();
        let (py, script) = ptmp_python(&dir);
        const N: u64 = 2000;
        let mut read = Command::new(&py);
        read.current_dir(&dir)
            .arg(&script)
            .args(["recv", "ipc://junk.txt", &N.to_string()]);
        let reader = Proc::spawn(read, T);
        wait_bound(&dir);
        let n = N.to_string();
        let s = run(
            in_dir(
                &dir,
                &[
                    "check_send",
                    &n,
                    "PUSH",
                    "connect",
                    "ipc://junk.txt",
                    "0",
                    "1000",
                    "--wire",
                    "ptmp",
                    "--json",
                ],
            ),
            T,
        );
        let r = reader.finish();
        assert_eq!(s.code, Some(0), "check_send: {s:?}");
        assert_eq!(r.code, Some(0), "the Python reader: {r:?}");
        let sent = results(&s.stdout);
        assert_eq!(sent["wire"], "ptmp", "{sent}");
        let got: Value = serde_json::from_str(r.stdout.trim()).expect("the reader's JSON");
        let msgs = got["messages"].as_array().expect("messages");
        assert_eq!(msgs.len() as u64, N);
        let now = got["now"].as_i64().unwrap();
        for (i, m) in msgs.iter().enumerate() {
            assert_eq!(m["frames"], 2, "message {i}: {m}");
            assert_eq!(m["type_len"], 4, "message {i}: {m}");
            assert_eq!(m["type"], 0, "message {i}: {m}");
            assert_eq!(m["count"], i as u64, "message {i}: {m}");
            assert_eq!(
                m["initialized"], true,
                "message {i}: every required field: {m}"
            );
            assert_eq!(m["detid"], sent["stream_id"], "message {i}: {m}");
            let created = m["created"].as_i64().unwrap();
            assert!(
                created <= now && now - created < 60_000_000,
                "message {i}: created {created} us, the reader's clock {now} us"
            );
            assert_eq!(
                m["tstart"].as_i64().unwrap(),
                created * 50,
                "message {i}: {m}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    });
}
