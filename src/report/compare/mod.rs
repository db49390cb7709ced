//! The text and JSON of `zmqperf compare`: the verdict of a [`crate::compare::Comparison`]
//! written out (`format`), and several runs side by side, a column per host (`by_host`,
//! `compare --by-host`).

mod by_host;
mod format;
mod limits;
#[cfg(test)]
mod tests;

pub use by_host::{by_host, format_by_host, short_cpu, HostColumn, HostTable};
pub use format::{comparison_json, format_comparison};
