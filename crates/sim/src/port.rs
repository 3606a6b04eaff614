//! One direction of a link: the bottleneck queue and its transmitter (`longhaul_path::queue`,
//! the one the emulator runs too), then a propagation delay.
//!
//! The model is the one every packet simulator uses (a FIFO queue served at the link rate,
//! then a constant delay), computed so that it costs one scheduled event per packet per hop:
//!
//! * **The queue is virtual.** `longhaul_path::queue::Bottleneck` computes each packet's
//!   departure time when it arrives and keeps only what the next arrival needs to know (the
//!   finish times and sizes of packets not yet sent). No departure event exists. Its limits
//!   count waiting packets (or bytes), not the one being transmitted, as Linux's `txqueuelen`
//!   and ns-3's `DropTailQueue` do; its serialiser is exact over each busy period
//!   (`longhaul_path::serializer`), at a constant rate or by a mahimahi trace.
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
//! A link with jitter, reordering or duplication (`longhaul_path::delay`) gives each
//! transmitted packet its own delay instead; jitter keeps the order, so the line stays a FIFO,
//! and a reordered packet is inserted ahead of those it overtakes (walking back from the tail,
//! as few as the shift covers). A duplicated packet's copy is released with it (the engine
//! makes the copy: it owns the packets' bytes). Such a port's line head can move earlier, so
//! the engine schedules an arrival for every packet that becomes the head.

use crate::packet::{Ecn, Packet};
use crate::red::Red;
use crate::ring::Ring;
use longhaul_metrics::online::DelayAccumulator;
use longhaul_path::delay::{DelayConfig, DelayModel};
use longhaul_path::loss::{LossConfig, LossModel};
use longhaul_path::queue::{Bottleneck, RedUnit};
pub use longhaul_path::queue::{DropReason, QueueLimits};
use longhaul_path::serializer::Serializer;
use rand::Rng;

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
    /// Packets the link duplicated (each delivered twice).
    pub duplicates: u64,
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
        /// The link duplicated it: a copy reaches the far end at this time too (the caller
        /// puts the copy on the line, `put_copy_on_line`).
        duplicate: Option<u64>,
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
    /// Bits per second (a trace's mean rate); `None` is unlimited (a pure delay).
    pub rate_bps: Option<f64>,
    /// One-way propagation delay, ns (the mean, less the clamps, when `delay_model` is set).
    pub delay_ns: u64,
    /// Jitter, reordering and duplication; `None` for a constant delay.
    pub delay_model: Option<DelayModel>,
    /// Random loss on the wire.
    pub loss: LossModel,
    /// The queue and its transmitter.
    queue: Bottleneck,
    /// Packets on the wire: (arrival time at the far end, packet).
    line: Ring<(u64, Packet)>,
    /// The far end of this port runs on another thread (`engine::split`): `enqueue` leaves
    /// accepted packets to the caller, which sends them there, instead of the delay line.
    pub remote: bool,
    /// Counters for the summary.
    pub stats: PortStats,
}

impl Port {
    /// Each argument is one physical property of the port; a builder would only rename them.
    /// RED counts in the queue's own unit: packets when the queue has a packet limit, else
    /// bytes (a scenario's queue has one of the two).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        link: usize,
        reverse: bool,
        serializer: Serializer,
        delay: DelayConfig,
        loss: LossConfig,
        limits: QueueLimits,
        red: Option<Red>,
        mtu: u32,
    ) -> Port {
        let unit = if limits.packets.is_some() {
            RedUnit::Packets
        } else {
            RedUnit::Bytes
        };
        Port {
            index: 0,
            link,
            reverse,
            rate_bps: serializer.mean_rate_bps(),
            delay_ns: delay.delay_ns,
            delay_model: (!delay.is_constant()).then(|| DelayModel::new(delay)),
            loss: LossModel::new(loss),
            queue: Bottleneck::new(serializer, limits, red, unit, mtu),
            line: Ring::new(),
            remote: false,
            stats: PortStats::default(),
        }
    }

    /// This port with `overhead` bytes of framing added to every packet it serialises (the
    /// link's `overhead`): a packet occupies its size plus that much of the rate and the queue
    /// (`longhaul_path::queue`). Its counters still count the packets' own bytes.
    pub fn with_overhead(mut self, overhead: u32) -> Port {
        self.queue = self.queue.with_overhead(overhead);
        self
    }

    /// A port with this one's properties (RED aside) and nothing in it or counted yet.
    pub fn empty_copy(&self) -> Port {
        Port {
            index: self.index,
            link: self.link,
            reverse: self.reverse,
            rate_bps: self.rate_bps,
            delay_ns: self.delay_ns,
            delay_model: self
                .delay_model
                .as_ref()
                .map(|m| DelayModel::new(*m.config())),
            loss: LossModel::new(self.loss.config()),
            queue: self.queue.empty_copy(),
            line: Ring::new(),
            remote: false,
            stats: PortStats::default(),
        }
    }

    /// The delay line's settings.
    pub fn delay_config(&self) -> DelayConfig {
        match &self.delay_model {
            Some(m) => *m.config(),
            None => DelayConfig::constant(self.delay_ns),
        }
    }

    /// The queue's drop-tail limits.
    pub fn limits(&self) -> QueueLimits {
        self.queue.limits()
    }

    /// The queue's RED, if it runs one.
    pub fn red(&self) -> Option<&Red> {
        self.queue.red()
    }

    /// Serialisation time of an MTU-sized packet and its framing at the port's rate, ns (0 when
    /// unlimited).
    pub fn mtu_tx_ns(&self) -> u64 {
        self.queue.typical_tx_ns()
    }

    /// Packets waiting (not counting the one being transmitted) at `now`.
    pub fn waiting_packets(&mut self, now: u64) -> u64 {
        self.queue.waiting_packets(now)
    }

    /// Bytes waiting (not counting the packet being transmitted) at `now`.
    pub fn waiting_bytes(&mut self, now: u64) -> u64 {
        self.queue.waiting_bytes(now)
    }

    /// When the packet now being transmitted finishes, if any.
    pub fn next_departure(&mut self, now: u64) -> Option<u64> {
        self.queue.next_departure(now)
    }

    /// Payload bytes accepted but not carried in full by `now`, the packet on the wire included
    /// (a link's utilization counts only what it finished sending).
    pub fn unfinished_payload(&mut self, now: u64) -> u64 {
        self.queue.unfinished_tags(now)
    }

    /// Packets and payload bytes accepted but not started by `now` (for end-of-run totals).
    pub fn unsent(&mut self, now: u64) -> (u64, u64) {
        self.queue.unsent(now)
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
        let accepted =
            match self
                .queue
                .offer(now, size, pkt.payload as u32, pkt.ecn != Ecn::NotEct, u_red)
            {
                Ok(a) => a,
                Err(reason) => {
                    if reason == DropReason::QueueFull {
                        self.stats.drops_queue += 1;
                    } else {
                        self.stats.drops_red += 1;
                    }
                    return (Enqueued::Dropped { at: now, reason }, pkt);
                }
            };
        if accepted.marked && pkt.ecn == Ecn::Ect {
            pkt.ecn = Ecn::Ce;
            self.stats.ecn_marks += 1;
        }
        let finish = accepted.finish;
        if self.rate_bps.is_some() {
            let n = self.queue.waiting_packets_now() + 1;
            if n > self.stats.max_backlog_packets {
                self.stats.max_backlog_packets = n;
            }
        }
        self.stats.queue_delay.record_ns(accepted.start - now);
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
                let release = m.release(finish, rng);
                let head = self.insert_on_line(release.at, pkt);
                if release.duplicate_at.is_some() {
                    self.stats.duplicates += 1;
                }
                return (
                    Enqueued::Sent {
                        arrival: release.at,
                        head,
                        duplicate: release.duplicate_at,
                    },
                    pkt,
                );
            }
        };
        if self.remote {
            return (
                Enqueued::Sent {
                    arrival,
                    head: false,
                    duplicate: None,
                },
                pkt,
            );
        }
        let head = self.line.is_empty();
        self.line.push_back((arrival, pkt));
        (
            Enqueued::Sent {
                arrival,
                head,
                duplicate: None,
            },
            pkt,
        )
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

    /// Put the copy of a packet this port duplicated on the line (`Enqueued::Sent`'s
    /// `duplicate`), after any due at the same time; true if it is the new head (its arrival
    /// must be scheduled).
    pub fn put_copy_on_line(&mut self, arrival: u64, pkt: Packet) -> bool {
        self.insert_on_line(arrival, pkt)
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
            Serializer::rate(1e9),
            DelayConfig::constant(10_000_000),
            LossConfig::None,
            QueueLimits::packets(2),
            None,
            1500,
        );
        let (a, _) = p.enqueue(0, pkt(1500), 0.0, false, &mut rng());
        assert_eq!(
            a,
            Enqueued::Sent {
                arrival: 12_000 + 10_000_000,
                head: true,
                duplicate: None
            }
        );
        let (b, _) = p.enqueue(1_000, pkt(1500), 0.0, false, &mut rng());
        assert_eq!(
            b,
            Enqueued::Sent {
                arrival: 24_000 + 10_000_000,
                head: false,
                duplicate: None
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
    fn unlimited_rate_is_a_pure_delay() {
        let mut p = Port::new(
            0,
            false,
            Serializer::Unlimited,
            DelayConfig::constant(5_000),
            LossConfig::None,
            QueueLimits::packets(1),
            None,
            1500,
        );
        for i in 0..10 {
            assert_eq!(
                p.enqueue(0, pkt(1500), 0.0, false, &mut rng()).0,
                Enqueued::Sent {
                    arrival: 5_000,
                    head: i == 0,
                    duplicate: None
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
            Serializer::rate(1e9),
            DelayConfig::constant(10_000_000),
            LossConfig::None,
            QueueLimits::packets(100),
            None,
            1500,
        );
        let mut r = rand::rngs::mock::StepRng::new(0, 0); // every uniform draw is 0: reorder
        assert!(matches!(
            p.enqueue(0, pkt(1500), 0.0, false, &mut r).0,
            Enqueued::Sent {
                arrival: 10_012_000,
                head: true,
                duplicate: None
            }
        ));
        p.delay_model = Some(DelayModel::new(delay));
        // Finishes at 24 µs, arrives at 10,024 − 30 = 9,994 µs: ahead of the first.
        assert_eq!(
            p.enqueue(0, pkt(1500), 0.0, false, &mut r).0,
            Enqueued::Sent {
                arrival: 9_994_000,
                head: true,
                duplicate: None
            }
        );
        // Finishes at 36 µs, arrives at 10,006 µs: between the two.
        assert_eq!(
            p.enqueue(0, pkt(1500), 0.0, false, &mut r).0,
            Enqueued::Sent {
                arrival: 10_006_000,
                head: false,
                duplicate: None
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
            Serializer::Unlimited,
            DelayConfig {
                delay_ns,
                jitter_ns,
                reorder_p: 0.1,
                reorder_by_ns: by_ns,
                duplicate_p: 0.0,
            },
            LossConfig::None,
            QueueLimits::packets(100),
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
