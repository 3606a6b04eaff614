//! The pending-event set: a binary min-heap of small `Copy` entries keyed by (time, sequence).
//!
//! The sequence number breaks ties in scheduling order, so two events at the same nanosecond
//! always run in the same order and a run is reproducible bit for bit (ns-3 orders by
//! (time, uid) for the same reason). Keys are unique, so any correct priority queue pops the
//! same sequence: the layout below is free to be whatever is fastest. Links are delay lines
//! with one pending event each (`port`), so the heap holds O(links + flows) entries and stays
//! in cache; a calendar queue pays off only for large pending sets (notes/simulation.md §4.3:
//! at 1,000 entries a binary heap does ~11 M operations/s, at 16 entries ~20 M).
//!
//! Two details make it cheaper than `std::collections::BinaryHeap` for the simulator's
//! pattern, which is almost always "pop the earliest event, then schedule one more":
//!
//! * **A popped root leaves a hole.** `pop` takes the root and leaves its slot empty; if the
//!   next operation is a `push`, the new entry drops into the hole and sifts down — one sift
//!   for the pair instead of a sift-down for the pop and a sift-up for the push. Only a `pop`
//!   that follows a `pop` refills the hole from the last entry first.
//! * **Entries are three machine words** — the key as one `u128` (time in the high half,
//!   sequence in the low) compared in one go, and the event packed into a `u64` — written and
//!   read whole, so moving one never stalls on a partly forwarded store.

/// What happens when an event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// The head of a port's delay line reaches the far end.
    Arrive(u32),
    /// A flow endpoint's timer (flow index × 2 + side).
    Timer(u32),
    /// An unresponsive cross-traffic source emits or changes phase.
    Cross(u32),
    /// A responsive cross-traffic source starts a transfer.
    Transfer(u32),
    /// Record a time-series sample.
    Sample,
    /// Close a 1-second interval of aggregate throughput.
    Second,
}

impl Ev {
    /// The event as one word: the variant in the high half, its index in the low.
    fn pack(self) -> u64 {
        let (kind, index) = match self {
            Ev::Arrive(i) => (0, i),
            Ev::Timer(i) => (1, i),
            Ev::Cross(i) => (2, i),
            Ev::Transfer(i) => (3, i),
            Ev::Sample => (4, 0),
            Ev::Second => (5, 0),
        };
        (kind << 32) | index as u64
    }

    fn unpack(word: u64) -> Ev {
        let index = word as u32;
        match word >> 32 {
            0 => Ev::Arrive(index),
            1 => Ev::Timer(index),
            2 => Ev::Cross(index),
            3 => Ev::Transfer(index),
            4 => Ev::Sample,
            _ => Ev::Second,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// `time << 64 | seq`: earlier first, then scheduled first.
    key: u128,
    ev: u64,
}

#[derive(Debug, Default)]
pub struct EventQueue {
    /// A binary min-heap on `key`, except that slot 0 is empty while `hole` is set.
    heap: Vec<Entry>,
    hole: bool,
    seq: u64,
}

impl EventQueue {
    /// Always inlined: each caller names its event's variant, so packing it folds to a constant.
    #[inline(always)]
    pub fn push(&mut self, time: u64, ev: Ev) {
        self.seq += 1;
        let e = Entry {
            key: ((time as u128) << 64) | self.seq as u128,
            ev: ev.pack(),
        };
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
        let time = (root.key >> 64) as u64;
        if time > limit {
            return None;
        }
        self.hole = true;
        Some((time, Ev::unpack(root.ev)))
    }

    pub fn pop(&mut self) -> Option<(u64, Ev)> {
        self.pop_until(u64::MAX)
    }

    pub fn peek_time(&mut self) -> Option<u64> {
        self.fill_hole();
        self.heap.first().map(|e| (e.key >> 64) as u64)
    }

    pub fn len(&self) -> usize {
        self.heap.len() - self.hole as usize
    }

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
    fn sift_up(&mut self, mut i: usize, e: Entry) {
        let h = &mut self.heap[..];
        while i > 0 {
            let parent = (i - 1) / 2;
            if h[parent].key <= e.key {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = e;
    }

    /// Place `e` at `i` (whose old content is garbage) and move it towards the leaves.
    fn sift_down(&mut self, mut i: usize, e: Entry) {
        let h = &mut self.heap[..];
        let n = h.len();
        loop {
            let left = 2 * i + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && h[right].key < h[left].key {
                right
            } else {
                left
            };
            if e.key <= h[child].key {
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
    fn earliest_first_ties_in_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, Ev::Sample);
        q.push(3, Ev::Arrive(1));
        q.push(5, Ev::Arrive(2));
        q.push(3, Ev::Arrive(0));
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert!(q.is_empty());
        assert_eq!(
            order,
            vec![
                (3, Ev::Arrive(1)),
                (3, Ev::Arrive(0)),
                (5, Ev::Sample),
                (5, Ev::Arrive(2))
            ]
        );
    }

    /// The heap against a sorted reference, with pushes and pops interleaved as the engine
    /// does them (pop, then usually push), many ties, and pops that drain it.
    #[test]
    fn pops_in_key_order_under_interleaving() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let mut q = EventQueue::default();
        let mut reference: Vec<(u64, u64, Ev)> = Vec::new();
        let mut seq = 0u64;
        let mut now = 0u64;
        for step in 0..20_000u32 {
            let pushes = match rng.gen_range(0..10) {
                0 => 0,
                1 => 3,
                _ => 1,
            };
            for _ in 0..pushes {
                let t = now + rng.gen_range(0..5u64);
                let ev = Ev::Arrive(step);
                seq += 1;
                q.push(t, ev);
                reference.push((t, seq, ev));
            }
            reference.sort_by_key(|&(t, s, _)| std::cmp::Reverse((t, s)));
            let expect = reference.pop().map(|(t, _, ev)| (t, ev));
            assert_eq!(q.pop(), expect, "step {step}");
            assert_eq!(q.len(), reference.len());
            if let Some((t, _)) = expect {
                now = t;
            }
        }
        while let Some((t, _, ev)) = reference.pop() {
            assert_eq!(q.pop(), Some((t, ev)));
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
        for ev in [Ev::Sample, Ev::Second, Ev::Transfer(u32::MAX)] {
            assert_eq!(Ev::unpack(ev.pack()), ev);
        }
    }
}
