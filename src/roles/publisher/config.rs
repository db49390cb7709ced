//! What the fan-out publisher is asked to do (its endpoint, schedule and socket settings)
//! and what it reports.

use crate::endpoint::{Endpoint, Transport};
use crate::roles::swarm::ProcessUsage;
use crate::stats::{LatencySummary, Throughput};
use serde::Serialize;
use std::time::Duration;

/// Settings of the publisher.
#[derive(Debug, Clone)]
pub struct PubConfig {
    /// Endpoint to bind (`tcp://127.0.0.1:*` picks a free port).
    pub endpoint: Endpoint,
    /// Time between ticks; zero sends every message as fast as possible.
    pub interval: Duration,
    /// Messages per tick.
    pub per_tick: u64,
    /// Ticks.
    pub passes: u64,
    /// Warm-up ticks first, on the same schedule, flagged WARMUP and not counted: they take
    /// the first-use costs (page faults, cold caches) out of the measured ticks.
    pub warmup: u64,
    /// Message size in bytes (at least the 24-byte header).
    pub size: usize,
    /// Wait until this many subscribers have subscribed before the first tick.
    pub subscribers: Option<u64>,
    /// Without `subscribers`: how long to let subscribers join before the first tick.
    pub wait: Duration,
    /// Longest wait for the subscribers to join, and for a blocked send to go through.
    pub timeout: Duration,
    /// After the last message, longest wait for the subscribers to leave before closing.
    pub linger: Duration,
    /// Send high-water mark per subscriber, in messages (None: libzmq's 1000).
    pub hwm: Option<i32>,
    /// libzmq io threads of the publisher's context.
    pub io_threads: i32,
    /// Stream id written in every header.
    pub stream_id: u32,
    /// Publish as the users' harnesses did: no ZMQ_XPUB_NODROP (a full queue drops) and no
    /// wait for the subscribers (the first ticks go out at once), so the loss is measured.
    pub lossy: bool,
}

impl PubConfig {
    /// Messages in the whole run.
    pub fn total(&self) -> u64 {
        self.per_tick.saturating_mul(self.passes)
    }
}

/// What the publisher did.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct PubResult {
    /// Endpoint bound (the real port or path).
    pub endpoint: String,
    /// Its transport.
    pub transport: Transport,
    /// Time between ticks, ms (0: as fast as possible).
    pub interval_ms: f64,
    /// Messages per tick.
    pub per_tick: u64,
    /// Ticks.
    pub passes: u64,
    /// Warm-up ticks sent before them (not counted).
    pub warmup_ticks: u64,
    /// Message size in bytes.
    pub message_size: usize,
    /// Messages sent.
    pub messages: u64,
    /// Subscribers subscribed when the first tick went out.
    pub subscribers: u64,
    /// From bind to the first tick: waiting for the subscriptions (or `--wait`), ns.
    pub join_wait_ns: u64,
    /// Admission rate: from the first send call to the return of the last.
    pub send: Throughput,
    /// How late each message's send call was against its tick's due time
    /// (start + i x interval); None at `-t 0`, where there is no schedule.
    pub send_delay: Option<LatencySummary>,
    /// Subscribers that left between the first tick and the publisher's close.
    pub left: u64,
    /// Of them, those that left before the last message was sent (they missed the rest of
    /// the stream: a subscriber that died, or was stopped, part-way).
    #[serde(default)]
    pub left_early: u64,
    /// The tick before which the first of them was seen gone.
    #[serde(default)]
    pub first_left_tick: Option<u64>,
    /// Whether all subscribers had left before the publisher closed its socket. False means
    /// messages still queued when it closed may not have been delivered.
    pub all_left: bool,
    /// Why it published fewer ticks than asked, if it did: "interrupted by SIGTERM after
    /// 12 of 50 ticks" (its last message then carries the end mark, and `messages` counts
    /// what it sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// CPU time and peak RSS of the process the publisher ran in.
    pub usage: ProcessUsage,
}
