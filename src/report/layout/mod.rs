//! What the human-readable reports show, worked out once as text cells: the environment,
//! the findings of `zmqperf diagnose`, one grid per group of cases (columns = message
//! sizes), warnings (and the clocks behind one-way figures), failures, delivery and
//! resource use. The text, Markdown and HTML reporters only lay these cells out.

mod clock;
mod delivery;
mod findings;
mod grid;
mod groups;
mod hosts;
mod run;
mod security;
mod topology;

pub use clock::{clock_note, edge_hides_latency, hides_latency, CLOCKS_DIFFER};
pub use delivery::{delivery, first_middle_hole, loss, loss_extras, loss_places};
pub use findings::{findings, findings_count, triage, triage_text, Shared};
pub use grid::{grids, tables, Grid};
pub use groups::{groups, kind_name, loop_name, Group};
pub use hosts::{host_environments, host_pairs, HOST_PAIRS_NOTE};
pub use run::{environment, failures, resources, warnings, RESOURCE_HEADS};
pub use security::{security_cost, SECURITY_HEADS};
pub use topology::{
    cut_short, edge_lossy, edges, host_cpu, lists_edges, lists_nodes, node_heads,
    node_text_columns, nodes, streams, EDGE_HEADS, STREAM_HEADS,
};
