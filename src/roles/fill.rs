//! What a role reads from the graph to fill its own fields of a replica's spec: the
//! replica's [`Place`] (the checked graph, its node, its index, the case's defaults), the
//! counts, sizes and message shapes of nodes, the streams that flow into a node, and the
//! subscriptions a publishing socket waits for. The fills of the echo, the ping and the
//! swarm live here too (their files hold their run loops).

use super::swarm::SwarmSpec;
use super::NodeSpec;
use crate::endpoint::Transport;
use crate::error::{Error, Result};
use crate::topology::check::{Flow, Graph};
use crate::topology::{Latency, Node, SocketType};

/// A node's message shape: its typed frames (sizes), their type id, and its log levels.
pub type Shape = (Vec<usize>, u32, Vec<String>);

/// One replica of a node in the graph, with the case's defaults.
pub struct Place<'a> {
    /// The checked topology.
    pub g: &'a Graph,
    /// The node's index.
    pub node: usize,
    /// The replica's index.
    pub replica: u32,
    /// Where the topology came from, for errors.
    pub origin: &'a str,
    /// The case's count, size and warm-up (a node's own override them).
    pub count: u64,
    pub size: usize,
    pub warmup: u64,
    /// The run's timeout, ms.
    pub timeout_ms: u64,
    /// The case's transport (of `auto` binds).
    pub transport: Transport,
    /// Each node's first stream id (one per source replica, in node order).
    pub first_stream: &'a [u32],
    /// Where every source's stream arrives.
    pub flows: &'a [Flow],
}

/// The streams that flow into a node.
#[derive(Default)]
pub struct Inflow {
    /// Each stream's id and the messages the node expects of it.
    pub streams: Vec<(u32, u64)>,
    /// Whether it gets a share of any of them (load-balanced), not all.
    pub shared: bool,
    /// The message size of each flow.
    pub sizes: Vec<usize>,
    /// Their one message shape.
    pub shape: Option<Shape>,
}

impl Inflow {
    /// The size of the messages it takes: its flows' one size, 0 for mixed sizes, or `own`
    /// without flows.
    pub fn size(&self, own: usize) -> usize {
        let first = self.sizes.first().copied().unwrap_or(own);
        if self.sizes.iter().all(|&s| s == first) {
            first
        } else {
            0
        }
    }
}

impl Place<'_> {
    /// The node.
    pub fn node(&self) -> &Node {
        &self.g.topology.nodes[self.node]
    }

    /// Node `i`'s own count and size, where it overrides the case's.
    pub fn count_size(&self, i: usize) -> Result<(u64, usize)> {
        let n = &self.g.topology.nodes[i];
        let at = |f: &str| format!("node '{}': {f}", n.name);
        let count = crate::topology::value_u64(&n.count, &at("count"), crate::parse::parse_count)?
            .unwrap_or(self.count);
        let size = crate::topology::value_u64(&n.size, &at("size"), |w, s| {
            crate::parse::parse_size(w, s).map(|x| x as u64)
        })?
        .map(|s| s as usize)
        .unwrap_or(self.size);
        // Typed frames: the message is all of them.
        let (frames, _, _) = self.shape(i)?;
        if !frames.is_empty() {
            return Ok((count, frames.iter().sum()));
        }
        Ok((count, size))
    }

    /// Node `i`'s message shape.
    pub fn shape(&self, i: usize) -> Result<Shape> {
        let n = &self.g.topology.nodes[i];
        let mut frames = Vec::new();
        let mut type_id = 0;
        if let Some(m) = &n.message {
            type_id = m.type_id;
            for (k, v) in m.frames.iter().enumerate() {
                let what = format!("node '{}': message.frames[{k}]", n.name);
                let size = crate::topology::value_u64(&Some(v.clone()), &what, |w, s| {
                    crate::parse::parse_size(w, s).map(|x| x as u64)
                })?
                .unwrap_or(0) as usize;
                frames.push(size);
            }
            if frames[0] < super::shape::FIRST_FRAME_MIN {
                return Err(Error::invalid(
                    &format!("topology: node '{}': message.frames[0]", n.name),
                    &frames[0].to_string(),
                    format!(
                        "the first frame holds the {}-byte header and the 4-byte type id; make it at least {} bytes",
                        crate::header::HEADER_LEN,
                        super::shape::FIRST_FRAME_MIN
                    ),
                ));
            }
        }
        let levels = n
            .log
            .as_ref()
            .map(|l| {
                l.levels.clone().unwrap_or_else(|| {
                    super::shape::DEFAULT_LEVELS
                        .iter()
                        .map(|s| s.to_string())
                        .collect()
                })
            })
            .unwrap_or_default();
        Ok((frames, type_id, levels))
    }

    /// The streams into the node, all of one message shape.
    pub fn inflow(&self) -> Result<Inflow> {
        let (g, i) = (self.g, self.node);
        let t = &g.topology;
        let n = self.node();
        let mut inflow = Inflow::default();
        for f in self.flows.iter().filter(|f| f.sink == i) {
            // (A swarm takes one stream: the first that reaches it.)
            let (mut c, s) = self.count_size(f.source)?;
            let this = self.shape(f.source)?;
            match &inflow.shape {
                Some(other) if *other != this => {
                    return Err(Error::invalid(
                        &format!("topology {}: node '{}'", self.origin, n.name),
                        "its streams",
                        "the sources that reach this sink send messages of different shapes (frames or log lines); give each shape its own sink",
                    ))
                }
                _ => inflow.shape = Some(this.clone()),
            }
            // Log lines behind a SUB filter: the sink expects only the lines it lets through.
            if !this.2.is_empty() {
                let prefixes = n.all_sockets()[0]
                    .options
                    .subscribe
                    .clone()
                    .unwrap_or_default();
                c = super::shape::LogFilter::new(&this.2, &prefixes).passed_of(c);
            }
            inflow.sizes.push(s);
            inflow.shared |= f.shared;
            for r in 0..t.nodes[f.source].replicas {
                inflow.streams.push((self.first_stream[f.source] + r, c));
            }
        }
        Ok(inflow)
    }

    /// Whether the node uses inproc (a literal endpoint, or a name on an inproc case).
    pub fn uses_inproc(&self) -> bool {
        self.node().all_sockets().iter().any(|s| {
            s.bind.iter().chain(&s.connect).any(|e| {
                e.starts_with("inproc://")
                    || (!e.contains("://") && self.transport == Transport::Inproc)
            })
        })
    }

    /// The subscriptions its publishing socket (its role's, on PUB or XPUB) waits for
    /// before the first message: every topic of every SUB that reaches it.
    pub fn subscriptions(&self) -> u32 {
        let (g, i) = (self.g, self.node);
        let t = &g.topology;
        let n = self.node();
        let Some(out) = n.role.info().publishes_on(&g.types[i]) else {
            return 0;
        };
        if n.wait_subscriptions == Some(false) {
            return 0;
        }
        // Over multicast no subscription travels back: nothing to count (the source
        // pauses for the joins instead).
        let sock = &n.all_sockets()[out];
        if sock.transports(self.transport).any(Transport::one_way) {
            return 0;
        }
        g.peers((i, out))
            .iter()
            .map(|p| {
                let topics = t.nodes[p.0].all_sockets()[p.1]
                    .options
                    .subscribe
                    .as_ref()
                    .map(|v| v.len().max(1))
                    .unwrap_or(1) as u32;
                let per = if g.types[p.0][p.1] == SocketType::Sub {
                    topics
                } else {
                    1
                };
                per * t.nodes[p.0].replicas * t.nodes[p.0].subs.unwrap_or(1)
            })
            .sum()
    }
}

/// Sets a spec's message shape; log lines are time-stamped each (a filtered reader gets
/// only some of them, so a stamp every n-th line could miss every one it gets).
pub fn set_shape(spec: &mut NodeSpec, (frames, type_id, levels): Shape) {
    if !levels.is_empty() {
        spec.stamp_every = 1;
    }
    spec.frames = frames;
    spec.type_id = type_id;
    spec.log_levels = levels;
}

/// An echo's: the requests its pings send (warm-up included); it ends by itself when it
/// alone answers them.
pub fn echo(p: &Place, spec: &mut NodeSpec) -> Result<()> {
    let t = &p.g.topology;
    let pings: Vec<usize> =
        p.g.peers((p.node, 0))
            .iter()
            .map(|q| q.0)
            .filter(|&q| t.nodes[q].role.info().latency == Latency::RoundTrip)
            .collect();
    let mut expect = 0;
    for &q in &pings {
        let (c, _) = p.count_size(q)?;
        expect += (c + p.warmup) * t.nodes[q].replicas as u64;
    }
    spec.expect = expect;
    spec.ends_itself = p.node().replicas == 1 && !pings.is_empty();
    Ok(())
}

/// A ping's: on DEALER talking to REP, an empty delimiter frame first.
pub fn ping(p: &Place, spec: &mut NodeSpec) -> Result<()> {
    let g = p.g;
    spec.delimiter = g.types[p.node][0] == SocketType::Dealer
        && g.peers((p.node, 0))
            .iter()
            .any(|q| g.types[q.0][q.1] == SocketType::Rep);
    Ok(())
}

/// A swarm's: its subscribers and timeouts, the stream it takes, and the largest message.
pub fn swarm(p: &Place, spec: &mut NodeSpec) -> Result<()> {
    let n = p.node();
    let inflow = p.inflow()?;
    if p.uses_inproc() {
        return Err(Error::invalid(
            &format!("topology {}: node '{}': socket.connect", p.origin, n.name),
            "inproc",
            "a swarm opens its own ZeroMQ context, which inproc:// cannot cross; run it over ipc or tcp (--transports ipc)",
        ));
    }
    let t = &p.g.topology;
    let publisher =
        p.g.peers((p.node, 0))
            .iter()
            .find_map(|q| t.nodes[q.0].ticks.clone());
    spec.swarm = Some(SwarmSpec {
        process: p.replica,
        subs: n.subs.unwrap_or(1),
        // A source that pauses for its receivers' joins sends its first message that much
        // later.
        first_timeout_ms: n.first_timeout_ms.unwrap_or(p.timeout_ms)
            + crate::roles::senders_pause_ms(p),
        idle_ms: n.idle_ms.unwrap_or(p.timeout_ms),
        expect: n
            .count
            .is_some()
            .then_some(spec.count)
            .or(inflow.streams.first().map(|(_, c)| *c)),
        // A swarm connected to a raw publisher reads plain stream sockets.
        raw: publisher.as_ref().is_some_and(|tk| tk.raw),
        // Figures per tick when the ticks are spaced (not for the raw floor).
        ticks: publisher
            .filter(|tk| tk.interval_ms > 0.0 && !tk.raw)
            .map(|tk| crate::roles::swarm::TickPlan {
                per_tick: tk.per_tick,
                interval_ms: tk.interval_ms,
                passes: tk.passes,
            }),
    });
    // A swarm reached by the case's publisher knows its size (a sub-cluster alone does
    // not: it takes any).
    spec.max_frame =
        (!inflow.sizes.is_empty()).then(|| inflow.sizes.iter().copied().max().unwrap_or(0));
    spec.streams = inflow.streams;
    Ok(())
}
