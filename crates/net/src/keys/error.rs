//! What can go wrong with a key, a key file or a trust file, each message saying what to do
//! about it.

use super::{PublicKey, HOME_ENV, MAX_FILE, PRIVATE_FORMAT};
use std::io;
use std::path::{Path, PathBuf};
use thiserror::Error;

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

pub(super) fn io_error(path: &Path) -> impl FnOnce(io::Error) -> KeyError + '_ {
    move |source| KeyError::Io {
        path: path.to_path_buf(),
        source,
    }
}
