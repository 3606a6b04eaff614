//! The send side of the byte stream: buffered application data, cut into chunks, each chunk
//! tracked until acknowledged.
//!
//! A chunk is the stream range one data packet carries, `[offset, offset + len)`, fixed when it
//! is first sent. A lost chunk is queued and sent again, whole, in a new packet (QUIC's rule:
//! retransmit data, not packets), so a chunk may be carried by several packet numbers and is
//! done when any of them is acknowledged, or when the receiver's cumulative offset passes it.
//! Chunks are created in offset order and live in a ring indexed by chunk id; the front is
//! dropped (and its bytes released from the send buffer) once acknowledged, so everything is
//! O(1) amortised per chunk.
//!
//! In synthetic mode the stream holds only counts: the application "writes" a number of bytes
//! and no byte is ever stored or copied. In real mode the bytes are in a [`SendBuffer`], which
//! also takes whole buffers from the application without copying them, and lends a chunk's
//! bytes out of such a buffer to a datagram instead of copying them into it.

use crate::send_buffer::{Payload, SendBuffer};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    pub offset: u64,
    pub len: u32,
    pub fin: bool,
    pub acked: bool,
    /// Sitting in the retransmission queue.
    pub queued: bool,
    /// Times sent so far.
    pub transmissions: u32,
}

impl Chunk {
    pub fn end(&self) -> u64 {
        self.offset + self.len as u64
    }
}

#[derive(Debug)]
pub struct SendStream {
    synthetic: bool,
    /// Real mode: the bytes from `acked` to `written`.
    bytes: SendBuffer,
    /// Every byte below this offset is acknowledged (the front of the buffer).
    acked: u64,
    /// End of the data the application wrote.
    written: u64,
    /// End of the data cut into chunks so far.
    chunked: u64,
    /// The most `chunked` has been (it goes back only in a [`SendStream::rewind`]).
    sent_high: u64,
    capacity: u64,
    finished: bool,
    fin_chunked: bool,
    chunks: VecDeque<Chunk>,
    /// Id of `chunks[0]`.
    chunk_base: u64,
    retransmit: VecDeque<u64>,
}

impl SendStream {
    pub fn new(synthetic: bool, capacity: u64) -> SendStream {
        SendStream {
            synthetic,
            bytes: SendBuffer::new(),
            acked: 0,
            written: 0,
            chunked: 0,
            sent_high: 0,
            capacity,
            finished: false,
            fin_chunked: false,
            chunks: VecDeque::new(),
            chunk_base: 0,
            retransmit: VecDeque::new(),
        }
    }

    fn free_space(&self) -> u64 {
        if self.finished {
            return 0;
        }
        self.capacity.saturating_sub(self.written - self.acked)
    }

    /// Real mode: buffer as much of `data` as fits; returns the count taken.
    pub fn write(&mut self, data: &[u8]) -> usize {
        if self.synthetic {
            return 0;
        }
        let n = (self.free_space().min(data.len() as u64)) as usize;
        self.bytes.push_copy(&data[..n]);
        self.written += n as u64;
        n
    }

    /// Real mode: take `buf` whole, without copying it, if the buffer has room for any of it
    /// (so it may exceed its capacity by less than one such buffer, and a buffer larger than
    /// the capacity still goes); else hand it back. Once acknowledged it comes back through
    /// [`SendStream::take_spent`].
    pub fn write_owned(&mut self, buf: Vec<u8>) -> Result<usize, Vec<u8>> {
        if self.synthetic || self.free_space() == 0 {
            return Err(buf);
        }
        let n = buf.len();
        self.bytes.push_owned(buf);
        self.written += n as u64;
        Ok(n)
    }

    /// A buffer given to [`SendStream::write_owned`] whose bytes are all acknowledged, and of
    /// which no lent payload remains.
    pub fn take_spent(&mut self) -> Option<Vec<u8>> {
        self.bytes.take_spent()
    }

    /// Synthetic mode: account for `n` more bytes, as many as fit; returns the count taken.
    pub fn write_synthetic(&mut self, n: u64) -> u64 {
        if !self.synthetic {
            return 0;
        }
        let n = self.free_space().min(n);
        self.written += n;
        n
    }

    /// No more data will be written; the last chunk carries the fin.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// Everything written, and the fin, is acknowledged.
    pub fn all_acked(&self) -> bool {
        self.finished && self.fin_chunked && self.chunks.is_empty() && self.acked == self.written
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    /// The whole stream, fin included, has been sent at least once.
    pub fn all_sent(&self) -> bool {
        self.finished && self.fin_chunked
    }

    /// End of the data sent so far (cut into chunks), rewinds notwithstanding.
    pub fn sent_end(&self) -> u64 {
        self.sent_high
    }

    pub fn acked_offset(&self) -> u64 {
        self.acked
    }

    pub fn has_retransmissions(&self) -> bool {
        !self.retransmit.is_empty()
    }

    /// True when new (never sent) data or a fin waits, within the flow-control `limit`.
    pub fn has_new_data(&self, limit: u64) -> bool {
        (self.chunked < self.written && self.chunked < limit)
            || (self.finished && !self.fin_chunked && self.chunked == self.written)
    }

    /// New data is waiting but flow control forbids sending it.
    pub fn flow_blocked(&self, limit: u64) -> bool {
        self.chunked < self.written && self.chunked >= limit
    }

    /// The next chunk to send: a queued retransmission first, else up to `max_len` new bytes
    /// below `limit`. Returns the chunk id and a copy of the chunk.
    pub fn next_chunk(&mut self, max_len: u32, limit: u64) -> Option<(u64, Chunk)> {
        while let Some(id) = self.retransmit.pop_front() {
            let Some(c) = self.chunk_mut(id) else {
                continue;
            };
            c.queued = false;
            if c.acked {
                continue;
            }
            c.transmissions += 1;
            return Some((id, *c));
        }
        if !self.has_new_data(limit) {
            return None;
        }
        let len = (self.written - self.chunked)
            .min(limit.saturating_sub(self.chunked))
            .min(max_len as u64) as u32;
        let fin = self.finished && self.chunked + len as u64 == self.written;
        let c = Chunk {
            offset: self.chunked,
            len,
            fin,
            acked: false,
            queued: false,
            transmissions: 1,
        };
        self.chunked += len as u64;
        self.sent_high = self.sent_high.max(self.chunked);
        self.fin_chunked |= fin;
        let id = self.chunk_base + self.chunks.len() as u64;
        self.chunks.push_back(c);
        Some((id, c))
    }

    fn chunk_mut(&mut self, id: u64) -> Option<&mut Chunk> {
        id.checked_sub(self.chunk_base)
            .and_then(|i| self.chunks.get_mut(usize::try_from(i).ok()?))
    }

    /// Copy chunk `c`'s bytes into `out` (real mode).
    pub fn copy_chunk(&self, c: &Chunk, out: &mut [u8]) {
        let start = (c.offset - self.acked) as usize;
        self.bytes.copy_out(start, &mut out[..c.len as usize]);
    }

    /// Chunk `c`'s bytes shared rather than copied, if they lie in one buffer given to
    /// [`SendStream::write_owned`] (real mode); `None`: copy them with
    /// [`SendStream::copy_chunk`].
    pub fn lend_chunk(&self, c: &Chunk) -> Option<Payload> {
        let start = (c.offset - self.acked) as usize;
        self.bytes.lend(start, c.len as usize)
    }

    /// A packet carrying chunk `id` was acknowledged.
    pub fn on_acked(&mut self, id: u64) {
        if let Some(c) = self.chunk_mut(id) {
            c.acked = true;
        }
        self.release();
    }

    /// The receiver has every byte below `offset`.
    pub fn on_cumulative(&mut self, offset: u64) {
        // Chunks are in offset order, so those the offset covers are a prefix of the ring:
        // acknowledged and released in one pass from the front.
        while let Some(c) = self.chunks.front() {
            if c.end() > offset || (c.fin && c.len == 0 && c.offset >= offset) {
                break;
            }
            self.release_front();
        }
        self.release();
    }

    /// A packet carrying chunk `id` was lost: queue the chunk unless done or already queued.
    pub fn on_lost(&mut self, id: u64) {
        if let Some(c) = self.chunk_mut(id) {
            if !c.acked && !c.queued {
                c.queued = true;
                self.retransmit.push_back(id);
            }
        }
    }

    /// Forget every chunk from the first one not acknowledged on, so that their bytes are cut
    /// again, in chunks of the size then in use (a path that stopped carrying the size they
    /// were cut for). The caller must first take every packet carrying them out of flight:
    /// chunk ids are reused. Chunks acknowledged beyond the first gap are sent again.
    pub fn rewind(&mut self) {
        let keep = self.chunks.iter().position(|c| !c.acked);
        if let Some(i) = keep {
            self.chunked = self.chunks[i].offset;
            self.chunks.truncate(i);
            self.fin_chunked = self.chunks.back().is_some_and(|c| c.fin);
        }
        self.retransmit.clear();
    }

    fn release(&mut self) {
        while self.chunks.front().is_some_and(|c| c.acked) {
            self.release_front();
        }
    }

    /// Drop the front chunk (acknowledged) and free its bytes.
    fn release_front(&mut self) {
        let Some(c) = self.chunks.pop_front() else {
            return;
        };
        let end = c.end();
        if !self.synthetic {
            let n = (end - self.acked) as usize;
            self.bytes.release(n);
            debug_assert_eq!(self.bytes.len() as u64, self.written - end);
        }
        self.acked = end;
        self.chunk_base += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_retransmit_whole_and_release_in_order() {
        let mut s = SendStream::new(false, 10);
        assert_eq!(s.write(b"abcdefghijkl"), 10, "capacity limits the write");
        let (a, ca) = s.next_chunk(4, u64::MAX).unwrap();
        let (b, cb) = s.next_chunk(4, u64::MAX).unwrap();
        let (_, cc) = s.next_chunk(4, 9).unwrap();
        assert_eq!((ca.offset, ca.len, cb.offset, cc.len), (0, 4, 4, 1));
        s.on_lost(a);
        s.on_lost(a);
        let (id, again) = s.next_chunk(4, u64::MAX).unwrap();
        assert_eq!((id, again.offset, again.transmissions), (a, 0, 2));
        let mut out = [0u8; 4];
        s.copy_chunk(&again, &mut out);
        assert_eq!(&out, b"abcd");
        s.on_acked(b);
        assert_eq!(s.acked_offset(), 0, "the hole at chunk a holds the buffer");
        s.on_acked(a);
        assert_eq!(s.acked_offset(), 8);
        assert_eq!(s.write(b"xyz"), 3);
        s.finish();
        let (_, c) = s.next_chunk(100, u64::MAX).unwrap();
        assert_eq!((c.offset, c.len, c.fin), (9, 4, true));
        s.on_cumulative(13);
        assert!(s.all_acked());
    }

    #[test]
    fn a_rewind_cuts_the_unacknowledged_bytes_again_in_smaller_chunks() {
        let mut s = SendStream::new(false, 1 << 20);
        let data: Vec<u8> = (0..30_000u32).map(|i| i as u8).collect();
        assert_eq!(s.write(&data), 30_000);
        s.finish();
        let ids: Vec<u64> = (0..4)
            .map(|_| s.next_chunk(8000, u64::MAX).unwrap().0)
            .collect();
        s.on_acked(ids[0]);
        s.on_acked(ids[2]);
        s.on_lost(ids[1]);
        assert!(s.all_sent());
        s.rewind();
        assert!(!s.has_retransmissions() && !s.all_sent());
        assert_eq!(s.sent_end(), 30_000, "what was sent stays sent");
        let mut got = data[..8000].to_vec();
        while let Some((_, c)) = s.next_chunk(1400, u64::MAX) {
            assert!(c.len <= 1400 && c.offset == got.len() as u64);
            let mut out = vec![0u8; c.len as usize];
            s.copy_chunk(&c, &mut out);
            got.extend(out);
            if c.fin {
                break;
            }
        }
        assert_eq!(got, data);
        s.on_cumulative(30_000);
        assert!(s.all_acked());
    }

    #[test]
    fn a_fin_after_all_data_is_an_empty_chunk() {
        let mut s = SendStream::new(true, 1 << 20);
        assert_eq!(s.write_synthetic(3000), 3000);
        let (_, c) = s.next_chunk(1448, u64::MAX).unwrap();
        assert!(!c.fin);
        s.next_chunk(1448, u64::MAX).unwrap();
        s.next_chunk(1448, u64::MAX).unwrap();
        assert!(s.next_chunk(1448, u64::MAX).is_none());
        s.finish();
        let (_, f) = s.next_chunk(1448, u64::MAX).unwrap();
        assert_eq!((f.offset, f.len, f.fin), (3000, 0, true));
        s.on_cumulative(3000);
        assert!(!s.all_acked(), "the fin itself is not yet acknowledged");
    }
}
