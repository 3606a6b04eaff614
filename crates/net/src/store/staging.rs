//! The staging directory's own files: a part file's name (its key, from the sender and the
//! path), the lock file whose bytes keep each part file to one writer across processes, and
//! the part files left behind (`recv --clean-parts`).

use crate::path::STAGING_DIR;
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The file in the staging directory whose bytes are locked, one per part file being written
/// (at an offset given by the part file's key): it is never removed, and holds no data.
pub const LOCK_FILE: &str = "locks";

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
pub(super) fn open_staged(path: &Path) -> io::Result<File> {
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
pub(super) fn lock_part(staging: &Path, key: &str) -> io::Result<Option<File>> {
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

pub(super) fn part_key(sender: &str, path: &str) -> String {
    let mut h = Sha256::new();
    h.update(sender.as_bytes());
    h.update([0]);
    h.update(path.as_bytes());
    crate::framing::hex(&h.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framing::CHUNK_SIZE;
    use crate::store::tests::{cut_after, file, pattern};
    use crate::store::Store;
    use std::fs::FileTimes;

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
        let _receiving = planned.begin(0, 0).unwrap();
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
}
