//! Which network interface carries a tcp address, and what it is: name, MTU, link speed,
//! driver, loopback or not. A local address is matched against the host's own addresses
//! (getifaddrs); any other is first given to the kernel's routing (a UDP socket connected
//! to it, which sends nothing, reports the source address the kernel chose).

use crate::model::{HostNic, NetworkInterface};
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};
use std::sync::mpsc;
use std::time::Duration;

/// How long a host name may take to resolve before it is left out.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(2);

/// One address of one interface of this host.
#[derive(Debug, Clone)]
struct Local {
    name: String,
    addr: IpAddr,
    loopback: bool,
}

/// Every address of every interface that is up (IPv4 and IPv6).
fn local_addresses() -> Vec<Local> {
    let mut out = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return out;
    }
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        if ifa.ifa_addr.is_null() || ifa.ifa_name.is_null() {
            continue;
        }
        // SAFETY: ifa_addr points to a sockaddr whose family says which struct it is.
        let addr = unsafe {
            match i32::from((*ifa.ifa_addr).sa_family) {
                libc::AF_INET => {
                    let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    IpAddr::V4(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)))
                }
                libc::AF_INET6 => {
                    let sin6 = &*(ifa.ifa_addr as *const libc::sockaddr_in6);
                    IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr))
                }
                _ => continue,
            }
        };
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { CStr::from_ptr(ifa.ifa_name) }
            .to_string_lossy()
            .into_owned();
        out.push(Local {
            name,
            addr,
            loopback: ifa.ifa_flags & libc::IFF_LOOPBACK as libc::c_uint != 0,
        });
    }
    // SAFETY: `head` came from a successful getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    out
}

/// The local address the kernel would send from to reach `to` (no packet leaves).
fn route_source(to: IpAddr) -> Option<IpAddr> {
    let any: IpAddr = match to {
        IpAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        IpAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let s = UdpSocket::bind(SocketAddr::new(any, 0)).ok()?;
    s.connect(SocketAddr::new(to, 9)).ok()?;
    Some(s.local_addr().ok()?.ip())
}

/// A host name's first address, or None if it does not resolve within the timeout.
fn resolve(host: &str) -> Option<IpAddr> {
    let (tx, rx) = mpsc::channel();
    let h = host.to_string();
    std::thread::spawn(move || {
        let ip = (h.as_str(), 0)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .map(|a| a.ip());
        let _ = tx.send(ip);
    });
    rx.recv_timeout(RESOLVE_TIMEOUT).ok().flatten()
}

fn sys(name: &str, file: &str) -> Option<String> {
    std::fs::read_to_string(format!("/sys/class/net/{name}/{file}"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The interface's facts from sysfs: MTU, speed (absent or -1 for lo and some virtual
/// links) and driver (absent for virtual interfaces).
fn describe(address: &str, local: &Local) -> NetworkInterface {
    let name = &local.name;
    let driver = std::fs::read_link(format!("/sys/class/net/{name}/device/driver"))
        .ok()
        .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()));
    NetworkInterface {
        address: address.to_string(),
        local_address: local.addr.to_string(),
        interface: name.clone(),
        loopback: local.loopback,
        mtu: sys(name, "mtu")
            .and_then(|s| s.parse().ok())
            .filter(|&m| m > 0),
        speed_mbps: sys(name, "speed")
            .and_then(|s| s.parse::<i64>().ok())
            .filter(|&s| s > 0)
            .map(|s| s as u64),
        driver,
    }
}

/// The interface that carries traffic to or from `host` (an address, a host name or an
/// interface name as libzmq accepts in tcp://HOST:PORT), or None if it cannot be told.
pub fn lookup(host: &str) -> Option<NetworkInterface> {
    let locals = local_addresses();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let ip = match bare.parse::<IpAddr>() {
        Ok(ip) => ip,
        Err(_) => {
            // libzmq binds to an interface name too (tcp://eth0:5555).
            if let Some(l) = locals
                .iter()
                .find(|l| l.name == bare && l.addr.is_ipv4())
                .or_else(|| locals.iter().find(|l| l.name == bare))
            {
                return Some(describe(host, l));
            }
            resolve(bare)?
        }
    };
    let mine = |ip: IpAddr| locals.iter().find(|l| l.addr == ip);
    let local = match mine(ip) {
        Some(l) => l,
        None => mine(route_source(ip)?)?,
    };
    Some(describe(host, local))
}

/// The host part of a tcp endpoint, as the run reaches it: a wildcard bind (`*`,
/// `0.0.0.0`, `[::]`) is reached on the loopback address, as the runner connects to it.
pub fn tcp_host(endpoint: &str) -> Option<String> {
    let rest = endpoint.strip_prefix("tcp://")?;
    // A source address (tcp://SRC;DEST:PORT) is the connect's own side: keep the peer.
    let rest = rest.rsplit(';').next().unwrap_or(rest);
    let (host, _port) = rest.rsplit_once(':')?;
    Some(match host {
        "*" | "0.0.0.0" => "127.0.0.1".to_string(),
        "[::]" | "[*]" => "::1".to_string(),
        h => h.to_string(),
    })
}

/// Every interface of this host that has an address, with its addresses (IPv6 link-local
/// ones left out: every interface has one), MTU and link speed, in the order the kernel
/// lists them.
pub fn host_nics() -> Vec<HostNic> {
    let mut out: Vec<HostNic> = Vec::new();
    for l in local_addresses() {
        let link_local = matches!(l.addr, IpAddr::V6(v6) if (v6.segments()[0] & 0xffc0) == 0xfe80);
        let i = match out.iter().position(|n| n.name == l.name) {
            Some(i) => i,
            None => {
                let d = describe(&l.addr.to_string(), &l);
                out.push(HostNic {
                    name: l.name.clone(),
                    addresses: Vec::new(),
                    loopback: l.loopback,
                    mtu: d.mtu,
                    speed_mbps: d.speed_mbps,
                });
                out.len() - 1
            }
        };
        let a = l.addr.to_string();
        if !link_local && !out[i].addresses.contains(&a) {
            out[i].addresses.push(a);
        }
    }
    out
}

/// The interfaces of a set of tcp hosts, one entry per host, in host order; hosts that
/// cannot be placed on an interface are left out.
pub fn interfaces<'a>(hosts: impl IntoIterator<Item = &'a str>) -> Vec<NetworkInterface> {
    let mut seen: BTreeMap<String, ()> = BTreeMap::new();
    let mut out = Vec::new();
    for h in hosts {
        if seen.insert(h.to_string(), ()).is_some() {
            continue;
        }
        if let Some(i) = lookup(h) {
            out.push(i);
        }
    }
    out
}

/// The environment variable that names the interface multicast endpoints of `auto` leave
/// by (a name, such as `eth0`).
pub const MULTICAST_IFACE_ENV: &str = "ZMQPERF_MULTICAST_IFACE";

/// The interface an `auto` multicast endpoint leaves by, as its IPv4 address (OpenPGM
/// takes an address where it refuses some names, `lo` among them):
/// `ZMQPERF_MULTICAST_IFACE` when set (a name or an address), else the first interface
/// that is up, has multicast on and an IPv4 address (one that is not the loopback first),
/// else `127.0.0.1` (whose multicast a bind error then names the fix of).
pub fn multicast_interface() -> String {
    if let Ok(name) = std::env::var(MULTICAST_IFACE_ENV) {
        if !name.is_empty() {
            return name;
        }
    }
    let mut found: Vec<(bool, Ipv4Addr)> = Vec::new();
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list freed below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return "127.0.0.1".into();
    }
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a node of the list getifaddrs returned, not yet freed.
        let ifa = unsafe { &*cur };
        cur = ifa.ifa_next;
        let flags = ifa.ifa_flags as i32;
        let wanted = libc::IFF_UP | libc::IFF_MULTICAST;
        // SAFETY: a non-null ifa_addr points to a sockaddr, an IPv4 one for AF_INET.
        let v4 = (!ifa.ifa_addr.is_null()
            && i32::from(unsafe { (*ifa.ifa_addr).sa_family }) == libc::AF_INET)
            .then(|| unsafe { &*(ifa.ifa_addr as *const libc::sockaddr_in) })
            .map(|sin| Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)));
        if let Some(addr) = v4.filter(|_| flags & wanted == wanted) {
            found.push((flags & libc::IFF_LOOPBACK != 0, addr));
        }
    }
    // SAFETY: `head` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    found.sort_by_key(|(loopback, _)| *loopback);
    found
        .into_iter()
        .next()
        .map_or_else(|| "127.0.0.1".into(), |(_, addr)| addr.to_string())
}

/// A multicast endpoint as this host connects to it: the interface before `;` is the
/// binding host's when the runner copied its endpoint here (`epgm://10.77.0.1;239...`), so
/// an address that is not this host's becomes this host's own multicast interface. Any
/// other endpoint, or an interface of this host, stays as it is.
pub fn local_multicast(endpoint: &str) -> String {
    let Some((scheme, rest)) = endpoint.split_once("://") else {
        return endpoint.to_string();
    };
    let multicast = matches!(scheme, "pgm" | "epgm" | "norm");
    let Some((iface, group)) = rest.split_once(';').filter(|_| multicast) else {
        return endpoint.to_string();
    };
    let Ok(addr) = iface.parse::<IpAddr>() else {
        return endpoint.to_string();
    };
    if local_addresses().iter().any(|l| l.addr == addr) {
        return endpoint.to_string();
    }
    format!("{scheme}://{};{group}", multicast_interface())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_lo_with_its_mtu() {
        let i = lookup("127.0.0.1").expect("127.0.0.1 is on an interface");
        assert_eq!(i.interface, "lo");
        assert!(i.loopback);
        assert_eq!(i.address, "127.0.0.1");
        assert_eq!(i.local_address, "127.0.0.1");
        let sysfs: u32 = std::fs::read_to_string("/sys/class/net/lo/mtu")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(sysfs > 0);
        assert_eq!(i.mtu, Some(sysfs));
        assert_eq!(i.driver, None, "lo is virtual: no device driver");
    }

    #[test]
    fn names_and_routes_reach_the_same_interface() {
        // The interface name and a loopback address that is not itself assigned
        // (127.0.0.2 is routed to lo by the kernel's local table).
        assert_eq!(lookup("lo").unwrap().interface, "lo");
        assert_eq!(lookup("localhost").unwrap().interface, "lo");
        let routed = lookup("127.0.0.2").unwrap();
        assert_eq!(routed.interface, "lo");
        assert!(routed.loopback);
        assert!(lookup("no-such-interface.invalid").is_none());
    }

    #[test]
    fn hosts_of_endpoints() {
        assert_eq!(
            tcp_host("tcp://127.0.0.1:5555").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(tcp_host("tcp://*:5555").as_deref(), Some("127.0.0.1"));
        assert_eq!(tcp_host("tcp://[::1]:*").as_deref(), Some("[::1]"));
        assert_eq!(tcp_host("tcp://[::]:5").as_deref(), Some("::1"));
        assert_eq!(
            tcp_host("tcp://192.0.2.2;10.0.0.5:5555").as_deref(),
            Some("10.0.0.5")
        );
        assert_eq!(tcp_host("ipc:///tmp/x"), None);
        assert_eq!(tcp_host("inproc://x"), None);
    }

    #[test]
    fn this_host_lists_its_loopback_once() {
        let nics = host_nics();
        let lo: Vec<&HostNic> = nics.iter().filter(|n| n.name == "lo").collect();
        assert_eq!(lo.len(), 1, "{nics:?}");
        assert!(lo[0].loopback);
        assert!(lo[0].addresses.iter().any(|a| a == "127.0.0.1"), "{nics:?}");
        assert_eq!(lo[0].mtu, lookup("127.0.0.1").unwrap().mtu);
        assert!(nics
            .iter()
            .flat_map(|n| &n.addresses)
            .all(|a| !a.starts_with("fe80")));
    }

    #[test]
    fn one_entry_per_host() {
        let v = interfaces(["127.0.0.1", "127.0.0.1", "no-such-host.invalid"]);
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].interface, "lo");
    }
}
