//! A first-in first-out ring of `Copy` values, for per-packet queues (the bottleneck's backlog,
//! the simulator's delay lines and a sender's in-flight records).
//!
//! It does what `VecDeque` does for these queues with fewer instructions per operation, which
//! matters at several hundred million pushes and pops per simulated hour: the capacity is a
//! power of two, so a slot is `(head + i) & mask` rather than a compare-and-subtract, and the
//! only branch in `push_back` is the rare growth. Growth doubles the buffer and never shrinks it
//! (a queue that once held a bandwidth-delay product of packets will again). Nothing is
//! uninitialised: growth fills new slots with a copy of the value being pushed.

/// A first-in first-out ring of `Copy` values (see the module header).
#[derive(Clone, Debug)]
pub struct Ring<T: Copy> {
    /// `buf.len()` is zero or a power of two.
    buf: Vec<T>,
    /// Slot of the front element.
    head: usize,
    len: usize,
}

impl<T: Copy> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            buf: Vec::new(),
            head: 0,
            len: 0,
        }
    }
}

impl<T: Copy> Ring<T> {
    /// An empty ring.
    pub fn new() -> Self {
        Self::default()
    }

    /// Elements held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds nothing.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn mask(&self) -> usize {
        self.buf.len().wrapping_sub(1)
    }

    /// Adds `value` at the back, doubling the buffer when full.
    #[inline]
    pub fn push_back(&mut self, value: T) {
        if self.len == self.buf.len() {
            self.grow(value);
        }
        let slot = (self.head + self.len) & self.mask();
        self.buf[slot] = value;
        self.len += 1;
    }

    /// Double the buffer, keeping the elements in order from slot 0.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, fill: T) {
        let cap = (self.buf.len() * 2).max(8);
        let mut buf = Vec::with_capacity(cap);
        buf.extend(self.iter());
        buf.resize(cap, fill);
        self.buf = buf;
        self.head = 0;
    }

    /// Removes and returns the front element.
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        let v = self.buf[self.head];
        self.head = (self.head + 1) & self.mask();
        self.len -= 1;
        Some(v)
    }

    /// The front element.
    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.get(0)
    }

    /// The `i`-th element from the front.
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i < self.len {
            Some(&self.buf[(self.head + i) & self.mask()])
        } else {
            None
        }
    }

    /// The `i`-th element from the front, writable.
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if i < self.len {
            let slot = (self.head + i) & self.mask();
            Some(&mut self.buf[slot])
        } else {
            None
        }
    }

    /// The elements, front to back.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        (0..self.len).map(move |i| &self.buf[(self.head + i) & self.mask()])
    }

    /// The elements, front to back, writable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> + '_ {
        let (head, len) = (self.head, self.len);
        let (back, front) = self.buf.split_at_mut(head);
        // The elements are front[..] from `head`, then back[..] from slot 0 once they wrap.
        let first = len.min(front.len());
        front[..first]
            .iter_mut()
            .chain(back[..len - first].iter_mut())
    }
}

impl<T: Copy> std::ops::Index<usize> for Ring<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        self.get(i).expect("ring index in bounds")
    }
}

impl<T: Copy> std::ops::IndexMut<usize> for Ring<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.get_mut(i).expect("ring index in bounds")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// The ring against `VecDeque` under random pushes, pops, reads and writes, through many
    /// wrap-arounds and growths.
    #[test]
    fn behaves_as_a_vecdeque() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(11);
        let mut ring = Ring::new();
        let mut reference = VecDeque::new();
        for step in 0..50_000u64 {
            match rng.gen_range(0..10) {
                0..=4 => {
                    ring.push_back(step);
                    reference.push_back(step);
                }
                5..=7 => assert_eq!(ring.pop_front(), reference.pop_front(), "step {step}"),
                8 if !reference.is_empty() => {
                    let i = rng.gen_range(0..reference.len());
                    ring[i] += 1;
                    reference[i] += 1;
                    assert_eq!(ring[i], reference[i]);
                }
                _ => {
                    for r in ring.iter_mut() {
                        *r ^= 1;
                    }
                    for r in reference.iter_mut() {
                        *r ^= 1;
                    }
                }
            }
            assert_eq!(ring.len(), reference.len());
            assert_eq!(ring.front(), reference.front());
        }
        assert!(ring.iter().eq(reference.iter()));
        assert_eq!(ring.get(ring.len()), None);
    }

    #[test]
    fn growth_keeps_order_across_the_wrap() {
        let mut ring = Ring::new();
        for i in 0..6 {
            ring.push_back(i);
        }
        for i in 0..4 {
            assert_eq!(ring.pop_front(), Some(i));
        }
        // The next pushes wrap around slot 7 to slot 0, then grow the full ring of 8.
        for i in 6..20 {
            ring.push_back(i);
        }
        assert_eq!(
            ring.iter().copied().collect::<Vec<_>>(),
            (4..20).collect::<Vec<_>>()
        );
        assert!(!ring.is_empty());
        assert_eq!(ring.len(), 16);
    }
}
