//! ZeroMQ endpoints (`tcp://host:port`, `ipc://path`, `inproc://name`), checked before use.

use crate::error::{Error, Result};

use std::fmt;

pub use crate::transport::Transport;

/// Whether an endpoint will be bound or connected; `*` ports are valid only for binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Bind,
    Connect,
}

/// A validated endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    raw: String,
    transport: Transport,
}

/// Longest path a Unix socket address holds (sun_path less its NUL).
const IPC_PATH_MAX: usize = 107;

impl Endpoint {
    /// Checks `s` for use on `side`, with a message naming the problem and the fix.
    pub fn parse(s: &str, side: Side) -> Result<Endpoint> {
        let bad = |reason: String| Error::Endpoint {
            endpoint: s.to_string(),
            reason,
        };
        let Some((scheme, rest)) = s.split_once("://") else {
            return Err(bad(
                "no transport; write tcp://HOST:PORT, ipc:///path/to/socket or inproc://name"
                    .to_string(),
            ));
        };
        let Some(transport) = Transport::parse(scheme) else {
            return Err(bad(format!(
                "unknown transport '{scheme}'; use one of {}",
                schemes()
            )));
        };
        if rest.is_empty() {
            let what = match transport {
                Transport::Ipc => "path",
                Transport::Inproc => "name",
                _ => "address",
            };
            return Err(bad(format!("missing {what}; write {}", example(transport))));
        }
        let mut raw = s.to_string();
        match transport {
            Transport::Tcp => {
                check_tcp(rest, side).map_err(bad)?;
                // libzmq binds to an address or an interface, not a host name: "localhost",
                // which every user writes, is its loopback address.
                if side == Side::Bind {
                    if let Some(port) = rest.strip_prefix("localhost:") {
                        raw = format!("tcp://127.0.0.1:{port}");
                    }
                }
            }
            Transport::Ws | Transport::Wss => {
                let host_port = rest.split_once('/').map_or(rest, |(hp, _)| hp);
                check_tcp(host_port, side)
                    .map_err(|e| e.replace("tcp://", &format!("{scheme}://")))
                    .map_err(bad)?;
            }
            Transport::Ipc => {
                if rest.len() > IPC_PATH_MAX {
                    return Err(bad(format!(
                        "the path is {} bytes long; Unix sockets allow at most {IPC_PATH_MAX}: use a shorter path",
                        rest.len()
                    )));
                }
                if rest == "*" && side == Side::Connect {
                    return Err(bad(
                        "ipc://* can only be bound; connect to the path the binding side printed"
                            .into(),
                    ));
                }
            }
            Transport::Udp => check_udp(rest, side).map_err(bad)?,
            Transport::Pgm | Transport::Epgm | Transport::Norm => {
                check_multicast(transport, rest).map_err(bad)?
            }
            Transport::Inproc | Transport::Tipc => {}
        }
        Ok(Endpoint { raw, transport })
    }

    /// The host and port of a tcp endpoint (the target of a "src;dst" connect), brackets
    /// removed from an IPv6 address.
    pub fn tcp_host_port(&self) -> Option<(&str, &str)> {
        if self.transport != Transport::Tcp {
            return None;
        }
        let rest = self.raw.strip_prefix("tcp://")?;
        let target = rest.rsplit(';').next().unwrap_or(rest);
        let (host, port) = target.rsplit_once(':')?;
        Some((host.trim_start_matches('[').trim_end_matches(']'), port))
    }

    /// Whether the tcp address is an IPv6 one (libzmq needs ZMQ_IPV6 for it).
    pub fn is_ipv6(&self) -> bool {
        self.tcp_host_port()
            .is_some_and(|(h, _)| h.parse::<std::net::Ipv6Addr>().is_ok())
    }

    /// The endpoint as the user wrote it.
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// Its transport.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// The IPv4 address and port a udp endpoint targets (after any interface a connect
    /// names first, `IFACE;HOST:PORT`), when it writes them as numbers.
    pub fn udp_target(&self) -> Option<(std::net::Ipv4Addr, u16)> {
        if self.transport != Transport::Udp {
            return None;
        }
        let rest = self.raw.strip_prefix("udp://")?;
        let (host, port) = rest.rsplit(';').next()?.rsplit_once(':')?;
        Some((host.parse().ok()?, port.parse().ok()?))
    }

    /// What a bind and a connect must share to meet: the endpoint, less the interface a
    /// udp or multicast endpoint names first (`udp://10.0.0.1;239.1.1.1:5555` meets
    /// `udp://239.1.1.1:5555`: each host names its own interface for the same group).
    pub fn meeting_point(&self) -> String {
        match self.transport {
            Transport::Udp | Transport::Pgm | Transport::Epgm | Transport::Norm => {
                let scheme_end = self.raw.find("://").map_or(0, |i| i + 3);
                let rest = &self.raw[scheme_end..];
                let target = rest.rsplit(';').next().unwrap_or(rest);
                format!("{}{target}", &self.raw[..scheme_end])
            }
            _ => self.raw.clone(),
        }
    }

    /// Whether every receiver binds this same address: a udp multicast group, which each
    /// DISH joins on its own (libzmq sets SO_REUSEADDR there).
    pub fn is_shared_group(&self) -> bool {
        self.udp_target().is_some_and(|(a, _)| a.is_multicast())
    }

    /// Whether the bind address asks the system to pick a port or path (`*`).
    pub fn is_wildcard(&self) -> bool {
        match self.transport {
            Transport::Tcp | Transport::Ws | Transport::Wss => {
                self.raw.ends_with(":*") || self.raw.ends_with(":0")
            }
            Transport::Ipc => self.raw == "ipc://*",
            _ => false,
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

/// The schemes, for an error that names them.
fn schemes() -> String {
    let all: Vec<String> = Transport::ALL.iter().map(|t| format!("{t}://")).collect();
    all.join(", ")
}

/// An endpoint of the transport, as help and errors show one.
pub fn example(t: Transport) -> &'static str {
    match t {
        Transport::Tcp => "tcp://127.0.0.1:5555",
        Transport::Ipc => "ipc:///tmp/zmqperf.sock",
        Transport::Inproc => "inproc://lat_test",
        Transport::Udp => "udp://127.0.0.1:5556 (or udp://eth0;239.192.0.1:5556 for multicast)",
        Transport::Pgm => "pgm://eth0;239.192.0.1:5557",
        Transport::Epgm => "epgm://eth0;239.192.0.1:5557",
        Transport::Norm => "norm://eth0;239.192.0.1:5558",
        Transport::Tipc => "tipc://{5560,0,0}",
        Transport::Ws => "ws://127.0.0.1:5559/zmqperf",
        Transport::Wss => "wss://127.0.0.1:5559/zmqperf",
    }
}

/// `udp://[IFACE;]HOST:PORT`: libzmq takes no wildcard port for udp (port 0 is refused).
fn check_udp(rest: &str, side: Side) -> std::result::Result<(), String> {
    let (host, port) = host_and_port(rest, "udp")?;
    if host == "*" && side == Side::Connect {
        return Err(
            "cannot send to '*'; name the host or the multicast group, e.g. udp://127.0.0.1:PORT"
                .into(),
        );
    }
    if port == "*" {
        return Err("udp takes no wildcard port (libzmq refuses port 0 there); give a port, or bind `auto` in a topology".into());
    }
    check_port(port)
}

/// The host and port of a `[SOURCE;]HOST:PORT` address (the target's, after any source
/// address a connect names first), each present.
fn host_and_port<'a>(
    rest: &'a str,
    scheme: &str,
) -> std::result::Result<(&'a str, &'a str), String> {
    let target = rest.rsplit(';').next().unwrap_or(rest);
    let Some((host, port)) = target.rsplit_once(':') else {
        return Err(format!(
            "missing port; write {scheme}://HOST:PORT, e.g. {scheme}://127.0.0.1:5555"
        ));
    };
    if host.is_empty() {
        return Err(format!(
            "missing host; write {scheme}://127.0.0.1:PORT (or {scheme}://*:PORT to bind on all interfaces)"
        ));
    }
    Ok((host, port))
}

/// A port from 1 to 65535.
fn check_port(port: &str) -> std::result::Result<(), String> {
    match port.parse::<u32>() {
        Ok(p) if (1..=65535).contains(&p) => Ok(()),
        _ => Err(format!("port '{port}' is not a number from 1 to 65535")),
    }
}

/// `pgm://IFACE;GROUP:PORT` (and epgm, norm): the interface, a multicast group, a port.
fn check_multicast(t: Transport, rest: &str) -> std::result::Result<(), String> {
    let ex = example(t);
    let (iface, target) = match rest.split_once(';') {
        Some((i, g)) => (Some(i), g),
        None => (None, rest),
    };
    if t != Transport::Norm && iface.is_none_or(str::is_empty) {
        return Err(format!(
            "missing interface; write {ex} (the interface the multicast leaves by, a name or its address)"
        ));
    }
    let Some((group, port)) = target.rsplit_once(':') else {
        return Err(format!("missing port; write {ex}"));
    };
    check_port(port)?;
    if t != Transport::Norm {
        let multicast = group
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_multicast());
        if !multicast {
            return Err(format!(
                "'{group}' is not a multicast group (224.0.0.0 to 239.255.255.255); write {ex}"
            ));
        }
    }
    Ok(())
}

fn check_tcp(rest: &str, side: Side) -> std::result::Result<(), String> {
    // A connect address may name a source address first: "src:port;dst:port". Check the target.
    let (host, port) = host_and_port(rest, "tcp")?;
    if host.starts_with('[') != host.ends_with(']') {
        return Err("unbalanced brackets around an IPv6 address; write tcp://[::1]:5555".into());
    }
    if port == "*" || port == "0" {
        return match side {
            Side::Bind => Ok(()),
            Side::Connect => Err(
                "a wildcard port can only be bound; connect to the port the binding side printed"
                    .into(),
            ),
        };
    }
    check_port(port)?;
    if host == "*" && side == Side::Connect {
        return Err("cannot connect to '*'; name the host, e.g. tcp://127.0.0.1:PORT".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_the_three_transports() {
        for (s, t) in [
            ("tcp://127.0.0.1:5555", Transport::Tcp),
            ("tcp://[::1]:5555", Transport::Tcp),
            ("tcp://*:5555", Transport::Tcp),
            ("ipc:///tmp/x.sock", Transport::Ipc),
            ("inproc://lat_test", Transport::Inproc),
            ("udp://127.0.0.1:5556", Transport::Udp),
            ("udp://*:5556", Transport::Udp),
            ("udp://lo;239.192.0.1:5556", Transport::Udp),
            ("epgm://lo;239.192.0.1:5557", Transport::Epgm),
            ("pgm://eth0;239.192.0.1:5557", Transport::Pgm),
            ("norm://239.192.0.1:5558", Transport::Norm),
            ("tipc://{5560,0,0}", Transport::Tipc),
            ("ws://127.0.0.1:5559/zmqperf", Transport::Ws),
        ] {
            assert_eq!(
                Endpoint::parse(s, Side::Bind).unwrap().transport(),
                t,
                "{s}"
            );
        }
        assert!(Endpoint::parse("tcp://127.0.0.1:*", Side::Bind)
            .unwrap()
            .is_wildcard());
    }

    #[test]
    fn refuses_malformed_and_unsupported() {
        let cases = [
            ("127.0.0.1:5555", "no transport"),
            ("udp://127.0.0.1:*", "no wildcard port"),
            ("udp://127.0.0.1", "missing port"),
            ("epgm://239.192.0.1:5555", "missing interface"),
            ("pgm://lo;10.0.0.1:5555", "not a multicast group"),
            ("epgm://lo;239.192.0.1:0", "not a number from 1 to 65535"),
            ("ws://127.0.0.1/x", "missing port"),
            ("foo://x", "unknown transport"),
            ("tcp://127.0.0.1", "missing port"),
            ("tcp://127.0.0.1:99999", "not a number from 1 to 65535"),
            ("tcp://127.0.0.1:abc", "not a number"),
            ("tcp://:5555", "missing host"),
            ("tcp://", "missing address"),
            ("ipc://", "missing path"),
        ];
        for (s, want) in cases {
            let e = Endpoint::parse(s, Side::Bind).unwrap_err();
            assert_eq!(e.exit_code(), 4);
            assert!(e.to_string().contains(want), "{s}: {e}");
        }
        let long = format!("ipc:///tmp/{}", "x".repeat(200));
        assert!(Endpoint::parse(&long, Side::Bind).is_err());
    }

    #[test]
    fn udp_sends_to_a_host_not_to_every_interface() {
        let e = Endpoint::parse("udp://*:5556", Side::Connect).unwrap_err();
        assert!(e.to_string().contains("cannot send to '*'"), "{e}");
    }

    #[test]
    fn wildcards_only_bind() {
        assert!(Endpoint::parse("tcp://127.0.0.1:*", Side::Connect).is_err());
        assert!(Endpoint::parse("tcp://*:5555", Side::Connect).is_err());
        assert!(Endpoint::parse("tcp://127.0.0.1:5555", Side::Connect).is_ok());
    }

    #[test]
    fn a_group_meets_whatever_interface_each_side_names() {
        let at = |e: &str, side| Endpoint::parse(e, side).unwrap().meeting_point();
        assert_eq!(
            at("udp://10.78.1.1;239.78.0.1:5678", Side::Connect),
            at("udp://239.78.0.1:5678", Side::Bind)
        );
        assert_eq!(
            at("epgm://10.0.0.1;239.1.1.1:5555", Side::Connect),
            "epgm://239.1.1.1:5555"
        );
        assert_eq!(
            at("tcp://127.0.0.1:5555", Side::Bind),
            "tcp://127.0.0.1:5555"
        );
    }
}
