//! Where received entries land: the receiver's directory, its staging area, and the rules
//! that keep a transfer from writing anywhere else or leaving a half-written file under a
//! real name.
//!
//! - A file is written to a part file in the staging directory ([`STAGING_DIR`]), named by a
//!   digest of the sender's identity and the path, so no sender can name it (paths under the
//!   staging directory are refused) and two senders never share one. Beside it, a journal
//!   (`journal`) records the chunks on disk. After the sender's digest matched, the part file
//!   is flushed, renamed onto its path (the rename acts on the file that was verified: its
//!   name is ours alone), given the sender's mode and mtime, and the directory is flushed too
//!   before the sender hears `DONE`.
//! - A cut transfer's part file and journal stay; the next transfer of the same path from the
//!   same sender resumes from the journaled prefix. A failed digest removes them.
//! - A part file is written by one session at a time: the store lists the part files its own
//!   sessions write ([`Store::plan_for`] answers [`Plan::Busy`] for another), and each session
//!   holds a lock on its part file's key (an open-file-description lock on one byte of the
//!   staging directory's [`LOCK_FILE`]), so a receiver in another process (two launched over
//!   ssh into one directory) cannot write it either. The kernel drops the lock when its
//!   holder ends, however it ends. The lock is taken at the plan when something is staged for
//!   the file already, else when its bytes begin, or (a file of less than a chunk, kept in
//!   memory) when its part file is written.
//! - Verified files are flushed and renamed into place by placing threads ([`PLACERS`]), so
//!   the connection's thread never waits for the disk's flushes.
//! - Every directory on a path is checked as it is walked: a symbolic link there is refused,
//!   so no write ever goes through a link (whoever made it). Links a sender sends are created
//!   only when they point inside the tree (`path::link_stays_inside`).
//! - Modes keep the permission bits only (no set-user-ID, set-group-ID or sticky bit).

use crate::framing::{Action, Entry, Kind, CHUNK_SIZE, DIGEST_LEN};
use crate::hashlist::{chunk_digest, FileHasher};
use crate::journal::{Journal, JournalHeader};
use crate::part::{PartFile, Piece, Writer, PIECE};
use crate::path::{link_stays_inside, Printable, STAGING_DIR};
use longhaul_proto::{Connection, Sink};
use sha2::{Digest, Sha256};
use std::any::Any;
use std::collections::HashMap;
use std::fs::{File, FileTimes, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::net::SocketAddr;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A receiving directory.
pub struct Store {
    root: PathBuf,
    staging: PathBuf,
    overwrite: bool,
    /// Nothing is kept: files are received and verified, then dropped (`recv --discard`).
    discard: bool,
    /// Part files some session is writing now, with the session's peer address.
    busy: HashMap<String, SocketAddr>,
    /// The placing threads, started with the first file to place.
    placer: Option<Placer>,
}

/// The file in the staging directory whose bytes are locked, one per part file being written
/// (at an offset given by the part file's key): it is never removed, and holds no data.
pub const LOCK_FILE: &str = "locks";

/// What [`Store::plan_for`] decided.
pub enum Plan {
    /// The action to send the sender, with the open part file when a file is to come (boxed:
    /// a plan is far larger than the other answer).
    Ready(Action, Option<Box<Planned>>),
    /// The entry's part file is being written now: by the session of this receiver at that
    /// address, or (`None`) by another process.
    Busy(Option<SocketAddr>),
}

/// Why a file whose part file another session writes is refused.
pub fn busy_reason(path: &str) -> String {
    format!(
        "{} is busy: another transfer from this sender is writing it on the receiver now \
         (send it again once that one has ended)",
        Printable::from(path)
    )
}

/// A part file (or a journal without one) left in a staging directory.
#[derive(Clone, Debug)]
pub struct StalePart {
    /// The part file's key: its name without `.part` or `.journal`.
    pub key: String,
    /// The path it was being received to, as its journal names it.
    pub path: Option<String>,
    /// Bytes the part file and journal hold.
    pub bytes: u64,
    /// Since the later of their last modifications.
    pub age: Duration,
}

/// The part files in `root`'s staging directory that nothing wrote for `older_than` or more,
/// oldest first (none when there is no staging directory).
pub fn stale_parts(root: &Path, older_than: Duration) -> io::Result<Vec<StalePart>> {
    let staging = root.join(STAGING_DIR);
    let entries = match std::fs::read_dir(&staging) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut found: std::collections::BTreeMap<String, (u64, SystemTime)> = Default::default();
    for e in entries {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(key) = name
            .strip_suffix(".part")
            .or_else(|| name.strip_suffix(".journal"))
        else {
            continue;
        };
        let m = e.metadata()?;
        if !m.is_file() {
            continue;
        }
        let modified = m.modified()?;
        let slot = found.entry(key.to_string()).or_insert((0, UNIX_EPOCH));
        slot.0 += m.len();
        slot.1 = slot.1.max(modified);
    }
    let now = SystemTime::now();
    let mut stale: Vec<StalePart> = found
        .into_iter()
        .map(|(key, (bytes, modified))| StalePart {
            path: crate::journal::journaled_path(&staging.join(format!("{key}.journal"))),
            key,
            bytes,
            age: now.duration_since(modified).unwrap_or_default(),
        })
        .filter(|p| p.age >= older_than)
        .collect();
    stale.sort_by_key(|p| std::cmp::Reverse(p.age));
    Ok(stale)
}

/// Removes a part file and its journal from `root`'s staging directory, unless a receiver is
/// writing it now (then `Ok(false)`).
pub fn remove_part(root: &Path, part: &StalePart) -> io::Result<bool> {
    let staging = root.join(STAGING_DIR);
    if part.key.len() < 15 || !part.key.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(false);
    }
    let Some(_lock) = lock_part(&staging, &part.key)? else {
        return Ok(false);
    };
    for ext in ["part", "journal"] {
        match std::fs::remove_file(staging.join(format!("{}.{ext}", part.key))) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(true)
}

/// Opens (or creates, readable by this user only) a file of the staging directory for reading
/// and writing, never through a link.
fn open_staged(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Takes the lock of part key `key` on the staging directory's lock file without waiting;
/// `Ok(None)`: another open file description holds it.
fn lock_part(staging: &Path, key: &str) -> io::Result<Option<File>> {
    let f = open_staged(&staging.join(LOCK_FILE))?;
    let offset = i64::from_str_radix(&key[..15], 16).unwrap_or(0);
    // SAFETY: a zeroed flock is a valid value of a plain C struct.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as _;
    fl.l_whence = libc::SEEK_SET as _;
    fl.l_start = offset;
    fl.l_len = 1;
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open and `fl` outlives the call.
    let r = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_SETLK, &fl) };
    if r == 0 {
        return Ok(Some(f));
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EACCES) => Ok(None),
        _ => Err(e),
    }
}

/// Why a session must stop (the disk, not the data): the part file and journal stay.
#[derive(Debug)]
pub struct Fatal(pub String);

impl Store {
    /// Opens the receiving directory `root`, creating its staging directory; with `overwrite`,
    /// files that differ are replaced.
    pub fn open(root: &Path, overwrite: bool) -> io::Result<Store> {
        let staging = root.join(STAGING_DIR);
        match std::fs::symlink_metadata(&staging) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(io::Error::other(format!(
                    "{} exists and is not a directory; move it away",
                    staging.display()
                )))
            }
            Err(_) => std::fs::DirBuilder::new().mode(0o700).create(&staging)?,
        }
        Ok(Store {
            root: root.to_path_buf(),
            staging,
            overwrite,
            discard: false,
            busy: HashMap::new(),
            placer: None,
        })
    }

    /// A store that keeps nothing and touches no file system: each file is received, hashed
    /// and checked against the sender's digest, then dropped; directories and links are not
    /// created. It measures a path and the transport without a disk, as `bbcp` to /dev/null
    /// or an iperf3 server does (`recv --discard`).
    pub fn discarding() -> Store {
        Store {
            root: PathBuf::from("/dev/null"),
            staging: PathBuf::new(),
            overwrite: false,
            discard: true,
            busy: HashMap::new(),
            placer: None,
        }
    }

    fn placer(&mut self) -> &mut Placer {
        self.placer.get_or_insert_with(Placer::start)
    }

    /// Verdicts of files [`Incoming::finish_queued`] queued that are placed now.
    pub fn placed(&mut self) -> Vec<PlacedFile> {
        self.placer.as_mut().map_or_else(Vec::new, Placer::take)
    }

    /// Files queued for placing whose verdict [`Store::placed`] has not handed over yet.
    pub fn placing(&self) -> usize {
        self.placer.as_ref().map_or(0, |p| p.pending)
    }

    /// The receiving directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Decide what to do with `entry` from the sender `sender` (its key, or a fixed name when
    /// unauthenticated); for a file to send, also return the open part file.
    /// A file whose part file is being written is refused as busy.
    pub fn plan(&mut self, entry: &Entry, sender: &str, resume: bool) -> (Action, Option<Planned>) {
        match self.plan_for(entry, sender, resume, SocketAddr::from(([0, 0, 0, 0], 0))) {
            Plan::Ready(a, p) => (a, p.map(|p| *p)),
            Plan::Busy(_) => (Action::Refuse(busy_reason(&entry.path)), None),
        }
    }

    /// [`Store::plan`] for the session of peer `owner`, which then holds the part file until
    /// it releases it; a part file being written already is [`Plan::Busy`], for the caller to
    /// wait, take it over or refuse.
    pub fn plan_for(
        &mut self,
        entry: &Entry,
        sender: &str,
        resume: bool,
        owner: SocketAddr,
    ) -> Plan {
        match self.try_plan(entry, sender, resume, owner) {
            Ok(x) => x,
            Err(why) => Plan::Ready(Action::Refuse(why), None),
        }
    }

    fn try_plan(
        &mut self,
        entry: &Entry,
        sender: &str,
        resume: bool,
        owner: SocketAddr,
    ) -> Result<Plan, String> {
        if self.discard {
            return self.plan_discarded(entry, sender, owner);
        }
        let dest = self.parent_ready(&entry.path)?;
        let shown = Printable::from(entry.path.as_str());
        let existing = std::fs::symlink_metadata(&dest).ok();
        match &entry.kind {
            Kind::Dir => {
                let done = match existing {
                    Some(m) if m.is_dir() => "directory already there",
                    Some(_) => {
                        return Err(format!(
                            "{shown} exists on the receiver and is not a directory"
                        ))
                    }
                    None => {
                        std::fs::DirBuilder::new()
                            .mode(0o700)
                            .create(&dest)
                            .map_err(|e| format!("cannot create {shown}: {e}"))?;
                        "directory created"
                    }
                };
                // Its own mode and mtime come last (see `finish_dir`): a read-only directory
                // must still receive its files.
                Ok(Plan::Ready(Action::Skip(done.into()), None))
            }
            Kind::Symlink { target } => {
                if !link_stays_inside(&entry.path, target) {
                    return Err(format!(
                        "link {shown} points outside the transfer ({}); not created",
                        Printable::from(target.as_str())
                    ));
                }
                if let Some(m) = existing {
                    // Sent again (a cut tree finished, a tree sent twice): the same link.
                    if m.file_type().is_symlink()
                        && std::fs::read_link(&dest)
                            .is_ok_and(|t| t.as_os_str() == std::ffi::OsStr::new(target))
                    {
                        return Ok(Plan::Ready(
                            Action::Skip("link already there (same target)".into()),
                            None,
                        ));
                    }
                    if m.is_dir() {
                        return Err(format!("{shown} is a directory on the receiver"));
                    }
                    if !self.overwrite {
                        return Err(format!(
                            "{shown} exists on the receiver as {} (start it with --overwrite \
                             to replace it)",
                            if m.file_type().is_symlink() {
                                "a link to another target"
                            } else {
                                "a file"
                            }
                        ));
                    }
                    std::fs::remove_file(&dest)
                        .map_err(|e| format!("cannot replace {shown}: {e}"))?;
                }
                std::os::unix::fs::symlink(target, &dest)
                    .map_err(|e| format!("cannot create link {shown}: {e}"))?;
                Ok(Plan::Ready(Action::Skip("link created".into()), None))
            }
            Kind::File { size } => {
                if let Some(m) = &existing {
                    if m.is_file() && m.len() == *size && mtime_of(m) == entry.mtime {
                        return Ok(Plan::Ready(
                            Action::Skip("already there (same size and modification time)".into()),
                            None,
                        ));
                    }
                    if m.is_dir() {
                        return Err(format!("{shown} is a directory on the receiver"));
                    }
                    if !self.overwrite {
                        return Err(format!(
                            "{shown} exists on the receiver (start it with --overwrite to replace files)"
                        ));
                    }
                }
                let key = part_key(sender, &entry.path);
                if let Some(holder) = self.busy.get(&key) {
                    return Ok(Plan::Busy(Some(*holder)));
                }
                // A part file or journal already there (a cut transfer's, or one another
                // process writes now) is locked before it is offered. Otherwise the lock is
                // taken when the file's bytes begin (`Planned::begin`): holding one lock per
                // planned file made each lock and unlock walk all the others in the kernel,
                // quadratic in the files of a tree.
                let staged = |ext: &str| {
                    std::fs::symlink_metadata(self.staging.join(format!("{key}.{ext}"))).is_ok()
                };
                let lock = if staged("part") || staged("journal") {
                    let Some(lock) = lock_part(&self.staging, &key)
                        .map_err(|e| format!("cannot lock the part file of {shown}: {e}"))?
                    else {
                        return Ok(Plan::Busy(None));
                    };
                    Some(lock)
                } else {
                    None
                };
                self.busy.insert(key.clone(), owner);
                let mut planned = Box::new(Planned::new(&self.staging, key, entry, dest, resume));
                planned.lock = lock;
                let action = Action::Send {
                    from_chunk: planned.offered,
                    prefix: planned.prefix,
                };
                Ok(Plan::Ready(action, Some(planned)))
            }
        }
    }

    /// A discarding store's plan: every file from its first byte, nothing else.
    fn plan_discarded(
        &mut self,
        entry: &Entry,
        sender: &str,
        owner: SocketAddr,
    ) -> Result<Plan, String> {
        match &entry.kind {
            Kind::Dir | Kind::Symlink { .. } => Ok(Plan::Ready(
                Action::Skip("discarded (recv --discard)".into()),
                None,
            )),
            Kind::File { .. } => {
                let key = part_key(sender, &entry.path);
                if let Some(holder) = self.busy.get(&key) {
                    return Ok(Plan::Busy(Some(*holder)));
                }
                self.busy.insert(key.clone(), owner);
                let planned = Box::new(Planned::discarded(key, entry));
                let action = Action::Send {
                    from_chunk: 0,
                    prefix: [0; DIGEST_LEN],
                };
                Ok(Plan::Ready(action, Some(planned)))
            }
        }
    }

    /// Give a directory its sender's mode and mtime once its contents are in.
    pub fn finish_dir(&self, entry: &Entry) {
        if self.discard {
            return;
        }
        let path = self.root.join(&entry.path);
        if let Ok(m) = std::fs::symlink_metadata(&path) {
            if m.is_dir() {
                let _ = std::fs::set_permissions(
                    &path,
                    std::fs::Permissions::from_mode(entry.mode & 0o777),
                );
                if let Ok(f) = File::open(&path) {
                    let _ = f.set_times(FileTimes::new().set_modified(system_time(entry.mtime)));
                }
            }
        }
    }

    /// A session no longer writes this part file (finished, failed or gone).
    pub fn release(&mut self, key: &str) {
        self.busy.remove(key);
    }

    /// Create the missing directories above `rel`, refusing any that is a link or not a
    /// directory; returns the full destination path.
    fn parent_ready(&self, rel: &str) -> Result<PathBuf, String> {
        let mut at = self.root.clone();
        let parts: Vec<&str> = rel.split('/').collect();
        for (i, c) in parts.iter().enumerate() {
            at.push(c);
            if i + 1 == parts.len() {
                break;
            }
            match std::fs::symlink_metadata(&at) {
                Ok(m) if m.is_dir() => {}
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(format!(
                        "{} is a symbolic link on the receiver; nothing is written through links",
                        Printable::from(parts[..=i].join("/").as_str())
                    ))
                }
                Ok(_) => {
                    return Err(format!(
                        "{} is not a directory on the receiver",
                        Printable::from(parts[..=i].join("/").as_str())
                    ))
                }
                Err(_) => std::fs::DirBuilder::new()
                    .mode(0o755)
                    .create(&at)
                    .map_err(|e| {
                        format!(
                            "cannot create {}: {e}",
                            Printable::from(parts[..=i].join("/").as_str())
                        )
                    })?,
            }
        }
        Ok(at)
    }
}

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
    offered: u64,
    prefix: [u8; DIGEST_LEN],
    /// The offered chunks' digests as read back from the part file at the plan (boxed: a
    /// planned file waits in a map, and most have none).
    verified: Option<Box<FileHasher>>,
    /// A discarding store's: no part file, no journal, no destination.
    sink: bool,
    /// The part file's lock (see [`LOCK_FILE`]), held until the file is stored or suspended;
    /// `None` until [`Planned::begin`] for a file with nothing staged at its plan.
    lock: Option<File>,
}

impl Planned {
    fn new(staging: &Path, key: String, entry: &Entry, dest: PathBuf, resume: bool) -> Planned {
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
    fn discarded(key: String, entry: &Entry) -> Planned {
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

    /// The part file's key (see [`Store::release`]).
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The entry as the sender announced it.
    pub fn entry(&self) -> &Entry {
        &self.entry
    }

    /// The sender starts at `from_chunk`: the offered prefix or 0 (start over). The prefix's
    /// chunks are hashed again from the disk for the file's digest, not taken from the
    /// journal, so the final check covers the bytes the part file holds now.
    pub fn begin(mut self, from_chunk: u64) -> Result<Incoming, Fatal> {
        let shown = Printable::from(self.entry.path.as_str());
        let io = |e: io::Error| Fatal(format!("part file of {shown} on the receiver: {e}"));
        if from_chunk != 0 && from_chunk != self.offered {
            return Err(Fatal(format!(
                "the sender resumes {shown} at chunk {from_chunk}, but the receiver offered {}",
                self.offered
            )));
        }
        if self.sink {
            return self.begin_discarded();
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
                    let mut inc = self.begin_discarded()?;
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
        let writer = Writer::start(file).map_err(io)?;
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
    fn begin_discarded(self) -> Result<Incoming, Fatal> {
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
        let writer = Writer::start(file).map_err(io)?;
        Ok(self.incoming(writer, 0))
    }
}

/// One file being received: where it goes, and the thread writing its part file.
pub struct Incoming {
    key: String,
    /// The entry as the sender announced it.
    pub entry: Entry,
    dest: PathBuf,
    part_path: PathBuf,
    journal_path: PathBuf,
    /// `None` once drained.
    writer: Option<Writer>,
    /// Bytes not yet handed to the writer (up to a piece).
    fill: Option<Piece>,
    /// Bytes of the file taken (the resume point plus this session's).
    pub written: u64,
    /// Bytes this session skipped because the receiver held them.
    pub resumed: u64,
    /// Discarded, not stored: no part file, journal or destination to touch.
    sink: bool,
    /// Why the file is refused whatever its bytes (they are taken and dropped).
    refused: Option<String>,
    /// The part file's lock, dropped with the file.
    _lock: Option<File>,
}

/// A piece on loan to the connection: the file's next bytes go into it from their packets.
struct LentPiece {
    piece: Piece,
    /// File bytes it may still take (the rest of the file).
    limit: usize,
    /// File bytes it took.
    taken: usize,
}

impl Sink for LentPiece {
    fn room(&self) -> usize {
        self.piece.room().min(self.limit - self.taken)
    }

    fn put(&mut self, bytes: &[u8]) {
        let n = self.piece.extend(bytes);
        debug_assert_eq!(n, bytes.len(), "the connection puts at most room()");
        self.taken += n;
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
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

    /// Lend the piece being filled to `conn` for the file's next bytes, which then go into it
    /// straight from their packets while they arrive in order (`Connection::lend`: one copy
    /// in user space instead of two). Not while a full piece waits for the disk, or when no
    /// byte of the file is left to come. Until [`Incoming::take_back`], the bytes the piece
    /// takes are not counted in `written`.
    pub fn lend(&mut self, conn: &mut Connection) -> Result<(), Fatal> {
        let limit = self.remaining().min(usize::MAX as u64) as usize;
        if limit == 0 || !self.hand_over(false)? {
            return Ok(());
        }
        let writer = self.writer.as_mut().expect("not drained");
        let piece = self.fill.take().unwrap_or_else(|| writer.buffer());
        let earlier = conn.lend(Box::new(LentPiece {
            piece,
            limit,
            taken: 0,
        }));
        debug_assert!(earlier.is_none(), "one piece lent at a time");
        Ok(())
    }

    /// The piece back from `conn`, with the bytes it took (a full one goes to the writer).
    pub fn take_back(&mut self, conn: &mut Connection) -> Result<(), Fatal> {
        let Some(sink) = conn.take_lent() else {
            return Ok(());
        };
        let lent = sink
            .into_any()
            .downcast::<LentPiece>()
            .expect("a receiver's connection holds only the pieces it lent");
        self.written += lent.taken as u64;
        self.fill = Some(lent.piece);
        self.hand_over(false)?;
        Ok(())
    }

    /// A full piece (or the file's last) is filled and waits for room in the writer's queue.
    pub fn waiting_for_disk(&self) -> bool {
        self.fill.as_ref().is_some_and(|p| {
            p.len() == PIECE || (!p.is_empty() && self.written == self.entry.size())
        })
    }

    /// Queue the piece being filled if it is complete, waiting for room when `wait`. Returns
    /// whether nothing complete is left waiting.
    fn hand_over(&mut self, wait: bool) -> Result<bool, Fatal> {
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

    /// Everything taken, written: the part file with its digests (or, a small file's, the
    /// bytes with theirs).
    fn drain(mut self) -> Result<(Drained, Incoming), Fatal> {
        let mut writer = self.writer.take().expect("drained once");
        if let Some(fill) = self.fill.take().filter(|f| !f.is_empty()) {
            writer.write(fill)?;
        }
        if writer.is_memory() {
            let (bytes, hasher) = writer.finish_memory().expect("in memory");
            return Ok((Drained::Memory(bytes, hasher), self));
        }
        Ok((Drained::File(writer.finish()?), self))
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

    /// [`Incoming::finish`], with the flushes and the rename on the store's placing threads:
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

    /// Everything up to the flushes: the bytes drained to the part file and checked.
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
            Drained::File(f) => (f.hasher.digest(), Staged::File(f.part)),
            Drained::Memory(bytes, hasher) => (hasher.digest(), Staged::Bytes(bytes)),
        };
        if this.sink && ours == *theirs {
            return Verified::Now(Ok(ours));
        }
        if ours != *theirs {
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
        if let Ok((Drained::File(mut file), _)) = self.drain() {
            let _ = file.checkpoint();
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
    /// In its part file.
    File(PartFile),
    /// In memory (a file of less than a chunk), with their digests.
    Memory(Vec<u8>, FileHasher),
}

/// Where a verified file's bytes are.
enum Staged {
    /// In the open part file.
    File(File),
    /// In memory, to be written to the part file when placed.
    Bytes(Vec<u8>),
}

/// A verified part file on its way to its name (it holds the part file's lock until then).
struct ToPlace {
    part: Staged,
    digest: [u8; DIGEST_LEN],
    overwrite: bool,
    incoming: Incoming,
}

impl ToPlace {
    /// Give the file its mode and mtime, flush it, rename it onto its path and flush the
    /// directory: the file is then stored.
    fn place(self) -> Result<[u8; DIGEST_LEN], String> {
        let this = &self.incoming;
        let shown = Printable::from(this.entry.path.as_str());
        let mode = this.entry.mode & 0o777;
        // A small file's part file is locked from its creation until it is under its name.
        let mut _held = None;
        let part = match self.part {
            Staged::File(f) => f,
            Staged::Bytes(bytes) => {
                let staging = this.part_path.parent().unwrap_or(Path::new("."));
                let lock = match &this._lock {
                    Some(_) => None,
                    None => match lock_part(staging, &this.key) {
                        Ok(Some(lock)) => Some(lock),
                        // Another process began this part file since the plan.
                        Ok(None) => return Err(busy_reason(&this.entry.path)),
                        Err(e) => return Err(format!("cannot lock the part file of {shown}: {e}")),
                    },
                };
                _held = lock;
                let written = (|| -> io::Result<File> {
                    let mut f = open_staged(&this.part_path)?;
                    f.set_len(0)?;
                    f.write_all(&bytes)?;
                    Ok(f)
                })();
                match written {
                    Ok(f) => f,
                    Err(e) => return Err(disk_error(&this.entry.path, &e)),
                }
            }
        };
        let placed = (|| -> io::Result<()> {
            part.set_permissions(std::fs::Permissions::from_mode(mode))?;
            part.set_times(FileTimes::new().set_modified(system_time(this.entry.mtime)))?;
            part.sync_all()?;
            Ok(())
        })();
        if let Err(e) = placed {
            return Err(disk_error(&this.entry.path, &e));
        }
        match std::fs::symlink_metadata(&this.dest) {
            Ok(m) if m.is_dir() => {
                return Err(format!("{shown} became a directory on the receiver"))
            }
            Ok(_) if !self.overwrite => {
                return Err(format!(
                    "{shown} appeared on the receiver during the transfer"
                ))
            }
            _ => {}
        }
        if let Err(e) = std::fs::rename(&this.part_path, &this.dest) {
            return Err(format!("cannot rename into place {shown}: {e}"));
        }
        let _ = std::fs::remove_file(&this.journal_path);
        // The rename is durable only once the directory is.
        if let Some(dir) = this.dest.parent() {
            if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
                return Err(format!("cannot flush the directory of {shown}: {e}"));
            }
        }
        Ok(self.digest)
    }
}

/// Who waits for a placed file's verdict: a session (its peer and serial number) and the
/// entry's id.
pub type PlaceTag = (SocketAddr, u64, u32);

/// A placed file's verdict, for the session named by its tag.
pub type PlacedFile = (PlaceTag, Result<[u8; DIGEST_LEN], String>);

/// Threads that flush verified files and rename them into place ([`PLACERS`] of them), so that
/// the connection's thread goes on receiving and acknowledging meanwhile. Two flushes per
/// file (the file, its directory) held that thread for most of a small file's time: a tree
/// of small files went at the disk's flush rate, and the sender, its ACKs late, took its
/// packets for lost. Flushes from several threads at once also share the file system's
/// journal commits.
struct Placer {
    jobs: Option<crossbeam_channel::Sender<(PlaceTag, ToPlace)>>,
    done: crossbeam_channel::Receiver<PlacedFile>,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// Verdicts of files placed on the caller's thread (no placing thread could start).
    here: Vec<PlacedFile>,
    /// Files queued whose verdict was not yet taken.
    pending: usize,
}

/// Threads placing verified files.
pub const PLACERS: usize = 4;

impl Placer {
    fn start() -> Placer {
        let (jobs, rx) = crossbeam_channel::unbounded::<(PlaceTag, ToPlace)>();
        let (done_tx, done) = crossbeam_channel::unbounded();
        let threads = (0..PLACERS)
            .filter_map(|_| {
                let (rx, done_tx) = (rx.clone(), done_tx.clone());
                std::thread::Builder::new()
                    .name("longhaul-place".into())
                    .spawn(move || {
                        for (tag, p) in rx {
                            if done_tx.send((tag, p.place())).is_err() {
                                return;
                            }
                        }
                    })
                    .ok()
            })
            .collect();
        Placer {
            jobs: Some(jobs),
            done,
            threads,
            here: Vec::new(),
            pending: 0,
        }
    }

    fn queue(&mut self, tag: PlaceTag, p: ToPlace) {
        self.pending += 1;
        if self.threads.is_empty() {
            // No thread could be started: placed here.
            let _ = self.jobs.take();
        }
        match &self.jobs {
            Some(jobs) => {
                if let Err(e) = jobs.send((tag, p)) {
                    let (tag, p) = e.into_inner();
                    self.placed_here(tag, p);
                }
            }
            None => self.placed_here(tag, p),
        }
    }

    fn placed_here(&mut self, tag: PlaceTag, p: ToPlace) {
        let verdict = p.place();
        self.here.push((tag, verdict));
    }

    /// Verdicts ready now.
    fn take(&mut self) -> Vec<PlacedFile> {
        let mut out = std::mem::take(&mut self.here);
        out.extend(self.done.try_iter());
        self.pending -= out.len();
        out
    }
}

impl Drop for Placer {
    fn drop(&mut self) {
        self.jobs = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
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

fn part_key(sender: &str, path: &str) -> String {
    let mut h = Sha256::new();
    h.update(sender.as_bytes());
    h.update([0]);
    h.update(path.as_bytes());
    crate::framing::hex(&h.finalize()[..16])
}

pub(crate) fn disk_error(path: &str, e: &io::Error) -> String {
    let shown = Printable::from(path);
    match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => format!(
            "the receiver's disk is full while writing {shown}; what arrived is kept: free space \
             there and run the same send again to resume"
        ),
        _ => format!("cannot write {shown} on the receiver: {e}"),
    }
}

fn mtime_of(m: &std::fs::Metadata) -> (i64, u32) {
    use std::os::unix::fs::MetadataExt;
    (m.mtime(), m.mtime_nsec().clamp(0, 999_999_999) as u32)
}

fn system_time((s, ns): (i64, u32)) -> SystemTime {
    if s >= 0 {
        UNIX_EPOCH + Duration::new(s as u64, ns)
    } else {
        UNIX_EPOCH - Duration::from_secs(s.unsigned_abs()) + Duration::from_nanos(ns as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, size: u64) -> Entry {
        Entry {
            path: path.into(),
            kind: Kind::File { size },
            mode: 0o640,
            mtime: (1_700_000_000, 42),
        }
    }

    /// The file's digest as its sender computes it, from the definition.
    fn file_digest(data: &[u8]) -> [u8; 32] {
        let chunks: Vec<[u8; 32]> = data.chunks(CHUNK_SIZE as usize).map(chunk_digest).collect();
        crate::hashlist::list_digest(chunks.iter())
    }

    /// Receive `data` (from the plan's resume point on) against the sender's digest of `sent`;
    /// also the bytes the plan let it skip.
    fn receive_resumed(
        store: &mut Store,
        e: &Entry,
        data: &[u8],
        sent: &[u8],
    ) -> (Result<[u8; 32], String>, u64) {
        let (action, planned) = store.plan(e, "k", true);
        let planned = planned.unwrap_or_else(|| panic!("{action:?}"));
        let Action::Send { from_chunk, .. } = action else {
            panic!()
        };
        let mut inc = planned.begin(from_chunk).unwrap();
        let resumed = inc.resumed;
        inc.write(&data[inc.written as usize..]).unwrap();
        (inc.finish(store, &file_digest(sent)), resumed)
    }

    /// [`receive_resumed`] without the count.
    fn receive_as(
        store: &mut Store,
        e: &Entry,
        data: &[u8],
        sent: &[u8],
    ) -> Result<[u8; 32], String> {
        receive_resumed(store, e, data, sent).0
    }

    fn receive(store: &mut Store, e: &Entry, data: &[u8]) -> Result<[u8; 32], String> {
        receive_as(store, e, data, data)
    }

    /// `len` bytes of a pattern set by `seed`.
    fn pattern(len: usize, seed: usize) -> Vec<u8> {
        (0..len).map(|i| (i * seed % 251) as u8).collect()
    }

    /// A transfer of `e` cut after `n` bytes of `data`: its part file and journal stay.
    fn cut_after(s: &mut Store, e: &Entry, data: &[u8], n: usize) {
        let (_, planned) = s.plan(e, "k", true);
        let mut inc = planned.unwrap().begin(0).unwrap();
        inc.write(&data[..n]).unwrap();
        inc.suspend(s);
    }

    /// Part files nothing wrote for the given time are listed with the path they were for and
    /// removed; a newer one, and one a session holds, are not.
    #[test]
    fn stale_part_files_are_listed_and_removed_unless_recent_or_held() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(dir.path(), false).unwrap();
        let data = pattern(3 * CHUNK_SIZE as usize, 5);
        let (old, new, held) = (
            file("old", data.len() as u64),
            file("new", CHUNK_SIZE + 9),
            file("held", CHUNK_SIZE + 9),
        );
        cut_after(&mut s, &old, &data, 2 * CHUNK_SIZE as usize);
        cut_after(&mut s, &new, &data, CHUNK_SIZE as usize + 4);
        let staging = dir.path().join(STAGING_DIR);
        let week = Duration::from_secs(8 * 86_400);
        for e in std::fs::read_dir(&staging).unwrap() {
            let e = e.unwrap();
            let f = File::options().write(true).open(e.path()).unwrap();
            let is_new = crate::journal::journaled_path(
                &staging.join(e.file_name().to_string_lossy().replace(".part", ".journal")),
            )
            .as_deref()
                == Some("new");
            if !is_new {
                f.set_times(FileTimes::new().set_modified(SystemTime::now() - week))
                    .unwrap();
            }
        }
        // A session holds this one now: its bytes began (and none arrived yet).
        let (_, planned) = s.plan(&held, "k", true);
        let planned = planned.unwrap();
        let held_key = planned.key().to_string();
        let _receiving = planned.begin(0).unwrap();
        let listed = stale_parts(dir.path(), Duration::from_secs(7 * 86_400)).unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0].path.as_deref(), Some("old"));
        assert!(listed[0].bytes >= 2 * CHUNK_SIZE, "{listed:?}");
        assert!(remove_part(dir.path(), &listed[0]).unwrap());
        let left = stale_parts(dir.path(), Duration::ZERO).unwrap();
        let mut paths: Vec<_> = left.iter().filter_map(|p| p.path.as_deref()).collect();
        paths.sort();
        assert_eq!(paths, ["held", "new"], "{left:?}");
        // Held by a session: not removed.
        let held = left.iter().find(|p| p.key == held_key).unwrap();
        assert!(!remove_part(dir.path(), held).unwrap());
        assert!(dir
            .path()
            .join(STAGING_DIR)
            .join(format!("{held_key}.part"))
            .exists());
    }

    /// No part file or journal: the lock file holds no data and stays.
    fn staging_is_empty(root: &Path) -> bool {
        std::fs::read_dir(root.join(STAGING_DIR))
            .unwrap()
            .all(|e| e.unwrap().file_name() == LOCK_FILE)
    }

    #[test]
    fn a_file_lands_with_mode_and_mtime_and_a_second_copy_is_skipped() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(t.path(), false).unwrap();
        let data = vec![7u8; 3 * CHUNK_SIZE as usize + 5];
        let e = file("sub/dir/x.dat", data.len() as u64);
        receive(&mut s, &e, &data).unwrap();
        let p = t.path().join("sub/dir/x.dat");
        assert_eq!(std::fs::read(&p).unwrap(), data);
        let m = std::fs::metadata(&p).unwrap();
        assert_eq!(m.permissions().mode() & 0o777, 0o640);
        assert_eq!(mtime_of(&m), e.mtime);
        assert!(matches!(s.plan(&e, "k", true).0, Action::Skip(_)));
        // Nothing left in the staging area.
        assert!(staging_is_empty(t.path()));
    }

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

    #[test]
    fn writes_never_go_through_links_and_links_stay_inside() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), t.path().join("esc")).unwrap();
        let mut s = Store::open(t.path(), true).unwrap();
        let (a, _) = s.plan(&file("esc/passwd", 3), "k", true);
        assert!(
            matches!(a, Action::Refuse(ref w) if w.contains("symbolic link")),
            "{a:?}"
        );
        let link = |target: &str| Entry {
            path: "l".into(),
            kind: Kind::Symlink {
                target: target.into(),
            },
            mode: 0o777,
            mtime: (0, 0),
        };
        assert!(matches!(
            s.plan(&link("/etc"), "k", true).0,
            Action::Refuse(_)
        ));
        assert!(matches!(
            s.plan(&link("../x"), "k", true).0,
            Action::Refuse(_)
        ));
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_wrong_digest_stores_nothing_and_leaves_nothing() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(t.path(), false).unwrap();
        let e = file("f", 4);
        let (_, planned) = s.plan(&e, "k", true);
        let mut inc = planned.unwrap().begin(0).unwrap();
        inc.write(b"abcd").unwrap();
        assert!(inc.finish(&mut s, &[0; 32]).is_err());
        assert!(!t.path().join("f").exists());
        assert!(staging_is_empty(t.path()));
    }

    /// A discarding store checks every file against the sender's digest and creates nothing:
    /// no file, directory or link, no part file or journal, and /dev/null stays what it is.
    #[test]
    fn a_discarding_store_verifies_and_keeps_nothing() {
        use std::os::unix::fs::FileTypeExt;
        let mut s = Store::discarding();
        let data = pattern(3 * CHUNK_SIZE as usize + 77, 7);
        let e = file("discarded-dir/f", data.len() as u64);
        assert_eq!(receive(&mut s, &e, &data).unwrap(), file_digest(&data));
        let mut bad = data.clone();
        bad[CHUNK_SIZE as usize + 5] ^= 1;
        let why = receive_as(&mut s, &e, &bad, &data).unwrap_err();
        assert!(why.contains("digest mismatch"), "{why}");
        // Nothing to skip or resume: the same file is asked for again, whole.
        let (action, _) = s.plan(&e, "k", true);
        assert!(
            matches!(action, Action::Send { from_chunk: 0, .. }),
            "{action:?}"
        );
        let dir = Entry {
            kind: Kind::Dir,
            ..file("discarded-dir", 0)
        };
        let link = Entry {
            kind: Kind::Symlink { target: "f".into() },
            ..file("discarded-link", 0)
        };
        assert!(matches!(s.plan(&dir, "k", true).0, Action::Skip(_)));
        assert!(matches!(s.plan(&link, "k", true).0, Action::Skip(_)));
        s.finish_dir(&dir);
        assert!(!Path::new("discarded-dir").exists());
        assert!(std::fs::symlink_metadata("discarded-link").is_err());
        let null = std::fs::metadata("/dev/null").unwrap();
        assert!(null.file_type().is_char_device());
    }

    #[test]
    fn existing_files_are_refused_without_overwrite() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("f"), b"old").unwrap();
        let mut s = Store::open(t.path(), false).unwrap();
        assert!(matches!(
            s.plan(&file("f", 4), "k", true).0,
            Action::Refuse(_)
        ));
        let mut s = Store::open(t.path(), true).unwrap();
        receive(&mut s, &file("f", 4), b"new!").unwrap();
        assert_eq!(std::fs::read(t.path().join("f")).unwrap(), b"new!");
    }

    /// Sending a tree again (a cut one finished, or one already there): a directory that
    /// exists and a link that points where the sender's does are skipped and said to be
    /// there already; a link to somewhere else, or a file in its place, is refused without
    /// `--overwrite` (and says so), and replaced with it.
    #[test]
    fn links_and_directories_already_in_place_are_skipped_and_others_refused() {
        let t = tempfile::tempdir().unwrap();
        let mut s = Store::open(t.path(), false).unwrap();
        let dir = Entry {
            kind: Kind::Dir,
            ..file("d", 0)
        };
        let link = |path: &str, target: &str| Entry {
            kind: Kind::Symlink {
                target: target.into(),
            },
            ..file(path, 0)
        };
        let skipped = |a: Action| match a {
            Action::Skip(why) => why,
            a => panic!("expected a skip, got {a:?}"),
        };
        assert_eq!(skipped(s.plan(&dir, "k", true).0), "directory created");
        assert_eq!(
            skipped(s.plan(&dir, "k", true).0),
            "directory already there"
        );
        assert_eq!(
            skipped(s.plan(&link("d/l", "../f"), "k", true).0),
            "link created"
        );
        assert_eq!(
            skipped(s.plan(&link("d/l", "../f"), "k", true).0),
            "link already there (same target)"
        );
        let refused = s.plan(&link("d/l", "../g"), "k", true).0;
        assert!(
            matches!(&refused, Action::Refuse(w) if w.contains("exists on the receiver")
                && w.contains("--overwrite")),
            "{refused:?}"
        );
        assert_eq!(
            std::fs::read_link(t.path().join("d/l")).unwrap(),
            Path::new("../f")
        );
        std::fs::write(t.path().join("d/f"), b"x").unwrap();
        assert!(matches!(
            s.plan(&link("d/f", "l"), "k", true).0,
            Action::Refuse(_)
        ));
        let mut s = Store::open(t.path(), true).unwrap();
        assert_eq!(
            skipped(s.plan(&link("d/l", "../g"), "k", true).0),
            "link created"
        );
        assert_eq!(
            std::fs::read_link(t.path().join("d/l")).unwrap(),
            Path::new("../g")
        );
    }
}
