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
//! A data packet's payload is either copied out ([`SendBuffer::copy_out`], into the datagram
//! being written) or lent ([`SendBuffer::lend`]): a [`Payload`] is a range of a buffer the
//! application gave, shared (`Arc`) rather than copied, so that a driver can hand the kernel
//! the header and the payload as two slices of one datagram (`sendmsg` with an iovec list) and
//! the only copy of a file byte on its way out is the kernel's — or, with security on, so that
//! the datagram's seal encrypts it from where it lies (`secure::seal`). A lent payload may
//! outlive the acknowledgement of its bytes (a batch queued on a sending thread, a
//! retransmission of bytes the receiver meanwhile acknowledged): the buffer is then released
//! but kept aside, and offered back only once the last payload of it is dropped, so that the
//! application never refills a buffer a datagram still reads. Only owned buffers are lent; a
//! payload that lies in copied bytes, or across two segments, is copied.
//!
//! Offsets are relative to the front of the buffer (the oldest unacknowledged byte), as the
//! stream uses them. Copied bytes go into segments of at most [`COPY_SEGMENT`] bytes, so a
//! segment is freed soon after its bytes are acknowledged; a buffer the application gave is
//! one segment, freed (and offered back) when its last byte is.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Arc;

/// Largest segment `push_copy` fills before it starts another.
pub const COPY_SEGMENT: usize = 64 * 1024;
/// Spent buffers kept for the application to take back; more are dropped.
const SPENT_KEPT: usize = 16;
/// Emptied copy segments kept for reuse, so a steady stream of copies allocates nothing.
const FREE_KEPT: usize = 16;

#[derive(Debug)]
enum Segment {
    /// Bytes copied in by `push_copy`, at most [`COPY_SEGMENT`].
    Copied(Vec<u8>),
    /// A buffer the application gave, shared with the payloads lent out of it.
    Owned(Arc<Vec<u8>>),
}

impl Segment {
    fn bytes(&self) -> &[u8] {
        match self {
            Segment::Copied(b) => b,
            Segment::Owned(b) => b,
        }
    }
}

/// A data packet's payload lent by the send buffer instead of copied: a range of a buffer the
/// application gave (`Connection::write_owned`). Cloning it is cheap (a reference count), and
/// the buffer is offered back (`Connection::take_spent`) only once every payload of it is
/// dropped, so its bytes stay as they were sent for as long as a payload is held.
#[derive(Clone, Debug)]
pub struct Payload {
    buf: Arc<Vec<u8>>,
    range: Range<usize>,
}

impl Payload {
    /// The payload's bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[self.range.clone()]
    }

    /// Bytes in the payload.
    pub fn len(&self) -> usize {
        self.range.len()
    }

    /// Whether the payload has no bytes (never so for a payload the connection lends).
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }
}

impl AsRef<[u8]> for Payload {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

#[derive(Debug, Default)]
pub struct SendBuffer {
    segments: VecDeque<Segment>,
    /// Bytes of `segments[0]` already released (acknowledged).
    front_released: usize,
    /// Bytes held from the front, released ones excluded.
    len: usize,
    spent: Vec<Vec<u8>>,
    /// Released owned buffers that a lent [`Payload`] still reads: offered back once it is
    /// dropped.
    lent: Vec<Arc<Vec<u8>>>,
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
                Some(Segment::Copied(b)) => COPY_SEGMENT.saturating_sub(b.len()),
                _ => 0,
            };
            if room == 0 {
                let bytes = self
                    .free
                    .pop()
                    .unwrap_or_else(|| Vec::with_capacity(COPY_SEGMENT));
                self.segments.push_back(Segment::Copied(bytes));
                continue;
            }
            let n = room.min(data.len());
            let Some(Segment::Copied(back)) = self.segments.back_mut() else {
                unreachable!("a copy segment with room");
            };
            back.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
    }

    /// Append `buf` itself; it comes back through [`SendBuffer::take_spent`] once released
    /// and no longer lent.
    pub fn push_owned(&mut self, buf: Vec<u8>) {
        if buf.is_empty() {
            self.recycle(buf);
            return;
        }
        self.len += buf.len();
        self.segments.push_back(Segment::Owned(Arc::new(buf)));
    }

    /// The segment holding the byte `offset` bytes after the front, and where in it.
    fn locate(&self, offset: usize) -> (usize, usize) {
        // Found by walking whole segments. Bytes sent for the first time are near the back and
        // retransmissions near the front, so the walk starts at the nearer end.
        let abs = offset + self.front_released;
        let total = self.len + self.front_released;
        if abs < total / 2 {
            let (mut i, mut at) = (0, abs);
            while at >= self.segments[i].bytes().len() {
                at -= self.segments[i].bytes().len();
                i += 1;
            }
            (i, at)
        } else {
            // `start` is where segment `j` begins.
            let (mut start, mut j) = (total, self.segments.len());
            loop {
                j -= 1;
                start -= self.segments[j].bytes().len();
                if start <= abs {
                    break;
                }
            }
            (j, abs - start)
        }
    }

    fn check_held(&self, offset: usize, len: usize) {
        assert!(
            offset + len <= self.len,
            "bytes {offset}..{} of {} held",
            offset + len,
            self.len
        );
    }

    /// Copy `out.len()` bytes starting `offset` bytes after the front into `out`.
    ///
    /// Panics if the range is not held: the stream asks only for bytes it wrote and has not
    /// released.
    pub fn copy_out(&self, offset: usize, out: &mut [u8]) {
        self.check_held(offset, out.len());
        if out.is_empty() {
            return;
        }
        let (mut i, mut at) = self.locate(offset);
        let mut done = 0;
        while done < out.len() {
            let seg = &self.segments[i].bytes()[at..];
            let n = seg.len().min(out.len() - done);
            out[done..done + n].copy_from_slice(&seg[..n]);
            done += n;
            at = 0;
            i += 1;
        }
    }

    /// The `len` bytes starting `offset` bytes after the front, shared rather than copied, if
    /// they lie in one buffer the application gave; `None` otherwise (copy them out).
    ///
    /// Panics if the range is not held, as [`SendBuffer::copy_out`].
    pub fn lend(&self, offset: usize, len: usize) -> Option<Payload> {
        self.check_held(offset, len);
        if len == 0 {
            return None;
        }
        let (i, at) = self.locate(offset);
        match &self.segments[i] {
            Segment::Owned(buf) if at + len <= buf.len() => Some(Payload {
                buf: buf.clone(),
                range: at..at + len,
            }),
            _ => None,
        }
    }

    /// Release the `n` oldest bytes (acknowledged); whole segments are freed, the buffers the
    /// application gave kept for it to take back.
    pub fn release(&mut self, n: usize) {
        assert!(n <= self.len, "release {n} of {} held", self.len);
        self.len -= n;
        let mut left = n + self.front_released;
        while let Some(front) = self.segments.front() {
            if left < front.bytes().len() {
                break;
            }
            left -= front.bytes().len();
            match self.segments.pop_front().expect("a front segment") {
                Segment::Owned(buf) => match Arc::try_unwrap(buf) {
                    Ok(buf) => self.recycle(buf),
                    // A payload still reads it: offered back once that is dropped (or, past
                    // the bound, freed then).
                    Err(buf) if self.lent.len() < SPENT_KEPT => self.lent.push(buf),
                    Err(_) => {}
                },
                Segment::Copied(mut bytes) if self.free.len() < FREE_KEPT => {
                    bytes.clear();
                    self.free.push(bytes);
                }
                Segment::Copied(_) => {}
            }
        }
        self.front_released = left;
    }

    /// A buffer given by [`SendBuffer::push_owned`] whose bytes are all acknowledged and of
    /// which no lent [`Payload`] remains.
    pub fn take_spent(&mut self) -> Option<Vec<u8>> {
        if let Some(buf) = self.spent.pop() {
            return Some(buf);
        }
        // The last reference, this one: no other can appear, so unwrapping succeeds (and
        // synchronizes with the drop of the payload on another thread).
        let i = self.lent.iter().position(|b| Arc::strong_count(b) == 1)?;
        Arc::try_unwrap(self.lent.swap_remove(i)).ok()
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
    fn payloads_are_lent_from_owned_buffers_only_and_read_as_copied() {
        let mut b = SendBuffer::new();
        b.push_copy(b"head");
        let piece: Vec<u8> = (0..1000).map(|i| i as u8).collect();
        let given = piece.clone();
        let at = given.as_ptr();
        b.push_owned(given);
        b.push_owned(vec![9u8; 100]);
        let p = b.lend(4 + 10, 500).expect("inside the first piece");
        assert_eq!(p.as_slice(), &piece[10..510]);
        assert_eq!(p.as_slice().as_ptr(), at.wrapping_add(10), "not a copy");
        assert_eq!(p.len(), 500);
        let last = b.lend(4 + 990, 10).expect("the piece's last bytes");
        assert_eq!(last.as_slice(), &piece[990..]);
        assert!(b.lend(0, 8).is_none(), "copied bytes are copied out");
        assert!(b.lend(4 + 995, 10).is_none(), "across two pieces");
        let mut out = [0u8; 10];
        b.copy_out(4 + 995, &mut out);
        assert_eq!(&out, &[227, 228, 229, 230, 231, 9, 9, 9, 9, 9]);
        assert_eq!(b.lend(1004 + 50, 50).unwrap().as_slice(), &[9u8; 50]);
        assert!(b.lend(1004, 0).is_none());
    }

    /// A buffer released while a payload of it is held (a datagram queued on another thread
    /// whose bytes were meanwhile acknowledged) comes back only once the payload is dropped,
    /// whichever thread drops it.
    #[test]
    fn a_lent_buffer_is_offered_back_only_when_its_last_payload_is_dropped() {
        let mut b = SendBuffer::new();
        let piece = vec![5u8; 3000];
        let at = piece.as_ptr();
        b.push_owned(piece);
        b.push_owned(vec![6u8; 3000]);
        let early = b.lend(0, 1400).unwrap();
        let late = b.lend(1400, 1400).unwrap();
        b.release(3000);
        assert!(b.take_spent().is_none(), "two payloads still read it");
        drop(early);
        assert!(b.take_spent().is_none(), "one payload still reads it");
        std::thread::spawn(move || assert_eq!(late.as_slice(), &[5u8; 1400][..]))
            .join()
            .unwrap();
        let back = b.take_spent().expect("no payload left");
        assert_eq!((back.as_ptr(), back.len()), (at, 3000), "the same buffer");
        assert!(b.take_spent().is_none());
        // Released with no payload held: back at once.
        b.release(3000);
        assert_eq!(b.take_spent().map(|v| v.len()), Some(3000));
    }

    #[test]
    fn copies_are_cut_into_bounded_segments() {
        let mut b = SendBuffer::new();
        let data: Vec<u8> = (0..3 * COPY_SEGMENT + 5).map(|i| i as u8).collect();
        b.push_copy(&data);
        assert_eq!(b.segments.len(), 4);
        assert!(b.segments.iter().all(|s| s.bytes().len() <= COPY_SEGMENT));
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
                    if let Some(p) = b.lend(start, len) {
                        prop_assert_eq!(p.as_slice(), &want[..]);
                    }
                    prop_assert_eq!(out, want);
                }
            }
        }
    }
}
