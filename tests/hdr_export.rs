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
