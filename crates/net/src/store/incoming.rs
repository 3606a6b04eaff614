//! One file being received: its bytes handed to the writing thread (taken straight from their
//! packets, or received where they go), drained, and checked against the sender's digest.

use super::place::{Staged, ToPlace};
use super::{Fatal, PlaceTag, Store};
use crate::framing::{Entry, DIGEST_LEN};
use crate::hashlist::FileHasher;
use crate::part::{Backlog, Landing, Piece, Writer, PIECE};
use crate::path::Printable;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

/// One file being received: where it goes, and the thread writing its part file.
pub struct Incoming {
    pub(super) key: String,
    /// The entry as the sender announced it.
    pub entry: Entry,
    pub(super) dest: PathBuf,
    pub(super) part_path: PathBuf,
    pub(super) journal_path: PathBuf,
    /// `None` once drained.
    pub(super) writer: Option<Writer>,
    /// Bytes not yet handed to the writer (up to a piece).
    pub(super) fill: Option<Piece>,
    /// Bytes of the file taken (the resume point plus this session's).
    pub written: u64,
    /// Bytes this session skipped because the receiver held them.
    pub resumed: u64,
    /// Discarded, not stored: no part file, journal or destination to touch.
    pub(super) sink: bool,
    /// Why the file is refused whatever its bytes (they are taken and dropped).
    pub(super) refused: Option<String>,
    /// The part file's lock, dropped with the file.
    pub(super) _lock: Option<File>,
}

impl Incoming {
    /// Bytes of the file still to come.
    pub fn remaining(&self) -> u64 {
        self.entry.size() - self.written
    }

    /// Append file bytes (at most `remaining()`). They are written on the writer's thread; an
    /// error is one the disk gave for earlier bytes, or these. Waits while the writer's queue
    /// is full.
    pub fn write(&mut self, mut data: &[u8]) -> Result<(), Fatal> {
        while !data.is_empty() {
            self.hand_over(true)?;
            let n = self.write_with(data.len(), |spare| {
                spare.copy_from_slice(&data[..spare.len()]);
                spare.len()
            })?;
            data = &data[n..];
        }
        Ok(())
    }

    /// Let `fill` write up to `max` file bytes (and at most `remaining()`) straight into the
    /// piece being filled; returns how many it wrote. A full piece goes to the writer. Never
    /// waits for the disk: while a full piece waits for room in the writer's queue
    /// ([`Incoming::waiting_for_disk`]) nothing is taken and the result is 0, so the caller
    /// leaves the bytes in the connection, whose receive window then closes.
    pub fn write_with(
        &mut self,
        max: usize,
        fill: impl FnOnce(&mut [u8]) -> usize,
    ) -> Result<usize, Fatal> {
        if !self.hand_over(false)? {
            return Ok(0);
        }
        let max = max.min(self.remaining().min(usize::MAX as u64) as usize);
        let writer = self.writer.as_mut().expect("not drained");
        let piece = self.fill.get_or_insert_with(|| writer.buffer());
        let n = piece.fill_with(max, fill);
        self.written += n as u64;
        self.hand_over(false)?;
        Ok(n)
    }

    /// File bytes the piece being filled takes now (at most `remaining()`): 0 while a full
    /// piece waits for room in the writer's queue.
    pub fn room(&mut self) -> Result<usize, Fatal> {
        if self.remaining() == 0 || !self.hand_over(false)? {
            return Ok(0);
        }
        let writer = self.writer.as_mut().expect("not drained");
        let piece = self.fill.get_or_insert_with(|| writer.buffer());
        Ok(piece
            .room()
            .min(self.remaining().min(usize::MAX as u64) as usize))
    }

    /// Take the file's next bytes from a packet (at most what [`Incoming::room`], called
    /// just before, gave: the piece it readied takes them).
    pub fn take(&mut self, bytes: &[u8]) -> Result<(), Fatal> {
        let piece = self.fill.as_mut().expect("room() readied a piece");
        let n = piece.extend(bytes);
        debug_assert_eq!(n, bytes.len(), "the connection takes at most room()");
        self.written += n as u64;
        self.hand_over(false).map(|_| ())
    }

    /// The piece being filled, taken out to receive a datagram into so that its payload,
    /// `prefix` bytes in, lies where the file's next bytes go ([`Piece::land`]); `None` when
    /// the piece takes nothing now or has no storage for it. Give it back with
    /// [`Incoming::landed`].
    pub fn land(&mut self, prefix: usize) -> Result<Option<Landing>, Fatal> {
        let room = self.room()?;
        if room == 0 {
            return Ok(None);
        }
        let piece = self.fill.take().expect("room() holds a piece");
        match piece.land(prefix, room) {
            Ok(landing) => Ok(Some(landing)),
            Err(piece) => {
                self.fill = Some(piece);
                Ok(None)
            }
        }
    }

    /// The piece back from [`Incoming::land`], with the datagram's bytes `taken` (a range of
    /// the landing's area; see [`Landing::finish`]) appended; how many were left in place.
    pub fn landed(
        &mut self,
        landing: Landing,
        taken: std::ops::Range<usize>,
    ) -> Result<usize, Fatal> {
        let n = taken.len();
        let (piece, in_place) = landing.finish(taken);
        self.fill = Some(piece);
        self.written += n as u64;
        self.hand_over(false).map(|_| in_place)
    }

    /// Bytes taken and queued for the disk, not written yet (they count against the
    /// connection's receive window).
    pub fn unwritten(&self) -> u64 {
        self.writer.as_ref().map_or(0, |w| w.backlog().unwritten())
    }

    /// The count of [`Incoming::unwritten`], to follow after the file is handed on to be
    /// placed (`None` without a writer).
    pub fn backlog(&self) -> Option<Arc<Backlog>> {
        self.writer.as_ref().map(|w| Arc::clone(w.backlog()))
    }

    /// A full piece (or the file's last) is filled and waits for room in the writer's queue.
    pub fn waiting_for_disk(&self) -> bool {
        self.fill.as_ref().is_some_and(|p| {
            p.len() == PIECE || (!p.is_empty() && self.written == self.entry.size())
        })
    }

    /// Hash what the piece being filled took lately (while it is in the cache), and queue the
    /// piece if it is complete, waiting for room when `wait`. Returns whether nothing complete
    /// is left waiting.
    fn hand_over(&mut self, wait: bool) -> Result<bool, Fatal> {
        if let (Some(piece), Some(writer)) = (self.fill.as_mut(), self.writer.as_mut()) {
            writer.hash_filled(piece);
        }
        if !self.waiting_for_disk() {
            return Ok(true);
        }
        let writer = self.writer.as_mut().expect("not drained");
        let piece = self.fill.take().expect("complete");
        if wait {
            writer.write(piece)?;
        } else if let Some(piece) = writer.try_write(piece)? {
            self.fill = Some(piece);
            return Ok(false);
        }
        Ok(true)
    }

    /// Everything taken and hashed: the writer with the last piece queued (or, a small
    /// file's, the bytes with their digests). The disk may still be writing.
    fn drain(mut self) -> Result<(Drained, Incoming), Fatal> {
        let mut writer = self.writer.take().expect("drained once");
        if let Some(fill) = self.fill.take().filter(|f| !f.is_empty()) {
            writer.write(fill)?;
        }
        if writer.is_memory() {
            let (bytes, hasher) = writer.finish_memory().expect("in memory");
            return Ok((Drained::Memory(bytes, hasher), self));
        }
        Ok((Drained::Writing(writer), self))
    }

    /// All bytes are in and the sender's digest arrived: verify, flush, rename into place.
    /// `Ok` is the digest; `Err` says why the file was not stored (the caller tells the sender).
    pub fn finish(
        self,
        store: &mut Store,
        theirs: &[u8; DIGEST_LEN],
    ) -> Result<[u8; DIGEST_LEN], String> {
        match self.verify(store, theirs) {
            Verified::Now(result) => result,
            Verified::ToPlace(p) => p.place(),
        }
    }

    /// [`Incoming::finish`], with the wait for the disk's last writes, the flushes and the
    /// rename on the store's placing threads:
    /// `Some` is the verdict now (a digest that differs, a refused or discarded file); `None`
    /// means the file is being placed, and its verdict comes from [`Store::placed`] with `tag`.
    pub fn finish_queued(
        self,
        store: &mut Store,
        theirs: &[u8; DIGEST_LEN],
        tag: PlaceTag,
    ) -> Option<Result<[u8; DIGEST_LEN], String>> {
        match self.verify(store, theirs) {
            Verified::Now(result) => Some(result),
            Verified::ToPlace(p) => {
                store.placer().queue(tag, *p);
                None
            }
        }
    }

    /// Everything up to the disk's last writes: the last bytes handed to the writer and the
    /// digest checked. A file not placed (refused, discarded, a digest that differs) waits
    /// here for its writer, as the session ending early does.
    fn verify(self, store: &mut Store, theirs: &[u8; DIGEST_LEN]) -> Verified {
        store.release(&self.key);
        let shown = Printable::from(self.entry.path.as_str());
        let (file, this) = match self.drain() {
            Ok(x) => x,
            Err(e) => return Verified::Now(Err(e.0)),
        };
        if let Some(why) = this.refused {
            return Verified::Now(Err(why));
        }
        let (ours, part) = match file {
            Drained::Writing(w) => (w.digest(), Staged::Writing(Box::new(w))),
            Drained::Memory(bytes, hasher) => (hasher.digest(), Staged::Bytes(bytes)),
        };
        if this.sink && ours == *theirs {
            return Verified::Now(Ok(ours));
        }
        if ours != *theirs {
            // Its writer done first, so nothing writes the part file or journal after they go.
            drop(part);
            this.discard();
            return Verified::Now(Err(format!(
                "digest mismatch (BLAKE3 list of 1 MiB chunks) for {shown}: received data \
                 hashes to {}, the sender's file to {}",
                crate::framing::hex(&ours),
                crate::framing::hex(theirs)
            )));
        }
        Verified::ToPlace(Box::new(ToPlace {
            part,
            digest: ours,
            overwrite: store.overwrite,
            incoming: this,
        }))
    }

    /// Remove the part file and journal (a corrupt transfer: nothing to resume from).
    fn discard(&self) {
        if self.sink {
            return;
        }
        let _ = std::fs::remove_file(&self.part_path);
        let _ = std::fs::remove_file(&self.journal_path);
    }

    /// The session ends before the file did: keep what is journaled (the writer journals
    /// what reached the disk before an error itself).
    pub fn suspend(self, store: &mut Store) {
        store.release(&self.key);
        if let Ok((Drained::Writing(w), _)) = self.drain() {
            if let Ok(mut file) = w.finish() {
                let _ = file.checkpoint();
            }
        }
    }
}

/// What [`Incoming::verify`] found.
enum Verified {
    /// The verdict, with nothing left to do.
    Now(Result<[u8; DIGEST_LEN], String>),
    /// A verified part file, to flush and rename into place (boxed: it holds the whole
    /// [`Incoming`]).
    ToPlace(Box<ToPlace>),
}

/// A file's bytes, all taken.
enum Drained {
    /// Queued for its part file (the writer's thread may still be writing them).
    Writing(Writer),
    /// In memory (a file of less than a chunk), with their digests.
    Memory(Vec<u8>, FileHasher),
}

#[cfg(test)]
mod tests {
    use crate::framing::CHUNK_SIZE;
    use crate::store::tests::{file, pattern, receive_as, staging_is_empty};
    use crate::store::Store;

    /// One byte wrong in a middle chunk (or in the short last one) of what arrived: the
    /// file's digest differs from the sender's, nothing is stored and nothing is kept.
    #[test]
    fn a_corrupt_chunk_in_the_middle_is_caught_and_nothing_is_stored() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(t.path(), false).unwrap();
        let data = pattern(4 * CHUNK_SIZE as usize + 77, 11);
        for at in [2 * CHUNK_SIZE as usize + 12_345, data.len() - 1] {
            let mut arrived = data.clone();
            arrived[at] ^= 0x80;
            let e = file("m", data.len() as u64);
            let why = receive_as(&mut s, &e, &arrived, &data).unwrap_err();
            assert!(why.contains("digest mismatch"), "{why}");
            assert!(!t.path().join("m").exists());
            assert!(staging_is_empty(t.path()));
        }
    }

    #[test]
    fn a_wrong_digest_stores_nothing_and_leaves_nothing() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(t.path(), false).unwrap();
        let e = file("f", 4);
        let (_, planned) = s.plan(&e, "k", true);
        let mut inc = planned.unwrap().begin(0, 0).unwrap();
        inc.write(b"abcd").unwrap();
        assert!(inc.finish(&mut s, &[0; 32]).is_err());
        assert!(!t.path().join("f").exists());
        assert!(staging_is_empty(t.path()));
    }
}
