//! `authorized_keys`: the senders a receiver accepts, read with the checks ssh makes.

use super::error::io_error;
use super::strict::check_strict;
use super::text::{lines, parse_public, read_text};
use super::{KeyError, PublicKey};
use std::fs::File;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// One line of `authorized_keys`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthorizedKey {
    /// The sender's key.
    pub key: PublicKey,
    /// The rest of the line after the key (`user@host`, by `longhaul keygen`), if any.
    pub comment: Option<String>,
    /// The key's 1-based line in the file.
    pub line: usize,
}

/// The senders a receiver accepts.
#[derive(Clone, Debug)]
pub struct AuthorizedKeys {
    path: PathBuf,
    entries: Vec<AuthorizedKey>,
}

impl AuthorizedKeys {
    /// Reads `path`. A missing file, one without keys, or one that others may write is an error
    /// that says how to set it up.
    pub fn load(path: &Path) -> Result<AuthorizedKeys, KeyError> {
        let file = match File::open(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(KeyError::NoAuthorizedKeys { path: path.into() })
            }
            r => r.map_err(io_error(path))?,
        };
        let meta = file.metadata().map_err(io_error(path))?;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(KeyError::Writable {
                path: path.into(),
                mode,
            });
        }
        check_strict(path, &meta)?;
        let text = read_text(path, file)?;
        let mut entries = Vec::new();
        for (line, content) in lines(&text) {
            let (key, comment) = parse_public(content).map_err(|problem| KeyError::Parse {
                path: path.into(),
                line,
                problem,
            })?;
            entries.push(AuthorizedKey { key, comment, line });
        }
        if entries.is_empty() {
            return Err(KeyError::EmptyAuthorizedKeys { path: path.into() });
        }
        Ok(AuthorizedKeys {
            path: path.into(),
            entries,
        })
    }

    /// The file the keys were read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `key` is listed.
    pub fn contains(&self, key: &PublicKey) -> bool {
        self.get(key).is_some()
    }

    /// The entry of `key` (its comment names the sender in a log line).
    pub fn get(&self, key: &PublicKey) -> Option<&AuthorizedKey> {
        self.entries.iter().find(|e| e.key == *key)
    }

    /// Every key line, in file order.
    pub fn entries(&self) -> &[AuthorizedKey] {
        &self.entries
    }

    /// The set of keys.
    pub fn keys(&self) -> std::collections::HashSet<PublicKey> {
        self.entries.iter().map(|e| e.key).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::tests::*;
    use crate::keys::KeyPair;

    #[test]
    fn authorized_keys_with_comments_and_blank_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("authorized_keys");
        write(
            &path,
            &format!(
                "# senders allowed here\n\nlonghaul-x25519 {ALICE_PUBLIC} alice@laptop\n   \n\
                 \t# bob's workstation\n  longhaul-x25519 {BOB_PUBLIC}\n"
            ),
            0o644,
        );
        let auth = AuthorizedKeys::load(&path).unwrap();
        assert_eq!(auth.entries().len(), 2);
        assert!(auth.contains(&key(ALICE_PUBLIC)) && auth.contains(&key(BOB_PUBLIC)));
        assert!(!auth.contains(&KeyPair::generate().unwrap().public));
        let a = auth.get(&key(ALICE_PUBLIC)).unwrap();
        assert_eq!((a.line, a.comment.as_deref()), (3, Some("alice@laptop")));
        assert_eq!(auth.get(&key(BOB_PUBLIC)).unwrap().line, 6);
        assert_eq!(auth.keys().len(), 2);
        assert_eq!(auth.path(), path);
    }

    #[test]
    fn authorized_keys_errors_say_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("authorized_keys");

        let e = AuthorizedKeys::load(&path).unwrap_err().to_string();
        assert!(
            e.contains("does not exist, so no sender is authorized"),
            "{e}"
        );
        assert!(
            e.contains("`longhaul keygen`") && e.contains("append"),
            "{e}"
        );

        write(&path, "# nobody yet\n\n", 0o644);
        let e = AuthorizedKeys::load(&path).unwrap_err().to_string();
        assert!(e.contains("lists no keys"), "{e}");

        write(
            &path,
            &format!("# ok\nlonghaul-x25519 {ALICE_PUBLIC}\nlonghaul-x25519 {ALICE_PUBLIC}x\n"),
            0o644,
        );
        let e = AuthorizedKeys::load(&path).unwrap_err();
        assert!(
            e.to_string().starts_with(&format!(
                "{}, line 3: the key is not valid base64",
                path.display()
            )),
            "{e}"
        );

        write(&path, &format!("longhaul-x25519 {ALICE_PUBLIC}\n"), 0o666);
        let e = AuthorizedKeys::load(&path).unwrap_err().to_string();
        assert!(e.contains("writable by group or others (mode 0666)"), "{e}");
        assert!(e.contains("chmod go-w"), "{e}");
    }
}
