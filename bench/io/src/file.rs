//! The file cases: one thread reads a file the page cache holds in 1 MiB chunks and hashes
//! each chunk with BLAKE3 right after reading it, as longhaul's sender does
//! (`crates/net/src/feed.rs`), in three ways.
//!
//! `read`: `pread` into one reused 1 MiB buffer (a copy out of the page cache). `uring-read`:
//! io_uring `Read` requests, `depth` in flight, each into its own buffer (the same copy, fewer
//! system calls). `mmap`: windows of the file mapped with `MAP_POPULATE` (the page tables filled
//! at once, no faults), each chunk hashed in place, the window unmapped: no copy, but page
//! tables to fill and a TLB to flush per window.
//!
//! Each way returns the digest of its chunks' digests (as `crates/net/src/hashlist.rs` forms
//! a file's), and the tool fails unless all ways agree.

use crate::measure::{thread_cpu, Start, Stopwatch};
use anyhow::{anyhow, bail, ensure, Context, Result};
use io_uring::{opcode, types::Fd};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Duration;

/// Bytes of a chunk, longhaul's unit of reading and hashing.
pub const CHUNK: usize = 1 << 20;

/// How the file is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadWay {
    Read,
    Uring,
    Mmap,
}

/// What a file case measured, beside the wall and process time its caller takes.
pub struct FileRun {
    /// The reading thread's CPU time.
    pub cpu: Duration,
    pub calls: u64,
    /// BLAKE3 of the chunks' BLAKE3 digests, in order.
    pub digest: [u8; 32],
}

/// Make `path` a file of `size` pseudo-random bytes unless it is one already, and read it once
/// so the page cache holds it. Returns whether it was written.
pub fn prepare(path: &Path, size: u64) -> Result<bool> {
    let fresh = std::fs::metadata(path)
        .map(|m| m.len() != size)
        .unwrap_or(true);
    if fresh {
        let mut f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut xof = blake3::Hasher::new_derive_key("longhaul bench/io file").finalize_xof();
        let mut buf = vec![0u8; CHUNK];
        let mut left = size;
        while left > 0 {
            let n = left.min(CHUNK as u64) as usize;
            xof.fill(&mut buf[..n]);
            f.write_all(&buf[..n])
                .with_context(|| format!("writing {}", path.display()))?;
            left -= n as u64;
        }
        // Written back now, so the disk's work does not fall into a measurement.
        f.sync_all().context("fsync")?;
    }
    let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut buf = vec![0u8; CHUNK];
    let mut at = 0;
    while at < size {
        let n = read_full(&f, &mut buf, at, &mut 0)?;
        ensure!(n > 0, "{} is shorter than {size} bytes", path.display());
        at += n as u64;
    }
    Ok(fresh)
}

/// Fill `buf` from `f` at `at` (less at the end of the file); `calls` counts the reads.
fn read_full(f: &File, buf: &mut [u8], at: u64, calls: &mut u64) -> Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        *calls += 1;
        match f.read_at(&mut buf[got..], at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("pread"),
        }
    }
    Ok(got)
}

/// Read and hash the `size` bytes of `path` one way: `depth` requests in flight for io_uring,
/// `window` bytes per mapping for mmap.
pub fn run(
    way: ReadWay,
    path: &Path,
    size: u64,
    depth: usize,
    window: usize,
    clock: &Stopwatch,
) -> Result<FileRun> {
    ensure!(depth >= 1, "the read depth must be at least 1");
    ensure!(
        window >= CHUNK && window.is_multiple_of(CHUNK),
        "the mmap window must be a whole number of MiB"
    );
    let file = OpenOptions::new()
        .read(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    let start = Start::new(1);
    let (file, start) = (&file, &start);
    std::thread::scope(|s| {
        let reader = s.spawn(move || -> Result<FileRun> {
            let prepared = Reader::new(way, depth);
            start.wait();
            let mut reader = prepared?;
            let c0 = thread_cpu()?;
            let (digests, calls) = reader.run(file, size, window)?;
            let cpu = thread_cpu()? - c0;
            let mut list = blake3::Hasher::new();
            for d in &digests {
                list.update(d);
            }
            Ok(FileRun {
                cpu,
                calls,
                digest: list.finalize().into(),
            })
        });
        start.release(clock)?;
        reader
            .join()
            .map_err(|_| anyhow!("the reading thread panicked"))?
    })
}

/// A reading way with its buffers (and ring), set up before the clock starts.
enum Reader {
    Read(Vec<u8>),
    Uring(Box<io_uring::IoUring>, Vec<Vec<u8>>),
    Mmap,
}

impl Reader {
    fn new(way: ReadWay, depth: usize) -> Result<Reader> {
        Ok(match way {
            ReadWay::Read => Reader::Read(vec![1; CHUNK]),
            ReadWay::Uring => Reader::Uring(
                Box::new(crate::net::ring(depth.next_power_of_two() as u32)?),
                (0..depth).map(|_| vec![1; CHUNK]).collect(),
            ),
            ReadWay::Mmap => Reader::Mmap,
        })
    }

    /// Each chunk's digest in order, and the system calls made.
    fn run(&mut self, f: &File, size: u64, window: usize) -> Result<(Vec<[u8; 32]>, u64)> {
        match self {
            Reader::Read(buf) => {
                let mut calls = 0;
                let mut digests = Vec::with_capacity(size.div_ceil(CHUNK as u64) as usize);
                let mut at = 0;
                while at < size {
                    let n = (size - at).min(CHUNK as u64) as usize;
                    let got = read_full(f, &mut buf[..n], at, &mut calls)?;
                    ensure!(got == n, "the file ended at {}", at + got as u64);
                    digests.push(*blake3::hash(&buf[..n]).as_bytes());
                    at += n as u64;
                }
                Ok((digests, calls))
            }
            Reader::Uring(ring, bufs) => read_uring(ring, bufs, f, size),
            Reader::Mmap => read_mmap(f, size, window),
        }
    }
}

fn read_uring(
    ring: &mut io_uring::IoUring,
    bufs: &mut [Vec<u8>],
    f: &File,
    size: u64,
) -> Result<(Vec<[u8; 32]>, u64)> {
    let chunks = size.div_ceil(CHUNK as u64);
    let mut digests = vec![[0u8; 32]; chunks as usize];
    // Per buffer: the chunk it holds and the bytes of it read so far.
    let mut held: Vec<Option<(u64, usize)>> = vec![None; bufs.len()];
    let len = |id: u64| (size - id * CHUNK as u64).min(CHUNK as u64) as usize;
    let fd = Fd(f.as_raw_fd());
    let submit = |ring: &mut io_uring::IoUring, buf: &mut [u8], s: usize, id: u64, from: usize| {
        let e = opcode::Read::new(fd, buf[from..].as_mut_ptr(), (len(id) - from) as u32)
            .offset(id * CHUNK as u64 + from as u64)
            .build()
            .user_data(s as u64);
        // SAFETY: the buffer lives until the ring is dropped or the read completes; the run
        // waits for every read it submitted.
        unsafe { ring.submission().push(&e) }.map_err(|_| anyhow!("the submission queue is full"))
    };
    let (mut next, mut done, mut calls) = (0u64, 0u64, 0u64);
    for (s, buf) in bufs.iter_mut().enumerate() {
        if next < chunks {
            submit(ring, buf, s, next, 0)?;
            held[s] = Some((next, 0));
            next += 1;
        }
    }
    let mut completed = Vec::with_capacity(bufs.len());
    while done < chunks {
        loop {
            match ring.submit_and_wait(1) {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e).context("io_uring_enter"),
            }
        }
        calls += 1;
        completed.extend(
            ring.completion()
                .map(|c| (c.user_data() as usize, c.result())),
        );
        for (s, res) in completed.drain(..) {
            let Some((id, got)) = held[s] else {
                bail!("a completion for an idle buffer");
            };
            if res < 0 {
                return Err(io::Error::from_raw_os_error(-res)).context("io_uring read");
            }
            ensure!(
                res > 0,
                "the file ended at {}",
                id * CHUNK as u64 + got as u64
            );
            let got = got + res as usize;
            let want = len(id);
            if got < want {
                // A short read: the rest of the chunk.
                submit(ring, &mut bufs[s], s, id, got)?;
                held[s] = Some((id, got));
                continue;
            }
            digests[id as usize] = *blake3::hash(&bufs[s][..want]).as_bytes();
            done += 1;
            held[s] = None;
            if next < chunks {
                submit(ring, &mut bufs[s], s, next, 0)?;
                held[s] = Some((next, 0));
                next += 1;
            }
        }
    }
    Ok((digests, calls))
}

fn read_mmap(f: &File, size: u64, window: usize) -> Result<(Vec<[u8; 32]>, u64)> {
    let mut digests = Vec::with_capacity(size.div_ceil(CHUNK as u64) as usize);
    let mut calls = 0;
    let mut at = 0u64;
    while at < size {
        let n = (size - at).min(window as u64) as usize;
        // SAFETY: a fresh read-only shared mapping of the file at a page-aligned offset
        // (a multiple of the window, itself of 1 MiB); nothing else maps or changes it.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                n,
                libc::PROT_READ,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                f.as_raw_fd(),
                at as libc::off_t,
            )
        };
        calls += 1;
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error()).context("mmap");
        }
        // SAFETY: `p` maps `n` readable bytes until the munmap below.
        let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) };
        for c in bytes.chunks(CHUNK) {
            digests.push(*blake3::hash(c).as_bytes());
        }
        // SAFETY: unmaps exactly the mapping made above; `bytes` is not used after.
        let rc = unsafe { libc::munmap(p, n) };
        calls += 1;
        if rc != 0 {
            return Err(io::Error::last_os_error()).context("munmap");
        }
        at += n as u64;
    }
    Ok((digests, calls))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three ways hash the same chunks, a short last one included, to the same list
    /// digest as hashing the file's bytes directly; an mmap window holds several chunks.
    #[test]
    fn every_way_reads_every_chunk() {
        let path = std::env::temp_dir().join(format!("bench-io-test-{}.bin", std::process::id()));
        let size = 5 * CHUNK as u64 + 12_345;
        assert!(prepare(&path, size).unwrap());
        assert!(
            !prepare(&path, size).unwrap(),
            "an existing file of the size is kept"
        );
        let bytes = std::fs::read(&path).unwrap();
        let mut list = blake3::Hasher::new();
        for c in bytes.chunks(CHUNK) {
            list.update(blake3::hash(c).as_bytes());
        }
        let want: [u8; 32] = list.finalize().into();
        for way in [ReadWay::Read, ReadWay::Uring, ReadWay::Mmap] {
            let clock = Stopwatch::default();
            let r = run(way, &path, size, 4, 2 * CHUNK, &clock).unwrap();
            assert_eq!(r.digest, want, "{way:?}");
            assert!(r.calls > 0);
        }
        std::fs::remove_file(&path).unwrap();
    }
}
