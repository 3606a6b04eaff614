//! The resume journal: which chunks of a part file are on disk, with each chunk's BLAKE3 digest.
//!
//! A receiver writes a file's bytes in stream order, so what it holds of a cut transfer is
//! always a prefix. Every so often (see `store`) it flushes the part file to disk
//! (`fdatasync`) and only then appends the digests of the chunks that flush covered to the
//! journal, so the journal never claims a byte the disk may not have. On reconnect the
//! receiver offers the prefix the journal vouches for, summarized as one digest over the
//! chunk digests (`hashlist`); the sender computes the same over its own file and resumes
//! after the prefix only if the two agree (the file may have changed meanwhile). The whole
//! file's digest, the same construction over all its chunks, remains the final check.
//!
//! ```text
//! "LHJ2"  size:u64  mtime_s:i64  mtime_ns:u32  chunk_log2:u8  path_len:u16  path
//! blake3(chunk 0)  blake3(chunk 1)  …                     (32 bytes each, in order)
//! ```
//!
//! Version 1 ("LHJ1") held SHA-256 digests (transfer protocol 3); such a journal does not
//! match the header and is not used: its part file is stale and the transfer starts over.
//!
//! A torn last record (a crash during the append) is ignored; a header that does not match the
//! announced file (another size or mtime: the source changed) makes the journal and its part
//! file stale, and the transfer starts over.

use crate::framing::{CHUNK_SIZE, DIGEST_LEN};
use crate::hashlist::list_digest;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

const MAGIC: &[u8; 4] = b"LHJ2";

/// What the journal is about: the announced file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalHeader {
    /// The file's path as the sender named it.
    pub path: String,
    /// The announced size, bytes.
    pub size: u64,
    /// The announced modification time: seconds and nanoseconds since the Unix epoch.
    pub mtime: (i64, u32),
}

impl JournalHeader {
    fn encode(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&self.size.to_be_bytes());
        out.extend_from_slice(&self.mtime.0.to_be_bytes());
        out.extend_from_slice(&self.mtime.1.to_be_bytes());
        out.push(CHUNK_SIZE.trailing_zeros() as u8);
        out.extend_from_slice(&(self.path.len() as u16).to_be_bytes());
        out.extend_from_slice(self.path.as_bytes());
        out
    }
}

/// The path the journal at `path` is about, as its sender named it (`None`: not a journal of
/// this version, or unreadable).
pub fn journaled_path(path: &Path) -> Option<String> {
    let mut head = [0u8; 27];
    let mut f = File::open(path).ok()?;
    f.read_exact(&mut head).ok()?;
    if &head[..4] != MAGIC {
        return None;
    }
    let len = u16::from_be_bytes([head[25], head[26]]) as usize;
    let mut name = vec![0u8; len];
    f.read_exact(&mut name).ok()?;
    String::from_utf8(name).ok()
}

/// An open journal, appended to as chunks reach the disk.
pub struct Journal {
    file: File,
    digests: Vec<[u8; DIGEST_LEN]>,
}

impl Journal {
    /// Start a new journal (replacing any old one). Not flushed here: a file's start calls
    /// this on the connection's thread, where behind a busy disk a flush waits for every write
    /// queued before it (and no ACK goes out meanwhile). The first checkpoint's flush
    /// ([`Journal::append`]) makes the header durable with the first digests; a journal lost
    /// or torn before then had nothing to resume, and one left from before is checked against
    /// the part file's bytes on resume like any other.
    pub fn create(path: &Path, header: &JournalHeader) -> io::Result<Journal> {
        let mut file = File::create(path)?;
        file.write_all(&header.encode())?;
        Ok(Journal {
            file,
            digests: Vec::new(),
        })
    }

    /// Open an existing journal for `header`'s file; `None` if it is missing, unreadable or
    /// about another file (the caller then starts over).
    pub fn open(path: &Path, header: &JournalHeader) -> Option<Journal> {
        let mut file = OpenOptions::new().read(true).append(true).open(path).ok()?;
        let mut raw = Vec::new();
        file.read_to_end(&mut raw).ok()?;
        let head = header.encode();
        if !raw.starts_with(&head) {
            return None;
        }
        let records = &raw[head.len()..];
        let whole = records.len() / DIGEST_LEN;
        let max_chunks = header.size.div_ceil(CHUNK_SIZE);
        if whole as u64 > max_chunks {
            return None;
        }
        let digests = records[..whole * DIGEST_LEN]
            .chunks_exact(DIGEST_LEN)
            .map(|c| c.try_into().expect("32"))
            .collect();
        if records.len() % DIGEST_LEN != 0 {
            // Drop the torn record so appends stay aligned.
            file.set_len((head.len() + whole * DIGEST_LEN) as u64)
                .ok()?;
        }
        Some(Journal { file, digests })
    }

    /// Chunks on disk and journaled.
    pub fn chunks(&self) -> u64 {
        self.digests.len() as u64
    }

    /// The journaled digests of the chunks, in order.
    pub fn digests(&self) -> &[[u8; DIGEST_LEN]] {
        &self.digests
    }

    /// Keep the first `chunks` records only (the part file's chunks after them are not
    /// what the journal says).
    pub fn truncate(&mut self, chunks: u64) -> io::Result<()> {
        if chunks >= self.chunks() {
            return Ok(());
        }
        let head = self.file.metadata()?.len() - self.chunks() * DIGEST_LEN as u64;
        self.file.set_len(head + chunks * DIGEST_LEN as u64)?;
        self.file.sync_data()?;
        self.digests.truncate(chunks as usize);
        Ok(())
    }

    /// The digest of the journaled chunks' digests, which the sender recomputes.
    pub fn prefix_digest(&self) -> [u8; DIGEST_LEN] {
        list_digest(self.digests.iter())
    }

    /// Record chunks whose bytes are already on disk, and make the records durable.
    pub fn append(&mut self, digests: &[[u8; DIGEST_LEN]]) -> io::Result<()> {
        if digests.is_empty() {
            return Ok(());
        }
        let bytes: Vec<u8> = digests.iter().flatten().copied().collect();
        self.file.write_all(&bytes)?;
        self.file.sync_data()?;
        self.digests.extend_from_slice(digests);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> JournalHeader {
        JournalHeader {
            path: "a/b.dat".into(),
            size: 5 * CHUNK_SIZE + 7,
            mtime: (1_700_000_000, 5),
        }
    }

    #[test]
    fn records_survive_a_reopen_and_a_torn_tail_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        let mut j = Journal::create(&p, &header()).unwrap();
        j.append(&[[1; 32], [2; 32]]).unwrap();
        let want = j.prefix_digest();
        drop(j);
        // A crash in the middle of the third record.
        let mut f = OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(&[3; 10]).unwrap();
        drop(f);
        let mut j = Journal::open(&p, &header()).unwrap();
        assert_eq!(j.chunks(), 2);
        assert_eq!(j.prefix_digest(), want);
        j.append(&[[3; 32]]).unwrap();
        drop(j);
        assert_eq!(Journal::open(&p, &header()).unwrap().chunks(), 3);
    }

    #[test]
    fn a_journal_about_another_version_of_the_file_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        Journal::create(&p, &header()).unwrap();
        let mut changed = header();
        changed.mtime.1 += 1;
        assert!(Journal::open(&p, &changed).is_none());
        changed = header();
        changed.size += 1;
        assert!(Journal::open(&p, &changed).is_none());
        assert!(Journal::open(&dir.path().join("missing"), &header()).is_none());
    }

    /// A journal of version 1 (SHA-256 digests) about the same file is not used: its digests
    /// could never match a version 2 sender's, so the transfer starts over.
    #[test]
    fn a_journal_of_the_sha256_version_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("j");
        let mut j = Journal::create(&p, &header()).unwrap();
        j.append(&[[1; 32]]).unwrap();
        drop(j);
        let mut raw = std::fs::read(&p).unwrap();
        assert_eq!(&raw[..4], b"LHJ2");
        assert!(Journal::open(&p, &header()).is_some());
        raw[3] = b'1';
        std::fs::write(&p, &raw).unwrap();
        assert!(Journal::open(&p, &header()).is_none());
    }
}
