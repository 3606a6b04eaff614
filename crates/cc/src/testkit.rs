//! Small constructors for events, for the unit tests here and in the algorithm files.

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

/// Random event sequences for property tests: ACKs (single and stretch, with and without RTT
/// samples, in recovery or not, window-limited or not), first and later losses, and consecutive
/// timeouts, with time and packet numbers moving forward as a transport would report them.
#[cfg(test)]
pub fn arbitrary_events(
    max_len: usize,
) -> impl proptest::strategy::Strategy<Value = Vec<crate::event::Event>> {
    use crate::event::Event;
    use proptest::prelude::*;
    let step = (
        0u8..10,
        1u32..64,
        1u64..2_000_000,
        any::<bool>(),
        any::<bool>(),
    );
    proptest::collection::vec(step, 1..max_len).prop_map(|steps| {
        let mut now = Time::ZERO;
        let mut acked = 0u64;
        let mut timeouts = 0u32;
        steps
            .into_iter()
            .map(|(kind, n, rtt_us, flag_a, flag_b)| {
                now += Duration::from_micros(rtt_us / 8);
                match kind {
                    0..=6 => {
                        timeouts = 0;
                        acked += n as u64;
                        Event::Ack(AckEvent {
                            now,
                            largest_acked: acked,
                            next_packet: acked + 2 * n as u64,
                            rtt: flag_a.then(|| Duration::from_micros(rtt_us)),
                            in_recovery: kind == 6,
                            cwnd_limited: flag_b || kind < 3,
                            ..ack(n)
                        })
                    }
                    7 | 8 => Event::Loss(LossEvent {
                        now,
                        largest_lost: acked + 1,
                        first_in_window: flag_a,
                        ..loss(flag_a)
                    }),
                    _ => {
                        timeouts += 1;
                        Event::Rto(RtoEvent {
                            now,
                            ..rto(timeouts)
                        })
                    }
                }
            })
            .collect()
    })
}
