//! Loss detection (RFC 9002 §6.1, RACK of RFC 8985 in its QUIC form).
//!
//! A packet still in flight is declared lost once a packet sent after it has been acknowledged
//! and either
//! - it is at least [`PACKET_THRESHOLD`] (3) packet numbers older than the largest acknowledged
//!   — TCP's "three duplicate ACKs", counted in packets so that it works with SACK ranges and
//!   stretch ACKs; or
//! - it was sent more than `9/8 · max(srtt, latest_rtt)` before now (the time threshold, which
//!   catches losses at the tail of a burst where fewer than 3 packets follow).
//!
//! Otherwise the earliest moment the time threshold will be crossed is returned, and the
//! connection arms a timer for it. Because send times increase with packet number, the scan can
//! stop at the first packet that is not (yet) lost: it starts at the cursor below which nothing
//! is in flight and leaves the cursor there, so over a connection's life each packet is visited
//! O(1) times.

use super::sent::{PacketState, SentPacket, SentPackets};
use crate::time::Time;
use std::time::Duration;

/// RFC 9002's kPacketThreshold.
pub const PACKET_THRESHOLD: u64 = 3;

/// What one detection pass found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lost {
    /// Packets newly declared lost.
    pub packets: u32,
    /// Payload bytes of those packets.
    pub bytes: u64,
    /// The largest packet number declared lost.
    pub largest: u64,
    /// Send time of the largest lost packet (for the recovery-period test).
    pub largest_time_sent: Time,
}

/// Declare lost what the thresholds say is lost, calling `on_lost` for each packet. Returns the
/// summary and when to look again (the time threshold of the oldest survivor), if ever.
pub fn detect_lost(
    sent: &mut SentPackets,
    now: Time,
    loss_delay: Duration,
    mut on_lost: impl FnMut(u64, &SentPacket),
) -> (Lost, Option<Time>) {
    let mut lost = Lost::default();
    let Some(largest) = sent.largest_acked else {
        return (lost, None);
    };
    let lost_before = now.checked_sub(loss_delay);
    let mut pn = sent.scan;
    let mut next = None;
    while pn < largest {
        sent.work += 1;
        let Some(p) = sent.get(pn) else {
            pn += 1;
            continue;
        };
        if p.state != PacketState::InFlight {
            pn += 1;
            continue;
        }
        let by_count = pn + PACKET_THRESHOLD <= largest;
        let by_time = lost_before.is_some_and(|t| p.time_sent <= t);
        if !(by_count || by_time) {
            next = Some(p.time_sent + loss_delay);
            break;
        }
        if let Some(p) = sent.lose(pn) {
            lost.packets += 1;
            lost.bytes += p.bytes as u64;
            lost.largest = pn;
            lost.largest_time_sent = p.time_sent;
            on_lost(pn, &p);
        }
        pn += 1;
    }
    sent.scan = sent.scan.max(pn);
    (lost, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent_at(times_ms: &[u64]) -> SentPackets {
        let mut s = SentPackets::new();
        for &t in times_ms {
            s.push(SentPacket {
                time_sent: Time::from_millis(t),
                chunk: 0,
                bytes: 1000,
                state: PacketState::InFlight,
                in_flight_at_send: 0,
                delivered: 0,
                delivered_time: Time::ZERO,
                first_sent_time: Time::ZERO,
                app_limited: false,
            });
        }
        s
    }

    #[test]
    fn three_packets_later_is_lost_two_is_not() {
        // Packets 0..=4 sent at 0..4 ms; 4 is acked 1 ms later, RTT 100 ms.
        let mut s = sent_at(&[0, 1, 2, 3, 4]);
        s.ack(4);
        s.largest_acked = Some(4);
        let mut seen = Vec::new();
        let (lost, next) = detect_lost(
            &mut s,
            Time::from_millis(5),
            Duration::from_micros(112_500),
            |pn, _| seen.push(pn),
        );
        assert_eq!(
            seen,
            vec![0, 1],
            "4 − 3 = 1: packets 0 and 1 reach the threshold"
        );
        assert_eq!((lost.packets, lost.bytes, lost.largest), (2, 2000, 1));
        // Packet 2 becomes lost 9/8 × 100 ms after it was sent.
        assert_eq!(next, Some(Time::from_micros(114_500)));
        assert_eq!(s.bytes_in_flight, 2000);
        let (lost, next) = detect_lost(
            &mut s,
            Time::from_micros(114_500),
            Duration::from_micros(112_500),
            |_, _| {},
        );
        assert_eq!((lost.packets, lost.largest), (1, 2));
        assert_eq!(next, Some(Time::from_micros(115_500)));
    }

    #[test]
    fn nothing_is_lost_before_an_ack() {
        let mut s = sent_at(&[0, 1, 2, 3, 4, 5]);
        let (lost, next) =
            detect_lost(&mut s, Time::from_secs_f64(10.0), Duration::ZERO, |_, _| {});
        assert_eq!((lost.packets, next), (0, None));
    }
}
