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
use zmqperf::report::fixture::{
    diagnose_run, fanout_run, matrix_full, matrix_quick, quick_run, sample_run, sweep_run,
};
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
  function box(e) { return e.getBoundingClientRect(); }
  function top(e) { return box(e).top + window.scrollY; }
  // Where the charts' parts landed: bar charts (plot width, the widest bar of the first
  // metric, clip and cut marks, bars past the frame), legends (the scale's middle and the
  // 1.0 tick), sections' heights, the triage and the first heading, the fan-out figures.
  function geometry() {
    var g = { bars: [], legends: [], sections: [], cells: 0 };
    var charts = document.querySelectorAll('svg.chart');
    for (var i = 0; i < charts.length; i++) {
      var c = charts[i];
      var frame = c.querySelector('path.frame');
      var bars = c.querySelectorAll('rect.bar');
      if (frame && bars.length) {
        var f = box(frame), widest = 0, over = 0;
        for (var j = 0; j < bars.length; j++) {
          var r = box(bars[j]);
          if (bars[j].classList.contains('m0')) { widest = Math.max(widest, r.width); }
          if (r.right > f.right + 1) { over++; }
        }
        g.bars.push({ title: c.querySelector('title').textContent, plot: f.width,
          widest: widest, clips: c.querySelectorAll('path.clip').length,
          off: c.querySelectorAll('text.value.off').length,
          cut: c.querySelectorAll('path.cut').length, over: over });
      }
      var scale = c.querySelector('rect.scale');
      if (scale) {
        var one = c.querySelector('text.tick[data-ratio=\"1\"]');
        var s = box(scale), t = one ? box(one) : null;
        g.legends.push({ mid: (s.left + s.right) / 2, width: s.width,
          one: t ? (t.left + t.right) / 2 : -1, label: one ? one.textContent : '' });
      }
      var cells = c.querySelectorAll('g.cell');
      g.cells += cells.length;
      for (var q = 0; q < cells.length; q++) {
        var rb = box(cells[q].querySelector('rect')), tb = box(cells[q].querySelector('text'));
        if (tb.width > rb.width) { g.wide_cells = (g.wide_cells || 0) + 1; }
      }
    }
    var sections = document.querySelectorAll('section.pattern');
    for (var k = 0; k < sections.length; k++) {
      g.sections.push({ id: sections[k].id, height: box(sections[k]).height });
    }
    var triage = document.getElementById('triage');
    g.triage = triage ? top(triage) : -1;
    var heads = document.querySelectorAll('h2');
    g.environment = -1;
    for (var h = 0; h < heads.length; h++) {
      if (heads[h].textContent === 'Environment') { g.environment = top(heads[h]); }
    }
    var findings = document.querySelectorAll('div.finding');
    g.last_finding = findings.length ? top(findings[findings.length - 1]) : -1;
    var seed = document.querySelector('.seed');
    g.seed = seed ? seed.textContent : '';
    return g;
  }
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
    root.setAttribute('data-probe-geom', JSON.stringify(geometry()));
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
    /// Where the charts' parts landed (see `geometry` in the probe).
    geom: serde_json::Value,
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
    // The window of the screenshots, so the layout measured is the one shown.
    cmd.args([
        "--virtual-time-budget=5000",
        "--window-size=1280,900",
        "--dump-dom",
    ]);
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
        geom: serde_json::from_str(&unescape(&get("data-probe-geom")))
            .unwrap_or_else(|e| panic!("{name}: the probe's geometry: {e}")),
    }
}

/// An attribute's value as the dumped DOM escapes it, read back.
fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
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

/// Loads the page `html` and checks it rendered whole: every chart drawn with a size, every
/// table there, a screenshot of a window; `inspect` then checks what the probe measured.
/// ZMQPERF_SHOTS_DIR keeps a full-page screenshot.
fn check_page(name: &'static str, html: String, inspect: impl FnOnce(&Loaded) + Send + 'static) {
    with_watchdog(4 * CHROMIUM_SECS, move || {
        let dir = temp_dir(name);
        let emitted_charts = html.matches("<svg class=\"chart").count();
        let emitted_tables = html.matches("<table").count();
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
        // No bar of any bar chart reaches past its plot's frame.
        for b in got.geom["bars"].as_array().expect("bars") {
            assert_eq!(b["over"], 0, "{name}: bars past the frame in {b}");
        }
        inspect(&got);
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

/// Loads the report of `run` and checks it rendered whole.
fn check(name: &'static str, run: RunResult) {
    let html = render(&run, Format::Html);
    assert!(
        html.contains("<svg class=\"chart"),
        "{name}: the report has no chart"
    );
    check_page(name, html, |_| {});
}

/// The bar chart titled `title` in the probe's geometry.
fn bar_chart<'a>(got: &'a Loaded, title: &str) -> &'a serde_json::Value {
    got.geom["bars"]
        .as_array()
        .expect("bars")
        .iter()
        .find(|b| b["title"].as_str().is_some_and(|t| t.starts_with(title)))
        .unwrap_or_else(|| panic!("no bar chart titled {title:?} in {}", got.geom))
}

fn num(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn sample_report_renders_in_chromium() {
    check("sample", sample_run());
}

#[test]
fn quick_report_renders_in_chromium() {
    check_page("quick", render(&quick_run(), Format::Html), |got| {
        // The latency bars are scaled to the medians: the longest p50 bar is a good part of
        // the plot, not a sliver beside the p99 tails.
        let lat = bar_chart(got, "Latency at 64 B");
        let share = num(&lat["widest"]) / num(&lat["plot"]);
        assert!(
            share > 0.3,
            "the longest median bar is {share:.2} of the plot: {lat}"
        );
    });
}

/// The quick suite with one p99 twenty times the longest median and its interval wider
/// still: the axis stays scaled to the medians, and the long bar and its whisker are
/// clipped at the frame with their marks.
#[test]
fn a_long_tail_is_clipped_with_a_mark_in_chromium() {
    let mut run = quick_run();
    let top = run
        .cases
        .iter()
        .filter_map(|c| c.summary.p50_us.map(|e| e.median))
        .fold(0.0, f64::max);
    let c = run
        .cases
        .iter_mut()
        .find(|c| c.summary.p99_us.is_some())
        .expect("a latency case");
    let e = c.summary.p99_us.expect("p99");
    c.summary.p99_us = Some(zmqperf::model::Estimate {
        median: top * 20.0,
        ci_low: top * 0.5,
        ci_high: top * 30.0,
        ..e
    });
    let html = render(&run, Format::Html);
    let long = zmqperf::report::units::sig3(top * 20.0);
    assert!(
        html.contains(&format!("\u{bb} {long}</text>")),
        "the clipped bar's value is written with its mark: {long}"
    );
    check_page("tail", html, |got| {
        let lat = bar_chart(got, "Latency at 64 B");
        let share = num(&lat["widest"]) / num(&lat["plot"]);
        assert!(
            share > 0.3,
            "the axis follows the medians: {share:.2}: {lat}"
        );
        assert!(
            num(&lat["clips"]) >= 1.0,
            "the long bar has a clip mark: {lat}"
        );
        assert_eq!(
            lat["clips"], lat["off"],
            "each clipped bar's value is marked: {lat}"
        );
        assert!(
            num(&lat["cut"]) >= 1.0,
            "whiskers past the axis end in an arrowhead: {lat}"
        );
    });
}

#[test]
fn sweep_report_renders_in_chromium() {
    check("sweep", sweep_run());
}

/// The fan-out page: the Node harness's four figures in ms at the top of its section, and
/// per subscriber process its deliveries, rate and latency (no '-' in their cells).
#[test]
fn fanout_report_renders_in_chromium() {
    let html = render(&fanout_run(), Format::Html);
    let at = html
        .find("Per subscriber process")
        .expect("the per-process table");
    let table = &html[at..at + html[at..].find("</table>").expect("its end")];
    assert_eq!(table.matches("<tr>").count(), 5, "a head and 4 processes");
    assert!(!table.contains(">-<"), "every figure is there: {table}");
    check_page("fanout", html, |got| {
        let seed = got.geom["seed"].as_str().expect("the seed's figures");
        for k in ["MIN", "MAX", "MEAN", "HARMONIC MEAN", "p99"] {
            assert!(seed.contains(k), "{k} in {seed}");
        }
        assert_eq!(seed.matches(" ms").count(), 6, "each figure in ms: {seed}");
    });
}

/// The diagnose page: the triage, worst first, comes before the environment and the
/// findings, on the first screen.
#[test]
fn diagnose_report_renders_in_chromium() {
    let html = render(&diagnose_run(), Format::Html);
    let triage = &html[html.find("<ol class=\"triage\">").expect("the triage")..];
    let first = triage.find("high-water mark").expect("the worst cause");
    let second = triage.find("slow joiner").expect("the next cause");
    assert!(first < second, "worst first");
    check_page("diagnose", html, |got| {
        let g = &got.geom;
        let (t, env) = (num(&g["triage"]), num(&g["environment"]));
        assert!(
            t >= 0.0 && t < env,
            "the triage ({t}) above the environment ({env})"
        );
        assert!(t < 300.0, "the triage starts on the first screen: {t}");
        assert!(num(&g["last_finding"]) > t, "the findings follow it");
    });
}

/// The matrix pages: a heat map per grid with every pair, a legend per pattern with 1.0 in
/// the middle of its scale, and each pattern no taller than a screen.
fn check_matrix(name: &'static str, m: zmqperf::scenarios::matrix::Matrix) {
    let html = zmqperf::report::matrix::html(&m);
    let pairs: usize = m.grids.iter().map(|g| g.cells.len()).sum();
    let patterns = 3;
    check_page(name, html, move |got| {
        let g = &got.geom;
        assert_eq!(num(&g["cells"]) as usize, pairs, "a cell per pair");
        assert!(
            g["wide_cells"].is_null(),
            "cell texts wider than their cells: {g}"
        );
        let legends = g["legends"].as_array().expect("legends");
        assert_eq!(legends.len(), patterns, "a legend per pattern");
        for l in legends {
            assert_eq!(l["label"], "1.0", "{l}");
            let off = (num(&l["one"]) - num(&l["mid"])).abs();
            assert!(off < 1.0, "1.0 sits in the middle of the scale: {l}");
        }
        let sections = g["sections"].as_array().expect("sections");
        assert_eq!(sections.len(), patterns);
        for s in sections {
            assert!(num(&s["height"]) < 900.0, "a pattern fits a screen: {s}");
        }
    });
}

#[test]
fn full_matrix_renders_in_chromium() {
    check_matrix("matrix-full", matrix_full());
}

#[test]
fn quick_matrix_renders_in_chromium() {
    check_matrix("matrix-quick", matrix_quick());
}

/// A matrix whose baseline pair failed: no ratios, each cell the pair's own figure (up to
/// millions of msg/s), which must still fit its cell.
#[test]
fn a_matrix_without_its_baseline_renders_in_chromium() {
    let mut m = matrix_quick();
    for g in &mut m.grids {
        g.baseline = None;
        for c in &mut g.cells {
            c.ratio = None;
        }
    }
    check_matrix("matrix-nobase", m);
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
    let _ = std::fs::remove_dir_all(&empty);
}
