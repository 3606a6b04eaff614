//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02), as BBR needs it.
//!
//! Each packet remembers, when sent, how much had been delivered (`delivered`), when the last
//! delivery happened (`delivered_time`) and when the packet that started the current flight was
//! sent (`first_sent_time`). When an ACK covers packets, the newest of them (the largest
//! `delivered` at send) defines the sample: the bytes delivered since it was sent, over the
//! longer of its send interval (`time_sent − first_sent_time`) and ack interval
//! (`now − delivered_time`). Taking the longer interval keeps ACK compression from inflating
//! the rate. Samples over an interval shorter than min_rtt are discarded (draft §3.3).
//!
//! Application-limited periods: when the sender runs out of data with room in the window, the
//! point `delivered + in_flight` is remembered; packets sent until that much has been delivered
//! are marked app-limited, so a controller does not take their low rate for the path's.

use super::sent::{PacketState, SentPacket};
use crate::event::RateSample;
use crate::time::Time;
use std::time::Duration;

/// The sender's delivery-rate state: what has been delivered, since when, and whether the sender is
/// application-limited.
#[derive(Clone, Debug, Default)]
pub struct DeliveryRate {
    /// Payload bytes acknowledged so far.
    pub delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// Nonzero while app-limited: the `delivered` count that ends the period.
    app_limited_until: u64,
    // The sample being built for the current ACK.
    valid: bool,
    prior_delivered: u64,
    sample_app_limited: bool,
    send_elapsed: Duration,
    ack_elapsed: Duration,
}

/// Per-packet state to store in the sent record.
pub struct SendStamp {
    /// Bytes delivered when the packet was sent.
    pub delivered: u64,
    /// When the last delivery before it happened.
    pub delivered_time: Time,
    /// When the first packet of its flight was sent.
    pub first_sent_time: Time,
    /// It was sent while the sender was application-limited.
    pub app_limited: bool,
}

impl SendStamp {
    /// The record of a packet sent at `time_sent` with this stamp, carrying `bytes` of the
    /// sender's `chunk` ([`super::sent::SentPackets::push`] fills in the rest).
    pub fn record(self, time_sent: Time, chunk: u64, bytes: u32) -> SentPacket {
        SentPacket {
            time_sent,
            chunk,
            bytes,
            state: PacketState::InFlight,
            in_flight_at_send: 0,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited,
        }
    }
}

impl DeliveryRate {
    /// A packet is about to be sent with `in_flight` bytes already outstanding.
    pub fn on_send(&mut self, now: Time, in_flight: u64) -> SendStamp {
        if in_flight == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        SendStamp {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited: self.app_limited_until != 0,
        }
    }

    /// The sender has nothing to send with `in_flight` bytes outstanding.
    pub fn on_app_limited(&mut self, in_flight: u64) {
        self.app_limited_until = (self.delivered + in_flight).max(1);
    }

    /// A packet was acknowledged at `now`.
    pub fn on_acked(&mut self, p: &SentPacket, now: Time) {
        self.delivered += p.bytes as u64;
        self.delivered_time = now;
        if !self.valid || p.delivered >= self.prior_delivered {
            self.valid = true;
            self.prior_delivered = p.delivered;
            self.sample_app_limited = p.app_limited;
            self.send_elapsed = p.time_sent.saturating_since(p.first_sent_time);
            self.ack_elapsed = now.saturating_since(p.delivered_time);
            self.first_sent_time = p.time_sent;
        }
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
    }

    /// The sample for this ACK, if one is valid; resets for the next ACK.
    pub fn take_sample(&mut self, min_rtt: Option<Duration>) -> Option<RateSample> {
        if !std::mem::take(&mut self.valid) {
            return None;
        }
        let interval = self.send_elapsed.max(self.ack_elapsed);
        if interval.is_zero() || min_rtt.is_some_and(|m| interval < m) {
            return None;
        }
        Some(RateSample {
            delivered: self.delivered,
            prior_delivered: self.prior_delivered,
            interval,
            is_app_limited: self.sample_app_limited,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(rate: &mut DeliveryRate, at: Time, in_flight: u64) -> SentPacket {
        SentPacket {
            in_flight_at_send: in_flight + 1000,
            ..rate.on_send(at, in_flight).record(at, 0, 1000)
        }
    }

    #[test]
    fn a_steady_flow_samples_its_rate() {
        // 1000-byte packets every 1 ms, each acknowledged 100 ms after it was sent: 1 MB/s.
        let mut r = DeliveryRate::default();
        let mut sent = Vec::new();
        for i in 0..300u64 {
            // At each millisecond the ACK arrives first, then the next packet leaves.
            if i >= 100 {
                r.on_acked(&sent[(i - 100) as usize], Time::from_millis(i));
                let s = r.take_sample(Some(Duration::from_millis(100)));
                if i >= 200 {
                    let s = s.expect("a sample per ACK once a round trip of history exists");
                    assert_eq!(s.delivered_bytes(), 100_000);
                    assert_eq!(s.interval, Duration::from_millis(100));
                    assert_eq!(s.bytes_per_sec(), Some(1_000_000.0));
                    assert!(!s.is_app_limited);
                }
            }
            sent.push(packet(&mut r, Time::from_millis(i), 1000 * i.min(99)));
        }
    }

    #[test]
    fn a_sample_over_less_than_min_rtt_is_discarded() {
        // Ten packets sent 1 ms apart, the first acknowledged at 20 ms: its sample spans 20 ms
        // (the ACK interval), too short against a 50-ms min_rtt (ACK compression would inflate
        // it) and long enough against a 10-ms one.
        let mut r = DeliveryRate::default();
        let sent: Vec<SentPacket> = (0..10u64)
            .map(|i| packet(&mut r, Time::from_millis(i), 1000 * i))
            .collect();
        r.on_acked(&sent[0], Time::from_millis(20));
        assert_eq!(r.take_sample(Some(Duration::from_millis(50))), None);
        r.on_acked(&sent[1], Time::from_millis(21));
        let s = r
            .take_sample(Some(Duration::from_millis(10)))
            .expect("a sample");
        assert!(s.interval >= Duration::from_millis(10), "{:?}", s.interval);
    }

    #[test]
    fn app_limited_marks_last_until_the_bubble_is_delivered() {
        let mut r = DeliveryRate::default();
        let p0 = packet(&mut r, Time::from_millis(0), 0);
        r.on_app_limited(1000);
        let p1 = packet(&mut r, Time::from_millis(1), 1000);
        assert!(!p0.app_limited && p1.app_limited);
        r.on_acked(&p0, Time::from_millis(100));
        r.on_acked(&p1, Time::from_millis(101));
        // 2000 bytes delivered > the 1000 marked: later packets are not app-limited.
        let p2 = packet(&mut r, Time::from_millis(102), 0);
        assert!(!p2.app_limited);
    }
}
