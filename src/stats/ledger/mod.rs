//! The loss ledger: which sequence numbers of each stream arrived, and how.
//!
//! A receiver records every sequence number it sees. The ledger keeps the set of received
//! numbers as sorted ranges, so it can say exactly what was lost (holes), duplicated (seen
//! twice) and reordered (a new number that arrived after a higher one; a duplicate never counts as reordered), and where the holes fall.
//! [`StreamLedger`] keeps one stream, [`Ledger`] all streams of a receiver, and
//! [`LossSummary`] is what either says about them.

mod multi;
mod stream;
mod summary;
#[cfg(test)]
mod tests;

pub use multi::Ledger;
pub use stream::StreamLedger;
pub use summary::{Gap, GapPosition, LossSummary, GAPS_LISTED};
