//! Writing the files a user names (`--json`, `--report`, `sweep --out`, key files): the one way
//! every longhaul command writes such a path.
//!
//! What the path names decides how it is written, so that pointing an output at `/dev/null`, a
//! FIFO, a symlink or `>(jq .)` does what it does for `cp` and the shell, and a results file is
//! never left half written:
//!
//! | the path names | how it is written |
//! |---|---|
//! | `-` (or `/dev/stdout`, `/dev/fd/1`) | standard output |
//! | nothing yet, or a regular file | atomically: a new file with a unique name (`O_EXCL`) in the same directory is written, fsynced and renamed over the path, then the directory is fsynced. Readers see the old file or the whole new one; a crash, a full disk or a refused write leaves the old file as it was. The new file keeps the old one's permission bits (and its owner, for root). |
//! | a symbolic link | followed, as `cp` and shells do: what it points to is written by these rules and the link stays a link. A dangling link creates its target. |
//! | a descriptor (`/dev/fd/N`, `/proc/self/fd/N`, `/dev/stderr`, what `>(…)` passes) | opened through `/proc` and written in place; a regular file behind it is appended to, so what the program wrote there before is kept |
//! | a character or block device, a FIFO, a socket | opened and written in place, never renamed over (a FIFO waits for its reader) |
//! | a directory | refused |
//!
//! Renaming replaces a regular file's inode, so hard links to the old file keep the old
//! contents; that is the price of never exposing a partial file.
//!
//! The main items: [`write`](fn@write) writes a path by the rules above, [`resolve`] says which
//! rule a path falls under (a [`Target`]), and [`Error`] names the path and what failed.
//!
//! [`check`] answers, before a long run, whether [`write`](fn@write) will be able to write a path, without
//! writing it (and without opening a FIFO, which would wait for a reader).
//!
//! [`shell::word`] writes a path or an argument into a command line that a shell reads back as
//! the same word.

#![warn(missing_docs)]

pub mod shell;

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Longest chain of symbolic links followed, as the kernel's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// Bytes of the target's name kept in its temporary file's name (names are at most 255 bytes).
const TEMP_NAME_BYTES: usize = 200;

/// An output that cannot be written, with what to do about it.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {reason}{}", path.display(), hint(*kind, path))]
pub struct Error {
    path: PathBuf,
    reason: String,
    kind: io::ErrorKind,
}

impl Error {
    fn io(path: &Path, e: &io::Error) -> Error {
        Error {
            path: path.to_path_buf(),
            reason: e.to_string(),
            kind: e.kind(),
        }
    }

    fn other(path: &Path, reason: impl Into<String>) -> Error {
        Error {
            path: path.to_path_buf(),
            reason: reason.into(),
            kind: io::ErrorKind::Other,
        }
    }

    /// The path the user named (or the file a link of theirs points to).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The operating system's reason, for callers that react to it.
    pub fn kind(&self) -> io::ErrorKind {
        self.kind
    }
}

fn hint(kind: io::ErrorKind, path: &Path) -> String {
    let dir = parent(path);
    match kind {
        io::ErrorKind::NotFound => format!(
            "; the directory {} does not exist: create it or choose another path",
            dir.display()
        ),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => {
            "; choose a place you may write to".to_string()
        }
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => {
            "; free some space or choose another file system (a file that was there is unchanged)"
                .to_string()
        }
        _ => String::new(),
    }
}

/// Where a path's bytes go, decided by what the path names now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `-`.
    Stdout,
    /// A regular file or a path where nothing exists yet (after following links): written
    /// through a temporary file and a rename.
    Replace(PathBuf),
    /// A device, FIFO, socket or descriptor: opened and written in place. `append` for a
    /// regular file reached through a descriptor.
    InPlace {
        /// The path to open: links followed, up to a descriptor.
        path: PathBuf,
        /// Open for appending (a regular file behind a descriptor).
        append: bool,
    },
}

/// Whether an output path means standard output: `-`, or one of the names the system gives it
/// (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`), so that a command which moves its table
/// off standard output for `-` does so for these too.
pub fn is_stdout(path: &Path) -> bool {
    ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]
        .iter()
        .any(|name| path == Path::new(name))
}

/// What `path` names, following symbolic links (descriptors in `/proc` are not followed: they
/// are written in place).
pub fn resolve(path: &Path) -> Result<Target, Error> {
    if is_stdout(path) {
        return Ok(Target::Stdout);
    }
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Replace(p)),
            Err(e) => return Err(Error::io(&p, &e)),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            if is_descriptor(&p) {
                // A link the kernel makes (a pipe's is `pipe:[N]`, no path at all): open it.
                let behind = fs::metadata(&p).map_err(|e| Error::io(&p, &e))?;
                if behind.is_dir() {
                    return Err(Error::other(&p, "it is a directory"));
                }
                return Ok(Target::InPlace {
                    path: p,
                    append: behind.is_file(),
                });
            }
            let to = fs::read_link(&p).map_err(|e| Error::io(&p, &e))?;
            p = if to.is_relative() {
                parent(&p).join(to)
            } else {
                to
            };
            continue;
        }
        if kind.is_file() {
            return Ok(Target::Replace(p));
        }
        if kind.is_dir() {
            return Err(Error::other(
                &p,
                "it is a directory; name a file (inside it, for example)",
            ));
        }
        return Ok(Target::InPlace {
            path: p,
            append: false,
        });
    }
    Err(Error::other(
        path,
        format!("more than {MAX_LINKS} symbolic links to follow"),
    ))
}

/// Write `bytes` to `path` by the rules in this module's header.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    match resolve(path)? {
        Target::Stdout => {
            let mut out = io::stdout().lock();
            out.write_all(bytes)
                .and_then(|()| out.flush())
                .map_err(|e| Error::io(Path::new("standard output"), &e))
        }
        Target::InPlace { path, append } => {
            let mut file = OpenOptions::new()
                .write(true)
                .append(append)
                .open(&path)
                .map_err(|e| Error::io(&path, &e))?;
            file.write_all(bytes)
                .and_then(|()| file.flush())
                .map_err(|e| Error::io(&path, &e))
        }
        Target::Replace(path) => replace(&path, bytes),
    }
}

/// Whether [`write`](fn@write) can write `path`, checked without writing it: an existing target must be
/// writable, and a file must be creatable in a regular file's directory. The checks leave
/// nothing behind.
pub fn check(path: &Path) -> Result<(), Error> {
    match resolve(path)? {
        Target::Stdout => Ok(()),
        Target::InPlace { path, .. } => writable(&path),
        Target::Replace(path) => {
            if path.exists() {
                writable(&path)?;
            }
            temporary_beside(&path, None).map(drop)
        }
    }
}

/// Create `dir` (and its parents) for files written with [`write`](fn@write), and check that a file can
/// be created in it.
pub fn create_dir(dir: &Path) -> Result<(), Error> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, &e))?;
    temporary_beside(&dir.join("probe"), None).map(drop)
}

/// Create `path` with `bytes` only if nothing is there yet, atomically: of many processes
/// racing to create it, exactly one does (`true`) and the rest find it (`false`). The file
/// appears whole or not at all.
pub fn create_new(path: &Path, bytes: &[u8]) -> Result<bool, Error> {
    let mut tmp = temporary_beside(path, None)?;
    fill(&mut tmp, path, bytes)?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {
            sync_dir(path)?;
            Ok(true)
        }
        Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(Error::io(path, &e.error)),
    }
}

fn writable(path: &Path) -> Result<(), Error> {
    nix::unistd::access(path, nix::unistd::AccessFlags::W_OK)
        .map_err(|e| Error::io(path, &io::Error::from(e)))
}

/// Write a regular file (or a new one) through a temporary file and a rename.
fn replace(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let old = fs::metadata(path).ok();
    if old.is_some() {
        // A file the user made read-only is refused, as `cp` does, though a rename could
        // replace it.
        writable(path)?;
    }
    let mut tmp = temporary_beside(path, old.as_ref())?;
    fill(&mut tmp, path, bytes)?;
    tmp.persist(path).map_err(|e| Error::io(path, &e.error))?;
    sync_dir(path)
}

fn fill(tmp: &mut tempfile::NamedTempFile, path: &Path, bytes: &[u8]) -> Result<(), Error> {
    tmp.write_all(bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| Error::io(path, &e))
}

/// A new, uniquely named file in `path`'s directory (`.NAME.XXXXXX.tmp`, removed when dropped),
/// with `old`'s permission bits and owner when it replaces a file, else `0666` less the umask.
fn temporary_beside(
    path: &Path,
    old: Option<&fs::Metadata>,
) -> Result<tempfile::NamedTempFile, Error> {
    let Some(name) = path.file_name() else {
        return Err(Error::other(path, "it names a directory, not a file"));
    };
    let name = &name.as_bytes()[..name.len().min(TEMP_NAME_BYTES)];
    let mut prefix = OsString::from(".");
    prefix.push(std::ffi::OsStr::from_bytes(name));
    prefix.push(".");
    let mode = old.map_or(0o666, |m| m.permissions().mode() & 0o7777);
    let tmp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(Permissions::from_mode(mode))
        .tempfile_in(parent(path))
        .map_err(|e| Error::io(path, &e))?;
    if let Some(m) = old {
        // The umask narrowed the mode at creation; the replacement keeps the old one exactly.
        tmp.as_file()
            .set_permissions(Permissions::from_mode(mode))
            .map_err(|e| Error::io(path, &e))?;
        // Only root may give a file away; for anyone else the owner is already theirs.
        let _ = std::os::unix::fs::fchown(tmp.as_file(), Some(m.uid()), Some(m.gid()));
    }
    Ok(tmp)
}

/// Make the rename durable: fsync the directory that holds `path`.
fn sync_dir(path: &Path) -> Result<(), Error> {
    let dir = parent(path);
    let synced = File::open(dir).and_then(|d| d.sync_all());
    match synced {
        // Some file systems cannot fsync a directory; the rename itself has happened.
        Err(e) if e.raw_os_error() == Some(nix::libc::EINVAL) => Ok(()),
        other => other.map_err(|e| Error::io(dir, &e)),
    }
}

/// The directory holding `path` (`.` for a bare name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Whether `path` is a link the kernel makes in `/proc` (`/proc/self/fd/N`, also reached as
/// `/dev/fd/N` or `/dev/stdout`): its target is an open file, not a path to follow.
fn is_descriptor(path: &Path) -> bool {
    fs::canonicalize(parent(path)).is_ok_and(|dir| dir.starts_with("/proc"))
}
