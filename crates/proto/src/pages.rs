//! A sparse byte buffer in fixed-size pages, for the receive side's reassembly.
//!
//! The receive window says how far ahead of the application a sender may write, but a window
//! is a limit, not an amount: one packet near its far edge must not cost the whole window in
//! memory (a contiguous buffer zero-filled up to the highest byte received did exactly that,
//! and a handful of forged packets could exhaust a receiver). Here the stream is cut into
//! [`PAGE`]-byte pages at absolute offsets; a page exists only once a byte in it arrived, and
//! goes back to a small free list once the application has read past it. Memory therefore
//! follows the data actually held (at most one page of slack per out-of-order range), and in
//! steady state pages cycle through the free list without allocating.
//!
//! The caller ([`crate::reassembly`]) knows which bytes arrived: reads cover only bytes that
//! were written, so a recycled page's stale contents are never seen.

use std::collections::VecDeque;

/// Bytes per page: small enough that a stray packet costs little, large enough that the page
/// table of a 4 GiB window stays at 64 Ki entries.
pub const PAGE: usize = 64 * 1024;
/// Pages kept for reuse after they were read.
const FREE_PAGES: usize = 64;

#[derive(Debug, Default)]
pub struct PagedBuffer {
    /// Page number (`offset / PAGE`) of `pages[0]`.
    first: u64,
    pages: VecDeque<Option<Box<[u8]>>>,
    free: Vec<Box<[u8]>>,
    /// Pages allocated and not yet returned (in `pages` or `free`).
    allocated: usize,
}

impl PagedBuffer {
    pub fn new() -> PagedBuffer {
        PagedBuffer::default()
    }

    /// Bytes of memory held in pages (in use or free); the tests hold the buffer to it.
    #[cfg(test)]
    pub fn memory(&self) -> usize {
        self.allocated * PAGE
    }

    /// Store `src` at stream offset `at`. `at` must not be below the last `release` point.
    pub fn write(&mut self, at: u64, src: &[u8]) {
        let mut at = at;
        let mut src = src;
        while !src.is_empty() {
            let page = at / PAGE as u64;
            let within = (at % PAGE as u64) as usize;
            let n = (PAGE - within).min(src.len());
            let slot = self.slot(page);
            slot[within..within + n].copy_from_slice(&src[..n]);
            at += n as u64;
            src = &src[n..];
        }
    }

    /// Copy `out.len()` bytes starting at stream offset `at` (all previously written).
    pub fn read(&self, at: u64, out: &mut [u8]) {
        let mut at = at;
        let mut done = 0;
        while done < out.len() {
            let page = at / PAGE as u64;
            let within = (at % PAGE as u64) as usize;
            let n = (PAGE - within).min(out.len() - done);
            let held = page
                .checked_sub(self.first)
                .and_then(|i| self.pages.get(i as usize))
                .and_then(|p| p.as_deref());
            match held {
                Some(p) => out[done..done + n].copy_from_slice(&p[within..within + n]),
                // Unreachable for a caller that reads only what it wrote; zeros, not a panic.
                None => out[done..done + n].fill(0),
            }
            at += n as u64;
            done += n;
        }
    }

    /// Every byte below `offset` has been consumed: recycle the pages wholly below it.
    pub fn release(&mut self, offset: u64) {
        let keep_from = offset / PAGE as u64;
        while self.first < keep_from {
            match self.pages.pop_front() {
                Some(Some(p)) => self.recycle(p),
                Some(None) => {}
                None => {
                    self.first = keep_from;
                    break;
                }
            }
            self.first += 1;
        }
    }

    fn recycle(&mut self, p: Box<[u8]>) {
        if self.free.len() < FREE_PAGES {
            self.free.push(p);
        } else {
            self.allocated -= 1;
        }
    }

    fn slot(&mut self, page: u64) -> &mut [u8] {
        if self.pages.is_empty() {
            self.first = page;
        }
        // A write below the first page held: data that arrived out of order started the pages
        // above a hole the stream's reader has not passed yet (with nothing held below it, as
        // when the bytes before went to the application directly), and the hole is filling.
        if page < self.first {
            for _ in page..self.first {
                self.pages.push_front(None);
            }
            self.first = page;
        }
        let i = (page - self.first) as usize;
        if self.pages.len() <= i {
            self.pages.resize_with(i + 1, || None);
        }
        if self.pages[i].is_none() {
            let p = match self.free.pop() {
                Some(p) => p,
                None => {
                    self.allocated += 1;
                    vec![0u8; PAGE].into_boxed_slice()
                }
            };
            self.pages[i] = Some(p);
        }
        self.pages[i].as_deref_mut().expect("just filled")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_far_write_costs_one_page_not_the_distance() {
        let mut b = PagedBuffer::new();
        b.write(0, b"head");
        b.write((1 << 32) - 1400, &[7u8; 1400]);
        assert_eq!(b.memory(), 2 * PAGE);
        let mut out = [0u8; 4];
        b.read(0, &mut out);
        assert_eq!(&out, b"head");
        let mut out = [0u8; 1400];
        b.read((1 << 32) - 1400, &mut out);
        assert!(out.iter().all(|&x| x == 7));
    }

    /// Everything read, then data beyond a hole two pages on, then the hole: each byte reads
    /// back where it was written.
    #[test]
    fn a_hole_below_the_first_page_held_fills_in_place() {
        let mut b = PagedBuffer::new();
        b.write(0, &[1u8; 100]);
        b.release(PAGE as u64);
        let far = 3 * PAGE as u64 + 10;
        b.write(far, &[3u8; 50]);
        b.write(PAGE as u64 + 5, &[2u8; 70]);
        let mut out = [0u8; 70];
        b.read(PAGE as u64 + 5, &mut out);
        assert!(out.iter().all(|&x| x == 2), "{out:?}");
        let mut out = [0u8; 50];
        b.read(far, &mut out);
        assert!(out.iter().all(|&x| x == 3), "{out:?}");
    }

    #[test]
    fn data_across_page_edges_reads_back_and_pages_are_reused() {
        let mut b = PagedBuffer::new();
        let data: Vec<u8> = (0..3 * PAGE + 100).map(|i| (i % 251) as u8).collect();
        b.write(10, &data);
        let mut out = vec![0u8; data.len()];
        b.read(10, &mut out);
        assert_eq!(out, data);
        let before = b.memory();
        b.release(10 + data.len() as u64);
        // The next stretch of the stream reuses the freed pages.
        b.write(10 + data.len() as u64, &data);
        assert_eq!(b.memory(), before);
    }
}
