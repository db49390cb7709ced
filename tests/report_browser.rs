//! The HTML report in a real browser: Debian's headless Chromium loads the report of each
//! fixture run (the sample run, the quick suite's shape, a 13-size sweep, a fan-out with its
//! floor), and the test checks what it rendered: every chart the report emitted is in the
//! loaded page with a size, every table is there, no script error was raised, and the
//! screenshot is a PNG of the window's size.
//!
//! The report itself has no script (the test asserts that). To see inside the loaded page,
//! the test loads a copy with a probe appended: a script that records `window.onerror` and
//! the charts' rendered sizes into attributes of `<html>`, which `--dump-dom` prints.
//!
//! Chromium missing is a failure, never a skip: in CI (`CI` set; `.ci/run` sets it and
//! installs the `chromium` package) and outside it alike. ZMQPERF_CHROMIUM names another
//! binary. ZMQPERF_SHOTS_DIR=DIR keeps a full-page screenshot of each report there.

mod common;

use common::{with_watchdog, Proc};
use std::path::{Path, PathBuf};
use std::process::Command;
use zmqperf::model::RunResult;
use zmqperf::report::fixture::{fanout_run, quick_run, sample_run, sweep_run};
use zmqperf::report::{render, Format};

/// Longest a chromium run may take before the test kills it (by its PID) and fails.
const CHROMIUM_SECS: u64 = 90;

/// Where chromium is: ZMQPERF_CHROMIUM, else the first of its usual names on `path`; or
/// the message that fails the test, saying how to install it.
fn find_chromium(
    explicit: Option<std::ffi::OsString>,
    path: &std::ffi::OsStr,
    ci: bool,
) -> Result<PathBuf, String> {
    if let Some(p) = explicit {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("ZMQPERF_CHROMIUM={} is not a file", p.display()))
        };
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(path) {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    let why = if ci {
        "CI is set, so the browser must be there (.ci/run installs it)"
    } else {
        "this test does not skip without it"
    };
    Err(format!(
        "chromium not found on PATH: the HTML report cannot be checked in a browser ({why}). \
         Install it with `apt-get install -y chromium`, or point ZMQPERF_CHROMIUM at a \
         Chromium or Chrome binary"
    ))
}

/// The chromium binary; a missing one fails the test, loudly.
fn chromium() -> PathBuf {
    find_chromium(
        std::env::var_os("ZMQPERF_CHROMIUM"),
        &std::env::var_os("PATH").unwrap_or_default(),
        std::env::var_os("CI").is_some(),
    )
    .unwrap_or_else(|e| panic!("\n\n*** {e} ***\n"))
}

/// A folder of its own in the temp folder, emptied first.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zmqperf-browser-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create the temp folder");
    d
}

/// Records script errors and what the page rendered into attributes of `<html>`.
const PROBE: &str = "<script>
(function () {
  var root = document.documentElement;
  var errors = [];
  window.onerror = function (msg, src, line) {
    errors.push(String(msg) + ' at ' + line);
    root.setAttribute('data-probe-errors', errors.join(' | '));
  };
  window.addEventListener('load', function () {
    var charts = document.querySelectorAll('svg.chart');
    var drawn = 0;
    for (var i = 0; i < charts.length; i++) {
      var r = charts[i].getBoundingClientRect();
      var b = charts[i].getBBox();
      if (r.width > 50 && r.height > 50 && b.width > 50 && b.height > 50) { drawn++; }
    }
    root.setAttribute('data-probe-charts', String(charts.length));
    root.setAttribute('data-probe-drawn', String(drawn));
    root.setAttribute('data-probe-tables', String(document.querySelectorAll('table').length));
    root.setAttribute('data-probe-height', String(document.documentElement.scrollHeight));
    root.setAttribute('data-probe-errors', errors.join(' | '));
  });
})();
</script>
";

/// A chromium command with the flags for root in a container and a profile of its own.
fn chromium_cmd(profile: &Path) -> Command {
    let mut c = Command::new(chromium());
    c.args([
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--no-default-browser-check",
        "--hide-scrollbars",
    ]);
    c.arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// The value of attribute `name` on the dumped `<html>` element.
fn attr<'a>(dom: &'a str, name: &str) -> Option<&'a str> {
    let start = dom.find("<html")?;
    let end = start + dom[start..].find('>')?;
    let tag = &dom[start..end];
    let key = format!("{name}=\"");
    let at = tag.find(&key)? + key.len();
    let len = tag[at..].find('"')?;
    Some(&tag[at..at + len])
}

/// What the browser made of one report.
struct Loaded {
    charts: usize,
    drawn: usize,
    tables: usize,
    height: u32,
}

/// Loads `html` (written as `name`.html) with the probe and returns what it recorded.
fn load(dir: &Path, name: &str, html: &str) -> Loaded {
    assert!(
        !html.contains("<script"),
        "{name}: the report must stay free of scripts"
    );
    let probed = html.replace("</body>", &format!("{PROBE}</body>"));
    assert_ne!(probed, html, "{name}: no </body> to put the probe before");
    let page = dir.join(format!("{name}-probe.html"));
    std::fs::write(&page, &probed).expect("write the page");
    let mut cmd = chromium_cmd(&dir.join(format!("{name}-profile-dom")));
    cmd.args(["--virtual-time-budget=5000", "--dump-dom"]);
    cmd.arg(format!("file://{}", page.display()));
    let out = Proc::spawn(cmd, CHROMIUM_SECS).finish();
    assert_eq!(
        out.code,
        Some(0),
        "{name}: chromium --dump-dom failed:\n{}",
        out.stderr
    );
    let dom = &out.stdout;
    let get = |k: &str| -> String {
        attr(dom, k)
            .unwrap_or_else(|| {
                panic!(
                    "{name}: the probe did not record {k}; the page did not load?\n{}",
                    &dom[..dom.len().min(2000)]
                )
            })
            .to_string()
    };
    let errors = get("data-probe-errors");
    assert!(
        errors.is_empty(),
        "{name}: script errors in the page: {errors}"
    );
    let num = |k: &str| -> usize {
        get(k)
            .parse()
            .unwrap_or_else(|e| panic!("{name}: {k}: {e}"))
    };
    Loaded {
        charts: num("data-probe-charts"),
        drawn: num("data-probe-drawn"),
        tables: num("data-probe-tables"),
        height: num("data-probe-height") as u32,
    }
}

/// The width and height of a PNG file, from its header; panics if it is not a PNG.
fn png_size(path: &Path) -> (u32, u32) {
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("no screenshot at {}: {e}", path.display()));
    assert!(
        bytes.len() > 1000,
        "screenshot {} is nearly empty",
        path.display()
    );
    assert_eq!(
        &bytes[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        path.display()
    );
    assert_eq!(&bytes[12..16], b"IHDR", "{}: no IHDR chunk", path.display());
    let be = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    (be(16), be(20))
}

/// Takes a screenshot of the report `width` x `height` and checks it.
fn screenshot(dir: &Path, name: &str, html: &str, width: u32, height: u32) -> PathBuf {
    let page = dir.join(format!("{name}.html"));
    std::fs::write(&page, html).expect("write the page");
    let png = dir.join(format!("{name}.png"));
    let mut cmd = chromium_cmd(&dir.join(format!("{name}-profile-shot")));
    cmd.arg(format!("--screenshot={}", png.display()));
    cmd.arg(format!("--window-size={width},{height}"));
    cmd.arg(format!("file://{}", page.display()));
    let out = Proc::spawn(cmd, CHROMIUM_SECS).finish();
    assert_eq!(
        out.code,
        Some(0),
        "{name}: chromium --screenshot failed:\n{}",
        out.stderr
    );
    assert_eq!(png_size(&png), (width, height), "{name}: screenshot size");
    png
}

/// Loads the report of `run` and checks it rendered whole.
fn check(name: &'static str, run: RunResult) {
    with_watchdog(4 * CHROMIUM_SECS, move || {
        let dir = temp_dir(name);
        let html = render(&run, Format::Html);
        let emitted_charts = html.matches("<svg class=\"chart\"").count();
        let emitted_tables = html.matches("<table").count();
        assert!(emitted_charts > 0, "{name}: the report has no chart");
        let got = load(&dir, name, &html);
        assert_eq!(
            got.charts, emitted_charts,
            "{name}: charts in the loaded page vs emitted"
        );
        assert_eq!(
            got.drawn, emitted_charts,
            "{name}: charts drawn with a size vs emitted"
        );
        assert_eq!(
            got.tables, emitted_tables,
            "{name}: tables in the loaded page"
        );
        screenshot(&dir, name, &html, 1280, 900);
        if let Ok(keep) = std::env::var("ZMQPERF_SHOTS_DIR") {
            std::fs::create_dir_all(&keep).expect("create ZMQPERF_SHOTS_DIR");
            let full = screenshot(
                &dir,
                &format!("{name}-full"),
                &html,
                1280,
                got.height.max(900),
            );
            std::fs::copy(&full, Path::new(&keep).join(format!("{name}.png")))
                .expect("keep the screenshot");
            std::fs::write(Path::new(&keep).join(format!("{name}.html")), &html)
                .expect("keep the page");
        }
        // Passed: the pages, screenshots and browser profiles go (a failure keeps them).
        let _ = std::fs::remove_dir_all(&dir);
    })
}

#[test]
fn sample_report_renders_in_chromium() {
    check("sample", sample_run());
}

#[test]
fn quick_report_renders_in_chromium() {
    check("quick", quick_run());
}

#[test]
fn sweep_report_renders_in_chromium() {
    check("sweep", sweep_run());
}

#[test]
fn fanout_report_renders_in_chromium() {
    check("fanout", fanout_run());
}

#[test]
fn a_missing_chromium_is_an_error_not_a_skip() {
    let empty = temp_dir("nopath");
    for ci in [true, false] {
        let e = find_chromium(None, empty.as_os_str(), ci).expect_err("nothing on PATH");
        assert!(e.contains("apt-get install -y chromium"), "{e}");
        assert_eq!(e.contains("CI is set"), ci, "{e}");
    }
    let e = find_chromium(Some(empty.join("chrome").into()), empty.as_os_str(), false)
        .expect_err("a ZMQPERF_CHROMIUM that is not there");
    assert!(e.contains("ZMQPERF_CHROMIUM="), "{e}");
    // A binary of that name on PATH is found.
    let fake = empty.join("chromium");
    std::fs::write(&fake, "").expect("write");
    assert_eq!(find_chromium(None, empty.as_os_str(), true), Ok(fake));
}
