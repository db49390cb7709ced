//! The transports zmqperf measures: a plain value that the results, the store and the
//! endpoints share (it depends on nothing else in the crate).

use serde::{Deserialize, Serialize};
use std::fmt;

/// The transports zmqperf measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Tcp,
    Ipc,
    Inproc,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Tcp => "tcp",
            Transport::Ipc => "ipc",
            Transport::Inproc => "inproc",
        })
    }
}
