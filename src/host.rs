//! The host a node runs on, as it describes itself: its name, CPU, memory, kernel, libzmq
//! and network interfaces (the environment recorded with every run). A node process calls [`host_environment`] on its own machine and sends
//! the result to the runner, which keeps one per host in `Environment::hosts`.

use crate::model::{Environment, HostEnvironment};

/// This machine's host name (uname -n), or an empty string if it cannot be read.
pub fn hostname() -> String {
    // SAFETY: uname fills the struct we own.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    let bytes: Vec<u8> = u
        .nodename
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Reads the machine's description.
pub fn environment() -> Environment {
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    let memory_bytes = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .unwrap_or(0);
    // SAFETY: uname fills the struct we own.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    unsafe { libc::uname(&mut u) };
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Environment {
        cpu_model,
        cores: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        memory_bytes,
        kernel: field(&u.release),
        os: format!("{} {}", field(&u.sysname), field(&u.machine)),
        hostname: field(&u.nodename),
        libzmq_version: crate::libzmq_version(),
        libzmq: Some(crate::zmq::library().clone()),
        note: None,
        network: Vec::new(),
        zmqperf_version: crate::VERSION.to_string(),
        hosts: Vec::new(),
    }
}

/// This machine as host `name` of a run (the name the hosts file gives it; empty for the
/// runner's own machine, which is then named by its host name): host name, CPU model,
/// logical CPUs, kernel release, the libzmq this process measures (version and source) and
/// every network interface with an address. `addr` is left for the runner to fill from the
/// hosts file.
pub fn host_environment(name: &str) -> HostEnvironment {
    let env = environment();
    HostEnvironment {
        name: if name.is_empty() {
            env.hostname.clone()
        } else {
            name.to_string()
        },
        hostname: env.hostname,
        cpu_model: env.cpu_model,
        cores: env.cores,
        kernel: env.kernel,
        libzmq_version: env.libzmq_version,
        libzmq_source: env.libzmq.map(|l| l.source).unwrap_or_default(),
        addr: None,
        nics: crate::net::iface::host_nics(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_describes_itself() {
        let h = host_environment("a");
        assert_eq!(h.name, "a");
        assert_eq!(h.hostname, hostname());
        assert!(!h.hostname.is_empty());
        assert!(h.cores >= 1);
        assert!(!h.kernel.is_empty());
        assert!(h.libzmq_version.starts_with('4'), "{}", h.libzmq_version);
        assert!(
            ["bundled", "system", "path"].contains(&h.libzmq_source.as_str()),
            "{}",
            h.libzmq_source
        );
        assert!(h.nics.iter().any(|n| n.loopback), "{:?}", h.nics);
        assert_eq!(h.addr, None);
        // The runner's own machine is named by its host name.
        assert_eq!(host_environment("").name, h.hostname);
        // It reads back from JSON as it was.
        let json = serde_json::to_string(&h).unwrap();
        assert_eq!(serde_json::from_str::<HostEnvironment>(&json).unwrap(), h);
    }

    #[test]
    fn environment_is_filled() {
        let e = environment();
        assert!(e.cores >= 1);
        assert!(!e.kernel.is_empty());
        assert!(e.libzmq_version.starts_with('4'));
    }
}
