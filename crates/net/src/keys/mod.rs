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

mod authorized;
mod error;
mod files;
mod key;
mod known_hosts;
mod strict;
mod text;

pub use authorized::{AuthorizedKey, AuthorizedKeys};
pub use error::KeyError;
pub use files::{
    check_comment, created_text, default_comment, read_private_key, read_public_key, write_keypair,
};
pub use key::{KeyPair, PublicKey};
pub use known_hosts::{host_name, HostCheck, KnownHost, KnownHosts, Trust};

use std::path::{Path, PathBuf};

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

#[cfg(test)]
mod tests;
