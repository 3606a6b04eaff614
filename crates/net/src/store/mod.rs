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
//!
//! Its parts: `staging` (part files' names, their locks, part files left behind), `planned` (a
//! file's resume offer and the start of its bytes), `incoming` (a file's bytes as they arrive,
//! and their check), `place` (verified files put under their names). Here: the [`Store`] and
//! its plan for each entry, with the directories on the entry's path.

mod incoming;
mod place;
mod planned;
mod staging;

pub use incoming::Incoming;
pub use place::{PlaceTag, PlacedFile, PLACERS};
pub use planned::Planned;
pub use staging::{remove_part, stale_parts, StalePart, LOCK_FILE};

use crate::framing::{Action, Entry, Kind, DIGEST_LEN};
use crate::path::{link_stays_inside, Printable, STAGING_DIR};
use place::Placer;
use staging::{lock_part, part_key};
use std::collections::HashMap;
use std::fs::{File, FileTimes};
use std::io;
use std::net::SocketAddr;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
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
    use crate::framing::CHUNK_SIZE;
    use crate::hashlist::chunk_digest;

    pub(super) fn file(path: &str, size: u64) -> Entry {
        Entry {
            path: path.into(),
            kind: Kind::File { size },
            mode: 0o640,
            mtime: (1_700_000_000, 42),
        }
    }

    /// The file's digest as its sender computes it, from the definition.
    pub(super) fn file_digest(data: &[u8]) -> [u8; 32] {
        let chunks: Vec<[u8; 32]> = data.chunks(CHUNK_SIZE as usize).map(chunk_digest).collect();
        crate::hashlist::list_digest(chunks.iter())
    }

    /// Receive `data` (from the plan's resume point on) against the sender's digest of `sent`;
    /// also the bytes the plan let it skip.
    pub(super) fn receive_resumed(
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
        let mut inc = planned.begin(from_chunk, 0).unwrap();
        let resumed = inc.resumed;
        inc.write(&data[inc.written as usize..]).unwrap();
        (inc.finish(store, &file_digest(sent)), resumed)
    }

    /// [`receive_resumed`] without the count.
    pub(super) fn receive_as(
        store: &mut Store,
        e: &Entry,
        data: &[u8],
        sent: &[u8],
    ) -> Result<[u8; 32], String> {
        receive_resumed(store, e, data, sent).0
    }

    pub(super) fn receive(store: &mut Store, e: &Entry, data: &[u8]) -> Result<[u8; 32], String> {
        receive_as(store, e, data, data)
    }

    /// `len` bytes of a pattern set by `seed`.
    pub(super) fn pattern(len: usize, seed: usize) -> Vec<u8> {
        (0..len).map(|i| (i * seed % 251) as u8).collect()
    }

    /// A transfer of `e` cut after `n` bytes of `data`: its part file and journal stay.
    pub(super) fn cut_after(s: &mut Store, e: &Entry, data: &[u8], n: usize) {
        let (_, planned) = s.plan(e, "k", true);
        let mut inc = planned.unwrap().begin(0, 0).unwrap();
        inc.write(&data[..n]).unwrap();
        inc.suspend(s);
    }

    /// No part file or journal: the lock file holds no data and stays.
    pub(super) fn staging_is_empty(root: &Path) -> bool {
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
