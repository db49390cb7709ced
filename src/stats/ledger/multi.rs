//! The ledger of every stream a receiver saw, by stream id, with the last one used kept
//! apart so a single stream records without a map lookup.

use super::stream::StreamLedger;
use super::summary::LossSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

///
/// The stream that received the last message is kept apart ("hot"), so a receiver of one
/// stream, or of a few in bursts, records without a map lookup per message.
#[derive(Debug, Clone, Default)]
pub struct Ledger {
    streams: BTreeMap<u32, StreamLedger>,
    hot: Option<(u32, StreamLedger)>,
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `seq` of stream `stream`.
    #[inline(always)]
    pub fn record(&mut self, stream: u32, seq: u64) {
        if let Some((id, l)) = &mut self.hot {
            if *id == stream {
                l.record(seq);
                return;
            }
        }
        self.record_other(stream, seq);
    }

    /// The stream that received the last message, and its ledger.
    #[inline(always)]
    pub fn last_stream(&mut self) -> Option<(u32, &mut StreamLedger)> {
        self.hot.as_mut().map(|(id, l)| (*id, l))
    }

    #[cold]
    fn record_other(&mut self, stream: u32, seq: u64) {
        self.cool();
        let mut l = self.streams.remove(&stream).unwrap_or_default();
        l.record(seq);
        self.hot = Some((stream, l));
    }

    fn cool(&mut self) {
        if let Some((id, l)) = self.hot.take() {
            self.streams.insert(id, l);
        }
    }

    /// Makes stream `id` part of the ledger even if none of its numbers arrived, so a
    /// summary with an expected count counts it as lost.
    pub fn expect_stream(&mut self, id: u32) {
        if !matches!(&self.hot, Some((h, _)) if *h == id) {
            self.streams.entry(id).or_default();
        }
    }

    /// Distinct numbers received over every stream.
    pub fn distinct(&self) -> u64 {
        let hot = self.hot.as_ref().map_or(0, |(_, l)| l.distinct());
        hot + self
            .streams
            .values()
            .map(StreamLedger::distinct)
            .sum::<u64>()
    }

    /// Every stream's ledger, by id.
    pub fn streams(&self) -> BTreeMap<u32, &StreamLedger> {
        let mut all: BTreeMap<u32, &StreamLedger> =
            self.streams.iter().map(|(k, v)| (*k, v)).collect();
        if let Some((id, l)) = &self.hot {
            all.insert(*id, l);
        }
        all
    }

    /// Combines another receiver's ledger.
    pub fn merge(&mut self, other: &Ledger) {
        self.cool();
        for (id, l) in other.streams() {
            self.streams.entry(id).or_default().merge(l);
        }
    }

    /// The figures over all streams; `expected` is per stream.
    pub fn summary(&self, expected: Option<u64>) -> LossSummary {
        let mut total = LossSummary::default();
        for l in self.streams().values() {
            total.add(&l.summary(expected));
        }
        total
    }
}

impl PartialEq for Ledger {
    fn eq(&self, other: &Self) -> bool {
        self.streams() == other.streams()
    }
}

impl Eq for Ledger {}

impl Serialize for Ledger {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a> {
            streams: BTreeMap<u32, &'a StreamLedger>,
        }
        Wire {
            streams: self.streams(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Ledger {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The full form, or a peer's arrival runs (docs/peers.md): per stream,
        // `[first_seq, length, arrival_ns]` in the order they came, replayed here. Read
        // through a JSON value: an untagged enum cannot read the numeric map keys inside.
        use serde::de::Error as _;
        let v = serde_json::Value::deserialize(d)?;
        let streams: BTreeMap<u32, StreamLedger> = if v.get("runs").is_some() {
            #[derive(Deserialize)]
            struct Runs {
                runs: BTreeMap<u32, Vec<(u64, u64, u64)>>,
            }
            serde_json::from_value::<Runs>(v)
                .map_err(D::Error::custom)?
                .runs
                .into_iter()
                .map(|(id, r)| (id, StreamLedger::from_runs(&r)))
                .collect()
        } else {
            #[derive(Deserialize)]
            struct Full {
                streams: BTreeMap<u32, StreamLedger>,
            }
            serde_json::from_value::<Full>(v)
                .map_err(D::Error::custom)?
                .streams
        };
        Ok(Ledger { streams, hot: None })
    }
}
