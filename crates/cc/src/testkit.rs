//! Small constructors for events, for tests here and in the algorithm files.

use crate::event::{AckEvent, LossEvent, RtoEvent};
use crate::time::Time;
use std::time::Duration;

/// An ACK of `n` packets of 1448 bytes, window-limited, no RTT sample, at time zero.
pub fn ack(n: u32) -> AckEvent {
    AckEvent {
        now: Time::ZERO,
        acked_packets: n,
        acked_bytes: n as u64 * 1448,
        rtt: None,
        prior_bytes_in_flight: 0,
        bytes_in_flight: 0,
        in_flight_at_send: 0,
        largest_acked: 0,
        next_packet: 0,
        rate: None,
        in_recovery: false,
        cwnd_limited: true,
    }
}

/// An ACK of `n` packets at `now` carrying an RTT sample.
pub fn ack_rtt(now: Time, n: u32, rtt: Duration) -> AckEvent {
    AckEvent {
        now,
        rtt: Some(rtt),
        ..ack(n)
    }
}

/// A loss of one packet at time zero.
pub fn loss(first_in_window: bool) -> LossEvent {
    LossEvent {
        now: Time::ZERO,
        lost_packets: 1,
        lost_bytes: 1448,
        prior_bytes_in_flight: 0,
        largest_lost: 0,
        first_in_window,
    }
}

/// The `consecutive`-th retransmission timeout at time zero.
pub fn rto(consecutive: u32) -> RtoEvent {
    RtoEvent {
        now: Time::ZERO,
        bytes_in_flight: 0,
        consecutive,
    }
}
