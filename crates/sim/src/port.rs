//! One direction of a link: an output queue, a transmitter of fixed rate and a propagation
//! delay.
//!
//! The model is the one every packet simulator uses (a FIFO queue served at the link rate,
//! then a constant delay), computed so that it costs one scheduled event per packet per hop:
//!
//! * **The queue is virtual.** A FIFO served at a constant rate is fully described by the times
//!   its packets finish transmission: an arriving packet starts when the previous one finishes
//!   (or now, if the link is idle) and finishes one serialisation time later. So `enqueue`
//!   computes the departure time at once and keeps only the `(finish, size)` of packets not yet
//!   transmitted, to know the queue length the next arrival finds. No departure event exists.
//! * **The wire is a delay line.** Packets leave in FIFO order and the delay is constant, so
//!   arrivals at the far end are in the same order; the line is a ring (`Ring`) and only its head
//!   has an event (the pending-event set is then O(links), not
//!   O(packets in flight) as in ns-3, where 10 Gb/s × 180 ms means 150 k pending events).
//!
//! A port of unlimited rate is a pure delay (an uncongested access path). Random loss models
//! corruption on the wire: the packet is transmitted (it uses capacity) and vanishes. Its model
//! (`longhaul_path::loss`: Bernoulli or Gilbert–Elliott) is asked about every packet offered to
//! the port, before the queue decides, so a Gilbert–Elliott chain moves once per packet offered;
//! its verdict applies only to a packet the queue accepts.
//!
//! A link with jitter or reordering (`longhaul_path::delay`) gives each transmitted packet its
//! own delay instead; jitter keeps the order, so the line stays a FIFO, and a reordered packet
//! is inserted ahead of those it overtakes (walking back from the tail, as few as the shift
//! covers). Such a port's line head can move earlier, so the engine schedules an arrival for
//! every packet that becomes the head.
//! Queue limits count waiting packets (or bytes), not the one being transmitted, as Linux's
//! `txqueuelen` and ns-3's `DropTailQueue` do.

use crate::packet::{Ecn, Packet};
use crate::red::{Red, RedVerdict};
use crate::ring::Ring;
use longhaul_metrics::online::DelayAccumulator;
use longhaul_path::delay::{DelayConfig, DelayModel};
use longhaul_path::loss::{LossConfig, LossModel};
use rand::Rng;

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// The queue was full (drop-tail, or RED's physical limit).
    QueueFull,
    /// RED's early, probabilistic drop.
    RedEarly,
    /// RED's forced drop above its marking region.
    RedForced,
    /// Random loss on the link.
    RandomLoss,
    /// A sender's full host queue (`access.on_full = "drop"`): dropped before leaving the host.
    HostQueueFull,
}

impl DropReason {
    /// The reason as the drop log spells it (`queue_full`, `red_early`, `red_forced`,
    /// `random_loss`, `host_queue_full`).
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue_full",
            DropReason::RedEarly => "red_early",
            DropReason::RedForced => "red_forced",
            DropReason::RandomLoss => "random_loss",
            DropReason::HostQueueFull => "host_queue_full",
        }
    }
}

/// The limit of a port's queue, counting waiting packets (not the one being transmitted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// At most this many packets wait.
    Packets(u64),
    /// At most this many bytes wait.
    Bytes(u64),
}

/// Counters a port keeps for the summary.
#[derive(Clone, Debug, Default)]
pub struct PortStats {
    /// Packets transmitted (including those random loss then took).
    pub packets_out: u64,
    /// Bytes transmitted, headers included.
    pub bytes_out: u64,
    /// Application payload bytes accepted for transmission.
    pub payload_out: u64,
    /// Packets dropped because the queue was full.
    pub drops_queue: u64,
    /// Packets RED dropped (early or forced).
    pub drops_red: u64,
    /// Packets lost at random on the wire.
    pub drops_loss: u64,
    /// Packets RED marked with ECN-CE instead of dropping.
    pub ecn_marks: u64,
    /// Waiting time in the queue of every accepted packet, ns.
    pub queue_delay: DelayAccumulator,
    /// The most packets ever waiting.
    pub max_backlog_packets: u64,
}

impl PortStats {
    /// Packets dropped for any reason.
    pub fn drops(&self) -> u64 {
        self.drops_queue + self.drops_red + self.drops_loss
    }
}

/// What `enqueue` did with a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueued {
    /// Accepted; it reaches the far end at this time. `head` is true if it is now the head of
    /// the delay line (the caller must schedule its arrival).
    Sent {
        /// When it reaches the far end, ns.
        arrival: u64,
        /// It is now the head of the delay line.
        head: bool,
    },
    /// Dropped at `at` for `reason`.
    Dropped {
        /// When it was dropped, ns.
        at: u64,
        /// Why.
        reason: DropReason,
    },
}

/// One direction of a link: an output queue, a transmitter and a propagation delay.
#[derive(Debug)]
pub struct Port {
    /// Position in the engine's port table.
    pub index: usize,
    /// Index of the scenario link it belongs to.
    pub link: usize,
    /// It carries the link's ACK direction.
    pub reverse: bool,
    /// Bits per second; `None` is unlimited (a pure delay).
    pub rate_bps: Option<f64>,
    /// One-way propagation delay, ns (the mean, less the clamps, when `delay_model` is set).
    pub delay_ns: u64,
    /// Jitter and reordering; `None` for a constant delay.
    pub delay_model: Option<DelayModel>,
    /// Random loss on the wire.
    pub loss: LossModel,
    /// The queue's limit.
    pub limit: Limit,
    /// RED, if the queue runs it.
    pub red: Option<Red>,
    /// Serialisation time of an MTU-sized packet (RED's idle decay unit).
    pub mtu_tx_ns: u64,
    /// (finish time, size, payload) of packets accepted and not yet fully transmitted.
    backlog: Ring<(u64, u32, u32)>,
    backlog_bytes: u64,
    last_finish: u64,
    /// Packets on the wire: (arrival time at the far end, packet).
    line: Ring<(u64, Packet)>,
    /// Cached serialisation time of the last size seen.
    tx_cache: (u32, u64),
    /// The far end of this port runs on another thread (`engine::split`): `enqueue` leaves
    /// accepted packets to the caller, which sends them there, instead of the delay line.
    pub remote: bool,
    /// Counters for the summary.
    pub stats: PortStats,
}

impl Port {
    /// Each argument is one physical property of the port; a builder would only rename them.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        link: usize,
        reverse: bool,
        rate_bps: Option<f64>,
        delay: DelayConfig,
        loss: LossConfig,
        limit: Limit,
        red: Option<Red>,
        mtu: u32,
    ) -> Port {
        let mut p = Port {
            index: 0,
            link,
            reverse,
            rate_bps,
            delay_ns: delay.delay_ns,
            delay_model: (!delay.is_constant()).then(|| DelayModel::new(delay)),
            loss: LossModel::new(loss),
            limit,
            red,
            mtu_tx_ns: 0,
            backlog: Ring::new(),
            backlog_bytes: 0,
            last_finish: 0,
            line: Ring::new(),
            tx_cache: (0, 0),
            remote: false,
            stats: PortStats::default(),
        };
        p.mtu_tx_ns = p.tx_ns(mtu);
        p
    }

    /// A port with this one's properties and nothing in it or counted yet.
    pub fn empty_copy(&self) -> Port {
        let mut p = Port::new(
            self.link,
            self.reverse,
            self.rate_bps,
            self.delay_config(),
            self.loss.config(),
            self.limit,
            None,
            0,
        );
        p.index = self.index;
        p.mtu_tx_ns = self.mtu_tx_ns;
        p
    }

    /// The delay line's settings.
    pub fn delay_config(&self) -> DelayConfig {
        match &self.delay_model {
            Some(m) => *m.config(),
            None => DelayConfig::constant(self.delay_ns),
        }
    }

    /// Serialisation time of `size` bytes, rounded to the nearest ns.
    pub fn tx_ns(&mut self, size: u32) -> u64 {
        if self.tx_cache.0 == size {
            return self.tx_cache.1;
        }
        let t = match self.rate_bps {
            None => 0,
            Some(r) => (size as f64 * 8e9 / r).round() as u64,
        };
        self.tx_cache = (size, t);
        t
    }

    fn drain(&mut self, now: u64) {
        while let Some(&(finish, size, _)) = self.backlog.front() {
            if finish > now {
                break;
            }
            self.backlog.pop_front();
            self.backlog_bytes -= size as u64;
            if self.backlog.is_empty() {
                if let Some(red) = &mut self.red {
                    red.queue_emptied(finish);
                }
            }
        }
    }

    /// Packets waiting (not counting the one being transmitted) at `now`.
    pub fn waiting_packets(&mut self, now: u64) -> u64 {
        self.drain(now);
        self.backlog.len().saturating_sub(1) as u64
    }

    /// Bytes waiting (not counting the packet being transmitted) at `now`.
    pub fn waiting_bytes(&mut self, now: u64) -> u64 {
        self.drain(now);
        match self.backlog.front() {
            Some(&(_, head, _)) => self.backlog_bytes - head as u64,
            None => 0,
        }
    }

    /// When the packet now being transmitted finishes, if any.
    pub fn next_departure(&mut self, now: u64) -> Option<u64> {
        self.drain(now);
        self.backlog.front().map(|&(f, _, _)| f)
    }

    /// Packets and payload bytes accepted but not started by `now` (for end-of-run totals).
    pub fn unsent(&mut self, now: u64) -> (u64, u64) {
        self.drain(now);
        let n = self.backlog.len().saturating_sub(1);
        let payload = self.backlog.iter().skip(1).map(|&(_, _, p)| p as u64).sum();
        (n as u64, payload)
    }

    /// Offer a packet at `now`. `u_red` is a uniform [0, 1) draw from the port's random stream
    /// (drawn by the caller only when RED is configured); `lost` is the loss model's verdict on
    /// this packet (`self.loss`, asked by the caller); `rng` is the port's random stream, drawn
    /// from only by a delay model. Always inlined, for the reason `Engine::enqueue` is.
    #[inline(always)]
    pub fn enqueue<R: Rng + ?Sized>(
        &mut self,
        now: u64,
        mut pkt: Packet,
        u_red: f64,
        lost: bool,
        rng: &mut R,
    ) -> (Enqueued, Packet) {
        let size = pkt.size as u32;
        let tx = self.tx_ns(size);
        if self.rate_bps.is_some() {
            self.drain(now);
            let waiting = self.backlog.len().saturating_sub(1) as u64;
            let waiting_bytes = match self.backlog.front() {
                Some(&(_, head, _)) => self.backlog_bytes - head as u64,
                None => 0,
            };
            if let Some(red) = &mut self.red {
                let q = match self.limit {
                    Limit::Packets(_) => waiting as f64,
                    Limit::Bytes(_) => waiting_bytes as f64,
                };
                match red.on_arrival(now, q, self.mtu_tx_ns, u_red) {
                    RedVerdict::Accept => {}
                    RedVerdict::Early if red.params.ecn && pkt.ecn != Ecn::NotEct => {
                        if pkt.ecn == Ecn::Ect {
                            pkt.ecn = Ecn::Ce;
                            self.stats.ecn_marks += 1;
                        }
                    }
                    RedVerdict::Early => {
                        self.stats.drops_red += 1;
                        return (
                            Enqueued::Dropped {
                                at: now,
                                reason: DropReason::RedEarly,
                            },
                            pkt,
                        );
                    }
                    RedVerdict::Forced => {
                        self.stats.drops_red += 1;
                        return (
                            Enqueued::Dropped {
                                at: now,
                                reason: DropReason::RedForced,
                            },
                            pkt,
                        );
                    }
                }
            }
            let full = match self.limit {
                Limit::Packets(n) => waiting + 1 > n && !self.backlog.is_empty(),
                Limit::Bytes(b) => waiting_bytes + size as u64 > b && !self.backlog.is_empty(),
            };
            if full {
                self.stats.drops_queue += 1;
                return (
                    Enqueued::Dropped {
                        at: now,
                        reason: DropReason::QueueFull,
                    },
                    pkt,
                );
            }
        }
        let start = self.last_finish.max(now);
        let finish = start + tx;
        self.last_finish = finish;
        if self.rate_bps.is_some() {
            self.backlog.push_back((finish, size, pkt.payload as u32));
            self.backlog_bytes += size as u64;
            let n = self.backlog.len() as u64;
            if n > self.stats.max_backlog_packets {
                self.stats.max_backlog_packets = n;
            }
        }
        self.stats.queue_delay.record_ns(start - now);
        self.stats.packets_out += 1;
        self.stats.bytes_out += size as u64;
        self.stats.payload_out += pkt.payload as u64;
        if lost {
            self.stats.drops_loss += 1;
            return (
                Enqueued::Dropped {
                    at: finish,
                    reason: DropReason::RandomLoss,
                },
                pkt,
            );
        }
        let arrival = match &mut self.delay_model {
            None => finish + self.delay_ns,
            Some(m) => {
                let arrival = m.release(finish, rng).at;
                let head = self.insert_on_line(arrival, pkt);
                return (Enqueued::Sent { arrival, head }, pkt);
            }
        };
        if self.remote {
            return (
                Enqueued::Sent {
                    arrival,
                    head: false,
                },
                pkt,
            );
        }
        let head = self.line.is_empty();
        self.line.push_back((arrival, pkt));
        (Enqueued::Sent { arrival, head }, pkt)
    }

    /// Put a packet on the line in arrival order, after any due at the same time; true if it is
    /// the new head.
    fn insert_on_line(&mut self, arrival: u64, pkt: Packet) -> bool {
        let mut i = self.line.len();
        self.line.push_back((arrival, pkt));
        while i > 0 {
            let before = *self.line.get(i - 1).expect("in the line");
            if before.0 <= arrival {
                break;
            }
            *self.line.get_mut(i).expect("in the line") = before;
            i -= 1;
        }
        *self.line.get_mut(i).expect("in the line") = (arrival, pkt);
        i == 0
    }

    /// Take the head of the delay line if it has arrived by `now`; also returns the next head's
    /// arrival time.
    pub fn pop_arrived(&mut self, now: u64) -> Option<(Packet, Option<u64>)> {
        match self.line.front() {
            Some(&(t, _)) if t <= now => {
                let (_, p) = self.line.pop_front().expect("non-empty");
                Some((p, self.line.front().map(|&(t, _)| t)))
            }
            _ => None,
        }
    }

    /// Put a packet another thread transmitted on this port's delay line (`engine::split`);
    /// true if it is the new head (its arrival must be scheduled).
    pub fn put_on_line(&mut self, arrival: u64, pkt: Packet) -> bool {
        let head = self.line.is_empty();
        self.line.push_back((arrival, pkt));
        head
    }

    /// Packets on the wire (transmitted, not yet arrived).
    pub fn in_flight(&self) -> usize {
        self.line.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random stream the ports under test never draw from (their delays are constant).
    fn rng() -> rand::rngs::mock::StepRng {
        rand::rngs::mock::StepRng::new(0, 0)
    }

    fn pkt(size: u16) -> Packet {
        Packet {
            size,
            ..Packet::EMPTY
        }
    }

    #[test]
    fn fifo_service_and_propagation() {
        // 1 Gb/s: 1500 B take 12 µs. 10 ms delay.
        let mut p = Port::new(
            0,
            false,
            Some(1e9),
            DelayConfig::constant(10_000_000),
            LossConfig::None,
            Limit::Packets(2),
            None,
            1500,
        );
        let (a, _) = p.enqueue(0, pkt(1500), 0.0, false, &mut rng());
        assert_eq!(
            a,
            Enqueued::Sent {
                arrival: 12_000 + 10_000_000,
                head: true
            }
        );
        let (b, _) = p.enqueue(1_000, pkt(1500), 0.0, false, &mut rng());
        assert_eq!(
            b,
            Enqueued::Sent {
                arrival: 24_000 + 10_000_000,
                head: false
            }
        );
        // Two waiting would be the third packet: queue of 2 holds packets 2 and 3.
        let (c, _) = p.enqueue(2_000, pkt(1500), 0.0, false, &mut rng());
        assert!(matches!(c, Enqueued::Sent { .. }));
        assert_eq!(p.waiting_packets(2_000), 2);
        let (d, _) = p.enqueue(3_000, pkt(1500), 0.0, false, &mut rng());
        assert_eq!(
            d,
            Enqueued::Dropped {
                at: 3_000,
                reason: DropReason::QueueFull
            }
        );
        // After the first finishes (12 µs) one slot frees.
        assert_eq!(p.waiting_packets(12_000), 1);
        assert!(matches!(
            p.enqueue(12_000, pkt(1500), 0.0, false, &mut rng()).0,
            Enqueued::Sent { .. }
        ));
        assert_eq!(p.stats.queue_delay.count(), 4);
        assert!(p.pop_arrived(10_011_999).is_none());
        let (_, next) = p.pop_arrived(10_012_000).unwrap();
        assert_eq!(next, Some(10_024_000));
    }

    #[test]
    fn byte_limit_counts_waiting_bytes() {
        let mut p = Port::new(
            0,
            false,
            Some(1e6),
            DelayConfig::constant(0),
            LossConfig::None,
            Limit::Bytes(3000),
            None,
            1500,
        );
        assert!(matches!(
            p.enqueue(0, pkt(1500), 0.0, false, &mut rng()).0,
            Enqueued::Sent { .. }
        ));
        assert!(matches!(
            p.enqueue(0, pkt(1500), 0.0, false, &mut rng()).0,
            Enqueued::Sent { .. }
        ));
        assert!(matches!(
            p.enqueue(0, pkt(1000), 0.0, false, &mut rng()).0,
            Enqueued::Sent { .. }
        ));
        assert_eq!(p.waiting_bytes(0), 2500);
        assert!(matches!(
            p.enqueue(0, pkt(600), 0.0, false, &mut rng()).0,
            Enqueued::Dropped { .. }
        ));
        assert!(matches!(
            p.enqueue(0, pkt(500), 0.0, false, &mut rng()).0,
            Enqueued::Sent { .. }
        ));
    }

    #[test]
    fn unlimited_rate_is_a_pure_delay() {
        let mut p = Port::new(
            0,
            false,
            None,
            DelayConfig::constant(5_000),
            LossConfig::None,
            Limit::Packets(1),
            None,
            1500,
        );
        for i in 0..10 {
            assert_eq!(
                p.enqueue(0, pkt(1500), 0.0, false, &mut rng()).0,
                Enqueued::Sent {
                    arrival: 5_000,
                    head: i == 0
                }
            );
        }
    }

    #[test]
    fn a_reordered_packet_overtakes_and_becomes_the_head() {
        // 1 Gb/s (1500 B in 12 µs), 10 ms delay. The first packet goes out with a constant
        // delay; then the port reorders every packet by 30 µs, so the next two arrive 18 µs
        // and 6 µs before the first: the line must stay sorted by arrival time.
        let delay = DelayConfig {
            delay_ns: 10_000_000,
            reorder_p: 1.0,
            reorder_by_ns: 30_000,
            ..Default::default()
        };
        let mut p = Port::new(
            0,
            false,
            Some(1e9),
            DelayConfig::constant(10_000_000),
            LossConfig::None,
            Limit::Packets(100),
            None,
            1500,
        );
        let mut r = rand::rngs::mock::StepRng::new(0, 0); // every uniform draw is 0: reorder
        assert!(matches!(
            p.enqueue(0, pkt(1500), 0.0, false, &mut r).0,
            Enqueued::Sent {
                arrival: 10_012_000,
                head: true
            }
        ));
        p.delay_model = Some(DelayModel::new(delay));
        // Finishes at 24 µs, arrives at 10,024 − 30 = 9,994 µs: ahead of the first.
        assert_eq!(
            p.enqueue(0, pkt(1500), 0.0, false, &mut r).0,
            Enqueued::Sent {
                arrival: 9_994_000,
                head: true
            }
        );
        // Finishes at 36 µs, arrives at 10,006 µs: between the two.
        assert_eq!(
            p.enqueue(0, pkt(1500), 0.0, false, &mut r).0,
            Enqueued::Sent {
                arrival: 10_006_000,
                head: false
            }
        );
        let order: Vec<u64> = std::iter::from_fn(|| p.pop_arrived(u64::MAX))
            .map(|(_, next)| next.unwrap_or(0))
            .collect();
        assert_eq!(order, vec![10_006_000, 10_012_000, 0]);
    }

    #[test]
    fn jitter_and_reordering_follow_their_distributions() {
        // A packet every 20 ms, far apart next to the 1 ms jitter, so neither of the delay
        // line's clamps (never before the departure, never before the previous packet's
        // release) binds: each packet not reordered arrives after 50 ms + N(0, 1 ms). Of
        // n = 100,000 packets a fraction p = 0.1 is reordered by 30 ms (20 ms of delay left),
        // overtaking exactly the one packet before it (sent 20 ms earlier, arriving 10 ms
        // later) unless that one was reordered too; the count is binomial, sd √(n·p·(1−p)) =
        // 94.9. The remaining
        // delays' mean has sd σ/√m and their standard deviation has sd σ/√(2m) (normal
        // samples); all three must lie within 4 of their standard deviations.
        use rand::SeedableRng;
        let (delay_ns, jitter_ns, by_ns, gap) =
            (50_000_000u64, 1_000_000u64, 30_000_000, 20_000_000);
        let mut p = Port::new(
            0,
            false,
            None,
            DelayConfig {
                delay_ns,
                jitter_ns,
                reorder_p: 0.1,
                reorder_by_ns: by_ns,
                duplicate_p: 0.0,
            },
            LossConfig::None,
            Limit::Packets(100),
            None,
            1500,
        );
        let mut r = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        let n = 100_000u64;
        let (mut reordered, mut overtakes) = (0u64, 0u64);
        let mut delays = Vec::new();
        let mut last_seq = None;
        for k in 0..n {
            let pkt = Packet {
                seq: k,
                ..pkt(1500)
            };
            let Enqueued::Sent { arrival, .. } = p.enqueue(k * gap, pkt, 0.0, false, &mut r).0
            else {
                panic!("dropped")
            };
            let d = arrival as f64 - (k * gap) as f64;
            if d < (delay_ns - by_ns / 2) as f64 {
                reordered += 1;
            } else {
                delays.push(d);
            }
            // Take what has arrived before the next packet is sent.
            while let Some((q, _)) = p.pop_arrived((k + 1) * gap) {
                if last_seq.is_some_and(|l| q.seq < l) {
                    overtakes += 1;
                }
                last_seq = Some(last_seq.map_or(q.seq, |l: u64| l.max(q.seq)));
            }
        }
        let sd_count = (n as f64 * 0.1 * 0.9).sqrt();
        assert!(
            (reordered as f64 - 0.1 * n as f64).abs() < 4.0 * sd_count,
            "{reordered} reordered"
        );
        // A reordered packet arrives before its predecessor unless that one was reordered too.
        assert!(overtakes <= reordered && overtakes as f64 > 0.85 * reordered as f64);
        let m = delays.len() as f64;
        let mean = delays.iter().sum::<f64>() / m;
        let sd = (delays.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (m - 1.0)).sqrt();
        let sigma = jitter_ns as f64;
        assert!(
            (mean - delay_ns as f64).abs() < 4.0 * sigma / m.sqrt(),
            "mean delay {mean}"
        );
        assert!(
            (sd - sigma).abs() < 4.0 * sigma / (2.0 * m).sqrt(),
            "delay sd {sd}"
        );
    }
}
