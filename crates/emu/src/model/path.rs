//! One direction of the emulated path: queue (drop-tail/RED, shared with cross traffic) →
//! serialiser → random loss on the wire → propagation delay. See `model` for the order; the queue
//! and the serialiser are `longhaul_path::queue::Bottleneck`, the simulator's too.
//!
//! `PathModel::on_arrival(now, bytes, ecn_capable)` decides a packet's fate when it arrives and,
//! if it is delivered, when it must be released and whether RED marked it. Cross-traffic arrivals
//! up to `now` are fed into the queue first, so real and synthetic packets meet the bottleneck in
//! time order. Every outcome is counted in `PathCounters`, with drops split by reason.
//!
//! Random loss is the simulator's (`sim/src/port.rs`): corruption on the wire. The loss model is
//! asked about every packet offered to the bottleneck, cross traffic's included, before the
//! queue decides (so a Gilbert–Elliott chain moves once per packet offered), and its verdict
//! applies to a packet the queue accepts: the packet takes its place in the queue and its
//! serialisation time, and is not delivered.

use super::cross::{CrossArrivals, CrossConfig, CrossSource};
use super::delay::{DelayModel, Release};
use super::loss::LossModel;
use super::queue::{Bottleneck, RedUnit};
use super::serializer::Serializer;
use super::Nanos;
use crate::config::{DirectionConfig, RateConfig};
use longhaul_path::red::Red;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// Why a packet was dropped (the emulator's are `random_loss`, `queue_full`, `red_early`,
/// `red_forced` and `too_big`).
pub use super::queue::DropReason;

/// What happens to one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Dropped, for this reason.
    Drop(DropReason),
    /// Delivered: left the bottleneck at `departure`, released at `release.at`.
    Deliver {
        /// When the packet's last bit left the bottleneck, in ns.
        departure: Nanos,
        /// When it is to be released from the delay line (and its duplicate's time, if any).
        release: Release,
        /// RED signalled congestion by marking this ECN-capable packet: the forwarder sets CE
        /// in its header (`crate::ecn::set_ce`).
        marked: bool,
    },
}

/// A verdict plus the queue state right after it, for event logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// What happens to the packet.
    pub verdict: Verdict,
    /// Packets waiting in the bottleneck queue right after the decision (not counting the one
    /// being sent).
    pub queue_packets: u64,
    /// Wire bytes waiting in the bottleneck queue right after the decision.
    pub queue_bytes: u64,
}

/// Counters of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathCounters {
    /// Packets that arrived from the host (cross traffic not included).
    pub arrived_packets: u64,
    /// IP bytes that arrived from the host.
    pub arrived_bytes: u64,
    /// Packets delivered (released to the other host).
    pub delivered_packets: u64,
    /// IP bytes delivered.
    pub delivered_bytes: u64,
    /// Delivered packets that were also duplicated.
    pub duplicated_packets: u64,
    /// Delivered packets released early on purpose (reordering).
    pub reordered_packets: u64,
    /// Packets the random-loss model took on the wire (after their transmission).
    pub dropped_random_loss: u64,
    /// Packets dropped because the queue's packet or byte limit was reached.
    pub dropped_queue_full: u64,
    /// Packets RED dropped early (probabilistically).
    pub dropped_red_early: u64,
    /// Packets RED dropped because its average reached the max threshold.
    pub dropped_red_forced: u64,
    /// Packets dropped because they were larger than the path MTU.
    #[serde(default)]
    pub dropped_too_big: u64,
    /// Packets RED marked with ECN-CE instead of dropping them (the simulator's `ecn_marks`);
    /// they are delivered, and counted there too.
    #[serde(default)]
    pub ecn_marks: u64,
    /// IP bytes of every dropped packet.
    pub dropped_bytes: u64,
    /// Cross-traffic packets injected into the bottleneck.
    pub cross_packets: u64,
    /// Cross-traffic bytes injected (packet size, without overhead).
    pub cross_bytes: u64,
    /// Cross-traffic packets dropped: by the queue, or by random loss on the wire.
    pub cross_dropped: u64,
    /// Most packets ever waiting (not counting the one being sent), after an admission.
    pub max_queue_packets: u64,
    /// Most wire bytes (IP bytes and the link's overhead) ever waiting, after an admission.
    pub max_queue_bytes: u64,
}

impl PathCounters {
    /// Packets dropped for any reason (cross traffic not included).
    pub fn dropped_packets(&self) -> u64 {
        self.dropped_random_loss
            + self.dropped_queue_full
            + self.dropped_red_early
            + self.dropped_red_forced
            + self.dropped_too_big
    }
}

/// The model of one direction.
pub struct PathModel {
    queue: Bottleneck,
    /// RED's own random stream.
    red_rng: SmallRng,
    loss: LossModel,
    /// The loss model's own random stream.
    loss_rng: SmallRng,
    /// The delay stage's own random stream.
    delay_rng: SmallRng,
    delay: DelayModel,
    /// The cross-traffic sources as configured, and their packets counted from `zero`.
    cross_cfg: Vec<CrossConfig>,
    cross: Vec<CrossArrivals>,
    /// The instant cross traffic and a trace count from.
    zero: Nanos,
    seed: u64,
    /// Web transfers leave at the link's rate (validation refuses cross traffic on an
    /// unlimited link).
    link_bps: f64,
    path_mtu: Option<u32>,
    counters: PathCounters,
}

impl PathModel {
    /// Builds the model; traces and cross traffic count from `epoch` (until
    /// [`set_zero`](Self::set_zero) moves it).
    pub fn new(cfg: &DirectionConfig, mtu: u32, epoch: Nanos) -> Self {
        // Independent random streams per component, so enabling one knob does not change the
        // random sequence of another.
        let seed = cfg.seed;
        let serializer = match &cfg.rate {
            RateConfig::Unlimited => Serializer::Unlimited,
            RateConfig::Constant { bps } => Serializer::rate(*bps as f64),
            RateConfig::Trace { trace, .. } => Serializer::trace(trace.clone(), epoch),
        };
        let red = cfg.red.map(|r| Red::new(r.params()));
        let unit = cfg.red.map_or(RedUnit::Bytes, |r| r.unit);
        let mut m = Self {
            queue: Bottleneck::new(serializer, cfg.queue, red, unit, mtu)
                .with_overhead(cfg.overhead_bytes),
            red_rng: SmallRng::seed_from_u64(seed ^ 0x5245_4400),
            loss: LossModel::new(cfg.loss),
            loss_rng: SmallRng::seed_from_u64(seed ^ 0x4c4f_5353),
            delay: DelayModel::new(cfg.delay),
            delay_rng: SmallRng::seed_from_u64(seed ^ 0x444c_4159),
            cross_cfg: cfg.cross.clone(),
            cross: Vec::new(),
            zero: epoch,
            seed,
            link_bps: cfg.capacity_bps().unwrap_or(f64::INFINITY),
            path_mtu: cfg.path_mtu,
            counters: PathCounters::default(),
        };
        m.start_cross();
        m
    }

    /// (Re)starts every cross-traffic source from `zero`, each with its own random stream.
    fn start_cross(&mut self) {
        self.cross = self
            .cross_cfg
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let seed = self.seed ^ (0x4352_0000 + i as u64);
                CrossSource::new(c, self.zero, self.link_bps, seed).arrivals()
            })
            .collect();
    }

    /// The instant cross traffic and a trace count from, ns.
    pub fn zero(&self) -> Nanos {
        self.zero
    }

    /// Counts cross traffic and a trace from `zero` on: each source starts afresh, its `start`
    /// and `stop` after `zero` (the packets it would have sent before are not sent), and a
    /// trace's opportunities are those of the trace started at `zero`. The driver calls it
    /// before deciding any packet that arrives at or after `zero` (`Emulator::set_zero`).
    pub fn set_zero(&mut self, zero: Nanos) {
        self.zero = zero;
        self.start_cross();
        self.queue.rebase(zero);
    }

    /// What this direction has counted so far.
    pub fn counters(&self) -> &PathCounters {
        &self.counters
    }

    /// The bottleneck queue.
    pub fn queue(&self) -> &Bottleneck {
        &self.queue
    }

    /// Offers a packet of `bytes` (IP length; the queue adds the link's overhead) to the
    /// bottleneck at `now`: the loss model is asked, then the queue (and RED, and the
    /// serialiser) decides; a packet it accepts that the loss model took is dropped after its
    /// transmission. Returns when its last bit leaves and whether RED marked it, or why it was
    /// dropped. Always inlined: its result then stays in registers.
    #[inline(always)]
    fn enqueue(
        &mut self,
        now: Nanos,
        bytes: u32,
        ecn_capable: bool,
    ) -> Result<(Nanos, bool), DropReason> {
        let u = if self.queue.red().is_some() {
            self.red_rng.gen()
        } else {
            0.0
        };
        let lost = self.loss.lose(&mut self.loss_rng);
        let accepted = self.queue.offer(now, bytes, 0, ecn_capable, u)?;
        let c = &mut self.counters;
        c.max_queue_packets = c.max_queue_packets.max(self.queue.waiting_packets_now());
        c.max_queue_bytes = c.max_queue_bytes.max(self.queue.waiting_bytes_now());
        if accepted.marked {
            c.ecn_marks += 1;
        }
        if lost {
            return Err(DropReason::RandomLoss);
        }
        Ok((accepted.finish, accepted.marked))
    }

    /// Feeds cross-traffic arrivals with times ≤ `now` into the bottleneck.
    pub fn run_cross_until(&mut self, now: Nanos) {
        loop {
            let Some((i, t)) = self
                .cross
                .iter()
                .enumerate()
                .map(|(i, g)| (i, g.peek()))
                .min_by_key(|&(_, t)| t)
            else {
                return;
            };
            if t > now || t == Nanos::MAX {
                return;
            }
            let bytes = self.cross[i].packet_bytes();
            self.cross[i].advance();
            self.counters.cross_packets += 1;
            self.counters.cross_bytes += bytes as u64;
            // Cross traffic's packets are not ECN-capable: RED drops them.
            if self.enqueue(t, bytes, false).is_err() {
                self.counters.cross_dropped += 1;
            }
        }
    }

    /// A packet of `bytes` (IP length) arrives at `now`: decide its fate. `ecn_capable` says
    /// whether its header carries ECT(0), ECT(1) or CE, so that RED with ECN may mark it.
    pub fn on_arrival(&mut self, now: Nanos, bytes: u32, ecn_capable: bool) -> Decision {
        self.run_cross_until(now);
        self.counters.arrived_packets += 1;
        self.counters.arrived_bytes += bytes as u64;
        let verdict = if self.path_mtu.is_some_and(|m| bytes > m) {
            Verdict::Drop(DropReason::TooBig)
        } else {
            match self.enqueue(now, bytes, ecn_capable) {
                Err(r) => Verdict::Drop(r),
                Ok((departure, marked)) => Verdict::Deliver {
                    departure,
                    release: self.delay.release(departure, &mut self.delay_rng),
                    marked,
                },
            }
        };
        match verdict {
            Verdict::Drop(r) => {
                self.counters.dropped_bytes += bytes as u64;
                match r {
                    DropReason::RandomLoss => self.counters.dropped_random_loss += 1,
                    // The emulator has no host queues: `HostQueueFull` never comes from it.
                    DropReason::QueueFull | DropReason::HostQueueFull => {
                        self.counters.dropped_queue_full += 1
                    }
                    DropReason::RedEarly => self.counters.dropped_red_early += 1,
                    DropReason::RedForced => self.counters.dropped_red_forced += 1,
                    DropReason::TooBig => self.counters.dropped_too_big += 1,
                }
            }
            Verdict::Deliver { release, .. } => {
                self.counters.delivered_packets += 1;
                self.counters.delivered_bytes += bytes as u64;
                if release.duplicate_at.is_some() {
                    self.counters.duplicated_packets += 1;
                }
                if release.reordered {
                    self.counters.reordered_packets += 1;
                }
            }
        }
        Decision {
            verdict,
            queue_packets: self.queue.waiting_packets_now(),
            queue_bytes: self.queue.waiting_bytes_now(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cross::{CrossConfig, CrossProcess};
    use crate::model::delay::DelayConfig;
    use crate::model::loss::LossConfig;
    use crate::model::queue::QueueLimits;
    use crate::model::red::{RedConfig, RedUnit};

    fn rate_cfg(bps: u64, packets: Option<u64>) -> DirectionConfig {
        DirectionConfig {
            rate: RateConfig::Constant { bps },
            queue: QueueLimits {
                packets,
                bytes: None,
            },
            delay: DelayConfig {
                delay_ns: 90_000_000,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn burst_larger_than_queue_loses_exactly_the_excess() {
        // 250 packets at once into an idle link whose queue holds 100: the first goes on the
        // wire, 100 wait behind it, the other 149 are dropped (the last arrivals: drop-tail).
        let mut m = PathModel::new(&rate_cfg(100_000_000, Some(100)), 1500, 0);
        let delivered = (0..250)
            .filter(|_| {
                matches!(
                    m.on_arrival(0, 1500, false).verdict,
                    Verdict::Deliver { .. }
                )
            })
            .count();
        assert_eq!(delivered, 101);
        assert_eq!(m.counters().dropped_queue_full, 149);
        assert_eq!(m.counters().dropped_packets(), 149);
        assert_eq!(m.counters().max_queue_packets, 100);
        assert_eq!(m.counters().max_queue_bytes, 150_000);
    }

    #[test]
    fn a_flood_into_the_default_queue_waits_at_most_1000_packets() {
        // 10× the rate for 1.2 s into a direction given no limit: without the default, all
        // 100,000 packets would queue (10.8 s of delay at the end); with it 1000 wait behind
        // the one on the wire and the rest drop. The link is busy from 0 on, so packets leave
        // at multiples of 120 µs, and an arrival at such an instant (every tenth) takes the
        // place just freed: it waits for the packet starting then, the 999 waiting and its own
        // transmission, 1001 × 120 µs.
        let cfg = rate_cfg(100_000_000, None).with_default_queue();
        let mut m = PathModel::new(&cfg, 1500, 0);
        let mut worst_wait = 0;
        for k in 0..100_000u64 {
            let now = k * 12_000;
            if let Verdict::Deliver { departure, .. } = m.on_arrival(now, 1500, false).verdict {
                worst_wait = worst_wait.max(departure - now);
            }
        }
        assert_eq!(worst_wait, 1001 * 120_000);
        // By the last arrival (1,199,988 µs) 9,999 packets have left, one is on the wire and
        // 1000 wait: 11,000 of the 100,000 were accepted.
        assert_eq!(m.counters().dropped_queue_full, 89_000);
        assert_eq!(m.counters().max_queue_packets, 1000);
    }

    #[test]
    fn departures_and_releases_are_byte_exact() {
        // 100 Mb/s: 1500 B = 120 µs; 90 ms propagation. With 38 B of framing overhead each
        // packet is 1538 B on the wire: 123.04 µs, and the queue counts those bytes.
        for (overhead, tx) in [(0, 120_000), (38, 123_040)] {
            let mut cfg = rate_cfg(100_000_000, None);
            cfg.overhead_bytes = overhead;
            let mut m = PathModel::new(&cfg, 1500, 0);
            for k in 1..=10u64 {
                match m.on_arrival(0, 1500, false).verdict {
                    Verdict::Deliver {
                        departure, release, ..
                    } => {
                        assert_eq!(departure, k * tx);
                        assert_eq!(release.at, 90_000_000 + k * tx);
                    }
                    v => panic!("{v:?}"),
                }
            }
            assert_eq!(m.counters().max_queue_bytes, 9 * (1500 + overhead as u64));
            assert_eq!(m.counters().delivered_bytes, 10 * 1500);
        }
    }

    #[test]
    fn queue_drains_at_the_rate_so_paced_arrivals_are_never_dropped() {
        // Arrivals exactly at the rate into a 1-packet queue: each finds the previous gone.
        let mut m = PathModel::new(&rate_cfg(1_000_000_000, Some(1)), 1500, 0);
        for k in 0..10_000u64 {
            let o = m.on_arrival(k * 12_000, 1500, false);
            assert!(matches!(o.verdict, Verdict::Deliver { .. }), "packet {k}");
            assert_eq!(o.queue_packets, 0);
        }
        // At 2× the rate (one every 6 µs, each 12 µs on the wire): the second arrival waits
        // behind the first; from then on an arrival at an even multiple of 6 µs finds the
        // packet on the wire just gone and the place free, and one at an odd multiple finds it
        // taken. Arrivals 3, 5, …, 9999 are dropped: 4,999.
        let mut m = PathModel::new(&rate_cfg(1_000_000_000, Some(1)), 1500, 0);
        for k in 0..10_000u64 {
            let o = m.on_arrival(k * 6_000, 1500, false);
            let dropped = matches!(o.verdict, Verdict::Drop(_));
            assert_eq!(dropped, k >= 3 && k % 2 == 1, "packet {k}");
        }
        assert_eq!(m.counters().dropped_queue_full, 4_999);
    }

    #[test]
    fn red_drops_start_at_min_threshold() {
        // Instantaneous RED (weight 1), min 30 packets' worth of bytes: a burst into an idle
        // link is accepted up to the point where the queue holds min_th bytes.
        let mut cfg = rate_cfg(100_000_000, Some(1000));
        cfg.red = Some(RedConfig::bytes(30 * 1500, 60 * 1500, 1.0, 1.0, false));
        let mut m = PathModel::new(&cfg, 1500, 0);
        let mut first_drop_qlen = None;
        for _ in 0..200 {
            let o = m.on_arrival(0, 1500, false);
            if let Verdict::Drop(r) = o.verdict {
                assert!(matches!(r, DropReason::RedEarly | DropReason::RedForced));
                assert!(
                    o.queue_packets >= 30,
                    "RED drop below min_th at {}",
                    o.queue_packets
                );
                first_drop_qlen.get_or_insert(o.queue_packets);
            }
        }
        // No drop below min_th; from min_th on p_a grows quickly (1/29, 2/26, ... at 31, 32, ...
        // packets waiting), so the first drop comes within a few packets.
        let first = first_drop_qlen.expect("RED dropped");
        assert!((31..40).contains(&first), "first RED drop at queue {first}");
        assert_eq!(m.counters().dropped_queue_full, 0);
        // Every arrival finding max_th (60 packets' bytes) waiting is forced out: at most 60
        // wait.
        assert!(m.counters().max_queue_packets <= 60);
    }

    /// RED in packets with ECN (instantaneous: weight 1; min 2, max 4, max_p 1), as a scenario's
    /// `queue = { kind = "red", packets = 100, min_th = 2, max_th = 4, max_p = 1, weight = 1,
    /// gentle = false, ecn = true }` maps. A burst into an idle 1 Mb/s link: the first four
    /// arrivals find 0, 0, 1, 2 waiting, below min or at it (p_b = 0), and are accepted. The
    /// fifth finds 3: p_b = (3 − 2)/(4 − 2) = 0.5 and count 1, so p_a = p_b/(1 − p_b) = 1, a
    /// signal whatever the draw: an ECN-capable packet is marked and delivered, a not-capable
    /// one dropped. The next arrival finds 4 waiting, avg ≥ max: forced out, capable or not.
    #[test]
    fn red_in_packets_marks_ecn_capable_packets_instead_of_dropping_them() {
        let mut cfg = rate_cfg(1_000_000, Some(100));
        cfg.red = Some(RedConfig {
            min: 2.0,
            max: 4.0,
            unit: RedUnit::Packets,
            max_p: 1.0,
            weight: 1.0,
            gentle: false,
            ecn: true,
        });
        let mut m = PathModel::new(&cfg, 1500, 0);
        // Small packets: in bytes (min 2 × 1500) 3 × 100 B would never reach it.
        for _ in 0..4 {
            let v = m.on_arrival(0, 100, true).verdict;
            assert!(matches!(v, Verdict::Deliver { marked: false, .. }), "{v:?}");
        }
        assert_eq!(m.queue().waiting_packets_now(), 3);
        let v = m.on_arrival(0, 100, true).verdict;
        assert!(matches!(v, Verdict::Deliver { marked: true, .. }), "{v:?}");
        // Four waiting: avg 4 ≥ max: forced, ECN-capable or not.
        assert_eq!(
            m.on_arrival(0, 100, true).verdict,
            Verdict::Drop(DropReason::RedForced)
        );
        let c = *m.counters();
        assert_eq!((c.ecn_marks, c.delivered_packets), (1, 5));
        assert_eq!((c.dropped_red_early, c.dropped_red_forced), (0, 1));

        // The same queue, a packet that is not ECN-capable at the fifth place: dropped early.
        let mut m = PathModel::new(&cfg, 1500, 0);
        for _ in 0..4 {
            m.on_arrival(0, 100, false);
        }
        assert_eq!(
            m.on_arrival(0, 100, false).verdict,
            Verdict::Drop(DropReason::RedEarly)
        );
        assert_eq!(m.counters().ecn_marks, 0);

        // Without `ecn` the capable packet is dropped too.
        cfg.red.as_mut().unwrap().ecn = false;
        let mut m = PathModel::new(&cfg, 1500, 0);
        for _ in 0..4 {
            m.on_arrival(0, 100, true);
        }
        assert_eq!(
            m.on_arrival(0, 100, true).verdict,
            Verdict::Drop(DropReason::RedEarly)
        );
    }

    /// A flood of ECN-capable packets into RED with ECN: every early signal is a mark.
    #[test]
    fn red_with_ecn_marks_a_flood_of_capable_packets() {
        // 10 Mb/s (1500 B = 1.2 ms), packets offered at 11 Mb/s for 10 s into RED in packets
        // with the scenario's defaults for a 1000-packet queue (max_th 500, min_th 166.7,
        // max_p 0.1, w 0.002, gentle). Marks shed no load, so the queue grows by 1/11 of the
        // arrivals, to about 830 of the 9,166 in 10 s: the average (lagging it) passes min_th
        // and then max_th, and RED signals ever more often, by marks (gentle's region above
        // max_th is early signals too); it never reaches 2 · max_th = 1000, where arrivals
        // would be forced out, nor does the queue reach its limit: not one packet is dropped.
        let mut cfg = rate_cfg(10_000_000, Some(1000));
        cfg.red = Some(RedConfig {
            min: 500.0 / 3.0,
            max: 500.0,
            unit: RedUnit::Packets,
            max_p: 0.1,
            weight: 0.002,
            gentle: true,
            ecn: true,
        });
        let mut m = PathModel::new(&cfg, 1500, 0);
        let gap = 1500 * 8 * 1_000_000_000 / 11_000_000;
        let n = 10_000_000_000 / gap;
        let mut marked = 0;
        for k in 0..n {
            if let Verdict::Deliver { marked: true, .. } = m.on_arrival(k * gap, 1500, true).verdict
            {
                marked += 1;
            }
        }
        let c = *m.counters();
        assert_eq!(c.ecn_marks, marked);
        assert!(marked > 100, "{marked} marks");
        assert_eq!(c.dropped_packets(), 0);
        assert_eq!(c.delivered_packets, n);
    }

    #[test]
    fn packets_above_the_path_mtu_are_dropped_and_the_rest_pass() {
        let mut cfg = rate_cfg(100_000_000, Some(1000));
        cfg.path_mtu = Some(1400);
        let mut m = PathModel::new(&cfg, 1500, 0);
        let fate = |m: &mut PathModel, bytes| m.on_arrival(0, bytes, false).verdict;
        assert!(matches!(fate(&mut m, 1400), Verdict::Deliver { .. }));
        assert_eq!(fate(&mut m, 1401), Verdict::Drop(DropReason::TooBig));
        assert_eq!(fate(&mut m, 1500), Verdict::Drop(DropReason::TooBig));
        assert!(matches!(fate(&mut m, 64), Verdict::Deliver { .. }));
        let c = m.counters();
        assert_eq!((c.dropped_too_big, c.delivered_packets), (2, 2));
        assert_eq!(c.dropped_packets(), 2);
        // A dropped packet takes no room in the queue: the next one leaves right behind the
        // 1400-byte and 64-byte packets (112 µs + 5.12 µs at 100 Mb/s).
        match fate(&mut m, 1000) {
            Verdict::Deliver { departure, .. } => assert_eq!(departure, 117_120 + 80_000),
            v => panic!("{v:?}"),
        }
    }

    #[test]
    fn one_percent_loss_within_binomial_bound() {
        // One 1500-byte packet every 2 µs into 10 Gb/s (1.2 µs each): no queue forms, so every
        // packet is offered to the link and asked about once; the losses are binomial, n·p =
        // 4,000 of 400,000 with sd √(n·p·(1−p)) = 62.9, and every other packet is delivered.
        let mut cfg = rate_cfg(10_000_000_000, None);
        cfg.loss = LossConfig::Bernoulli { p: 0.01 };
        let mut m = PathModel::new(&cfg, 1500, 0);
        let n = 400_000u64;
        for k in 0..n {
            m.on_arrival(k * 2_000, 1500, false);
        }
        let c = m.counters();
        let lost = c.dropped_random_loss as f64;
        let sd = (n as f64 * 0.01 * 0.99).sqrt();
        assert!((lost - 4000.0).abs() < 4.0 * sd, "{lost}");
        assert_eq!(c.dropped_queue_full, 0);
        assert_eq!(c.delivered_packets + c.dropped_random_loss, n);
    }

    #[test]
    fn a_lost_packet_takes_its_place_in_the_queue_and_its_time_on_the_wire() {
        // 250 packets at once into an idle 100 Mb/s link whose queue holds 100, half of them
        // lost at random. Loss strikes on the wire, after the queue: the queue accepts the
        // first 101 (one on the wire, 100 waiting) lost or not, and drops the other 149 full;
        // the accepted ones leave at k × 120 µs, k = 1..=101, each lost one leaving its slot
        // empty. (Were loss decided before the queue, about 125 would vanish first and the
        // queue would take 101 of the rest, dropping only about 24, and the delivered
        // packets' departures would have no gaps.)
        let mut cfg = rate_cfg(100_000_000, Some(100));
        cfg.loss = LossConfig::Bernoulli { p: 0.5 };
        let mut m = PathModel::new(&cfg, 1500, 0);
        let mut departures = Vec::new();
        let mut lost_at_queue = Vec::new();
        for _ in 0..250 {
            let o = m.on_arrival(0, 1500, false);
            match o.verdict {
                Verdict::Deliver { departure, .. } => departures.push(departure),
                Verdict::Drop(DropReason::RandomLoss) => lost_at_queue.push(o.queue_packets),
                Verdict::Drop(r) => assert_eq!(r, DropReason::QueueFull),
            }
        }
        let c = *m.counters();
        assert_eq!(c.dropped_queue_full, 149);
        assert_eq!(c.delivered_packets + c.dropped_random_loss, 101);
        assert_eq!(c.max_queue_packets, 100);
        // Each lost packet was in the queue when it was dropped: the queue grew past it.
        for (i, q) in lost_at_queue.iter().enumerate() {
            assert!(*q >= i as u64, "lost packet {i} found the queue at {q}");
        }
        // Delivered packets leave in the slots of the accepted ones; the lost ones' slots are
        // the gaps.
        assert!(departures.windows(2).all(|w| w[0] < w[1]));
        assert!(departures
            .iter()
            .all(|d| d % 120_000 == 0 && *d <= 101 * 120_000));
        let gaps = 101 - departures.len() as u64;
        assert_eq!(gaps, c.dropped_random_loss);
        // With p = 1/2 the 101 accepted lose 50.5 ± 5 (sd); 4 sd either way.
        assert!((30..=71).contains(&c.dropped_random_loss), "{c:?}");
        // The next packet, once the queue has drained, waits for nobody: the lost packets'
        // time on the wire was spent.
        let later = 101 * 120_000;
        let after: Vec<Verdict> = (0..20)
            .map(|_| m.on_arrival(later, 1500, false).verdict)
            .collect();
        let first_delivered = after
            .iter()
            .enumerate()
            .find_map(|(i, v)| match v {
                Verdict::Deliver { departure, .. } => Some((i as u64, *departure)),
                _ => None,
            })
            .expect("one of 20 delivered");
        assert_eq!(first_delivered.1, later + (first_delivered.0 + 1) * 120_000);
    }

    #[test]
    fn cross_traffic_is_lost_on_the_wire_like_the_hosts_packets() {
        // 10 % loss on a 100 Mb/s link carrying CBR cross traffic of 12 Mb/s (1500-byte packets,
        // one a millisecond) and no packet of ours until 10 s: the loss model is asked about
        // each of the 10,000 cross packets (0..=9,999 ms; our packet at 10 s comes after the
        // one due then), and takes 1,000 ± 30 (sd) of them, counted as dropped cross traffic;
        // none of ours was offered before.
        let mut cfg = rate_cfg(100_000_000, None);
        cfg.loss = LossConfig::Bernoulli { p: 0.1 };
        cfg.cross = vec![CrossConfig::new(CrossProcess::Cbr, 12e6, 1500)];
        let mut m = PathModel::new(&cfg, 1500, 0);
        m.run_cross_until(9_999_999_999);
        let c = *m.counters();
        assert_eq!(c.cross_packets, 10_000);
        let sd = (10_000.0f64 * 0.1 * 0.9).sqrt();
        assert!(
            (c.cross_dropped as f64 - 1000.0).abs() < 4.0 * sd,
            "{} cross packets lost",
            c.cross_dropped
        );
        assert_eq!((c.arrived_packets, c.dropped_random_loss), (0, 0));
    }

    #[test]
    fn gilbert_elliott_loss_gives_its_mean_rate() {
        // p = 0.01, r = 0.25, loss only when Bad: mean π = p/(p+r) = 3.846 %. The count of n
        // correlated losses has the binomial variance n·π(1−π) times (1+λ)/(1−λ) = 6.69, with
        // λ = 1 − p − r the chain's second eigenvalue (Kemeny & Snell 1960, §4.6): sd = 320
        // packets of n = 400,000; the count must lie within 4 of them.
        let (p, r) = (0.01, 0.25);
        let mut cfg = rate_cfg(10_000_000_000, None);
        cfg.loss = LossConfig::GilbertElliott {
            p,
            r,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        // As above, no queue forms: each of the n packets moves the chain once.
        let mut m = PathModel::new(&cfg, 1500, 0);
        let n = 400_000u64;
        for k in 0..n {
            m.on_arrival(k * 2_000, 1500, false);
        }
        let lost = m.counters().dropped_random_loss as f64;
        let pi = p / (p + r);
        let lambda = 1.0 - p - r;
        let sd = (n as f64 * pi * (1.0 - pi) * (1.0 + lambda) / (1.0 - lambda)).sqrt();
        assert!((lost - n as f64 * pi).abs() < 4.0 * sd, "{lost} ± {sd}");
        assert_eq!(m.counters().dropped_queue_full, 0);
    }

    #[test]
    fn cbr_cross_traffic_takes_its_share_of_the_bottleneck() {
        // 100 Mb/s link (1500 B = 120 µs), 40 Mb/s CBR cross traffic, our packets offered at
        // 120 Mb/s: the bottleneck serves both in arrival order.
        let mut cfg = rate_cfg(100_000_000, None);
        cfg.delay.delay_ns = 0;
        cfg.cross = vec![CrossConfig::new(CrossProcess::Cbr, 40e6, 1500)];
        let mut m = PathModel::new(&cfg, 1500, 0);
        let mut last = 0;
        for k in 0..5000u64 {
            // Offered at 120 Mb/s (one per 100 µs), more than the 60 Mb/s left.
            if let Verdict::Deliver { departure, .. } =
                m.on_arrival(k * 100_000, 1500, false).verdict
            {
                last = departure;
            }
        }
        // Cross packets (one per 300 µs) up to our last arrival at 499.9 ms: 0..=1666 = 1667.
        // The link never idles, FIFO order puts all of them ahead of our last packet, so it
        // departs after exactly (5000 + 1667) × 120 µs.
        assert_eq!(m.counters().cross_packets, 1667);
        assert_eq!(last, 6667 * 120_000);
        assert_eq!(m.counters().delivered_packets, 5000);
    }

    #[test]
    fn cross_traffic_counts_its_start_and_stop_from_the_zero_point() {
        // CBR of 1500-byte packets at 12 Mb/s, one per ms, from 100 ms to 300 ms after the
        // zero point (200 packets). The model starts with its zero at 0; at 50 ms the driver
        // moves it to 1 s. Counted from 0, the source would have sent all 200 by 0.5 s.
        let ms = 1_000_000;
        let mut cfg = rate_cfg(100_000_000, None);
        cfg.cross = vec![CrossConfig {
            start_ns: 100 * ms,
            stop_ns: 300 * ms,
            ..CrossConfig::new(CrossProcess::Cbr, 12e6, 1500)
        }];
        let mut m = PathModel::new(&cfg, 1500, 0);
        m.on_arrival(50 * ms, 100, false);
        assert_eq!(m.counters().cross_packets, 0);
        m.set_zero(1000 * ms);
        assert_eq!(m.zero(), 1000 * ms);
        m.on_arrival(500 * ms, 100, false);
        assert_eq!(m.counters().cross_packets, 0);
        // By 1.2 s: the packets at 1.1 s + k ms, k = 0..=100.
        m.on_arrival(1200 * ms, 100, false);
        assert_eq!(m.counters().cross_packets, 101);
        // Before its stop at 1.3 s: k = 0..200.
        m.on_arrival(2000 * ms, 100, false);
        assert_eq!(m.counters().cross_packets, 200);
    }

    #[test]
    fn web_cross_traffic_is_injected_in_bursts_at_the_link_rate() {
        // 100 Mb/s link (1500 B = 120 µs); web transfers of 60 KB mean offering 30 Mb/s on
        // average, each sent back to back at the link's rate; our packets one per ms (12 Mb/s).
        let mut cfg = rate_cfg(100_000_000, None);
        cfg.delay.delay_ns = 0;
        cfg.seed = 3;
        cfg.cross = vec![CrossConfig::new(
            CrossProcess::Web {
                mean_bytes: 60_000,
                shape: 2.5,
            },
            30e6,
            1500,
        )];
        let mut m = PathModel::new(&cfg, 1500, 1_000);
        let mut queued = 0;
        let secs = 20;
        for k in 0..secs * 1000 {
            let now = 1_000 + k * 1_000_000;
            if let Verdict::Deliver { departure, .. } = m.on_arrival(now, 1500, false).verdict {
                // Alone, our packet would leave after its own 120 µs; behind a burst, later.
                if departure > now + 120_000 {
                    queued += 1;
                }
            }
        }
        let c = m.counters();
        let offered = c.cross_bytes as f64 * 8.0 / secs as f64;
        // ~1,250 transfers; relative sd of the bytes √(1.8/1250) ≈ 3.8 %, so ±25 % is > 6 sd.
        assert!(
            (offered / 30e6 - 1.0).abs() < 0.25,
            "web offered {offered} b/s for 30 Mb/s"
        );
        assert_eq!(c.cross_dropped, 0, "no queue limit");
        // Bursts at the link's rate hold our packets back: 30 % of the time the link is busy.
        assert!(
            queued > secs * 1000 / 10,
            "{queued} of our packets waited behind cross traffic"
        );
        assert_eq!(c.delivered_packets, secs * 1000);
    }
}
