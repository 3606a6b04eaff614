//! The bottleneck queue's occupancy and its droptail limits.
//!
//! With logical timestamps (see `serializer`) a packet's finish time is known when it arrives, so
//! the queue does not have to hold the packet itself: it is enough to remember the finish times of
//! the packets that have been admitted and not yet sent. At any instant `t` the queue holds exactly
//! the admitted packets whose finish time is after `t`, *including the one being serialised* — the
//! buffer of a store-and-forward router holds a packet until its last bit is on the wire.
//!
//! Consequence, used by the tests: a burst of N packets arriving together at an idle link whose
//! queue holds Q packets loses exactly N − Q of them (droptail: the last arrivals are dropped).
//!
//! Limits may be in packets, in bytes, or both (a packet is admitted only if it fits both), as in
//! mahimahi's `droptail` (`packets=N,bytes=B`). No limit means an unbounded queue (mahimahi's
//! `infinite`); the emulator never runs one by default: a rated direction given no limit gets
//! `config::DEFAULT_QUEUE_PACKETS`.

use super::Nanos;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Droptail limits; `None` = unlimited in that unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct QueueLimits {
    /// Most packets the queue holds, including the one being sent.
    pub packets: Option<u32>,
    /// Most wire bytes the queue holds, including the packet being sent.
    pub bytes: Option<u64>,
}

/// Occupancy of the bottleneck buffer.
#[derive(Debug, Clone, Default)]
pub struct BottleneckQueue {
    limits: QueueLimits,
    /// (finish time, bytes) of each admitted packet not yet finished, in FIFO order.
    in_queue: VecDeque<(Nanos, u32)>,
    bytes: u64,
}

impl BottleneckQueue {
    /// An empty queue with these limits.
    pub fn new(limits: QueueLimits) -> Self {
        Self {
            limits,
            in_queue: VecDeque::new(),
            bytes: 0,
        }
    }

    /// The queue's limits.
    pub fn limits(&self) -> QueueLimits {
        self.limits
    }

    /// Forgets packets whose last bit left at or before `now`. Returns true if this emptied it.
    pub fn advance(&mut self, now: Nanos) -> bool {
        let was_busy = !self.in_queue.is_empty();
        while let Some(&(finish, b)) = self.in_queue.front() {
            if finish > now {
                break;
            }
            self.bytes -= b as u64;
            self.in_queue.pop_front();
        }
        was_busy && self.in_queue.is_empty()
    }

    /// Finish time of the last packet in the queue, if any.
    pub fn last_finish(&self) -> Option<Nanos> {
        self.in_queue.back().map(|&(f, _)| f)
    }

    /// Packets in the queue, including the one being sent.
    pub fn len_packets(&self) -> usize {
        self.in_queue.len()
    }

    /// Wire bytes in the queue, including the packet being sent.
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether a packet of `bytes` fits under the droptail limits.
    pub fn fits(&self, bytes: u32) -> bool {
        let p_ok = self
            .limits
            .packets
            .is_none_or(|l| self.in_queue.len() < l as usize);
        let b_ok = self
            .limits
            .bytes
            .is_none_or(|l| self.bytes + bytes as u64 <= l);
        p_ok && b_ok
    }

    /// Records an admitted packet that will finish at `finish` (finish times never decrease).
    pub fn push(&mut self, finish: Nanos, bytes: u32) {
        debug_assert!(self.last_finish().is_none_or(|l| l <= finish));
        self.in_queue.push_back((finish, bytes));
        self.bytes += bytes as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_limit_counts_the_packet_in_service() {
        let mut q = BottleneckQueue::new(QueueLimits {
            packets: Some(2),
            bytes: None,
        });
        assert!(q.fits(1500));
        q.push(10, 1500);
        assert!(q.fits(1500));
        q.push(20, 1500);
        assert!(!q.fits(1500));
        q.advance(9);
        assert!(!q.fits(1500));
        q.advance(10);
        assert!(q.fits(1500));
        assert_eq!((q.len_packets(), q.len_bytes()), (1, 1500));
        assert!(q.advance(20));
        assert_eq!((q.len_packets(), q.len_bytes()), (0, 0));
    }

    #[test]
    fn byte_limit_admits_small_packets_a_large_one_would_overflow() {
        let mut q = BottleneckQueue::new(QueueLimits {
            packets: None,
            bytes: Some(3000),
        });
        q.push(1, 1500);
        q.push(2, 1000);
        assert!(!q.fits(1500)); // 2500 + 1500 > 3000
        assert!(q.fits(500)); // exactly 3000
    }
}
