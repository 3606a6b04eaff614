//! The sender's file reading and hashing, on threads of their own.
//!
//! Reading a file from the page cache and hashing it (then with SHA-256) cost the sender's loop
//! about a third of its CPU (bench/README.md, "Where a loopback transfer's time goes"); done on
//! the connection's thread, no datagram is sent or ACK read meanwhile. A [`Feed`] reads the
//! rest of one file in chunks ([`CHUNK_SIZE`], the digest's unit) on [`LANES`] threads of its
//! own, each taking every `LANES`-th chunk, and each hashes its chunk right after reading it:
//! while the chunk is still in that core's cache, BLAKE3 costs about half what it cost on a
//! second thread that met the chunk cold (bench/README.md, "One thread reads and hashes").
//! [`Feed::poll`] takes the chunks lane by lane, so in the file's order, and adds their digests
//! to the file's (`hashlist`). While one thread waits for the disk the other hashes, so a file
//! the page cache does not hold is read as fast as the disk gives it rather than at the
//! disk's rate less the hashing time. Each lane queues at most [`LANE_DEPTH`] chunks; chunks
//! the connection is done with come back through another queue to be filled again, so the
//! memory held is bounded whatever the file's size: by the most chunks the connection held at
//! once (its send buffer) and the lanes'. That queue keeps every chunk given back: the
//! connection releases them in bursts (an ACK for many at once, a window that shrinks), and a
//! queue that dropped what it could not hold made the lanes allocate and zero a new chunk for
//! one read in ten. The connection's thread never blocks on it: [`Feed::poll`] takes what is
//! ready.
//!
//! A chunk the page cache holds is read from it (a copy); one it does not hold is read from
//! the disk with `O_DIRECT` into aligned storage and copied from there (`direct`): a file not
//! in the cache cost the reading thread 16× less system time so, and the host's cache keeps
//! what its other work had in it. The kernel's `cachestat` says which; where it cannot (Linux
//! < 6.5), or the file system refuses direct reads, every chunk goes through the cache.

use crate::direct::{aligned, all_cached, AlignedBuf, ALIGN};
use crate::framing::{CHUNK_SIZE, DIGEST_LEN};
use crate::hashlist::{chunk_digest, FileHasher};
use crossbeam_channel::{bounded, unbounded, Receiver, Sender, TryRecvError};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Threads reading (and hashing) the file, each every `LANES`-th chunk.
pub const LANES: usize = 2;
/// Chunks each lane reads ahead of the connection.
pub const LANE_DEPTH: usize = 2;
/// Bytes of a chunk.
const CHUNK: usize = CHUNK_SIZE as usize;
/// A rest of a file shorter than this is read on the caller's thread, in [`Feed::start`].
pub const SMALL: u64 = 256 << 10;

/// What [`Feed::poll`] hands over.
pub enum Supply {
    /// The next bytes of the file (zeros in place of any the file no longer has).
    Bytes(Vec<u8>),
    /// All bytes were handed over: the file's digest (`hashlist`), whether it shrank while
    /// read, and how many bytes were read around the page cache (`O_DIRECT`).
    End {
        /// The file's digest (`hashlist`).
        digest: [u8; 32],
        /// The file was shorter than announced when read: zeros stand in for the missing bytes.
        short: bool,
        /// Bytes read with `O_DIRECT`, around the page cache.
        direct: u64,
    },
    /// A read failed; nothing more comes.
    Failed(io::Error),
}

/// What [`Feed::poll`] found.
pub enum Next {
    /// What the file has for the connection next.
    Supply(Supply),
    /// Nothing ready yet: the threads are reading.
    Empty,
}

/// What a lane sends: one chunk and its digest, or why it stopped.
enum Ready {
    Chunk {
        bytes: Vec<u8>,
        digest: [u8; DIGEST_LEN],
        short: bool,
        direct: bool,
    },
    Failed(io::Error),
}

/// One file's remaining bytes, read and hashed ahead on threads.
pub struct Feed {
    /// Lane `i` of `n` sends chunks `i`, `i + n`, … of the rest.
    lanes: Vec<Receiver<Ready>>,
    /// Chunks the connection is done with, for the threads to fill again.
    spent: Sender<Vec<u8>>,
    threads: Vec<JoinHandle<()>>,
    /// The file's digest: the chunks before the start, then each chunk handed over.
    hasher: FileHasher,
    /// Chunks handed over, and in all.
    handed: u64,
    chunks: u64,
    short: bool,
    direct: u64,
}

impl Feed {
    /// Read the `left` bytes of `file` from `start` (a chunk boundary), adding their chunks
    /// to `hasher` (which holds the chunks before `start`).
    pub fn start(file: File, hasher: FileHasher, start: u64, left: u64) -> io::Result<Feed> {
        if start % CHUNK_SIZE != 0 {
            return Err(io::Error::other(format!(
                "reading from {start}, which is not a chunk boundary"
            )));
        }
        let source = Arc::new(Source::new(file));
        let chunks = left.div_ceil(CHUNK_SIZE);
        let (spent, spent_rx) = unbounded();
        // A file of one chunk (most small files) needs one thread.
        let used = (chunks as usize).clamp(1, LANES);
        let mut lanes = Vec::with_capacity(used);
        let mut threads = Vec::with_capacity(used);
        for lane in 0..used {
            let (tx, rx) = bounded(LANE_DEPTH);
            let (source, spent_rx) = (source.clone(), spent_rx.clone());
            let chunk_ids = (lane as u64..chunks).step_by(used);
            let read_lane = move || {
                let mut scratch = None;
                for id in chunk_ids {
                    let at = start + id * CHUNK_SIZE;
                    let n = (left - id * CHUNK_SIZE).min(CHUNK_SIZE) as usize;
                    let buf = spent_rx.try_recv().unwrap_or_default();
                    let read = match source.read(at, n, buf, &mut scratch) {
                        Ok((bytes, got, direct)) => Ready::Chunk {
                            // Hashed here, while the bytes just read are in this core's
                            // cache.
                            digest: chunk_digest(&bytes),
                            bytes,
                            short: got < n,
                            direct,
                        },
                        Err(e) => Ready::Failed(e),
                    };
                    let failed = matches!(read, Ready::Failed(_));
                    if tx.send(read).is_err() || failed {
                        return;
                    }
                }
            };
            if left < SMALL {
                // Read and hashed here, at once: starting a thread, and polling for what it
                // read, cost more than reading the file (a tree of small files went at a few
                // hundred files per second).
                read_lane();
            } else {
                let thread = std::thread::Builder::new()
                    .name("longhaul-read".into())
                    .spawn(read_lane)?;
                threads.push(thread);
            }
            lanes.push(rx);
        }
        Ok(Feed {
            lanes,
            spent,
            threads,
            hasher,
            handed: 0,
            chunks,
            short: false,
            direct: 0,
        })
    }

    /// The next piece, if the threads have it ready.
    pub fn poll(&mut self) -> Next {
        if self.handed == self.chunks {
            return Next::Supply(Supply::End {
                digest: self.hasher.digest(),
                short: self.short,
                direct: self.direct,
            });
        }
        let lane = &self.lanes[(self.handed % self.lanes.len() as u64) as usize];
        match lane.try_recv() {
            Ok(Ready::Chunk {
                bytes,
                digest,
                short,
                direct,
            }) => {
                self.hasher.push_chunk(&digest);
                self.handed += 1;
                self.short |= short;
                if direct {
                    self.direct += bytes.len() as u64;
                }
                Next::Supply(Supply::Bytes(bytes))
            }
            Ok(Ready::Failed(e)) => Next::Supply(Supply::Failed(e)),
            Err(TryRecvError::Empty) => Next::Empty,
            Err(TryRecvError::Disconnected) => Next::Supply(Supply::Failed(io::Error::other(
                "the file reading thread stopped",
            ))),
        }
    }

    /// A chunk handed over came up short: the file is shorter than announced (zeros stand in
    /// for what it no longer has).
    pub fn is_short(&self) -> bool {
        self.short
    }

    /// Give a chunk back to be filled again.
    pub fn recycle(&self, buf: Vec<u8>) {
        let _ = self.spent.try_send(buf);
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        // Each thread stops at its next hand-over once its queue is gone.
        self.lanes.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// The file, open twice: through the page cache, and (where the file system takes it) around
/// it with `O_DIRECT`. Both are read at explicit offsets, so the lanes share them.
struct Source {
    cached: File,
    direct: Option<File>,
    /// Direct reads are worth trying: the kernel answers `cachestat`, and the file system has
    /// not refused a direct read (else every read goes through the cache).
    try_direct: AtomicBool,
}

impl Source {
    fn new(cached: File) -> Source {
        // The same open file again, by its descriptor (not its name, which may have been
        // replaced since); `O_DIRECT` belongs to an open file, so the lanes' buffered reads
        // on the other one are unaffected.
        let direct = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(format!("/proc/self/fd/{}", cached.as_raw_fd()))
            .ok();
        Source {
            try_direct: direct.is_some().into(),
            cached,
            direct,
        }
    }

    /// Read `n` (at most a chunk) bytes at `at` into `buf` (a spent chunk, or a new one);
    /// returns the bytes (zeros after the end of a file that shrank), how many the file had,
    /// and whether they were read directly. `scratch` is the lane's aligned storage.
    fn read(
        &self,
        at: u64,
        n: usize,
        mut buf: Vec<u8>,
        scratch: &mut Option<AlignedBuf>,
    ) -> io::Result<(Vec<u8>, usize, bool)> {
        if let (Some(direct), true) = (&self.direct, self.try_direct.load(Relaxed)) {
            match all_cached(&self.cached, at, n as u64) {
                Some(false) if aligned(at) => {
                    let space = scratch.get_or_insert_with(|| AlignedBuf::new(CHUNK));
                    match read_direct(direct, at, n, space.as_mut_slice()) {
                        Ok(got) => {
                            buf.clear();
                            buf.extend_from_slice(&space.as_slice()[..got]);
                            buf.resize(n, 0);
                            return Ok((buf, got, true));
                        }
                        // The file system took `O_DIRECT` at open but not this read: through
                        // the cache from now on.
                        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                            self.try_direct.store(false, Relaxed)
                        }
                        Err(e) => return Err(e),
                    }
                }
                Some(_) => {}
                None => self.try_direct.store(false, Relaxed),
            }
        }
        // A recycled chunk's bytes are initialised already: no zeroing before the read.
        if buf.len() < n {
            buf.resize(n, 0);
        }
        buf.truncate(n);
        let got = read_at_full(&self.cached, at, &mut buf)?;
        Ok((buf, got, false))
    }
}

/// Read `n` bytes at `at` (aligned) with `O_DIRECT` into `space` (aligned, at least `n`
/// rounded up to whole blocks); returns how many the file had.
fn read_direct(file: &File, at: u64, n: usize, space: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < n {
        // Whole blocks: a read past the end of the file stops there.
        let want = (n - got).next_multiple_of(ALIGN);
        match file.read_at(&mut space[got..got + want], at + got as u64) {
            Ok(0) => break,
            Ok(k) => {
                got += k;
                // Only the end of the file leaves a read short of whole blocks.
                if !aligned(k as u64) {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got.min(n))
}

/// Fill `buf` from `f` at `at`; returns the bytes read (fewer at the end of the file), the
/// rest of `buf` zeroed.
pub fn read_at_full(f: &File, at: u64, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], at + got as u64) {
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
    use crate::direct::set_direct;
    use crate::framing::CHUNK_SIZE;
    use crate::hashlist::chunk_digest;
    use std::io::Write;
    use std::time::{Duration, Instant};

    fn collect(feed: &mut Feed) -> (Vec<u8>, [u8; 32], bool) {
        let (bytes, digest, short, _) = collect_counting(feed);
        (bytes, digest, short)
    }

    /// The bytes, digest, whether short, and how many bytes were read directly.
    fn collect_counting(feed: &mut Feed) -> (Vec<u8>, [u8; 32], bool, u64) {
        let mut bytes = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            assert!(Instant::now() < deadline, "the feed stalled");
            match feed.poll() {
                Next::Supply(Supply::Bytes(b)) => {
                    bytes.extend_from_slice(&b);
                    feed.recycle(b);
                }
                Next::Supply(Supply::End {
                    digest,
                    short,
                    direct,
                }) => return (bytes, digest, short, direct),
                Next::Supply(Supply::Failed(e)) => panic!("{e}"),
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
        let mut h = FileHasher::new();
        h.push_chunk(&chunk_digest(&data[..c]));
        let mut feed = Feed::start(f, h, c as u64, (data.len() - c) as u64).unwrap();
        let (bytes, digest, short) = collect(&mut feed);
        assert_eq!(bytes.len(), data.len() - c);
        assert!(bytes == data[c..], "bytes differ");
        assert_eq!(digest, whole_digest(&data));
        assert!(!short);
    }

    /// Chunks given back in a burst larger than the lanes' queues are all filled again: none
    /// is dropped for a new one to be allocated and zeroed in its place.
    #[test]
    fn every_chunk_given_back_is_read_into_again() {
        const CHUNKS: usize = 32;
        const GIVEN: usize = 3 * LANES * (LANE_DEPTH + 1);
        const _: () = assert!(CHUNKS >= 2 + LANES * (LANE_DEPTH + 1) + GIVEN);
        let c = CHUNK_SIZE as usize;
        let data: Vec<u8> = (0..CHUNKS * c).map(|i| (i % 253) as u8).collect();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        let mut feed = Feed::start(f, FileHasher::new(), 0, data.len() as u64).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let next = |feed: &mut Feed| loop {
            assert!(Instant::now() < deadline, "the feed stalled");
            match feed.poll() {
                Next::Supply(Supply::Bytes(b)) => return Some(b),
                Next::Supply(Supply::End { .. }) => return None,
                Next::Supply(Supply::Failed(e)) => panic!("{e}"),
                Next::Empty => std::thread::sleep(Duration::from_micros(100)),
            }
        };
        let mut got = Vec::new();
        for _ in 0..2 {
            got.push(next(&mut feed).unwrap());
        }
        // More than the lanes hold (each at most LANE_DEPTH queued and one being read), given
        // back at once: every later read finds one waiting. The file has enough chunks left
        // for all of them to be read into however far ahead the lanes had read.
        let given: Vec<Vec<u8>> = (0..GIVEN).map(|_| Vec::with_capacity(c)).collect();
        let addresses: std::collections::HashSet<usize> =
            given.iter().map(|b| b.as_ptr() as usize).collect();
        for b in given {
            feed.recycle(b);
        }
        while let Some(b) = next(&mut feed) {
            got.push(b);
        }
        assert_eq!(got.len(), CHUNKS);
        assert!(got.concat() == data, "bytes differ");
        let reused = got
            .iter()
            .filter(|b| addresses.contains(&(b.as_ptr() as usize)))
            .count();
        assert_eq!(reused, GIVEN, "chunks given back and read into again");
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
            let mut feed = Feed::start(f, FileHasher::new(), 0, data.len() as u64).unwrap();
            let (bytes, digest, short, direct) = collect_counting(&mut feed);
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
        let mut feed = Feed::start(f, FileHasher::new(), 0, 5000).unwrap();
        let (bytes, _, short) = collect(&mut feed);
        assert_eq!(bytes.len(), 5000);
        assert!(bytes[..1000].iter().all(|&b| b == 9) && bytes[1000..].iter().all(|&b| b == 0));
        assert!(short);
    }

    /// Dropping a feed mid-file ends its threads (their queues are full: they are blocked).
    #[test]
    fn dropping_a_feed_ends_its_threads() {
        let mut f = tempfile::tempfile().unwrap();
        let size = 4 * LANES * LANE_DEPTH * CHUNK;
        f.write_all(&vec![1u8; size]).unwrap();
        let feed = Feed::start(f, FileHasher::new(), 0, size as u64).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let t0 = Instant::now();
        drop(feed);
        assert!(t0.elapsed() < Duration::from_secs(10));
    }
}
