//! The send side's bytes, from the oldest unacknowledged one to the last one written, as a
//! queue of segments.
//!
//! An application hands bytes over in one of two ways. [`SendBuffer::push_copy`] copies a
//! slice (small messages, or an application that reuses its own buffer). [`SendBuffer::push_owned`]
//! takes a whole buffer without copying it: a file sender that has read a piece of the file
//! into a `Vec` gives the `Vec` itself, and gets it back through [`SendBuffer::take_spent`] once
//! every byte in it is acknowledged, to read the next piece into. Copying every file byte into
//! one ring of bytes instead costs a fifth of the user-space copying on a fast loopback transfer
//! (bench/README.md).
//!
//! Offsets are relative to the front of the buffer (the oldest unacknowledged byte), as the
//! stream uses them. Copied bytes go into segments of at most [`COPY_SEGMENT`] bytes, so a
//! segment is freed soon after its bytes are acknowledged; a buffer the application gave is
//! one segment, freed (and offered back) when its last byte is.

use std::collections::VecDeque;

/// Largest segment `push_copy` fills before it starts another.
pub const COPY_SEGMENT: usize = 64 * 1024;
/// Spent buffers kept for the application to take back; more are dropped.
const SPENT_KEPT: usize = 16;
/// Emptied copy segments kept for reuse, so a steady stream of copies allocates nothing.
const FREE_KEPT: usize = 16;

#[derive(Debug)]
struct Segment {
    bytes: Vec<u8>,
    /// The application gave this buffer and wants it back.
    owned: bool,
}

#[derive(Debug, Default)]
pub struct SendBuffer {
    segments: VecDeque<Segment>,
    /// Bytes of `segments[0]` already released (acknowledged).
    front_released: usize,
    /// Bytes held from the front, released ones excluded.
    len: usize,
    spent: Vec<Vec<u8>>,
    /// Emptied copy segments (capacity [`COPY_SEGMENT`]).
    free: Vec<Vec<u8>>,
}

impl SendBuffer {
    pub fn new() -> SendBuffer {
        SendBuffer::default()
    }

    /// Bytes held (written and not yet released).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Append a copy of `data`.
    pub fn push_copy(&mut self, mut data: &[u8]) {
        self.len += data.len();
        while !data.is_empty() {
            let room = match self.segments.back() {
                Some(s) if !s.owned => COPY_SEGMENT.saturating_sub(s.bytes.len()),
                _ => 0,
            };
            if room == 0 {
                let bytes = self
                    .free
                    .pop()
                    .unwrap_or_else(|| Vec::with_capacity(COPY_SEGMENT));
                self.segments.push_back(Segment {
                    bytes,
                    owned: false,
                });
                continue;
            }
            let n = room.min(data.len());
            let back = self.segments.back_mut().expect("a segment with room");
            back.bytes.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
    }

    /// Append `buf` itself; it comes back through [`SendBuffer::take_spent`] once released.
    pub fn push_owned(&mut self, buf: Vec<u8>) {
        if buf.is_empty() {
            self.recycle(buf);
            return;
        }
        self.len += buf.len();
        self.segments.push_back(Segment {
            bytes: buf,
            owned: true,
        });
    }

    /// Copy `out.len()` bytes starting `offset` bytes after the front into `out`.
    ///
    /// Panics if the range is not held: the stream asks only for bytes it wrote and has not
    /// released.
    pub fn copy_out(&self, offset: usize, out: &mut [u8]) {
        assert!(
            offset + out.len() <= self.len,
            "bytes {offset}..{} of {} held",
            offset + out.len(),
            self.len
        );
        if out.is_empty() {
            return;
        }
        // The segment holding `offset`, found by walking whole segments. Bytes sent for the
        // first time are near the back and retransmissions near the front, so the walk starts
        // at the nearer end.
        let abs = offset + self.front_released;
        let total = self.len + self.front_released;
        let (mut i, mut at);
        if abs < total / 2 {
            (i, at) = (0, abs);
            while at >= self.segments[i].bytes.len() {
                at -= self.segments[i].bytes.len();
                i += 1;
            }
        } else {
            // `start` is where segment `i` begins.
            let (mut start, mut j) = (total, self.segments.len());
            loop {
                j -= 1;
                start -= self.segments[j].bytes.len();
                if start <= abs {
                    break;
                }
            }
            (i, at) = (j, abs - start);
        }
        let mut done = 0;
        while done < out.len() {
            let seg = &self.segments[i].bytes[at..];
            let n = seg.len().min(out.len() - done);
            out[done..done + n].copy_from_slice(&seg[..n]);
            done += n;
            at = 0;
            i += 1;
        }
    }

    /// Release the `n` oldest bytes (acknowledged); whole segments are freed, the buffers the
    /// application gave kept for it to take back.
    pub fn release(&mut self, n: usize) {
        assert!(n <= self.len, "release {n} of {} held", self.len);
        self.len -= n;
        let mut left = n + self.front_released;
        while let Some(front) = self.segments.front() {
            if left < front.bytes.len() {
                break;
            }
            left -= front.bytes.len();
            let mut s = self.segments.pop_front().expect("a front segment");
            if s.owned {
                self.recycle(s.bytes);
            } else if self.free.len() < FREE_KEPT {
                s.bytes.clear();
                self.free.push(s.bytes);
            }
        }
        self.front_released = left;
    }

    /// A buffer given by [`SendBuffer::push_owned`] whose bytes are all acknowledged.
    pub fn take_spent(&mut self) -> Option<Vec<u8>> {
        self.spent.pop()
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        if self.spent.len() < SPENT_KEPT {
            self.spent.push(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn owned_buffers_are_not_copied_and_come_back_once_released() {
        let mut b = SendBuffer::new();
        b.push_copy(b"head");
        let piece = vec![7u8; 1000];
        let at = piece.as_ptr();
        b.push_owned(piece);
        b.push_copy(b"tail");
        assert_eq!(b.len(), 1008);
        let mut out = [0u8; 8];
        b.copy_out(0, &mut out);
        assert_eq!(&out, b"head\x07\x07\x07\x07");
        b.copy_out(1000, &mut out);
        assert_eq!(&out, b"\x07\x07\x07\x07tail");
        b.release(500);
        assert!(
            b.take_spent().is_none(),
            "half the piece is still unacknowledged"
        );
        b.release(504);
        let back = b.take_spent().expect("the piece, released");
        assert_eq!((back.as_ptr(), back.len()), (at, 1000), "the same buffer");
        let mut out = [0u8; 4];
        b.copy_out(0, &mut out);
        assert_eq!(&out, b"tail");
        b.release(4);
        assert_eq!(b.len(), 0);
    }

    #[test]
    fn copies_are_cut_into_bounded_segments() {
        let mut b = SendBuffer::new();
        let data: Vec<u8> = (0..3 * COPY_SEGMENT + 5).map(|i| i as u8).collect();
        b.push_copy(&data);
        assert_eq!(b.segments.len(), 4);
        assert!(b.segments.iter().all(|s| s.bytes.len() <= COPY_SEGMENT));
        b.release(COPY_SEGMENT + 1);
        assert_eq!(b.segments.len(), 3, "the first whole segment is freed");
        let mut out = vec![0u8; COPY_SEGMENT];
        b.copy_out(0, &mut out);
        assert_eq!(out, data[COPY_SEGMENT + 1..2 * COPY_SEGMENT + 1]);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Copy(usize),
        Owned(usize),
        Release(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..200_000usize).prop_map(Op::Copy),
            (0..200_000usize).prop_map(Op::Owned),
            (0..300_000usize).prop_map(Op::Release),
        ]
    }

    proptest! {
        /// Any mix of copies, owned buffers and releases reads back as one flat byte queue.
        #[test]
        fn reads_back_as_a_flat_queue(ops in prop::collection::vec(op(), 1..40), probes in prop::collection::vec((0.0..1.0f64, 0..5000usize), 8)) {
            let mut b = SendBuffer::new();
            let mut model: VecDeque<u8> = VecDeque::new();
            let mut next = 0u32;
            for o in ops {
                match o {
                    Op::Copy(n) | Op::Owned(n) => {
                        let data: Vec<u8> = (0..n).map(|i| (next as usize + i * 31) as u8).collect();
                        next = next.wrapping_add(1);
                        model.extend(&data);
                        if matches!(o, Op::Copy(_)) { b.push_copy(&data) } else { b.push_owned(data) }
                    }
                    Op::Release(n) => {
                        let n = n.min(model.len());
                        b.release(n);
                        model.drain(..n);
                    }
                }
                prop_assert_eq!(b.len(), model.len());
                for &(at, len) in &probes {
                    let start = (at * model.len() as f64) as usize;
                    let len = len.min(model.len() - start);
                    let mut out = vec![0u8; len];
                    b.copy_out(start, &mut out);
                    let want: Vec<u8> = model.range(start..start + len).copied().collect();
                    prop_assert_eq!(out, want);
                }
            }
        }
    }
}
