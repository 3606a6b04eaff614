//! The sender's list of what to send: files, directories and links under the paths given.
//!
//! Each path on the command line becomes an entry named by its last component (`send
//! data/run42 HOST` creates `run42` on the receiver, as `scp -r` does), and a directory brings
//! its whole tree, in a stable order (sorted by name, parents before children). Symbolic links
//! inside a tree are sent as links (their target text), not followed, unless `follow_links`
//! is set; a link named on the command line is followed (as `cp -H` does). A path named on the
//! command line that is missing, or whose name is not UTF-8 or one the receiver would refuse,
//! is an error here, before anything is sent; any other entry that cannot be sent (such a name
//! inside a tree, a directory or link that cannot be read) is listed as [`Unsent`] with the
//! reason, and the rest goes.

use crate::framing::{Entry, Kind, MAX_ENTRIES};
use crate::path::{check_relative, Printable, MAX_PATH};
use crate::NetError;
use std::fs::Metadata;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// One entry and, for files, where the sender reads it.
#[derive(Clone, Debug)]
pub struct Item {
    /// The entry as announced to the receiver.
    pub entry: Entry,
    /// Where the sender reads it on its own file system.
    pub source: PathBuf,
}

/// An entry inside a tree that is not sent, and why. `path` is its path on the receiver (a
/// name that is not UTF-8 with U+FFFD in place of its bad bytes); print it escaped
/// ([`Printable`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsent {
    /// Its path on the receiver, relative to the destination.
    pub path: String,
    /// Why it is not sent (the error, for the report).
    pub why: String,
}

/// What the walk found: the entries to send, in order, and those it could not send.
#[derive(Clone, Debug, Default)]
pub struct Manifest {
    /// The entries to send, in walk order.
    pub items: Vec<Item>,
    /// The entries the walk found but cannot send.
    pub unsent: Vec<Unsent>,
}

/// Walk `roots` into a manifest. `rename` names a single root differently on the receiver.
pub fn collect(
    roots: &[PathBuf],
    rename: Option<&str>,
    follow_links: bool,
) -> Result<Manifest, NetError> {
    if rename.is_some() && roots.len() != 1 {
        return Err(NetError::Usage(
            "--name applies to a single path; give one path or drop --name".into(),
        ));
    }
    let mut m = Manifest::default();
    for root in roots {
        let meta = std::fs::metadata(root).map_err(|e| file_err(root, e))?;
        let name = match rename {
            Some(n) => n.to_string(),
            None => utf8_name(root)?,
        };
        check_relative(&name).map_err(|e| {
            NetError::Usage(format!(
                "{}: {e}",
                Printable::bytes(root.as_os_str().as_encoded_bytes())
            ))
        })?;
        add(&mut m, root, name, &meta, follow_links)?;
    }
    let mut seen = std::collections::HashSet::new();
    for it in &m.items {
        if !seen.insert(it.entry.path.as_str()) {
            return Err(NetError::Usage(format!(
                "two paths would both arrive as {}; send them separately or rename one (--name)",
                Printable::from(it.entry.path.as_str())
            )));
        }
    }
    Ok(m)
}

/// Add `source`, whose name `rel` has been checked, and for a directory its tree.
fn add(
    m: &mut Manifest,
    source: &Path,
    rel: String,
    meta: &Metadata,
    follow_links: bool,
) -> Result<(), NetError> {
    if m.items.len() as u64 >= MAX_ENTRIES {
        return Err(NetError::Usage(format!(
            "more than {MAX_ENTRIES} entries; send the tree in parts"
        )));
    }
    let ft = meta.file_type();
    let unsent = |m: &mut Manifest, why: String| {
        m.unsent.push(Unsent {
            path: rel.clone(),
            why,
        })
    };
    let mut children = Vec::new();
    let kind = if ft.is_symlink() {
        let target = match std::fs::read_link(source) {
            Ok(t) => t,
            Err(e) => {
                unsent(m, format!("cannot read the link: {e}"));
                return Ok(());
            }
        };
        let Some(target) = target.to_str() else {
            unsent(
                m,
                format!(
                    "the link's target {} is not UTF-8; not sent",
                    Printable::bytes(target.as_os_str().as_encoded_bytes())
                ),
            );
            return Ok(());
        };
        if target.len() > MAX_PATH {
            unsent(
                m,
                format!("the link's target is longer than {MAX_PATH} bytes; not sent"),
            );
            return Ok(());
        }
        Kind::Symlink {
            target: target.to_string(),
        }
    } else if ft.is_dir() {
        // Read before the directory is listed: one that cannot be read is not sent at all
        // (the receiver would make an empty one).
        match std::fs::read_dir(source).and_then(|d| d.collect::<Result<Vec<_>, _>>()) {
            Ok(c) => children = c,
            Err(e) => {
                unsent(
                    m,
                    format!("cannot read the directory: {e}; it and its contents are not sent"),
                );
                return Ok(());
            }
        }
        Kind::Dir
    } else if ft.is_file() {
        Kind::File { size: meta.len() }
    } else {
        // Devices, sockets and pipes have no bytes to move.
        eprintln!(
            "longhaul: skipping {} (not a file, directory or link)",
            Printable::from(source.to_string_lossy().as_ref())
        );
        return Ok(());
    };
    m.items.push(Item {
        entry: Entry {
            path: rel.clone(),
            kind,
            mode: meta.permissions().mode() & 0o7777,
            mtime: (meta.mtime(), meta.mtime_nsec().clamp(0, 999_999_999) as u32),
        },
        source: source.to_path_buf(),
    });
    children.sort_by_key(|c| c.file_name());
    for c in children {
        let name = c.file_name();
        let Some(utf8) = name.to_str() else {
            m.unsent.push(Unsent {
                path: format!("{rel}/{}", name.to_string_lossy()),
                why: format!(
                    "the name {} is not UTF-8; rename it to send it",
                    Printable::bytes(name.as_encoded_bytes())
                ),
            });
            continue;
        };
        let child = format!("{rel}/{utf8}");
        if let Err(e) = check_relative(&child) {
            m.unsent.push(Unsent {
                path: child,
                why: format!("{e}; rename it to send it"),
            });
            continue;
        }
        let path = c.path();
        let meta = if follow_links {
            std::fs::metadata(&path)
        } else {
            std::fs::symlink_metadata(&path)
        };
        match meta {
            Ok(meta) => add(m, &path, child, &meta, follow_links)?,
            Err(e) => m.unsent.push(Unsent {
                path: child,
                why: format!("cannot read it: {e}"),
            }),
        }
    }
    Ok(())
}

fn utf8_name(root: &Path) -> Result<String, NetError> {
    // `.` and `dir/..` have no name of their own: use the directory's real one.
    let resolved = if root.file_name().is_none() {
        root.canonicalize().map_err(|e| file_err(root, e))?
    } else {
        root.to_path_buf()
    };
    let name = resolved.file_name().ok_or_else(|| {
        NetError::Usage(format!(
            "{}: has no name to send it under (use --name)",
            root.display()
        ))
    })?;
    Ok(name.to_str().ok_or_else(|| not_utf8(root))?.to_string())
}

fn not_utf8(p: &Path) -> NetError {
    NetError::Usage(format!(
        "{}: the name is not UTF-8; rename it to send it",
        Printable::bytes(p.as_os_str().as_encoded_bytes())
    ))
}

fn file_err(p: &Path, e: std::io::Error) -> NetError {
    NetError::File(p.display().to_string(), e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_tree_becomes_sorted_entries_with_links_kept_as_links() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("run");
        std::fs::create_dir_all(root.join("b")).unwrap();
        std::fs::write(root.join("b/x.dat"), b"12345").unwrap();
        std::fs::write(root.join("a.txt"), b"hi").unwrap();
        symlink("a.txt", root.join("l")).unwrap();
        let items = collect(std::slice::from_ref(&root), None, false)
            .unwrap()
            .items;
        let paths: Vec<_> = items.iter().map(|i| i.entry.path.as_str()).collect();
        assert_eq!(paths, ["run", "run/a.txt", "run/b", "run/b/x.dat", "run/l"]);
        assert_eq!(items[3].entry.kind, Kind::File { size: 5 });
        assert_eq!(
            items[4].entry.kind,
            Kind::Symlink {
                target: "a.txt".into()
            }
        );
        let followed = collect(&[root], None, true).unwrap().items;
        assert_eq!(followed[4].entry.kind, Kind::File { size: 2 });
    }

    #[test]
    fn collisions_and_bad_names_are_refused_before_sending() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("x/same")).unwrap();
        std::fs::create_dir_all(t.path().join("y/same")).unwrap();
        let err = collect(
            &[t.path().join("x/same"), t.path().join("y/same")],
            None,
            false,
        );
        assert!(matches!(err, Err(NetError::Usage(_))));
        let f = t.path().join("f");
        std::fs::write(&f, b"").unwrap();
        assert!(collect(std::slice::from_ref(&f), Some("../up"), false).is_err());
        assert!(collect(&[f], Some("fine"), false).is_ok());
    }

    /// Inside a tree, what cannot be sent is listed with its reason and the walk goes on: a
    /// name with a control character (a directory's keeps its contents out too), one that is
    /// not UTF-8, and, following links, a link to nothing.
    #[test]
    fn entries_that_cannot_be_sent_are_listed_and_the_rest_walked() {
        use std::os::unix::ffi::OsStrExt;
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("r");
        std::fs::create_dir_all(root.join("d\x1bir")).unwrap();
        std::fs::write(root.join("d\x1bir/inside"), b"").unwrap();
        std::fs::write(root.join("a\nb"), b"").unwrap();
        std::fs::write(root.join(std::ffi::OsStr::from_bytes(b"\xff")), b"").unwrap();
        std::fs::write(root.join("ok"), b"").unwrap();
        symlink("nowhere", root.join("dangling")).unwrap();
        let m = collect(std::slice::from_ref(&root), None, true).unwrap();
        let sent: Vec<_> = m.items.iter().map(|i| i.entry.path.as_str()).collect();
        assert_eq!(sent, ["r", "r/ok"]);
        let unsent: Vec<(&str, &str)> = m
            .unsent
            .iter()
            .map(|u| (u.path.as_str(), u.why.as_str()))
            .collect();
        assert_eq!(unsent.len(), 4, "{unsent:?}");
        for (path, why) in &unsent[..2] {
            assert!(["r/a\nb", "r/d\x1bir"].contains(path), "{unsent:?}");
            assert!(
                why.contains("control character") && why.contains("rename"),
                "{why}"
            );
            assert!(!why.chars().any(char::is_control), "{why}");
        }
        assert_eq!(unsent[2].0, "r/dangling");
        assert!(unsent[2].1.contains("No such file"), "{unsent:?}");
        assert_eq!(unsent[3].0, "r/\u{fffd}");
        assert!(unsent[3].1.contains("not UTF-8"), "{unsent:?}");
    }
}
