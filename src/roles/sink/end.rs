//! How a sink ends: the wait for a message that ends without one (the runner's stop, an
//! idle slice or timeout, a signal), with or without a stream's end of transmission, and
//! the report of what arrived.

use super::super::{node_usage, Next, RoleReport};
use super::quiet_for;
use super::state::{SinkState, Then};
use crate::clock::now_ns;
use crate::error::Result;
use crate::net::Waiting;
use crate::stats::{LatencyHistogram, Throughput};
use crate::zmq;

impl SinkState<'_> {
    /// The wait for a message ended without one (`next` is not [`Next::Got`]).
    pub fn on_wait(&mut self, next: Next, wait: &Waiting) -> Result<Then> {
        // A quiet spell closes the intervals it spans as it goes (`--interval`).
        if self.next_tick_ns != u64::MAX {
            let now = now_ns();
            if now >= self.next_tick_ns {
                self.tick(now);
            }
        }
        match next {
            Next::Got => Ok(Then::Read),
            Next::Interrupted => {
                self.interrupted();
                Ok(Then::End)
            }
            Next::Stopped if self.eot.is_some() => Ok(self.on_stop_in_stream()),
            Next::Idle if self.eot.is_some() => self.on_idle_in_stream(wait),
            Next::Stopped => Ok(self.on_stop()),
            Next::Idle => self.on_idle(wait),
        }
    }

    /// The runner said stop to a sink in a stream: it ends once its end of transmission
    /// is covered, or after a quiet spell.
    fn on_stop_in_stream(&mut self) -> Then {
        let (spec, received) = (self.spec, self.received);
        let w = self.eot.as_mut().expect("checked");
        w.poll();
        let short = !w.covers(&spec.streams) || received < w.total(&spec.streams);
        if short && quiet_for(&self.patience) < self.drain {
            return Then::Read;
        }
        if w.covers(&spec.streams) {
            self.at_eot.get_or_insert(received);
            let want = w.total(&spec.streams);
            if received < want {
                self.cut_short = Some(format!(
                    "the end of transmission announced {want} messages; {received} arrived before the senders finished and the queue ran dry"
                ));
            }
        } else {
            self.cut_short = Some(format!(
                "the end of transmission never came; {received} messages arrived before the senders finished and the queue ran dry"
            ));
        }
        Then::End
    }

    /// A slice passed quiet for a sink in a stream: its channel is looked at, and the idle
    /// time adds up.
    fn on_idle_in_stream(&mut self, wait: &Waiting) -> Result<Then> {
        let (spec, received) = (self.spec, self.received);
        self.fresh_quiet();
        let w = self.eot.as_mut().expect("checked");
        w.poll();
        self.idle_total += self.patience.idle();
        self.quiet_at = self.quiet_at.or(self.patience.quiet_since_ns());
        self.patience = super::state::patience(self.slice, self.at_once);
        if w.covers(&spec.streams) {
            let want = w.total(&spec.streams);
            self.at_eot.get_or_insert(received);
            if received >= want {
                return Ok(Then::End);
            }
            if self.idle_total >= self.drain {
                self.cut_short = Some(format!(
                    "the end of transmission announced {want} messages; {received} arrived, and nothing more for {:.1} s after it",
                    self.idle_total.as_secs_f64()
                ));
                return Ok(Then::End);
            }
            return Ok(Then::Read);
        }
        if self.idle_total < spec.timeout() {
            return Ok(Then::Read);
        }
        if received == 0 {
            return Err(wait.error(zmq::Error::EAGAIN, 0, String::new()));
        }
        self.cut_short = Some(format!(
            "the end of transmission never came: nothing arrived for {:.1} s after {received} messages",
            self.idle_total.as_secs_f64()
        ));
        Ok(Then::End)
    }

    /// The runner said stop: short of what it expects (or, sharing a stream, unable to
    /// know), the queue may only be held up, so it takes its drain of quiet to give up.
    fn on_stop(&mut self) -> Then {
        let (spec, received, total) = (self.spec, self.received, self.total);
        let short = !spec.ends_itself || (self.ends < spec.streams.len() && received < total);
        if short && quiet_for(&self.patience) < self.drain {
            return Then::Read;
        }
        if spec.ends_itself && self.ends < spec.streams.len() && received < total {
            self.cut_short = Some(format!(
                "the end of the stream never came: {received} of {total} messages arrived before the senders finished and the queue ran dry"
            ));
        }
        Then::End
    }

    /// Nothing arrived for the whole timeout.
    fn on_idle(&mut self, wait: &Waiting) -> Result<Then> {
        let (spec, received, total) = (self.spec, self.received, self.total);
        if received == 0 && spec.ends_itself {
            return Err(wait.error(zmq::Error::EAGAIN, 0, String::new()));
        }
        let holes = if self.header {
            format!(
                " ({} missing by sequence number so far)",
                self.ledger.summary(None).lost
            )
        } else {
            String::new()
        };
        self.cut_short = Some(format!(
            "nothing arrived for {:.1} s after {received} of {total} messages{holes}",
            self.patience.idle().as_secs_f64()
        ));
        Ok(Then::End)
    }

    /// The report: the ledger, the latency of each stream, and the delivered rate over the
    /// time messages were arriving.
    pub fn finish(mut self) -> RoleReport {
        self.fresh_quiet();
        let spec = self.spec;
        let received = self.received;
        self.progress.finish();
        let end = if received == 0 {
            // Nothing arrived: no span (a merge of replicas leaves it out).
            self.start
        } else if self.cut_short.is_some() || !spec.ends_itself || self.eot.is_some() {
            // Rate over the time messages were arriving, not the idle wait, the wait for the
            // runner's stop (a share of a load-balanced stream), the drain after it, or the
            // wait for a stream's end of transmission.
            // The quiet spell's start is an estimate (one receive timeout back); the last
            // clock reading at an arrival bounds it from below.
            self.quiet_at
                .or(self.patience.quiet_since_ns())
                .unwrap_or_else(now_ns)
                .max(self.last_read_ns)
                .max(self.start)
        } else {
            now_ns()
        };
        let mut all = LatencyHistogram::new();
        for (h, c) in self.hists.iter_mut().zip(&self.clocks) {
            h.set_clock(c.check());
            all.merge(h);
        }
        let header = self.header;
        let intervals = match self.intervals.take() {
            Some(iv) => iv.finish(
                self.last_read_ns,
                &spec.name,
                received,
                Some(&self.ledger),
                &self.hists,
            ),
            None => Vec::new(),
        };
        RoleReport {
            intervals,
            latency: header.then_some(all),
            stream_latency: if header {
                spec.streams
                    .iter()
                    .map(|(id, _)| *id)
                    .zip(self.hists)
                    .collect::<Vec<_>>()
            } else {
                Vec::new()
            },
            delivered: Some(Throughput {
                messages: received,
                payload_bytes: received * spec.size as u64,
                start_ns: self.start,
                end_ns: end,
            }),
            ledger: header.then_some(self.ledger),
            cut_short: self.cut_short,
            protocol_error: self.protocol_error.or(self.frame_error),
            eot_ahead: self
                .at_eot
                .zip(self.eot.as_ref())
                .map(|(r, w)| w.total(&spec.streams).saturating_sub(r)),
            header,
            usage: Some(node_usage(spec)),
            io_waits: self.io.waits(),
            ..Default::default()
        }
    }
}
