//! The bottleneck: a FIFO queue with drop-tail limits and optional RED, served by a
//! [`Serializer`], as both engines run it.
//!
//! **The queue is virtual.** A FIFO served by a serialiser is fully described by the times its
//! packets finish transmission: an arriving packet starts when the one before it finishes (or
//! at once, on an idle link), and the serialiser says when it finishes. So [`Bottleneck::offer`]
//! computes the departure time when the packet arrives and keeps only the `(finish, size, tag)`
//! of packets not yet fully sent, to know what the next arrival finds. Nothing is scheduled:
//! the simulator puts the packet on its delay line at once, the emulator sleeps until its
//! release time.
//!
//! **What a limit counts.** The packets (or bytes) *waiting*, not the one being transmitted, as
//! Linux's `txqueuelen` (the qdisc holds the packets the device has not taken) and ns-3's
//! `DropTailQueue` (the device holds the packet in transmission) count them: a queue of
//! `packets = N` holds N packets behind the one on the wire. An arrival to an empty queue
//! (nothing waiting, nothing on the wire) is always accepted, whatever its size. Limits may be
//! in packets, in bytes or both (a packet is admitted only if it fits both, as in mahimahi's
//! `droptail`); `None` is unlimited in that unit.
//!
//! **RED** ([`crate::red`]) judges each arrival before the limits, on the queue it finds waiting,
//! in packets or in bytes ([`RedUnit`]); its average decays over the time the queue was empty
//! (from the instant the last packet finished), counted in transmissions of a typical
//! (MTU-sized) packet. Its early signal on an ECN-capable packet is a mark instead of a drop
//! (RFC 3168) when RED marks.
//!
//! **Framing overhead.** A link may add bytes of its own to every packet it carries (Ethernet's
//! 38: preamble, header, FCS and inter-frame gap); the bottleneck counts each packet as its size
//! plus that overhead, its *wire size*, everywhere: its serialisation time, the byte limit and
//! RED in bytes (as Linux counts a qdisc's packets with a size table's `overhead`, `tc-stab(8)`).
//!
//! A link without a rate ([`Serializer::Unlimited`]) forms no queue: every packet leaves as it
//! arrives and no limit or RED applies.

use crate::red::{Red, RedVerdict};
use crate::ring::Ring;
use crate::serializer::Serializer;
use serde::{Deserialize, Serialize};

/// Why a packet was dropped, in either engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// The queue was full (drop-tail, or RED's physical limit).
    QueueFull,
    /// RED's early, probabilistic drop.
    RedEarly,
    /// RED's forced drop above its marking region.
    RedForced,
    /// Random loss on the link (`crate::loss`).
    RandomLoss,
    /// A sender's full host queue (the simulator's `access.on_full = "drop"`): dropped before
    /// leaving the host.
    HostQueueFull,
    /// Larger than the path's MTU (the emulator's `path_mtu`): a hop that cannot forward it.
    TooBig,
}

impl DropReason {
    /// The reason as drop logs and reports spell it (`queue_full`, `red_early`, `red_forced`,
    /// `random_loss`, `host_queue_full`, `too_big`).
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::QueueFull => "queue_full",
            DropReason::RedEarly => "red_early",
            DropReason::RedForced => "red_forced",
            DropReason::RandomLoss => "random_loss",
            DropReason::HostQueueFull => "host_queue_full",
            DropReason::TooBig => "too_big",
        }
    }
}

/// Drop-tail limits, counting what waits (not the packet being transmitted); `None` is
/// unlimited in that unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct QueueLimits {
    /// Most packets waiting.
    pub packets: Option<u64>,
    /// Most bytes waiting.
    pub bytes: Option<u64>,
}

impl QueueLimits {
    /// At most `n` packets waiting.
    pub fn packets(n: u64) -> QueueLimits {
        QueueLimits {
            packets: Some(n),
            bytes: None,
        }
    }

    /// At most `b` bytes waiting.
    pub fn bytes(b: u64) -> QueueLimits {
        QueueLimits {
            packets: None,
            bytes: Some(b),
        }
    }

    /// The limits as reports print them: `1000p`, `1500000B`, `1000p 1500000B`, or `unlimited`.
    pub fn describe(&self) -> String {
        match (self.packets, self.bytes) {
            (Some(p), Some(b)) => format!("{p}p {b}B"),
            (Some(p), None) => format!("{p}p"),
            (None, Some(b)) => format!("{b}B"),
            (None, None) => "unlimited".into(),
        }
    }
}

/// The size in a backlog entry (its low 32 bits).
#[inline]
fn size_of(entry: u64) -> u64 {
    entry & 0xffff_ffff
}

/// What RED's average counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedUnit {
    /// Packets waiting.
    Packets,
    /// Bytes waiting.
    Bytes,
}

/// A packet the queue accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accepted {
    /// When its first bit goes on the wire, ns (its arrival, or the previous finish).
    pub start: u64,
    /// When its last bit leaves, ns.
    pub finish: u64,
    /// RED signalled congestion on this ECN-capable packet by marking it (set CE).
    pub marked: bool,
}

/// One direction's bottleneck: drop-tail limits, RED and the serialiser.
#[derive(Debug, Clone)]
pub struct Bottleneck {
    serializer: Serializer,
    limits: QueueLimits,
    red: Option<Red>,
    red_unit: RedUnit,
    /// Serialisation time of a typical packet, ns (RED's idle decay unit).
    typical_tx_ns: u64,
    /// The packet size `typical_tx_ns` is computed from (without overhead).
    typical_bytes: u32,
    /// Bytes the link adds to each packet (framing), counted in its wire size.
    overhead: u32,
    /// (finish time, size | the caller's tag << 32) of packets accepted and not yet fully
    /// sent; the front one is on the wire. Size and tag share a word so that an entry is
    /// written from two registers: built field by field on the stack, its copy into the ring
    /// would wait on the narrow stores (a store-forwarding stall, a third of the time `offer`
    /// took).
    backlog: Ring<(u64, u64)>,
    backlog_bytes: u64,
    /// When the last packet accepted finishes (on an unlimited link: when it arrived).
    last_finish: u64,
}

impl Bottleneck {
    /// A bottleneck with nothing in it. `red` judges arrivals on the queue in `red_unit`;
    /// `typical_bytes` is the packet size (the MTU) whose transmission time is RED's unit of
    /// idle time.
    pub fn new(
        serializer: Serializer,
        limits: QueueLimits,
        red: Option<Red>,
        red_unit: RedUnit,
        typical_bytes: u32,
    ) -> Bottleneck {
        Bottleneck {
            typical_tx_ns: serializer.typical_tx_ns(typical_bytes),
            typical_bytes,
            overhead: 0,
            serializer,
            limits,
            red,
            red_unit,
            backlog: Ring::new(),
            backlog_bytes: 0,
            last_finish: 0,
        }
    }

    /// The same link and limits with nothing in it and no RED.
    pub fn empty_copy(&self) -> Bottleneck {
        Bottleneck {
            serializer: self.serializer.fresh(),
            red: None,
            backlog: Ring::new(),
            backlog_bytes: 0,
            last_finish: 0,
            ..*self
        }
    }

    /// The same bottleneck with `overhead` bytes of framing added to every packet's wire size
    /// (the typical packet's too).
    pub fn with_overhead(mut self, overhead: u32) -> Bottleneck {
        self.overhead = overhead;
        self.typical_tx_ns = self
            .serializer
            .typical_tx_ns(self.typical_bytes.saturating_add(overhead));
        self
    }

    /// Bytes of framing added to every packet.
    pub fn overhead(&self) -> u32 {
        self.overhead
    }

    /// The serialiser.
    pub fn serializer(&self) -> &Serializer {
        &self.serializer
    }

    /// A traced link counts its trace from `epoch` on (`Serializer::rebase`).
    pub fn rebase(&mut self, epoch: u64) {
        self.serializer.rebase(epoch);
    }

    /// The drop-tail limits.
    pub fn limits(&self) -> QueueLimits {
        self.limits
    }

    /// RED, if the queue runs it.
    pub fn red(&self) -> Option<&Red> {
        self.red.as_ref()
    }

    /// Serialisation time of a typical packet, ns.
    pub fn typical_tx_ns(&self) -> u64 {
        self.typical_tx_ns
    }

    /// Forgets the packets sent by `now`; RED notes when the queue emptied.
    #[inline]
    fn drain(&mut self, now: u64) {
        while let Some(&(finish, entry)) = self.backlog.front() {
            if finish > now {
                break;
            }
            self.backlog.pop_front();
            self.backlog_bytes -= size_of(entry);
            if self.backlog.is_empty() {
                if let Some(red) = &mut self.red {
                    red.queue_emptied(finish);
                }
            }
        }
    }

    /// Packets waiting as of the last offer or query (not counting the one on the wire).
    #[inline]
    pub fn waiting_packets_now(&self) -> u64 {
        self.backlog.len().saturating_sub(1) as u64
    }

    /// Wire bytes waiting as of the last offer or query (not counting the packet on the wire).
    #[inline]
    pub fn waiting_bytes_now(&self) -> u64 {
        match self.backlog.front() {
            Some(&(_, head)) => self.backlog_bytes - size_of(head),
            None => 0,
        }
    }

    /// Packets waiting at `now` (not counting the one on the wire).
    pub fn waiting_packets(&mut self, now: u64) -> u64 {
        self.drain(now);
        self.waiting_packets_now()
    }

    /// Wire bytes waiting at `now` (not counting the packet on the wire).
    pub fn waiting_bytes(&mut self, now: u64) -> u64 {
        self.drain(now);
        self.waiting_bytes_now()
    }

    /// When the packet on the wire at `now` finishes, if any.
    pub fn next_departure(&mut self, now: u64) -> Option<u64> {
        self.drain(now);
        self.backlog.front().map(|&(f, _)| f)
    }

    /// Packets waiting at `now` and the sum of their tags (the simulator tags each packet with
    /// its payload bytes: what was accepted and not yet sent, for end-of-run totals).
    pub fn unsent(&mut self, now: u64) -> (u64, u64) {
        self.drain(now);
        let tags = self.backlog.iter().skip(1).map(|&(_, e)| e >> 32).sum();
        (self.waiting_packets_now(), tags)
    }

    /// The sum of the tags of the packets not finished by `now`, the one on the wire included:
    /// what a link has not yet carried in full.
    pub fn unfinished_tags(&mut self, now: u64) -> u64 {
        self.drain(now);
        self.backlog.iter().map(|&(_, e)| e >> 32).sum()
    }

    /// Offers a packet of `size` bytes (its wire size adds the overhead) at `now` (offers in
    /// time order). `tag` is kept with it
    /// for [`unsent`](Self::unsent); `ecn_capable` lets RED mark it instead of dropping it
    /// early; `u` is a uniform [0, 1) draw for RED's decision (unused without RED). Returns when
    /// it starts and finishes, or why it was dropped.
    #[inline(always)]
    pub fn offer(
        &mut self,
        now: u64,
        size: u32,
        tag: u32,
        ecn_capable: bool,
        u: f64,
    ) -> Result<Accepted, DropReason> {
        let mut marked = false;
        let size = size + self.overhead;
        if self.serializer.is_limited() {
            self.drain(now);
            let waiting = self.waiting_packets_now();
            let waiting_bytes = self.waiting_bytes_now();
            if let Some(red) = &mut self.red {
                let q = match self.red_unit {
                    RedUnit::Packets => waiting as f64,
                    RedUnit::Bytes => waiting_bytes as f64,
                };
                match red.on_arrival(now, q, self.typical_tx_ns, u) {
                    RedVerdict::Accept => {}
                    RedVerdict::Early if red.params.ecn && ecn_capable => marked = true,
                    RedVerdict::Early => return Err(DropReason::RedEarly),
                    RedVerdict::Forced => return Err(DropReason::RedForced),
                }
            }
            if !self.backlog.is_empty() {
                let over_packets = self.limits.packets.is_some_and(|n| waiting + 1 > n);
                let over_bytes = self
                    .limits
                    .bytes
                    .is_some_and(|b| waiting_bytes + size as u64 > b);
                if over_packets || over_bytes {
                    return Err(DropReason::QueueFull);
                }
            }
        }
        let start = self.last_finish.max(now);
        let finish = self.serializer.transmit(now, size);
        self.last_finish = finish;
        if self.serializer.is_limited() {
            self.backlog
                .push_back((finish, size as u64 | (tag as u64) << 32));
            self.backlog_bytes += size as u64;
        }
        Ok(Accepted {
            start,
            finish,
            marked,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::red::RedParams;

    fn droptail(rate_bps: f64, limits: QueueLimits) -> Bottleneck {
        Bottleneck::new(
            Serializer::rate(rate_bps),
            limits,
            None,
            RedUnit::Packets,
            1500,
        )
    }

    fn finish(b: &mut Bottleneck, now: u64, size: u32) -> Result<u64, DropReason> {
        b.offer(now, size, 0, false, 0.0).map(|a| a.finish)
    }

    #[test]
    fn a_packet_limit_counts_the_packets_behind_the_one_on_the_wire() {
        // 1 Gb/s: 1500 B in 12 µs. A limit of 2 holds two packets behind the first.
        let mut b = droptail(1e9, QueueLimits::packets(2));
        assert_eq!(finish(&mut b, 0, 1500), Ok(12_000));
        assert_eq!(finish(&mut b, 1_000, 1500), Ok(24_000));
        assert_eq!(finish(&mut b, 2_000, 1500), Ok(36_000));
        assert_eq!(b.waiting_packets(2_000), 2);
        assert_eq!(finish(&mut b, 3_000, 1500), Err(DropReason::QueueFull));
        // The first finishes at 12 µs (a packet finishing exactly now is gone): one place frees.
        assert_eq!(b.waiting_packets(12_000), 1);
        assert_eq!(finish(&mut b, 12_000, 1500), Ok(48_000));
        assert_eq!(b.next_departure(12_000), Some(24_000));
        // A burst of N into an idle link with limit Q keeps Q + 1: one on the wire, Q waiting.
        let mut b = droptail(100e6, QueueLimits::packets(100));
        let kept = (0..250).filter(|_| finish(&mut b, 0, 1500).is_ok()).count();
        assert_eq!(kept, 101);
    }

    #[test]
    fn a_byte_limit_counts_waiting_bytes_and_admits_what_fits() {
        let mut b = droptail(1e6, QueueLimits::bytes(3000));
        // On the wire: 1500; waiting: 1500 + 1000 = 2500.
        for size in [1500, 1500, 1000] {
            assert!(finish(&mut b, 0, size).is_ok());
        }
        assert_eq!(b.waiting_bytes(0), 2500);
        assert_eq!(finish(&mut b, 0, 600), Err(DropReason::QueueFull)); // 3100 > 3000
        assert!(finish(&mut b, 0, 500).is_ok()); // exactly 3000
                                                 // An empty queue takes a packet larger than its limit: nothing waits behind it.
        let mut b = droptail(1e6, QueueLimits::bytes(100));
        assert!(finish(&mut b, 0, 1500).is_ok());
    }

    #[test]
    fn both_limits_apply_at_once() {
        // 2 packets or 2000 bytes waiting, whichever comes first.
        let limits = QueueLimits {
            packets: Some(2),
            bytes: Some(2000),
        };
        let mut b = droptail(1e6, limits);
        assert!(finish(&mut b, 0, 1500).is_ok()); // on the wire
        assert!(finish(&mut b, 0, 1500).is_ok()); // 1500 waiting
        assert_eq!(finish(&mut b, 0, 600), Err(DropReason::QueueFull)); // 2100 B
        assert!(finish(&mut b, 0, 500).is_ok()); // 2000 B, 2 packets
        assert_eq!(finish(&mut b, 0, 1), Err(DropReason::QueueFull)); // a third packet
        assert_eq!(b.limits().describe(), "2p 2000B");
    }

    #[test]
    fn an_unlimited_link_forms_no_queue() {
        let mut b = Bottleneck::new(
            Serializer::Unlimited,
            QueueLimits::packets(1),
            None,
            RedUnit::Packets,
            1500,
        );
        for _ in 0..10 {
            assert_eq!(finish(&mut b, 5, 1500), Ok(5));
        }
        assert_eq!(b.waiting_packets(5), 0);
    }

    #[test]
    fn start_is_the_previous_finish_while_busy_and_tags_sum_what_waits() {
        let mut b = droptail(1e9, QueueLimits::packets(10));
        assert_eq!(b.offer(0, 1500, 1448, false, 0.0).unwrap().start, 0);
        let a = b.offer(5_000, 1500, 1000, false, 0.0).unwrap();
        assert_eq!((a.start, a.finish), (12_000, 24_000));
        b.offer(6_000, 1500, 10, false, 0.0).unwrap();
        // At 12 µs the first is gone, the second on the wire, the third waits.
        assert_eq!(b.unsent(12_000), (1, 10));
    }

    #[test]
    fn red_judges_the_waiting_queue_in_its_unit_and_marks_ecn_capable_packets() {
        // Instantaneous RED (weight 1) in packets: min 2, max 4, max_p 1. The arrival finding 2
        // waiting has p_b = 0 and starts the count (0); the next, finding 3, has p_b = 0.5 and
        // count 1, so p_a = p_b / (1 − p_b) = 1: it is signalled whatever the draw, and so is
        // the one after it (count 1 again after the reset).
        let red = Red::new(RedParams {
            min_th: 2.0,
            max_th: 4.0,
            max_p: 1.0,
            weight: 1.0,
            gentle: false,
            ecn: true,
        });
        let mut b = Bottleneck::new(
            Serializer::rate(1e6),
            QueueLimits::packets(100),
            Some(red),
            RedUnit::Packets,
            1500,
        );
        for _ in 0..4 {
            // 0, 0, 1, 2 waiting: below min_th or at it (p_b = 0): accepted.
            assert!(b.offer(0, 1500, 0, false, 0.99).is_ok());
        }
        assert_eq!(b.waiting_packets(0), 3);
        assert_eq!(b.offer(0, 1500, 0, false, 0.4), Err(DropReason::RedEarly));
        let a = b.offer(0, 1500, 0, true, 0.0).unwrap();
        assert!(a.marked);
        // Five waiting: avg 5 ≥ max_th: forced, ECN or not.
        assert_eq!(b.offer(0, 1500, 0, true, 0.99), Err(DropReason::RedForced));
    }

    #[test]
    fn overhead_counts_in_the_wire_size_of_every_packet() {
        // 1 Gb/s, 38 B of framing: a 1500-byte packet is 1538 B on the wire, 12,304 ns.
        let mut b = droptail(1e9, QueueLimits::bytes(3 * 1538)).with_overhead(38);
        assert_eq!(b.overhead(), 38);
        assert_eq!(b.typical_tx_ns(), 12_304);
        assert_eq!(finish(&mut b, 0, 1500), Ok(12_304));
        // The byte limit counts wire bytes: three 1538-byte packets wait behind the first, a
        // fourth (1538 more) does not fit, though 4 × 1500 IP bytes would.
        for k in 2..=4 {
            assert_eq!(finish(&mut b, 0, 1500), Ok(k * 12_304));
        }
        assert_eq!(b.waiting_bytes(0), 3 * 1538);
        assert_eq!(finish(&mut b, 0, 1500), Err(DropReason::QueueFull));
        // A copy keeps the overhead.
        let mut c = b.empty_copy();
        assert_eq!(finish(&mut c, 0, 62), Ok(800));
    }

    #[test]
    fn red_in_bytes_counts_waiting_bytes() {
        // Instantaneous RED in bytes: forced at 3000 B waiting. With 1500 B on the wire and
        // 1500 + 1000 waiting, an arrival is judged on 2500 B and passes; the next on 3500 B.
        let red = Red::new(RedParams {
            min_th: 2900.0,
            max_th: 3000.0,
            max_p: 0.1,
            weight: 1.0,
            gentle: false,
            ecn: false,
        });
        let mut b = Bottleneck::new(
            Serializer::rate(1e6),
            QueueLimits::default(),
            Some(red),
            RedUnit::Bytes,
            1500,
        );
        for size in [1500, 1500, 1000, 1000] {
            assert!(b.offer(0, size, 0, false, 0.99).is_ok());
        }
        assert_eq!(b.offer(0, 100, 0, false, 0.99), Err(DropReason::RedForced));
    }
}
