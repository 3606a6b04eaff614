//! Verified files put under their names: their last bytes written, given their mode and mtime,
//! flushed, renamed onto their paths and their directories flushed, on placing threads of
//! their own so that the connection's thread never waits for the disk. (A file's digest is
//! known before its last bytes reach the disk: it is hashed as it is received.)

use super::staging::{lock_part, open_staged};
use super::{busy_reason, disk_error, system_time, Incoming};
use crate::framing::DIGEST_LEN;
use crate::part::Writer;
use crate::path::Printable;
use std::fs::{File, FileTimes};
use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Where a verified file's bytes are.
pub(super) enum Staged {
    /// In the part file, which its writer's thread may still be writing: placing waits for it.
    Writing(Box<Writer>),
    /// In memory, to be written to the part file when placed.
    Bytes(Vec<u8>),
}

/// A verified part file on its way to its name (it holds the part file's lock until then).
pub(super) struct ToPlace {
    pub(super) part: Staged,
    pub(super) digest: [u8; DIGEST_LEN],
    pub(super) overwrite: bool,
    pub(super) incoming: Incoming,
}

impl ToPlace {
    /// Give the file its mode and mtime, flush it, rename it onto its path and flush the
    /// directory: the file is then stored.
    pub(super) fn place(self) -> Result<[u8; DIGEST_LEN], String> {
        let this = &self.incoming;
        let shown = Printable::from(this.entry.path.as_str());
        let mode = this.entry.mode & 0o777;
        // A small file's part file is locked from its creation until it is under its name.
        let mut _held = None;
        let part = match self.part {
            Staged::Writing(w) => match (*w).finish() {
                Ok(file) => file.part,
                Err(e) => return Err(e.0),
            },
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
pub(super) struct Placer {
    jobs: Option<crossbeam_channel::Sender<(PlaceTag, ToPlace)>>,
    done: crossbeam_channel::Receiver<PlacedFile>,
    threads: Vec<std::thread::JoinHandle<()>>,
    /// Verdicts of files placed on the caller's thread (no placing thread could start).
    here: Vec<PlacedFile>,
    /// Files queued whose verdict was not yet taken.
    pub(super) pending: usize,
}

/// Threads placing verified files.
pub const PLACERS: usize = 4;

impl Placer {
    pub(super) fn start() -> Placer {
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

    pub(super) fn queue(&mut self, tag: PlaceTag, p: ToPlace) {
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
    pub(super) fn take(&mut self) -> Vec<PlacedFile> {
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
