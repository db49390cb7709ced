//! What an installation takes from the binary: shell completions that the shells accept,
//! manual pages that man renders without a warning, and `--version` naming the commit.

mod common;
use common::*;
use std::path::PathBuf;

/// A fresh folder for one test, removed when dropped (also when the test fails).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("zmqperf-install-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every shell gets a script; bash's parses (`bash -n`), and it completes the commands.
#[test]
fn completions_for_every_shell_and_bash_parses_them() {
    with_watchdog(60, || {
        for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
            let o = run(zp(&["completions", shell]), 30);
            assert_eq!(o.code, Some(0), "completions {shell}: {o:?}");
            assert!(
                o.stdout.contains("check_recv") && o.stdout.contains("fanout"),
                "{shell}"
            );
        }
        let o = run(zp(&["completions", "bash"]), 30);
        let dir = Scratch::new("completions");
        let script = dir.0.join("zmqperf.bash");
        std::fs::write(&script, &o.stdout).unwrap();
        let mut c = std::process::Command::new("bash");
        c.arg("-n").arg(&script);
        let checked = run(c, 30);
        assert_eq!(checked.code, Some(0), "bash -n: {checked:?}");
        let bad = run(zp(&["completions", "tcsh"]), 30);
        assert_eq!(bad.code, Some(2), "{bad:?}");
        assert!(bad.stderr.contains("bash"), "{}", bad.stderr);
    });
}

/// `man` renders the main page and every command's page with no warning from groff.
#[test]
fn manual_pages_render_without_warnings() {
    with_watchdog(120, || {
        let dir = Scratch::new("man");
        let o = run(zp(&["man", "--dir", dir.0.to_str().unwrap()]), 30);
        assert_eq!(o.code, Some(0), "{o:?}");
        let pages: Vec<_> = std::fs::read_dir(&dir.0)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(pages.len() > 20, "{pages:?}");
        assert!(pages.iter().any(|p| p.ends_with("zmqperf-run.1")));
        let main = run(zp(&["man"]), 30);
        assert!(
            main.stdout.starts_with(".ie"),
            "{}",
            &main.stdout[..80.min(main.stdout.len())]
        );
        for p in pages {
            let mut c = std::process::Command::new("man");
            c.args(["--warnings", "-l"])
                .arg(&p)
                .env("MANWIDTH", "80")
                .env("MANPAGER", "cat");
            let shown = run(c, 30);
            assert_eq!(shown.code, Some(0), "man {}: {shown:?}", p.display());
            assert!(
                shown.stderr.trim().is_empty(),
                "man {}: {}",
                p.display(),
                shown.stderr
            );
            assert!(shown.stdout.contains("zmqperf"), "{}", p.display());
        }
    });
}

/// `--version` names the commit of a build from a git checkout (as this test's is).
#[test]
fn version_names_the_commit() {
    with_watchdog(30, || {
        let o = run(zp(&["--version"]), 30);
        let first = o.stdout.lines().next().unwrap_or_default().to_string();
        let mut c = std::process::Command::new("git");
        c.args(["rev-parse", "--short=12", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        let head = run(c, 30);
        assert_eq!(head.code, Some(0), "git: {head:?}");
        assert_eq!(
            first,
            format!(
                "zmqperf {} (commit {})",
                env!("CARGO_PKG_VERSION"),
                head.stdout.trim()
            )
        );
    });
}
