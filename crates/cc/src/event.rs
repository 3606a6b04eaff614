//! The events a transport feeds a congestion controller.
//!
//! Every event carries an explicit `now`; controllers never read a clock. The events mirror what
//! Linux hands a `tcp_congestion_ops` (`pkts_acked`'s `ack_sample`, `cong_control`'s
//! `rate_sample`, `ssthresh` on loss, `set_state(Loss)` on RTO, `in_ack_event` with ECE) so that
//! one algorithm can be written once and held to the same test vectors in both worlds.
//!
//! All events are plain `Copy` structs: delivering one never allocates.

use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A packet left the sender.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SentEvent {
    /// When the packet was sent.
    pub now: Time,
    /// The packet's number in the sender's sequence space (monotonic, never reused).
    pub packet_number: u64,
    /// Bytes on the wire counted against the window (payload for data packets).
    pub bytes: u32,
    /// Bytes in flight after this packet was sent.
    pub bytes_in_flight: u64,
    /// True for a retransmission of earlier data.
    pub is_retransmission: bool,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), as BBR needs it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateSample {
    /// Total bytes delivered to the peer so far, including this ACK.
    pub delivered: u64,
    /// Total bytes delivered when the newest acked packet was sent.
    pub prior_delivered: u64,
    /// The interval over which `delivered - prior_delivered` bytes were delivered.
    #[serde(with = "crate::serde_nanos")]
    pub interval: Duration,
    /// True if the sender was application-limited when the packet was sent.
    pub is_app_limited: bool,
}

impl RateSample {
    /// Bytes delivered in this sample's interval.
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered.saturating_sub(self.prior_delivered)
    }

    /// The delivery rate in bytes per second, or `None` for a zero-length interval.
    pub fn bytes_per_sec(&self) -> Option<f64> {
        let secs = self.interval.as_secs_f64();
        (secs > 0.0).then(|| self.delivered_bytes() as f64 / secs)
    }
}

/// An acknowledgement that newly acknowledged data (cumulatively or by SACK).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AckEvent {
    /// When the ACK arrived.
    pub now: Time,
    /// Packets newly acknowledged by this ACK (more than one for stretch or delayed ACKs).
    pub acked_packets: u32,
    /// Bytes newly acknowledged by this ACK.
    pub acked_bytes: u64,
    /// Round-trip time measured from a packet sent exactly once (Karn's rule), if any.
    #[serde(with = "crate::serde_nanos::option")]
    pub rtt: Option<Duration>,
    /// Bytes in flight before this ACK was processed.
    pub prior_bytes_in_flight: u64,
    /// Bytes in flight after this ACK was processed.
    pub bytes_in_flight: u64,
    /// Bytes in flight when the newest acknowledged packet was sent: the window that packet "saw"
    /// (ns-2 FAST's `cwnd_array_[seq]`, the delay-compensated w(t - RTT) of the fluid model).
    pub in_flight_at_send: u64,
    /// The largest packet number this ACK newly acknowledged.
    pub largest_acked: u64,
    /// The packet number the sender will use next (Linux `snd_nxt`): acknowledging a packet at or
    /// beyond a remembered `next_packet` means one round trip has passed.
    pub next_packet: u64,
    /// Delivery-rate sample, when the transport computes one.
    pub rate: Option<RateSample>,
    /// True while the sender is in loss recovery: the window must not grow.
    pub in_recovery: bool,
    /// True when the sender was limited by the window rather than by the application
    /// (Linux `tcp_is_cwnd_limited`): window growth is only earned when it was used.
    pub cwnd_limited: bool,
}

/// Loss was detected (three duplicate ACKs, SACK holes, or a RACK time threshold).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LossEvent {
    /// When the loss was detected.
    pub now: Time,
    /// Packets newly declared lost.
    pub lost_packets: u32,
    /// Bytes newly declared lost.
    pub lost_bytes: u64,
    /// Bytes in flight before the lost packets were removed from flight.
    pub prior_bytes_in_flight: u64,
    /// The largest packet number declared lost.
    pub largest_lost: u64,
    /// True if this is the first loss in the current window: the sender was not already in
    /// recovery for an earlier loss of the same window. Classic controllers reduce only then.
    pub first_in_window: bool,
}

/// The retransmission timer expired.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RtoEvent {
    /// When the timer fired.
    pub now: Time,
    /// Bytes in flight when the timer fired.
    pub bytes_in_flight: u64,
    /// How many consecutive timeouts, including this one.
    pub consecutive: u32,
}

/// The receiver echoed ECN Congestion Experienced marks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EcnEvent {
    /// When the echo arrived.
    pub now: Time,
    /// Packets newly reported as CE-marked.
    pub ce_packets: u32,
    /// Bytes in flight when the echo arrived.
    pub bytes_in_flight: u64,
    /// True if this is the first congestion signal in the current window.
    pub first_in_window: bool,
}

/// Any event, for recording and replaying event sequences (the shared test vectors).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A packet was sent ([`CongestionControl::on_sent`](crate::CongestionControl::on_sent)).
    Sent(SentEvent),
    /// New data was acknowledged ([`CongestionControl::on_ack`](crate::CongestionControl::on_ack)).
    Ack(AckEvent),
    /// Packets were declared lost
    /// ([`CongestionControl::on_loss`](crate::CongestionControl::on_loss)).
    Loss(LossEvent),
    /// The retransmission timer fired
    /// ([`CongestionControl::on_rto`](crate::CongestionControl::on_rto)).
    Rto(RtoEvent),
    /// ECN marks were echoed ([`CongestionControl::on_ecn`](crate::CongestionControl::on_ecn)).
    Ecn(EcnEvent),
    /// The application ran out of data
    /// ([`CongestionControl::on_app_limited`](crate::CongestionControl::on_app_limited)).
    AppLimited {
        /// When the application ran out of data.
        now: Time,
    },
}

impl Event {
    /// When the event happened.
    pub fn now(&self) -> Time {
        match self {
            Event::Sent(e) => e.now,
            Event::Ack(e) => e.now,
            Event::Loss(e) => e.now,
            Event::Rto(e) => e.now,
            Event::Ecn(e) => e.now,
            Event::AppLimited { now } => *now,
        }
    }

    /// Deliver this event to a controller.
    pub fn apply(&self, cc: &mut dyn crate::CongestionControl) {
        match self {
            Event::Sent(e) => cc.on_sent(e),
            Event::Ack(e) => cc.on_ack(e),
            Event::Loss(e) => cc.on_loss(e),
            Event::Rto(e) => cc.on_rto(e),
            Event::Ecn(e) => cc.on_ecn(e),
            Event::AppLimited { now } => cc.on_app_limited(*now),
        }
    }
}
