//! Key files: a key pair written as `longhaul keygen` writes it (the private key readable by its
//! owner only from the first moment), read back with the checks ssh makes, and what `keygen`
//! says of it.

use super::error::io_error;
use super::strict::{check_directory, check_strict};
use super::text::{decode_key, lines, parse_public, read_text, shown, split_word};
use super::{
    public_key_path, KeyError, KeyPair, PublicKey, KEY_TYPE, PRIVATE_FORMAT, PRIVATE_KEY_TYPE,
    PUBLIC_FORMAT,
};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// A comment as `longhaul keygen -C` takes it: one line of printable text.
pub fn check_comment(comment: &str) -> Result<(), KeyError> {
    if comment.chars().any(char::is_control) {
        return Err(KeyError::BadText(format!(
            "the comment {:?} holds a control character (a newline, a tab, an escape): \
             it must fit on the key's line",
            comment
        )));
    }
    Ok(())
}

/// What `longhaul keygen` says after writing a key pair: where the files are, the public key
/// line and its fingerprint, and what to do with them (`authorized`: this host's
/// authorized_keys file, as shown).
pub fn created_text(
    path: &Path,
    pub_path: &Path,
    public: &PublicKey,
    comment: Option<&str>,
    authorized: &str,
) -> String {
    format!(
        "Private key: {} (mode 0600; keep it secret)\n\
         Public key:  {}\n\
         \n\
         {}\n\
         fingerprint {}\n\
         \n\
         Next:\n  \
         - To send from this host: append the line above to\n    \
         ~/.longhaul/authorized_keys on each receiving host.\n  \
         - To receive on this host: append each sender's public key line to\n    \
         {authorized}.\n    \
         Senders record this host's key on first contact (their ~/.longhaul/known_hosts).",
        path.display(),
        pub_path.display(),
        public.to_line(comment),
        public.fingerprint()
    )
}

/// `user@host`, the comment `longhaul keygen` gives a key by default, as ssh-keygen does.
pub fn default_comment() -> Option<String> {
    let user = std::env::var("USER").ok().filter(|u| !u.is_empty());
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty());
    let comment = match (user, host) {
        (Some(u), Some(h)) => format!("{u}@{h}"),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => return None,
    };
    check_comment(&comment).ok().map(|()| comment)
}

/// Writes `pair` to `path` (mode 0600) and its public key line to `path.pub` (mode 0644), and
/// returns the latter's path. A directory that has to be created gets mode 0700; one that
/// exists must not be writable by group or others, as for every key file read. Without
/// `force`, an existing file at either path is an error and nothing is written.
pub fn write_keypair(
    path: &Path,
    pair: &KeyPair,
    comment: Option<&str>,
    force: bool,
) -> Result<PathBuf, KeyError> {
    if let Some(c) = comment {
        check_comment(c)?;
    }
    let pub_path = public_key_path(path);
    create_parent(path)?;
    // A key written where others may replace it would be refused when used (StrictModes).
    check_directory(path)?;
    // Both checked first, so that a refusal leaves no half of a new pair behind.
    for p in [path, &pub_path] {
        match p.symlink_metadata() {
            Ok(_) if !force => return Err(KeyError::Exists { path: p.into() }),
            // Renaming over a link or a device would replace it (a forced key written over
            // /dev/null would replace /dev/null); writing through it would put a secret where
            // the link points. Neither is asked for.
            Ok(m) if !m.is_file() => return Err(KeyError::NotRegular { path: p.into() }),
            _ => {}
        }
    }
    let encoded = Zeroizing::new(STANDARD.encode(pair.private));
    let private = Zeroizing::new(format!(
        "# longhaul private key (X25519). Keep it secret: readable by its owner only \
         (chmod 600).\n# Its public key is in {}.\n{PRIVATE_KEY_TYPE} {}\n",
        pub_path
            .file_name()
            .map_or("the .pub file".into(), |n| n.to_string_lossy()),
        encoded.as_str()
    ));
    write_file(path, private.as_bytes(), 0o600, force)?;
    let public = format!("{}\n", pair.public.to_line(comment));
    if let Err(e) = write_file(&pub_path, public.as_bytes(), 0o644, force) {
        if !force {
            // This call created the private key: take it back, so that a retry can succeed.
            let _ = std::fs::remove_file(path);
        }
        return Err(e);
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_error(dir))?;
    }
    Ok(pub_path)
}

/// Creates the directory `path` goes in, if missing, with mode 0700 (it holds a private key).
pub(super) fn create_parent(path: &Path) -> Result<(), KeyError> {
    match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.exists() => DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io_error(dir)),
        _ => Ok(()),
    }
}

/// Creates `path` with `mode` from the start (`O_CREAT|O_EXCL`), so that a secret is never
/// readable by others even for a moment. With `force`, the file is written under a temporary
/// name beside it and renamed over the old one.
fn write_file(path: &Path, contents: &[u8], mode: u32, force: bool) -> Result<(), KeyError> {
    let target = if force {
        let name = path.file_name().ok_or_else(|| KeyError::NotAFile {
            path: path.to_path_buf(),
        })?;
        let mut tmp = std::ffi::OsString::from(".");
        tmp.push(name);
        tmp.push(format!(".{}.tmp", std::process::id()));
        path.with_file_name(tmp)
    } else {
        path.to_path_buf()
    };
    let mut file = match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&target)
    {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && !force => {
            return Err(KeyError::Exists { path: target });
        }
        r => r.map_err(io_error(&target))?,
    };
    // The umask may have taken bits away from the public key's 0644.
    let written = file
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .and_then(|()| file.write_all(contents))
        .and_then(|()| file.sync_all());
    if let Err(e) = written {
        let _ = std::fs::remove_file(&target);
        return Err(io_error(&target)(e));
    }
    if force {
        if let Err(e) = std::fs::rename(&target, path) {
            let _ = std::fs::remove_file(&target);
            return Err(io_error(path)(e));
        }
    }
    Ok(())
}

/// Reads the private key at `path`, refusing it when group or others may read it.
pub fn read_private_key(path: &Path) -> Result<KeyPair, KeyError> {
    let file = match File::open(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(KeyError::NoPrivateKey { path: path.into() })
        }
        r => r.map_err(io_error(path))?,
    };
    // The mode of the file opened, not of whatever the name points to a moment later.
    let meta = file.metadata().map_err(io_error(path))?;
    if !meta.is_file() {
        return Err(KeyError::NotAFile { path: path.into() });
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(KeyError::TooOpen {
            path: path.into(),
            mode,
        });
    }
    check_strict(path, &meta)?;
    let text = Zeroizing::new(read_text(path, file)?);
    let mut found: Option<KeyPair> = None;
    for (n, line) in lines(&text) {
        let problem = |problem: String| KeyError::Parse {
            path: path.into(),
            line: n,
            problem,
        };
        let (word, rest) = split_word(line);
        if word == PRIVATE_KEY_TYPE {
            let (key, extra) = split_word(rest);
            if found.is_some() {
                return Err(problem("a second private key; a key file holds one".into()));
            }
            if key.is_empty() {
                return Err(problem(format!(
                    "`{PRIVATE_KEY_TYPE}` without a key: expected {PRIVATE_FORMAT}"
                )));
            }
            if !extra.is_empty() {
                return Err(problem(format!(
                    "unexpected text after the key: expected {PRIVATE_FORMAT} \
                     (comments go on lines starting with #)"
                )));
            }
            let bytes = Zeroizing::new(decode_key(key).map_err(problem)?);
            found = Some(KeyPair::from_private(&bytes));
        } else if word == KEY_TYPE {
            return Err(problem(format!(
                "this is a public key: the private key is the file without `.pub`, \
                 holding {PRIVATE_FORMAT}"
            )));
        } else {
            return Err(problem(format!(
                "expected {PRIVATE_FORMAT}, found {}",
                shown(line)
            )));
        }
    }
    found.ok_or(KeyError::EmptyPrivateKey { path: path.into() })
}

/// Reads a public key file (`.pub`): its key line and the comment on it.
pub fn read_public_key(path: &Path) -> Result<(PublicKey, Option<String>), KeyError> {
    let file = File::open(path).map_err(io_error(path))?;
    let text = read_text(path, file)?;
    let mut lines = lines(&text);
    let Some((n, line)) = lines.next() else {
        return Err(KeyError::Parse {
            path: path.into(),
            line: 1,
            problem: format!("no key: expected {PUBLIC_FORMAT}"),
        });
    };
    let parsed = parse_public(line).map_err(|problem| KeyError::Parse {
        path: path.into(),
        line: n,
        problem,
    })?;
    if let Some((n, _)) = lines.next() {
        return Err(KeyError::Parse {
            path: path.into(),
            line: n,
            problem: "a second key; a public key file holds one".into(),
        });
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::tests::*;
    use std::fs;

    #[test]
    fn writes_a_pair_with_owner_only_private_key() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("new-home");
        let path = home.join("id_x25519");
        let pair = KeyPair::generate().unwrap();
        let pub_path = write_keypair(&path, &pair, Some("alice@laptop"), false).unwrap();
        assert_eq!(pub_path, home.join("id_x25519.pub"));
        assert_eq!(mode(&home), 0o700);
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&pub_path), 0o644);
        let read = read_private_key(&path).unwrap();
        assert_eq!(read.public, pair.public);
        assert_eq!(read.private_bytes(), pair.private_bytes());
        assert_eq!(
            fs::read_to_string(&pub_path).unwrap(),
            format!("{} alice@laptop\n", pair.public)
        );
        assert_eq!(
            read_public_key(&pub_path).unwrap(),
            (pair.public, Some("alice@laptop".into()))
        );
    }

    #[test]
    fn never_overwrites_without_force() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id_x25519");
        let first = KeyPair::generate().unwrap();
        write_keypair(&path, &first, None, false).unwrap();
        let before = (
            fs::read(&path).unwrap(),
            fs::read(public_key_path(&path)).unwrap(),
        );

        let second = KeyPair::generate().unwrap();
        let e = write_keypair(&path, &second, None, false).unwrap_err();
        assert!(
            matches!(&e, KeyError::Exists { path: p } if *p == path),
            "{e:?}"
        );
        assert!(e.to_string().contains("--force"), "{e}");
        let after = (
            fs::read(&path).unwrap(),
            fs::read(public_key_path(&path)).unwrap(),
        );
        assert_eq!(before, after);

        // A `.pub` alone also stops it, before any private key is written.
        let lone = dir.path().join("other");
        fs::write(public_key_path(&lone), "x").unwrap();
        let e = write_keypair(&lone, &second, None, false).unwrap_err();
        assert!(matches!(e, KeyError::Exists { .. }), "{e:?}");
        assert!(!lone.exists());

        // Even with force, a link or a FIFO in the way is refused and left as it was.
        let elsewhere = tempfile::tempdir().unwrap();
        let link = elsewhere.path().join("linked");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        let e = write_keypair(&link, &second, None, true).unwrap_err();
        assert!(matches!(e, KeyError::NotRegular { .. }), "{e:?}");
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        let fifo = elsewhere.path().join("fifo");
        nix::unistd::mkfifo(&public_key_path(&fifo), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = write_keypair(&fifo, &second, None, true).unwrap_err();
        assert!(
            e.to_string().contains("remove it or choose another path"),
            "{e}"
        );
        assert!(!fifo.exists(), "nothing written before the refusal");
        assert_eq!(before.0, fs::read(&path).unwrap());

        // With force, the pair is replaced, still owner-only, and no temporary file is left.
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        write_keypair(&path, &second, Some("new"), true).unwrap();
        assert_eq!(read_private_key(&path).unwrap().public, second.public);
        assert_eq!(mode(&path), 0o600);
        assert_eq!(
            read_public_key(&public_key_path(&path)).unwrap(),
            (second.public, Some("new".into()))
        );
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
    }

    #[test]
    fn refuses_a_comment_that_would_break_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id");
        let e = write_keypair(&path, &alice(), Some("a\nlonghaul-x25519 evil"), false).unwrap_err();
        assert!(e.to_string().contains("control character"), "{e}");
        assert!(!path.exists());
    }

    #[test]
    fn refuses_a_private_key_others_can_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id_x25519");
        write_keypair(&path, &alice(), None, false).unwrap();
        for bad in [0o644, 0o640, 0o604, 0o660] {
            fs::set_permissions(&path, fs::Permissions::from_mode(bad)).unwrap();
            let e = read_private_key(&path).unwrap_err();
            let text = e.to_string();
            let shown = path.display();
            assert!(
                text.starts_with(&format!("permissions {bad:04o} for {shown} are too open")),
                "{text}"
            );
            assert!(text.contains(&format!("chmod 600 {shown}")), "{text}");
        }
        for good in [0o600, 0o400] {
            fs::set_permissions(&path, fs::Permissions::from_mode(good)).unwrap();
            assert_eq!(read_private_key(&path).unwrap().public, key(ALICE_PUBLIC));
        }
        let e = read_private_key(&dir.path().join("missing")).unwrap_err();
        assert!(
            e.to_string().contains("create one with `longhaul keygen`"),
            "{e}"
        );
    }

    #[test]
    fn malformed_private_keys_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("id");
        let cases: &[(&str, usize, &str)] = &[
            (
                "# comment\n\nlonghaul-x25519-private AAAA\n",
                3,
                "decodes to 3 bytes",
            ),
            (
                "# mine\nhello\n",
                2,
                "expected `longhaul-x25519-private <base64 key>`, found `hello`",
            ),
            ("longhaul-x25519-private\n", 1, "without a key"),
            (
                &format!("longhaul-x25519-private {ALICE_PRIVATE} me@host\n"),
                1,
                "comments go on lines starting with #",
            ),
            (
                &format!("longhaul-x25519-private {ALICE_PRIVATE}\nlonghaul-x25519-private {ALICE_PRIVATE}\n"),
                2,
                "a second private key",
            ),
            (
                &format!("longhaul-x25519 {ALICE_PUBLIC} me\n"),
                1,
                "this is a public key",
            ),
        ];
        for (text, line, expected) in cases {
            write(&path, text, 0o600);
            let (n, problem) = parse_error(read_private_key(&path).unwrap_err());
            assert_eq!(n, *line, "{text:?}: {problem}");
            assert!(problem.contains(expected), "{text:?}: {problem}");
        }
        write(&path, "# nothing but a comment\n", 0o600);
        let e = read_private_key(&path).unwrap_err().to_string();
        assert!(e.contains("holds no private key"), "{e}");

        fs::write(&path, b"# ok\n\xff\xfe\n").unwrap();
        let (n, problem) = parse_error(read_private_key(&path).unwrap_err());
        assert_eq!(n, 2);
        assert!(problem.contains("not text"), "{problem}");

        // A comment and a CRLF line end are fine.
        write(
            &path,
            &format!("# x\r\nlonghaul-x25519-private {ALICE_PRIVATE}\r\n"),
            0o600,
        );
        assert_eq!(read_private_key(&path).unwrap().public, key(ALICE_PUBLIC));

        let e = read_private_key(dir.path()).unwrap_err();
        assert!(matches!(e, KeyError::NotAFile { .. }), "{e:?}");
    }
}
