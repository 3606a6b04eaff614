//! Property tests over every registered algorithm and preset: no sequence of events, however
//! odd, makes a window zero, negative, NaN or infinite, or a pacing rate zero.

use longhaul_cc::{
    vectors, AckEvent, EcnEvent, Event, LossEvent, RateSample, RtoEvent, SentEvent, Setup, Time,
};
use proptest::prelude::*;
use std::time::Duration;

#[derive(Debug, Clone)]
enum Op {
    Ack {
        dt_us: u64,
        acked: u32,
        rtt_us: Option<u64>,
        recovery: bool,
        limited: bool,
        rate: bool,
    },
    Loss {
        dt_us: u64,
        lost: u32,
        first: bool,
    },
    Rto {
        dt_us: u64,
    },
    Ecn {
        dt_us: u64,
        first: bool,
    },
    Sent {
        dt_us: u64,
    },
    AppLimited {
        dt_us: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u64..200_000, 0u32..64, proptest::option::of(0u64..5_000_000), any::<bool>(), any::<bool>(), any::<bool>())
            .prop_map(|(dt_us, acked, rtt_us, recovery, limited, rate)| Op::Ack { dt_us, acked, rtt_us, recovery, limited, rate }),
        1 => (0u64..200_000, 0u32..1000, any::<bool>()).prop_map(|(dt_us, lost, first)| Op::Loss { dt_us, lost, first }),
        1 => (0u64..3_000_000).prop_map(|dt_us| Op::Rto { dt_us }),
        1 => (0u64..200_000, any::<bool>()).prop_map(|(dt_us, first)| Op::Ecn { dt_us, first }),
        1 => (0u64..1000).prop_map(|dt_us| Op::Sent { dt_us }),
        1 => (0u64..100_000).prop_map(|dt_us| Op::AppLimited { dt_us }),
    ]
}

fn check(name: &str, cc: &dyn longhaul_cc::CongestionControl, setup: &Setup) {
    let w = cc.cwnd();
    assert!(
        w.is_finite() && w >= setup.min_cwnd && w > 0.0 && w <= setup.max_cwnd,
        "{name}: cwnd {w}"
    );
    let s = cc.ssthresh();
    assert!(s.is_finite() && s > 0.0, "{name}: ssthresh {s}");
    if let Some(r) = cc.pacing_rate() {
        assert!(r > 0, "{name}: zero pacing rate");
    }
    if let Some(b) = cc.max_burst() {
        assert!(b > 0, "{name}: zero burst");
    }
    assert!(!cc.phase().is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn windows_stay_positive_and_finite(ops in proptest::collection::vec(op(), 1..400), huge in any::<bool>()) {
        let setup = Setup { max_cwnd: if huge { 1e9 } else { 5000.0 }, ..Setup::default() };
        for (name, spec) in vectors::vector_specs() {
            let mut cc = spec.build(&setup).unwrap();
            let mut now = Time::ZERO;
            let mut pn = 0u64;
            let mut delivered = 0u64;
            for op in &ops {
                let ev = match *op {
                    Op::Ack { dt_us, acked, rtt_us, recovery, limited, rate } => {
                        now += Duration::from_micros(dt_us);
                        pn += acked as u64;
                        delivered += acked as u64 * 1448;
                        Event::Ack(AckEvent {
                            now,
                            acked_packets: acked,
                            acked_bytes: acked as u64 * 1448,
                            rtt: rtt_us.map(Duration::from_micros),
                            prior_bytes_in_flight: (cc.cwnd() * 1448.0) as u64,
                            bytes_in_flight: (cc.cwnd() * 1448.0) as u64 / 2,
                            in_flight_at_send: (pn % 5000) * 1448,
                            largest_acked: pn,
                            next_packet: pn + 10,
                            rate: rate.then_some(RateSample {
                                delivered,
                                prior_delivered: delivered / 2,
                                interval: Duration::from_micros(dt_us),
                                is_app_limited: acked % 3 == 0,
                            }),
                            in_recovery: recovery,
                            cwnd_limited: limited,
                        })
                    }
                    Op::Loss { dt_us, lost, first } => {
                        now += Duration::from_micros(dt_us);
                        Event::Loss(LossEvent { now, lost_packets: lost, lost_bytes: lost as u64 * 1448, prior_bytes_in_flight: 0, largest_lost: pn, first_in_window: first })
                    }
                    Op::Rto { dt_us } => {
                        now += Duration::from_micros(dt_us);
                        Event::Rto(RtoEvent { now, bytes_in_flight: 1448, consecutive: 1 + (dt_us % 4) as u32 })
                    }
                    Op::Ecn { dt_us, first } => {
                        now += Duration::from_micros(dt_us);
                        Event::Ecn(EcnEvent { now, ce_packets: 1, bytes_in_flight: 0, first_in_window: first })
                    }
                    Op::Sent { dt_us } => {
                        now += Duration::from_micros(dt_us);
                        pn += 1;
                        Event::Sent(SentEvent { now, packet_number: pn + 10, bytes: 1448, bytes_in_flight: 1448, is_retransmission: false })
                    }
                    Op::AppLimited { dt_us } => {
                        now += Duration::from_micros(dt_us);
                        Event::AppLimited { now }
                    }
                };
                ev.apply(cc.as_mut());
                check(&name, cc.as_ref(), &setup);
            }
        }
    }
}

/// Inputs a well-behaved driver never sends, which a controller must still survive without a
/// panic, a NaN or an infinite window: time running backwards, zero and enormous RTTs, ACKs of
/// nothing, in-flight byte counts near `u64::MAX`, delivery samples over a nanosecond, and
/// windows starting near the largest allowed.
#[derive(Debug, Clone)]
struct Hostile {
    back_ns: u64,
    forward_ns: u64,
    acked: u32,
    rtt_ns: Option<u64>,
    in_flight: u64,
    interval_ns: u64,
    recovery: bool,
    kind: u8,
}

fn hostile() -> impl Strategy<Value = Hostile> {
    (
        (
            prop_oneof![Just(0u64), 0u64..1_000_000_000, Just(u64::MAX)],
            0u64..400_000_000,
            prop_oneof![Just(0u32), 1u32..100, Just(u32::MAX)],
        ),
        (
            proptest::option::of(prop_oneof![
                Just(0u64),
                1u64..1_000_000,
                Just(3_600_000_000_000u64),
                Just(u64::MAX)
            ]),
            prop_oneof![Just(0u64), 1u64..1_000_000_000, Just(u64::MAX)],
            prop_oneof![Just(0u64), Just(1u64), 1u64..1_000_000_000],
        ),
        any::<bool>(),
        0u8..12,
    )
        .prop_map(
            |((back_ns, forward_ns, acked), (rtt_ns, in_flight, interval_ns), recovery, kind)| {
                Hostile {
                    back_ns,
                    forward_ns,
                    acked,
                    rtt_ns,
                    in_flight,
                    interval_ns,
                    recovery,
                    kind,
                }
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn hostile_inputs_never_panic_or_produce_nan(
        ops in proptest::collection::vec(hostile(), 1..300),
        initial in prop_oneof![Just(10.0f64), Just(1e9f64)],
    ) {
        let setup = Setup { initial_cwnd: initial, max_cwnd: 1e9, ..Setup::default() };
        for (name, spec) in vectors::vector_specs() {
            let mut cc = spec.build(&setup).unwrap();
            let mut now = Time::from_secs_f64(1000.0);
            let mut pn = 0u64;
            let mut delivered = 0u64;
            for h in &ops {
                // Time moves forward, or jumps back (possibly to zero).
                now = if h.kind % 3 == 0 {
                    Time::from_nanos(now.as_nanos().saturating_sub(h.back_ns))
                } else {
                    now + Duration::from_nanos(h.forward_ns)
                };
                let ev = match h.kind {
                    0..=7 => {
                        // Packet numbers and byte counts near the top of their range too.
                        pn = if h.kind == 7 { u64::MAX } else { pn.saturating_add(u64::from(h.acked)) };
                        let acked_bytes = if h.kind == 5 { u64::MAX } else { u64::from(h.acked) * 1448 };
                        delivered = delivered.saturating_add(acked_bytes);
                        Event::Ack(AckEvent {
                            now,
                            acked_packets: h.acked,
                            acked_bytes,
                            rtt: h.rtt_ns.map(Duration::from_nanos),
                            prior_bytes_in_flight: h.in_flight,
                            bytes_in_flight: h.in_flight,
                            in_flight_at_send: h.in_flight,
                            largest_acked: pn,
                            next_packet: pn.saturating_add(10),
                            rate: (h.kind % 2 == 0).then_some(RateSample {
                                delivered,
                                prior_delivered: delivered / 2,
                                interval: Duration::from_nanos(h.interval_ns),
                                is_app_limited: h.acked % 3 == 0,
                            }),
                            in_recovery: h.recovery,
                            cwnd_limited: !h.recovery || h.kind == 1,
                        })
                    }
                    8 => Event::Loss(LossEvent {
                        now,
                        lost_packets: h.acked,
                        lost_bytes: u64::from(h.acked) * 1448,
                        prior_bytes_in_flight: h.in_flight,
                        largest_lost: pn,
                        first_in_window: h.recovery,
                    }),
                    9 => Event::Rto(RtoEvent { now, bytes_in_flight: h.in_flight, consecutive: 1 + h.acked % 5 }),
                    10 => Event::Sent(SentEvent { now, packet_number: pn.saturating_add(10), bytes: 1448, bytes_in_flight: h.in_flight, is_retransmission: h.recovery }),
                    _ => Event::AppLimited { now },
                };
                ev.apply(cc.as_mut());
                check(&name, cc.as_ref(), &setup);
            }
        }
    }
}
