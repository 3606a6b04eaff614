//! Keys and trust, the way ssh does it: a key pair per host or user, an `authorized_keys` file on
//! the receiver, a `known_hosts` file on the sender.
//!
//! The handshake (Noise XX over X25519) authenticates each end by a static X25519 key pair. This
//! module makes, stores and reads those keys, and decides whom to trust; it does no cryptography
//! of its own (keys come from `x25519-dalek`, randomness from the operating system).
//!
//! # Files
//!
//! All live in `~/.longhaul/` (`$LONGHAUL_HOME` instead, when set): [`home`]. As ssh's
//! `StrictModes` has it, a file is not used when it or the directory holding it belongs to
//! another user than the one running longhaul (or root), or when group or others may write that
//! directory.
//!
//! `id_x25519`, the private key, mode 0600, created by `longhaul keygen`. Lines starting with `#`
//! and blank lines are comments; exactly one line holds the key, 32 bytes in standard base64:
//!
//! ```text
//! # longhaul private key (X25519). Keep it secret: readable by its owner only (chmod 600).
//! longhaul-x25519-private dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=
//! ```
//!
//! It is refused when group or others may read it, as ssh refuses such a key.
//!
//! `id_x25519.pub`, the public half, one line: the key type, the key, and an optional comment
//! (the rest of the line; `longhaul keygen` puts `user@host` there):
//!
//! ```text
//! longhaul-x25519 hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo= alice@laptop
//! ```
//!
//! (The examples use the key pairs of RFC 7748's test vectors: published, so never trust them.)
//!
//! `authorized_keys`, on the receiver: the senders it accepts, one public-key line each (as in
//! their `.pub` files), with `#` comments and blank lines. A missing or empty file is an error,
//! not an open door.
//!
//! `known_hosts`, on the sender: the receivers' keys, one line each, the host as the user named
//! it, then the key; several names for one key are separated by commas:
//!
//! ```text
//! data.example.org longhaul-x25519 3p7bfXt9wbTTW2HC7OQ1Nz+DQ8hbeGdNrfx+FG+IK08=
//! [data.example.org]:7000,192.0.2.7 longhaul-x25519 hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo=
//! ```
//!
//! Host names are compared in lowercase; the default port (5301) is left out, any other is
//! written `[host]:port` as ssh writes it (`host:port` is read too). The sender trusts a host on
//! first use ([`KnownHosts::check_or_learn`]) and refuses a host whose key changed, naming the
//! line to remove if the change is expected.
//!
//! # Fingerprints
//!
//! A key is shown to people as `SHA256:` and the unpadded base64 of the SHA-256 of its 32 bytes
//! ([`PublicKey::fingerprint`]), as ssh shows its keys.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use longhaul_proto::secure::Identity;
use rand_core::{OsRng, RngCore};
use sha2::{Digest, Sha256};
use std::fmt;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use thiserror::Error;
use zeroize::{Zeroize, Zeroizing};

/// The key type word of a public key line.
pub const KEY_TYPE: &str = "longhaul-x25519";
/// The key type word of a private key file's key line.
pub const PRIVATE_KEY_TYPE: &str = "longhaul-x25519-private";
/// The environment variable that replaces `~/.longhaul`.
pub const HOME_ENV: &str = "LONGHAUL_HOME";
/// A key's length in bytes (X25519).
pub const KEY_LEN: usize = 32;

/// The largest key or trust file read: they hold a few lines, and a bigger one is a mistake
/// (or a device) that must not fill memory.
const MAX_FILE: u64 = 1 << 20;

const PUBLIC_FORMAT: &str = "`longhaul-x25519 <base64 key> [comment]`";
const PRIVATE_FORMAT: &str = "`longhaul-x25519-private <base64 key>`";
const HOST_FORMAT: &str = "`HOST[:PORT] longhaul-x25519 <base64 key>`";

/// What went wrong with a key or trust file, or a key: each message says what to do about it.
#[derive(Debug, Error)]
pub enum KeyError {
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// Neither `$HOME` nor `$LONGHAUL_HOME` is set, so the key directory is unknown.
    #[error(
        "cannot tell where longhaul's keys live: neither $HOME nor ${HOME_ENV} is set \
         (set ${HOME_ENV} to the directory to use)"
    )]
    NoHome,
    /// A line of a key or trust file (or the file's bytes) cannot be read.
    #[error("{}, line {line}: {problem}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with the line.
        problem: String,
    },
    /// A path to read, or to write with `--force`, names a directory, device or other
    /// non-file.
    #[error("{} is not a regular file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// A key file to write exists as something other than a regular file.
    #[error(
        "{} is a symbolic link, device, FIFO or socket; a key is written only as a regular file, \
         never through a link or into a device: remove it or choose another path",
        path.display()
    )]
    NotRegular {
        /// The path.
        path: PathBuf,
    },
    /// A key or trust file is larger than the 1 MiB any such file needs.
    #[error("{} is larger than {MAX_FILE} bytes: not a longhaul key or trust file", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
    },
    /// The private key file does not exist.
    #[error("no private key at {}: create one with `longhaul keygen`", path.display())]
    NoPrivateKey {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The private key file has no key line.
    #[error("{} holds no private key: expected a line {PRIVATE_FORMAT}", path.display())]
    EmptyPrivateKey {
        /// The file.
        path: PathBuf,
    },
    /// The private key file may be read by group or others.
    #[error(
        "permissions {mode:04o} for {path} are too open: a private key must be readable by its \
         owner only, so it is not used; run `chmod 600 {path}`",
        path = path.display()
    )]
    TooOpen {
        /// The private key file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// `authorized_keys` may be written by group or others.
    #[error(
        "{path} is writable by group or others (mode {mode:04o}), and whoever can write it can \
         authorize a sender; run `chmod go-w {path}`",
        path = path.display()
    )]
    Writable {
        /// The `authorized_keys` file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The directory of a key or trust file is writable by group or others (ssh's StrictModes
    /// refuses the same).
    #[error(
        "{dir} is writable by group or others (mode {mode:04o}), and whoever can write it can \
         put another file in the place of {file}, so that is not used; run `chmod go-w {dir}`",
        dir = dir.display(),
        file = file.display()
    )]
    DirWritable {
        /// The directory.
        dir: PathBuf,
        /// The key or trust file in it.
        file: PathBuf,
        /// The directory's permission bits.
        mode: u32,
    },
    /// A key or trust file, or its directory, belongs to another user than the one running
    /// longhaul (and not to root).
    #[error(
        "{path} belongs to uid {owner}, not to uid {me} that runs longhaul or to root, and its \
         owner can change it, so it is not used; if it is yours, run `chown {me} {path}`",
        path = path.display()
    )]
    NotOwned {
        /// The file or directory.
        path: PathBuf,
        /// Its owner's uid.
        owner: u32,
        /// The uid running longhaul.
        me: u32,
    },
    /// A key file to create exists already (without `--force`).
    #[error(
        "{} already exists; it is kept (`longhaul keygen --force` replaces it, and every peer \
         that trusts the old key then needs the new one)",
        path.display()
    )]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// `authorized_keys` does not exist.
    #[error(
        "{path} does not exist, so no sender is authorized: on each sending host run \
         `longhaul keygen`, then append the line of its `~/.longhaul/id_x25519.pub` to {path} \
         on this host (one key per line)",
        path = path.display()
    )]
    NoAuthorizedKeys {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// `authorized_keys` holds no key.
    #[error(
        "{} lists no keys, so no sender is authorized: append the line of each sender's \
         `~/.longhaul/id_x25519.pub` (made by `longhaul keygen` there)",
        path.display()
    )]
    EmptyAuthorizedKeys {
        /// The file.
        path: PathBuf,
    },
    /// Text given as a public key is not one; says why.
    #[error("not a public key: {0}")]
    BadKey(String),
    /// A comment or host name that cannot be written on a key line; says why.
    #[error("{0}")]
    BadText(String),
    /// The operating system's random number generator failed while making a key.
    #[error("the system's random number generator failed: {0}")]
    Random(String),
    /// The receiver presented a key other than the one `known_hosts` holds for it.
    #[error(
        "the receiver's key changed: {host} presented {got}, but line {line} of {path} holds \
         {expected} for it. Someone may be intercepting the connection, or the receiver got a new \
         key. If you expect this, remove line {line} of {path} and connect again.",
        got = got.fingerprint(),
        expected = expected.fingerprint(),
        path = path.display()
    )]
    HostKeyChanged {
        /// The host as the user named it.
        host: String,
        /// The `known_hosts` file.
        path: PathBuf,
        /// The line of `known_hosts` that holds the recorded key.
        line: usize,
        /// The key recorded for the host.
        expected: PublicKey,
        /// The key the receiver presented.
        got: PublicKey,
    },
    /// This end needs a key pair and its key file does not exist.
    #[error(
        "the {role} needs a key pair and there is none at {}: run `longhaul keygen` (or \
         pass --identity FILE); to send without authentication on a closed test network, \
         start both ends with --insecure",
        path.display()
    )]
    NoKeyPair {
        /// `sender` or `receiver`.
        role: String,
        /// Where the key file was looked for.
        path: PathBuf,
    },
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> KeyError + '_ {
    move |source| KeyError::Io {
        path: path.to_path_buf(),
        source,
    }
}

// ---------------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------------

/// An X25519 public key: what a peer's `authorized_keys` or `known_hosts` holds, and what the
/// handshake's remote static key is compared with.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PublicKey(pub [u8; KEY_LEN]);

impl PublicKey {
    /// The key's 32 bytes.
    pub fn as_bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }

    /// The key in standard base64, as key lines write it.
    pub fn to_base64(&self) -> String {
        STANDARD.encode(self.0)
    }

    /// `SHA256:<unpadded base64 of SHA-256 of the key>`, as ssh prints its fingerprints.
    pub fn fingerprint(&self) -> String {
        format!("SHA256:{}", STANDARD_NO_PAD.encode(Sha256::digest(self.0)))
    }

    /// The public key line: `longhaul-x25519 <base64> [comment]`.
    pub fn to_line(&self, comment: Option<&str>) -> String {
        match comment {
            Some(c) if !c.is_empty() => format!("{self} {c}"),
            _ => self.to_string(),
        }
    }

    /// One public key line (as in a `.pub` file or `authorized_keys`): the key and its comment.
    pub fn parse_line(line: &str) -> Result<(PublicKey, Option<String>), KeyError> {
        parse_public(line.trim()).map_err(KeyError::BadKey)
    }
}

/// `longhaul-x25519 <base64>`, the line without a comment.
impl fmt::Display for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{KEY_TYPE} {}", self.to_base64())
    }
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.to_base64())
    }
}

/// A public key line (its comment dropped) or the bare base64 key, e.g. from `--peer-key`.
impl FromStr for PublicKey {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Self, KeyError> {
        let s = s.trim();
        if s.split_whitespace().count() == 1 && s != KEY_TYPE {
            return decode_key(s).map(PublicKey).map_err(KeyError::BadKey);
        }
        Ok(PublicKey::parse_line(s)?.0)
    }
}

/// The handshake's remote static key (e.g. snow's `get_remote_static`) as a public key; an
/// error unless it has 32 bytes.
impl TryFrom<&[u8]> for PublicKey {
    type Error = KeyError;

    fn try_from(bytes: &[u8]) -> Result<Self, KeyError> {
        <[u8; KEY_LEN]>::try_from(bytes)
            .map(PublicKey)
            .map_err(|_| KeyError::BadKey(format!("{} bytes; a key has {KEY_LEN}", bytes.len())))
    }
}

/// A static X25519 key pair. The private half is wiped from memory when the pair is dropped.
#[derive(Clone)]
pub struct KeyPair {
    private: [u8; KEY_LEN],
    /// The public half.
    pub public: PublicKey,
}

impl KeyPair {
    /// A new key pair from the operating system's random number generator.
    pub fn generate() -> Result<KeyPair, KeyError> {
        let mut bytes = Zeroizing::new([0u8; KEY_LEN]);
        OsRng
            .try_fill_bytes(&mut bytes[..])
            .map_err(|e| KeyError::Random(e.to_string()))?;
        Ok(KeyPair::from_private(&bytes))
    }

    /// The pair of a private key (any 32 bytes: X25519 clamps them where they are used). The
    /// public half is computed by the transport's own X25519 (`longhaul_proto`'s Noise
    /// resolver), so a key file and the handshake can never disagree.
    pub fn from_private(private: &[u8; KEY_LEN]) -> KeyPair {
        let public = PublicKey(Identity::from_private(*private).public_key());
        KeyPair {
            private: *private,
            public,
        }
    }

    /// This pair as the transport's identity for the handshake.
    pub fn identity(&self) -> Identity {
        Identity::from_private(self.private)
    }

    /// The private key's bytes, for the handshake (e.g. snow's `local_private_key`).
    pub fn private_bytes(&self) -> &[u8; KEY_LEN] {
        &self.private
    }
}

impl Drop for KeyPair {
    fn drop(&mut self) {
        self.private.zeroize();
    }
}

/// Never prints the private key.
impl fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyPair")
            .field("public", &self.public)
            .field("private", &"<secret>")
            .finish()
    }
}

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

// ---------------------------------------------------------------------------------------------
// Locations
// ---------------------------------------------------------------------------------------------

/// `$LONGHAUL_HOME`, or `~/.longhaul`.
pub fn home() -> Result<PathBuf, KeyError> {
    home_from(std::env::var_os(HOME_ENV), std::env::var_os("HOME"))
}

/// [`home`] from the values of `$LONGHAUL_HOME` and `$HOME` (an empty one counts as unset).
fn home_from(
    longhaul_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Result<PathBuf, KeyError> {
    if let Some(h) = longhaul_home.filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(h));
    }
    match home.filter(|h| !h.is_empty()) {
        Some(h) => Ok(Path::new(&h).join(".longhaul")),
        None => Err(KeyError::NoHome),
    }
}

/// `~/.longhaul/id_x25519`: this host's (or user's) private key.
pub fn default_private_key() -> Result<PathBuf, KeyError> {
    Ok(home()?.join("id_x25519"))
}

/// `~/.longhaul/authorized_keys`: the senders a receiver accepts.
pub fn default_authorized_keys() -> Result<PathBuf, KeyError> {
    Ok(home()?.join("authorized_keys"))
}

/// `~/.longhaul/known_hosts`: the receivers' keys a sender has seen.
pub fn default_known_hosts() -> Result<PathBuf, KeyError> {
    Ok(home()?.join("known_hosts"))
}

/// The public key file beside a private key: its name with `.pub` added.
pub fn public_key_path(private: &Path) -> PathBuf {
    let mut name = private.as_os_str().to_os_string();
    name.push(".pub");
    PathBuf::from(name)
}

// ---------------------------------------------------------------------------------------------
// Key files
// ---------------------------------------------------------------------------------------------

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
fn create_parent(path: &Path) -> Result<(), KeyError> {
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

// ---------------------------------------------------------------------------------------------
// authorized_keys
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// known_hosts
// ---------------------------------------------------------------------------------------------

/// How a host is named in `known_hosts`: lowercase, without the default port, `[host]:port`
/// with another one. Takes what the user typed: `host`, `host:port`, `[host]:port`, `[v6]`, or a
/// bare IPv6 address. (Anything else is kept as it is, lowercased.)
pub fn host_name(spec: &str) -> String {
    let s = spec.trim().to_lowercase();
    let (host, port) = if let Some(inner) = s.strip_prefix('[') {
        match inner.split_once(']') {
            Some((h, "")) => (h.to_string(), None),
            Some((h, rest)) => match rest.strip_prefix(':').and_then(|p| p.parse::<u16>().ok()) {
                Some(p) => (h.to_string(), Some(p)),
                None => return s,
            },
            None => return s,
        }
    } else if let Some((h, p)) = s.split_once(':').filter(|(_, p)| !p.contains(':')) {
        match p.parse::<u16>() {
            Ok(p) => (h.to_string(), Some(p)),
            Err(_) => return s,
        }
    } else {
        return s;
    };
    match port {
        Some(p) if p != crate::DEFAULT_PORT => format!("[{host}]:{p}"),
        _ => host,
    }
}

/// One line of `known_hosts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownHost {
    /// The names, as [`host_name`] makes them.
    pub hosts: Vec<String>,
    /// The host's key.
    pub key: PublicKey,
    /// The entry's 1-based line in the file.
    pub line: usize,
}

/// What `known_hosts` says of a host and the key it presented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostCheck {
    /// The file holds this key for the host.
    Known,
    /// The file says nothing of the host.
    Unknown,
    /// The file holds another key for the host, on `line`.
    Mismatch {
        /// The key the file holds for the host.
        expected: PublicKey,
        /// The 1-based line that holds it.
        line: usize,
    },
}

/// What [`KnownHosts::check_or_learn`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trust {
    /// The host's key was in the file already.
    Known,
    /// First contact: the key was added to the file, on `line`.
    Learned {
        /// The 1-based line the key was written on.
        line: usize,
    },
}

/// The receivers' keys a sender has seen.
#[derive(Clone, Debug)]
pub struct KnownHosts {
    path: PathBuf,
    entries: Vec<KnownHost>,
}

impl KnownHosts {
    /// Reads `path`; a missing file knows no host.
    pub fn load(path: &Path) -> Result<KnownHosts, KeyError> {
        let mut known = KnownHosts {
            path: path.into(),
            entries: Vec::new(),
        };
        let file = match File::open(path) {
            // `add` would create it there.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                check_directory(path)?;
                return Ok(known);
            }
            r => r.map_err(io_error(path))?,
        };
        check_strict(path, &file.metadata().map_err(io_error(path))?)?;
        let text = read_text(path, file)?;
        for (line, content) in lines(&text) {
            let entry = parse_known_host(content, line).map_err(|problem| KeyError::Parse {
                path: path.into(),
                line,
                problem,
            })?;
            known.entries.push(entry);
        }
        Ok(known)
    }

    /// The file the entries were read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every entry, in file order.
    pub fn entries(&self) -> &[KnownHost] {
        &self.entries
    }

    /// The key recorded for `host` (as the user typed it; see [`host_name`]).
    pub fn lookup(&self, host: &str) -> Option<PublicKey> {
        self.entries_for(&host_name(host)).next().map(|e| e.key)
    }

    /// What the file says of `host` (as the user typed it) presenting `key`; a host listed with
    /// several keys is known if any of them matches.
    pub fn check(&self, host: &str, key: &PublicKey) -> HostCheck {
        let name = host_name(host);
        if self.entries_for(&name).any(|e| e.key == *key) {
            return HostCheck::Known;
        }
        let first = self.entries_for(&name).next().map(|e| (e.key, e.line));
        match first {
            Some((expected, line)) => HostCheck::Mismatch { expected, line },
            None => HostCheck::Unknown,
        }
    }

    /// Appends `host key` to the file (created, with its directory, if missing), flushed to disk
    /// before it returns; the line number it got.
    pub fn add(&mut self, host: &str, key: &PublicKey) -> Result<usize, KeyError> {
        let name = host_name(host);
        if name.is_empty()
            || name
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == ',' || c == '#')
        {
            return Err(KeyError::BadText(format!(
                "{} cannot be recorded in {}: a host name has no spaces, commas, `#` or \
                 control characters",
                shown(host),
                self.path.display()
            )));
        }
        let path = self.path.clone();
        create_parent(&path)?;
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .mode(0o644)
            .open(&path)
            .map_err(io_error(&path))?;
        // What is there now (another sender may have added a line since `load`): its line
        // count, and whether its last line lacks a newline.
        let mut existing = Vec::new();
        (&mut file)
            .take(MAX_FILE)
            .read_to_end(&mut existing)
            .map_err(io_error(&path))?;
        let mut record = String::new();
        let mut line = existing.iter().filter(|&&b| b == b'\n').count() + 1;
        if existing.last().is_some_and(|&b| b != b'\n') {
            record.push('\n');
            line += 1;
        }
        record.push_str(&format!("{name} {key}\n"));
        // One write on an O_APPEND file: concurrent appenders do not interleave within it.
        file.write_all(record.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(io_error(&path))?;
        self.entries.push(KnownHost {
            hosts: vec![name],
            key: *key,
            line,
        });
        Ok(line)
    }

    /// Trust on first use: a known key passes, an unknown host's key is added to the file, and
    /// another key than the recorded one is [`KeyError::HostKeyChanged`].
    pub fn check_or_learn(&mut self, host: &str, key: &PublicKey) -> Result<Trust, KeyError> {
        match self.check(host, key) {
            HostCheck::Known => Ok(Trust::Known),
            HostCheck::Unknown => Ok(Trust::Learned {
                line: self.add(host, key)?,
            }),
            HostCheck::Mismatch { expected, line } => Err(KeyError::HostKeyChanged {
                host: host_name(host),
                path: self.path.clone(),
                line,
                expected,
                got: *key,
            }),
        }
    }

    fn entries_for<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a KnownHost> + 'a {
        self.entries
            .iter()
            .filter(move |e| e.hosts.iter().any(|h| h == name))
    }
}

fn parse_known_host(content: &str, line: usize) -> Result<KnownHost, String> {
    let (hosts, rest) = split_word(content);
    if hosts == KEY_TYPE {
        return Err(format!("the line names no host: expected {HOST_FORMAT}"));
    }
    if hosts.starts_with('|') || hosts.starts_with('@') {
        return Err(format!(
            "hashed names and `@` markers are not supported: expected {HOST_FORMAT}"
        ));
    }
    let (key, _comment) = parse_public(rest).map_err(|p| {
        if rest.is_empty() {
            format!("a host without a key: expected {HOST_FORMAT}")
        } else {
            p
        }
    })?;
    let hosts: Vec<String> = hosts.split(',').map(host_name).collect();
    if hosts.iter().any(String::is_empty) {
        return Err(format!("an empty host name: expected {HOST_FORMAT}"));
    }
    Ok(KnownHost { hosts, key, line })
}

// ---------------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------------

/// `longhaul-x25519 <base64> [comment]`; the problem in words otherwise.
fn parse_public(line: &str) -> Result<(PublicKey, Option<String>), String> {
    let (word, rest) = split_word(line);
    if word != KEY_TYPE {
        return Err(match word {
            "" => format!("no key: expected {PUBLIC_FORMAT}"),
            PRIVATE_KEY_TYPE => "this is a private key: use the line of the `.pub` file beside \
                                 it, and keep the private key secret"
                .into(),
            w if w.starts_with("ssh-") || w.starts_with("ecdsa-") => format!(
                "{} is an ssh key; longhaul has keys of its own (`longhaul keygen`): \
                 expected {PUBLIC_FORMAT}",
                shown(w)
            ),
            _ => format!("expected {PUBLIC_FORMAT}, found {}", shown(line)),
        });
    }
    let (key, comment) = split_word(rest);
    if key.is_empty() {
        return Err(format!(
            "`{KEY_TYPE}` without a key: expected {PUBLIC_FORMAT}"
        ));
    }
    let key = decode_key(key)?;
    Ok((
        PublicKey(key),
        Some(comment.to_string()).filter(|c| !c.is_empty()),
    ))
}

/// 32 bytes in standard base64 (44 characters with the padding).
fn decode_key(text: &str) -> Result<[u8; KEY_LEN], String> {
    let bytes = Zeroizing::new(
        STANDARD
            .decode(text)
            .map_err(|e| format!("the key is not valid base64 ({e})"))?,
    );
    <[u8; KEY_LEN]>::try_from(bytes.as_slice()).map_err(|_| {
        format!(
            "the key decodes to {} bytes; a longhaul key has {KEY_LEN}",
            bytes.len()
        )
    })
}

/// The first whitespace-separated word and the rest, trimmed.
fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    }
}

/// The lines that carry content (1-based numbers), without blank and `#` lines.
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// ssh's StrictModes for a key or trust file, given the open file's metadata: the file belongs
/// to the user running longhaul or to root, and so does the directory holding it, which group
/// and others may not write ([`check_directory`]).
fn check_strict(path: &Path, meta: &std::fs::Metadata) -> Result<(), KeyError> {
    use std::os::unix::fs::MetadataExt;
    owned(path, meta.uid())?;
    check_directory(path)
}

/// The directory holding `path` (`~/.longhaul`) belongs to the user running longhaul or to
/// root, and group and others may not write it (whoever can write it can replace the files in
/// it, sticky bit or not, as ssh decides). A directory that cannot be looked at is left to the
/// file's own errors.
fn check_directory(path: &Path) -> Result<(), KeyError> {
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

/// A file's text, bounded in size; bytes that are not UTF-8 are an error naming their line.
fn read_text(path: &Path, file: File) -> Result<String, KeyError> {
    let meta = file.metadata().map_err(io_error(path))?;
    if !meta.is_file() {
        return Err(KeyError::NotAFile { path: path.into() });
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error(path))?;
    if bytes.len() as u64 > MAX_FILE {
        bytes.zeroize();
        return Err(KeyError::TooLarge { path: path.into() });
    }
    String::from_utf8(bytes).map_err(|e| {
        let line = e.as_bytes()[..e.utf8_error().valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        e.into_bytes().zeroize();
        KeyError::Parse {
            path: path.into(),
            line,
            problem: "not text (UTF-8): is this the right file?".into(),
        }
    })
}

/// Text from a file, quoted for an error message: escaped and cut short.
fn shown(s: &str) -> String {
    const MAX: usize = 40;
    let cut: String = s.chars().take(MAX).collect();
    let more = if s.chars().count() > MAX { "…" } else { "" };
    format!("`{}{more}`", cut.escape_debug())
}

#[cfg(test)]
mod tests;
