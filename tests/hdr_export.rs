//! The exported histograms are HdrHistogram's own: HdrHistogram's Python package
//! (`hdrhistogram` from PyPI, installed here into a venv under target/) decodes every
//! `hdr` of a run's JSON and finds the same count and the same percentiles as zmqperf.

mod common;
use common::*;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

/// The pinned package: HdrHistogram's Python port.
const PACKAGE: &str = "hdrhistogram==0.10.8";

/// The venv's python with the package (made once, seconds to minutes from PyPI).
fn python() -> PathBuf {
    pip_venv("hdrhistogram-venv", PACKAGE).join("bin/python")
}

/// Every histogram of a run's JSON (an object with `hdr` and `count`), by its path.
fn histograms(v: &Value, path: String, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(m) => {
            if m.contains_key("hdr") && m.contains_key("count") {
                out.push((path.clone(), v.clone()));
            }
            for (k, x) in m {
                histograms(x, format!("{path}.{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                histograms(x, format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

const DECODE: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
out = []
for line in open(sys.argv[1]):
    h = HdrHistogram.decode(line.strip())
    buckets = [[i.value_iterated_to, i.count_at_value_iterated_to] for i in h.get_recorded_iterator()]
    figures = [h.get_total_count()] + [h.get_value_at_percentile(q) for q in (50, 90, 99, 99.9)]
    out.append({"figures": figures, "buckets": buckets})
print(json.dumps(out))
"#;

#[test]
fn python_hdrhistogram_decodes_every_histogram_to_the_same_figures() {
    with_watchdog(900, || {
        let py = python();
        let o = run(
            zp(&[
                "run",
                "--patterns",
                "reqrep,pushpull,pubsub",
                "--transports",
                "inproc,ipc",
                "--sizes",
                "64",
                "--count",
                "5000",
                "--repetitions",
                "2",
                "--no-history",
                "--format",
                "json",
            ]),
            300,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let run_json = envelope(&o.stdout);
        assert_eq!(run_json["version"], 3);
        let mut found = Vec::new();
        histograms(&run_json, String::new(), &mut found);
        assert!(found.len() >= 12, "{} histograms", found.len());
        let lines: String = found
            .iter()
            .map(|(_, h)| format!("{}\n", h["hdr"].as_str().unwrap()))
            .collect();
        let file = std::env::temp_dir().join(format!("zmqperf-hdr-{}.txt", std::process::id()));
        std::fs::write(&file, lines).unwrap();
        let mut c = Command::new(&py);
        c.arg("-c").arg(DECODE).arg(&file);
        let decoded = run(c, 120);
        let _ = std::fs::remove_file(&file);
        assert_eq!(decoded.code, Some(0), "{decoded:?}");
        let theirs: Vec<Value> = serde_json::from_str(&decoded.stdout).unwrap();
        assert_eq!(theirs.len(), found.len());
        let mut compared = 0;
        for ((path, h), theirs) in found.iter().zip(&theirs) {
            let ours: zmqperf::stats::LatencyHistogram = serde_json::from_value(h.clone()).unwrap();
            // The whole distribution: every recorded value with its count.
            let buckets: Vec<(u64, u64)> =
                serde_json::from_value(theirs["buckets"].clone()).unwrap();
            assert_eq!(
                buckets,
                ours.buckets(),
                "{path}: the recorded values and counts"
            );
            let t: Vec<u64> = serde_json::from_value(theirs["figures"].clone()).unwrap();
            let s = ours.summary();
            assert_eq!(t[0], s.count, "{path}: count");
            if s.count == 0 {
                continue;
            }
            // zmqperf keeps each percentile within the exact min and max it also records.
            // Where q x count is a whole number, every HdrHistogram agrees on the sample it
            // names; elsewhere the Python port rounds to the nearest sample and the reference
            // (Java, and zmqperf) takes the next one up.
            let clamp = |v: u64| v.clamp(s.min_ns, s.max_ns);
            let want = [
                (50, s.p50_ns),
                (90, s.p90_ns),
                (99, s.p99_ns),
                (999, s.p99_9_ns),
            ];
            for (i, (per, w)) in want.iter().enumerate() {
                let scale = if *per == 999 { 1000 } else { 100 };
                if !(s.count * per).is_multiple_of(scale) {
                    continue;
                }
                assert_eq!(clamp(t[i + 1]), *w, "{path}: percentile {per} of {scale}");
                compared += 1;
            }
        }
        assert!(compared >= 10, "{compared} figures compared");
    });
}

const READ_LOG: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 10**9, 3))
out = []
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    buckets = [[i.value_iterated_to, i.count_at_value_iterated_to] for i in h.get_recorded_iterator()]
    out.append({"tag": h.get_tag(), "start_s": h.get_start_time_stamp() / 1000.0,
                "end_s": h.get_end_time_stamp() / 1000.0, "buckets": buckets})
print(json.dumps({"start_time_s": reader.get_start_time_sec(), "intervals": out}))
"#;

/// `--format hlog` is HdrHistogram's interval log: its Python reader finds one interval per
/// case and repetition, in the order they ran, tagged with the case, each with exactly the
/// histogram of that repetition in the JSON, and the run's start time.
#[test]
fn the_interval_log_is_read_by_hdrhistograms_own_log_reader() {
    with_watchdog(600, || {
        let py = python();
        let db = std::env::temp_dir().join(format!("zmqperf-hlog-{}.db", std::process::id()));
        let _ = std::fs::remove_file(&db);
        let db = db.display().to_string();
        let o = run(
            zp(&[
                "run",
                "--patterns",
                "reqrep,pushpull",
                "--transports",
                "inproc,ipc",
                "--sizes",
                "64",
                "--count",
                "3000",
                "--repetitions",
                "2",
                "--db",
                &db,
            ]),
            300,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let log = std::env::temp_dir().join(format!("zmqperf-hlog-{}.hlog", std::process::id()));
        let log = log.display().to_string();
        let o = run(
            zp(&[
                "report", "last", "--format", "hlog", "-o", &log, "--db", &db,
            ]),
            60,
        );
        assert_eq!(o.code, Some(0), "{o:?}");
        let j = envelope(&run(zp(&["report", "last", "--format", "json", "--db", &db]), 60).stdout);
        let mut c = Command::new(&py);
        c.arg("-c").arg(READ_LOG).arg(&log);
        let read = run(c, 120);
        let text = std::fs::read_to_string(&log).unwrap();
        let _ = std::fs::remove_file(&log);
        let _ = std::fs::remove_file(&db);
        assert_eq!(read.code, Some(0), "{read:?}\n{text}");
        let theirs: Value = serde_json::from_str(&read.stdout).unwrap();
        // The run's start, to the second.
        let started = zmqperf::clock::parse_rfc3339(j["run"]["started_at"].as_str().unwrap())
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert_eq!(theirs["start_time_s"].as_f64().unwrap(), started, "{text}");
        let intervals = theirs["intervals"].as_array().unwrap();
        let mut want = Vec::new();
        for case in j["results"]["cases"].as_array().unwrap() {
            for rep in case["repetitions"].as_array().unwrap() {
                want.push((case["id"].as_str().unwrap().to_string(), rep.clone()));
            }
        }
        assert_eq!(want.len(), 8, "4 cases x 2 repetitions");
        assert_eq!(intervals.len(), want.len(), "{text}");
        let mut last_start = f64::MIN;
        for (got, (id, rep)) in intervals.iter().zip(&want) {
            assert_eq!(got["tag"], id.as_str(), "{got}");
            let ours: zmqperf::stats::LatencyHistogram =
                serde_json::from_value(rep["latency_histogram"].clone()).unwrap();
            let buckets: Vec<(u64, u64)> = serde_json::from_value(got["buckets"].clone()).unwrap();
            assert_eq!(
                buckets,
                ours.buckets(),
                "{id}: the recorded values and counts"
            );
            // In time order, each as long as its repetition's stream.
            let (start, end) = (
                got["start_s"].as_f64().unwrap(),
                got["end_s"].as_f64().unwrap(),
            );
            assert!(
                start >= started && start >= last_start,
                "{id}: {start}\n{text}"
            );
            let d = &rep["delivered"];
            let span = (d["end_ns"].as_u64().unwrap() - d["start_ns"].as_u64().unwrap()) as f64;
            assert!(((end - start) - span / 1e9).abs() < 0.0015, "{id}: {got}");
            last_start = start;
        }
    });
}
