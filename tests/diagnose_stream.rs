//! `zmqperf diagnose --connect|--bind ENDPOINT --type SUB|PULL`: listening to a stream sent
//! by the test itself, with its holes, duplicates, reorderings and restart made by the
//! sender skipping or repeating numbers (never by high-water-mark timing), so the ledger
//! and the causes named are exact. Each test under a watchdog; temp databases only.

mod common;

use common::*;
use serde_json::Value;
use zmqperf::header::{Header, FLAG_TIMESTAMP};
use zmqperf::zmq;

/// Seconds a test may take under the watchdog.
const T: u64 = 60;

/// The finding with `id` in a run's JSON.
fn finding<'a>(run: &'a Value, id: &str) -> &'a Value {
    run["results"]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["id"] == id)
        .unwrap_or_else(|| panic!("no finding {id} in {run:#}"))
}

fn count(f: &Value, key: &str) -> u64 {
    f["evidence"][key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is not a count in {f:#}"))
}

/// The ids of the findings that carry a triage line.
fn ids(run: &Value) -> Vec<String> {
    run["results"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect()
}

/// The numbered triage lines of a text report, in order.
fn triage_lines(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("Triage, worst first:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| {
            l.trim_start()
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_digit())
        })
        .map(|l| l.trim().to_string())
        .collect()
}

/// The run recorded last in `db`, as JSON, and as text.
fn recorded(db: &str) -> (Value, String) {
    let mut json = zp(&["show", "last", "--format", "json"]);
    json.env("ZMQPERF_DB", db);
    let o = run(json, 30);
    assert_eq!(o.code, Some(0), "{o:?}");
    let v = envelope(&o.stdout);
    let mut text = zp(&["show", "last"]);
    text.env("ZMQPERF_DB", db);
    let t = run(text, 30);
    assert_eq!(t.code, Some(0), "{t:?}");
    (v, t.stdout)
}

/// A zmqperf message: the measurement header of stream 7 with `seq` and the send time.
fn zmqperf_message(seq: u64) -> Vec<u8> {
    let mut m = vec![0u8; 64];
    Header {
        flags: FLAG_TIMESTAMP,
        stream_id: 7,
        sequence: seq,
        send_ns: zmqperf::clock::now_ns(),
    }
    .encode(&mut m);
    m
}

#[test]
fn a_zmqperf_stream_with_a_missing_start_middle_and_tail_is_counted_exactly() {
    with_watchdog(T, || {
        let db = fresh_db("listen-zmqperf");
        let ctx = zmq::Context::new();
        // An XPUB, so the test knows when the listener's subscription has arrived: no slow
        // joiner but the one the sender makes on purpose. No high-water mark: nothing drops.
        let xpub = ctx.socket(zmq::XPUB).unwrap();
        xpub.set_linger(0).unwrap();
        xpub.set_sndhwm(0).unwrap();
        xpub.set_rcvtimeo(20_000).unwrap();
        xpub.bind("tcp://127.0.0.1:*").unwrap();
        let ep = xpub.get_last_endpoint().unwrap().unwrap();
        let mut cmd = zp(&[
            "diagnose",
            "--connect",
            &ep,
            "--type",
            "SUB",
            "--duration",
            "4s",
            "--expect",
            "1000",
            "--idle",
            "1s",
            "--json",
        ]);
        cmd.env("ZMQPERF_DB", &db);
        let p = Proc::spawn(cmd, T - 10);
        let sub = xpub.recv_bytes(0).expect("the listener's subscription");
        assert_eq!(sub, vec![1u8], "a subscription to everything");
        // 0..50 never sent (the start), 100..200 skipped (the middle), 800..1000 never sent
        // (the tail: the sender stops, its socket open).
        for seq in (50..100).chain(200..800) {
            xpub.send(zmqperf_message(seq), 0).unwrap();
        }
        let o = p.finish();
        drop(xpub);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(
            o.stderr.contains("listening on tcp://127.0.0.1:"),
            "{}",
            o.stderr
        );
        let v = envelope(&o.stdout);

        let s = finding(&v, "listen/stream");
        assert_eq!(s["experiment"], "listen");
        assert_eq!(s["transport"], "tcp");
        assert_eq!(count(s, "messages"), 650);
        assert_eq!(count(s, "received"), 650);
        assert_eq!(count(s, "lost_at_start"), 50);
        assert_eq!(count(s, "lost_in_middle"), 100);
        assert_eq!(count(s, "lost_at_end"), 200);
        assert_eq!(count(s, "lost"), 350);
        assert_eq!(count(s, "duplicated"), 0);
        assert_eq!(count(s, "reordered"), 0);
        assert_eq!(count(s, "streams"), 1);
        assert_eq!(count(s, "restarts"), 0);
        assert_eq!(count(s, "unreadable"), 0);
        assert_eq!(count(s, "latency_samples"), 650, "the header's send time");
        assert_eq!(s["evidence"]["ended_by"], "duration");
        let gaps: Vec<(u64, u64, &str)> = s["gaps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["first_seq"].as_u64().unwrap(),
                    g["count"].as_u64().unwrap(),
                    g["position"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            gaps,
            vec![(0, 50, "start"), (100, 100, "middle"), (800, 200, "end")]
        );
        // One finding per cause, each with its triage line.
        assert_eq!(
            ids(&v),
            vec![
                "listen/stream",
                "listen/slow-joiner",
                "listen/hwm",
                "listen/stopped"
            ]
        );
        let t = |id: &str| finding(&v, id)["triage"].clone();
        assert_eq!(t("listen/slow-joiner")["cause"], "slow joiner");
        assert_eq!(t("listen/slow-joiner")["lost"], 50);
        assert_eq!(t("listen/hwm")["cause"], "high-water mark");
        assert_eq!(t("listen/hwm")["lost"], 100);
        // A SUB's missing tail: the publisher dropped it at its high-water mark, quit fast or
        // stopped; the listener knows nothing that tells which.
        assert_eq!(t("listen/stopped")["cause"], "cannot tell");
        assert_eq!(t("listen/stopped")["lost"], 200);
        assert!(t("listen/stream").is_null());
        // The tail: nothing came for the rest of the listen (about 4 s, past --idle 1s).
        assert_eq!(count(finding(&v, "listen/stopped"), "streams_stopped"), 1);

        // Recorded in the history, and the text report leads with the triage, worst first.
        let (shown, text) = recorded(&db);
        assert_eq!(shown["results"]["findings"], v["results"]["findings"]);
        let lines = triage_lines(&text);
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[0].starts_with("1. cannot tell: 200 messages lost (tcp). Fix: "),
            "{lines:#?}"
        );
        assert!(
            lines[1].starts_with("2. high-water mark: 100 messages lost (tcp)"),
            "{lines:#?}"
        );
        assert!(
            lines[2].starts_with("3. slow joiner: 50 messages lost (tcp)"),
            "{lines:#?}"
        );
        let _ = std::fs::remove_file(&db);
    });
}

/// A foreign message: frame 0 a topic, frame 1 four bytes of something, the sequence as a
/// big-endian u32 at offset 4, then four more bytes.
fn foreign(seq: u32) -> [Vec<u8>; 2] {
    let mut body = vec![0xEE; 12];
    body[4..8].copy_from_slice(&seq.to_be_bytes());
    [b"ticks".to_vec(), body]
}

#[test]
fn a_foreign_stream_is_read_from_the_named_field_and_its_ledger_is_exact() {
    with_watchdog(T, || {
        let db = fresh_db("listen-foreign");
        let mut cmd = zp(&[
            "diagnose",
            "--bind",
            "tcp://127.0.0.1:*",
            "--type",
            "PULL",
            "--seq",
            "frame=1,offset=4,width=4,endian=big",
            "--count",
            "36",
            "--duration",
            "30s",
        ]);
        cmd.env("ZMQPERF_DB", &db);
        let p = Proc::spawn(cmd, T - 10);
        let ep = p.bound_endpoint();
        let ctx = zmq::Context::new();
        let push = ctx.socket(zmq::PUSH).unwrap();
        push.set_linger(0).unwrap();
        push.set_sndtimeo(10_000).unwrap();
        push.connect(&ep).unwrap();
        // Run 1: 0..10, a hole of 5 (10..15), 16 twice, 18 before 17, 19..30, 25 again.
        // Run 2 (the publisher restarted): 0..4, a hole of 2 (4, 5), 6, 7.
        let seqs: Vec<u32> = (0..10)
            .chain([15, 16, 16, 18, 17])
            .chain(19..30)
            .chain([25])
            .chain(0..4)
            .chain([6, 7])
            .collect();
        assert_eq!(seqs.len(), 33);
        for s in seqs {
            let [a, b] = foreign(s);
            push.send(a, zmq::SNDMORE).unwrap();
            push.send(b, 0).unwrap();
        }
        // Two messages too short for the field, one with a single frame.
        for short in [vec![0u8; 3], vec![0u8; 7]] {
            push.send(b"ticks", zmq::SNDMORE).unwrap();
            push.send(short, 0).unwrap();
        }
        push.send(b"ticks", 0).unwrap();
        let o = p.finish();
        drop(push);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.contains("(--count reached)"), "{}", o.stdout);

        let (v, text) = recorded(&db);
        let s = finding(&v, "listen/stream");
        assert_eq!(s["evidence"]["ended_by"], "count");
        assert_eq!(
            s["evidence"]["sequence_from"],
            "--seq frame=1,offset=4,width=4,endian=big"
        );
        assert_eq!(count(s, "messages"), 36);
        assert_eq!(count(s, "received"), 31);
        assert_eq!(count(s, "lost"), 7);
        assert_eq!(count(s, "lost_at_start"), 0);
        assert_eq!(count(s, "lost_in_middle"), 7);
        assert_eq!(count(s, "lost_at_end"), 0);
        assert_eq!(count(s, "duplicated"), 2);
        assert_eq!(count(s, "reordered"), 1);
        assert_eq!(count(s, "restarts"), 1);
        assert_eq!(count(s, "unreadable"), 3);
        assert!(
            s["evidence"].get("latency_samples").is_none(),
            "no send time in a foreign stream"
        );
        let u = finding(&v, "listen/unreadable");
        assert_eq!(count(u, "unreadable_too_short"), 2);
        assert_eq!(count(u, "unreadable_no_frame"), 1);
        let holes: Vec<(u64, u64)> = finding(&v, "listen/hwm")["gaps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["first_seq"].as_u64().unwrap(),
                    g["count"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(holes, vec![(10, 5), (4, 2)]);
        assert_eq!(
            ids(&v),
            vec![
                "listen/stream",
                "listen/hwm",
                "listen/reordering",
                "listen/duplicates",
                "listen/restart",
                "listen/unreadable"
            ]
        );
        // Worst first: the only loss, then by count (3 unreadable, 2 duplicates), then the
        // ties (1 reordered, 1 restart) in the order of the findings.
        let lines = triage_lines(&text);
        let causes: Vec<&str> = lines
            .iter()
            .map(|l| l.split_once(". ").unwrap().1.split(':').next().unwrap())
            .collect();
        assert_eq!(
            causes,
            vec![
                // Holes in a PUSH/PULL stream: a PUSH blocks at its high-water mark rather
                // than drop, so not the high-water mark.
                "lost on the way",
                "unreadable messages",
                "duplicates",
                "reordering",
                "publisher restart"
            ],
            "{text}"
        );
        assert!(lines[0].contains("7 messages lost (tcp)"), "{lines:#?}");
        assert!(lines[1].contains("3 messages unreadable"), "{lines:#?}");
        let _ = std::fs::remove_file(&db);
    });
}

#[test]
fn a_remedy_shared_by_several_transports_is_said_once_and_triage_adds_them_up() {
    with_watchdog(T, || {
        let o = run(
            zp(&[
                "diagnose",
                "--quick",
                "--only",
                "sender-stops",
                "--transports",
                "inproc,ipc,tcp",
                "--no-history",
            ]),
            T - 5,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let out = &o.stdout;
        assert_eq!(
            out.matches("Remedy (for inproc, ipc, tcp): ").count(),
            1,
            "{out}"
        );
        assert_eq!(
            out.matches("Remedy: as for sender-stops/inproc above.")
                .count(),
            2,
            "{out}"
        );
        assert_eq!(
            out.matches("Cause (for inproc, ipc, tcp): ").count(),
            1,
            "{out}"
        );
        assert_eq!(
            out.matches("Give every receive a timeout").count(),
            1,
            "{out}"
        );
        let lines = triage_lines(out);
        assert_eq!(lines.len(), 1, "{out}");
        assert!(
            lines[0].starts_with("1. sender silent: 3 silent senders (inproc, ipc, tcp). Fix: "),
            "{lines:#?}"
        );
    });
}

#[test]
fn ctrl_c_ends_the_listen_and_the_report_keeps_what_arrived() {
    with_watchdog(T, || {
        let db = fresh_db("listen-ctrlc");
        let mut cmd = zp(&[
            "diagnose",
            "--bind",
            "tcp://127.0.0.1:*",
            "--type",
            "PULL",
            "--duration",
            "50s",
        ]);
        cmd.env("ZMQPERF_DB", &db);
        let p = Proc::spawn(cmd, T - 5);
        let ep = p.bound_endpoint();
        let ctx = zmq::Context::new();
        let push = ctx.socket(zmq::PUSH).unwrap();
        push.set_linger(0).unwrap();
        push.set_sndtimeo(10_000).unwrap();
        push.connect(&ep).unwrap();
        for seq in 0..100 {
            push.send(zmqperf_message(seq), 0).unwrap();
        }
        // The progress line (every 2 s) says when all 100 have arrived.
        p.wait_stderr("100 messages");
        // SAFETY: a signal to the child this test started, by its pid.
        unsafe { libc::kill(p.pid() as i32, libc::SIGINT) };
        let o = p.finish();
        drop(push);
        assert_eq!(o.code, Some(0), "Ctrl-C is how a listen ends early: {o:?}");
        assert!(
            o.stdout.contains("(ended by SIGINT (Ctrl-C))"),
            "{}",
            o.stdout
        );
        assert!(o.stdout.contains("100 received"), "{}", o.stdout);
        let (v, _) = recorded(&db);
        let s = finding(&v, "listen/stream");
        assert_eq!(count(s, "received"), 100);
        assert_eq!(s["evidence"]["ended_by"], "ctrl-c");
        assert_eq!(v["run"]["status"], "complete");
        let _ = std::fs::remove_file(&db);
    });
}

#[test]
fn listen_options_are_checked_with_the_fix_named() {
    with_watchdog(T, || {
        let ep = "tcp://127.0.0.1:5999";
        fails_within(
            20,
            &[
                "diagnose",
                "--connect",
                ep,
                "--type",
                "SUB",
                "--seq",
                "frame=1,offset=4",
                "--no-history",
            ],
            3,
            "frame=F,offset=O,width=1|2|4|8,endian=big|little",
        );
        fails_within(
            20,
            &[
                "diagnose",
                "--connect",
                ep,
                "--type",
                "SUB",
                "--seq",
                "frame=1,width=3",
                "--no-history",
            ],
            3,
            "width=3 is not 1, 2, 4 or 8",
        );
        fails_within(
            20,
            &[
                "diagnose",
                "--connect",
                ep,
                "--bind",
                ep,
                "--type",
                "SUB",
                "--no-history",
            ],
            3,
            "not both",
        );
        fails_within(
            20,
            &["diagnose", "--connect", ep, "--no-history"],
            3,
            "--type SUB",
        );
        fails_within(
            20,
            &["diagnose", "--connect", ep, "--type", "PUB", "--no-history"],
            3,
            "--type SUB or --type PULL",
        );
        fails_within(
            20,
            &["diagnose", "--type", "SUB", "--no-history"],
            3,
            "add --connect ENDPOINT or --bind ENDPOINT",
        );
        fails_within(
            20,
            &[
                "diagnose",
                "--connect",
                ep,
                "--type",
                "SUB",
                "--quick",
                "--no-history",
            ],
            3,
            "--quick",
        );
        fails_within(
            20,
            &[
                "diagnose",
                "--connect",
                "tcp//nowhere",
                "--type",
                "SUB",
                "--no-history",
            ],
            4,
            "tcp://",
        );
    });
}

#[test]
fn nothing_arriving_is_a_finding_not_a_hang() {
    with_watchdog(T, || {
        let o = run(
            zp(&[
                "diagnose",
                "--bind",
                "tcp://127.0.0.1:*",
                "--type",
                "SUB",
                "--duration",
                "300ms",
                "--no-history",
            ]),
            30,
        );
        // G08: the report is printed, and a script can tell nothing was heard (exit 6).
        assert_eq!(o.code, Some(6), "{o:?}");
        assert!(o.stdout.contains("nothing arrived in"), "{}", o.stdout);
        assert!(o.stderr.contains("no sender was heard"), "{}", o.stderr);
    });
}

/// A listener bound with PULL, and a PUSH connected to it.
fn listener_and_push(extra: &[&str]) -> (Proc, zmq::Context, zmq::Socket) {
    let mut args = vec![
        "diagnose",
        "--bind",
        "tcp://127.0.0.1:*",
        "--type",
        "PULL",
        "--no-history",
    ];
    args.extend_from_slice(extra);
    let p = Proc::spawn(zp(&args), T - 5);
    let ep = p.bound_endpoint();
    let ctx = zmq::Context::new();
    let push = ctx.socket(zmq::PUSH).unwrap();
    push.set_linger(0).unwrap();
    push.set_sndtimeo(10_000).unwrap();
    push.connect(&ep).unwrap();
    (p, ctx, push)
}

/// B11 for the listener: a header of another version is exit 9 with the decoder's words,
/// after the report of the messages that could be read.
#[test]
fn a_header_of_another_version_ends_the_listen_with_exit_9() {
    with_watchdog(T, || {
        let (p, _ctx, push) = listener_and_push(&["--count", "3", "--duration", "20s"]);
        push.send(zmqperf_message(0), 0).unwrap();
        push.send(zmqperf_message(1), 0).unwrap();
        let mut bad = zmqperf_message(2);
        bad[2] = 2; // the header's version byte (after the magic `ZP`): not one this build reads
        push.send(bad, 0).unwrap();
        let o = p.finish();
        assert_eq!(o.code, Some(9), "{o:?}");
        assert!(
            o.stderr
                .contains("1 of 3 messages had a zmqperf header of another version"),
            "{o:?}"
        );
        assert!(o.stdout.contains("2 received"), "{}", o.stdout);
    });
}

/// B9 for the listener: a message over --max-size is refused by libzmq (ZMQ_MAXMSGSIZE:
/// the connection is dropped), so a stray peer cannot make the listener hold its size;
/// the messages within the limit are counted.
#[test]
fn a_message_over_max_size_is_not_taken() {
    with_watchdog(T, || {
        let (p, _ctx, push) =
            listener_and_push(&["--max-size", "1KiB", "--duration", "3s", "--expect", "1"]);
        // Over the limit with its margin for frames (1 KiB + 64 KiB).
        let mut big = zmqperf_message(0);
        big.resize(256 * 1024, 0);
        push.send(big, 0).unwrap();
        let o = p.finish();
        // Nothing was taken: the 256 KiB message never reached the listener's ledger.
        assert_eq!(o.code, Some(6), "{o:?}");
        assert!(o.stdout.contains("nothing arrived in"), "{}", o.stdout);
    });
}
