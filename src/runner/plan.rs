//! Plans: the default suite, the options of `zmqperf run`, and workload files (TOML or
//! JSON) that list cases and cartesian sweeps.

use super::CaseSpec;
use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::parse::{parse_count, parse_size};
use crate::topology::builtin;
use crate::topology::load::{self as topo_load, PARAMS};
use crate::topology::{Role, Topology};
use serde::Deserialize;

/// How much to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One size, two repetitions: a smoke test in seconds.
    Quick,
    /// The default suite: 64 B and 1 KiB, three repetitions, about a minute.
    Default,
    /// The whole sweep: 2 B to 64 KiB in powers of two.
    Full,
}

/// What the options of `zmqperf run` select (None: the scope's default).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Patterns: names of built-in topologies.
    pub patterns: Option<Vec<&'static str>>,
    /// Transports.
    pub transports: Option<Vec<Transport>>,
    /// Message sizes.
    pub sizes: Option<Vec<usize>>,
    /// Round trips or messages per repetition.
    pub count: Option<u64>,
    /// Warm-up per repetition.
    pub warmup: Option<u64>,
    /// Repetitions.
    pub repetitions: Option<u32>,
    /// Open-loop rates for the throughput patterns.
    pub rates: Option<Vec<f64>>,
}

/// The default count for a kind and size: enough for a steady figure, short on 2 cores.
pub fn default_count(latency: bool, size: usize, scope: Scope) -> u64 {
    let n: u64 = match (latency, size) {
        (true, s) if s <= 4096 => 2_000,
        (true, s) if s <= 65_536 => 1_000,
        (true, _) => 100,
        (false, s) if s <= 256 => 200_000,
        (false, s) if s <= 4096 => 100_000,
        (false, s) if s <= 65_536 => 10_000,
        (false, _) => 500,
    };
    if scope == Scope::Quick {
        n / 2
    } else {
        n
    }
}

fn is_latency(t: &Topology) -> bool {
    t.nodes.iter().any(|n| n.role == Role::Ping)
}

/// A case of a built-in topology.
#[allow(clippy::too_many_arguments)]
fn builtin_case(
    name: &str,
    transport: Transport,
    size: usize,
    count: u64,
    warmup: u64,
    repetitions: u32,
    rate: Option<f64>,
) -> CaseSpec {
    CaseSpec {
        topology: builtin::get(name).expect("built-in topologies load"),
        origin: format!("built-in {name}"),
        label: String::new(),
        transport,
        size,
        count,
        warmup,
        repetitions,
        rate,
    }
}

/// The plan for `zmqperf run` without a workload file.
pub fn from_selection(scope: Scope, sel: &Selection) -> Vec<CaseSpec> {
    let patterns = sel
        .patterns
        .clone()
        .unwrap_or_else(|| builtin::SUITE.to_vec());
    let transports = sel
        .transports
        .clone()
        .unwrap_or_else(|| vec![Transport::Inproc, Transport::Ipc, Transport::Tcp]);
    let sizes = sel.sizes.clone().unwrap_or_else(|| match scope {
        Scope::Quick => vec![64],
        Scope::Default => vec![64, 1024],
        Scope::Full => (1..=16).map(|p| 1usize << p).collect(),
    });
    let reps = sel
        .repetitions
        .unwrap_or(if scope == Scope::Quick { 2 } else { 3 });
    let mut plan = Vec::new();
    for &pattern in &patterns {
        let latency = is_latency(&builtin::get(pattern).expect("built-in topologies load"));
        for &transport in &transports {
            for &size in &sizes {
                let rates: Vec<Option<f64>> = match (&sel.rates, latency) {
                    (Some(r), false) => r.iter().map(|x| Some(*x)).collect(),
                    _ => vec![None],
                };
                for rate in rates {
                    let count = sel
                        .count
                        .unwrap_or_else(|| default_count(latency, size, scope));
                    plan.push(builtin_case(
                        pattern,
                        transport,
                        size,
                        count,
                        sel.warmup.unwrap_or((count / 10).clamp(1, 1000)),
                        reps,
                        rate,
                    ));
                }
            }
        }
    }
    plan
}

/// A number or a string with units, as workload files may write sizes and counts.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum NumOrText {
    Num(f64),
    Text(String),
}

impl NumOrText {
    fn text(&self) -> String {
        match self {
            NumOrText::Num(n) if n.fract() == 0.0 => format!("{}", *n as i64),
            NumOrText::Num(n) => n.to_string(),
            NumOrText::Text(s) => s.clone(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCase {
    pattern: String,
    transport: String,
    size: NumOrText,
    count: Option<NumOrText>,
    warmup: Option<NumOrText>,
    repetitions: Option<u32>,
    rate: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSweep {
    patterns: Vec<String>,
    transports: Vec<String>,
    sizes: Vec<NumOrText>,
    #[serde(default)]
    rates: Vec<f64>,
    count: Option<NumOrText>,
    warmup: Option<NumOrText>,
    repetitions: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileWorkload {
    repetitions: Option<u32>,
    #[serde(default, rename = "case")]
    cases: Vec<FileCase>,
    #[serde(default, rename = "sweep")]
    sweeps: Vec<FileSweep>,
}

/// Parses a transport name.
pub fn parse_transport(s: &str) -> Result<Transport> {
    match s {
        "tcp" => Ok(Transport::Tcp),
        "ipc" => Ok(Transport::Ipc),
        "inproc" => Ok(Transport::Inproc),
        _ => Err(Error::invalid("transport", s, "use tcp, ipc or inproc")),
    }
}

fn in_file(path: &str, what: &str, e: Error) -> Error {
    Error::InvalidValue {
        what: format!("{path}: {what}"),
        value: match &e {
            Error::InvalidValue { value, .. } => value.clone(),
            _ => String::new(),
        },
        reason: match e {
            Error::InvalidValue { reason, .. } => reason,
            other => other.to_string(),
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn file_case(
    path: &str,
    at: &str,
    pattern: &str,
    transport: &str,
    size: &NumOrText,
    count: Option<&NumOrText>,
    warmup: Option<&NumOrText>,
    repetitions: Option<u32>,
    rate: Option<f64>,
) -> Result<CaseSpec> {
    let pattern =
        builtin::parse_name(pattern).map_err(|e| in_file(path, &format!("{at}.pattern"), e))?;
    let latency = is_latency(&builtin::get(pattern)?);
    let transport =
        parse_transport(transport).map_err(|e| in_file(path, &format!("{at}.transport"), e))?;
    let size =
        parse_size("size", &size.text()).map_err(|e| in_file(path, &format!("{at}.size"), e))?;
    let count = match count {
        Some(c) => {
            parse_count("count", &c.text()).map_err(|e| in_file(path, &format!("{at}.count"), e))?
        }
        None => default_count(latency, size, Scope::Default),
    };
    let warmup = match warmup {
        Some(w) if w.text() == "0" => 0,
        Some(w) => parse_count("warmup", &w.text())
            .map_err(|e| in_file(path, &format!("{at}.warmup"), e))?,
        None => (count / 10).clamp(1, 1000),
    };
    if let Some(r) = rate {
        if !(r.is_finite() && r > 0.0) {
            return Err(in_file(
                path,
                &format!("{at}.rate"),
                Error::invalid("rate", &r.to_string(), "must be above 0 msg/s"),
            ));
        }
        if latency {
            return Err(in_file(
                path,
                &format!("{at}.rate"),
                Error::invalid(
                    "rate",
                    &r.to_string(),
                    "a rate applies to the one-way patterns (pushpull, pubsub, pair-thr) only",
                ),
            ));
        }
    }
    if repetitions == Some(0) {
        return Err(in_file(
            path,
            &format!("{at}.repetitions"),
            Error::invalid("repetitions", "0", "must be at least 1"),
        ));
    }
    Ok(builtin_case(
        pattern,
        transport,
        size,
        count,
        warmup,
        repetitions.unwrap_or(3),
        rate,
    ))
}

/// Reads a workload file or a topology file (`.toml` or `.json`); errors name the file and
/// the field or line. `sel` overrides a topology file's own parameters.
pub fn from_file(path: &str, text: &str) -> Result<Vec<CaseSpec>> {
    from_file_with(path, text, &Selection::default())
}

/// [`from_file`] with the command line's overrides for topology files.
pub fn from_file_with(path: &str, text: &str, sel: &Selection) -> Result<Vec<CaseSpec>> {
    if topo_load::is_topology(&topo_load::parse(path, text)?) {
        return from_topology_file(path, text, sel);
    }
    workload_file(path, text)
}

fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The cases of a topology file: one per sweep variant, its parameters from the file, the
/// command line, then the defaults.
fn from_topology_file(path: &str, text: &str, sel: &Selection) -> Result<Vec<CaseSpec>> {
    let mut plan = Vec::new();
    for v in topo_load::load(path, text)? {
        // Every mistake is found before any socket opens.
        crate::topology::check::check(path, &v.topology)?;
        let t = v.topology;
        let p = &t.params;
        let at = |f: &str| format!("topology file {path}: params.{f}");
        // The command line's values replace the file's, and each list is swept.
        let transports = match (&sel.transports, &p.transport) {
            (Some(ts), _) => ts.clone(),
            (None, Some(s)) => {
                vec![parse_transport(s).map_err(|e| in_file(path, "params.transport", e))?]
            }
            (None, None) => vec![literal_transport(&t).unwrap_or(Transport::Tcp)],
        };
        let sizes = match (&sel.sizes, &p.size) {
            (Some(s), _) => s.clone(),
            (None, Some(v)) => vec![parse_size(&at("size"), &json_text(v))?],
            (None, None) => vec![64],
        };
        let rates: Vec<Option<f64>> = match &sel.rates {
            Some(r) => r.iter().map(|x| Some(*x)).collect(),
            None => vec![p.rate],
        };
        let latency = is_latency(&t);
        let label: Vec<&str> = v
            .label
            .split(' ')
            .filter(|kv| {
                let k = kv.split('=').next().unwrap_or("");
                !k.is_empty()
                    && !["size", "transport", "rate"].contains(&k)
                    && (k.contains('.') || PARAMS.contains(&k))
            })
            .collect();
        let name = if t.name.is_empty() {
            std::path::Path::new(path)
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_else(|| "topology".into())
        } else {
            t.name.clone()
        };
        let mut topology = t.clone();
        topology.name = name;
        for &transport in &transports {
            for &size in &sizes {
                for &rate in &rates {
                    let count = match (sel.count, &p.count) {
                        (Some(c), _) => c,
                        (None, Some(v)) => parse_count(&at("count"), &json_text(v))?,
                        (None, None) => default_count(latency, size, Scope::Default),
                    };
                    let warmup = match (sel.warmup, &p.warmup) {
                        (Some(w), _) => w,
                        (None, Some(v)) if json_text(v) == "0" => 0,
                        (None, Some(v)) => parse_count(&at("warmup"), &json_text(v))?,
                        (None, None) => (count / 10).clamp(1, 1000),
                    };
                    let case = CaseSpec {
                        topology: topology.clone(),
                        origin: path.to_string(),
                        label: label.join(" "),
                        transport,
                        size,
                        count,
                        warmup,
                        repetitions: sel.repetitions.or(p.repetitions).unwrap_or(3),
                        rate: rate.filter(|_| !latency),
                    };
                    // A file's sweep and the command line can name the same case twice.
                    if !plan.iter().any(|c: &CaseSpec| c.id() == case.id()) {
                        plan.push(case);
                    }
                }
            }
        }
    }
    Ok(plan)
}

/// The transport of a topology's first literal endpoint, if it has one.
fn literal_transport(t: &Topology) -> Option<Transport> {
    t.nodes
        .iter()
        .flat_map(|n| n.all_sockets())
        .flat_map(|s| s.bind.iter().chain(&s.connect))
        .find_map(|e| {
            let scheme = e.split_once("://")?.0;
            parse_transport(scheme).ok()
        })
}

fn workload_file(path: &str, text: &str) -> Result<Vec<CaseSpec>> {
    let parsed: FileWorkload = if path.ends_with(".json") {
        serde_json::from_str(text).map_err(|e| {
            Error::invalid(
                &format!("workload file {path}"),
                &format!("line {}, column {}", e.line(), e.column()),
                e.to_string(),
            )
        })?
    } else {
        toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1))
                .unwrap_or(0);
            Error::invalid(
                &format!("workload file {path}"),
                &format!("line {line}"),
                e.message().to_string(),
            )
        })?
    };
    let mut plan = Vec::new();
    for (i, c) in parsed.cases.iter().enumerate() {
        let at = format!("case[{i}]");
        let mut spec = file_case(
            path,
            &at,
            &c.pattern,
            &c.transport,
            &c.size,
            c.count.as_ref(),
            c.warmup.as_ref(),
            c.repetitions,
            c.rate,
        )?;
        if c.repetitions.is_none() {
            spec.repetitions = parsed.repetitions.unwrap_or(3);
        }
        plan.push(spec);
    }
    for (i, s) in parsed.sweeps.iter().enumerate() {
        let rates: Vec<Option<f64>> = if s.rates.is_empty() {
            vec![None]
        } else {
            s.rates.iter().map(|r| Some(*r)).collect()
        };
        for (pi, p) in s.patterns.iter().enumerate() {
            for (ti, t) in s.transports.iter().enumerate() {
                for (si, size) in s.sizes.iter().enumerate() {
                    for rate in &rates {
                        let at = format!("sweep[{i}]");
                        let rate = rate
                            .filter(|_| !builtin::get(p).map(|t| is_latency(&t)).unwrap_or(false));
                        let spec = file_case(
                            path,
                            &at,
                            p,
                            t,
                            size,
                            s.count.as_ref(),
                            s.warmup.as_ref(),
                            s.repetitions.or(parsed.repetitions),
                            rate,
                        )
                        .map_err(|e| match e {
                            Error::InvalidValue {
                                what,
                                value,
                                reason,
                            } => Error::InvalidValue {
                                what: what
                                    .replace(".pattern", &format!(".patterns[{pi}]"))
                                    .replace(".transport", &format!(".transports[{ti}]"))
                                    .replace(".size", &format!(".sizes[{si}]")),
                                value,
                                reason,
                            },
                            other => other,
                        })?;
                        plan.push(spec);
                    }
                }
            }
        }
    }
    if plan.is_empty() {
        return Err(Error::invalid(
            &format!("workload file {path}"),
            "",
            "lists no [[case]] and no [[sweep]]; see docs/suite.md for the format",
        ));
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_suite_covers_every_pattern_and_transport() {
        let p = from_selection(Scope::Default, &Selection::default());
        assert_eq!(p.len(), 7 * 3 * 2);
        assert!(p.iter().all(|c| c.repetitions == 3));
        let full = from_selection(Scope::Full, &Selection::default());
        assert_eq!(full.len(), 7 * 3 * 16);
        assert_eq!(full.iter().map(|c| c.size).min(), Some(2));
        assert_eq!(full.iter().map(|c| c.size).max(), Some(65_536));
    }

    #[test]
    fn toml_sweep_is_cartesian() {
        let text = r#"
repetitions = 2
[[sweep]]
patterns = ["pushpull", "pubsub"]
transports = ["ipc", "tcp"]
sizes = [64, "1KiB"]
rates = [1000, 5000]
count = "10k"

[[case]]
pattern = "reqrep"
transport = "inproc"
size = 32
"#;
        let p = from_file("w.toml", text).unwrap();
        assert_eq!(p.len(), 1 + 2 * 2 * 2 * 2);
        assert_eq!(p[0].pattern(), "reqrep");
        assert!(p[1..]
            .iter()
            .all(|c| c.count == 10_000 && c.repetitions == 2 && c.rate.is_some()));
        assert!(p.iter().any(|c| c.size == 1024));
    }

    #[test]
    fn json_workloads_too() {
        let p = from_file(
            "w.json",
            r#"{"case": [{"pattern": "pair-lat", "transport": "tcp", "size": 100}]}"#,
        )
        .unwrap();
        assert_eq!(p[0].pattern(), "pair-lat");
    }

    #[test]
    fn bad_files_name_the_field() {
        let cases = [
            ("[[case]]\npattern = \"nope\"\ntransport = \"tcp\"\nsize = 64\n", "case[0].pattern"),
            ("[[case]]\npattern = \"reqrep\"\ntransport = \"udp\"\nsize = 64\n", "case[0].transport"),
            ("[[case]]\npattern = \"reqrep\"\ntransport = \"tcp\"\nsize = -64\n", "case[0].size"),
            ("[[case]]\npattern = \"reqrep\"\ntransport = \"tcp\"\nsize = 64\ncolour = \"red\"\n", "line"),
            ("[[sweep]]\npatterns = [\"pushpull\"]\ntransports = [\"tcp\", \"bogus\"]\nsizes = [64]\n", "sweep[0].transports[1]"),
            ("", "lists no"),
        ];
        for (text, want) in cases {
            let e = from_file("bad.toml", text).unwrap_err().to_string();
            assert!(e.contains("bad.toml"), "{e}");
            assert!(e.contains(want), "want '{want}' in: {e}");
        }
        let e = from_file("bad.json", "{\"case\": [ {\"pattern\": 1} ]}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.json") && e.contains("line 1"), "{e}");
    }
}
