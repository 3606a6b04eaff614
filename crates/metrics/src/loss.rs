//! Loss: packets dropped ÷ packets sent, and where and why they were dropped.
//!
//! docs/measurements.md asks for the loss rate and for its location ("which queue, why"), because seed 001's
//! complaint about dummynet was exactly that one could not tell the emulator's drops from the
//! path's. A [`LossLedger`] counts drops by (location, reason); locations are free-form names (a
//! link's queue, "host-txqueue", "random-loss on link1"), reasons are the short names below so that
//! sim and lab ledgers line up.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Tail drop: the queue was full when the packet arrived.
pub const REASON_QUEUE_FULL: &str = "queue_full";
/// Dropped by an active queue manager (RED, CoDel) before the queue was full.
pub const REASON_AQM: &str = "aqm";
/// Dropped by configured random loss (a lossy link model).
pub const REASON_RANDOM: &str = "random";
/// Larger than a hop's MTU, dropped without a word (a path-MTU black hole).
pub const REASON_TOO_BIG: &str = "too_big";

/// Loss rate as a fraction: `lost ÷ sent`; 0 when nothing was sent.
pub fn loss_rate(lost: u64, sent: u64) -> f64 {
    if sent == 0 {
        0.0
    } else {
        lost as f64 / sent as f64
    }
}

/// One (location, reason) row of a drop ledger, as it appears in the result summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCount {
    /// Where the packet was dropped: a link's name, or `host` and the like for drops outside the
    /// path.
    pub location: String,
    /// Why: `queue_full`, `aqm`, `random`, ….
    pub reason: String,
    /// Packets dropped there for that reason.
    pub packets: u64,
}

/// Drop counts keyed by (location, reason), kept in a stable (sorted) order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LossLedger {
    counts: BTreeMap<(String, String), u64>,
}

impl LossLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// Count `packets` dropped at `location` for `reason`.
    pub fn record(&mut self, location: &str, reason: &str, packets: u64) {
        // Look up by reference first so the common case (an existing key) does not allocate.
        if let Some(c) = self
            .counts
            .iter_mut()
            .find(|((l, r), _)| l == location && r == reason)
            .map(|(_, c)| c)
        {
            *c += packets;
            return;
        }
        self.counts
            .insert((location.to_string(), reason.to_string()), packets);
    }

    /// Total packets dropped.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Packets dropped at one location, all reasons.
    pub fn at(&self, location: &str) -> u64 {
        self.counts
            .iter()
            .filter(|((l, _), _)| l == location)
            .map(|(_, c)| c)
            .sum()
    }

    /// Packets dropped for one reason, all locations.
    pub fn for_reason(&self, reason: &str) -> u64 {
        self.counts
            .iter()
            .filter(|((_, r), _)| r == reason)
            .map(|(_, c)| c)
            .sum()
    }

    /// Add another ledger's counts to this one (e.g. per-link ledgers into a run's ledger).
    pub fn merge(&mut self, other: &LossLedger) {
        for ((l, r), c) in &other.counts {
            *self.counts.entry((l.clone(), r.clone())).or_insert(0) += c;
        }
    }

    /// The rows for the result summary, sorted by location then reason.
    pub fn rows(&self) -> Vec<DropCount> {
        self.counts
            .iter()
            .map(|((l, r), c)| DropCount {
                location: l.clone(),
                reason: r.clone(),
                packets: *c,
            })
            .collect()
    }

    /// Rebuild a ledger from summary rows (duplicates add up).
    pub fn from_rows(rows: &[DropCount]) -> Self {
        let mut ledger = Self::new();
        for row in rows {
            ledger.record(&row.location, &row.reason, row.packets);
        }
        ledger
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_rate_is_dropped_over_sent() {
        assert_eq!(loss_rate(3, 1000), 0.003);
        assert_eq!(loss_rate(0, 0), 0.0);
        assert_eq!(loss_rate(5, 5), 1.0);
    }

    #[test]
    fn ledger_counts_by_location_and_reason() {
        let mut l = LossLedger::new();
        l.record("bottleneck", REASON_QUEUE_FULL, 40);
        l.record("bottleneck", REASON_QUEUE_FULL, 2);
        l.record("bottleneck", REASON_RANDOM, 3);
        l.record("access", REASON_QUEUE_FULL, 5);
        assert_eq!(l.total(), 50);
        assert_eq!(l.at("bottleneck"), 45);
        assert_eq!(l.for_reason(REASON_QUEUE_FULL), 47);
        let rows = l.rows();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows[0],
            DropCount {
                location: "access".into(),
                reason: "queue_full".into(),
                packets: 5
            }
        );
        assert_eq!(LossLedger::from_rows(&rows), l);
        let mut m = LossLedger::new();
        m.record("access", REASON_QUEUE_FULL, 1);
        m.merge(&l);
        assert_eq!(m.at("access"), 6);
        assert_eq!(m.total(), 51);
    }
}
