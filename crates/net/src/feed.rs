//! The sender's file reading and hashing, on a thread of its own.
//!
//! Reading a file from the page cache and hashing it (then with SHA-256) cost the sender's loop about
//! a third of its CPU (bench/README.md, "Where a loopback transfer's time goes"); done on the
//! connection's thread, no datagram is sent or ACK read meanwhile. A [`Feed`] reads the rest
//! of one file in chunks on a thread of its own and hashes each chunk there, right after
//! reading it, into the file's digest (`hashlist`): while the chunk is still in that core's
//! cache, BLAKE3 costs about half what it cost on a second thread that met the chunk cold
//! (bench/README.md, "One thread reads and hashes"). Chunks are handed on through a bounded
//! queue of at most [`DEPTH`] and come back through a second queue to be filled again, so
//! the memory held is `(2 × DEPTH + 2) × chunk` plus what the connection holds, whatever the
//! file's size. The connection's thread never blocks on it: [`Feed::next`] takes what is
//! ready.

use crate::hashlist::FileHasher;
use crossbeam_channel::{bounded, Receiver, Sender, TryRecvError};
use std::fs::File;
use std::io::{self, Read};
use std::thread::JoinHandle;

/// Chunks read ahead of the connection.
pub const DEPTH: usize = 4;

/// What the thread hands over.
pub enum Piece {
    /// The next bytes of the file (zeros in place of any the file no longer has).
    Bytes(Vec<u8>),
    /// All bytes were handed over: the file's digest (`hashlist`), and whether it shrank while
    /// read.
    End { digest: [u8; 32], short: bool },
    /// A read failed; nothing more comes.
    Failed(io::Error),
}

/// What [`Feed::next`] found.
pub enum Next {
    Piece(Piece),
    /// Nothing ready yet: the thread is reading.
    Empty,
}

/// One file's remaining bytes, read and hashed ahead on a thread.
pub struct Feed {
    pieces: Option<Receiver<Piece>>,
    /// Chunks the connection is done with, for the thread to fill again.
    spent: Sender<Vec<u8>>,
    /// The reading and hashing thread.
    thread: Option<JoinHandle<()>>,
}

impl Feed {
    /// Read `left` more bytes of `file` from its current offset in chunks of `chunk`, adding
    /// them to `hasher` (which holds the chunks before the offset, a chunk boundary).
    pub fn start(file: File, hasher: FileHasher, left: u64, chunk: usize) -> io::Result<Feed> {
        let (piece_tx, pieces) = bounded(DEPTH);
        let (spent, spent_rx) = bounded(2 * DEPTH + 2);
        let reader = std::thread::Builder::new()
            .name("longhaul-read".into())
            .spawn(move || read_ahead(file, left, chunk, hasher, piece_tx, spent_rx))?;
        Ok(Feed {
            pieces: Some(pieces),
            spent,
            thread: Some(reader),
        })
    }

    /// The next piece, if the thread has one ready.
    pub fn next(&self) -> Next {
        let pieces = self.pieces.as_ref().expect("open until dropped");
        match pieces.try_recv() {
            Ok(p) => Next::Piece(p),
            Err(TryRecvError::Empty) => Next::Empty,
            Err(TryRecvError::Disconnected) => Next::Piece(Piece::Failed(io::Error::other(
                "the file reading thread stopped",
            ))),
        }
    }

    /// Give a chunk back to be filled again (dropped if the thread has enough).
    pub fn recycle(&self, buf: Vec<u8>) {
        let _ = self.spent.try_send(buf);
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        // The thread stops at its next hand-over once the queue is gone.
        drop(self.pieces.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn read_ahead(
    mut file: File,
    mut left: u64,
    chunk: usize,
    mut hasher: FileHasher,
    out: Sender<Piece>,
    spent: Receiver<Vec<u8>>,
) {
    let mut short = false;
    while left > 0 {
        let n = left.min(chunk as u64) as usize;
        let mut buf = spent.try_recv().unwrap_or_default();
        buf.clear();
        buf.reserve_exact(n);
        // Into the buffer's spare capacity: no zeroing before each read.
        match (&mut file).take(n as u64).read_to_end(&mut buf) {
            Ok(got) => short |= got < n,
            Err(e) => {
                let _ = out.send(Piece::Failed(e));
                return;
            }
        }
        // Zeros in place of bytes the file no longer has.
        buf.resize(n, 0);
        left -= n as u64;
        // Hashed here, while the bytes just read are still in this core's cache.
        hasher.update(&buf, |_| {});
        if out.send(Piece::Bytes(buf)).is_err() {
            return;
        }
    }
    hasher.end();
    let _ = out.send(Piece::End {
        digest: hasher.digest(),
        short,
    });
}

/// Fill `buf` from `f`; returns the bytes read, the rest of `buf` zeroed (end of file).
pub fn read_full(f: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf[got..].fill(0);
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::CHUNK_SIZE;
    use crate::hashlist::chunk_digest;
    use std::io::Write;
    use std::time::{Duration, Instant};

    fn collect(feed: &Feed) -> (Vec<u8>, [u8; 32], bool) {
        let mut bytes = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            assert!(Instant::now() < deadline, "the feed stalled");
            match feed.next() {
                Next::Piece(Piece::Bytes(b)) => {
                    bytes.extend_from_slice(&b);
                    feed.recycle(b);
                }
                Next::Piece(Piece::End { digest, short }) => return (bytes, digest, short),
                Next::Piece(Piece::Failed(e)) => panic!("{e}"),
                Next::Empty => std::thread::sleep(Duration::from_micros(100)),
            }
        }
    }

    /// The bytes after a resume point arrive in order, and the digest covers the prefix's
    /// chunks the hasher was given too: it is the whole file's, as hashing every byte gives.
    #[test]
    fn the_rest_of_a_file_arrives_in_order_with_the_whole_files_digest() {
        let c = CHUNK_SIZE as usize;
        let data: Vec<u8> = (0..3 * c as u32 + 1_003)
            .map(|i| (i * 7 + i / 251) as u8)
            .collect();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        use std::io::Seek;
        f.seek(std::io::SeekFrom::Start(c as u64)).unwrap();
        let mut h = FileHasher::new();
        h.push_chunk(&chunk_digest(&data[..c]));
        let feed = Feed::start(f, h, (data.len() - c) as u64, 65_536).unwrap();
        let (bytes, digest, short) = collect(&feed);
        assert_eq!(bytes.len(), data.len() - c);
        assert!(bytes == data[c..], "bytes differ");
        let mut whole = FileHasher::new();
        whole.update(&data, |_| {});
        whole.end();
        assert_eq!(digest, whole.digest());
        assert!(!short);
    }

    /// A file shorter than announced (it shrank) is padded with zeros and reported short.
    #[test]
    fn a_file_that_shrank_is_padded_and_reported() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&[9u8; 1000]).unwrap();
        use std::io::Seek;
        f.rewind().unwrap();
        let feed = Feed::start(f, FileHasher::new(), 5000, 4096).unwrap();
        let (bytes, _, short) = collect(&feed);
        assert_eq!(bytes.len(), 5000);
        assert!(bytes[..1000].iter().all(|&b| b == 9) && bytes[1000..].iter().all(|&b| b == 0));
        assert!(short);
    }

    /// Dropping a feed mid-file ends its thread (the queue is full: the thread is blocked).
    #[test]
    fn dropping_a_feed_ends_its_thread() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![1u8; 1 << 20]).unwrap();
        use std::io::Seek;
        f.rewind().unwrap();
        let feed = Feed::start(f, FileHasher::new(), 1 << 20, 4096).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let t0 = Instant::now();
        drop(feed);
        assert!(t0.elapsed() < Duration::from_secs(10));
    }
}
