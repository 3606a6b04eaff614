//! The pending-event set: a binary min-heap of events keyed by (time, kind, index).
//!
//! **Order.** Events run in time order; events at the same nanosecond run in a fixed order
//! that depends only on the events themselves: first by kind — `Sample`, `Second`, `Arrive`,
//! `Cross`, `Transfer`, `Timer`, `Stall` — then by the index the event carries (the port, the source,
//! the endpoint) permuted by the time: indices are compared after an XOR with a hash of the
//! nanosecond, so among ports or flows whose events coincide (identical flows started
//! together do, every round trip) none is first at every tie. A plain index order lets the
//! lowest-numbered flow win every tie, which lowers the aggregate utilization of identical flows
//! started together (see `bench/README.md`, "Ties at the same nanosecond"). The key is unique (a
//! port has one pending arrival, a source one pending emission, and two pending timers of one
//! endpoint at the same time are the same event), so any correct priority queue pops the same
//! sequence and a run is reproducible bit for bit.
//!
//! The order deliberately does not depend on when an event was scheduled (ns-3 breaks ties by a
//! global scheduling counter): a key that is a function of the event alone stays the same when
//! the network is split into parts that schedule their events independently, for example one per
//! processor core, so such a split can reproduce a single-threaded run exactly. The kind order has reasons of its own: samples see the state
//! before anything else happens at their instant; a packet arriving at the same nanosecond as a
//! timeout is delivered first (an ACK that arrives as the retransmission timer expires
//! prevents the timeout, as it would in a host that processes its receive queue before its
//! timers); a host stall that begins or ends at that instant comes last (what arrives as a
//! stall begins is still processed, what arrives as it ends is processed with the backlog).
//!
//! Links are delay lines with one pending event each (`port`), so the heap holds O(links +
//! flows) entries and stays in cache; a calendar queue pays off only for large pending sets.
//!
//! Two details make it cheaper than `std::collections::BinaryHeap` for the simulator's
//! pattern, which is almost always "pop the earliest event, then schedule one more":
//!
//! * **A popped root leaves a hole.** `pop` takes the root and leaves its slot empty; if the
//!   next operation is a `push`, the new entry drops into the hole and sifts down — one sift
//!   for the pair instead of a sift-down for the pop and a sift-up for the push. Only a `pop`
//!   that follows a `pop` refills the hole from the last entry first.
//! * **An entry is its key**: one `u128`, the time in the high half and the event packed into
//!   the low half so that the packed word's order is the tie order — compared in one go, and
//!   written and read whole, so moving one never stalls on a partly forwarded store.

/// What happens when an event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// Record a time-series sample.
    Sample,
    /// Close a 1-second interval of aggregate throughput.
    Second,
    /// The head of a port's delay line reaches the far end.
    Arrive(u32),
    /// An unresponsive cross-traffic source emits or changes phase.
    Cross(u32),
    /// A responsive cross-traffic source starts a transfer.
    Transfer(u32),
    /// A flow endpoint's timer (flow index × 2 + side).
    Timer(u32),
    /// A flow endpoint's host stalls or resumes (flow index × 2 + side; `crate::stall`).
    Stall(u32),
}

/// The permutation of indices at time `t`: an XOR with a multiplicative (Fibonacci) hash of
/// the time, a bijection on `u32` for every `t`.
#[inline(always)]
fn tie_mask(t: u64) -> u64 {
    t.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32
}

impl Ev {
    /// The event as one word whose order is the tie order at time `t`: the kind in the high
    /// half, its index (permuted by `t`) in the low.
    #[inline(always)]
    fn key(self, t: u64) -> Key {
        ((t as u128) << 64) | (self.pack() ^ tie_mask(t)) as u128
    }

    #[inline(always)]
    fn from_key(key: Key) -> (u64, Ev) {
        let t = (key >> 64) as u64;
        (t, Ev::unpack(key as u64 ^ tie_mask(t)))
    }

    #[inline(always)]
    fn pack(self) -> u64 {
        let (kind, index) = match self {
            Ev::Sample => (0, 0),
            Ev::Second => (1, 0),
            Ev::Arrive(i) => (2, i),
            Ev::Cross(i) => (3, i),
            Ev::Transfer(i) => (4, i),
            Ev::Timer(i) => (5, i),
            Ev::Stall(i) => (6, i),
        };
        (kind << 32) | index as u64
    }

    #[inline(always)]
    fn unpack(word: u64) -> Ev {
        let index = word as u32;
        match word >> 32 {
            0 => Ev::Sample,
            1 => Ev::Second,
            2 => Ev::Arrive(index),
            3 => Ev::Cross(index),
            4 => Ev::Transfer(index),
            5 => Ev::Timer(index),
            _ => Ev::Stall(index),
        }
    }
}

/// `time << 64 | (event.pack() ^ tie_mask(time))`.
type Key = u128;

/// The pending events, in the order the module header describes.
#[derive(Debug, Default)]
pub struct EventQueue {
    /// A binary min-heap, except that slot 0 is empty while `hole` is set.
    heap: Vec<Key>,
    hole: bool,
    /// The key of the event popped last.
    last: Key,
}

impl EventQueue {
    /// Always inlined: each caller names its event's variant, so packing it folds to a constant.
    #[inline(always)]
    pub fn push(&mut self, time: u64, ev: Ev) {
        let e = ev.key(time);
        if self.hole {
            self.hole = false;
            self.sift_down(0, e);
        } else {
            self.heap.push(e);
            self.sift_up(self.heap.len() - 1, e);
        }
    }

    /// Pop the earliest event if it is due by `limit`.
    pub fn pop_until(&mut self, limit: u64) -> Option<(u64, Ev)> {
        self.fill_hole();
        let root = *self.heap.first()?;
        if (root >> 64) as u64 > limit {
            return None;
        }
        self.hole = true;
        self.last = root;
        Some(Ev::from_key(root))
    }

    /// Pops the earliest event, whatever its time.
    pub fn pop(&mut self) -> Option<(u64, Ev)> {
        self.pop_until(u64::MAX)
    }

    /// The time of the earliest event, ns; `None` when empty.
    pub fn peek_time(&mut self) -> Option<u64> {
        self.fill_hole();
        self.heap.first().map(|&e| (e >> 64) as u64)
    }

    /// The key of the event popped last: its place in the total order of a run's events.
    pub fn last_key(&self) -> u128 {
        self.last
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len() - self.hole as usize
    }

    /// True when no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Move the last entry into the empty root and restore the heap order.
    fn fill_hole(&mut self) {
        if !self.hole {
            return;
        }
        self.hole = false;
        let last = self.heap.pop().expect("a hole is in a non-empty heap");
        if !self.heap.is_empty() {
            self.sift_down(0, last);
        }
    }

    /// Place `e` at `i` (whose old content is garbage) and move it towards the root.
    fn sift_up(&mut self, mut i: usize, e: Key) {
        let h = &mut self.heap[..];
        while i > 0 {
            let parent = (i - 1) / 2;
            if h[parent] <= e {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = e;
    }

    /// Place `e` at `i` (whose old content is garbage) and move it towards the leaves.
    fn sift_down(&mut self, mut i: usize, e: Key) {
        let h = &mut self.heap[..];
        let n = h.len();
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && h[right] < h[left] {
                right
            } else {
                left
            };
            if e <= h[child] {
                break;
            }
            h[i] = h[child];
            i = child;
        }
        h[i] = e;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_run_by_kind_whatever_the_push_order() {
        let mut q = EventQueue::default();
        q.push(5, Ev::Timer(0));
        q.push(3, Ev::Arrive(4));
        q.push(3, Ev::Timer(1));
        q.push(5, Ev::Sample);
        q.push(3, Ev::Transfer(2));
        q.push(3, Ev::Cross(0));
        q.push(5, Ev::Second);
        q.push(3, Ev::Second);
        q.push(5, Ev::Arrive(2));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert!(q.is_empty());
        assert_eq!(
            order,
            vec![
                (3, Ev::Second),
                (3, Ev::Arrive(4)),
                (3, Ev::Cross(0)),
                (3, Ev::Transfer(2)),
                (3, Ev::Timer(1)),
                (5, Ev::Sample),
                (5, Ev::Second),
                (5, Ev::Arrive(2)),
                (5, Ev::Timer(0)),
            ]
        );
    }

    /// Among events of one kind at one instant, the order of indices changes with the time:
    /// eight ports whose arrivals coincide at 4,096 instants each come first about an eighth
    /// of the time, and the same instant always gives the same order.
    #[test]
    fn no_index_wins_every_tie() {
        let mut first = [0u32; 8];
        for t in 1..=4096u64 {
            let mut q = EventQueue::default();
            for i in 0..8 {
                q.push(t, Ev::Arrive(i));
            }
            let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
            let mut again = EventQueue::default();
            for i in (0..8).rev() {
                again.push(t, Ev::Arrive(i));
            }
            assert_eq!(
                order,
                std::iter::from_fn(|| again.pop()).collect::<Vec<_>>()
            );
            let mut seen: Vec<_> = order.iter().map(|&(_, ev)| ev).collect();
            seen.sort_by_key(|ev| match ev {
                Ev::Arrive(i) => *i,
                _ => unreachable!(),
            });
            assert_eq!(seen, (0..8).map(Ev::Arrive).collect::<Vec<_>>());
            if let (_, Ev::Arrive(i)) = order[0] {
                first[i as usize] += 1;
            }
        }
        // 512 expected each; a fixed order would give 4,096 to one port.
        for (i, n) in first.iter().enumerate() {
            assert!(
                (384..=640).contains(n),
                "port {i} first at {n} of 4096 ties: {first:?}"
            );
        }
    }

    /// The heap against a sorted reference, with pushes and pops interleaved as the engine
    /// does them (pop, then usually push), many ties of every kind, and pops that drain it.
    #[test]
    fn pops_in_key_order_under_interleaving() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, Ev)> = Vec::new();
        let mut now = 0u64;
        for step in 0..20_000u32 {
            let pushes = match rng.gen_range(0..10) {
                0 => 0,
                1 => 3,
                _ => 1,
            };
            for _ in 0..pushes {
                let t = now + rng.gen_range(0..5u64);
                let i = rng.gen_range(0..4u32);
                let ev = [
                    Ev::Sample,
                    Ev::Second,
                    Ev::Arrive(i),
                    Ev::Cross(i),
                    Ev::Transfer(i),
                    Ev::Timer(i),
                ][rng.gen_range(0..6)];
                q.push(t, ev);
                reference.push((t, ev));
            }
            reference.sort_by_key(|(t, ev)| std::cmp::Reverse(ev.key(*t)));
            let expect = reference.pop();
            assert_eq!(q.pop(), expect, "step {step}");
            assert_eq!(q.len(), reference.len());
            if let Some((t, _)) = expect {
                now = t;
            }
        }
        while let Some(e) = reference.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert_eq!(q.pop(), None);
        assert_eq!(q.peek_time(), None);
    }

    #[test]
    fn pop_until_leaves_later_events() {
        let mut q = EventQueue::default();
        q.push(10, Ev::Timer(3));
        q.push(20, Ev::Cross(1));
        assert_eq!(q.pop_until(15), Some((10, Ev::Timer(3))));
        assert_eq!(q.pop_until(15), None);
        assert_eq!(q.len(), 1);
        assert_eq!(q.pop_until(20), Some((20, Ev::Cross(1))));
        for ev in [
            Ev::Sample,
            Ev::Second,
            Ev::Transfer(u32::MAX),
            Ev::Timer(7),
            Ev::Stall(u32::MAX),
        ] {
            assert_eq!(Ev::unpack(ev.pack()), ev);
        }
    }
}
