//! The receive side of the byte stream: reassembly in offset order and the receive window.
//!
//! Bytes below `frontier` have all arrived; the application reads from `read` up to it. Data
//! above the frontier is kept as a sorted list of disjoint, non-touching ranges (and, in real
//! mode, its bytes in a buffer that starts at `read`). New data normally lands at the end of
//! the list (O(1)); a retransmission normally fills the oldest hole, at the front (O(1)); other
//! positions cost a binary search plus a move of the shorter side of the list.
//!
//! The window: data may not extend beyond `read + window`. Data beyond it is rejected with
//! [`PacketError::OutOfWindow`]; it can only come from a sender that ignored our advertised
//! limit. The real-mode buffer therefore never exceeds `window` bytes; it grows to what is in
//! use and is then reused.

use crate::error::PacketError;
use std::collections::VecDeque;

#[derive(Debug)]
pub struct Reassembly {
    synthetic: bool,
    /// Real mode: bytes from `read` to the end of the highest data received (holes are zero).
    buf: VecDeque<u8>,
    read: u64,
    frontier: u64,
    /// Received ranges above the frontier, `[start, end)`, ascending.
    ranges: VecDeque<(u64, u64)>,
    /// The end of the highest data received.
    highest: u64,
    fin: Option<u64>,
    window: u64,
}

impl Reassembly {
    pub fn new(synthetic: bool, window: u64) -> Reassembly {
        Reassembly {
            synthetic,
            buf: VecDeque::new(),
            read: 0,
            frontier: 0,
            ranges: VecDeque::new(),
            highest: 0,
            fin: None,
            window,
        }
    }

    /// The flow-control limit to advertise.
    pub fn max_offset(&self) -> u64 {
        self.read + self.window
    }

    /// Every byte below this has arrived.
    pub fn frontier(&self) -> u64 {
        self.frontier
    }

    /// Bytes ready for the application.
    pub fn readable(&self) -> u64 {
        self.frontier - self.read
    }

    /// The application has read everything up to the fin.
    pub fn is_finished(&self) -> bool {
        self.fin == Some(self.read)
    }

    /// The fin arrived and every byte before it.
    #[cfg(test)]
    pub fn is_complete(&self) -> bool {
        self.fin == Some(self.frontier)
    }

    /// Accept `[offset, offset + len)` (`payload` is empty in synthetic mode). Returns the number
    /// of bytes that were new.
    pub fn insert(
        &mut self,
        offset: u64,
        len: u64,
        payload: &[u8],
        fin: bool,
    ) -> Result<u64, PacketError> {
        let end = offset + len;
        if end > self.max_offset() {
            return Err(PacketError::OutOfWindow {
                offset,
                end,
                limit: self.max_offset(),
            });
        }
        if let Some(f) = self.fin {
            if end > f || (fin && end != f) {
                return Err(PacketError::FinConflict { fin: end, known: f });
            }
        } else if fin {
            if end < self.highest {
                return Err(PacketError::FinConflict {
                    fin: end,
                    known: self.highest,
                });
            }
            self.fin = Some(end);
        }
        let start = offset.max(self.frontier);
        if start >= end {
            return Ok(0);
        }
        self.highest = self.highest.max(end);
        if !self.synthetic {
            let need = (self.highest - self.read) as usize;
            if self.buf.len() < need {
                self.buf.resize(need, 0);
            }
            let src = &payload[(start - offset) as usize..];
            let at = (start - self.read) as usize;
            let (a, b) = self.buf.as_mut_slices();
            let n = src.len();
            if at < a.len() {
                let k = (a.len() - at).min(n);
                a[at..at + k].copy_from_slice(&src[..k]);
                b[..n - k].copy_from_slice(&src[k..]);
            } else {
                let s = at - a.len();
                b[s..s + n].copy_from_slice(src);
            }
        }
        if start == self.frontier {
            // In order (the common case): no range to record, just move the frontier.
            let before = self.received_above_frontier(start, end);
            self.frontier = end;
            self.merge_front();
            return Ok(end - start - before);
        }
        let before = self.received_above_frontier(start, end);
        self.insert_range(start, end);
        self.merge_front();
        Ok(end - start - before)
    }

    /// Absorb ranges that the frontier has reached.
    fn merge_front(&mut self) {
        while let Some(&(s, e)) = self.ranges.front() {
            if s > self.frontier {
                break;
            }
            self.frontier = self.frontier.max(e);
            self.ranges.pop_front();
        }
    }

    /// Bytes of `[start, end)` already held above the frontier (to count duplicates).
    fn received_above_frontier(&self, start: u64, end: u64) -> u64 {
        let i = self.ranges.partition_point(|r| r.1 <= start);
        let mut held = 0;
        for &(s, e) in self.ranges.range(i..) {
            if s >= end {
                break;
            }
            held += e.min(end) - s.max(start);
        }
        held
    }

    fn insert_range(&mut self, s: u64, e: u64) {
        let i = self.ranges.partition_point(|r| r.1 < s);
        let (mut ns, mut ne) = (s, e);
        let mut j = i;
        while j < self.ranges.len() && self.ranges[j].0 <= e {
            ns = ns.min(self.ranges[j].0);
            ne = ne.max(self.ranges[j].1);
            j += 1;
        }
        if j == i {
            self.ranges.insert(i, (ns, ne));
        } else {
            self.ranges[i] = (ns, ne);
            self.ranges.drain(i + 1..j);
        }
    }

    /// Real mode: copy contiguous bytes into `out`; returns the count.
    pub fn read(&mut self, out: &mut [u8]) -> usize {
        if self.synthetic {
            return 0;
        }
        let n = (self.readable() as usize).min(out.len());
        let (a, b) = self.buf.as_slices();
        let first = n.min(a.len());
        out[..first].copy_from_slice(&a[..first]);
        out[first..n].copy_from_slice(&b[..n - first]);
        self.buf.drain(..n);
        self.read += n as u64;
        n
    }

    /// Synthetic mode: consume every contiguous byte; returns the count.
    pub fn read_synthetic(&mut self) -> u64 {
        if !self.synthetic {
            return 0;
        }
        let n = self.readable();
        self.read += n;
        n
    }

    /// Out-of-order ranges held.
    #[cfg(test)]
    pub fn range_count(&self) -> usize {
        self.ranges.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reassembles_out_of_order_and_counts_duplicates() {
        let mut r = Reassembly::new(false, 100);
        assert_eq!(r.insert(4, 4, b"efgh", false), Ok(4));
        assert_eq!(r.readable(), 0);
        assert_eq!(r.insert(10, 2, b"kl", true), Ok(2));
        assert_eq!(r.range_count(), 2);
        assert_eq!(r.insert(5, 2, b"fg", false), Ok(0), "duplicate");
        assert_eq!(r.insert(0, 4, b"abcd", false), Ok(4));
        assert_eq!(r.readable(), 8);
        assert_eq!(r.insert(8, 2, b"ij", false), Ok(2));
        assert!(r.is_complete());
        let mut out = [0u8; 5];
        assert_eq!(r.read(&mut out), 5);
        assert_eq!(&out, b"abcde");
        let mut out = [0u8; 16];
        assert_eq!(r.read(&mut out), 7);
        assert_eq!(&out[..7], b"fghijkl");
        assert!(r.is_finished());
    }

    #[test]
    fn the_window_is_enforced_and_moves_with_reads() {
        let mut r = Reassembly::new(true, 3000);
        assert_eq!(
            r.insert(2000, 1001, &[], false),
            Err(PacketError::OutOfWindow {
                offset: 2000,
                end: 3001,
                limit: 3000
            })
        );
        assert_eq!(r.insert(0, 1500, &[], false), Ok(1500));
        assert_eq!(r.read_synthetic(), 1500);
        assert_eq!(r.max_offset(), 4500);
        assert_eq!(r.insert(2000, 1001, &[], false), Ok(1001));
    }

    #[test]
    fn conflicting_fins_are_rejected() {
        let mut r = Reassembly::new(true, 1 << 20);
        r.insert(0, 100, &[], true).unwrap();
        assert!(matches!(
            r.insert(100, 10, &[], false),
            Err(PacketError::FinConflict { .. })
        ));
        let mut r = Reassembly::new(true, 1 << 20);
        r.insert(100, 100, &[], false).unwrap();
        assert!(matches!(
            r.insert(0, 50, &[], true),
            Err(PacketError::FinConflict { .. })
        ));
    }
}
