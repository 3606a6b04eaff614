//! ssh's StrictModes: a key or trust file is used only when it and the directory holding it
//! belong to the user running longhaul (or to root), and group and others may not write that
//! directory.

use super::KeyError;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// ssh's StrictModes for a key or trust file, given the open file's metadata: the file belongs
/// to the user running longhaul or to root, and so does the directory holding it, which group
/// and others may not write ([`check_directory`]).
pub(super) fn check_strict(path: &Path, meta: &std::fs::Metadata) -> Result<(), KeyError> {
    use std::os::unix::fs::MetadataExt;
    owned(path, meta.uid())?;
    check_directory(path)
}

/// The directory holding `path` (`~/.longhaul`) belongs to the user running longhaul or to
/// root, and group and others may not write it (whoever can write it can replace the files in
/// it, sticky bit or not, as ssh decides). A directory that cannot be looked at is left to the
/// file's own errors.
pub(super) fn check_directory(path: &Path) -> Result<(), KeyError> {
    use std::os::unix::fs::MetadataExt;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(meta) = std::fs::metadata(dir) else {
        return Ok(());
    };
    owned(dir, meta.uid())?;
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(KeyError::DirWritable {
            dir: dir.into(),
            file: path.into(),
            mode,
        });
    }
    Ok(())
}

/// `path`, owned by `owner`, belongs to the user running longhaul or to root.
fn owned(path: &Path, owner: u32) -> Result<(), KeyError> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if owner == me || owner == 0 {
        return Ok(());
    }
    Err(KeyError::NotOwned {
        path: path.into(),
        owner,
        me,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::tests::*;
    use crate::keys::{read_private_key, write_keypair, AuthorizedKeys, KnownHosts};
    use std::fs;

    /// ssh's StrictModes: a key or trust file is not used when the directory holding it may be
    /// written by group or others (whoever can write there can put another file in its place), or
    /// when the file or that directory belongs to a user other than the one running longhaul (or
    /// root); each error says what to chmod or chown.
    #[test]
    fn key_files_in_an_open_directory_or_owned_by_another_user_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let private = home.join("id_x25519");
        write_keypair(&private, &alice(), None, false).unwrap();
        let authorized = home.join("authorized_keys");
        write(
            &authorized,
            &format!("longhaul-x25519 {BOB_PUBLIC}\n"),
            0o644,
        );
        let known = home.join("known_hosts");
        write(&known, &format!("h longhaul-x25519 {BOB_PUBLIC}\n"), 0o644);
        let loads = || {
            [
                read_private_key(&private).map(|_| ()),
                AuthorizedKeys::load(&authorized).map(|_| ()),
                KnownHosts::load(&known).map(|_| ()),
            ]
        };
        for r in loads() {
            r.unwrap();
        }
        let shown = home.display().to_string();
        for open in [0o777, 0o775, 0o757, 0o1777] {
            fs::set_permissions(&home, fs::Permissions::from_mode(open)).unwrap();
            for r in loads() {
                let e = r.unwrap_err().to_string();
                assert!(
                    e.starts_with(&format!(
                        "{shown} is writable by group or others (mode {open:04o})"
                    )),
                    "{e}"
                );
                assert!(e.contains(&format!("chmod go-w {shown}`")), "{e}");
            }
        }
        // Without known_hosts yet, the sender would write it there: refused too.
        fs::remove_file(&known).unwrap();
        assert!(KnownHosts::load(&known).is_err());
        fs::set_permissions(&home, fs::Permissions::from_mode(0o755)).unwrap();
        assert!(KnownHosts::load(&known).is_ok());
        write(&known, &format!("h longhaul-x25519 {BOB_PUBLIC}\n"), 0o644);
        for r in loads() {
            r.unwrap();
        }

        // Files owned by another user: only root can make them.
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if me != 0 {
            eprintln!("SKIPPED the ownership half: needs root (chown)");
            return;
        }
        let nobody = 65534;
        for (i, file) in [&private, &authorized, &known].into_iter().enumerate() {
            std::os::unix::fs::chown(file, Some(nobody), None).unwrap();
            let e = loads()[i].as_ref().unwrap_err().to_string();
            let shown = file.display();
            assert!(
                e.starts_with(&format!("{shown} belongs to uid {nobody}, not to uid {me}")),
                "{e}"
            );
            assert!(e.contains(&format!("chown {me} {shown}`")), "{e}");
            std::os::unix::fs::chown(file, Some(me), None).unwrap();
            loads()[i].as_ref().unwrap();
        }
        std::os::unix::fs::chown(&home, Some(nobody), None).unwrap();
        for r in loads() {
            let e = r.unwrap_err().to_string();
            assert!(e.contains(&format!("chown {me} {shown}`")), "{e}");
        }
    }
}
