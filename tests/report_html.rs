//! The HTML report's charts and tables, checked in the generated page: wide grids continued
//! in further tables, the quick suite as one pattern x transport matrix per kind (also in
//! the text and Markdown reports), confidence whiskers on bars and lines in their series'
//! colours and cut at the frame with a mark, the fan-out's raw-socket floor drawn, a
//! percentile chart whose lines can be told apart, and one rule for the number labels.

use zmqperf::model::{Estimate, Kind, RunResult};
use zmqperf::report::fixture::{fanout_run, quick_run, sample_run, sweep_run};
use zmqperf::report::{render, Format};

fn html(run: &RunResult) -> String {
    render(run, Format::Html)
}

/// The `<svg class="chart">` elements whose title starts with `title`.
fn charts<'a>(page: &'a str, title: &str) -> Vec<&'a str> {
    page.match_indices("<svg class=\"chart\"")
        .map(|(i, _)| &page[i..i + page[i..].find("</svg>").expect("svg end") + 6])
        .filter(|s| {
            s.split("<title")
                .nth(1)
                .and_then(|t| t.split('>').nth(1))
                .is_some_and(|t| t.starts_with(title))
        })
        .collect()
}

fn chart<'a>(page: &'a str, title: &str) -> &'a str {
    let found = charts(page, title);
    assert_eq!(found.len(), 1, "one chart titled {title:?}");
    found[0]
}

/// The values of attribute `name` on every element of `kind` (e.g. `rect`) in `s`.
fn attrs<'a>(s: &'a str, kind: &str, name: &str) -> Vec<&'a str> {
    s.match_indices(&format!("<{kind} "))
        .filter_map(|(i, _)| {
            let tag = &s[i..i + s[i..].find('>')?];
            let key = format!(" {name}=\"");
            let at = tag.find(&key)? + key.len();
            Some(&tag[at..at + tag[at..].find('"')?])
        })
        .collect()
}

/// The `<g class="whisker">` groups of a chart.
fn whiskers(svg: &str) -> Vec<&str> {
    svg.match_indices("<g class=\"whisker\">")
        .map(|(i, _)| &svg[i..i + svg[i..].find("</g>").expect("end of whisker")])
        .collect()
}

/// The numbers in an SVG path's `d`.
fn numbers(d: &str) -> Vec<f64> {
    d.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().expect("a number"))
        .collect()
}

/// The x and the y coordinates a path visits (its M, L, H and V commands).
fn path_points(d: &str) -> (Vec<f64>, Vec<f64>) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    let mut cmd = ' ';
    let mut nums = Vec::new();
    let flush = |cmd: char, nums: &mut Vec<f64>, xs: &mut Vec<f64>, ys: &mut Vec<f64>| {
        match cmd {
            'M' | 'L' => {
                for p in nums.chunks(2) {
                    xs.push(p[0]);
                    ys.push(p[1]);
                }
            }
            'H' => xs.append(nums),
            'V' => ys.append(nums),
            _ => {}
        }
        nums.clear();
    };
    let spaced: String = d
        .chars()
        .flat_map(|c| {
            if "MLHVZ".contains(c) {
                vec![' ', c, ' ']
            } else {
                vec![c]
            }
        })
        .collect();
    for tok in spaced.split_whitespace() {
        match tok {
            "M" | "L" | "H" | "V" | "Z" => {
                flush(cmd, &mut nums, &mut xs, &mut ys);
                cmd = tok.chars().next().expect("a command");
            }
            n => nums.push(n.parse().expect("a number")),
        }
    }
    flush(cmd, &mut nums, &mut xs, &mut ys);
    (xs, ys)
}

/// A copy of `run` with every interval 10% either side of its median, but the first p99
/// ten times its median: the one whisker that must be cut.
fn one_wide_interval(mut run: RunResult) -> RunResult {
    for c in &mut run.cases {
        let s = &mut c.summary;
        for e in [
            &mut s.latency_us,
            &mut s.p50_us,
            &mut s.p99_us,
            &mut s.msgs_per_sec,
            &mut s.mbit_per_sec,
            &mut s.send_msgs_per_sec,
        ]
        .into_iter()
        .flatten()
        {
            e.ci_low = e.median * 0.9;
            e.ci_high = e.median * 1.1;
        }
    }
    let c = run
        .cases
        .iter_mut()
        .find(|c| c.summary.p99_us.is_some())
        .expect("a latency case");
    let e: Estimate = c.summary.p99_us.expect("p99");
    c.summary.p99_us = Some(Estimate {
        ci_low: 0.0,
        ci_high: e.median * 10.0,
        ..e
    });
    run
}

/// The plot frame of a chart, from its axis path `M{left} {top}V{bottom}H{right}`.
fn frame(svg: &str) -> (f64, f64, f64, f64) {
    let d = attrs(svg, "path", "d")
        .into_iter()
        .find(|d| {
            d.contains('V') && d.contains('H') && !d.contains('L') && d.matches('M').count() == 1
        })
        .expect("the axes");
    let n = numbers(d);
    (n[0], n[1], n[2], n[3])
}

/// The header cells of each table after `<h3>title` up to the next heading.
fn tables_after(page: &str, title: &str) -> Vec<Vec<String>> {
    let at = page
        .find(&format!("<h3>{title}"))
        .unwrap_or_else(|| panic!("no table titled {title:?}"));
    let rest = &page[at + 4..];
    let end = ["<h2", "<h3", "<h4"]
        .iter()
        .filter_map(|h| rest.find(h))
        .min()
        .unwrap_or(rest.len());
    rest[..end]
        .split("<table")
        .skip(1)
        .map(|t| {
            let head = &t[..t.find("</thead>").expect("thead")];
            head.split("<th")
                .skip(1)
                .filter(|c| !c.starts_with("ead"))
                .map(|c| {
                    let c = &c[c.find('>').expect("th") + 1..];
                    c[..c.find("</th>").expect("th end")].to_string()
                })
                .collect()
        })
        .collect()
}

#[test]
fn wide_grids_continue_in_further_tables() {
    let page = html(&sweep_run());
    for title in [
        "reqrep over tcp: latency, closed loop",
        "pushpull over tcp: throughput, closed loop",
    ] {
        let tables = tables_after(&page, title);
        assert!(
            tables.len() >= 2,
            "{title}: one table of 13 sizes: {tables:?}"
        );
        let mut sizes = Vec::new();
        for t in &tables {
            assert_eq!(t[0], "size (B)", "every block has the row labels");
            assert!(
                t.len() - 1 <= 8,
                "{title}: {} columns in one table",
                t.len() - 1
            );
            sizes.extend(t[1..].iter().cloned());
        }
        let want: Vec<String> = (4..=16).map(|s| (1u64 << s).to_string()).collect();
        assert_eq!(sizes, want, "{title}: every size once, in order");
    }
    // The text report splits the same grids at its 120 columns.
    let text = render(&sweep_run(), Format::Table);
    let heads = text
        .lines()
        .filter(|l| l.trim_start().starts_with("size (B)"))
        .count();
    assert!(heads >= 4, "{heads} header lines");
    assert!(text.lines().all(|l| l.chars().count() <= 120));
    // A grid that fits stays one table.
    let page = html(&sample_run());
    assert_eq!(
        tables_after(&page, "reqrep over tcp: latency, closed loop")[0],
        ["size (B)", "64", "1024", "65536"]
    );
}

#[test]
fn the_quick_suite_is_a_pattern_by_transport_matrix() {
    let run = quick_run();
    let page = html(&run);
    let tables_section = &page[page.find("<h2>Tables</h2>").expect("tables")..];
    assert_eq!(
        tables_section.matches("<table class=\"grid\"").count(),
        2,
        "one matrix per kind instead of 21 one-column tables"
    );
    let lat = tables_after(&page, "latency at 64 B over inproc, ipc, tcp: closed loop");
    assert_eq!(lat, [["pattern", "figure", "inproc", "ipc", "tcp"]]);
    let thr = tables_after(
        &page,
        "throughput at 64 B over inproc, ipc, tcp: closed loop",
    );
    assert_eq!(thr, [["pattern", "figure", "inproc", "ipc", "tcp"]]);
    for p in [
        "reqrep",
        "dealerrouter",
        "pair-lat",
        "pushpull",
        "pubsub",
        "pair-thr",
        "fanin",
    ] {
        assert!(
            page.contains(&format!("scope=\"rowgroup\">{p}</th>")),
            "{p} heads its rows"
        );
    }
    // Every row of the matrix has a cell per transport.
    let body = &tables_section[..tables_section.find("</table>").expect("table end")];
    for row in body.split("<tr>").skip(2) {
        assert_eq!(row.matches("<td").count(), 3, "{row}");
    }
    // No graph of a lone ping and echo under each cell.
    assert!(!page.contains("Topology of <code>latency/reqrep/tcp/64</code>"));

    let md = render(&run, Format::Markdown);
    assert!(
        md.contains("### latency at 64 B over inproc, ipc, tcp: closed loop"),
        "{md}"
    );
    assert!(md.contains("| pattern      | figure "), "{md}");
    assert_eq!(md.matches("\n### ").count(), 2, "{md}");
    let text = render(&run, Format::Table);
    assert!(text.contains("latency at 64 B over inproc, ipc, tcp: closed loop"));
    assert!(text.contains("\n  reqrep\n    latency (us) "), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 120));
    // A run whose groups of a kind are not all one case of one size keeps a table each.
    let sample = render(&sample_run(), Format::Table);
    assert!(!sample.contains("pattern / figure"), "{sample}");
    assert!(sample.contains("pair over ipc: latency, closed loop"));
}

#[test]
fn bars_have_whiskers_in_their_colour() {
    let run = quick_run();
    let page = html(&run);
    let svg = chart(&page, "Latency at 64 B");
    let w = whiskers(svg);
    // 9 pattern/transport pairs x p50, p99, mean: a whisker for each interval.
    let intervals = run
        .cases
        .iter()
        .filter(|c| c.kind == Kind::Latency)
        .flat_map(|c| [c.summary.p50_us, c.summary.p99_us, c.summary.latency_us])
        .flatten()
        .filter(|e| e.ci_high > e.ci_low.max(0.0))
        .count();
    assert!(intervals > 20, "{intervals}");
    assert_eq!(w.len(), intervals);
    // Each whisker follows its bar and has its colour.
    let mut seen = Vec::new();
    for part in svg.split("<rect ").skip(1) {
        let fill = attrs(&format!("<rect {part}"), "rect", "fill")[0].to_string();
        if let Some(g) = part.find("<g class=\"whisker\">") {
            let strokes = attrs(&part[g..], "path", "stroke");
            assert_eq!(
                (strokes[0], strokes[2]),
                (fill.as_str(), fill.as_str()),
                "whisker colour"
            );
            seen.push(fill);
        }
    }
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen,
        ["#0072B2", "#009E73", "#D55E00"],
        "three series, three colours"
    );
}

#[test]
fn whiskers_are_cut_at_the_frame_with_a_mark() {
    // Bars: the cut end is at the plot's right edge, marked with an arrowhead.
    let page = html(&one_wide_interval(quick_run()));
    let svg = chart(&page, "Latency at 64 B");
    let (left, _, _, right) = frame(svg);
    let w = whiskers(svg);
    let cut: Vec<&&str> = w.iter().filter(|g| g.contains("class=\"cut\"")).collect();
    assert_eq!(cut.len(), 1, "the one long whisker is marked");
    for g in &w {
        let (xs, _) = path_points(attrs(g, "path", "d")[0]);
        for x in xs {
            assert!(
                x >= left - 0.05 && x <= right + 0.05,
                "{x} outside {left}..{right}"
            );
        }
    }
    let arrow = numbers(attrs(cut[0], "path", "d")[3]);
    assert!(
        (arrow[2] - right).abs() < 0.05,
        "the arrowhead points at the edge: {arrow:?}"
    );

    // Lines: clipped at the top of the plot, with an arrowhead there, in the series' colour.
    let page = html(&one_wide_interval(sweep_run()));
    let svg = chart(&page, "Latency by message size");
    let (_, top, bottom, _) = frame(svg);
    let colours = attrs(svg, "polyline", "stroke");
    let mut distinct = colours.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        3,
        "p50, p99 and mean in colours of their own: {colours:?}"
    );
    let w = whiskers(svg);
    assert!(w.len() >= 13, "whiskers drawn: {}", w.len());
    let mut cut = 0;
    for g in &w {
        let stroke = attrs(g, "path", "stroke")[1];
        assert!(colours.contains(&stroke), "{stroke} is a series' colour");
        let (_, ys) = path_points(attrs(g, "path", "d")[0]);
        for y in ys {
            assert!(
                y >= top - 0.05 && y <= bottom + 0.05,
                "{y} outside {top}..{bottom}"
            );
        }
        if g.contains("class=\"cut\"") {
            cut += 1;
            let arrow = numbers(attrs(g, "path", "d")[2]);
            assert!(
                (arrow[3] - top).abs() < 0.05,
                "arrowhead at the top: {arrow:?}"
            );
        }
    }
    assert_eq!(cut, 1);
}

#[test]
fn every_line_series_has_a_colour_of_its_own_beyond_the_palette() {
    // Four patterns over tcp at three sizes: 12 latency series in one chart, more than the
    // palette's 7 colours.
    let mut run = sweep_run();
    run.cases
        .retain(|c| c.kind == Kind::Latency && c.message_size <= 64);
    let base = run.cases.clone();
    for p in ["dealerrouter", "pair-lat", "custom"] {
        for c in &base {
            let mut c = c.clone();
            c.pattern = p.to_string();
            c.id = format!("latency/{p}/tcp/{}", c.message_size);
            run.cases.push(c);
        }
    }
    let page = html(&run);
    let svg = chart(&page, "Latency by message size");
    let colours = attrs(svg, "polyline", "stroke");
    assert_eq!(colours.len(), 12);
    let mut distinct = colours.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 12, "{colours:?}");
    for g in whiskers(svg) {
        let stroke = attrs(g, "path", "stroke")[1];
        assert!(colours.contains(&stroke), "{stroke} is a series' colour");
    }
    // The legend names each series in its colour.
    assert!(svg.contains(">custom/tcp mean</text>"));
}

#[test]
fn the_fanout_floor_is_drawn_beside_libzmq() {
    let run = fanout_run();
    let page = html(&run);
    let svg = chart(
        &page,
        "fanout[4x250] over tcp: libzmq beside the raw-socket floor",
    );
    let fills = attrs(svg, "rect", "fill");
    let libzmq = fills.iter().filter(|f| **f == "#0072B2").count();
    let floor = fills.iter().filter(|f| **f == "#E69F00").count();
    // mean, p50 and p99, each over libzmq and over raw sockets (the legend adds one each).
    assert_eq!((libzmq, floor), (4, 4), "{fills:?}");
    assert!(svg.contains(">raw tcp sockets (floor)</text>"));
    // The floor's figures, in ms: mean 3.4125, p50 3.28.
    assert!(
        svg.contains(">3.41</text>") && svg.contains(">3.28</text>"),
        "{svg}"
    );
    assert!(page.contains("ZeroMQ&#39;s part of the mean latency"));
    // Runs without a fan-out floor have no such chart.
    assert!(charts(&html(&sample_run()), "fanout").is_empty());
}

#[test]
fn many_percentile_lines_are_thinned_styled_and_labelled() {
    let page = html(&sweep_run());
    let svg = chart(&page, "Latency percentiles: reqrep over tcp");
    let colours = attrs(svg, "polyline", "stroke");
    assert_eq!(colours.len(), 5, "5 of the 13 sizes drawn");
    let mut c = colours.clone();
    c.sort();
    c.dedup();
    assert_eq!(c.len(), 5, "a colour each: {colours:?}");
    let lines: Vec<&str> = svg
        .match_indices("<polyline ")
        .map(|(i, _)| &svg[i..i + svg[i..].find("/>").expect("end")])
        .collect();
    let mut dashes: Vec<&str> = lines
        .iter()
        .map(|l| {
            l.split("stroke-dasharray=\"")
                .nth(1)
                .map_or("solid", |d| &d[..d.find('"').expect("end")])
        })
        .collect();
    dashes.sort();
    dashes.dedup();
    assert_eq!(dashes.len(), 5, "a dash each: {lines:?}");
    // Direct labels at the line ends, in the line's colour: the smallest and largest size.
    assert_eq!(svg.matches("<g class=\"endlabel\">").count(), 5);
    for name in ["16 B", "128 B", "1 KiB", "8 KiB", "64 KiB"] {
        assert!(
            svg.contains(&format!("font-weight=\"600\">{name}</text>")),
            "{name}"
        );
    }
    assert!(page.contains("left out: 32 B, 64 B, 256 B, 512 B, 2 KiB, 4 KiB, 16 KiB, 32 KiB"));
    // A few lines are all drawn.
    let page = html(&sample_run());
    let svg = chart(&page, "Latency percentiles: reqrep over tcp");
    assert_eq!(svg.matches("<polyline ").count(), 3);
}

/// The texts of a chart's `<text>` elements with `attr` (e.g. `font-size="11"`).
fn texts<'a>(svg: &'a str, attr: &str) -> Vec<&'a str> {
    svg.split("<text ")
        .skip(1)
        .filter(|t| t[..t.find('>').expect("tag")].contains(attr))
        .map(|t| &t[t.find('>').expect("tag") + 1..t.find("</text>").expect("end")])
        .collect()
}

#[test]
fn number_labels_follow_one_rule() {
    let page = html(&quick_run());
    let svg = chart(&page, "Throughput at 64 B");
    let values = texts(svg, "font-size=\"11\"");
    assert_eq!(values.len(), 24, "{values:?}");
    for v in &values {
        // Three significant digits: 1.61M and 1.63M, never 1.631M beside 1.61M.
        let digits = v.chars().filter(char::is_ascii_digit).count();
        assert_eq!(digits, 3, "{v} in {values:?}");
        assert!(v.ends_with('M') || v.ends_with('k'), "{v}");
    }
    // The ticks of an axis share one unit and one number of decimals.
    let ticks = texts(svg, "text-anchor=\"middle\"");
    let ticks: Vec<&&str> = ticks
        .iter()
        .filter(|t| **t != "0" && t.ends_with('M'))
        .collect();
    assert!(ticks.len() >= 2, "{ticks:?}");
    let decimals = |t: &str| t.split('.').nth(1).map_or(0, |d| d.len() - 1);
    assert!(
        ticks.iter().all(|t| decimals(t) == decimals(ticks[0])),
        "{ticks:?}"
    );
    // A log axis never mixes 2,000 with 10k.
    let page = html(&sweep_run());
    for svg in charts(&page, "") {
        let ticks = texts(svg, "text-anchor=\"end\"");
        let grouped = ticks.iter().any(|t| t.contains(','));
        let suffixed = ticks.iter().any(|t| t.ends_with('k'));
        assert!(!(grouped && suffixed), "{ticks:?}");
    }
}
