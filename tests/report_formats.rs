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

/// The envelope's schema, which checks a run's results against run-result.schema.json.
fn validator() -> jsonschema::Validator {
    schema_validator("envelope.schema.json")
}

/// A run read back from its JSON report, as `zmqperf import` reads it.
fn read_back(text: &str) -> RunResult {
    zmqperf::store::import::parse_export(text.as_bytes(), "report.json")
        .unwrap_or_else(|e| panic!("the JSON report does not read back: {e}"))
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
    empty.status = zmqperf::model::RunStatus::Running;
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

#[test]
fn the_other_fixtures_validate_and_read_back() {
    let v = validator();
    // A run imported from another history carries its mark.
    let mut imported = sample_run();
    imported.imported = Some(zmqperf::model::Imported {
        original_run_id: "20261120-101010-0a0b".into(),
        file: "far-run.json".into(),
        from_host: "far-away".into(),
        imported_at: "2026-11-23T10:00:00Z".into(),
        content_sha256: "ab".repeat(32),
    });
    let mut runs = vec![
        zmqperf::report::fixture::quick_run(),
        zmqperf::report::fixture::sweep_run(),
        zmqperf::report::fixture::fanout_run(),
        zmqperf::report::fixture::host_pairs_run(),
        imported,
    ];
    runs.extend(zmqperf::report::fixture::machine_runs());
    for run in runs {
        let json = json_of(&run);
        let errs = errors(&v, &json);
        assert!(
            errs.is_empty(),
            "{} does not validate: {errs:#?}",
            run.command
        );
        let back = read_back(&render(&run, Format::Json));
        assert_eq!(back, run);
    }
    // The fan-out's floor keeps its median and p99; the ping-pong floor leaves them out.
    let fan = json_of(&zmqperf::report::fixture::fanout_run());
    assert_eq!(fan["results"]["cases"][0]["floor"]["p99_us"], 6905.0);
    let sample = json_of(&sample_run());
    assert!(sample["results"]["cases"][0]["floor"]
        .get("p50_us")
        .is_none());
    // A run across hosts: each node names its host, each host describes itself.
    let hosts = json_of(&zmqperf::report::fixture::host_pairs_run());
    assert_eq!(hosts["results"]["cases"][1]["nodes"][1]["host"], "b");
    assert_eq!(hosts["environment"]["hosts"][1]["addr"], "10.0.0.2");
    assert_eq!(hosts["environment"]["hosts"][1]["nics"][1]["mtu"], 1500);
    // Nothing of hosts or imports in a run on one host that was recorded here.
    assert!(sample["environment"].get("hosts").is_none());
    assert!(sample.get("imported").is_none());
}

/// A change that makes a valid report invalid.
type Mutation = fn(&mut Value);

#[test]
fn schema_rejects_wrong_types_and_unknown_fields() {
    let v = validator();
    let good = json_of(&sample_run());
    let mutations: Vec<(&str, Mutation)> = vec![
        ("message_size as a string", |j| {
            j["results"]["cases"][0]["message_size"] = Value::from("64")
        }),
        ("median as a string", |j| {
            j["results"]["cases"][0]["summary"]["latency_us"]["median"] = Value::from("fast")
        }),
        ("unknown top-level field", |j| {
            j["colour"] = Value::from("blue")
        }),
        ("unknown field in a case", |j| {
            j["results"]["cases"][1]["extra"] = Value::from(1)
        }),
        ("unknown field in the environment", |j| {
            j["environment"]["gpu"] = Value::from("none")
        }),
        ("unknown field in a network interface", |j| {
            j["environment"]["network"][0]["duplex"] = Value::from("full")
        }),
        ("a network interface without its name", |j| {
            j["environment"]["network"][0]
                .as_object_mut()
                .expect("object")
                .remove("interface");
        }),
        ("mtu as a string", |j| {
            j["environment"]["network"][0]["mtu"] = Value::from("1500")
        }),
        ("unknown field in a histogram", |j| {
            j["results"]["cases"][0]["repetitions"][0]["latency_histogram"]["p42"] = Value::from(1)
        }),
        ("version 4", |j| j["version"] = Value::from(4)),
        ("an unknown kind of output", |j| {
            j["kind"] = Value::from("bench")
        }),
        ("a run's results under another kind", |j| {
            j["kind"] = Value::from("history")
        }),
        ("a field beside the envelope's", |j| {
            j["cases"] = Value::from(Vec::<Value>::new())
        }),
        ("missing cases", |j| {
            j["results"]
                .as_object_mut()
                .expect("object")
                .remove("cases");
        }),
        ("a run without its id", |j| {
            j["run"].as_object_mut().expect("object").remove("id");
        }),
        ("unknown kind", |j| {
            j["results"]["cases"][0]["kind"] = Value::from("bandwidth")
        }),
        ("negative count", |j| {
            j["results"]["cases"][0]["count"] = Value::from(-1)
        }),
        ("unknown field in an edge", |j| {
            j["results"]["cases"][9]["edges"][1]["jitter_us"] = Value::from(3)
        }),
        ("an edge without its messages", |j| {
            j["results"]["cases"][9]["edges"][0]
                .as_object_mut()
                .expect("object")
                .remove("messages");
        }),
        ("unknown field in an edge's loss", |j| {
            j["results"]["cases"][9]["edges"][1]["loss"]["late"] = Value::from(1)
        }),
        ("unknown field in a node", |j| {
            j["results"]["cases"][9]["nodes"][0]["gpu_ms"] = Value::from(1)
        }),
        ("unknown node role", |j| {
            j["results"]["cases"][9]["nodes"][0]["role"] = Value::from("broker")
        }),
        ("null edge latency", |j| {
            j["results"]["cases"][9]["edges"][0]["latency"] = Value::Null
        }),
    ];
    for (what, mutate) in mutations {
        let mut bad = good.clone();
        mutate(&mut bad);
        assert!(!v.is_valid(&bad), "the schema accepts {what}");
    }
}

#[test]
fn schema_rejects_bad_hosts_and_import_marks() {
    let v = validator();
    let mut run = zmqperf::report::fixture::host_pairs_run();
    run.imported = Some(zmqperf::model::Imported {
        original_run_id: "x".into(),
        file: "f.json".into(),
        from_host: "far".into(),
        imported_at: "2026-11-23T10:00:00Z".into(),
        content_sha256: "0".repeat(64),
    });
    let good = json_of(&run);
    assert!(errors(&v, &good).is_empty(), "{:#?}", errors(&v, &good));
    let mutations: [(&str, Mutation); 7] = [
        ("unknown field in a host", |j| {
            j["environment"]["hosts"][0]["gpu"] = Value::from("none")
        }),
        ("a host without its name", |j| {
            j["environment"]["hosts"][0]
                .as_object_mut()
                .expect("object")
                .remove("name");
        }),
        ("a host's mtu as a string", |j| {
            j["environment"]["hosts"][0]["nics"][0]["mtu"] = Value::from("1500")
        }),
        ("an unknown libzmq source", |j| {
            j["environment"]["hosts"][0]["libzmq_source"] = Value::from("vendored")
        }),
        ("an empty node host", |j| {
            j["results"]["cases"][1]["nodes"][0]["host"] = Value::from("")
        }),
        ("an import mark without its original id", |j| {
            j["run"]["imported"]
                .as_object_mut()
                .expect("object")
                .remove("original_run_id");
        }),
        ("a hash that is not SHA-256 hex", |j| {
            j["run"]["imported"]["content_sha256"] = Value::from("xyz")
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
    let case = &json["results"]["cases"][9];
    assert_eq!(case["id"], "throughput/ptmp/tcp/64");
    assert_eq!(case["nodes"].as_array().map(Vec::len), Some(3));
    assert_eq!(case["edges"].as_array().map(Vec::len), Some(2));
    assert_eq!(case["edges"][1]["loss"]["lost_in_middle"], 250);
    // Cases without a topology leave both out, as reports written before them did.
    assert!(
        json["results"]["cases"][0].get("nodes").is_none()
            && json["results"]["cases"][0].get("edges").is_none()
    );
    let errs = errors(&v, &json);
    assert!(
        errs.is_empty(),
        "nodes and edges do not validate: {errs:#?}"
    );

    // Every optional figure of a node and an edge, present.
    let mut full = json.clone();
    let node = &mut full["results"]["cases"][9]["nodes"][0];
    node["delivered_msgs_per_sec"] = Value::from(12.5);
    node["forwarded"] = Value::from(1000);
    node["cut_short"] = serde_json::json!(["pub: idle: nothing for 10.0 s"]);
    let errs = errors(&v, &full);
    assert!(errs.is_empty(), "a full node does not validate: {errs:#?}");
    // And every one left out.
    let mut bare = json;
    for e in bare["results"]["cases"][9]["edges"]
        .as_array_mut()
        .expect("edges")
    {
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
    let back = read_back(&text);
    assert_eq!(back, run);
    for run in empty_runs() {
        let back = read_back(&render(&run, Format::Json));
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

/// The quick suite's shape: one pattern x transport matrix per kind.
#[test]
fn quick_matrix_snapshots() {
    let run = zmqperf::report::fixture::quick_run();
    snapshot("quick.txt", &render(&run, Format::Table));
    snapshot("quick.md", &render(&run, Format::Markdown));
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
    let run = read_back(&text);
    for f in [Format::Table, Format::Markdown, Format::Html] {
        let out = format!("{path}.{}", f.extension());
        std::fs::write(&out, render(&run, f)).expect("write the report");
    }
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

/// The Markdown of a full bindings matrix (ten implementations, three patterns, two
/// transports, two sizes: 1,200 pairs) fits a GitHub comment (65,536 characters) with room
/// to spare, and still holds every pair: a grid per transport and size under each pattern,
/// each pair's ratio or mark, the baselines, the best and worst pairs and the reasons.
#[test]
fn a_full_matrix_in_markdown_fits_a_github_comment() {
    use zmqperf::report::fixture::{matrix_full, matrix_quick};
    use zmqperf::report::matrix::{markdown, MARKDOWN_LIMIT};
    let m = matrix_full();
    let md = markdown(&m);
    // ZMQPERF_MATRIX_MD=FILE keeps it, to read.
    if let Some(p) = std::env::var_os("ZMQPERF_MATRIX_MD") {
        std::fs::write(p, &md).expect("write the Markdown");
    }
    let chars = md.chars().count();
    eprintln!("full matrix: {chars} characters of Markdown");
    const { assert!(MARKDOWN_LIMIT <= 60_000) };
    assert!(chars < MARKDOWN_LIMIT, "{chars} characters");
    assert_eq!(md.matches("\n## ").count(), 3, "a section per pattern");
    for head in [
        "| tcp 64 B |",
        "| tcp 1024 B |",
        "| ipc 64 B |",
        "| ipc 1024 B |",
    ] {
        assert_eq!(md.matches(head).count(), 3, "{head} under each pattern");
    }
    // Every row of every grid, each with a cell per server.
    for i in &m.impls {
        let row = format!("| **{}** |", i.name);
        let rows: Vec<&str> = md.lines().filter(|l| l.starts_with(&row)).collect();
        assert_eq!(rows.len(), 12, "{row}");
        for r in rows {
            assert_eq!(r.matches(" |").count(), 11, "{r}");
        }
    }
    assert!(
        md.contains("C-C: tcp 64 B: 38.50 latency (us)"),
        "the baselines"
    );
    let best = md
        .lines()
        .find(|l| l.contains("Best pair"))
        .expect("the best pair");
    assert!(
        best.contains("Best pair zmqperf>zmqperf (tcp 64 B) at 0.95"),
        "{best}"
    );
    assert!(
        md.contains("FAIL \\[1\\]") && md.contains("\n1. pass 1: the subscriber "),
        "marks and reasons"
    );
    assert!(
        md.contains("2 of 5"),
        "a pair that failed in some passes says so"
    );
    assert!(
        md.contains("jeromq has no ipc transport"),
        "why a pair did not run"
    );
    // The quick matrix is shorter still.
    assert!(markdown(&matrix_quick()).chars().count() < chars / 3);
}
