//! The kernel's own counters of what it dropped, read around a receive: UDP datagrams
//! that found a socket's receive buffer full (`RcvbufErrors` of `/proc/net/snmp`, for the
//! network namespace the process is in), for receivers over udp, epgm and norm.

/// Whether the kernel's UDP counters see what a receiver on transport `t` is sent: udp, and
/// epgm and norm, which ride on UDP (pgm is an IP protocol of its own).
pub fn counts(t: crate::transport::Transport) -> bool {
    use crate::transport::Transport as T;
    matches!(t, T::Udp | T::Epgm | T::Norm)
}

/// UDP datagrams dropped at full receive buffers so far in this network namespace, if the
/// kernel says (Linux).
pub fn udp_receive_errors() -> Option<u64> {
    parse_snmp_udp(
        &std::fs::read_to_string("/proc/net/snmp").ok()?,
        "RcvbufErrors",
    )
}

/// A field of the `Udp:` lines of `/proc/net/snmp` (a line of names, then one of values).
fn parse_snmp_udp(text: &str, field: &str) -> Option<u64> {
    let mut udp = text.lines().filter(|l| l.starts_with("Udp:"));
    let names = udp.next()?;
    let values = udp.next()?;
    let i = names.split_whitespace().position(|n| n == field)?;
    values.split_whitespace().nth(i)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_udp_counter_is_read_by_its_name() {
        let text = "Ip: Forwarding DefaultTTL\nIp: 1 64\nUdp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\nUdp: 10 0 7 12 5 0\nUdpLite: InDatagrams RcvbufErrors\nUdpLite: 0 99\n";
        assert_eq!(parse_snmp_udp(text, "RcvbufErrors"), Some(5));
        assert_eq!(parse_snmp_udp(text, "InErrors"), Some(7));
        assert_eq!(parse_snmp_udp(text, "Nothing"), None);
        assert_eq!(parse_snmp_udp("Ip: a\nIp: 1\n", "RcvbufErrors"), None);
        // On this machine the file is there and has the field.
        assert!(udp_receive_errors().is_some());
    }
}
