//! The receiver's packet-number bookkeeping and ACK policy.
//!
//! Received packet numbers are kept as ranges, newest first, at most [`TRACKED_RANGES`] of them;
//! an ACK reports the newest [`MAX_ACK_RANGES`]. Packets usually arrive in order, extending the
//! newest range in O(1); a reordered or retransmitted-late packet is placed by a walk from the
//! newest range, bounded by the cap. Ranges older than the cap are forgotten: by then they have
//! been reported in many ACKs, and the cumulative stream offset in every ACK covers their data.
//!
//! ACK policy (RFC 9000 §13.2, RFC 5681 §4.2): acknowledge every `ack_every` data packets,
//! counted in base-size packets as the sender's controller counts its window (a datagram of `n`
//! times the base payload counts `n`: Linux, likewise, acknowledges once more than a full-size
//! segment of data has arrived, whatever the packets that carried it); at the latest
//! `max_ack_delay` after the first unacknowledged one; and at once when a packet arrives out of
//! order (it opens or fills a gap — the sender's loss detection is waiting for exactly this
//! news, TCP's duplicate ACKs) or when the application freed a quarter of the receive window (a
//! window update, so a flow-blocked sender resumes).
//!
//! Why base-size packets: once the path-MTU search has found jumbo datagrams, a window of a few
//! base-size packets (a connection's start, or after a timeout) holds one datagram. Counted as
//! one packet, it would wait `max_ack_delay` for a second that the window cannot let go, and the
//! controller would take that wait for round-trip time.

use crate::packet::{AckRange, MAX_ACK_RANGES};
use longhaul_cc::Time;
use std::collections::VecDeque;
use std::time::Duration;

/// How many packet-number ranges the receiver remembers.
pub const TRACKED_RANGES: usize = 2 * MAX_ACK_RANGES;

/// A data packet of `len` payload bytes in base-size packets of `base` bytes: 1 up to twice the
/// base, else the whole base-size packets it carries.
fn units_of(len: u32, base: u32) -> u32 {
    (len / base.max(1)).max(1)
}

#[derive(Debug)]
pub struct AckState {
    ranges: VecDeque<AckRange>,
    /// Arrival time and echoed timestamp of the largest packet number received.
    largest_time: Time,
    largest_ts_us: u64,
    /// Data received since the last ACK was sent, in base-size packets.
    unacked: u32,
    deadline: Option<Time>,
    immediate: bool,
    ack_every: u32,
    max_ack_delay: Duration,
    /// The base payload size, bytes: the unit `ack_every` counts.
    base: u32,
    pub ce_count: u64,
}

/// What [`AckState::on_packet`] learned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Next in sequence.
    InOrder,
    /// New, but not next in sequence (a gap opened or was filled).
    OutOfOrder,
    /// Seen before.
    Duplicate,
}

impl AckState {
    /// Acknowledge every `ack_every` packets of `base` payload bytes' worth, or after
    /// `max_ack_delay`.
    pub fn new(ack_every: u32, max_ack_delay: Duration, base: u32) -> AckState {
        AckState {
            ranges: VecDeque::with_capacity(TRACKED_RANGES + 1),
            largest_time: Time::ZERO,
            largest_ts_us: 0,
            unacked: 0,
            deadline: None,
            immediate: false,
            ack_every: ack_every.max(1),
            max_ack_delay,
            base,
            ce_count: 0,
        }
    }

    pub fn largest(&self) -> Option<u64> {
        self.ranges.front().map(|r| r.high)
    }

    /// Record packet `pn` (sent at `ts_us`, `len` payload bytes) arriving at `now`, and
    /// schedule the ACK.
    pub fn on_packet(&mut self, now: Time, pn: u64, ts_us: u64, len: u32) -> Arrival {
        let arrival = self.insert(pn);
        if arrival != Arrival::Duplicate && self.largest() == Some(pn) {
            self.largest_time = now;
            self.largest_ts_us = ts_us;
        }
        // A duplicate is acknowledged at once too: its sender may have missed our ACK.
        self.unacked = self.unacked.saturating_add(units_of(len, self.base));
        if arrival != Arrival::InOrder || self.unacked >= self.ack_every {
            self.immediate = true;
        } else if self.deadline.is_none() {
            self.deadline = Some(now + self.max_ack_delay);
        }
        arrival
    }

    fn insert(&mut self, pn: u64) -> Arrival {
        let Some(first) = self.ranges.front_mut() else {
            self.ranges.push_front(AckRange { high: pn, low: pn });
            return if pn == 0 {
                Arrival::InOrder
            } else {
                Arrival::OutOfOrder
            };
        };
        if pn == first.high + 1 {
            first.high = pn;
            return Arrival::InOrder;
        }
        let mut i = 0;
        while i < self.ranges.len() {
            let r = self.ranges[i];
            if pn > r.high + 1 {
                self.ranges.insert(i, AckRange { high: pn, low: pn });
                self.cap();
                return Arrival::OutOfOrder;
            }
            if pn == r.high + 1 {
                // Only possible for i > 0 (handled above for 0): may close the gap above.
                self.ranges[i].high = pn;
                if self.ranges[i - 1].low == pn + 1 {
                    self.ranges[i - 1].low = self.ranges[i].low;
                    self.ranges.remove(i);
                }
                return Arrival::OutOfOrder;
            }
            if pn >= r.low {
                return Arrival::Duplicate;
            }
            if pn + 1 == r.low {
                self.ranges[i].low = pn;
                if let Some(next) = self.ranges.get(i + 1).copied() {
                    if next.high + 1 == pn {
                        self.ranges[i].low = next.low;
                        self.ranges.remove(i + 1);
                    }
                }
                return Arrival::OutOfOrder;
            }
            i += 1;
        }
        if self.ranges.len() < TRACKED_RANGES {
            self.ranges.push_back(AckRange { high: pn, low: pn });
        }
        Arrival::OutOfOrder
    }

    fn cap(&mut self) {
        while self.ranges.len() > TRACKED_RANGES {
            self.ranges.pop_back();
        }
    }

    /// Ask for an ACK now (window update).
    pub fn request_immediate(&mut self) {
        self.immediate = true;
    }

    /// An ACK should be sent at `now`.
    pub fn ack_due(&self, now: Time) -> bool {
        !self.ranges.is_empty() && (self.immediate || self.deadline.is_some_and(|d| d <= now))
    }

    /// When the delayed-ACK timer fires, if armed.
    pub fn deadline(&self) -> Option<Time> {
        if self.immediate {
            None
        } else {
            self.deadline
        }
    }

    /// Ranges for an ACK, newest first.
    pub fn ranges(&self) -> impl Iterator<Item = AckRange> + '_ {
        self.ranges.iter().copied().take(MAX_ACK_RANGES)
    }

    /// Echo and ACK-delay fields for an ACK sent at `now`.
    pub fn echo(&self, now: Time) -> (u64, u64) {
        (
            self.largest_ts_us,
            now.saturating_since(self.largest_time).as_micros() as u64,
        )
    }

    /// An ACK was sent.
    pub fn on_ack_sent(&mut self) {
        self.unacked = 0;
        self.deadline = None;
        self.immediate = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> AckState {
        AckState::new(2, Duration::from_millis(25), 1448)
    }

    fn ranges(s: &AckState) -> Vec<(u64, u64)> {
        s.ranges().map(|r| (r.high, r.low)).collect()
    }

    #[test]
    fn in_order_packets_ack_every_second_or_after_the_delay() {
        let mut s = state();
        let t0 = Time::from_millis(100);
        assert_eq!(s.on_packet(t0, 0, 1, 1448), Arrival::InOrder);
        assert!(!s.ack_due(t0));
        assert_eq!(s.deadline(), Some(t0 + Duration::from_millis(25)));
        assert!(s.ack_due(t0 + Duration::from_millis(25)));
        assert_eq!(s.on_packet(t0, 1, 2, 1448), Arrival::InOrder);
        assert!(s.ack_due(t0), "the second packet triggers the ACK");
        s.on_ack_sent();
        assert!(!s.ack_due(t0 + Duration::from_secs(1)));
        assert_eq!(ranges(&s), vec![(1, 0)]);
    }

    #[test]
    fn a_datagram_of_two_base_packets_or_more_is_acknowledged_at_once() {
        // Base payload 1448: 2895 bytes are one base-size packet's worth, 2896 two.
        assert_eq!(
            [1, 1448, 2895, 2896, 65_000].map(|len| units_of(len, 1448)),
            [1, 1, 1, 2, 44]
        );
        let t0 = Time::from_millis(100);
        let mut s = state();
        s.on_packet(t0, 0, 1, 65_000);
        assert!(
            s.ack_due(t0),
            "a jumbo datagram alone is acknowledged at once"
        );
        s.on_ack_sent();
        s.on_packet(t0, 1, 2, 2000);
        assert!(!s.ack_due(t0), "a datagram of less than two waits");
        s.on_packet(t0, 2, 3, 2000);
        assert!(s.ack_due(t0), "two of them make two");
    }

    #[test]
    fn gaps_ack_immediately_and_ranges_merge() {
        let mut s = state();
        let t = Time::from_millis(1);
        s.on_packet(t, 0, 0, 1448);
        s.on_ack_sent();
        assert_eq!(s.on_packet(t, 3, 0, 1448), Arrival::OutOfOrder);
        assert!(s.ack_due(t));
        s.on_packet(t, 5, 0, 1448);
        assert_eq!(ranges(&s), vec![(5, 5), (3, 3), (0, 0)]);
        assert_eq!(s.on_packet(t, 4, 0, 1448), Arrival::OutOfOrder);
        assert_eq!(ranges(&s), vec![(5, 3), (0, 0)]);
        s.on_packet(t, 1, 0, 1448);
        s.on_packet(t, 2, 0, 1448);
        assert_eq!(ranges(&s), vec![(5, 0)]);
        assert_eq!(s.on_packet(t, 2, 0, 1448), Arrival::Duplicate);
    }

    #[test]
    fn only_the_newest_ranges_are_kept_and_sent() {
        let mut s = state();
        for pn in (0..400u64).step_by(2) {
            s.on_packet(Time::ZERO, pn, 0, 1448);
        }
        assert_eq!(s.ranges.len(), TRACKED_RANGES);
        let sent: Vec<_> = s.ranges().collect();
        assert_eq!(sent.len(), MAX_ACK_RANGES);
        assert_eq!(sent[0].high, 398);
        assert_eq!(
            sent[MAX_ACK_RANGES - 1].high,
            398 - 2 * (MAX_ACK_RANGES as u64 - 1)
        );
    }
}
