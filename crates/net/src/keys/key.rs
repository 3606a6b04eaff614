//! The keys themselves: an X25519 public key as key lines write it and people compare it (its
//! fingerprint), and a key pair whose private half is wiped from memory when dropped.

use super::text::{decode_key, parse_public};
use super::{KeyError, KEY_LEN, KEY_TYPE};
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use longhaul_proto::secure::Identity;
use rand_core::{OsRng, RngCore};
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;
use zeroize::{Zeroize, Zeroizing};

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
    pub(super) private: [u8; KEY_LEN],
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::tests::*;

    #[test]
    fn key_pair_is_standard_x25519() {
        let pair = alice();
        assert_eq!(pair.public, key(ALICE_PUBLIC));
        // The pairs agree on RFC 7748's shared secret: plain X25519, as Noise's 25519 DH is.
        let secret = x25519_dalek::StaticSecret::from(*pair.private_bytes());
        let shared = secret.diffie_hellman(&x25519_dalek::PublicKey::from(key(BOB_PUBLIC).0));
        assert_eq!(
            STANDARD.encode(shared.as_bytes()),
            "Sl2dW6TOLeFyjjv0gDUPJeB+IclH0Z4zdvCbPB4WF0I="
        );
        let a = KeyPair::generate().unwrap();
        let b = KeyPair::generate().unwrap();
        assert_ne!(a.public, b.public);
        assert_eq!(KeyPair::from_private(a.private_bytes()).public, a.public);
        let debug = format!("{pair:?}");
        assert!(
            !debug.contains(ALICE_PRIVATE) && debug.contains("<secret>"),
            "{debug}"
        );
    }

    #[test]
    fn fingerprint_is_sha256_unpadded_base64() {
        assert_eq!(key(ALICE_PUBLIC).fingerprint(), ALICE_FINGERPRINT);
        let fp = KeyPair::generate().unwrap().public.fingerprint();
        assert!(
            fp.starts_with("SHA256:") && fp.len() == 7 + 43 && !fp.contains('='),
            "{fp}"
        );
    }

    #[test]
    fn public_key_lines_round_trip() {
        let k = key(ALICE_PUBLIC);
        assert_eq!(k.to_string(), format!("longhaul-x25519 {ALICE_PUBLIC}"));
        let line = k.to_line(Some("alice@laptop (lab 2)"));
        assert_eq!(
            line,
            format!("longhaul-x25519 {ALICE_PUBLIC} alice@laptop (lab 2)")
        );
        let (parsed, comment) = PublicKey::parse_line(&format!("  {line}  \n")).unwrap();
        assert_eq!(parsed, k);
        assert_eq!(comment.as_deref(), Some("alice@laptop (lab 2)"));
        assert_eq!(PublicKey::parse_line(&k.to_line(None)).unwrap(), (k, None));
        // `--peer-key` may be given the line or the bare key.
        assert_eq!(line.parse::<PublicKey>().unwrap(), k);
        assert_eq!(format!(" {ALICE_PUBLIC} ").parse::<PublicKey>().unwrap(), k);
        assert_eq!(PublicKey::try_from(&k.0[..]).unwrap(), k);
        assert!(PublicKey::try_from(&k.0[..31]).is_err());
    }

    #[test]
    fn bad_public_key_lines_say_what_was_expected() {
        let cases = [
            (
                "",
                "no key: expected `longhaul-x25519 <base64 key> [comment]`",
            ),
            ("longhaul-x25519", "`longhaul-x25519` without a key"),
            (
                "longhaul-x25519 AAAA",
                "decodes to 3 bytes; a longhaul key has 32",
            ),
            ("longhaul-x25519 not*base64", "not valid base64"),
            ("ssh-ed25519 AAAAC3Nz u@h", "`ssh-ed25519` is an ssh key"),
            (
                &format!("longhaul-x25519-private {ALICE_PRIVATE}"),
                "this is a private key",
            ),
            (
                "rsa AAAA",
                "expected `longhaul-x25519 <base64 key> [comment]`, found `rsa AAAA`",
            ),
        ];
        for (line, expected) in cases {
            let e = PublicKey::parse_line(line).unwrap_err().to_string();
            assert!(e.contains(expected), "{line:?}: {e}");
        }
        assert!("longhaul-x25519".parse::<PublicKey>().is_err());
        assert!("x".parse::<PublicKey>().is_err());
        // What is quoted back is escaped and cut short.
        let e = PublicKey::parse_line(&format!("\x1b[31m{}", "y".repeat(100))).unwrap_err();
        let e = e.to_string();
        assert!(
            e.contains("\\u{1b}[31m") && e.contains('…') && !e.contains('\x1b'),
            "{e}"
        );
    }
}
