//! Workload files (TOML or JSON): cases of the built-in patterns and cartesian sweeps of
//! them. Errors name the file and the field or line.

use super::{builtin_case, default_count, is_latency, parse_transport, Scope};
use crate::error::{Error, Result};
use crate::parse::{parse_count, parse_size};
use crate::runner::CaseSpec;
use crate::topology::builtin;
use serde::Deserialize;

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

pub(super) fn in_file(path: &str, what: &str, e: Error) -> Error {
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
    let case = builtin_case(
        pattern,
        transport,
        size,
        count,
        warmup,
        repetitions.unwrap_or(3),
        rate,
    );
    super::fits(&case).map_err(|e| in_file(path, &format!("{at}.transport"), e))?;
    Ok(case)
}

/// The cases of a workload file: its `[[case]]` entries, then its `[[sweep]]`s expanded.
pub(super) fn workload_file(path: &str, text: &str) -> Result<Vec<CaseSpec>> {
    let parsed = parse_workload(path, text)?;
    check_workload(path, &parsed)?;
    let mut plan = listed_cases(path, &parsed)?;
    swept_cases(path, &parsed, &mut plan)?;
    if plan.is_empty() {
        return Err(Error::invalid(
            &format!("workload file {path}"),
            "",
            "lists no [[case]] and no [[sweep]]; see docs/suite.md for the format",
        ));
    }
    Ok(plan)
}

/// The file read as TOML, or as JSON when its name ends in `.json`.
fn parse_workload(path: &str, text: &str) -> Result<FileWorkload> {
    Ok(if path.ends_with(".json") {
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
    })
}

/// Refuses zero repetitions and a sweep with an empty list.
fn check_workload(path: &str, parsed: &FileWorkload) -> Result<()> {
    if parsed.repetitions == Some(0) {
        return Err(in_file(
            path,
            "repetitions",
            Error::invalid("repetitions", "0", "must be at least 1"),
        ));
    }
    for (i, s) in parsed.sweeps.iter().enumerate() {
        for (field, empty) in [
            ("patterns", s.patterns.is_empty()),
            ("transports", s.transports.is_empty()),
            ("sizes", s.sizes.is_empty()),
        ] {
            if empty {
                return Err(in_file(
                    path,
                    &format!("sweep[{i}].{field}"),
                    Error::invalid(
                        field,
                        "[]",
                        "an empty list makes no case; name at least one, or leave the sweep out",
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The `[[case]]` entries, each a different case.
fn listed_cases(path: &str, parsed: &FileWorkload) -> Result<Vec<CaseSpec>> {
    let mut plan: Vec<CaseSpec> = Vec::new();
    let mut ids: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
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
        // Two cases with one id would be two results that compare cannot tell apart.
        if let Some(&j) = ids.get(&spec.id()) {
            return Err(in_file(
                path,
                &at,
                Error::invalid(
                    "case",
                    &spec.id(),
                    format!("the same case as case[{j}]; give it another size, count or rate, or leave one out (use repetitions for more runs of one case)"),
                ),
            ));
        }
        ids.insert(spec.id(), plan.len());
        plan.push(spec);
    }
    Ok(plan)
}

/// Every combination of each `[[sweep]]`'s lists, added to `plan`; an error names the
/// element of the list at fault.
fn swept_cases(path: &str, parsed: &FileWorkload, plan: &mut Vec<CaseSpec>) -> Result<()> {
    let mut counter = crate::progress::Planning::on_stderr();
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
                        counter.planned(plan.len());
                    }
                }
            }
        }
    }
    counter.done();
    Ok(())
}
