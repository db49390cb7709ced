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
        let transport = match scheme {
            "tcp" => Transport::Tcp,
            "ipc" => Transport::Ipc,
            "inproc" => Transport::Inproc,
            "pgm" | "epgm" | "norm" | "udp" | "tipc" | "vmci" | "ws" | "wss" => {
                return Err(bad(format!(
                    "the {scheme}:// transport is not supported; use tcp://, ipc:// or inproc://"
                )))
            }
            _ => {
                return Err(bad(format!(
                    "unknown transport '{scheme}'; use tcp://, ipc:// or inproc://"
                )))
            }
        };
        if rest.is_empty() {
            return Err(bad(match transport {
                Transport::Tcp => "missing address; write tcp://127.0.0.1:5555".to_string(),
                Transport::Ipc => "missing path; write ipc:///tmp/zmqperf.sock".to_string(),
                Transport::Inproc => "missing name; write inproc://lat_test".to_string(),
            }));
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
            Transport::Inproc => {}
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

    /// Whether the bind address asks the system to pick a port or path (`*`).
    pub fn is_wildcard(&self) -> bool {
        match self.transport {
            Transport::Tcp => self.raw.ends_with(":*") || self.raw.ends_with(":0"),
            Transport::Ipc => self.raw == "ipc://*",
            Transport::Inproc => false,
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

fn check_tcp(rest: &str, side: Side) -> std::result::Result<(), String> {
    // A connect address may name a source address first: "src:port;dst:port". Check the target.
    let target = rest.rsplit(';').next().unwrap_or(rest);
    let Some((host, port)) = target.rsplit_once(':') else {
        return Err("missing port; write tcp://HOST:PORT, e.g. tcp://127.0.0.1:5555".into());
    };
    if host.is_empty() {
        return Err(
            "missing host; write tcp://127.0.0.1:PORT (or tcp://*:PORT to bind on all interfaces)"
                .into(),
        );
    }
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
    match port.parse::<u32>() {
        Ok(p) if (1..=65535).contains(&p) => {}
        _ => return Err(format!("port '{port}' is not a number from 1 to 65535")),
    }
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
            ("udp://127.0.0.1:5555", "not supported"),
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
    fn wildcards_only_bind() {
        assert!(Endpoint::parse("tcp://127.0.0.1:*", Side::Connect).is_err());
        assert!(Endpoint::parse("tcp://*:5555", Side::Connect).is_err());
        assert!(Endpoint::parse("tcp://127.0.0.1:5555", Side::Connect).is_ok());
    }
}
