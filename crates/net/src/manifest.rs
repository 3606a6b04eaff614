//! The sender's list of what to send: files, directories and links under the paths given.
//!
//! Each path on the command line becomes an entry named by its last component (`send
//! data/run42 HOST` creates `run42` on the receiver, as `scp -r` does), and a directory brings
//! its whole tree, in a stable order (sorted by name, parents before children). Symbolic links
//! inside a tree are sent as links (their target text), not followed, unless `follow_links`
//! is set; a link named on the command line is followed (as `cp -H` does). Names that are not
//! UTF-8 or that the receiver would refuse are errors here, before anything is sent.

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

/// Walk `roots` into a manifest. `rename` names a single root differently on the receiver.
pub fn collect(
    roots: &[PathBuf],
    rename: Option<&str>,
    follow_links: bool,
) -> Result<Vec<Item>, NetError> {
    if rename.is_some() && roots.len() != 1 {
        return Err(NetError::Usage(
            "--name applies to a single path; give one path or drop --name".into(),
        ));
    }
    let mut items = Vec::new();
    for root in roots {
        let meta = std::fs::metadata(root).map_err(|e| file_err(root, e))?;
        let name = match rename {
            Some(n) => n.to_string(),
            None => utf8_name(root)?,
        };
        add(&mut items, root, name, &meta, follow_links)?;
    }
    let mut seen = std::collections::HashSet::new();
    for it in &items {
        if !seen.insert(it.entry.path.as_str()) {
            return Err(NetError::Usage(format!(
                "two paths would both arrive as {}; send them separately or rename one (--name)",
                Printable::from(it.entry.path.as_str())
            )));
        }
    }
    Ok(items)
}

fn add(
    items: &mut Vec<Item>,
    source: &Path,
    rel: String,
    meta: &Metadata,
    follow_links: bool,
) -> Result<(), NetError> {
    check_relative(&rel).map_err(|e| NetError::Usage(format!("{}: {e}", source.display())))?;
    if items.len() as u64 >= MAX_ENTRIES {
        return Err(NetError::Usage(format!(
            "more than {MAX_ENTRIES} entries; send the tree in parts"
        )));
    }
    let ft = meta.file_type();
    let kind = if ft.is_symlink() {
        let target = std::fs::read_link(source).map_err(|e| file_err(source, e))?;
        let target = target.to_str().ok_or_else(|| not_utf8(source))?.to_string();
        if target.len() > MAX_PATH {
            return Err(NetError::Usage(format!(
                "{}: link target longer than {MAX_PATH} bytes",
                source.display()
            )));
        }
        Kind::Symlink { target }
    } else if ft.is_dir() {
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
    let is_dir = matches!(kind, Kind::Dir);
    items.push(Item {
        entry: Entry {
            path: rel.clone(),
            kind,
            mode: meta.permissions().mode() & 0o7777,
            mtime: (meta.mtime(), meta.mtime_nsec().clamp(0, 999_999_999) as u32),
        },
        source: source.to_path_buf(),
    });
    if is_dir {
        let mut children: Vec<_> = std::fs::read_dir(source)
            .map_err(|e| file_err(source, e))?
            .collect::<Result<_, _>>()
            .map_err(|e| file_err(source, e))?;
        children.sort_by_key(|c| c.file_name());
        for c in children {
            let path = c.path();
            let meta = if follow_links {
                std::fs::metadata(&path)
            } else {
                std::fs::symlink_metadata(&path)
            }
            .map_err(|e| file_err(&path, e))?;
            let name = c.file_name();
            let name = name.to_str().ok_or_else(|| not_utf8(&path))?;
            add(items, &path, format!("{rel}/{name}"), &meta, follow_links)?;
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
        let items = collect(std::slice::from_ref(&root), None, false).unwrap();
        let paths: Vec<_> = items.iter().map(|i| i.entry.path.as_str()).collect();
        assert_eq!(paths, ["run", "run/a.txt", "run/b", "run/b/x.dat", "run/l"]);
        assert_eq!(items[3].entry.kind, Kind::File { size: 5 });
        assert_eq!(
            items[4].entry.kind,
            Kind::Symlink {
                target: "a.txt".into()
            }
        );
        let followed = collect(&[root], None, true).unwrap();
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
}
