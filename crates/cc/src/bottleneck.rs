//! An idealised single-bottleneck path for watching one controller work.
//!
//! One bulk sender, one FIFO bottleneck of a given rate and buffer, a fixed propagation delay,
//! and a receiver that acknowledges every `ack_every` packets (or after a delayed-ACK timer).
//! It is the smallest closed loop in which a window controller behaves as it does on a real
//! path: the ACK clock, queueing delay that grows with the window, drops when the buffer
//! overflows, loss detection three packets later, and a retransmission timeout when every
//! packet in flight is lost. `longhaul cc trace` prints what it records, and the shared test
//! vectors (`testdata/cc-vectors/`) are event sequences recorded from it.
//!
//! Deliberate simplifications (the full simulator in `crates/sim` has none of them): the path
//! never reorders, the reverse path has no queue, retransmissions are new packets (packet
//! numbers are never reused, as in QUIC) and the sender always has data. Pacing honours the
//! controller's `pacing_rate()` and `max_burst()`; without a pacing rate the sender is purely
//! ACK-clocked. Loss detection is the packet threshold alone: with data always waiting, three
//! packets follow every loss, so RACK's time threshold (which `longhaul_proto::loss` adds, for
//! tails) would find nothing more. The RTT estimator is RFC 6298's, kept here because this
//! crate sits below the transports that share `longhaul_proto::rtt`; the delivery-rate interval
//! is the ACK interval alone (no send-interval term). Recovery and timeouts follow the same
//! RFCs as the simulator's senders (RFC 6675's RecoveryPoint, RFC 6298 §5), and
//! `crates/sim/tests/transports.rs` checks that a controller behaves the same here and there.

use crate::controller::{CongestionControl, Setup};
use crate::event::{AckEvent, Event, LossEvent, RateSample, RtoEvent};
use crate::time::Time;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

/// The path and the receiver.
#[derive(Clone, Debug, PartialEq)]
pub struct PathConfig {
    /// Bottleneck rate in bits per second (on-wire bytes, headers included).
    pub rate_bps: f64,
    /// Round-trip propagation delay, excluding serialisation and queueing.
    pub base_rtt: Duration,
    /// Bottleneck buffer in packets (packets waiting, not counting the one being sent).
    pub buffer_packets: u32,
    /// Probability that the link loses a packet at random.
    pub random_loss: f64,
    /// The receiver acknowledges every `ack_every` packets.
    pub ack_every: u32,
    /// The receiver's delayed-ACK timer.
    pub ack_delay: Duration,
    /// Header bytes added to each packet on the wire (TCP/IP: 40).
    pub header_bytes: u32,
    /// Intervals during which the link drops everything (to provoke a timeout).
    pub outages: Vec<(Time, Time)>,
    /// Seed of the random-loss generator.
    pub seed: u64,
}

impl PathConfig {
    /// A path of `rate_bps` and `base_rtt` with a buffer of one bandwidth-delay product.
    pub fn new(rate_bps: f64, base_rtt: Duration, mss: u32) -> PathConfig {
        let mut p = PathConfig {
            rate_bps,
            base_rtt,
            buffer_packets: 0,
            random_loss: 0.0,
            ack_every: 1,
            ack_delay: Duration::from_millis(25),
            header_bytes: 40,
            outages: Vec::new(),
            seed: 1,
        };
        p.buffer_packets = p.bdp_packets(mss).ceil().max(1.0) as u32;
        p
    }

    /// The bandwidth-delay product in packets of `mss` payload bytes.
    pub fn bdp_packets(&self, mss: u32) -> f64 {
        self.rate_bps * self.base_rtt.as_secs_f64() / 8.0 / (mss + self.header_bytes) as f64
    }

    fn tx_time(&self, wire_bytes: u32) -> Duration {
        Duration::from_nanos((wire_bytes as f64 * 8.0 * 1e9 / self.rate_bps).round() as u64)
    }
}

/// The state of the loop at one sampling instant.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Sample {
    /// When the sample was taken.
    pub t: Time,
    /// The controller's congestion window, in packets.
    pub cwnd: f64,
    /// The controller's slow-start threshold, in packets.
    pub ssthresh: f64,
    /// Packets in flight.
    pub in_flight: u64,
    /// The most recent RTT sample.
    #[serde(with = "crate::serde_nanos::option")]
    pub rtt: Option<Duration>,
    /// Packets in the bottleneck queue (including the one being sent).
    pub queue: u64,
    /// Payload delivered since the previous sample, in bits per second.
    pub throughput_bps: f64,
    /// The controller's pacing rate in bytes per second, if it sets one.
    pub pacing_rate: Option<u64>,
    /// The controller's phase name ([`CongestionControl::phase`]).
    pub phase: &'static str,
}

/// Totals of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Totals {
    /// Simulated time the run covered, in seconds.
    pub duration_s: f64,
    /// Packets the sender transmitted, retransmissions included (each is a new packet number).
    pub sent_packets: u64,
    /// Payload bytes delivered to the receiver.
    pub delivered_bytes: u64,
    /// Packets dropped because the bottleneck buffer was full.
    pub queue_drops: u64,
    /// Packets dropped by the random-loss process or an outage.
    pub random_drops: u64,
    /// Packets the sender declared lost (by the three-packet threshold).
    pub losses_detected: u64,
    /// Retransmission timeouts that fired.
    pub rtos: u64,
    /// Payload throughput over the run, in bits per second.
    pub throughput_bps: f64,
    /// Throughput as a fraction of the bottleneck rate net of headers.
    pub utilization: f64,
}

#[derive(Clone, Copy, Debug)]
struct SentPacket {
    pn: u64,
    sent: Time,
    /// Dropped by the path (the sender learns it three packets later).
    dropped: bool,
    acked: bool,
    lost: bool,
    in_flight_at_send: u64,
    delivered_at_send: u64,
    delivered_time_at_send: Time,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A packet reaches the receiver.
    Arrive(u64),
    /// An ACK covering every packet up to this number reaches the sender.
    Ack(u64),
    /// The receiver's delayed-ACK timer, armed at this generation.
    DelAck(u64),
    /// The sender may send again (pacing).
    Wake,
    /// The retransmission timer, armed at this generation.
    Rto(u64),
    Sample,
}

/// Run `cc` over the path for `duration`, sampling every `sample_every`. Every event handed to
/// the controller is also passed to `on_event` together with the controller after it.
pub fn run(
    path: &PathConfig,
    setup: &Setup,
    cc: &mut dyn CongestionControl,
    duration: Duration,
    sample_every: Duration,
    on_event: &mut dyn FnMut(&Event, &dyn CongestionControl),
) -> (Vec<Sample>, Totals) {
    Loop::new(path, setup).run(cc, duration, sample_every, on_event)
}

struct Loop<'a> {
    path: &'a PathConfig,
    mss: u32,
    wire_bytes: u32,
    tx: Duration,
    one_way: Duration,
    heap: BinaryHeap<Reverse<(Time, u64, Ev)>>,
    seq: u64,
    rng: u64,
    // Bottleneck: departure times of packets queued or in service.
    departures: VecDeque<Time>,
    last_departure: Time,
    // Sender.
    sent: VecDeque<SentPacket>,
    next_pn: u64,
    in_flight: u64,
    delivered: u64,
    delivered_time: Time,
    largest_acked: Option<u64>,
    /// The first packet number sent after the latest recovery began. A loss of an earlier
    /// packet is part of that episode, not a new one (RFC 6675 §5's RecoveryPoint; RFC 9002
    /// §7.3.2), however long its detection takes.
    recovery_until: Option<u64>,
    next_send: Time,
    burst_left: u32,
    wake_armed: bool,
    rto_gen: u64,
    rto_backoff: u32,
    srtt: Option<Duration>,
    rttvar: Duration,
    last_rtt: Option<Duration>,
    // Receiver.
    rcv_expected: u64,
    rcv_largest: Option<u64>,
    rcv_pending: u32,
    delack_gen: u64,
    delack_armed: bool,
    totals: Totals,
}

impl<'a> Loop<'a> {
    fn new(path: &'a PathConfig, setup: &Setup) -> Loop<'a> {
        let wire_bytes = setup.mss + path.header_bytes;
        Loop {
            path,
            mss: setup.mss,
            wire_bytes,
            tx: path.tx_time(wire_bytes),
            one_way: path.base_rtt / 2,
            heap: BinaryHeap::new(),
            seq: 0,
            rng: path.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            departures: VecDeque::new(),
            last_departure: Time::ZERO,
            sent: VecDeque::new(),
            next_pn: 0,
            in_flight: 0,
            delivered: 0,
            delivered_time: Time::ZERO,
            largest_acked: None,
            recovery_until: None,
            next_send: Time::ZERO,
            burst_left: 0,
            wake_armed: false,
            rto_gen: 0,
            rto_backoff: 0,
            srtt: None,
            rttvar: Duration::ZERO,
            last_rtt: None,
            rcv_expected: 0,
            rcv_largest: None,
            rcv_pending: 0,
            delack_gen: 0,
            delack_armed: false,
            totals: Totals::default(),
        }
    }

    fn schedule(&mut self, t: Time, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, ev)));
    }

    /// xorshift64*: deterministic, dependency-free, good enough for Bernoulli loss.
    fn uniform(&mut self) -> f64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn run(
        mut self,
        cc: &mut dyn CongestionControl,
        duration: Duration,
        sample_every: Duration,
        on_event: &mut dyn FnMut(&Event, &dyn CongestionControl),
    ) -> (Vec<Sample>, Totals) {
        let end = Time::ZERO + duration;
        let mut samples = Vec::new();
        let mut last_sample_delivered = 0u64;
        self.schedule(Time::ZERO + sample_every, Ev::Sample);
        self.try_send(Time::ZERO, cc);
        while let Some(Reverse((now, _, ev))) = self.heap.pop() {
            if now > end {
                break;
            }
            match ev {
                Ev::Arrive(pn) => self.on_arrive(now, pn),
                Ev::Ack(largest) => self.on_ack(now, largest, cc, on_event),
                Ev::DelAck(gen) if gen == self.delack_gen && self.delack_armed => {
                    self.send_ack(now)
                }
                Ev::DelAck(_) => {}
                Ev::Wake => {
                    self.wake_armed = false;
                }
                Ev::Rto(gen) if gen == self.rto_gen && self.in_flight > 0 => {
                    self.on_rto(now, cc, on_event)
                }
                Ev::Rto(_) => {}
                Ev::Sample => {
                    while self.departures.front().is_some_and(|&d| d <= now) {
                        self.departures.pop_front();
                    }
                    let bits = (self.delivered - last_sample_delivered) as f64 * 8.0;
                    last_sample_delivered = self.delivered;
                    samples.push(Sample {
                        t: now,
                        cwnd: cc.cwnd(),
                        ssthresh: cc.ssthresh(),
                        in_flight: self.in_flight,
                        rtt: self.last_rtt,
                        queue: self.departures.len() as u64,
                        throughput_bps: bits / sample_every.as_secs_f64(),
                        pacing_rate: cc.pacing_rate(),
                        phase: cc.phase(),
                    });
                    self.schedule(now + sample_every, Ev::Sample);
                }
            }
            self.try_send(now, cc);
        }
        let secs = duration.as_secs_f64();
        self.totals.duration_s = secs;
        self.totals.delivered_bytes = self.delivered;
        self.totals.throughput_bps = self.delivered as f64 * 8.0 / secs;
        let net = self.path.rate_bps * self.mss as f64 / self.wire_bytes as f64;
        self.totals.utilization = self.totals.throughput_bps / net;
        (samples, self.totals)
    }

    fn in_outage(&self, t: Time) -> bool {
        self.path.outages.iter().any(|&(a, b)| t >= a && t < b)
    }

    fn try_send(&mut self, now: Time, cc: &mut dyn CongestionControl) {
        loop {
            let cwnd_bytes = (cc.cwnd() * self.mss as f64) as u64;
            if self.in_flight + self.mss as u64 > cwnd_bytes.max(self.mss as u64) {
                return;
            }
            if let Some(rate) = cc.pacing_rate().filter(|&r| r > 0) {
                if self.burst_left == 0 {
                    if now < self.next_send {
                        if !self.wake_armed {
                            self.wake_armed = true;
                            let t = self.next_send;
                            self.schedule(t, Ev::Wake);
                        }
                        return;
                    }
                    let burst = cc.max_burst().unwrap_or(1).max(1);
                    self.burst_left = burst;
                    let gap = burst as f64 * self.wire_bytes as f64 / rate as f64;
                    self.next_send = now.max(self.next_send) + Duration::from_secs_f64(gap);
                }
                self.burst_left -= 1;
            }
            self.send_one(now);
        }
    }

    fn send_one(&mut self, now: Time) {
        let pn = self.next_pn;
        self.next_pn += 1;
        self.totals.sent_packets += 1;
        if self.in_flight == 0 {
            // Nothing was outstanding: delivery-rate intervals restart here.
            self.delivered_time = now;
        }
        self.in_flight += self.mss as u64;
        while self.departures.front().is_some_and(|&d| d <= now) {
            self.departures.pop_front();
        }
        let mut dropped = false;
        if self.departures.len() as u64 > self.path.buffer_packets as u64 {
            self.totals.queue_drops += 1;
            dropped = true;
        } else if self.in_outage(now)
            || (self.path.random_loss > 0.0 && self.uniform() < self.path.random_loss)
        {
            self.totals.random_drops += 1;
            dropped = true;
        } else {
            let depart = now.max(self.last_departure) + self.tx;
            self.last_departure = depart;
            self.departures.push_back(depart);
            self.schedule(depart + self.one_way, Ev::Arrive(pn));
        }
        self.sent.push_back(SentPacket {
            pn,
            sent: now,
            dropped,
            acked: false,
            lost: false,
            in_flight_at_send: self.in_flight,
            delivered_at_send: self.delivered,
            delivered_time_at_send: self.delivered_time,
        });
        if self.sent.len() == 1 || self.in_flight == self.mss as u64 {
            self.arm_rto(now);
        }
    }

    fn rto_interval(&self) -> Duration {
        let base = match self.srtt {
            Some(s) => (s + 4 * self.rttvar).max(Duration::from_millis(200)),
            None => Duration::from_secs(1),
        };
        // RFC 6298 §5.5: double per expiry; the 60-s ceiling (§2.5) bounds it, not a count.
        (base * (1u32 << self.rto_backoff.min(16))).min(Duration::from_secs(60))
    }

    fn arm_rto(&mut self, now: Time) {
        self.rto_gen += 1;
        let (gen, t) = (self.rto_gen, now + self.rto_interval());
        self.schedule(t, Ev::Rto(gen));
    }

    fn on_arrive(&mut self, now: Time, pn: u64) {
        let out_of_order = pn != self.rcv_expected;
        self.rcv_expected = pn + 1;
        self.rcv_largest = Some(pn);
        self.rcv_pending += 1;
        if out_of_order || self.rcv_pending >= self.path.ack_every {
            self.send_ack(now);
        } else if !self.delack_armed {
            self.delack_armed = true;
            self.delack_gen += 1;
            let (gen, t) = (self.delack_gen, now + self.path.ack_delay);
            self.schedule(t, Ev::DelAck(gen));
        }
    }

    fn send_ack(&mut self, now: Time) {
        self.rcv_pending = 0;
        self.delack_armed = false;
        if let Some(largest) = self.rcv_largest {
            let t = now + self.one_way;
            self.schedule(t, Ev::Ack(largest));
        }
    }

    fn on_ack(
        &mut self,
        now: Time,
        largest: u64,
        cc: &mut dyn CongestionControl,
        on_event: &mut dyn FnMut(&Event, &dyn CongestionControl),
    ) {
        let prior_in_flight = self.in_flight;
        let mut acked = 0u32;
        let mut newest: Option<SentPacket> = None;
        for p in self.sent.iter_mut() {
            if p.pn > largest {
                break;
            }
            if !p.dropped && !p.acked && !p.lost {
                p.acked = true;
                acked += 1;
                newest = Some(*p);
            }
        }
        let Some(newest) = newest else { return };
        self.in_flight -= acked as u64 * self.mss as u64;
        self.delivered += acked as u64 * self.mss as u64;
        let prior_delivered_time = newest.delivered_time_at_send;
        self.delivered_time = now;
        self.largest_acked = Some(self.largest_acked.map_or(largest, |l| l.max(largest)));
        self.rto_backoff = 0;
        let rtt = now - newest.sent;
        self.last_rtt = Some(rtt);
        self.update_rtt(rtt);
        let cwnd_limited = {
            let w = cc.cwnd() * self.mss as f64;
            let used = prior_in_flight as f64;
            used + self.mss as f64 >= w || (cc.cwnd() < cc.ssthresh() && 2.0 * used >= w)
        };
        let ev = Event::Ack(AckEvent {
            now,
            acked_packets: acked,
            acked_bytes: acked as u64 * self.mss as u64,
            rtt: Some(rtt),
            prior_bytes_in_flight: prior_in_flight,
            bytes_in_flight: self.in_flight,
            in_flight_at_send: newest.in_flight_at_send,
            largest_acked: largest,
            next_packet: self.next_pn,
            rate: Some(RateSample {
                delivered: self.delivered,
                prior_delivered: newest.delivered_at_send,
                interval: now.saturating_since(prior_delivered_time),
                is_app_limited: false,
            }),
            in_recovery: self.recovery_until.is_some_and(|r| newest.pn < r),
            cwnd_limited,
        });
        ev.apply(cc);
        on_event(&ev, cc);
        self.detect_losses(now, largest, cc, on_event);
        while self.sent.front().is_some_and(|p| p.acked || p.lost) {
            self.sent.pop_front();
        }
        if self.in_flight > 0 {
            self.arm_rto(now);
        }
    }

    /// Packet threshold of three (RFC 9002 kPacketThreshold; TCP's three duplicate ACKs).
    fn detect_losses(
        &mut self,
        now: Time,
        largest: u64,
        cc: &mut dyn CongestionControl,
        on_event: &mut dyn FnMut(&Event, &dyn CongestionControl),
    ) {
        let mut lost = 0u32;
        let mut largest_lost = 0;
        let mut first_in_window = false;
        for p in self.sent.iter_mut() {
            if p.pn + 3 > largest {
                break;
            }
            if p.dropped && !p.lost {
                p.lost = true;
                lost += 1;
                largest_lost = p.pn;
                if self.recovery_until.is_none_or(|r| p.pn >= r) {
                    first_in_window = true;
                }
            }
        }
        if lost == 0 {
            return;
        }
        let prior = self.in_flight;
        self.in_flight -= lost as u64 * self.mss as u64;
        self.totals.losses_detected += lost as u64;
        if first_in_window {
            self.recovery_until = Some(self.next_pn);
        }
        let ev = Event::Loss(LossEvent {
            now,
            lost_packets: lost,
            lost_bytes: lost as u64 * self.mss as u64,
            prior_bytes_in_flight: prior,
            largest_lost,
            first_in_window,
        });
        ev.apply(cc);
        on_event(&ev, cc);
    }

    fn on_rto(
        &mut self,
        now: Time,
        cc: &mut dyn CongestionControl,
        on_event: &mut dyn FnMut(&Event, &dyn CongestionControl),
    ) {
        self.totals.rtos += 1;
        self.rto_backoff += 1;
        let ev = Event::Rto(RtoEvent {
            now,
            bytes_in_flight: self.in_flight,
            consecutive: self.rto_backoff,
        });
        // Everything outstanding is presumed lost; its data goes out again as new packets.
        self.sent.clear();
        self.in_flight = 0;
        self.recovery_until = Some(self.next_pn);
        ev.apply(cc);
        on_event(&ev, cc);
        self.burst_left = 0;
        self.next_send = now;
        self.try_send(now, cc);
        self.arm_rto(now);
    }

    fn update_rtt(&mut self, rtt: Duration) {
        // RFC 6298 §2.
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(s) => {
                let diff = s.abs_diff(rtt);
                self.rttvar = (self.rttvar * 3 + diff) / 4;
                self.srtt = Some((s * 7 + rtt) / 8);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::reno::Reno;

    fn reno() -> Reno {
        Reno::new(Setup::default(), 0.5)
    }

    #[test]
    fn reno_fills_a_bdp_buffered_path() {
        // 10 Mb/s, 40 ms: BDP = 10e6 × 0.04 / 8 / 1488 = 33.6 packets; buffer 34.
        let path = PathConfig::new(10e6, Duration::from_millis(40), 1448);
        assert_eq!(path.buffer_packets, 34);
        let mut cc = reno();
        let (samples, totals) = run(
            &path,
            &Setup::default(),
            &mut cc,
            Duration::from_secs(30),
            Duration::from_secs(1),
            &mut |_, _| {},
        );
        assert_eq!(samples.len(), 30);
        // With a BDP of buffer, Reno's sawtooth keeps the link busy: utilization near 1.
        assert!(
            totals.utilization > 0.93 && totals.utilization <= 1.0,
            "{totals:?}"
        );
        assert!(
            totals.queue_drops > 0,
            "the sawtooth must overflow the buffer"
        );
        assert_eq!(totals.random_drops, 0);
        assert!(totals.losses_detected >= totals.queue_drops.saturating_sub(3));
        // The minimum RTT seen is the propagation delay plus one serialisation (1.19 ms).
        let min_rtt = samples.iter().filter_map(|s| s.rtt).min().unwrap();
        assert!(min_rtt >= Duration::from_micros(41_190), "{min_rtt:?}");
    }

    #[test]
    fn an_outage_causes_a_timeout_and_recovery() {
        let mut path = PathConfig::new(10e6, Duration::from_millis(40), 1448);
        path.outages = vec![(Time::from_millis(2000), Time::from_millis(3000))];
        let mut cc = reno();
        let mut rtos = 0;
        let (_, totals) = run(
            &path,
            &Setup::default(),
            &mut cc,
            Duration::from_secs(8),
            Duration::from_secs(1),
            &mut |ev, _| rtos += matches!(ev, Event::Rto(_)) as u32,
        );
        assert!(totals.rtos >= 1 && rtos as u64 == totals.rtos, "{totals:?}");
        assert!(
            totals.utilization > 0.5,
            "the flow recovers after the outage: {totals:?}"
        );
    }

    #[test]
    fn one_buffer_overflow_is_one_reduction() {
        // 40 Mb/s, 50 ms, a buffer of one BDP (167 packets): the window overflows the buffer at
        // BDP + buffer ≈ 334 packets and Reno halves it once, to ≈ 167. Drops just before the
        // recovery point are detected three packets later, after an ACK of a packet sent in
        // recovery; counting them as a new episode would quarter the window instead.
        let mut path = PathConfig::new(40e6, Duration::from_millis(50), 1460);
        path.buffer_packets = 167;
        let mut cc = reno();
        let (samples, totals) = run(
            &path,
            &Setup::for_mtu(1500),
            &mut cc,
            Duration::from_secs(30),
            Duration::from_millis(100),
            &mut |_, _| {},
        );
        assert!(totals.queue_drops > 0, "{totals:?}");
        let after_slow_start = samples.iter().filter(|s| s.t >= Time::from_millis(2000));
        let lowest = after_slow_start.map(|s| s.cwnd).fold(f64::MAX, f64::min);
        assert!(lowest > 0.45 * (167.0 + 167.0), "lowest window {lowest}");
    }

    #[test]
    fn consecutive_timeouts_double_until_sixty_seconds() {
        // An outage from 1 s to the end: every timeout fires into it. RFC 6298 §5.5 doubles the
        // interval per expiry; the ceiling is 60 s (§2.5), not a count of doublings.
        let mut path = PathConfig::new(10e6, Duration::from_millis(40), 1448);
        path.outages = vec![(Time::from_millis(1000), Time::from_millis(400_000))];
        let mut cc = reno();
        let mut at = Vec::new();
        run(
            &path,
            &Setup::default(),
            &mut cc,
            Duration::from_secs(300),
            Duration::from_secs(10),
            &mut |ev, _| {
                if let Event::Rto(r) = ev {
                    at.push(r.now);
                }
            },
        );
        let gaps: Vec<Duration> = at.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.len() >= 9, "{gaps:?}");
        for w in gaps.windows(2) {
            let want = (w[0] * 2).min(Duration::from_secs(60));
            assert_eq!(w[1], want, "{gaps:?}");
        }
        assert_eq!(*gaps.last().unwrap(), Duration::from_secs(60), "{gaps:?}");
    }

    #[test]
    fn same_seed_same_run() {
        let mut path = PathConfig::new(10e6, Duration::from_millis(40), 1448);
        path.random_loss = 0.01;
        let go = |seed| {
            let mut p = path.clone();
            p.seed = seed;
            let mut cc = reno();
            run(
                &p,
                &Setup::default(),
                &mut cc,
                Duration::from_secs(5),
                Duration::from_secs(1),
                &mut |_, _| {},
            )
            .1
        };
        assert_eq!(go(7), go(7));
        assert_ne!(go(7), go(8));
    }
}
