//! The shape of each human format on the fixture run: the terminal tables (a column per
//! size, wrapping within 120 columns), Markdown's pipe tables, CSV's quoting, and the HTML
//! page (self-contained, labelled charts, bars or lines, axes at or above zero).

use zmqperf::model::CaseResult;
use zmqperf::report::fixture::sample_run;
use zmqperf::report::{render, Format};

/// The lines of the table that follows the title line starting with `title`.
fn table_after<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
    text.lines()
        .skip_while(|l| !l.starts_with(title))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect()
}

fn cells(line: &str) -> Vec<&str> {
    line.split('|').map(str::trim).collect()
}

#[test]
fn table_has_a_column_per_size_and_the_rows() {
    let text = render(&sample_run(), Format::Table);
    let t = table_after(&text, "reqrep over tcp: latency, closed loop");
    assert_eq!(cells(t[0]), ["size (B)", "64", "1024", "65536"]);
    let labels: Vec<&str> = t[2..].iter().map(|l| cells(l)[0]).collect();
    assert_eq!(
        labels,
        [
            "latency (us)",
            "p99 (us)",
            "round trips/s",
            "Mbit/s",
            "raw socket floor (us)"
        ]
    );
    for row in &t[2..] {
        assert_eq!(cells(row).len(), 4, "{row}");
    }

    let t = table_after(&text, "pushpull over tcp: throughput, closed loop");
    assert_eq!(cells(t[0]), ["size (B)", "64", "1024"]);
    let labels: Vec<&str> = t[2..].iter().map(|l| cells(l)[0]).collect();
    assert_eq!(
        labels,
        ["latency (us)", "msg/s", "Mbit/s", "send msg/s", "lost"]
    );
    let msgs = cells(t[3]);
    assert!(msgs[1].contains(',') && msgs[1].contains('±'), "{msgs:?}");

    let t = table_after(
        &text,
        "pushpull over tcp: throughput, open loop at 10,000 msg/s",
    );
    assert_eq!(cells(t[0]), ["size (B)", "1024"]);
    assert!(
        t.iter().any(|l| l.contains("send delay p50 (us)")),
        "{t:#?}"
    );

    let t = table_after(&text, "pubsub over inproc: throughput, closed loop");
    assert!(t.iter().any(|l| cells(l) == ["lost", "2,047"]), "{t:#?}");
    // The delivery section places each hole and times the first one in the middle.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(
            "2,047 of 3,000,000 lost (1,797 at the start: a slow joiner; 250 in the middle: a \
             high-water mark reached, the first at seq 500,000 (94.0 ms into the stream))"
        ),
        "{text}"
    );

    for l in text.lines() {
        assert!(l.chars().count() <= 120, "line over 120 characters: {l}");
        assert!(!l.contains('\x1b'), "escape sequence in: {l}");
    }
    for needle in [
        "Intel(R) Xeon(R) Gold 6248R",
        "cores     8",
        "6.1.0-27-amd64",
        "libzmq    4.3.5",
        "zmqperf   0.1.0",
        "zmqperf run --workload suite.toml",
        "20261121-221530-4f2a",
        "2026-11-21T22:15:30Z",
        "complete",
        "Warnings",
        "high spread",
        "Failed cases",
        "latency/dealerrouter/tcp/64: peer stopped",
        "Resources",
    ] {
        assert!(text.contains(needle), "no {needle:?} in the table report");
    }
}

#[test]
fn wide_sweeps_wrap_within_120_columns() {
    let mut run = sample_run();
    let template = run.cases[4].clone();
    run.cases.clear();
    for k in 1..=13 {
        let mut c = template.clone();
        c.message_size = 1 << k;
        c.id = CaseResult::make_id(c.kind, &c.pattern, c.transport, c.message_size, None);
        run.cases.push(c);
    }
    let text = render(&run, Format::Table);
    for l in text.lines() {
        assert!(l.chars().count() <= 120, "line over 120 characters: {l}");
    }
    // Every size appears in some header row.
    let heads: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("size (B)"))
        .flat_map(|l| cells(l).into_iter().skip(1))
        .collect();
    let want: Vec<String> = (1..=13).map(|k| (1u32 << k).to_string()).collect();
    assert_eq!(heads, want);
}

#[test]
fn markdown_has_pipe_tables_and_the_environment() {
    let md = render(&sample_run(), Format::Markdown);
    assert!(md.starts_with("# zmqperf run 20261121-221530-4f2a"));
    assert!(md.contains("- **CPU**: Intel(R) Xeon(R) Gold 6248R"));
    assert!(md.contains("### reqrep over tcp: latency, closed loop"));
    assert!(md.contains("### pushpull over tcp: throughput, open loop at 10,000 msg/s"));
    let header = md
        .lines()
        .find(|l| l.starts_with("| size (B)") && l.contains("65536"))
        .expect("reqrep header row");
    assert_eq!(header.matches('|').count(), 5);
    assert!(md.contains("|:---"), "left-aligned label column");
    assert!(md.contains("---:|"), "right-aligned numbers");
}

/// A CSV parser just strict enough to check the quoting.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(!quoted, "unterminated quoted field");
    assert!(
        field.is_empty() && row.is_empty(),
        "last line without a newline"
    );
    rows
}

#[test]
fn csv_has_one_row_per_case_and_per_edge_and_quotes_properly() {
    let run = sample_run();
    let rows = parse_csv(&render(&run, Format::Csv));
    let edges: usize = run.cases.iter().map(|c| c.edges.len()).sum();
    assert!(edges > 0, "the sample has a topology case with edges");
    assert_eq!(rows.len(), 1 + run.cases.len() + edges);
    assert_eq!(rows[0], zmqperf::report::csv::COLUMNS);
    let col = |name: &str| rows[0].iter().position(|h| h == name).expect(name);
    for row in &rows[1..] {
        assert_eq!(row.len(), rows[0].len(), "{row:?}");
        assert_eq!(row[col("run_id")], run.run_id);
        assert_eq!(row[col("host")], run.environment.hostname);
        assert_eq!(row[col("started")], run.started_at);
    }
    let cases: Vec<&Vec<String>> = rows[1..]
        .iter()
        .filter(|r| r[col("row")] == "case")
        .collect();
    assert_eq!(cases.len(), run.cases.len());
    for (row, case) in cases.iter().zip(&run.cases) {
        assert_eq!(row[col("id")], case.id);
        assert_eq!(row[col("edge")], "");
        assert_eq!(row[col("warnings")], case.warnings.join("; "));
        assert_eq!(row[col("error")], case.error.clone().unwrap_or_default());
        if let Some(e) = case.summary.latency_us {
            // To the nanosecond: three decimals of a microsecond.
            let got = &row[col("latency_us_median")];
            assert_eq!(got.split('.').nth(1).map(str::len), Some(3), "{got}");
            assert!((got.parse::<f64>().unwrap() - e.median).abs() <= 0.0005);
        }
        if let Some(e) = case.summary.msgs_per_sec {
            let got = &row[col("msgs_per_sec_median")];
            assert!(!got.contains('.'), "a whole rate: {got}");
            assert!((got.parse::<f64>().unwrap() - e.median).abs() <= 0.5);
        }
    }
    // Each edge follows its case, named from -> to, with its own ledger.
    let topo = run.cases.iter().find(|c| !c.edges.is_empty()).unwrap();
    let mine: Vec<&Vec<String>> = rows[1..]
        .iter()
        .filter(|r| r[col("row")] == "edge" && r[col("id")] == topo.id)
        .collect();
    assert_eq!(mine.len(), topo.edges.len());
    for (row, e) in mine.iter().zip(&topo.edges) {
        assert_eq!(row[col("edge")], format!("{} -> {}", e.from, e.to));
        let lost = e
            .loss
            .as_ref()
            .map(|l| l.lost.to_string())
            .unwrap_or_default();
        assert_eq!(row[col("lost")], lost);
    }
    let pubsub = cases[6];
    assert_eq!(pubsub[col("lost")], "2047");
    assert!(pubsub[col("warnings")].contains("\"slow joiner\""));
    let open = cases[7];
    assert_eq!(open[col("rate")], "10000");
    assert_eq!(open[col("loop_mode")], "open");
}

#[test]
fn html_is_self_contained_with_labelled_charts() {
    let html = render(&sample_run(), Format::Html);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.trim_end().ends_with("</html>"));
    for banned in [
        "http://", "https://", "<script", "<link", "@import", "url(h", "src=",
    ] {
        assert!(!html.contains(banned), "the HTML contains {banned:?}");
    }
    assert!(html.matches("<svg").count() >= 6, "charts missing");
    for label in [
        "message size (bytes, log2 scale)",
        "one-way latency (µs)",
        "messages per second (msg/s)",
        "payload bandwidth (Mbit/s)",
        "percentile (%)",
        "latency from the due send time (µs)",
        ">messages</text>",
    ] {
        assert!(html.contains(label), "no axis label {label:?}");
    }
    // A legend entry per series (each has a colour of its own), a name at the end of each
    // percentile line.
    for legend in [
        ">reqrep/tcp p50<",
        ">reqrep/tcp p99<",
        ">reqrep/tcp mean<",
        ">pair/ipc p50<",
        ">pubsub/inproc delivered<",
        ">pushpull/tcp sent<",
        ">pushpull/tcp<",
        ">64 KiB<",
    ] {
        assert!(html.contains(legend), "no legend entry {legend:?}");
    }
    assert!(html.contains("Latency percentiles: pushpull over tcp, open loop at 10,000 msg/s"));
    assert!(html.contains("<th class=\"l\">size (B)</th>"));
    assert!(html.contains("Failed cases"));
    assert!(html.contains("Warnings"));
    assert!(html.contains("&quot;slow joiner&quot;"), "text is escaped");
}

#[test]
fn html_uses_bars_when_all_cases_have_one_size() {
    let mut run = sample_run();
    run.cases.retain(|c| c.message_size == 64);
    let html = render(&run, Format::Html);
    assert!(
        html.contains("Latency at 64 B (closed loop)"),
        "bars for latency"
    );
    assert!(
        html.contains("Throughput at 64 B (closed loop)"),
        "bars for throughput"
    );
    assert!(
        !html.contains("by message size"),
        "no line chart over one size"
    );
    // One spectrum per transport, a line per pattern.
    assert!(html.contains("Latency percentiles over tcp, closed loop"));
    assert!(html.contains("Latency percentiles over ipc, closed loop"));
    assert!(html.contains(">reqrep 64 B<"));
}

#[test]
fn html_axes_stay_at_or_above_zero() {
    let mut run = sample_run();
    // Two repetitions give wide t-intervals that reach below zero.
    for c in &mut run.cases {
        if let Some(e) = &mut c.summary.p50_us {
            e.ci_low = -3.0 * e.median;
        }
    }
    let html = render(&run, Format::Html);
    assert!(
        !html.contains("dominant-baseline=\"middle\">-"),
        "a negative tick label on a latency axis"
    );
}

#[test]
fn html_says_no_loss_when_all_streams_are_clean() {
    let mut run = sample_run();
    for c in &mut run.cases {
        c.summary.lost = 0;
        for r in &mut c.repetitions {
            if let Some(l) = &mut r.loss {
                l.lost = 0;
                l.lost_at_start = 0;
                l.gaps.clear();
                l.gap_count = 0;
                l.received = l.expected;
            }
        }
    }
    let html = render(&run, Format::Html);
    assert!(html.contains("no loss"));
    assert!(
        !html.contains("id=\"loss-t\""),
        "no loss chart when there is no loss"
    );
    let text = render(&run, Format::Table);
    assert!(text.contains("no loss"));
}
