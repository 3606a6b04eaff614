//! The receiver's writes of one file — part file, BLAKE3 digest of each chunk, checkpoints into the
//! journal — with the disk's work on a thread of its own.
//!
//! Writing took half or more of the receiver's CPU on loopback (bench/README.md, "Where a
//! loopback transfer's time goes"), and done on the connection's thread it kept that thread
//! from reading datagrams while the disk was busy. A [`Writer`] takes the bytes in pieces
//! through a bounded queue to a thread that writes them and journals the chunk digests at each
//! checkpoint. The writing thread takes up to [`BATCH`] queued pieces at a time and writes
//! them with one `writev`. Pieces come back through a second queue to be filled again.
//!
//! **A slow disk's backlog waits in pieces.** The queue holds a receive window's worth of
//! pieces (at least [`DEPTH`]), and the bytes queued and not yet written ([`Backlog`]) count
//! against the connection's receive window (`Connection::set_held`), also once the file's end
//! has been received and a placing thread waits for its last pieces to be written. When the
//! disk is slower than the network the sender is held back by the window while the backlog
//! sits in pieces, ready for the disk; the connection's buffer stays empty, so the file's next bytes keep going straight from their datagrams into a
//! piece. Were the backlog left to the connection's buffer, every byte after the first one
//! there would go through it too (the stream's order) and be copied twice: into a 2 GiB file
//! over loopback that is 97 % of the bytes and up to a quarter of the receiver's time
//! (bench/README.md, "A slow disk's backlog waits in pieces"). Pieces are made as the backlog
//! needs them, so memory follows the backlog, up to the window.
//!
//! **Hashing while the bytes are hot.** Each chunk's digest (the same digests make the file's
//! digest, `hashlist`, which the sender's digest is checked against, so no second pass over
//! the bytes is needed) is computed on the connection's thread, [`HASH_SPAN`] bytes at a time
//! as a piece fills ([`Writer::hash_filled`]), while the bytes the connection just copied in
//! are still in that core's cache. On a thread of its own, hashing would meet each 1 MiB piece
//! only after the connection's core wrote it, in the shared cache or in memory: 0.20 CPU
//! seconds per GB on loopback against 0.17 here (bench/README.md, "The receiver
//! hashes while the bytes are hot"). The price is that one connection's thread both copies
//! and hashes, which bounds one session's rate where the receiving host has cores to spare.
//!
//! **Direct writes.** The part file is written with `O_DIRECT` where the file system takes it:
//! the bytes go from the piece to the disk without a copy into the page cache. On the
//! development VM a buffered write of a fresh file ran at 94 MB/s against 574 MB/s direct
//! (`dd`, 1 GiB), the copy into newly allocated cache pages being the cost (bench/README.md).
//! Direct writes need the buffer, the offset and the length aligned to the device's block
//! (`direct`): pieces are aligned storage and whole chunks fall on aligned offsets; the last
//! piece of a file (or a file system that refuses `O_DIRECT`) is written through the cache.

use crate::direct::{aligned, set_direct, AlignedBuf};
use crate::framing::{CHUNK_SIZE, DIGEST_LEN};
use crate::hashlist::FileHasher;
use crate::journal::Journal;
use crate::store::{disk_error, Fatal};
use crossbeam_channel::{bounded, Receiver, Sender, TrySendError};
use std::fs::File;
use std::io::{self, IoSlice, Seek, SeekFrom, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The fewest pieces the writing thread's queue holds (it holds a receive window's worth): a
/// window under 8 MiB still gets a queue that absorbs the disk's slower moments (into a file
/// over loopback, 8 rather than 4 kept the sender from waiting on the receive window and ran
/// it 9–14 % faster; bench/README.md).
pub const DEPTH: usize = 8;
/// The most queued pieces the writing thread writes in one request: a 1 MiB direct write
/// waits out the device's latency alone, so taking what queued behind it together keeps the
/// disk busy (bench/README.md, "Queued pieces go to the disk in one write"). 4 MiB matched
/// `dd`'s best block size on the development VM.
pub const BATCH: usize = 4;
/// Bytes handed over at a time (a chunk: pieces start on chunk boundaries).
pub const PIECE: usize = CHUNK_SIZE as usize;
/// The fewest newly filled bytes of a piece hashed at once. BLAKE3 hashes sixteen of its
/// 1 KiB blocks side by side with AVX-512 only when given that many at once: fed datagram by
/// datagram (1,416 bytes) it ran 7 times slower here than fed 16 KiB or more. 64 KiB is a
/// few datagram batches, still in the core's cache when hashed.
pub const HASH_SPAN: usize = 64 * 1024;
/// Storage a full-size piece has before its bytes: room for a datagram's headers when one is
/// received straight into the piece ([`Landing`]) while the piece is still empty (a block,
/// so the bytes stay aligned for direct writes).
const LANDING_HEAD: usize = crate::direct::ALIGN;
/// Storage a full-size piece has after its [`PIECE`] bytes: a datagram received into the
/// piece near its end may run past it (the read takes a GRO buffer's worth).
const LANDING_TAIL: usize = crate::socket::MAX_GRO_BYTES;
/// The most header bytes a datagram received into a piece may have before its payload.
pub const MAX_LANDING_PREFIX: usize = 64;

/// Up to [`PIECE`] bytes of the file in aligned storage.
pub struct Piece {
    buf: AlignedBuf,
    /// Where its bytes start in `buf` ([`LANDING_HEAD`] for a full-size piece, else 0).
    head: usize,
    /// Bytes it may hold: [`PIECE`], or less for a small file's.
    cap: usize,
    len: usize,
    /// Bytes at the front already hashed.
    hashed: usize,
    /// Digests of the chunks these bytes complete (set as they are hashed).
    digests: Vec<[u8; DIGEST_LEN]>,
}

impl Piece {
    /// A full-size piece, with storage around it for datagrams received into it.
    fn new() -> Piece {
        Piece {
            buf: AlignedBuf::new(LANDING_HEAD + PIECE + LANDING_TAIL),
            head: LANDING_HEAD,
            cap: PIECE,
            len: 0,
            hashed: 0,
            digests: Vec::new(),
        }
    }

    /// A piece for at most `cap` bytes (a small file's: zeroing a whole one per file cost
    /// more than the file).
    fn sized(cap: usize) -> Piece {
        Piece {
            buf: AlignedBuf::new(cap.max(1)),
            head: 0,
            cap,
            len: 0,
            hashed: 0,
            digests: Vec::new(),
        }
    }

    /// Bytes it can still take.
    pub fn room(&self) -> usize {
        self.cap - self.len
    }

    /// Bytes held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when it holds no byte.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append what fits of `data`; returns how much did. (The receiver fills pieces through
    /// `Incoming::write_with` and `Piece::land`; tests fill them from slices.)
    pub fn extend(&mut self, data: &[u8]) -> usize {
        self.fill_with(data.len(), |spare| {
            spare.copy_from_slice(&data[..spare.len()]);
            spare.len()
        })
    }

    /// Let `fill` write up to `max` bytes straight into the piece's free space (the receiver
    /// reads the connection's stream into it, one copy fewer than reading into a buffer and
    /// extending); it returns how many it wrote, which are appended.
    pub fn fill_with(&mut self, max: usize, fill: impl FnOnce(&mut [u8]) -> usize) -> usize {
        let room = self.room().min(max);
        let at = self.head + self.len;
        let n = fill(&mut self.buf.as_mut_slice()[at..at + room]).min(room);
        self.len += n;
        n
    }

    /// The bytes held.
    pub fn bytes(&self) -> &[u8] {
        &self.buf.as_slice()[self.head..self.head + self.len]
    }

    /// The storage from `prefix` bytes before the free space (over the last bytes held) to
    /// its end, if that reaches at least `after` bytes past the free space.
    fn landing_area(&mut self, prefix: usize, after: usize) -> Option<&mut [u8]> {
        let free = self.head + self.len;
        let start = free.checked_sub(prefix)?;
        let buf = self.buf.as_mut_slice();
        (buf.len() - free >= after).then(|| &mut buf[start..])
    }

    /// Take `prefix` bytes of storage before the free space and what follows it to receive a
    /// datagram into, so that a payload `prefix` bytes in lies where the piece's next bytes
    /// go; `room` is how many of them the piece may take. `Err` gives the piece back when its
    /// storage has no such area: no room for the headers before the free space (a piece of a
    /// small file, or an empty one without storage before it), or less than a GRO read's
    /// worth after it.
    pub fn land(mut self, prefix: usize, room: usize) -> Result<Landing, Piece> {
        assert!(prefix <= MAX_LANDING_PREFIX);
        let room = room.min(self.room());
        let Some(area) = self.landing_area(prefix, crate::socket::MAX_GRO_BYTES) else {
            return Err(self);
        };
        let mut saved = [0u8; MAX_LANDING_PREFIX];
        saved[..prefix].copy_from_slice(&area[..prefix]);
        Ok(Landing {
            piece: self,
            prefix,
            saved,
            room,
        })
    }
}

/// A piece taken out to receive a datagram into ([`Piece::land`]): its bytes the datagram's
/// headers cover are kept aside, to be put back before anything reads the piece.
pub struct Landing {
    piece: Piece,
    prefix: usize,
    saved: [u8; MAX_LANDING_PREFIX],
    room: usize,
}

impl Landing {
    /// Where to receive the datagram: its payload, `prefix` bytes in, lies at the piece's free
    /// space.
    pub fn area(&mut self) -> &mut [u8] {
        self.piece
            .landing_area(self.prefix, 0)
            .expect("checked when landed")
    }

    /// Bytes of the datagram's payload the piece may take.
    pub fn room(&self) -> usize {
        self.room
    }

    /// The piece back with `taken`, a range of the area (the datagram's payload bytes the
    /// piece takes, at most [`Landing::room`]), appended: left where they lie when the payload
    /// started `prefix` bytes in, as it does for a data packet, else moved there. The bytes
    /// the headers covered are put back. Also returns how many bytes were left in place.
    pub fn finish(mut self, taken: std::ops::Range<usize>) -> (Piece, usize) {
        let n = taken.len();
        assert!(
            n <= self.room,
            "the connection takes at most the room it was given"
        );
        let (prefix, saved) = (self.prefix, self.saved);
        let area = self.area();
        let in_place = if taken.start == prefix { n } else { 0 };
        if in_place == 0 {
            area.copy_within(taken.start..taken.start + n, prefix);
        }
        area[..prefix].copy_from_slice(&saved[..prefix]);
        self.piece.len += n;
        (self.piece, in_place)
    }
}

/// Chunks written before the part file is flushed and journaled: a 200th of the file (so a
/// receiver killed mid-transfer costs under 0.5 % of a large file sent again), at least one
/// chunk, and at most 16 (a flush per 16 MiB bounds the flushes per second at high rates).
const CHECKPOINT_CHUNKS: usize = 16;
const CHECKPOINT_FRACTION: u64 = 200;
/// ... or after this long, whichever comes first.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// A part file being written, with its journal and digests.
pub struct PartFile {
    /// The part file, open for writing.
    pub part: File,
    /// `None` for a discarding receiver's file (nothing to resume, so nothing to flush).
    journal: Option<Journal>,
    /// The file's path as the sender named it (for messages) and size.
    path: String,
    size: u64,
    /// Bytes of the file in the part file (the resume point plus what was written since).
    written: u64,
    /// The file's digest so far: every chunk's, the resumed prefix's included (kept by the
    /// [`Writer`] meanwhile).
    pub hasher: FileHasher,
    /// Digests of chunks written since the last checkpoint.
    pending: Vec<[u8; DIGEST_LEN]>,
    last_checkpoint: Instant,
    /// Writes bypass the page cache (`O_DIRECT` is set on `part`).
    direct: bool,
}

impl PartFile {
    /// `part` is positioned at `written`, and `hasher` holds the digests of its chunks before
    /// that (a chunk boundary, or the end of the file).
    pub fn new(
        part: File,
        journal: Option<Journal>,
        path: &str,
        size: u64,
        written: u64,
        hasher: FileHasher,
    ) -> PartFile {
        let mut file = PartFile {
            part,
            journal,
            path: path.to_string(),
            size,
            written,
            hasher,
            pending: Vec::new(),
            last_checkpoint: Instant::now(),
            direct: false,
        };
        file.direct = aligned(written) && file.set_direct(true);
        file
    }

    /// Whether writes bypass the page cache.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// Set or clear `O_DIRECT`; false if the file system refused.
    fn set_direct(&mut self, on: bool) -> bool {
        let ok = set_direct(&self.part, on);
        self.direct = on && ok;
        ok
    }

    /// Write `pieces`, one after another, at `written`: directly when they are all aligned,
    /// else through the cache from then on (a direct write the file system refuses is made
    /// again through the cache). Several pieces go in one `writev`, one request to the device.
    fn put(&mut self, pieces: &[&[u8]]) -> io::Result<()> {
        if self.direct
            && !(aligned(self.written)
                && pieces
                    .iter()
                    .all(|p| aligned(p.len() as u64) && aligned(p.as_ptr() as u64)))
        {
            self.set_direct(false);
        }
        match write_all_vectored(&mut self.part, pieces) {
            Err(e) if self.direct && e.raw_os_error() == Some(libc::EINVAL) => {
                self.set_direct(false);
                self.part.seek(SeekFrom::Start(self.written))?;
                write_all_vectored(&mut self.part, pieces)
            }
            r => r,
        }
    }

    /// Append file bytes (pieces in order), with the digests of the chunks they complete.
    fn write(&mut self, pieces: &[&[u8]], completed: &[[u8; DIGEST_LEN]]) -> Result<(), Fatal> {
        if let Err(e) = self.put(pieces) {
            // What reached whole chunks stays journaled for a resume.
            let _ = self.checkpoint();
            return Err(Fatal(disk_error(&self.path, &e)));
        }
        self.written += pieces.iter().map(|p| p.len() as u64).sum::<u64>();
        self.pending.extend_from_slice(completed);
        let every = (self.size.div_ceil(CHUNK_SIZE) / CHECKPOINT_FRACTION)
            .clamp(1, CHECKPOINT_CHUNKS as u64) as usize;
        if self.pending.len() >= every || self.last_checkpoint.elapsed() >= CHECKPOINT_EVERY {
            self.checkpoint()
                .map_err(|e| Fatal(disk_error(&self.path, &e)))?;
        }
        Ok(())
    }

    /// Flush the part file, then journal the chunks it now holds for certain.
    pub fn checkpoint(&mut self) -> io::Result<()> {
        self.last_checkpoint = Instant::now();
        if self.pending.is_empty() {
            return Ok(());
        }
        if let Some(journal) = &mut self.journal {
            self.part.sync_data()?;
            journal.append(&self.pending)?;
        }
        self.pending.clear();
        Ok(())
    }
}

/// `write_all` for several buffers: one `writev` per turn, on from where a short write stopped.
fn write_all_vectored(file: &mut File, pieces: &[&[u8]]) -> io::Result<()> {
    let mut slices: Vec<IoSlice> = pieces.iter().map(|p| IoSlice::new(p)).collect();
    let mut rest = &mut slices[..];
    IoSlice::advance_slices(&mut rest, 0);
    while !rest.is_empty() {
        match file.write_vectored(rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A writer's bytes queued for the disk and not yet written, readable on any thread. The
/// receive loop counts them against the receive window (see the module's header) until the
/// disk has them, also after the file's end, while a placing thread waits for its last ones.
#[derive(Debug, Default)]
pub struct Backlog {
    /// Bytes queued (counted on the connection's thread) and written (on the writing thread).
    queued: AtomicU64,
    written: AtomicU64,
    /// The writing thread has ended (done, or stopped by an error): nothing more is written.
    ended: AtomicBool,
}

impl Backlog {
    /// Bytes queued and not written yet; 0 once the writing thread has ended.
    pub fn unwritten(&self) -> u64 {
        if self.ended.load(Ordering::Acquire) {
            return 0;
        }
        let written = self.written.load(Ordering::Acquire);
        self.queued.load(Ordering::Relaxed).saturating_sub(written)
    }
}

/// Marks its writing thread's end, however the thread ends.
struct Ends(Arc<Backlog>);

impl Drop for Ends {
    fn drop(&mut self) {
        self.0.ended.store(true, Ordering::Release);
    }
}

/// What the thread returns: the part file, and the first error (after which it wrote nothing).
type Outcome = (PartFile, Result<(), Fatal>);

/// A [`PartFile`] hashed on the caller's thread and written on a thread of its own, or (a
/// small file, see [`Writer::in_memory`]) kept in memory for the caller.
pub struct Writer {
    pieces: Option<Sender<Piece>>,
    spent: Receiver<Piece>,
    /// Bytes queued for the thread and not yet written.
    backlog: Arc<Backlog>,
    /// The file's digest so far (the resumed prefix's chunks included).
    hasher: FileHasher,
    /// Bytes of the file hashed, the resume point included; and the file's size.
    hashed: u64,
    size: u64,
    thread: Option<JoinHandle<Outcome>>,
    /// Pieces the thread gave back, the latest last.
    free: Vec<Piece>,
    /// The bytes kept in memory ([`Writer::in_memory`]).
    memory: Option<Vec<u8>>,
}

impl Writer {
    /// Starts the writing thread for `file`, with a queue for `hold` bytes of pieces (the
    /// receive window; at least [`DEPTH`] pieces).
    pub fn start(mut file: PartFile, hold: u64) -> io::Result<Writer> {
        let depth = DEPTH.max(hold.div_ceil(PIECE as u64).min(usize::MAX as u64) as usize);
        let (pieces, write_rx) = bounded::<Piece>(depth);
        let (spent_tx, spent) = bounded(depth + BATCH);
        let backlog = Arc::new(Backlog::default());
        let ends = Ends(Arc::clone(&backlog));
        let hasher = std::mem::take(&mut file.hasher);
        let (hashed, size) = (file.written, file.size);
        // Ends when the connection's side drops its queue.
        let thread = std::thread::Builder::new()
            .name("longhaul-write".into())
            .spawn(move || {
                let ends = ends;
                let mut file = file;
                let mut batch: Vec<Piece> = Vec::with_capacity(BATCH);
                let mut digests = Vec::new();
                for piece in write_rx.iter() {
                    // Whatever else is queued goes to the disk with it.
                    batch.push(piece);
                    while batch.len() < BATCH {
                        match write_rx.try_recv() {
                            Ok(p) => batch.push(p),
                            Err(_) => break,
                        }
                    }
                    let bytes: Vec<&[u8]> = batch.iter().map(Piece::bytes).collect();
                    digests.clear();
                    batch
                        .iter()
                        .for_each(|p| digests.extend_from_slice(&p.digests));
                    if let Err(e) = file.write(&bytes, &digests) {
                        return (file, Err(e));
                    }
                    let n = bytes.iter().map(|b| b.len() as u64).sum();
                    ends.0.written.fetch_add(n, Ordering::Release);
                    for mut piece in batch.drain(..) {
                        piece.len = 0;
                        piece.hashed = 0;
                        piece.digests.clear();
                        let _ = spent_tx.try_send(piece);
                    }
                }
                (file, Ok(()))
            })?;
        Ok(Writer {
            pieces: Some(pieces),
            spent,
            backlog,
            hasher,
            hashed,
            size,
            thread: Some(thread),
            free: Vec::new(),
            memory: None,
        })
    }

    /// A writer for a file of less than a chunk: its bytes are hashed on the caller's thread
    /// and kept in memory, for the part file to be written whole when it is placed
    /// ([`Writer::finish_memory`]). Creating the part file and starting a thread on the
    /// connection's thread cost more than the write of such a file, and made that thread the
    /// bottleneck of a transfer of many small files.
    pub fn in_memory(size: u64) -> Writer {
        let (_, spent) = bounded(0);
        Writer {
            pieces: None,
            spent,
            backlog: Arc::default(),
            hasher: FileHasher::new(),
            hashed: 0,
            size,
            thread: None,
            free: Vec::new(),
            memory: Some(Vec::with_capacity(size as usize)),
        }
    }

    /// Hash the bytes `piece` took since it was last hashed, in whole [`HASH_SPAN`]s: called
    /// as the piece fills, while they are in the cache. Whole spans keep every call on
    /// BLAKE3's 1 KiB chunk boundaries: a call that starts or ends inside a chunk hashes
    /// that chunk's 64-byte blocks one by one, which at a call per 1,500-byte datagram took 6 %
    /// of the receiver's samples.
    pub fn hash_filled(&mut self, piece: &mut Piece) {
        let spans = (piece.len - piece.hashed) / HASH_SPAN;
        if spans > 0 {
            self.hash_to(piece, piece.hashed + spans * HASH_SPAN);
        }
    }

    /// Hash every byte of `piece` not hashed yet; the file's last one closes its last chunk.
    fn hash_rest(&mut self, piece: &mut Piece) {
        self.hash_to(piece, piece.len);
    }

    /// Hash the bytes of `piece` not hashed yet up to `end`.
    fn hash_to(&mut self, piece: &mut Piece, end: usize) {
        let bytes = &piece.buf.as_slice()[piece.head + piece.hashed..piece.head + end];
        if bytes.is_empty() {
            return;
        }
        let done = &mut piece.digests;
        self.hasher.update(bytes, |d| done.push(d));
        self.hashed += bytes.len() as u64;
        piece.hashed = end;
        if self.hashed == self.size {
            done.extend(self.hasher.end());
        }
    }

    /// The file's digest (`hashlist`) over the bytes hashed so far: the whole file's once its
    /// last piece is queued, whether or not the disk has written it.
    pub fn digest(&self) -> [u8; DIGEST_LEN] {
        self.hasher.digest()
    }

    /// Whether the bytes are kept in memory ([`Writer::in_memory`]).
    pub fn is_memory(&self) -> bool {
        self.memory.is_some()
    }

    /// An in-memory writer's bytes and their digests.
    pub fn finish_memory(mut self) -> Option<(Vec<u8>, FileHasher)> {
        let hasher = std::mem::take(&mut self.hasher);
        self.memory.take().map(|bytes| (bytes, hasher))
    }

    /// An empty piece to fill: the one the thread finished with last, or a new one. The last
    /// one written is the likeliest to be still in the cache, where the copies into it cost
    /// least (the queue gives them back oldest first).
    pub fn buffer(&mut self) -> Piece {
        if let Some(m) = &self.memory {
            return Piece::sized(self.size as usize - m.len());
        }
        self.free.extend(self.spent.try_iter());
        self.free.pop().unwrap_or_else(Piece::new)
    }

    /// Queue `buf` to be written, waiting while the queue is full. An error is the thread's
    /// (the disk's): nothing more is written.
    pub fn write(&mut self, mut buf: Piece) -> Result<(), Fatal> {
        self.hash_rest(&mut buf);
        if let Some(m) = self.memory.as_mut() {
            m.extend_from_slice(buf.bytes());
            return Ok(());
        }
        let Some(pieces) = self.pieces.as_ref() else {
            return Err(Fatal("the part file's writer already failed".into()));
        };
        let n = buf.len() as u64;
        if pieces.send(buf).is_ok() {
            self.backlog.queued.fetch_add(n, Ordering::Relaxed);
            return Ok(());
        }
        Err(self.stopped())
    }

    /// The thread ended early, so it failed: why.
    fn stopped(&mut self) -> Fatal {
        self.pieces = None;
        match self.join() {
            Some((_, Err(e))) => e,
            _ => Fatal("the part file's writer stopped".into()),
        }
    }

    /// Queue `buf` if the queue has room; otherwise give it back (`Ok(Some(buf))`) rather than
    /// wait, so the connection's thread can go on receiving and acknowledging while the disk
    /// catches up. An error is the thread's, as for [`Writer::write`].
    pub fn try_write(&mut self, mut buf: Piece) -> Result<Option<Piece>, Fatal> {
        self.hash_rest(&mut buf);
        if let Some(m) = self.memory.as_mut() {
            m.extend_from_slice(buf.bytes());
            return Ok(None);
        }
        let Some(pieces) = self.pieces.as_ref() else {
            return Err(Fatal("the part file's writer already failed".into()));
        };
        let n = buf.len() as u64;
        match pieces.try_send(buf) {
            Ok(()) => {
                self.backlog.queued.fetch_add(n, Ordering::Relaxed);
                Ok(None)
            }
            Err(TrySendError::Full(buf)) => Ok(Some(buf)),
            Err(TrySendError::Disconnected(_)) => Err(self.stopped()),
        }
    }

    /// The count of its bytes queued for the disk and not written yet, to follow also after
    /// the writer has been handed on.
    pub fn backlog(&self) -> &Arc<Backlog> {
        &self.backlog
    }

    /// Wait until everything queued is written; the part file, or why it is not whole.
    pub fn finish(mut self) -> Result<PartFile, Fatal> {
        self.pieces = None;
        match self.join() {
            Some((file, Ok(()))) => Ok(file),
            Some((_, Err(e))) => Err(e),
            None => Err(Fatal("the part file's writer stopped".into())),
        }
    }

    /// The writing thread's end: the part file with the file's digest in it.
    fn join(&mut self) -> Option<Outcome> {
        let (mut file, r) = self.thread.take().and_then(|t| t.join().ok())?;
        file.hasher = std::mem::take(&mut self.hasher);
        Some((file, r))
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.pieces = None;
        let _ = self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashlist::{chunk_digest, list_digest};
    use crate::journal::JournalHeader;

    fn header(size: u64) -> JournalHeader {
        JournalHeader {
            path: "f".into(),
            size,
            mtime: (0, 0),
        }
    }

    /// Write `data` through a [`Writer`] in pieces cut at the given lengths; returns the part
    /// file's bytes, the digest and the journal's chunk count.
    fn write_through(data: &[u8], cuts: &[usize]) -> (Vec<u8>, [u8; 32], u64, bool) {
        let dir = tempfile::tempdir().unwrap();
        let (pp, jp) = (dir.path().join("p"), dir.path().join("j"));
        let part = File::create(&pp).unwrap();
        let journal = Journal::create(&jp, &header(data.len() as u64)).unwrap();
        let file = PartFile::new(
            part,
            Some(journal),
            "f",
            data.len() as u64,
            0,
            FileHasher::new(),
        );
        let mut w = Writer::start(file, 0).unwrap();
        let mut rest = data;
        for &c in cuts.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            // Filled a datagram's worth at a time, as packets fill it, and hashed as it fills,
            // in whole spans.
            let mut p = w.buffer();
            for d in rest[..c.min(rest.len())].chunks(1416) {
                p.extend(d);
                w.hash_filled(&mut p);
                assert!(
                    p.len() - p.hashed < HASH_SPAN,
                    "{} bytes left unhashed",
                    p.len() - p.hashed
                );
                assert_eq!(p.hashed % HASH_SPAN, 0, "hashed in whole spans");
            }
            rest = &rest[p.len()..];
            w.write(p).unwrap();
        }
        let mut file = w.finish().unwrap();
        file.checkpoint().unwrap();
        let direct = file.is_direct();
        let digest = file.hasher.digest();
        let chunks = Journal::open(&jp, &header(data.len() as u64))
            .unwrap()
            .chunks();
        (std::fs::read(&pp).unwrap(), digest, chunks, direct)
    }

    fn bytes(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 + i / 4099) as u8).collect()
    }

    /// Whole chunks, then a ragged tail in pieces of odd sizes, each hashed in spans as it
    /// fills: the part file holds exactly the bytes, the digest is theirs, and the journal has
    /// every chunk.
    #[test]
    fn pieces_of_any_size_land_in_order_with_digest_and_journal() {
        let data = bytes(2 * PIECE + 12_345);
        for cuts in [&[PIECE][..], &[PIECE, 7, 100_000, PIECE - 3]] {
            let (got, digest, chunks, _) = write_through(&data, cuts);
            assert!(got == data, "bytes differ with cuts {cuts:?}");
            let want: Vec<[u8; 32]> = data.chunks(CHUNK_SIZE as usize).map(chunk_digest).collect();
            assert_eq!(digest, list_digest(want.iter()), "cuts {cuts:?}");
            assert_eq!(chunks, 3, "cuts {cuts:?}");
        }
    }

    /// Datagrams received into a piece ([`Piece::land`]): a payload that starts where the
    /// piece's next bytes go stays there, one that starts elsewhere in the datagram is moved
    /// there, and the piece's bytes the headers covered come back; over a whole piece the
    /// bytes are the stream's. A piece without storage before its free space lands nothing.
    #[test]
    fn datagrams_received_into_a_piece_leave_the_streams_bytes() {
        let data = bytes(PIECE);
        let prefix = 40;
        let mut p = Piece::new();
        let (mut at, mut k, mut in_place, mut want_in_place) = (0, 0, 0, 0);
        while at < data.len() {
            let n = (1_000 + 7_919 * k % 64_000).min(data.len() - at);
            let mut l = p
                .land(prefix, n)
                .unwrap_or_else(|_| panic!("a full piece lands"));
            assert_eq!(l.room(), n);
            // Headers, then the payload; every third datagram's headers are 5 bytes longer.
            let skew = if k % 3 == 0 { 5 } else { 0 };
            let area = l.area();
            assert!(area.len() >= prefix + crate::socket::MAX_GRO_BYTES);
            area[..prefix + skew].fill(0xEE);
            area[prefix + skew..prefix + skew + n].copy_from_slice(&data[at..at + n]);
            let (back, kept) = l.finish(prefix + skew..prefix + skew + n);
            p = back;
            in_place += kept;
            if skew == 0 {
                want_in_place += n;
            }
            at += n;
            k += 1;
            assert!(
                p.bytes() == &data[..at],
                "datagram {k}: the piece's bytes differ"
            );
        }
        assert_eq!(in_place, want_in_place);
        assert!(want_in_place > 0 && want_in_place < PIECE);
        // A small file's piece has no storage before its first byte.
        assert!(Piece::sized(1_000).land(prefix, 1_000).is_err());
    }

    /// The piece handed out next is the one the writing thread gave back last, the likeliest
    /// to be still in the cache.
    #[test]
    fn the_piece_written_last_is_filled_first() {
        let null = File::options().write(true).open("/dev/null").unwrap();
        let file = PartFile::new(null, None, "f", 3 * PIECE as u64, 0, FileHasher::new());
        let mut w = Writer::start(file, 0).unwrap();
        let data = bytes(PIECE);
        let (mut first, mut second) = (w.buffer(), w.buffer());
        let last = second.buf.as_slice().as_ptr();
        assert_ne!(first.buf.as_slice().as_ptr(), last, "two pieces");
        first.extend(&data);
        second.extend(&data);
        w.write(first).unwrap();
        w.write(second).unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while w.free.len() < 2 {
            assert!(Instant::now() < deadline, "the pieces never came back");
            w.free.extend(w.spent.try_iter());
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(w.buffer().buf.as_slice().as_ptr(), last);
    }

    /// Whether the file system under `dir` takes O_DIRECT (on a file of its own).
    fn takes_direct(dir: &std::path::Path) -> bool {
        set_direct(&File::create(dir.join("probe")).unwrap(), true)
    }

    /// Where the file system takes O_DIRECT (a probe file), a file of whole aligned
    /// pieces is written directly to the end.
    #[test]
    fn aligned_pieces_are_written_directly_where_the_file_system_allows() {
        let dir = tempfile::tempdir().unwrap();
        let takes = takes_direct(dir.path());
        let data = bytes(2 * PIECE);
        let (got, _, _, direct) = write_through(&data, &[PIECE]);
        assert!(got == data);
        assert_eq!(direct, takes);
    }

    /// Several pieces in one write (the writing thread's batch): aligned ones stay direct
    /// where the file system allows it, a batch with a ragged tail goes through the cache,
    /// and the bytes, the journal and the write position are those of one piece at a time.
    #[test]
    fn a_batch_of_pieces_is_written_as_one_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let (pp, jp) = (dir.path().join("p"), dir.path().join("j"));
        let takes = takes_direct(dir.path());
        let data = bytes(5 * PIECE + 777);
        let size = data.len() as u64;
        let journal = Journal::create(&jp, &header(size)).unwrap();
        let mut file = PartFile::new(
            File::create(&pp).unwrap(),
            Some(journal),
            "f",
            size,
            0,
            FileHasher::new(),
        );
        let pieces: Vec<Piece> = data
            .chunks(PIECE)
            .map(|c| {
                let mut p = Piece::new();
                p.extend(c);
                p
            })
            .collect();
        let digest = |i: usize| chunk_digest(pieces[i].bytes());
        let first: Vec<&[u8]> = pieces[..3].iter().map(Piece::bytes).collect();
        file.write(&first, &[digest(0), digest(1), digest(2)])
            .unwrap();
        assert_eq!(file.written, 3 * PIECE as u64);
        assert_eq!(file.is_direct(), takes);
        let rest: Vec<&[u8]> = pieces[3..].iter().map(Piece::bytes).collect();
        file.write(&rest, &[digest(3), digest(4), digest(5)])
            .unwrap();
        assert!(
            !file.is_direct(),
            "a ragged tail is written through the cache"
        );
        assert_eq!(file.written, size);
        file.checkpoint().unwrap();
        assert!(std::fs::read(&pp).unwrap() == data, "bytes differ");
        assert_eq!(Journal::open(&jp, &header(size)).unwrap().chunks(), 6);
    }

    /// A disk that stops taking bytes (here a socket nobody reads; a pipe would take O_DIRECT
    /// as packet mode): `try_write` gives the piece back once the queues are full instead of
    /// waiting, and takes it again once the disk moves; every byte arrives, in order. The
    /// queue holds the bytes it is started with (at least [`DEPTH`] pieces), and the bytes
    /// queued count as unwritten until the disk has taken them.
    #[test]
    fn a_stalled_disk_hands_the_piece_back_instead_of_waiting() {
        for hold in [0, 3 * (DEPTH * PIECE) as u64 - 1] {
            stall_and_resume(hold);
        }
    }

    fn stall_and_resume(hold: u64) {
        let depth = DEPTH.max(hold.div_ceil(PIECE as u64) as usize);
        let (mut rd, wr) = std::os::unix::net::UnixStream::pair().unwrap();
        let wr = File::from(std::os::fd::OwnedFd::from(wr));
        // More pieces than the writer can hold: the queue and a batch.
        let pieces = depth + BATCH + 8;
        let total = pieces * PIECE;
        let file = PartFile::new(wr, None, "f", total as u64, 0, FileHasher::new());
        let mut w = Writer::start(file, hold).unwrap();
        let data = bytes(total);
        let mut queued = 0;
        let mut returned = None;
        // Offer pieces until the writer has refused for 300 ms on end: by then its threads
        // have taken all they can (a busy machine may run them late), and the rest is refused
        // rather than waited for.
        let mut refused_since: Option<Instant> = None;
        while queued < pieces {
            let p = match returned.take() {
                Some(p) => p,
                None => {
                    let mut p = w.buffer();
                    p.extend(&data[queued * PIECE..(queued + 1) * PIECE]);
                    p
                }
            };
            match w.try_write(p).unwrap() {
                None => {
                    queued += 1;
                    refused_since = None;
                }
                Some(back) => {
                    returned = Some(back);
                    let since = *refused_since.get_or_insert_with(Instant::now);
                    if since.elapsed() > Duration::from_millis(300) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        }
        // The queue full, and on the writing thread at least one and at most a batch (the
        // socket's buffer holds under a piece of it).
        let held = depth + 1..=depth + BATCH;
        let unwritten = w.backlog().unwritten();
        if returned.is_none() || !held.contains(&queued) || unwritten != (queued * PIECE) as u64 {
            // Unblock the writer first, so the failure is reported rather than waited on.
            drop(rd);
            panic!(
                "a stalled disk took {queued} pieces, expected {held:?}, and gave one back; \
                 {unwritten} bytes unwritten"
            );
        }
        let mut piece = returned.expect("given back");
        assert_eq!(piece.bytes(), &data[queued * PIECE..(queued + 1) * PIECE]);
        // The disk moves again.
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            std::io::Read::read_to_end(&mut rd, &mut got).unwrap();
            got
        });
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match w.try_write(piece).unwrap() {
                None => queued += 1,
                Some(p) => {
                    assert!(
                        Instant::now() < deadline,
                        "the writer never took a piece again"
                    );
                    std::thread::sleep(Duration::from_millis(1));
                    piece = p;
                    continue;
                }
            }
            if queued == pieces {
                break;
            }
            piece = w.buffer();
            piece.extend(&data[queued * PIECE..(queued + 1) * PIECE]);
        }
        while w.backlog().unwritten() > 0 {
            assert!(
                Instant::now() < deadline,
                "{} bytes never written",
                w.backlog().unwritten()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(w.finish().unwrap());
        assert!(reader.join().unwrap() == data, "bytes lost or out of order");
    }

    /// A disk that fails every write: the error reaches the connection's side as the disk's
    /// message, and nothing waits forever.
    #[test]
    fn a_failing_disk_is_reported_not_hung() {
        let dir = tempfile::tempdir().unwrap();
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let journal = Journal::create(&dir.path().join("j"), &header(10 * PIECE as u64)).unwrap();
        let file = PartFile::new(
            full,
            Some(journal),
            "f",
            10 * PIECE as u64,
            0,
            FileHasher::new(),
        );
        let mut w = Writer::start(file, 0).unwrap();
        let backlog = Arc::clone(w.backlog());
        let mut err = None;
        for _ in 0..10 {
            let mut p = w.buffer();
            p.extend(&bytes(PIECE));
            if let Err(e) = w.write(p) {
                err = Some(e);
                break;
            }
        }
        let msg = match err {
            Some(e) => e.0,
            None => w.finish().err().expect("the writes failed").0,
        };
        assert!(msg.contains("disk is full"), "{msg}");
        // Bytes the disk will never take do not count against a receive window for ever.
        assert_eq!(backlog.unwritten(), 0);
    }
}
