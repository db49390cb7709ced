//! A host entry as a hosts file, or the `[hosts]` table of a topology or workload file,
//! writes it (docs/hosts.md); the runner resolves it into a launcher (src/runner/hosts.rs).

use serde::{Deserialize, Serialize};

/// How a launcher hands on the words after its own: as they are (`ip netns exec`, `srun`,
/// `docker|podman|kubectl exec -i`), or as one command line for a remote shell (ssh).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Quoting {
    /// Each word is passed as one argument.
    #[default]
    Argv,
    /// The words are joined into one command line, each single-quoted for a POSIX shell.
    Shell,
}

/// One host entry as written: one of `local`, `ssh`, `srun`, `exec` or `launch`, then the
/// data-plane address and where zmqperf is.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostEntry {
    /// The runner's own host: its nodes are children of the runner; `addr` is what they
    /// bind, so that nodes on other hosts reach them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub local: bool,
    /// `user@host` (or a name from ~/.ssh/config): ssh in batch mode with keepalives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssh: Option<String>,
    /// More ssh options, before the destination (`["-i", "KEY", "-p", "2222"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ssh_options: Vec<String>,
    /// A Slurm node name: `srun --overlap` onto it (run zmqperf inside an allocation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub srun: Option<String>,
    /// An argv prefix that runs what follows as is: `["ip", "netns", "exec", "b"]`,
    /// `["kubectl", "exec", "-i", "pod", "--"]`, `["docker", "exec", "-i", "c"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<Vec<String>>,
    /// Any launcher's argv prefix, with `quoting`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<Vec<String>>,
    /// How `launch` passes the words after it: `argv` (default) or `shell` (ssh-like).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quoting: Option<Quoting>,
    /// The address this host's nodes bind and are reached at (an IP or a name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
    /// The zmqperf executable on that host (default: the runner's own path there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zmqperf: Option<String>,
    /// Copy the runner's build to the host when it lacks it (docs/hosts.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ship: bool,
}
