//! The `CongestionControl` contract, checked for every registered algorithm against random
//! event sequences: the window stays finite and within `[min_cwnd, max_cwnd]`, the threshold
//! stays positive, pacing rates and bursts are sane, and nothing panics.

use longhaul_cc::{
    algorithms, AckEvent, CcSpec, Event, LossEvent, RateSample, RtoEvent, SentEvent, Setup, Time,
};
use proptest::prelude::*;
use std::time::Duration;

const MSS: u64 = 1448;

/// One step of a random transport.
#[derive(Clone, Debug)]
enum Step {
    Ack {
        gap_us: u64,
        packets: u32,
        rtt_us: Option<u64>,
        in_flight: u64,
        interval_us: u64,
        app_limited: bool,
        in_recovery: bool,
        cwnd_limited: bool,
    },
    Loss {
        packets: u32,
        first_in_window: bool,
    },
    Rto {
        consecutive: u32,
    },
    Sent {
        in_flight: u64,
    },
    AppLimited,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (
            0..200_000u64,
            0..64u32,
            proptest::option::of(0..2_000_000u64),
            0..20_000u64,
            0..3_000_000u64,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(gap_us, packets, rtt_us, in_flight, interval_us, app_limited, in_recovery, cwnd_limited)| {
                    Step::Ack {
                        gap_us,
                        packets,
                        rtt_us,
                        in_flight,
                        interval_us,
                        app_limited,
                        in_recovery,
                        cwnd_limited,
                    }
                }
            ),
        1 => (0..100u32, any::<bool>())
            .prop_map(|(packets, first_in_window)| Step::Loss { packets, first_in_window }),
        1 => (1..6u32).prop_map(|consecutive| Step::Rto { consecutive }),
        1 => (0..20_000u64).prop_map(|in_flight| Step::Sent { in_flight }),
        1 => Just(Step::AppLimited),
    ]
}

/// Turn steps into events with a monotonic clock, delivered count and packet numbers.
fn events(steps: &[Step]) -> Vec<Event> {
    let (mut now, mut delivered, mut packet) = (Time::from_millis(1), 0u64, 0u64);
    steps
        .iter()
        .map(|s| match *s {
            Step::Ack {
                gap_us,
                packets,
                rtt_us,
                in_flight,
                interval_us,
                app_limited,
                in_recovery,
                cwnd_limited,
            } => {
                now += Duration::from_micros(gap_us);
                let bytes = u64::from(packets) * MSS;
                let prior_delivered = delivered.saturating_sub(in_flight * MSS);
                delivered += bytes;
                packet += u64::from(packets);
                Event::Ack(AckEvent {
                    now,
                    acked_packets: packets,
                    acked_bytes: bytes,
                    rtt: rtt_us.map(Duration::from_micros),
                    prior_bytes_in_flight: (in_flight + u64::from(packets)) * MSS,
                    bytes_in_flight: in_flight * MSS,
                    in_flight_at_send: in_flight * MSS,
                    largest_acked: packet,
                    next_packet: packet + in_flight + 1,
                    rate: Some(RateSample {
                        delivered,
                        prior_delivered,
                        interval: Duration::from_micros(interval_us),
                        is_app_limited: app_limited,
                    }),
                    in_recovery,
                    cwnd_limited,
                })
            }
            Step::Loss {
                packets,
                first_in_window,
            } => Event::Loss(LossEvent {
                now,
                lost_packets: packets,
                lost_bytes: u64::from(packets) * MSS,
                prior_bytes_in_flight: 0,
                largest_lost: packet,
                first_in_window,
            }),
            Step::Rto { consecutive } => Event::Rto(RtoEvent {
                now,
                bytes_in_flight: 0,
                consecutive,
            }),
            Step::Sent { in_flight } => {
                packet += 1;
                Event::Sent(SentEvent {
                    now,
                    packet_number: packet,
                    bytes: MSS as u32,
                    bytes_in_flight: (in_flight + 1) * MSS,
                    is_retransmission: false,
                })
            }
            Step::AppLimited => Event::AppLimited { now },
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_algorithm_keeps_a_valid_window(steps in proptest::collection::vec(step(), 1..400)) {
        let setup = Setup::default();
        for algorithm in algorithms() {
            let mut cc = CcSpec::default_for(algorithm.name).unwrap().build(&setup).unwrap();
            for ev in events(&steps) {
                ev.apply(cc.as_mut());
                let w = cc.cwnd();
                prop_assert!(
                    w.is_finite() && w >= setup.min_cwnd && w <= setup.max_cwnd,
                    "{}: cwnd {} after {:?}", algorithm.name, w, ev
                );
                prop_assert!(cc.ssthresh() > 0.0, "{}: ssthresh {}", algorithm.name, cc.ssthresh());
                if let Some(b) = cc.max_burst() {
                    prop_assert!(b >= 1, "{}: burst {}", algorithm.name, b);
                }
                prop_assert!(!cc.phase().is_empty());
            }
        }
    }
}
