//! The receive side of the byte stream: reassembly in offset order and the receive window.
//!
//! Bytes below `frontier` have all arrived; the application reads from `read` up to it. Data
//! above the frontier is kept as a sorted list of disjoint, non-touching ranges (and, in real
//! mode, its bytes in a buffer that starts at `read`). New data normally lands at the end of
//! the list (O(1)); a retransmission normally fills the oldest hole, at the front (O(1)); other
//! positions cost a binary search plus a move of the shorter side of the list.
//!
//! The window: data may not extend beyond `read + window`, less what the application holds
//! ([`Reassembly::set_held`]: bytes it has read but not yet finished with, such as a file's
//! pieces queued for the disk), so that the bytes buffered here and there together stay
//! within the window and a slow disk holds the sender back instead of filling the pages. The
//! limit never moves back: a sender may already use one advertised. Data beyond it is rejected
//! with [`PacketError::OutOfWindow`]; it can only come from a sender that ignored our
//! advertised limit. In real mode the bytes live in a [`PagedBuffer`]: memory follows the data actually
//! held (never more than the window plus a page per out-of-order range), not the distance to
//! the highest offset received, so a packet at the window's far edge costs one page.
//!
//! **Bytes taken where they arrived.** A caller may offer to take in-order bytes itself
//! ([`Reassembly::insert_taking`] with `room`): while every byte that has arrived is read
//! (`read == frontier`), the part of an arriving packet that continues the stream (up to
//! `room` bytes) is not copied anywhere; it counts as read at once, and the caller is told
//! which bytes of the payload those are, to take them from the packet (or, where the
//! datagram was received into the caller's own storage, to leave them where they lie).
//! Anything else — data beyond a hole, the part of a packet past `room`, bytes the
//! application has not read yet — takes the pages, so the order of the bytes the
//! application sees is the stream's. (The receiver of a file takes them into the piece its
//! writer takes next: at most one copy of each byte in user space, none when the datagram
//! was received into the piece.)

use crate::error::PacketError;
use crate::pages::PagedBuffer;
use std::collections::VecDeque;

/// The most disjoint ranges held above the frontier. Each costs 16 bytes of bookkeeping, so a
/// sender spraying tiny packets into every other gap could otherwise make it grow with the
/// window; a legitimate sender at 10 % loss on a 64 MiB window leaves about 5,000 holes. A
/// packet that would open one more is rejected (not acknowledged), and is sent again later.
pub const MAX_RANGES: usize = 1 << 16;

/// What [`Reassembly::insert_taking`] did with a packet.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inserted {
    /// Bytes of the stream that were new.
    pub new: u64,
    /// The bytes of the payload the caller takes (already counted as read); empty when none.
    pub taken: std::ops::Range<usize>,
}

pub struct Reassembly {
    synthetic: bool,
    /// Real mode: the bytes received and not yet read, by stream offset.
    buf: PagedBuffer,
    read: u64,
    frontier: u64,
    /// Received ranges above the frontier, `[start, end)`, ascending.
    ranges: VecDeque<(u64, u64)>,
    /// The end of the highest data received.
    highest: u64,
    fin: Option<u64>,
    window: u64,
    /// Bytes read that the application still holds ([`Reassembly::set_held`]).
    held: u64,
    /// The highest limit advertised: the limit never goes below it.
    advertised: u64,
    /// Bytes taken by the caller since the last `take_direct`.
    direct: u64,
}

impl std::fmt::Debug for Reassembly {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reassembly")
            .field("read", &self.read)
            .field("frontier", &self.frontier)
            .field("ranges", &self.ranges.len())
            .field("highest", &self.highest)
            .field("fin", &self.fin)
            .finish()
    }
}

impl Reassembly {
    pub fn new(synthetic: bool, window: u64) -> Reassembly {
        Reassembly {
            synthetic,
            buf: PagedBuffer::new(),
            read: 0,
            frontier: 0,
            ranges: VecDeque::new(),
            highest: 0,
            fin: None,
            window,
            held: 0,
            advertised: 0,
            direct: 0,
        }
    }

    /// Bytes the caller took since the last call: read by the application.
    pub fn take_direct(&mut self) -> u64 {
        std::mem::take(&mut self.direct)
    }

    /// The flow-control limit: a window past what the application has read, less what it
    /// holds, and never below a limit advertised before (the sender may be using it).
    pub fn max_offset(&self) -> u64 {
        (self.read + self.window - self.held.min(self.window)).max(self.advertised)
    }

    /// The limit, for a packet to the peer: from now on it never goes below this.
    pub fn advertise(&mut self) -> u64 {
        self.advertised = self.max_offset();
        self.advertised
    }

    /// The application holds `bytes` of what it has read (the total now, not an addition):
    /// they count against the window until it lets them go.
    pub fn set_held(&mut self, bytes: u64) {
        self.held = bytes;
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
    #[cfg(test)]
    pub fn insert(
        &mut self,
        offset: u64,
        len: u64,
        payload: &[u8],
        fin: bool,
    ) -> Result<u64, PacketError> {
        self.insert_taking(offset, len, payload, fin, 0)
            .map(|i| i.new)
    }

    /// Accept `[offset, offset + len)` (`payload` is empty in synthetic mode), the caller
    /// taking up to `room` of the packet's in-order bytes itself (see the module's header):
    /// `taken` says which bytes of `payload` those are.
    pub fn insert_taking(
        &mut self,
        offset: u64,
        len: u64,
        payload: &[u8],
        fin: bool,
        room: usize,
    ) -> Result<Inserted, PacketError> {
        let end = offset + len;
        if end > self.max_offset() {
            return Err(PacketError::OutOfWindow {
                offset,
                end,
                limit: self.max_offset(),
            });
        }
        // Checked before anything changes: a rejected packet leaves no trace.
        if offset > self.frontier
            && self.ranges.len() >= MAX_RANGES
            && !self.touches_range(offset, end)
        {
            return Err(PacketError::TooManyRanges {
                offset,
                max: MAX_RANGES,
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
            return Ok(Inserted::default());
        }
        self.highest = self.highest.max(end);
        let before = self.received_above_frontier(start, end);
        let mut at = start;
        let mut taken = 0..0;
        if start == self.frontier && self.read == self.frontier && !self.synthetic && room > 0 {
            // Taken by the caller, read as it arrives.
            let k = ((end - at).min(usize::MAX as u64) as usize).min(room);
            let from = (at - offset) as usize;
            taken = from..from + k;
            at += k as u64;
            self.direct += k as u64;
            self.read = at;
            self.frontier = at;
            // Held ranges the taken bytes reached are in order now (their bytes in the pages,
            // from `read` on).
            self.merge_front();
            self.buf.release(self.read);
        }
        // The rest (or all of it) through the pages.
        let rest = at.max(self.frontier);
        if rest < end {
            if !self.synthetic {
                self.buf.write(rest, &payload[(rest - offset) as usize..]);
            }
            if rest == self.frontier {
                // In order (the common case): no range to record, just move the frontier.
                self.frontier = end;
            } else {
                self.insert_range(rest, end);
            }
            self.merge_front();
        }
        Ok(Inserted {
            new: end - start - before,
            taken,
        })
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

    /// `[s, e)` overlaps or touches a held range (inserting it opens no new range).
    fn touches_range(&self, s: u64, e: u64) -> bool {
        let i = self.ranges.partition_point(|r| r.1 < s);
        self.ranges.get(i).is_some_and(|r| r.0 <= e)
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
        self.buf.read(self.read, &mut out[..n]);
        self.read += n as u64;
        self.buf.release(self.read);
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

    /// Bytes of memory the real-mode buffer holds; the tests hold the buffer to it.
    #[cfg(test)]
    pub fn memory(&self) -> usize {
        self.buf.memory()
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

    /// Against a stream read through the pages alone: every arrival order, with the caller
    /// taking some in-order bytes from the packets (a random room each time) and reading the
    /// pages now and then, gives the application the same bytes in the same order, and the
    /// counts of new and taken bytes add up.
    #[test]
    fn bytes_taken_from_packets_are_the_stream_in_order_whatever_the_arrival_order() {
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};
        // Several of the buffer's 64 KiB pages, in packets of up to 3000 bytes.
        let stream: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut rng = SmallRng::seed_from_u64(5);
        for round in 0..40 {
            let mut r = Reassembly::new(false, 1 << 20);
            // Packets of 1..=3000 bytes, sent in a shuffled order with duplicates.
            let mut packets = Vec::new();
            let mut at = 0;
            while at < stream.len() {
                let len = rng.gen_range(1..=3000).min(stream.len() - at);
                packets.push((at, len));
                at += len;
            }
            for i in 0..packets.len() {
                let j = rng.gen_range(i.saturating_sub(60)..=(i + 60).min(packets.len() - 1));
                packets.swap(i, j);
            }
            let dups: Vec<_> = (0..packets.len() / 10)
                .map(|_| packets[rng.gen_range(0..packets.len())])
                .collect();
            packets.extend(dups);
            let mut got = Vec::new();
            let (mut new, mut direct, mut taken) = (0, 0, 0);
            for (k, &(off, len)) in packets.iter().enumerate() {
                let room = if rng.gen_bool(0.7) {
                    rng.gen_range(0..6000)
                } else {
                    0
                };
                let fin = off + len == stream.len();
                let payload = &stream[off..off + len];
                let i = r
                    .insert_taking(off as u64, len as u64, payload, fin, room)
                    .unwrap();
                assert!(i.taken.len() <= room);
                new += i.new;
                taken += i.taken.len() as u64;
                got.extend_from_slice(&payload[i.taken]);
                direct += r.take_direct();
                // Now and then the application reads the pages.
                if k % 3 == 0 {
                    let mut out = vec![0u8; 5000];
                    let n = r.read(&mut out);
                    got.extend_from_slice(&out[..n]);
                }
            }
            let mut out = vec![0u8; stream.len()];
            let n = r.read(&mut out);
            got.extend_from_slice(&out[..n]);
            let first_wrong = got.iter().zip(&stream).position(|(a, b)| a != b);
            assert!(
                got == stream,
                "round {round}: {} bytes of {}, first wrong at {first_wrong:?}",
                got.len(),
                stream.len()
            );
            assert_eq!(new, stream.len() as u64);
            assert_eq!(direct, taken, "round {round}");
            assert!(r.is_finished(), "round {round}");
            if round == 0 {
                assert!(direct > 0, "nothing was taken from a packet");
            }
        }
    }

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
    fn bytes_the_application_holds_count_against_the_window_but_an_advertised_limit_stays() {
        let mut r = Reassembly::new(true, 3000);
        assert_eq!(r.insert(0, 1000, &[], false), Ok(1000));
        assert_eq!(r.read_synthetic(), 1000);
        r.set_held(1000);
        assert_eq!(r.max_offset(), 3000);
        assert!(matches!(
            r.insert(1000, 2001, &[], false),
            Err(PacketError::OutOfWindow { limit: 3000, .. })
        ));
        assert_eq!(r.insert(1000, 2000, &[], false), Ok(2000));
        assert_eq!(r.read_synthetic(), 2000);
        // Held as they are read: the limit stands, and is advertised.
        r.set_held(3000);
        assert_eq!(r.advertise(), 3000);
        // Letting bytes go moves it on; holding more again cannot take back what was
        // advertised.
        r.set_held(500);
        assert_eq!(r.advertise(), 5500);
        r.set_held(3000);
        assert_eq!(r.max_offset(), 5500);
        assert_eq!(r.insert(3000, 2500, &[], false), Ok(2500));
        // A hold past the window stops the limit where it stands, never before `read`.
        r.set_held(u64::MAX);
        assert_eq!(r.max_offset(), 5500);
        assert_eq!(r.read_synthetic(), 2500);
        r.set_held(0);
        assert_eq!(r.max_offset(), 8500);
    }

    #[test]
    fn a_packet_at_the_far_edge_of_a_large_window_costs_one_page() {
        let window = 4u64 << 30;
        let mut r = Reassembly::new(false, window);
        assert_eq!(r.insert(window - 1400, 1400, &[1u8; 1400], false), Ok(1400));
        assert!(
            r.memory() <= crate::pages::PAGE,
            "{} bytes held",
            r.memory()
        );
    }

    #[test]
    fn ranges_are_capped_but_filling_holes_is_always_accepted() {
        let mut r = Reassembly::new(true, u64::MAX / 4);
        for i in 0..MAX_RANGES as u64 {
            r.insert(10 + 10 * i, 1, &[], false).unwrap();
        }
        assert_eq!(r.range_count(), MAX_RANGES);
        let far = 10 + 10 * MAX_RANGES as u64 + 100;
        assert!(matches!(
            r.insert(far, 1, &[], false),
            Err(PacketError::TooManyRanges { .. })
        ));
        // Extending a held range and filling the first hole still work.
        assert_eq!(r.insert(11, 2, &[], false), Ok(2));
        assert_eq!(r.insert(0, 10, &[], false), Ok(10));
        assert_eq!(r.range_count(), MAX_RANGES - 1);
        assert!(r.insert(far, 1, &[], false).is_ok());
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
