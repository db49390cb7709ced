//! The built-in shapes: the files under topologies/, compiled in, read by the same loader
//! as a user's file. The suite's patterns are these names.

use super::load::load;
use super::Topology;
use crate::error::{Error, Result};

/// Every shipped topology: (name, file text).
pub const FILES: [(&str, &str); 9] = [
    ("reqrep", include_str!("../../topologies/reqrep.toml")),
    (
        "dealerrouter",
        include_str!("../../topologies/dealerrouter.toml"),
    ),
    ("pair-lat", include_str!("../../topologies/pair-lat.toml")),
    ("pushpull", include_str!("../../topologies/pushpull.toml")),
    ("pubsub", include_str!("../../topologies/pubsub.toml")),
    (
        "pubsub-lossy",
        include_str!("../../topologies/pubsub-lossy.toml"),
    ),
    ("pair-thr", include_str!("../../topologies/pair-thr.toml")),
    ("fanin", include_str!("../../topologies/fanin.toml")),
    ("fanout", include_str!("../../topologies/fanout.toml")),
];

/// The patterns of the default suite, latency ones first.
pub const SUITE: [&str; 7] = [
    "reqrep",
    "dealerrouter",
    "pair-lat",
    "pushpull",
    "pubsub",
    "pair-thr",
    "fanin",
];

/// Checks a pattern name, naming the valid ones on error.
pub fn parse_name(s: &str) -> Result<&'static str> {
    FILES
        .iter()
        .map(|(n, _)| *n)
        .find(|n| *n == s)
        .ok_or_else(|| {
            let names: Vec<_> = FILES.iter().map(|(n, _)| *n).collect();
            Error::invalid("pattern", s, format!("use one of {}", names.join(", ")))
        })
}

/// The built-in topology of that name.
pub fn get(name: &str) -> Result<Topology> {
    let name = parse_name(name)?;
    let (_, text) = FILES.iter().find(|(n, _)| *n == name).expect("checked");
    let mut v = load(&format!("topologies/{name}.toml"), text)?;
    Ok(v.remove(0).topology)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::check::check;
    use crate::topology::Role;

    #[test]
    fn every_shipped_file_loads_and_checks_without_warnings() {
        for (name, _) in FILES {
            let t = get(name).unwrap();
            assert_eq!(t.name, name);
            let g = check(name, &t).unwrap();
            assert!(g.warnings.is_empty(), "{name}: {:?}", g.warnings);
            let latency = t.nodes.iter().any(|n| n.role == Role::Ping);
            assert_eq!(
                latency,
                ["reqrep", "dealerrouter", "pair-lat"].contains(&name)
            );
        }
        assert_eq!(get("fanin").unwrap().nodes[1].replicas, 3);
        assert!(parse_name("nope")
            .unwrap_err()
            .to_string()
            .contains("pushpull"));
    }
}
