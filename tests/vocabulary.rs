//! One flag vocabulary: `--repetitions` and `--impl` wherever they apply (the old spellings
//! still accepted), and `--format` with `-o` on every command that prints results.

mod common;
use common::*;

/// The old spellings are hidden aliases: accepted, and the error speaks the new name.
#[test]
fn old_spellings_are_aliases_and_errors_say_the_new_name() {
    with_watchdog(60, || {
        let m = run(zp(&["matrix", "--passes", "0"]), 30);
        assert_eq!(m.code, Some(3), "{m:?}");
        assert!(
            m.stderr.contains("invalid --repetitions '0'"),
            "{}",
            m.stderr
        );
        let f = run(
            zp(&[
                "fanout", "-c", "1", "-s", "1", "-n", "1", "-p", "1", "--rounds", "0",
            ]),
            30,
        );
        assert_eq!(f.code, Some(3), "{f:?}");
        assert!(
            f.stderr.contains("invalid --repetitions '0'"),
            "{}",
            f.stderr
        );
        let i = run(zp(&["matrix", "--impls", "nosuch"]), 30);
        assert_eq!(i.code, Some(3), "{i:?}");
        assert!(i.stderr.contains("invalid --impl 'nosuch'"), "{}", i.stderr);
        // fanout's -p/--passes is the seed's own flag (ticks to send): it stays.
        for (cmd, new, old) in [
            ("matrix", "--repetitions", "--passes"),
            ("matrix", "--impl ", "--impls"),
            ("fanout", "--repetitions", "--rounds"),
        ] {
            let h = run(zp(&[cmd, "--help"]), 30);
            assert!(h.stdout.contains(new), "{cmd} --help lacks {new}");
            assert!(!h.stdout.contains(old), "{cmd} --help still shows {old}");
        }
    });
}

/// history and a fan-out print table or JSON, to stdout or -o; a fan-out's run also as a
/// report (markdown); a format a command cannot print is refused before anything runs.
#[test]
fn format_and_output_on_history_fanout_and_compare() {
    with_watchdog(120, || {
        let db = fresh_db("vocabulary");
        let dir = std::env::temp_dir().join(format!("zmqperf-vocabulary-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let md = dir.join("fanout.md");
        let fan = |extra: &[&str]| {
            let mut args = vec![
                "fanout", "-c", "1", "-s", "2", "-t", "10", "-n", "5", "-p", "3", "--db", &db,
            ];
            args.extend_from_slice(extra);
            run(zp(&args), 60)
        };
        let o = fan(&["--format", "markdown", "-o", md.to_str().unwrap()]);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.is_empty(), "-o leaves stdout empty: {}", o.stdout);
        let text = std::fs::read_to_string(&md).unwrap();
        assert!(
            text.starts_with("# zmqperf run "),
            "{}",
            &text[..80.min(text.len())]
        );
        let j = fan(&["--json"]);
        assert_eq!(j.code, Some(0), "{j:?}");
        let v = results(&j.stdout);
        assert_eq!(v["command"], "fanout");
        let h = run(zp(&["history", "--db", &db, "--format", "json"]), 30);
        assert_eq!(h.code, Some(0), "{h:?}");
        let runs = results(&h.stdout)["runs"].take();
        assert_eq!(runs.as_array().map(|a| a.len()), Some(2), "{}", h.stdout);
        let cmp = dir.join("compare.txt");
        let c = run(
            zp(&[
                "compare",
                "last~1",
                "last",
                "--db",
                &db,
                "-o",
                cmp.to_str().unwrap(),
            ]),
            30,
        );
        assert_eq!(c.code, Some(0), "{c:?}");
        assert!(std::fs::read_to_string(&cmp).unwrap().starts_with("A: "));
        for (args, what) in [
            (
                vec!["history", "--db", &db, "--format", "html"],
                "history prints table or json",
            ),
            (
                vec!["pub", "-n", "1", "--format", "csv"],
                "pub prints table or json",
            ),
        ] {
            let e = run(zp(&args), 30);
            assert_eq!(e.code, Some(3), "{e:?}");
            assert!(e.stderr.contains(what), "{}", e.stderr);
        }
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_file(&db);
    });
}

/// docs/commands.md's table of every flag is the program's own (`zmqperf __flag-table`):
/// a flag added, renamed or removed without the docs fails here. Regenerate the table
/// between its markers with that command.
#[test]
fn the_flag_table_in_the_docs_is_the_programs() {
    with_watchdog(30, || {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/commands.md"))
            .unwrap();
        let begin = "<!-- flag-table: begin -->\n";
        let start = doc.find(begin).expect("the table's begin marker") + begin.len();
        let end = doc
            .find("<!-- flag-table: end -->")
            .expect("the table's end marker");
        let o = run(zp(&["__flag-table"]), 30);
        assert_eq!(o.code, Some(0), "{o:?}");
        assert!(o.stdout.lines().count() > 40, "{}", o.stdout);
        assert!(
            doc[start..end] == o.stdout,
            "docs/commands.md's flag table differs from `zmqperf __flag-table`; paste the command's output between the markers"
        );
        for flag in [
            "`--repetitions`",
            "`--impl`",
            "`--format`",
            "`-o, --output`",
        ] {
            assert!(o.stdout.contains(flag), "{flag} missing");
        }
    });
}
