//! `--tune`: the settings that may move a limit, tried one at a time and then together.
//! A setting is a change to the case's topology ([`Knob::apply`]); its effect is the limit
//! the same search finds with it, against the limit without it, each with its band of
//! uncertainty ([`Gain`]). Only a setting whose whole band lies above the first limit's is
//! said to help, and only those go into the tuned topology.

use crate::scenarios::fanout::FanoutConfig;
use crate::topology::{IoMode, Topology};

/// One setting `--tune` tries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Knob {
    /// ZMQ_SNDHWM on every socket that sends.
    SndHwm(i32),
    /// ZMQ_RCVHWM on every socket that receives.
    RcvHwm(i32),
    /// ZMQ_SNDBUF and ZMQ_RCVBUF (the kernel's socket buffers) on every socket, bytes.
    Buffers(i32),
    /// ZMQ_XPUB_NODROP on every PUB: block at the high-water mark instead of dropping.
    NoDrop,
    /// The nodes' calls with ZMQ_DONTWAIT and zmq_poll instead of blocking calls.
    Poll,
    /// ZMQ_RATE on every PUB and XPUB, kbit/s (multicast cases only).
    MulticastRate(i32),
    /// ZMQ_RECOVERY_IVL on every PUB and XPUB, ms: how long OpenPGM keeps what it sent for
    /// repairs (multicast cases only).
    RecoveryIvl(i32),
    /// ZMQ_MULTICAST_HOPS on every PUB and XPUB: the packets' time to live, which must
    /// cover the routers between sender and receivers (multicast cases only).
    MulticastHops(i32),
}

/// Socket types that send, and that receive.
fn sends(kind: &str) -> bool {
    matches!(
        kind.to_ascii_uppercase().as_str(),
        "PUB" | "XPUB" | "PUSH" | "DEALER" | "ROUTER" | "PAIR" | "REQ" | "REP" | "XSUB"
    )
}

fn receives(kind: &str) -> bool {
    matches!(
        kind.to_ascii_uppercase().as_str(),
        "SUB" | "XSUB" | "PULL" | "DEALER" | "ROUTER" | "PAIR" | "REQ" | "REP" | "XPUB"
    )
}

/// PUB and XPUB: the sockets whose multicast options set how they send.
fn publishes(kind: &str) -> bool {
    kind.eq_ignore_ascii_case("PUB") || kind.eq_ignore_ascii_case("XPUB")
}

impl Knob {
    /// The setting in words, as in a topology file: `sndhwm = 10000`.
    pub fn said(&self) -> String {
        match self {
            Knob::SndHwm(n) => format!("sndhwm = {n}"),
            Knob::RcvHwm(n) => format!("rcvhwm = {n}"),
            Knob::Buffers(n) => format!("sndbuf = rcvbuf = {n}"),
            Knob::NoDrop => "xpub_nodrop = true".into(),
            Knob::Poll => "io = \"poll\"".into(),
            Knob::MulticastRate(n) => format!("multicast_rate = {n}"),
            Knob::RecoveryIvl(n) => format!("recovery_ivl = {n}"),
            Knob::MulticastHops(n) => format!("multicast_hops = {n}"),
        }
    }

    /// Where it goes.
    pub fn on(&self) -> &'static str {
        match self {
            Knob::SndHwm(_) => "on the sending sockets",
            Knob::RcvHwm(_) => "on the receiving sockets",
            Knob::Buffers(_) => {
                "on every socket (the kernel caps it at net.core.wmem_max / rmem_max)"
            }
            Knob::NoDrop => "on the PUB sockets",
            Knob::Poll => "on every node",
            Knob::MulticastRate(_) | Knob::RecoveryIvl(_) | Knob::MulticastHops(_) => {
                "on the multicast PUB and XPUB sockets"
            }
        }
    }

    /// Sets it in `t`; false when nothing in `t` takes it (or it is set so already).
    pub fn apply(&self, t: &mut Topology) -> bool {
        let mut changed = false;
        for n in &mut t.nodes {
            if let Knob::Poll = self {
                if n.io != Some(IoMode::Poll) {
                    n.io = Some(IoMode::Poll);
                    changed = true;
                }
                continue;
            }
            for s in n.socket.iter_mut().chain(n.sockets.iter_mut()) {
                let o = &mut s.options;
                let (slot, value) = match self {
                    Knob::SndHwm(v) if sends(&s.kind) => (&mut o.sndhwm, *v),
                    Knob::RcvHwm(v) if receives(&s.kind) => (&mut o.rcvhwm, *v),
                    Knob::Buffers(v) => {
                        if o.sndbuf != Some(*v) || o.rcvbuf != Some(*v) {
                            o.sndbuf = Some(*v);
                            o.rcvbuf = Some(*v);
                            changed = true;
                        }
                        continue;
                    }
                    Knob::MulticastRate(v) if publishes(&s.kind) => (&mut o.multicast_rate, *v),
                    Knob::RecoveryIvl(v) if publishes(&s.kind) => (&mut o.recovery_ivl, *v),
                    Knob::MulticastHops(v)
                        if publishes(&s.kind) || s.kind.eq_ignore_ascii_case("RADIO") =>
                    {
                        (&mut o.multicast_hops, *v)
                    }
                    Knob::NoDrop if s.kind.eq_ignore_ascii_case("PUB") => {
                        if o.xpub_nodrop != Some(true) {
                            o.xpub_nodrop = Some(true);
                            changed = true;
                        }
                        continue;
                    }
                    _ => continue,
                };
                if *slot != Some(value) {
                    *slot = Some(value);
                    changed = true;
                }
            }
        }
        changed
    }
}

/// The settings worth trying for a limit set by `cause` (the one cause rule's words), in
/// the order they are tried: for a loss, the queues and what a PUB does when they are full;
/// for a node's CPU or a queue between nodes, the queues, the buffers and how the nodes
/// wait. A limit set by file descriptors or a failure has none: no socket option moves it.
pub fn candidates(cause: &str) -> Vec<Knob> {
    candidates_for(cause, false)
}

/// [`candidates`], and for a case whose publisher sends over multicast or udp (`multicast`)
/// its settings too (only the hops when the cause is that nothing crossed a router): ZMQ_RATE at 1 Gbit/s (libzmq's 100 kbit/s held epgm to 197 msg/s of 64 B
/// here), a recovery interval of 30 s (the window OpenPGM repairs from) and 8 hops.
/// The buffers are among the first: a larger rcvbuf let 10 epgm subscribers take a
/// full-speed stream whole that lost 97% without.
pub fn candidates_for(cause: &str, multicast: bool) -> Vec<Knob> {
    // Nothing crossed a router: the packets' time to live is the one setting that moves it.
    if multicast && cause.contains("multicast hops") {
        return vec![Knob::MulticastHops(8)];
    }
    let mut out = plain_candidates(cause);
    if multicast && !out.is_empty() {
        out.extend([
            Knob::MulticastRate(1_000_000),
            Knob::RecoveryIvl(30_000),
            Knob::MulticastHops(8),
        ]);
    }
    out
}

fn plain_candidates(cause: &str) -> Vec<Knob> {
    let queues = [
        Knob::SndHwm(10_000),
        Knob::RcvHwm(10_000),
        Knob::Buffers(4 << 20),
    ];
    if cause.starts_with("file descriptors") || cause.starts_with("the step failed") {
        return Vec::new();
    }
    let mut out = queues.to_vec();
    if cause.contains("lost") || cause.contains("high-water") || cause.contains("drop") {
        out.push(Knob::NoDrop);
    }
    out.push(Knob::Poll);
    out
}

/// One setting `fanout --tune` tries: a fan-out's flags.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FanKnob {
    /// The publisher's libzmq I/O threads (`--io-threads`): the copies to its subscribers'
    /// connections written by more than one thread.
    IoThreads(i32),
    /// The high-water marks of the publisher and of every subscriber (`--hwm`).
    Hwm(i32),
    /// A PUB that waits at its high-water mark and for its subscribers (no `--lossy`).
    NoDrop,
}

impl FanKnob {
    /// The setting as a flag: `--io-threads 2`.
    pub fn said(&self) -> String {
        match self {
            FanKnob::IoThreads(n) => format!("--io-threads {n}"),
            FanKnob::Hwm(n) => format!("--hwm {n}"),
            FanKnob::NoDrop => "without --lossy".into(),
        }
    }

    /// Where it goes.
    pub fn on(&self) -> &'static str {
        match self {
            FanKnob::IoThreads(_) => "(the publisher's context)",
            FanKnob::Hwm(_) => "(the publisher's and every subscriber's)",
            FanKnob::NoDrop => "(the publisher waits instead of dropping)",
        }
    }

    /// Sets it in `cfg`; false when it is set so already.
    pub fn apply(&self, cfg: &mut FanoutConfig) -> bool {
        let p = &mut cfg.publisher;
        match *self {
            FanKnob::IoThreads(n) if p.io_threads != n => p.io_threads = n,
            FanKnob::Hwm(n) if p.hwm != Some(n) || cfg.hwm != Some(n) => {
                p.hwm = Some(n);
                cfg.hwm = Some(n);
            }
            FanKnob::NoDrop if p.lossy => p.lossy = false,
            _ => return false,
        }
        true
    }
}

/// The fan-out settings worth trying for a limit set by `cause`: for a loss, the queues
/// and a publisher that waits; for every cause but a failure or file descriptors, a second
/// I/O thread (one thread writes every subscriber's copy in turn).
pub fn fan_candidates(cause: &str) -> Vec<FanKnob> {
    if cause.starts_with("file descriptors") || cause.starts_with("the step failed") {
        return Vec::new();
    }
    let mut out = Vec::new();
    if cause.contains("lost") || cause.contains("high-water") || cause.contains("drop") {
        out.extend([FanKnob::Hwm(100_000), FanKnob::NoDrop]);
    }
    out.push(FanKnob::IoThreads(2));
    out
}

/// A limit with its band: the highest value that held, and the band the search gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limit {
    pub low: f64,
    pub held: f64,
    pub high: f64,
}

impl Limit {
    /// Its band widened by the factor `by` (at least 1) on both sides.
    pub fn widened(self, by: f64) -> Limit {
        let by = by.max(1.0);
        Limit {
            low: self.low / by,
            held: self.held,
            high: self.high * by,
        }
    }
}

/// A setting's effect on the limit: the ratio of the two limits, and its interval from the
/// two bands (the lowest the tuned one may be over the highest the first may be, and the
/// other way round).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gain {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
}

impl Gain {
    /// The tuned limit `t` against the first, `base`.
    pub fn of(base: Limit, t: Limit) -> Gain {
        let div = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::INFINITY };
        Gain {
            ratio: div(t.held, base.held),
            low: div(t.low, base.high),
            high: div(t.high, base.low),
        }
    }

    /// Whether the setting helps beyond the bands' noise.
    pub fn helps(&self) -> bool {
        self.low > 1.0
    }

    /// Whether it harms beyond them.
    pub fn harms(&self) -> bool {
        self.high < 1.0
    }

    /// `x1.80 [1.52 .. 2.10]: helps`.
    pub fn said(&self) -> String {
        format!(
            "x{:.2} [{:.2} .. {:.2}]: {}",
            self.ratio,
            self.low,
            self.high,
            if self.helps() {
                "raises it, beyond the noise"
            } else if self.harms() {
                "lowers it, beyond the noise"
            } else {
                "within the noise: not suggested"
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topology() -> Topology {
        let text = include_str!("../../topologies/pubsub-lossy.toml");
        crate::topology::load::load("pubsub-lossy.toml", text)
            .unwrap()
            .remove(0)
            .topology
    }

    #[test]
    fn each_setting_lands_on_the_sockets_it_is_for() {
        let mut t = topology();
        assert!(Knob::SndHwm(10_000).apply(&mut t));
        let kind_of = |t: &Topology, name: &str| {
            t.nodes
                .iter()
                .find(|n| n.name == name)
                .unwrap()
                .socket
                .clone()
                .unwrap()
        };
        assert_eq!(kind_of(&t, "source").options.sndhwm, Some(10_000));
        assert_eq!(kind_of(&t, "sink").options.sndhwm, None);
        // Set once, a second time changes nothing.
        assert!(!Knob::SndHwm(10_000).apply(&mut t));
        assert!(Knob::RcvHwm(10_000).apply(&mut t));
        assert_eq!(kind_of(&t, "sink").options.rcvhwm, Some(10_000));
        assert!(Knob::NoDrop.apply(&mut t));
        assert_eq!(kind_of(&t, "source").options.xpub_nodrop, Some(true));
        assert!(Knob::Poll.apply(&mut t));
        assert!(t.nodes.iter().all(|n| n.io == Some(IoMode::Poll)));
        // The tuned topology still loads and checks as a file.
        let text = toml::to_string(&t).unwrap();
        let back = crate::topology::load::load("tuned.toml", &text).unwrap();
        crate::topology::check::check("tuned.toml", &back[0].topology).unwrap();
        assert_eq!(back[0].topology, t);
    }

    #[test]
    fn a_multicast_case_also_tries_the_multicast_settings_on_its_publishers() {
        let loss = "12 lost in the middle: lost on the way";
        assert!(!candidates(loss).contains(&Knob::MulticastRate(1_000_000)));
        let m = candidates_for(loss, true);
        assert!(m.contains(&Knob::MulticastRate(1_000_000)), "{m:?}");
        assert!(m.contains(&Knob::RecoveryIvl(30_000)) && m.contains(&Knob::MulticastHops(8)));
        assert!(candidates_for("file descriptors: a process reached its limit", true).is_empty());
        let text = "name = \"m\"\n[[node]]\nname = \"pub\"\nrole = \"source\"\nsocket = { type = \"XPUB\", bind = [\"epgm://127.0.0.1;239.192.0.1:5555\"] }\n[[node]]\nname = \"sub\"\nrole = \"sink\"\nsocket = { type = \"SUB\", connect = [\"pub\"] }\n";
        let mut t = crate::topology::load::load("m.toml", text).unwrap()[0]
            .topology
            .clone();
        assert!(Knob::MulticastRate(1_000_000).apply(&mut t));
        assert!(Knob::RecoveryIvl(30_000).apply(&mut t));
        assert!(Knob::MulticastHops(8).apply(&mut t));
        let o = &t.nodes[0].socket.as_ref().unwrap().options;
        assert_eq!(
            (o.multicast_rate, o.recovery_ivl, o.multicast_hops),
            (Some(1_000_000), Some(30_000), Some(8))
        );
        assert_eq!(
            t.nodes[1].socket.as_ref().unwrap().options.multicast_rate,
            None
        );
        // Set so already: nothing to try.
        assert!(!Knob::MulticastHops(8).apply(&mut t));
        crate::topology::check::check("m.toml", &t).unwrap();
    }

    #[test]
    fn nothing_across_a_router_tries_the_hops_alone_and_a_radio_takes_them() {
        let hops = "at the start (2000 lost), the multicast hops: not one message reached";
        assert_eq!(candidates_for(hops, true), vec![Knob::MulticastHops(8)]);
        let text = "name = \"r\"\n[[node]]\nname = \"radio\"\nrole = \"source\"\nsocket = { type = \"RADIO\", connect = [\"udp://10.0.0.1;239.78.0.1:5678\"] }\n[[node]]\nname = \"dish\"\nrole = \"sink\"\nsocket = { type = \"DISH\", bind = [\"udp://239.78.0.1:5678\"] }\n";
        let mut t = crate::topology::load::load("r.toml", text).unwrap()[0]
            .topology
            .clone();
        assert!(Knob::MulticastHops(8).apply(&mut t));
        assert!(!Knob::MulticastRate(1_000_000).apply(&mut t));
        let o = &t.nodes[0].socket.as_ref().unwrap().options;
        assert_eq!(o.multicast_hops, Some(8));
        // libzmq's udp engine takes the hops on a RADIO: the checker lets them be.
        crate::topology::check::check("r.toml", &t).unwrap();
    }

    #[test]
    fn the_cause_picks_the_settings() {
        assert!(candidates("file descriptors: a process reached its limit").is_empty());
        let loss = candidates("12 lost in the middle: the high-water mark");
        assert!(loss.contains(&Knob::NoDrop) && loss.len() == 5);
        assert!(
            !candidates("a slow consumer: sink (sink) used 98% of a core").contains(&Knob::NoDrop)
        );
    }

    #[test]
    fn a_gain_counts_only_beyond_both_bands() {
        let base = Limit {
            low: 90.0,
            held: 100.0,
            high: 110.0,
        };
        let up = Gain::of(
            base,
            Limit {
                low: 150.0,
                held: 160.0,
                high: 170.0,
            },
        );
        assert!(up.helps() && !up.harms());
        assert!((up.ratio - 1.6).abs() < 1e-9);
        assert!((up.low - 150.0 / 110.0).abs() < 1e-9);
        let same = Gain::of(
            base,
            Limit {
                low: 105.0,
                held: 112.0,
                high: 120.0,
            },
        );
        assert!(!same.helps() && !same.harms());
        assert!(same.said().contains("within the noise"));
        let down = Gain::of(
            base,
            Limit {
                low: 40.0,
                held: 50.0,
                high: 60.0,
            },
        );
        assert!(down.harms());
    }
}
