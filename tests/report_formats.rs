//! The report formats of `zmqperf run` on the sample run: the JSON against its schema and
//! back, snapshots of the human formats, and checks that hold whatever the snapshots say.
//!
//! To accept changed output: `UPDATE_SNAPSHOTS=1 cargo test --test report_formats`, then
//! review the diff of tests/snapshots/. To look at the HTML in a browser:
//! `ZMQPERF_REPORT_HTML=/tmp/report.html cargo test --test report_formats html_to_file`.

mod common;

use common::{schema_errors, schema_validator};
use serde_json::Value;
use std::path::PathBuf;
use zmqperf::model::{CaseResult, Kind, RunResult};
use zmqperf::report::fixture::sample_run;
use zmqperf::report::{render, Format};

fn manifest_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Compares `actual` with tests/snapshots/`name`; with UPDATE_SNAPSHOTS=1, rewrites it.
fn snapshot(name: &str, actual: &str) {
    let path = manifest_path("tests/snapshots").join(name);
    if std::env::var("UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().expect("snapshot dir")).expect("create snapshot dir");
        std::fs::write(&path, actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read snapshot {}: {e}. Run with UPDATE_SNAPSHOTS=1 to create it",
            path.display()
        )
    });
    if expected == actual {
        return;
    }
    let (exp, act): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let line = exp
        .iter()
        .zip(&act)
        .position(|(a, b)| a != b)
        .unwrap_or(exp.len().min(act.len()));
    panic!(
        "{name} differs from its snapshot at line {}:\n  expected: {:?}\n  actual:   {:?}\n\
         ({} lines expected, {} actual). If the change is intended, rerun with \
         UPDATE_SNAPSHOTS=1 and review the diff of {}",
        line + 1,
        exp.get(line).copied().unwrap_or("<end of file>"),
        act.get(line).copied().unwrap_or("<end of file>"),
        exp.len(),
        act.len(),
        path.display()
    );
}

fn validator() -> jsonschema::Validator {
    schema_validator("run-result.schema.json")
}

fn errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    schema_errors(v, instance)
}

fn json_of(run: &RunResult) -> Value {
    serde_json::from_str(&render(run, Format::Json)).expect("the JSON report parses")
}

/// A run with nothing in it, and one with a case that never ran.
fn empty_runs() -> Vec<RunResult> {
    let mut empty = sample_run();
    empty.cases.clear();
    empty.findings.clear();
    empty.workload = None;
    empty.finished_at = None;
    empty.status = "running".to_string();
    let mut never_ran = empty.clone();
    let mut c: CaseResult = sample_run().cases.remove(0);
    c.repetitions.clear();
    c.summary = Default::default();
    c.floor = None;
    never_ran.cases.push(c);
    vec![empty, never_ran]
}

#[test]
fn json_validates_against_the_schema() {
    let v = validator();
    let run = sample_run();
    let json = json_of(&run);
    let errs = errors(&v, &json);
    assert!(errs.is_empty(), "sample run does not validate: {errs:#?}");
    for run in empty_runs() {
        let errs = errors(&v, &json_of(&run));
        assert!(errs.is_empty(), "empty run does not validate: {errs:#?}");
    }
}

/// A change that makes a valid report invalid.
type Mutation = fn(&mut Value);

#[test]
fn schema_rejects_wrong_types_and_unknown_fields() {
    let v = validator();
    let good = json_of(&sample_run());
    let mutations: Vec<(&str, Mutation)> = vec![
        ("message_size as a string", |j| {
            j["cases"][0]["message_size"] = Value::from("64")
        }),
        ("median as a string", |j| {
            j["cases"][0]["summary"]["latency_us"]["median"] = Value::from("fast")
        }),
        ("unknown top-level field", |j| {
            j["colour"] = Value::from("blue")
        }),
        ("unknown field in a case", |j| {
            j["cases"][1]["extra"] = Value::from(1)
        }),
        ("unknown field in the environment", |j| {
            j["environment"]["gpu"] = Value::from("none")
        }),
        ("unknown field in a histogram", |j| {
            j["cases"][0]["repetitions"][0]["latency_histogram"]["p42"] = Value::from(1)
        }),
        ("schema_version 2", |j| j["schema_version"] = Value::from(2)),
        ("missing cases", |j| {
            j.as_object_mut().expect("object").remove("cases");
        }),
        ("unknown kind", |j| {
            j["cases"][0]["kind"] = Value::from("bandwidth")
        }),
        ("negative count", |j| {
            j["cases"][0]["count"] = Value::from(-1)
        }),
        ("unknown field in an edge", |j| {
            j["cases"][9]["edges"][1]["jitter_us"] = Value::from(3)
        }),
        ("an edge without its messages", |j| {
            j["cases"][9]["edges"][0]
                .as_object_mut()
                .expect("object")
                .remove("messages");
        }),
        ("unknown field in an edge's loss", |j| {
            j["cases"][9]["edges"][1]["loss"]["late"] = Value::from(1)
        }),
        ("unknown field in a node", |j| {
            j["cases"][9]["nodes"][0]["gpu_ms"] = Value::from(1)
        }),
        ("unknown node role", |j| {
            j["cases"][9]["nodes"][0]["role"] = Value::from("broker")
        }),
        ("null edge latency", |j| {
            j["cases"][9]["edges"][0]["latency"] = Value::Null
        }),
    ];
    for (what, mutate) in mutations {
        let mut bad = good.clone();
        mutate(&mut bad);
        assert!(!v.is_valid(&bad), "the schema accepts {what}");
    }
}

#[test]
fn json_with_nodes_and_edges_validates() {
    let v = validator();
    let json = json_of(&sample_run());
    let case = &json["cases"][9];
    assert_eq!(case["id"], "throughput/ptmp/tcp/64");
    assert_eq!(case["nodes"].as_array().map(Vec::len), Some(3));
    assert_eq!(case["edges"].as_array().map(Vec::len), Some(2));
    assert_eq!(case["edges"][1]["loss"]["lost_in_middle"], 250);
    // Cases without a topology leave both out, as reports written before them did.
    assert!(json["cases"][0].get("nodes").is_none() && json["cases"][0].get("edges").is_none());
    let errs = errors(&v, &json);
    assert!(
        errs.is_empty(),
        "nodes and edges do not validate: {errs:#?}"
    );

    // Every optional figure of a node and an edge, present.
    let mut full = json.clone();
    let node = &mut full["cases"][9]["nodes"][0];
    node["delivered_msgs_per_sec"] = Value::from(12.5);
    node["forwarded"] = Value::from(1000);
    node["cut_short"] = serde_json::json!(["pub: idle: nothing for 10.0 s"]);
    let errs = errors(&v, &full);
    assert!(errs.is_empty(), "a full node does not validate: {errs:#?}");
    // And every one left out.
    let mut bare = json;
    for e in bare["cases"][9]["edges"].as_array_mut().expect("edges") {
        let e = e.as_object_mut().expect("edge");
        for k in ["msgs_per_sec", "loss", "latency"] {
            e.remove(k);
        }
    }
    let errs = errors(&v, &bare);
    assert!(errs.is_empty(), "a bare edge does not validate: {errs:#?}");
}

#[test]
fn json_round_trips() {
    let run = sample_run();
    let text = render(&run, Format::Json);
    let back: RunResult = serde_json::from_str(&text).expect("the JSON report reads back");
    assert_eq!(back, run);
    for run in empty_runs() {
        let back: RunResult =
            serde_json::from_str(&render(&run, Format::Json)).expect("reads back");
        assert_eq!(back, run);
    }
}

#[test]
fn table_snapshot() {
    snapshot("run.txt", &render(&sample_run(), Format::Table));
}

#[test]
fn markdown_snapshot() {
    snapshot("run.md", &render(&sample_run(), Format::Markdown));
}

#[test]
fn csv_snapshot() {
    snapshot("run.csv", &render(&sample_run(), Format::Csv));
}

#[test]
fn html_snapshot() {
    snapshot("run.html", &render(&sample_run(), Format::Html));
}

/// Writes the HTML of the sample run where ZMQPERF_REPORT_HTML says, to look at it.
#[test]
fn html_to_file_when_asked() {
    if let Ok(path) = std::env::var("ZMQPERF_REPORT_HTML") {
        std::fs::write(&path, render(&sample_run(), Format::Html)).expect("write the HTML");
    }
}

/// Renders a JSON report (e.g. of a live `zmqperf run --format json`) named by
/// ZMQPERF_RENDER_JSON in the human formats, next to it (`.txt`, `.md`, `.html`), to look at
/// them.
#[test]
fn json_file_to_human_formats_when_asked() {
    let Ok(path) = std::env::var("ZMQPERF_RENDER_JSON") else {
        return;
    };
    let text = std::fs::read_to_string(&path).expect("read the JSON report");
    let run: RunResult = serde_json::from_str(&text).expect("a run result");
    for f in [Format::Table, Format::Markdown, Format::Html] {
        let out = format!("{path}.{}", f.extension());
        std::fs::write(&out, render(&run, f)).expect("write the report");
    }
}

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
            "msg/s",
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
fn csv_has_one_row_per_case_and_quotes_properly() {
    let run = sample_run();
    let rows = parse_csv(&render(&run, Format::Csv));
    assert_eq!(rows.len(), run.cases.len() + 1);
    assert_eq!(rows[0], zmqperf::report::csv::COLUMNS);
    let col = |name: &str| rows[0].iter().position(|h| h == name).expect(name);
    for (row, case) in rows[1..].iter().zip(&run.cases) {
        assert_eq!(row.len(), rows[0].len(), "{row:?}");
        assert_eq!(row[col("id")], case.id);
        assert_eq!(row[col("warnings")], case.warnings.join("; "));
        assert_eq!(row[col("error")], case.error.clone().unwrap_or_default());
        if let Some(e) = case.summary.latency_us {
            assert_eq!(
                row[col("latency_us_median")].parse::<f64>().unwrap(),
                e.median
            );
        }
    }
    let pubsub = &rows[7];
    assert_eq!(pubsub[col("lost")], "2047");
    assert!(pubsub[col("warnings")].contains("\"slow joiner\""));
    let open = &rows[8];
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
    for legend in [
        ">reqrep/tcp<",
        ">pair/ipc<",
        ">p50<",
        ">p99<",
        ">mean<",
        ">pubsub/inproc<",
        ">delivered<",
        ">sent<",
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

#[test]
fn empty_runs_render_in_every_format() {
    for run in empty_runs() {
        for f in Format::ALL {
            let out = render(&run, f);
            assert!(!out.is_empty(), "{f} is empty");
        }
        let text = render(&run, Format::Table);
        if run.cases.is_empty() {
            assert!(text.contains("No cases in this run."));
        } else {
            assert!(run.cases.iter().all(|c| c.kind == Kind::Latency));
            assert!(text.contains("latency (us)"));
        }
    }
}

#[test]
fn format_names() {
    for f in Format::ALL {
        assert_eq!(Format::parse(f.name()).unwrap(), f);
        assert_eq!(f.to_string(), f.name());
    }
    let e = Format::parse("pdf").unwrap_err().to_string();
    assert!(
        e.contains("'pdf'") && e.contains("table, json, csv, markdown, html"),
        "{e}"
    );
}

#[test]
fn findings_show_in_every_human_format() {
    let run = sample_run();
    let text = render(&run, Format::Table);
    let md = render(&run, Format::Markdown);
    let html = render(&run, Format::Html);
    for f in &run.findings {
        assert!(
            text.contains(&format!("[{}] {}", f.severity.name(), f.id)),
            "{}",
            f.id
        );
        assert!(md.contains(&format!("### {}", f.id)), "{}", f.id);
        assert!(html.contains(&format!("<code>{}</code>", f.id)), "{}", f.id);
    }
    assert!(text.contains("Findings\n--------\n2 findings: 1 warning, 1 info."));
    assert!(text.contains("  Remedy: Publish only") || text.contains("  Remedy: Wait for"));
    assert!(
        text.contains("Gap: 1,797 lost at the start (seq 0 to 1,796)"),
        "{text}"
    );
    assert!(
        md.contains("- **Evidence**: `first_arrival_ms` 2.81, `fixed_wait_lost` 0, "),
        "{md}"
    );
    assert!(html.contains("<h2>Findings</h2>"));
    assert!(html.contains("PUSH -&gt; PULL"), "evidence is escaped");
    for l in text.lines() {
        assert!(l.chars().count() <= 120, "line over 120 characters: {l}");
    }

    // A run of `zmqperf diagnose`: findings, no cases, so no empty results section.
    let mut diag = run.clone();
    diag.cases.clear();
    let text = render(&diag, Format::Table);
    assert!(text.contains("Findings") && !text.contains("No cases in this run."));
    assert!(!text.contains("Results"));
    let html = render(&diag, Format::Html);
    assert!(html.contains("<h2>Findings</h2>") && !html.contains("<h2>Charts</h2>"));
    assert!(html.contains("2 findings"));
    let md = render(&diag, Format::Markdown);
    assert!(md.contains("## Findings") && !md.contains("## Results"));
}
