//! Reading topology files (TOML or JSON, one schema: schema/topology.schema.json) and
//! expanding their sweeps. Errors name the file, the node and the field.

use super::Topology;
use crate::error::{Error, Result};
use serde_json::Value;

/// The case parameters a sweep may set directly (everything else is `NODE.FIELD`).
pub const PARAMS: [&str; 7] = [
    "size",
    "count",
    "warmup",
    "rate",
    "repetitions",
    "transport",
    "io",
];

/// The value of a `rate` sweep that means no rate: the sources send as fast as their
/// sockets take the messages, so a file can sweep paced against unpaced.
pub const RATE_MAX: &str = "max";

/// One topology of a file after its sweeps are expanded.
#[derive(Debug, Clone)]
pub struct Variant {
    /// The swept values, as `size=64 sub.replicas=10` (empty without a sweep).
    pub label: String,
    /// The topology with those values set.
    pub topology: Topology,
}

/// Parses a file's text: JSON when it ends in `.json` or starts with `{`, else TOML.
pub fn parse(path: &str, text: &str) -> Result<Value> {
    let bad = |at: String, why: String| Error::invalid(&format!("topology file {path}"), &at, why);
    if path.ends_with(".json") || text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| {
            bad(
                format!("line {}, column {}", e.line(), e.column()),
                e.to_string(),
            )
        })
    } else {
        let t: toml::Value = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1))
                .unwrap_or(0);
            bad(format!("line {line}"), e.message().to_string())
        })?;
        serde_json::to_value(t).map_err(|e| bad(String::new(), e.to_string()))
    }
}

/// Whether a parsed file is a topology (it has nodes) rather than a workload of cases.
pub fn is_topology(v: &Value) -> bool {
    v.get("nodes").or_else(|| v.get("node")).is_some()
}

/// The node name at `nodes[i]`, for error paths.
fn node_name(v: &Value, i: usize) -> Option<&str> {
    v.get("nodes")
        .or_else(|| v.get("node"))?
        .get(i)?
        .get("name")?
        .as_str()
}

/// Rewrites `nodes[1].socket.type` as `node 'sub1' (nodes[1]): socket.type`.
fn name_path(v: &Value, path: &str) -> String {
    for key in ["nodes[", "node["] {
        if let Some(rest) = path.strip_prefix(key) {
            if let Some((i, tail)) = rest.split_once(']') {
                if let Ok(i) = i.parse::<usize>() {
                    let tail = tail.trim_start_matches('.');
                    let field = if tail.is_empty() { "(the node)" } else { tail };
                    return match node_name(v, i) {
                        Some(n) => format!("node '{n}' ({key}{i}]): {field}"),
                        None => format!("{key}{i}]: {field}"),
                    };
                }
            }
        }
    }
    path.to_string()
}

/// Turns a parsed value into a topology, naming the file, node and field on error.
pub fn from_value(path: &str, v: &Value) -> Result<Topology> {
    if !is_topology(v) {
        let what = if v.as_object().is_some_and(|o| o.is_empty()) {
            "is empty"
        } else {
            "has no nodes"
        };
        return Err(Error::invalid(
            &format!("topology file {path}"),
            "",
            format!("{what}; add at least a source and a sink as [[node]] tables (see docs/topology.md)"),
        ));
    }
    let text = v.to_string();
    let mut de = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize::<_, Topology>(&mut de).map_err(|e| {
        let at = name_path(v, &e.path().to_string());
        let inner = e.into_inner().to_string();
        let reason = inner
            .split(" at line ")
            .next()
            .unwrap_or(&inner)
            .to_string();
        Error::invalid(&format!("topology file {path}: {at}"), "", reason)
    })
}

/// Sets `key` (a parameter or `NODE.FIELD...`) to `value` in a parsed file.
fn set_path(path: &str, v: &mut Value, key: &str, value: &Value) -> Result<()> {
    let bad = |why: String| Error::invalid(&format!("topology file {path}: sweep"), key, why);
    if PARAMS.contains(&key) {
        let params = v
            .as_object_mut()
            .ok_or_else(|| bad("the file is not a table".into()))?
            .entry("params")
            .or_insert_with(|| Value::Object(Default::default()));
        let params = params
            .as_object_mut()
            .ok_or_else(|| bad("params is not a table".into()))?;
        if key == "rate" && value.as_str() == Some(RATE_MAX) {
            // As fast as the socket takes them: no rate at all (closed loop).
            params.remove(key);
        } else {
            params.insert(key.to_string(), value.clone());
        }
        return Ok(());
    }
    let Some((node, field)) = key.split_once('.') else {
        return Err(bad(format!(
            "not a parameter; use one of {} or NODE.FIELD (e.g. sub.replicas, pub.socket.sndhwm)",
            PARAMS.join(", ")
        )));
    };
    let list = if v.get("nodes").is_some() {
        "nodes"
    } else {
        "node"
    };
    let nodes = v
        .get_mut(list)
        .ok_or_else(|| bad("the file has no nodes".into()))?;
    let entry = nodes
        .as_array_mut()
        .and_then(|a| {
            a.iter_mut()
                .find(|n| n.get("name").and_then(Value::as_str) == Some(node))
        })
        .ok_or_else(|| bad(format!("no node is named '{node}'")))?;
    let mut at = entry;
    let parts: Vec<&str> = field.split('.').collect();
    for (i, part) in parts.iter().enumerate() {
        let obj = at
            .as_object_mut()
            .ok_or_else(|| bad(format!("'{part}' is inside a value that is not a table")))?;
        if i + 1 == parts.len() {
            obj.insert(part.to_string(), value.clone());
            return Ok(());
        }
        at = obj
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Default::default()));
    }
    Ok(())
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Reads a topology file: parses it, expands its sweeps (cartesian, in the order of the
/// sweep's keys), and checks the shape of every variant.
pub fn load(path: &str, text: &str) -> Result<Vec<Variant>> {
    let mut v = parse(path, text)?;
    let sweep = v
        .as_object_mut()
        .and_then(|o| o.remove("sweep"))
        .unwrap_or(Value::Null);
    let dims: Vec<(String, Vec<Value>)> = match &sweep {
        Value::Null => Vec::new(),
        Value::Object(m) => m
            .iter()
            .map(|(k, vals)| match vals {
                Value::Array(a) if !a.is_empty() => Ok((k.clone(), a.clone())),
                _ => Err(Error::invalid(
                    &format!("topology file {path}: sweep.{k}"),
                    &show(vals),
                    "give a non-empty list of values, e.g. size = [64, 1024]",
                )),
            })
            .collect::<Result<_>>()?,
        other => {
            return Err(Error::invalid(
                &format!("topology file {path}: sweep"),
                &show(other),
                "write a table of parameter = [values], e.g. [sweep] size = [64, 1024]",
            ))
        }
    };
    let mut out = Vec::new();
    let total: usize = dims.iter().map(|(_, vals)| vals.len()).product();
    for n in 0..total {
        let mut inst = v.clone();
        let mut label = Vec::new();
        let mut rest = n;
        for (key, vals) in dims.iter().rev() {
            let val = &vals[rest % vals.len()];
            rest /= vals.len();
            set_path(path, &mut inst, key, val)?;
            label.push(format!("{key}={}", show(val)));
        }
        label.reverse();
        let topology = from_value(path, &inst)?;
        out.push(Variant {
            label: label.join(" "),
            topology,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTMP: &str = r#"{"nodes": [
      {"name": "pub", "role": "source", "socket": {"type": "PUB", "bind": ["tcp://127.0.0.1:*"]}},
      {"name": "sub1", "role": "sink", "socket": {"type": "SUB", "connect": ["pub"]}},
      {"name": "sub2", "role": "sink", "socket": {"type": "SUB", "connect": ["pub"]}}
    ]}"#;

    #[test]
    fn ptmp_socket_objects_load_verbatim() {
        let v = load("t.json", PTMP).unwrap();
        assert_eq!(v.len(), 1);
        let t = &v[0].topology;
        assert_eq!(t.nodes.len(), 3);
        let s = t.nodes[1].socket.as_ref().unwrap();
        assert_eq!(s.kind, "SUB");
        assert_eq!(s.connect, vec!["pub".to_string()]);
    }

    #[test]
    fn a_rate_sweep_of_max_means_unpaced() {
        let text = r#"
[params]
rate = 5
[sweep]
rate = ["max", 1000]
[[node]]
name = "a"
role = "source"
socket = { type = "PUSH", bind = ["auto"] }
[[node]]
name = "b"
role = "sink"
socket = { type = "PULL", connect = ["a"] }
"#;
        let v = load("r.toml", text).unwrap();
        let rates: Vec<Option<f64>> = v.iter().map(|x| x.topology.params.rate).collect();
        assert_eq!(rates, [None, Some(1000.0)]);
        assert_eq!(v[0].label, "rate=max");
        let bad = text.replace(r#"["max", 1000]"#, r#"["fast"]"#);
        assert!(load("r.toml", &bad).is_err());
    }

    #[test]
    fn toml_sweeps_expand_over_params_and_node_fields() {
        let text = r#"
name = "fan"
[params]
count = 1000
[sweep]
size = [64, "1KiB"]
"sub.replicas" = [1, 2, 3]
"pub.socket.sndhwm" = [10]
[[node]]
name = "pub"
role = "source"
socket = { type = "PUB", bind = ["auto"] }
[[node]]
name = "sub"
role = "sink"
socket = { type = "SUB", connect = ["pub"], subscribe = [""] }
"#;
        let v = load("f.toml", text).unwrap();
        assert_eq!(v.len(), 6);
        assert!(v
            .iter()
            .all(|x| x.topology.nodes[0].socket.as_ref().unwrap().options.sndhwm == Some(10)));
        let reps: Vec<u32> = v.iter().map(|x| x.topology.nodes[1].replicas).collect();
        assert_eq!(reps, vec![1, 2, 3, 1, 2, 3]);
        assert_eq!(v[5].label, "pub.socket.sndhwm=10 size=1KiB sub.replicas=3");
    }

    #[test]
    fn errors_name_the_file_the_node_and_the_field() {
        let bad_opt = PTMP.replace(
            r#""type": "SUB", "connect""#,
            r#""type": "SUB", "hwm": 5, "connect""#,
        );
        let e = load("t.json", &bad_opt).unwrap_err().to_string();
        assert!(
            e.contains("t.json") && e.contains("node 'sub1'") && e.contains("hwm"),
            "{e}"
        );
        let e = load("t.json", &PTMP.replace("\"sink\"", "\"sinc\""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("node 'sub1'") && e.contains("role"), "{e}");
        let e = load(
            "t.toml",
            "[sweep]\nsize = []\n[[node]]\nname='a'\nrole='sink'\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("sweep.size"), "{e}");
        let e = load(
            "t.toml",
            "[sweep]\n'nobody.replicas' = [2]\n[[node]]\nname='a'\nrole='sink'\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no node is named 'nobody'"), "{e}");
        let e = load("t.toml", "[[node]]\nname = \n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.toml") && e.contains("line 2"), "{e}");
    }
}
