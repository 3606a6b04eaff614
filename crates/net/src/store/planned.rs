//! A file the plan says to send, before its bytes begin: what the receiver offers to resume
//! (only the journaled chunks that still read back as journaled), and the start of its bytes
//! (the part file locked, opened and cut to the resume point).

use super::staging::{lock_part, open_staged};
use super::{busy_reason, Fatal, Incoming};
use crate::framing::{Entry, CHUNK_SIZE, DIGEST_LEN};
use crate::hashlist::{chunk_digest, FileHasher};
use crate::journal::{Journal, JournalHeader};
use crate::part::{PartFile, Writer};
use crate::path::Printable;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A file the plan says to send: what the receiver offered, no file open yet (a manifest
/// may list millions of files).
pub struct Planned {
    key: String,
    entry: Entry,
    dest: PathBuf,
    part_path: PathBuf,
    journal_path: PathBuf,
    header: JournalHeader,
    /// Chunks the journal vouches for, and the digest of their digests.
    pub(super) offered: u64,
    pub(super) prefix: [u8; DIGEST_LEN],
    /// The offered chunks' digests as read back from the part file at the plan (boxed: a
    /// planned file waits in a map, and most have none).
    verified: Option<Box<FileHasher>>,
    /// A discarding store's: no part file, no journal, no destination.
    sink: bool,
    /// The part file's lock (see [`LOCK_FILE`](super::LOCK_FILE)), held until the file is
    /// stored or suspended; `None` until [`Planned::begin`] for a file with nothing staged at
    /// its plan.
    pub(super) lock: Option<File>,
}

impl Planned {
    pub(super) fn new(
        staging: &Path,
        key: String,
        entry: &Entry,
        dest: PathBuf,
        resume: bool,
    ) -> Planned {
        let part_path = staging.join(format!("{key}.part"));
        let journal_path = staging.join(format!("{key}.journal"));
        let header = JournalHeader {
            path: entry.path.clone(),
            size: entry.size(),
            mtime: entry.mtime,
        };
        let held = std::fs::symlink_metadata(&part_path)
            .ok()
            .filter(|m| m.is_file())
            .map_or(0, |m| m.len());
        let (offered, prefix, verified) = match resume
            .then(|| Journal::open(&journal_path, &header))
            .flatten()
        {
            // The journal vouches only for bytes the part file still has, and only for the
            // chunks that, read back now, still hash to what it says: a chunk damaged on disk
            // since is sent again, with everything after it, rather than found at the end.
            Some(mut j)
                if j.chunks() > 0 && held >= (j.chunks() * CHUNK_SIZE).min(entry.size()) =>
            {
                let (good, hasher) = verified_prefix(&part_path, &j, entry.size());
                // The journal is cut to the good chunks first, even when none is good.
                if (good < j.chunks() && j.truncate(good).is_err()) || good == 0 {
                    (0, [0; DIGEST_LEN], None)
                } else {
                    (good, j.prefix_digest(), Some(Box::new(hasher)))
                }
            }
            _ => (0, [0; DIGEST_LEN], None),
        };
        Planned {
            key,
            entry: entry.clone(),
            dest,
            part_path,
            journal_path,
            header,
            offered,
            prefix,
            verified,
            sink: false,
            lock: None,
        }
    }

    /// A file a discarding store receives: hashed and checked, written nowhere.
    pub(super) fn discarded(key: String, entry: &Entry) -> Planned {
        Planned {
            key,
            entry: entry.clone(),
            dest: PathBuf::new(),
            part_path: PathBuf::new(),
            journal_path: PathBuf::new(),
            header: JournalHeader {
                path: entry.path.clone(),
                size: entry.size(),
                mtime: entry.mtime,
            },
            offered: 0,
            prefix: [0; DIGEST_LEN],
            verified: None,
            sink: true,
            lock: None,
        }
    }

    /// The part file's key (see [`Store::release`](super::Store::release)).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The entry as the sender announced it.
    pub fn entry(&self) -> &Entry {
        &self.entry
    }

    /// The sender starts at `from_chunk`: the offered prefix or 0 (start over). The prefix's
    /// chunks are hashed again from the disk for the file's digest, not taken from the
    /// journal, so the final check covers the bytes the part file holds now. The writer's
    /// queue holds `hold` bytes of pieces (the receive window, see `part`).
    pub fn begin(mut self, from_chunk: u64, hold: u64) -> Result<Incoming, Fatal> {
        let shown = Printable::from(self.entry.path.as_str());
        let io = |e: io::Error| Fatal(format!("part file of {shown} on the receiver: {e}"));
        if from_chunk != 0 && from_chunk != self.offered {
            return Err(Fatal(format!(
                "the sender resumes {shown} at chunk {from_chunk}, but the receiver offered {}",
                self.offered
            )));
        }
        if self.sink {
            return self.begin_discarded(hold);
        }
        let small = from_chunk == 0 && self.entry.size() < CHUNK_SIZE;
        if small {
            // No whole chunk: nothing a journal could offer to resume (resending it costs
            // less than journaling it), and too little to write for threads of its own. Its
            // part file is written whole, under its lock, when it is placed.
            let size = self.entry.size();
            return Ok(self.incoming(Writer::in_memory(size), 0));
        }
        if self.lock.is_none() {
            let staging = self.part_path.parent().unwrap_or(Path::new("."));
            match lock_part(staging, &self.key) {
                Ok(Some(lock)) => self.lock = Some(lock),
                Ok(None) => {
                    // Another process began this part file since the plan: the bytes are
                    // taken and dropped, and the file is refused as busy.
                    let why = busy_reason(&self.entry.path);
                    self.sink = true;
                    let mut inc = self.begin_discarded(hold)?;
                    inc.refused = Some(why);
                    return Ok(inc);
                }
                Err(e) => return Err(Fatal(format!("cannot lock the part file of {shown}: {e}"))),
            }
        }
        let mut part = open_staged(&self.part_path).map_err(io)?;
        let journal = if from_chunk == 0 {
            Journal::create(&self.journal_path, &self.header).map_err(io)?
        } else {
            match Journal::open(&self.journal_path, &self.header) {
                Some(j) if j.chunks() == from_chunk => j,
                _ => {
                    return Err(Fatal(format!(
                        "the journal of {shown} changed during the session"
                    )))
                }
            }
        };
        let start = (from_chunk * CHUNK_SIZE).min(self.entry.size());
        // The prefix's chunks as read back from the disk at the plan (not as journaled).
        let hasher = match self.verified.take() {
            Some(h) if from_chunk > 0 => *h,
            _ => FileHasher::new(),
        };
        part.set_len(start).map_err(io)?;
        part.seek(SeekFrom::Start(start)).map_err(io)?;
        let file = PartFile::new(
            part,
            Some(journal),
            &self.entry.path,
            self.entry.size(),
            start,
            hasher,
        );
        let writer = Writer::start(file, hold).map_err(io)?;
        Ok(self.incoming(writer, start))
    }

    fn incoming(self, writer: Writer, start: u64) -> Incoming {
        Incoming {
            key: self.key,
            entry: self.entry,
            dest: self.dest,
            part_path: self.part_path,
            journal_path: self.journal_path,
            writer: Some(writer),
            fill: None,
            written: start,
            resumed: start,
            sink: self.sink,
            refused: None,
            _lock: self.lock,
        }
    }

    /// The bytes go to /dev/null through the same hashing and writing threads, so the
    /// receiver's work is a real one's less the disk; there is no journal to keep.
    fn begin_discarded(self, hold: u64) -> Result<Incoming, Fatal> {
        let io = |e: io::Error| Fatal(format!("cannot open /dev/null to discard into: {e}"));
        let sink = OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .map_err(io)?;
        let file = PartFile::new(
            sink,
            None,
            &self.entry.path,
            self.entry.size(),
            0,
            FileHasher::new(),
        );
        let writer = Writer::start(file, hold).map_err(io)?;
        Ok(self.incoming(writer, 0))
    }
}

/// How many of the chunks `journal` lists the part file at `path` still holds as journaled
/// (read back and hashed, up to the first that differs or cannot be read), with their digests.
fn verified_prefix(path: &Path, journal: &Journal, size: u64) -> (u64, FileHasher) {
    let mut hasher = FileHasher::new();
    let Ok(mut part) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    else {
        return (0, hasher);
    };
    let mut buf = vec![0u8; CHUNK_SIZE as usize];
    let mut good = 0;
    for (i, journaled) in journal.digests().iter().enumerate() {
        // Whole chunks, and the file's short last one when the prefix is all of it.
        let n = (size - i as u64 * CHUNK_SIZE).min(CHUNK_SIZE) as usize;
        if part.read_exact(&mut buf[..n]).is_err() {
            break;
        }
        let digest = chunk_digest(&buf[..n]);
        if digest != *journaled {
            break;
        }
        hasher.push_chunk(&digest);
        good += 1;
    }
    (good, hasher)
}

#[cfg(test)]
mod tests {
    use crate::framing::{Action, CHUNK_SIZE};
    use crate::path::STAGING_DIR;
    use crate::store::tests::{
        cut_after, file, file_digest, pattern, receive, receive_resumed, staging_is_empty,
    };
    use crate::store::Store;

    #[test]
    fn a_cut_transfer_resumes_from_its_journaled_prefix() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(t.path(), false).unwrap();
        let data = pattern(5 * CHUNK_SIZE as usize + 9, 7);
        let e = file("big", data.len() as u64);
        cut_after(&mut s, &e, &data, 3 * CHUNK_SIZE as usize + 100);
        // Another sender does not see this sender's part file.
        let (other, planned) = s.plan(&e, "other", true);
        assert!(
            matches!(other, Action::Send { from_chunk: 0, .. }),
            "{other:?}"
        );
        s.release(planned.unwrap().key());
        let (action, inc) = s.plan(&e, "k", true);
        let want = file_digest(&data[..3 * CHUNK_SIZE as usize]);
        assert_eq!(
            action,
            Action::Send {
                from_chunk: 3,
                prefix: want
            }
        );
        s.release(inc.unwrap().key());
        assert_eq!(receive(&mut s, &e, &data).unwrap(), file_digest(&data));
        assert_eq!(std::fs::read(t.path().join("big")).unwrap(), data);
    }

    /// The plan reads the journaled prefix back from the part file before offering it: a chunk
    /// damaged on the receiver's disk after it was journaled is found then, before the rest of
    /// the file moves. Only the chunks before it are offered (the journal forgets the rest),
    /// the sender sends the damaged chunk and all after it, and the file is stored whole the
    /// first time.
    #[test]
    fn a_resumed_prefix_damaged_on_disk_is_found_at_the_plan_and_sent_again() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(t.path(), false).unwrap();
        let data = pattern(4 * CHUNK_SIZE as usize + 5, 3);
        let e = file("r", data.len() as u64);
        cut_after(&mut s, &e, &data, 3 * CHUNK_SIZE as usize);
        let part = std::fs::read_dir(t.path().join(STAGING_DIR))
            .unwrap()
            .map(|d| d.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "part"))
            .unwrap();
        let mut held = std::fs::read(&part).unwrap();
        held[CHUNK_SIZE as usize + 9] ^= 1;
        std::fs::write(&part, &held).unwrap();
        let (action, planned) = s.plan(&e, "k", true);
        let first = data[..CHUNK_SIZE as usize].to_vec();
        assert_eq!(
            action,
            Action::Send {
                from_chunk: 1,
                prefix: file_digest(&first)
            }
        );
        s.release(planned.unwrap().key());
        let (stored, resumed) = receive_resumed(&mut s, &e, &data, &data);
        let stored = stored.unwrap();
        assert_eq!(stored, file_digest(&data));
        assert_eq!(resumed, CHUNK_SIZE);
        assert_eq!(std::fs::read(t.path().join("r")).unwrap(), data);
        assert!(staging_is_empty(t.path()));
    }

    /// A cut after every chunk reached the journal, the short last one included: the resume
    /// moves no byte, and the digest of the whole file still comes from the disk.
    #[test]
    fn a_cut_after_the_last_chunk_resumes_with_nothing_to_move() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(t.path(), false).unwrap();
        let data = pattern(2 * CHUNK_SIZE as usize + 3, 5);
        let e = file("z", data.len() as u64);
        cut_after(&mut s, &e, &data, data.len());
        let (action, planned) = s.plan(&e, "k", true);
        assert_eq!(
            action,
            Action::Send {
                from_chunk: 3,
                prefix: file_digest(&data)
            }
        );
        s.release(planned.unwrap().key());
        assert_eq!(receive(&mut s, &e, &data).unwrap(), file_digest(&data));
        assert_eq!(std::fs::read(t.path().join("z")).unwrap(), data);
    }
}
