//! BBR driven by a minimal packet-level model of one flow over one bottleneck: a FIFO link of
//! fixed rate with an unlimited queue, fixed propagation delay, per-packet ACKs, pacing and
//! delivery-rate samples as draft-cheng-iccrg-delivery-rate-estimation computes them. This
//! checks that the model BBR builds from real ACK clocks matches the path, and that it keeps
//! the pipe full without a standing queue. `BBR_TRACE=1 cargo test -p longhaul-cc --test
//! bbr_on_a_bottleneck -- --nocapture` prints the trajectory.

use longhaul_cc::algorithms::bbr::{Bbr, BbrConfig, Mode};
use longhaul_cc::{AckEvent, CongestionControl, RateSample, SentEvent, Setup, Time};
use std::collections::VecDeque;
use std::time::Duration;

const MSS: u64 = 1448;

/// One packet in flight, with the rate-sampling state recorded when it was sent.
struct InFlight {
    number: u64,
    sent: Time,
    acked_at: Time,
    /// Queueing delay it met at the bottleneck.
    queued: Duration,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
}

struct Path {
    rate: f64,
    one_way: Duration,
}

struct Trace {
    /// (time, bytes delivered so far, queueing delay of the acked packet)
    acks: Vec<(Time, u64, Duration)>,
    drain_ended: Option<Time>,
}

fn run(cc: &mut Bbr, path: &Path, until: Time) -> Trace {
    let tx_time = Duration::from_secs_f64(MSS as f64 / path.rate);
    let mut now = Time::ZERO;
    let mut flight: VecDeque<InFlight> = VecDeque::new();
    let (mut next_number, mut delivered) = (0u64, 0u64);
    let (mut delivered_time, mut first_sent_time) = (Time::ZERO, Time::ZERO);
    let (mut link_free, mut next_send) = (Time::ZERO, Time::ZERO);
    let mut trace = Trace {
        acks: Vec::new(),
        drain_ended: None,
    };
    while now < until {
        let can_send = (flight.len() as f64) < cc.cwnd();
        let send_at = can_send.then_some(next_send.max(now));
        let ack_at = flight.front().map(|p| p.acked_at);
        let send_first = match (send_at, ack_at) {
            (Some(s), Some(a)) => s < a,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => unreachable!("nothing in flight and no room to send"),
        };
        if send_first {
            if let Some(s) = send_at {
                now = s;
                if flight.is_empty() {
                    first_sent_time = now;
                    delivered_time = now;
                }
                let arrival = now + path.one_way;
                let start = arrival.max(link_free);
                link_free = start + tx_time;
                flight.push_back(InFlight {
                    number: next_number,
                    sent: now,
                    acked_at: link_free + path.one_way,
                    queued: start - arrival,
                    delivered,
                    delivered_time,
                    first_sent_time,
                });
                next_number += 1;
                cc.on_sent(&SentEvent {
                    now,
                    packet_number: next_number - 1,
                    bytes: MSS as u32,
                    bytes_in_flight: flight.len() as u64 * MSS,
                    is_retransmission: false,
                });
                let rate = cc.pacing_rate().unwrap() as f64;
                next_send = now + Duration::from_secs_f64(MSS as f64 / rate);
            }
        } else if let Some(a) = ack_at {
            now = a;
            let p = flight.pop_front().unwrap();
            let prior_in_flight = (flight.len() as u64 + 1) * MSS;
            delivered += MSS;
            let send_elapsed = p.sent - p.first_sent_time;
            let ack_elapsed = now - p.delivered_time;
            delivered_time = now;
            first_sent_time = p.sent;
            cc.on_ack(&AckEvent {
                now,
                acked_packets: 1,
                acked_bytes: MSS,
                rtt: Some(now - p.sent),
                prior_bytes_in_flight: prior_in_flight,
                bytes_in_flight: flight.len() as u64 * MSS,
                in_flight_at_send: 0,
                largest_acked: p.number,
                next_packet: next_number,
                rate: Some(RateSample {
                    delivered,
                    prior_delivered: p.delivered,
                    interval: send_elapsed.max(ack_elapsed),
                    is_app_limited: false,
                }),
                in_recovery: false,
                cwnd_limited: true,
            });
            if std::env::var("BBR_TRACE").is_ok() && p.number.trailing_zeros() >= 6 {
                eprintln!(
                    "{now} {:?} rtt {:?} cwnd {} bw {:.0} pacing {:?} flight {}",
                    cc.mode(),
                    now - p.sent,
                    cc.cwnd(),
                    cc.btl_bw(),
                    cc.pacing_rate(),
                    flight.len()
                );
            }
            if cc.mode() == Mode::ProbeBw && trace.drain_ended.is_none() {
                trace.drain_ended = Some(now);
            }
            trace.acks.push((now, delivered, p.queued));
        }
    }
    trace
}

#[test]
fn bbr_measures_a_100_mbps_40_ms_path_and_keeps_its_queue_short() {
    // 100 Mb/s = 12.5 MB/s; 40 ms base RTT (+0.116 ms to serialise one packet);
    // BDP = 500 kB = 345 packets.
    let path = Path {
        rate: 12.5e6,
        one_way: Duration::from_millis(20),
    };
    // This model's packets are payload only: no header bytes for the pacer to count.
    let setup = Setup {
        header_bytes: 0,
        ..Setup::default()
    };
    let mut cc = Bbr::new(setup, BbrConfig::default());
    let trace = run(&mut cc, &path, Time::from_millis(4_000));

    assert_eq!(cc.mode(), Mode::ProbeBw);
    let bw = cc.btl_bw();
    assert!(
        bw > 0.98 * path.rate && bw <= path.rate * 1.000_001,
        "btl_bw {bw} B/s"
    );
    let min_rtt = cc.min_rtt().unwrap().as_secs_f64();
    assert!((min_rtt - 0.040_116).abs() < 0.000_01, "min_rtt {min_rtt}");
    // Doubling from 10 packets reaches the 345-packet BDP in ~6 rounds of 40 ms (0.34 s).
    // STARTUP's cwnd, 2.885 × 345 + 3 × 25 → 1072 packets, keeps ~730 packets queued, so the
    // three rounds that confirm the plateau take ~124 ms each, and DRAIN about one more:
    // PROBE_BW from ~0.83 s.
    let drained = trace.drain_ended.expect("left DRAIN");
    assert!(
        drained > Time::from_millis(700) && drained < Time::from_millis(1_000),
        "PROBE_BW from {drained}"
    );

    // The last two seconds: the pipe is full and the queue short.
    let from = Time::from_millis(2_000);
    let last = trace.acks.iter().filter(|a| a.0 >= from);
    let (mut first, mut end, mut queued, mut n) = (None, (Time::ZERO, 0), 0.0, 0.0);
    for &(t, d, q) in last {
        first.get_or_insert((t, d));
        end = (t, d);
        queued += q.as_secs_f64();
        n += 1.0;
    }
    let (t0, d0) = first.unwrap();
    let throughput = (end.1 - d0) as f64 / (end.0 - t0).as_secs_f64();
    assert!(throughput > 0.97 * path.rate, "throughput {throughput} B/s");
    let mean_queue = queued / n;
    if std::env::var("BBR_TRACE").is_ok() {
        eprintln!(
            "btl_bw {bw:.0} B/s, min_rtt {min_rtt:.6} s, PROBE_BW from {drained}, \
             throughput {throughput:.0} B/s, mean queueing delay {mean_queue:.6} s"
        );
    }
    assert!(mean_queue < 0.005, "mean queueing delay {mean_queue} s");
}
