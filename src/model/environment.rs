//! The machine and software a result comes from: the runner's host, each host of a run
//! across hosts, and their network interfaces.

use serde::{Deserialize, Serialize};

/// The machine and software a result comes from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Environment {
    /// CPU model name (from /proc/cpuinfo).
    pub cpu_model: String,
    /// Logical CPUs available.
    pub cores: u32,
    /// Total memory in bytes.
    pub memory_bytes: u64,
    /// Kernel release (uname -r).
    pub kernel: String,
    /// Operating system name.
    pub os: String,
    /// Host name.
    pub hostname: String,
    /// libzmq version measured.
    pub libzmq_version: String,
    /// The libzmq measured: which file, its capabilities and hash (runs before this field
    /// existed have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libzmq: Option<crate::zmq::LibraryInfo>,
    /// What the user said of the conditions (`zmqperf run --note TEXT`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The network interface of each tcp address the run's cases used, in the order first
    /// used (none for runs on ipc and inproc only, and for runs before this field existed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network: Vec<NetworkInterface>,
    /// zmqperf version.
    pub zmqperf_version: String,
    /// Each host the run's nodes ran on, as that host described itself, in the order the
    /// run met them (the runner's own host first). Empty for a run on one host: the fields
    /// above are then its only host (see [`Environment::host_list`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostEnvironment>,
}

impl Environment {
    /// The run's hosts: [`Environment::hosts`], or when it is empty the one host the fields
    /// of this environment describe (named by its host name).
    pub fn host_list(&self) -> Vec<HostEnvironment> {
        if self.hosts.is_empty() {
            vec![self.own_host()]
        } else {
            self.hosts.clone()
        }
    }

    /// The host a node's `host` names: an entry of [`Environment::hosts`] by name, or for
    /// the runner's host name (or an empty name, as in runs made before hosts existed) the
    /// runner's own host.
    pub fn host(&self, name: &str) -> Option<HostEnvironment> {
        let name = if name.is_empty() {
            self.hostname.as_str()
        } else {
            name
        };
        if let Some(h) = self.hosts.iter().find(|h| h.name == name) {
            return Some(h.clone());
        }
        if name != self.hostname {
            return None;
        }
        Some(
            self.hosts
                .iter()
                .find(|h| h.hostname == name)
                .cloned()
                .unwrap_or_else(|| self.own_host()),
        )
    }

    /// The runner's host as the fields of this environment describe it: its interfaces are
    /// those the run's tcp addresses used.
    fn own_host(&self) -> HostEnvironment {
        let mut nics: Vec<HostNic> = Vec::new();
        for n in &self.network {
            match nics.iter_mut().find(|x| x.name == n.interface) {
                Some(x) => {
                    if !x.addresses.contains(&n.local_address) {
                        x.addresses.push(n.local_address.clone());
                    }
                }
                None => nics.push(HostNic {
                    name: n.interface.clone(),
                    addresses: vec![n.local_address.clone()],
                    loopback: n.loopback,
                    mtu: n.mtu,
                    speed_mbps: n.speed_mbps,
                }),
            }
        }
        HostEnvironment {
            name: self.hostname.clone(),
            hostname: self.hostname.clone(),
            cpu_model: self.cpu_model.clone(),
            cores: self.cores,
            kernel: self.kernel.clone(),
            libzmq_version: self.libzmq_version.clone(),
            libzmq_source: self
                .libzmq
                .as_ref()
                .map(|l| l.source.clone())
                .unwrap_or_default(),
            addr: None,
            nics,
        }
    }
}

/// One host of a run as the node process on it described its machine (host.rs collects
/// it).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct HostEnvironment {
    /// The host's name in the run: its name in the hosts file, or the host name of the
    /// runner's own machine. Nodes name their host with it ([`NodeResult::host`]).
    pub name: String,
    /// The machine's own host name (uname -n).
    pub hostname: String,
    /// CPU model name (from /proc/cpuinfo).
    pub cpu_model: String,
    /// Logical CPUs available.
    pub cores: u32,
    /// Kernel release (uname -r).
    pub kernel: String,
    /// libzmq version the node measured with, e.g. `4.3.5`.
    pub libzmq_version: String,
    /// Which libzmq: `bundled`, `system` or `path` (empty where unknown).
    #[serde(default)]
    pub libzmq_source: String,
    /// The data-plane address the run reached this host at (the hosts file's `addr`),
    /// where one was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
    /// The host's network interfaces that are up, in the order the kernel lists them.
    #[serde(default)]
    pub nics: Vec<HostNic>,
}

/// A network interface of a host.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Default)]
pub struct HostNic {
    /// Interface name, e.g. `lo`, `eth0`.
    pub name: String,
    /// Its IPv4 and IPv6 addresses.
    pub addresses: Vec<String>,
    /// Whether it is a loopback interface (traffic never reaches a wire).
    pub loopback: bool,
    /// Maximum transmission unit, bytes (from /sys/class/net/NAME/mtu).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// Link speed, Mbit/s, where the driver reports one (not for lo and most virtual links).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u64>,
}

impl HostNic {
    /// `eth0 mtu 1500 1000 Mb/s`: the interface without its addresses (what two hosts'
    /// interfaces are compared by).
    pub fn describe(&self) -> String {
        link(&self.name, self.loopback, self.mtu, self.speed_mbps)
    }
}

impl HostEnvironment {
    /// The interface that holds `addr` (the host's data-plane address), if the host has
    /// one and lists it.
    pub fn nic_of(&self, addr: &str) -> Option<&HostNic> {
        let bare = addr.trim_start_matches('[').trim_end_matches(']');
        self.nics
            .iter()
            .find(|n| n.addresses.iter().any(|a| a == bare) || n.name == bare)
    }

    /// The interfaces that reach other hosts (not loopback), described without their
    /// addresses, joined by `, `; `-` when there are none.
    pub fn wired_nics(&self) -> String {
        let all: Vec<String> = self
            .nics
            .iter()
            .filter(|n| !n.loopback)
            .map(HostNic::describe)
            .collect();
        if all.is_empty() {
            "-".to_string()
        } else {
            all.join(", ")
        }
    }
}

/// The network interface that carried a tcp address of a run.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct NetworkInterface {
    /// The host as the run's endpoints named it, e.g. `127.0.0.1`, `10.0.0.5`, `eth0`.
    pub address: String,
    /// This host's address on the interface (the source the kernel picks for a remote
    /// address; the address itself for a local one).
    pub local_address: String,
    /// Interface name, e.g. `lo`, `eth0`.
    pub interface: String,
    /// Whether it is a loopback interface (traffic never reaches a wire).
    pub loopback: bool,
    /// Maximum transmission unit, bytes (from /sys/class/net/NAME/mtu).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u32>,
    /// Link speed, Mbit/s, where the driver reports one (not for lo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u64>,
    /// Kernel driver of the device (none for virtual interfaces such as lo).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
}

impl NetworkInterface {
    /// One line: `lo (loopback) mtu 65536 for 127.0.0.1`.
    pub fn describe(&self) -> String {
        let mut s = link(&self.interface, self.loopback, self.mtu, self.speed_mbps);
        if let Some(d) = &self.driver {
            s.push_str(&format!(" driver {d}"));
        }
        s.push_str(&format!(" for {}", self.address));
        if self.local_address != self.address {
            s.push_str(&format!(" (from {})", self.local_address));
        }
        s
    }
}

/// An interface and its link, `eth0 mtu 1500 1000 Mb/s` (`lo (loopback) mtu 65536`): the
/// one description of an interface, a host's ([`HostNic`]) or a run's
/// ([`NetworkInterface`]). It is a value's canonical form, as an endpoint's is, and stays
/// with the model because `compare` words its notes with it below report/.
fn link(name: &str, loopback: bool, mtu: Option<u32>, speed_mbps: Option<u64>) -> String {
    let mut s = name.to_string();
    if loopback {
        s.push_str(" (loopback)");
    }
    if let Some(m) = mtu {
        s.push_str(&format!(" mtu {m}"));
    }
    if let Some(sp) = speed_mbps {
        s.push_str(&format!(" {sp} Mb/s"));
    }
    s
}
