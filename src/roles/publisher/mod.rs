//! The fan-out publisher, a source on a tick schedule: one XPUB socket that waits for its
//! subscribers, then sends `passes` ticks
//! of `per_tick` messages, tick i at start + i x interval (no drift), every message carrying
//! the measurement header stamped at its send call. XPUB_NODROP makes it wait at the
//! high-water mark rather than drop; XPUB_VERBOSER lets it count every subscriber that
//! joins and leaves.

mod config;

pub use config::{PubConfig, PubResult};

use super::swarm::ProcessUsage;
use crate::clock::now_ns;
use crate::endpoint::{Endpoint, Side};
use crate::error::{zmq_err, Error, Result};
use crate::header::{Header, FLAG_END, FLAG_TIMESTAMP, FLAG_WARMUP};
use crate::msg::RawMsg;
use crate::net::set_int_option;
use crate::stats::Throughput;
use crate::zmq;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Longest a blocking call waits before the loop looks at the clock and the abort flag.
const SLICE_MS: i32 = 100;

/// A bound publisher, ready to run.
pub struct Publisher {
    // The socket is declared first so it is closed before the context is dropped.
    sock: zmq::Socket,
    _ctx: zmq::Context,
    cfg: PubConfig,
    endpoint: String,
    /// Whether unsubscriptions are reported (XPUB_VERBOSER accepted).
    counts_leaving: bool,
    subscribed: u64,
    unsubscribed: u64,
    upstream: RawMsg,
}

impl Publisher {
    /// Opens the XPUB socket and binds it. Nothing is sent yet.
    pub fn bind(cfg: PubConfig) -> Result<Publisher> {
        let ctx = zmq::Context::new();
        if cfg.io_threads != 1 {
            ctx.set_io_threads(cfg.io_threads)
                .map_err(zmq_err("setting ZMQ_IO_THREADS"))?;
        }
        let mut counts_leaving = false;
        let timeout = Duration::from_millis(SLICE_MS as u64);
        // The options go on before the bind, so no subscriber can slip in while they are
        // still the defaults.
        let (sock, endpoint) = crate::net::open_socket(
            &ctx,
            zmq::XPUB,
            &cfg.endpoint,
            Side::Bind,
            timeout,
            |sock| {
                sock.set_linger(1000)
                    .map_err(zmq_err("setting ZMQ_LINGER"))?;
                counts_leaving = set_int_option(sock, zmq::ZMQ_XPUB_VERBOSER, 1).is_ok();
                if !counts_leaving {
                    set_int_option(sock, zmq::ZMQ_XPUB_VERBOSE, 1)?;
                }
                if !cfg.lossy {
                    set_int_option(sock, zmq::ZMQ_XPUB_NODROP, 1)?;
                }
                if let Some(h) = cfg.hwm {
                    sock.set_sndhwm(h).map_err(zmq_err("setting ZMQ_SNDHWM"))?;
                }
                // Thousands of subscribers connect at once; libzmq's backlog of 100 would
                // turn most of them away for a reconnect interval. The kernel caps it at
                // somaxconn.
                let backlog = cfg.subscribers.unwrap_or(4096).clamp(100, 65_535) as i32;
                sock.set_backlog(backlog)
                    .map_err(zmq_err("setting ZMQ_BACKLOG"))
            },
        )?;
        Ok(Publisher {
            sock,
            _ctx: ctx,
            cfg,
            endpoint,
            counts_leaving,
            subscribed: 0,
            unsubscribed: 0,
            upstream: RawMsg::new(),
        })
    }

    /// The endpoint actually bound (the port picked for `tcp://host:*`).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Subscribers present now (subscribed and not left).
    fn present(&self) -> u64 {
        self.subscribed.saturating_sub(self.unsubscribed)
    }

    /// Waits for the subscribers, sends every tick, waits for the subscribers to leave.
    ///
    /// `abort` stops it at the next look (every 100 ms at most) with an error; `note` gets
    /// a line when the subscribers are in and the publishing starts.
    pub fn run(
        mut self,
        abort: &AtomicBool,
        note: &mut dyn FnMut(String),
        sent: &mut dyn FnMut(),
    ) -> Result<PubResult> {
        let join_wait_ns = self.join(abort)?;
        let subscribers = self.present();
        let left_before = self.unsubscribed;
        let total = self.cfg.total();
        note(format!(
            "{subscribers} subscribers in {:.2} s; publishing {total} messages ({} x {} every {} ms) after {} warm-up tick(s)",
            join_wait_ns as f64 / 1e9,
            self.cfg.passes,
            self.cfg.per_tick,
            self.cfg.interval.as_secs_f64() * 1000.0,
            self.cfg.warmup,
        ));

        let interval_ns = dur_ns(self.cfg.interval);
        let mut delay = (interval_ns > 0).then(crate::stats::LatencyHistogram::new);
        // Header first, zeros after: the payload sent is defined bytes, not recycled heap.
        let mut image = vec![0u8; self.cfg.size];
        let mut msg = RawMsg::new();
        let warm_start = self.warm_up(&mut image, &mut msg, interval_ns, abort)?;
        let last = total - 1;
        let mut seq = 0u64;
        let start = if self.cfg.warmup > 0 && interval_ns > 0 {
            warm_start.saturating_add(self.cfg.warmup.saturating_mul(interval_ns))
        } else {
            now_ns()
        };
        let mut first_left_tick = None;
        let mut interrupted = None;
        let mut total = total;
        for tick in 0..self.cfg.passes {
            let due = start.saturating_add(tick.saturating_mul(interval_ns));
            if interval_ns > 0 {
                self.idle_until(due, abort)?;
            }
            if crate::interrupt::interrupted() {
                self.end_mark(&mut image, &mut msg, seq, abort)?;
                seq += 1;
                total = seq;
                interrupted = Some(format!(
                    "interrupted by {} after {tick} of {} ticks",
                    crate::interrupt::interrupted_by(),
                    self.cfg.passes
                ));
                break;
            }
            if first_left_tick.is_none() && self.unsubscribed > left_before {
                first_left_tick = Some(tick);
            }
            for _ in 0..self.cfg.per_tick {
                let send_ns = now_ns();
                let flags = if seq == last {
                    FLAG_TIMESTAMP | FLAG_END
                } else {
                    FLAG_TIMESTAMP
                };
                self.stamp(&mut image, flags, seq, send_ns);
                msg.reset_uninit(self.cfg.size)?;
                msg.write_prefix(&image);
                self.send(&mut msg, seq, abort)?;
                if let Some(h) = delay.as_mut() {
                    h.record(send_ns.saturating_sub(due));
                }
                seq += 1;
            }
        }
        let end = now_ns();
        let left_early = self.unsubscribed - left_before;
        sent();

        self.wait_gone(abort)?;
        Ok(PubResult {
            endpoint: self.endpoint.clone(),
            transport: self.cfg.endpoint.transport(),
            interval_ms: self.cfg.interval.as_secs_f64() * 1000.0,
            per_tick: self.cfg.per_tick,
            passes: self.cfg.passes,
            warmup_ticks: self.cfg.warmup,
            message_size: self.cfg.size,
            messages: total,
            subscribers,
            join_wait_ns,
            send: Throughput {
                messages: total,
                payload_bytes: total.saturating_mul(self.cfg.size as u64),
                start_ns: start,
                end_ns: end,
            },
            send_delay: delay.map(|h| h.summary()),
            left: self.unsubscribed - left_before,
            left_early,
            first_left_tick,
            all_left: self.counts_leaving && self.present() == 0,
            interrupted,
            usage: ProcessUsage::of_this_process("publisher"),
        })
    }

    /// Waits for the subscribers (as many as asked, or for the configured wait); how long
    /// it waited.
    fn join(&mut self, abort: &AtomicBool) -> Result<u64> {
        let t0 = now_ns();
        match self.cfg.subscribers {
            Some(want) => self.wait_for_subscribers(want, t0, abort)?,
            None => {
                let until = t0 + dur_ns(self.cfg.wait);
                self.idle_until(until, abort)?;
            }
        }
        Ok(now_ns() - t0)
    }

    /// Sends the warm-up ticks, on the same schedule, flagged WARMUP; when they started.
    fn warm_up(
        &mut self,
        image: &mut [u8],
        msg: &mut RawMsg,
        interval_ns: u64,
        abort: &AtomicBool,
    ) -> Result<u64> {
        let warm_start = now_ns();
        let mut warm_seq = 0u64;
        for tick in 0..self.cfg.warmup {
            if interval_ns > 0 {
                self.idle_until(
                    warm_start.saturating_add(tick.saturating_mul(interval_ns)),
                    abort,
                )?;
            }
            for _ in 0..self.cfg.per_tick {
                self.stamp(image, FLAG_WARMUP, warm_seq, 0);
                msg.reset_uninit(self.cfg.size)?;
                msg.write_prefix(image);
                self.send(msg, 0, abort)?;
                warm_seq += 1;
            }
        }
        Ok(warm_start)
    }

    /// A signal (Ctrl-C, SIGTERM, SIGHUP) ends the stream here with one more message, `seq`,
    /// that carries the end mark, so every subscriber reports what it had as a whole,
    /// shorter stream.
    fn end_mark(
        &mut self,
        image: &mut [u8],
        msg: &mut RawMsg,
        seq: u64,
        abort: &AtomicBool,
    ) -> Result<()> {
        let send_ns = now_ns();
        self.stamp(image, FLAG_TIMESTAMP | FLAG_END, seq, send_ns);
        msg.reset_uninit(self.cfg.size)?;
        msg.write_prefix(image);
        self.send(msg, seq, abort)
    }

    /// Keeps the connections up until every subscriber, done, has closed (at most the
    /// linger): closing first could cut off what is still in the connection buffers.
    fn wait_gone(&mut self, abort: &AtomicBool) -> Result<()> {
        let until = now_ns() + dur_ns(self.cfg.linger);
        while self.counts_leaving && self.present() > 0 && now_ns() < until {
            if abort.load(Ordering::Relaxed) {
                break;
            }
            self.take_upstream(true)?;
        }
        Ok(())
    }

    /// Writes the header of one message into the start of `image`.
    #[inline]
    fn stamp(&self, image: &mut [u8], flags: u8, sequence: u64, send_ns: u64) {
        Header {
            flags,
            stream_id: self.cfg.stream_id,
            sequence,
            send_ns,
        }
        .encode(image);
    }

    /// Reads the subscriptions and unsubscriptions waiting on the socket; with `block`,
    /// waits up to 100 ms for the first.
    fn take_upstream(&mut self, block: bool) -> Result<()> {
        let mut flags = if block { 0 } else { zmq::DONTWAIT };
        loop {
            match self.upstream.recv(&mut self.sock, flags) {
                Ok(()) => {
                    match self.upstream.prefix(1).first() {
                        Some(1) => self.subscribed += 1,
                        Some(0) => self.unsubscribed += 1,
                        _ => {}
                    }
                    flags = zmq::DONTWAIT;
                }
                Err(zmq::Error::EAGAIN) | Err(zmq::Error::EINTR) => return Ok(()),
                Err(e) => return Err(zmq_err("receiving subscriptions")(e)),
            }
        }
    }

    fn check_abort(abort: &AtomicBool) -> Result<()> {
        if abort.load(Ordering::Relaxed) {
            return Err(Error::NodeGone(
                "the publisher was stopped because a subscriber process failed".into(),
            ));
        }
        Ok(())
    }

    fn wait_for_subscribers(&mut self, want: u64, t0: u64, abort: &AtomicBool) -> Result<()> {
        let deadline = t0 + dur_ns(self.cfg.timeout);
        while self.present() < want {
            Self::check_abort(abort)?;
            if now_ns() >= deadline {
                return Err(Error::Shortfall(format!(
                    "only {} of {} subscribers subscribed to {} within {}: the rest never \
                     connected or subscribed. Check that every subscriber process is running \
                     and points at this endpoint, that the open-file limits allow the \
                     connections, and raise --timeout on a loaded machine, or ask for fewer \
                     subscribers",
                    self.present(),
                    want,
                    self.endpoint,
                    crate::error::fmt_duration(self.cfg.timeout)
                )));
            }
            self.take_upstream(true)?;
        }
        Ok(())
    }

    /// Lets time pass until `due_ns`, reading subscriptions meanwhile; the last stretch is
    /// waited precisely.
    fn idle_until(&mut self, due_ns: u64, abort: &AtomicBool) -> Result<()> {
        loop {
            Self::check_abort(abort)?;
            self.take_upstream(false)?;
            let now = now_ns();
            if now >= due_ns {
                return Ok(());
            }
            let left = due_ns - now;
            if left <= 2_000_000 {
                crate::roles::wait_until(due_ns);
                return Ok(());
            }
            std::thread::sleep(Duration::from_nanos((left - 1_000_000).min(50_000_000)));
        }
    }

    /// Sends one message, waiting (NODROP) while a subscriber's queue is full, up to the timeout.
    fn send(&mut self, msg: &mut RawMsg, seq: u64, abort: &AtomicBool) -> Result<()> {
        let mut blocked_since: Option<u64> = None;
        loop {
            match msg.send(&mut self.sock, 0) {
                Ok(()) => return Ok(()),
                Err(zmq::Error::EINTR) => {}
                Err(zmq::Error::EAGAIN) => {
                    Self::check_abort(abort)?;
                    let since = *blocked_since.get_or_insert_with(now_ns);
                    if now_ns() - since >= dur_ns(self.cfg.timeout) {
                        return Err(Error::PeerStopped {
                            endpoint: self.endpoint.clone(),
                            done: seq,
                            expected: self.cfg.total(),
                            unit: "messages".into(),
                            timeout: self.cfg.timeout,
                            detail: " (sending blocked: a subscriber's queue stayed full, and \
                                     the publisher waits for it rather than drop)"
                                .into(),
                        });
                    }
                }
                Err(e) => return Err(zmq_err("sending")(e)),
            }
        }
    }
}

/// A duration in ns, saturating.
pub fn dur_ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

/// The source role on ticks: binds the node's first endpoint, says ready, waits for the
/// start, publishes, says sent after its last message, and waits for the subscribers to
/// leave (they leave when the runner releases them).
pub(super) fn run_node(
    spec: &super::NodeSpec,
    ticks: &crate::topology::Ticks,
    ctl: &mut dyn super::Control,
) -> Result<super::RoleReport> {
    let plan = &spec.sockets[0];
    let raw = plan.bind.first().ok_or_else(|| {
        Error::invalid(
            &format!("node {}: socket.bind", spec.name),
            "",
            "a source on ticks binds its endpoint (the subscribers connect to it)",
        )
    })?;
    let endpoint = Endpoint::parse(raw, Side::Bind)?;
    let cfg = PubConfig {
        endpoint,
        interval: Duration::from_secs_f64(ticks.interval_ms.max(0.0) / 1000.0),
        per_tick: ticks.per_tick,
        passes: ticks.passes,
        warmup: ticks.warmup,
        size: spec.size,
        subscribers: (spec.subscriptions > 0).then_some(u64::from(spec.subscriptions)),
        wait: Duration::from_millis(ticks.wait_ms),
        timeout: spec.timeout(),
        linger: Duration::from_millis(ticks.linger_ms),
        hwm: plan.options.sndhwm,
        io_threads: ticks.io_threads,
        stream_id: spec.stream_id,
        lossy: plan.options.xpub_nodrop == Some(false),
    };
    let publisher = Publisher::bind(cfg)?;
    ctl.ready(&[publisher.endpoint().to_string()])?;
    ctl.wait_start(spec.timeout())?;
    let mut said: Result<()> = Ok(());
    let r = publisher.run(&AtomicBool::new(false), &mut |_| {}, &mut || {
        said = ctl.sent()
    })?;
    said?;
    Ok(super::RoleReport {
        send: Some(r.send),
        send_delay: None,
        header: true,
        usage: Some(super::node_usage(spec)),
        publisher: Some(Box::new(r)),
        ..Default::default()
    })
}
