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
//! The sender is this loop over the parts every longhaul sender shares ([`crate::sender`]): the
//! in-flight records, RACK loss detection in RFC 9002 §6.1's form (three packets, or 9/8 of the
//! RTT for a tail), RFC 6298's RTT estimator and timeout (at least 200 ms, doubled per expiry
//! up to 60 s, restarted by every ACK while data is outstanding), delivery-rate samples and
//! pacing in Linux's train shape at the controller's `pacing_rate()` and `max_burst()` (without
//! a pacing rate the sender is purely ACK-clocked). Random loss draws from rand's `SmallRng`
//! seeded with [`PathConfig::seed`]. Recovery follows RFC 6675's RecoveryPoint (RFC 9002
//! §7.3.2): a loss of a packet sent before the latest reduction belongs to that episode. An
//! ACK's losses reach the controller before the ACK does, as in Linux and the simulator's
//! model; `crates/sim/tests/transports.rs` checks that a controller behaves the same here and
//! there.
//!
//! Deliberate simplifications (the full simulator in `crates/sim` has none of them): the path
//! never reorders, the reverse path has no queue, the receiver reports no ACK delay,
//! retransmissions are new packets (packet numbers are never reused, as in QUIC) and the sender
//! always has data. An ACK names the largest packet received; because the path never reorders,
//! it acknowledges every packet up to it that the path did not drop (what SACK would tell).

use crate::controller::{CongestionControl, Setup};
use crate::event::{AckEvent, Event, LossEvent, RtoEvent};
use crate::sender::loss::detect_lost;
use crate::sender::pacer::Train;
use crate::sender::rate::DeliveryRate;
use crate::sender::rtt::{backed_off, RttEstimator};
use crate::sender::sent::SentPackets;
use crate::time::Time;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

/// Linux's `TCP_RTO_MIN`.
const RTO_MIN: Duration = Duration::from_millis(200);
/// RFC 6298 §2.5's ceiling.
const RTO_MAX: Duration = Duration::from_secs(60);
/// RFC 6298 §2.1.
const INITIAL_RTO: Duration = Duration::from_secs(1);

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
    /// Packets the sender declared lost (by RACK's packet or time threshold).
    pub losses_detected: u64,
    /// Retransmission timeouts that fired.
    pub rtos: u64,
    /// Payload throughput over the run, in bits per second.
    pub throughput_bps: f64,
    /// Throughput as a fraction of the bottleneck rate net of headers.
    pub utilization: f64,
}

/// A slow-start threshold for people: `-` while there is none yet.
fn ssthresh_text(s: f64) -> String {
    if s >= crate::controller::INFINITE_SSTHRESH {
        "-".to_string()
    } else {
        format!("{s:.1}")
    }
}

/// Milliseconds of an RTT sample, NaN without one.
fn rtt_ms(d: Option<Duration>) -> f64 {
    d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
}

/// `longhaul cc trace --csv`: a header, then one line per sample (in-flight in packets of
/// `mss` bytes).
pub fn trace_csv(samples: &[Sample], mss: u32) -> String {
    let mut out = String::from(
        "t_s,cwnd_pkts,ssthresh_pkts,inflight_pkts,rtt_ms,queue_pkts,throughput_mbps,pacing_mbps,phase\n",
    );
    for s in samples {
        out += &format!(
            "{:.3},{:.2},{},{},{:.3},{},{:.3},{},{}\n",
            s.t.as_secs_f64(),
            s.cwnd,
            ssthresh_text(s.ssthresh),
            s.in_flight / mss as u64,
            rtt_ms(s.rtt),
            s.queue,
            s.throughput_bps / 1e6,
            s.pacing_rate
                .map_or(String::new(), |r| format!("{:.3}", r as f64 * 8.0 / 1e6)),
            s.phase
        );
    }
    out
}

/// `longhaul cc trace`'s table: a header, then one row per sample (in-flight in packets of
/// `mss` bytes).
pub fn trace_table(samples: &[Sample], mss: u32) -> String {
    let mut out = format!(
        "{:>8} {:>10} {:>10} {:>9} {:>9} {:>7} {:>10}  phase\n",
        "t (s)", "cwnd", "ssthresh", "inflight", "rtt (ms)", "queue", "Mb/s"
    );
    for s in samples {
        out += &format!(
            "{:>8.2} {:>10.1} {:>10} {:>9} {:>9.2} {:>7} {:>10.2}  {}\n",
            s.t.as_secs_f64(),
            s.cwnd,
            ssthresh_text(s.ssthresh),
            s.in_flight / mss as u64,
            rtt_ms(s.rtt),
            s.queue,
            s.throughput_bps / 1e6,
            s.phase
        );
    }
    out
}

impl Totals {
    /// The last line of `longhaul cc trace`'s table: throughput, utilization, drops, timeouts.
    pub fn line(&self) -> String {
        format!(
            "# {:.1} Mb/s, utilization {:.1} % (net of 40-byte headers), {} queue drops, {} random drops, {} timeouts",
            self.throughput_bps / 1e6,
            self.utilization * 100.0,
            self.queue_drops,
            self.random_drops,
            self.rtos
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A packet reaches the receiver.
    Arrive(u64),
    /// An ACK naming the largest packet received reaches the sender.
    Ack(u64),
    /// The receiver's delayed-ACK timer, armed at this generation.
    DelAck(u64),
    /// The sender may send again (pacing).
    Wake,
    /// The retransmission timer, armed at this generation.
    Rto(u64),
    /// RACK's time threshold may declare a packet lost.
    LossTimer,
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

type OnEvent<'e> = dyn FnMut(&Event, &dyn CongestionControl) + 'e;

struct Loop<'a> {
    path: &'a PathConfig,
    mss: u32,
    wire_bytes: u32,
    tx: Duration,
    one_way: Duration,
    heap: BinaryHeap<Reverse<(Time, u64, Ev)>>,
    seq: u64,
    rng: SmallRng,
    // Bottleneck: departure times of packets queued or in service.
    departures: VecDeque<Time>,
    last_departure: Time,
    /// Packets the path dropped, in order, until an ACK passes them.
    dropped: VecDeque<u64>,
    // Sender.
    sent: SentPackets,
    /// ACKs have covered every packet below this one.
    acked_below: u64,
    /// The first packet number sent after the latest reduction: an earlier packet's loss
    /// belongs to that episode (RFC 6675 §5's RecoveryPoint; RFC 9002 §7.3.2).
    recovery_end: u64,
    rtt: RttEstimator,
    /// The RTO before backoff and RACK's reordering window, updated with each RTT sample.
    rto_base: Duration,
    loss_delay: Duration,
    /// When RACK's time threshold declares the oldest packet in flight lost, if it will.
    loss_time: Option<Time>,
    rate: DeliveryRate,
    pacer: Train,
    wake_armed: bool,
    rto_gen: u64,
    rto_backoff: u32,
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
        let rtt = RttEstimator::new(INITIAL_RTO);
        Loop {
            path,
            mss: setup.mss,
            wire_bytes,
            tx: path.tx_time(wire_bytes),
            one_way: path.base_rtt / 2,
            heap: BinaryHeap::new(),
            seq: 0,
            rng: SmallRng::seed_from_u64(path.seed),
            departures: VecDeque::new(),
            last_departure: Time::ZERO,
            dropped: VecDeque::new(),
            sent: SentPackets::new(),
            acked_below: 0,
            recovery_end: 0,
            rto_base: INITIAL_RTO,
            loss_delay: rtt.loss_delay(),
            rtt,
            loss_time: None,
            rate: DeliveryRate::default(),
            pacer: Train::new(),
            wake_armed: false,
            rto_gen: 0,
            rto_backoff: 0,
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

    fn in_flight(&self) -> u64 {
        self.sent.bytes_in_flight
    }

    fn run(
        mut self,
        cc: &mut dyn CongestionControl,
        duration: Duration,
        sample_every: Duration,
        on_event: &mut OnEvent<'_>,
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
                Ev::Rto(gen) if gen == self.rto_gen && self.in_flight() > 0 => {
                    self.on_rto(now, cc, on_event)
                }
                Ev::Rto(_) => {}
                Ev::LossTimer if self.loss_time.is_some_and(|t| t <= now) => {
                    self.detect_losses(now, cc, on_event);
                    self.sent.trim();
                }
                Ev::LossTimer => {}
                Ev::Sample => {
                    while self.departures.front().is_some_and(|&d| d <= now) {
                        self.departures.pop_front();
                    }
                    let delivered = self.rate.delivered;
                    let bits = (delivered - last_sample_delivered) as f64 * 8.0;
                    last_sample_delivered = delivered;
                    samples.push(Sample {
                        t: now,
                        cwnd: cc.cwnd(),
                        ssthresh: cc.ssthresh(),
                        in_flight: self.in_flight(),
                        rtt: self.rtt.srtt().map(|_| self.rtt.latest()),
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
        self.totals.delivered_bytes = self.rate.delivered;
        self.totals.throughput_bps = self.rate.delivered as f64 * 8.0 / secs;
        let net = self.path.rate_bps * self.mss as f64 / self.wire_bytes as f64;
        self.totals.utilization = self.totals.throughput_bps / net;
        (samples, self.totals)
    }

    fn in_outage(&self, t: Time) -> bool {
        self.path.outages.iter().any(|&(a, b)| t >= a && t < b)
    }

    fn try_send(&mut self, now: Time, cc: &mut dyn CongestionControl) {
        let mss = self.mss as u64;
        loop {
            let cwnd_bytes = (cc.cwnd() * self.mss as f64) as u64;
            if self.in_flight() + mss > cwnd_bytes.max(mss) {
                return;
            }
            let pacing = cc.pacing_rate().filter(|&r| r > 0);
            if let Some(rate) = pacing {
                let at = self.pacer.release_time(now, rate);
                if at > now {
                    if !self.wake_armed {
                        self.wake_armed = true;
                        self.schedule(at, Ev::Wake);
                    }
                    return;
                }
            }
            self.send_one(now);
            if let Some(rate) = pacing {
                let burst = cc.max_burst().unwrap_or(1);
                self.pacer.on_sent(now, self.wire_bytes as u64, rate, burst);
            }
        }
    }

    fn send_one(&mut self, now: Time) {
        let pn = self.sent.next_pn();
        self.totals.sent_packets += 1;
        let stamp = self.rate.on_send(now, self.in_flight());
        self.sent.push(stamp.record(now, pn, self.mss));
        while self.departures.front().is_some_and(|&d| d <= now) {
            self.departures.pop_front();
        }
        if self.departures.len() as u64 > self.path.buffer_packets as u64 {
            self.totals.queue_drops += 1;
            self.dropped.push_back(pn);
        } else if self.in_outage(now)
            || (self.path.random_loss > 0.0 && self.rng.gen::<f64>() < self.path.random_loss)
        {
            self.totals.random_drops += 1;
            self.dropped.push_back(pn);
        } else {
            let depart = now.max(self.last_departure) + self.tx;
            self.last_departure = depart;
            self.departures.push_back(depart);
            self.schedule(depart + self.one_way, Ev::Arrive(pn));
        }
        if self.sent.packets_in_flight == 1 {
            self.arm_rto(now);
        }
    }

    fn arm_rto(&mut self, now: Time) {
        self.rto_gen += 1;
        let rto = backed_off(self.rto_base, self.rto_backoff, RTO_MAX);
        let (gen, t) = (self.rto_gen, now + rto);
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
        on_event: &mut OnEvent<'_>,
    ) {
        let prior_in_flight = self.in_flight();
        let mut acked = 0u32;
        let mut newest = None;
        for pn in self.acked_below..=largest {
            if self.dropped.front() == Some(&pn) {
                self.dropped.pop_front();
                continue;
            }
            if let Some(p) = self.sent.ack(pn) {
                self.rate.on_acked(&p, now);
                acked += 1;
                newest = Some((pn, p));
            }
        }
        self.acked_below = self.acked_below.max(largest + 1);
        let Some((pn, newest)) = newest else { return };
        self.sent.largest_acked = Some(self.sent.largest_acked.map_or(pn, |l| l.max(pn)));
        self.rto_backoff = 0;
        let rtt = now - newest.time_sent;
        // The receiver reports no ACK delay (its delayed ACKs count in the RTT, as in TCP).
        self.rtt.update(rtt, Duration::ZERO);
        self.rto_base = self.rtt.rto(Duration::ZERO, RTO_MIN, RTO_MAX);
        self.loss_delay = self.rtt.loss_delay();
        self.detect_losses(now, cc, on_event);
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
            bytes_in_flight: self.in_flight(),
            in_flight_at_send: newest.in_flight_at_send,
            largest_acked: largest,
            next_packet: self.sent.next_pn(),
            rate: self.rate.take_sample(self.rtt.min_rtt()),
            in_recovery: pn < self.recovery_end,
            cwnd_limited,
        });
        ev.apply(cc);
        on_event(&ev, cc);
        self.sent.trim();
        // RFC 6298 §5.3: restart the timer on an ACK while data is outstanding.
        if self.in_flight() > 0 {
            self.arm_rto(now);
        }
    }

    /// RACK (`sender::loss`); the controller hears of the losses, once per episode as a
    /// reduction.
    fn detect_losses(
        &mut self,
        now: Time,
        cc: &mut dyn CongestionControl,
        on_event: &mut OnEvent<'_>,
    ) {
        let prior = self.in_flight();
        let (lost, next) = detect_lost(&mut self.sent, now, self.loss_delay, |_, _| {});
        if next.is_some() && next != self.loss_time {
            self.schedule(next.unwrap_or(now), Ev::LossTimer);
        }
        self.loss_time = next;
        if lost.packets == 0 {
            return;
        }
        self.totals.losses_detected += lost.packets as u64;
        let first_in_window = lost.largest >= self.recovery_end;
        if first_in_window {
            self.recovery_end = self.sent.next_pn();
        }
        let ev = Event::Loss(LossEvent {
            now,
            lost_packets: lost.packets,
            lost_bytes: lost.bytes,
            prior_bytes_in_flight: prior,
            largest_lost: lost.largest,
            first_in_window,
        });
        ev.apply(cc);
        on_event(&ev, cc);
    }

    fn on_rto(&mut self, now: Time, cc: &mut dyn CongestionControl, on_event: &mut OnEvent<'_>) {
        self.totals.rtos += 1;
        self.rto_backoff += 1;
        let ev = Event::Rto(RtoEvent {
            now,
            bytes_in_flight: self.in_flight(),
            consecutive: self.rto_backoff,
        });
        // Everything outstanding is presumed lost; its data goes out again as new packets.
        for pn in self.sent.scan..self.sent.next_pn() {
            self.sent.lose(pn);
        }
        self.sent.scan = self.sent.next_pn();
        self.sent.trim();
        self.loss_time = None;
        self.recovery_end = self.sent.next_pn();
        ev.apply(cc);
        on_event(&ev, cc);
        self.pacer = Train::new();
        self.try_send(now, cc);
        self.arm_rto(now);
    }
}

/// A `longhaul cc trace` run as its flags give it: the path, the run's length and how often
/// it is sampled. [`TraceRun::check`] refuses what is out of range, naming the flag.
#[derive(Clone, Debug)]
pub struct TraceRun {
    /// Bottleneck rate, bits per second.
    pub rate_bps: f64,
    /// Round-trip propagation delay; positive.
    pub rtt: Duration,
    /// Packet size on the wire, 100..=65535 bytes.
    pub mtu: u32,
    /// Buffer in packets (default: one bandwidth-delay product).
    pub buffer: Option<u32>,
    /// Buffer as a multiple of the bandwidth-delay product, when `buffer` is not given.
    pub buffer_bdp: Option<f64>,
    /// Random loss probability, in [0, 1).
    pub loss: f64,
    /// The receiver acknowledges every this many packets; at least 1.
    pub ack_every: u32,
    /// Seed of the setup and of the random loss.
    pub seed: u64,
    /// Length of the run.
    pub duration: Duration,
    /// Sampling interval: positive, at most `duration`.
    pub every: Duration,
}

impl TraceRun {
    /// The sender's setup and the path, or why the run cannot be made.
    pub fn check(&self) -> Result<(Setup, PathConfig), String> {
        if self.mtu < 100 || self.mtu > 65_535 {
            return Err(format!("--mtu {} is out of range (100..=65535)", self.mtu));
        }
        if !(0.0..1.0).contains(&self.loss) {
            return Err(format!(
                "--loss {} must be a probability in [0, 1)",
                self.loss
            ));
        }
        if self.ack_every == 0 {
            return Err("--ack-every must be at least 1".into());
        }
        if self.rtt.is_zero() {
            return Err("--rtt must be positive".into());
        }
        if self.every.is_zero() || self.every > self.duration {
            return Err("--every must be positive and at most --duration".into());
        }
        let setup = Setup {
            seed: self.seed,
            ..Setup::for_mtu(self.mtu)
        };
        let mut path = PathConfig::new(self.rate_bps, self.rtt, setup.mss);
        if let Some(b) = self.buffer {
            path.buffer_packets = b;
        } else if let Some(x) = self.buffer_bdp {
            if !(x >= 0.0 && x.is_finite()) {
                return Err("--buffer-bdp must be a non-negative number".into());
            }
            path.buffer_packets = (path.bdp_packets(setup.mss) * x).round() as u32;
        }
        path.random_loss = self.loss;
        path.ack_every = self.ack_every;
        path.seed = self.seed;
        Ok((setup, path))
    }

    /// A warning when the round trip is longer than the run (`--rtt 180s` for `180ms`).
    pub fn rtt_warning(&self) -> Option<String> {
        (self.rtt > self.duration).then(|| {
            format!(
                "warning: --rtt {:?} is longer than --duration {:?}: the run ends before the \
                 first round trip completes (did you mean {}ms?)",
                self.rtt,
                self.duration,
                self.rtt.as_secs_f64()
            )
        })
    }

    /// The trace table's first line: `controller` over the path, its buffer and loss.
    pub fn header(
        &self,
        controller: &dyn std::fmt::Display,
        path: &PathConfig,
        mss: u32,
    ) -> String {
        let bdp = path.bdp_packets(mss);
        format!(
            "# {controller} over {:.0} Mb/s × {:.0} ms, MTU {}, buffer {} packets ({:.2} BDP), \
             loss {}",
            self.rate_bps / 1e6,
            self.rtt.as_secs_f64() * 1e3,
            self.mtu,
            path.buffer_packets,
            path.buffer_packets as f64 / bdp.max(1e-9),
            self.loss
        )
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

    fn trace_run() -> TraceRun {
        TraceRun {
            rate_bps: 1e9,
            rtt: Duration::from_millis(180),
            mtu: 1500,
            buffer: None,
            buffer_bdp: None,
            loss: 0.0,
            ack_every: 1,
            seed: 1,
            duration: Duration::from_secs(60),
            every: Duration::from_secs(1),
        }
    }

    #[test]
    fn an_rtt_longer_than_the_run_is_warned_about() {
        let t = TraceRun {
            rtt: Duration::from_secs(180),
            ..trace_run()
        };
        let w = t.rtt_warning().unwrap();
        assert!(
            w.contains("longer than --duration") && w.contains("180ms"),
            "{w}"
        );
        assert!(trace_run().rtt_warning().is_none());
    }

    #[test]
    fn a_trace_run_refuses_out_of_range_flags_by_name() {
        let bad = [
            TraceRun {
                mtu: 99,
                ..trace_run()
            },
            TraceRun {
                loss: 1.0,
                ..trace_run()
            },
            TraceRun {
                ack_every: 0,
                ..trace_run()
            },
            TraceRun {
                rtt: Duration::ZERO,
                ..trace_run()
            },
            TraceRun {
                every: Duration::from_secs(61),
                ..trace_run()
            },
            TraceRun {
                buffer_bdp: Some(-1.0),
                ..trace_run()
            },
        ];
        let flags = [
            "--mtu",
            "--loss",
            "--ack-every",
            "--rtt",
            "--every",
            "--buffer-bdp",
        ];
        for (t, flag) in bad.iter().zip(flags) {
            let e = t.check().unwrap_err();
            assert!(e.starts_with(flag), "{flag}: {e}");
        }
        let (setup, path) = TraceRun {
            buffer_bdp: Some(2.0),
            ..trace_run()
        }
        .check()
        .unwrap();
        let bdp = path.bdp_packets(setup.mss);
        assert_eq!(path.buffer_packets, (2.0 * bdp).round() as u32);
        let (_, path) = TraceRun {
            buffer: Some(7),
            ..trace_run()
        }
        .check()
        .unwrap();
        assert_eq!(path.buffer_packets, 7);
    }
}
