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
//!
//! A chunk the page cache holds is read from it (a copy); one it does not hold is read from
//! the disk with `O_DIRECT` into aligned storage and copied from there (`direct`): a file not
//! in the cache cost the reading thread 16× less system time so, and the host's cache keeps
//! what its other work had in it. The kernel's `cachestat` says which; where it cannot (Linux
//! < 6.5), or the file system refuses direct reads, every chunk goes through the cache.

use crate::direct::{aligned, all_cached, set_direct, AlignedBuf, ALIGN};
use crate::hashlist::FileHasher;
use crossbeam_channel::{bounded, Receiver, Sender, TryRecvError};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::thread::JoinHandle;

/// Chunks read ahead of the connection.
pub const DEPTH: usize = 4;

/// What the thread hands over.
pub enum Piece {
    /// The next bytes of the file (zeros in place of any the file no longer has).
    Bytes(Vec<u8>),
    /// All bytes were handed over: the file's digest (`hashlist`), whether it shrank while
    /// read, and how many bytes were read around the page cache (`O_DIRECT`).
    End {
        digest: [u8; 32],
        short: bool,
        direct: u64,
    },
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
    file: File,
    mut left: u64,
    chunk: usize,
    mut hasher: FileHasher,
    out: Sender<Piece>,
    spent: Receiver<Vec<u8>>,
) {
    let mut short = false;
    let mut reader = match ChunkReader::new(file, chunk) {
        Ok(r) => r,
        Err(e) => {
            let _ = out.send(Piece::Failed(e));
            return;
        }
    };
    while left > 0 {
        let n = left.min(chunk as u64) as usize;
        let mut buf = spent.try_recv().unwrap_or_default();
        buf.clear();
        buf.reserve_exact(n);
        match reader.read(&mut buf, n) {
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
        direct: reader.direct_bytes,
    });
}

/// Reads a file's chunks in order, each from the page cache if it is all there, else around
/// it with `O_DIRECT`.
struct ChunkReader {
    file: File,
    /// Offset of the next byte to read.
    at: u64,
    /// Aligned storage for direct reads; `None` when they cannot be used (an unaligned start
    /// or chunk size, a file system that refused them, a kernel without `cachestat`).
    scratch: Option<AlignedBuf>,
    /// Bytes read directly.
    direct_bytes: u64,
}

impl ChunkReader {
    fn new(mut file: File, chunk: usize) -> io::Result<ChunkReader> {
        let at = file.stream_position()?;
        let scratch = (aligned(at) && aligned(chunk as u64)).then(|| AlignedBuf::new(chunk));
        Ok(ChunkReader {
            file,
            at,
            scratch,
            direct_bytes: 0,
        })
    }

    /// Append up to `n` (at most a chunk) next bytes of the file to `buf`; fewer only at its
    /// end. Returns how many.
    fn read(&mut self, buf: &mut Vec<u8>, n: usize) -> io::Result<usize> {
        if self.scratch.is_some() {
            match all_cached(&self.file, self.at, n as u64) {
                Some(false) => {
                    if let Some(got) = self.read_direct(buf, n)? {
                        self.direct_bytes += got as u64;
                        return Ok(got);
                    }
                }
                Some(true) => {}
                None => self.scratch = None,
            }
        }
        // Into the buffer's spare capacity: no zeroing before each read.
        let got = (&mut self.file).take(n as u64).read_to_end(buf)?;
        self.at += got as u64;
        Ok(got)
    }

    /// Read with `O_DIRECT` into the aligned storage, then append to `buf`; `None` (and no
    /// more direct reads) if the file system refuses them.
    fn read_direct(&mut self, buf: &mut Vec<u8>, n: usize) -> io::Result<Option<usize>> {
        let Some(scratch) = self.scratch.as_mut() else {
            return Ok(None);
        };
        if !set_direct(&self.file, true) {
            self.scratch = None;
            return Ok(None);
        }
        let space = scratch.as_mut_slice();
        let mut got = 0;
        let result = loop {
            if got >= n {
                break Ok(());
            }
            // Whole blocks: a read past the end of the file stops there.
            let want = (n - got).next_multiple_of(ALIGN);
            match self
                .file
                .read_at(&mut space[got..got + want], self.at + got as u64)
            {
                Ok(0) => break Ok(()),
                Ok(k) => {
                    got += k;
                    // Only the end of the file leaves a read short of whole blocks.
                    if !aligned(k as u64) {
                        break Ok(());
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        set_direct(&self.file, false);
        match result {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) && got == 0 => {
                self.scratch = None;
                return Ok(None);
            }
            Err(e) => return Err(e),
            Ok(()) => {}
        }
        let got = got.min(n);
        buf.extend_from_slice(&space[..got]);
        self.at += got as u64;
        // The buffered reads go on from here.
        self.file.seek(SeekFrom::Start(self.at))?;
        Ok(Some(got))
    }
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
        let (bytes, digest, short, _) = collect_counting(feed);
        (bytes, digest, short)
    }

    /// The bytes, digest, whether short, and how many bytes were read directly.
    fn collect_counting(feed: &Feed) -> (Vec<u8>, [u8; 32], bool, u64) {
        let mut bytes = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            assert!(Instant::now() < deadline, "the feed stalled");
            match feed.next() {
                Next::Piece(Piece::Bytes(b)) => {
                    bytes.extend_from_slice(&b);
                    feed.recycle(b);
                }
                Next::Piece(Piece::End {
                    digest,
                    short,
                    direct,
                }) => return (bytes, digest, short, direct),
                Next::Piece(Piece::Failed(e)) => panic!("{e}"),
                Next::Empty => std::thread::sleep(Duration::from_micros(100)),
            }
        }
    }

    /// Three chunks and `tail` bytes of a pattern that differs from chunk to chunk.
    fn three_chunks_and(tail: u32) -> Vec<u8> {
        (0..3 * CHUNK_SIZE as u32 + tail)
            .map(|i| (i * 7 + i / 251) as u8)
            .collect()
    }

    /// The file's digest, hashing every byte at once.
    fn whole_digest(data: &[u8]) -> [u8; 32] {
        let mut whole = FileHasher::new();
        whole.update(data, |_| {});
        whole.end();
        whole.digest()
    }

    /// The bytes after a resume point arrive in order, and the digest covers the prefix's
    /// chunks the hasher was given too: it is the whole file's, as hashing every byte gives.
    #[test]
    fn the_rest_of_a_file_arrives_in_order_with_the_whole_files_digest() {
        let c = CHUNK_SIZE as usize;
        let data = three_chunks_and(1_003);
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
        assert_eq!(digest, whole_digest(&data));
        assert!(!short);
    }

    /// A file the page cache holds is read from it; once flushed and dropped from the cache it
    /// is read around it, to the same bytes and digest (a ragged last chunk included).
    #[test]
    fn chunks_the_cache_lacks_are_read_directly_to_the_same_bytes() {
        use std::os::fd::AsRawFd;
        let c = CHUNK_SIZE as usize;
        let data = three_chunks_and(5_555);
        let mut named = tempfile::NamedTempFile::new().unwrap();
        named.write_all(&data).unwrap();
        let read = |expect_direct: Option<u64>| {
            let f = File::open(named.path()).unwrap();
            let feed = Feed::start(f, FileHasher::new(), data.len() as u64, c).unwrap();
            let (bytes, digest, short, direct) = collect_counting(&feed);
            assert!(bytes == data && !short, "bytes differ");
            assert_eq!(digest, whole_digest(&data));
            if let Some(d) = expect_direct {
                assert_eq!(direct, d);
            }
            direct
        };
        // Just written, so cached: no direct read.
        read(Some(0));
        named.as_file().sync_all().unwrap();
        let probe = File::open(named.path()).unwrap();
        nix::fcntl::posix_fadvise(
            probe.as_raw_fd(),
            0,
            0,
            nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
        )
        .unwrap();
        let knows = all_cached(&probe, 0, c as u64) == Some(false) && set_direct(&probe, true);
        if knows {
            read(Some(data.len() as u64));
        } else {
            let direct = read(None);
            eprintln!(
                "NOT asserted: no cachestat, or a file system without O_DIRECT here ({direct} \
                 bytes read directly)"
            );
        }
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
