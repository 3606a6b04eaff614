//! Sealing and opening one datagram: the AEAD suites, the nonce and the associated data.
//!
//! ```text
//! sealed datagram   version:u8  type:u8 (=9, SEALED)  key_phase:u8  seal_number:u64
//!                   ciphertext of the inner packet (DATA, ACK or CLOSE)  tag[16]
//!                   \______________ the clear header is the AAD ______________/
//! ```
//!
//! The nonce is 4 zero bytes followed by the seal number, big-endian: the sender counts every
//! sealed datagram of its direction (data, ACK and close alike), so no nonce is used twice under
//! one key, and the two directions use different keys. The clear header is authenticated as
//! associated data: a flipped key phase or seal number fails the tag check like a flipped
//! ciphertext byte. The inner packet is encrypted where it lies in the caller's buffer and the
//! tag goes after it (`seal_in_place_separate_tag`), so sealing allocates and copies nothing.
//!
//! Both suites are aws-lc-rs's: ChaCha20-Poly1305 (fast everywhere in software) and
//! AES-256-GCM (faster where the CPU has AES and carry-less multiplication instructions;
//! aws-lc picks its implementation from the CPU's features at run time). [`Cipher::preferred`]
//! is this host's faster one, measured when the process first asks (`choice.rs`).

use crate::packet::{self, SEAL_HEADER_LEN, SEAL_TAG_LEN};
use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use std::sync::Arc;

/// An AEAD suite for the datagrams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cipher {
    /// ChaCha20-Poly1305 (RFC 8439): fast without AES instructions.
    ChaCha20Poly1305,
    /// AES-256-GCM: fast where the CPU has AES and carry-less multiplication instructions.
    Aes256Gcm,
}

/// How much use one key and one connection may see before the key must change or the
/// connection must end (RFC 9001 §6.6 and Appendix B).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyLimits {
    /// Datagrams sealed under one key before the sender moves to the next key (the
    /// confidentiality limit).
    pub packets_per_key: u64,
    /// Datagrams that failed authentication, over the whole connection, after which it closes
    /// (the integrity limit: past it a forger's chance of success stops being negligible).
    pub failed_opens: u64,
}

impl Cipher {
    /// Every suite this build offers, in the order a client proposes them after its own choice.
    pub const ALL: [Cipher; 2] = [Cipher::Aes256Gcm, Cipher::ChaCha20Poly1305];

    /// The faster suite on this host, as measured once per process (`choice.rs`): AES-256-GCM
    /// where the CPU has AES and carry-less multiplication instructions (2.6× ChaCha20-Poly1305's
    /// rate on the development machine, `bench/README.md`), ChaCha20-Poly1305 where AES runs in
    /// software.
    pub fn preferred() -> Cipher {
        super::choice::fastest(super::choice::measured())
    }

    /// The suite's name as shown to people (`aes-256-gcm`, `chacha20-poly1305`).
    pub fn name(self) -> &'static str {
        match self {
            Cipher::ChaCha20Poly1305 => "chacha20-poly1305",
            Cipher::Aes256Gcm => "aes-256-gcm",
        }
    }

    /// The suite with this name (as [`Cipher::name`] spells it).
    pub fn from_name(name: &str) -> Option<Cipher> {
        Cipher::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The suite's number on the wire (in the handshake's proposal and choice).
    pub fn id(self) -> u8 {
        match self {
            Cipher::ChaCha20Poly1305 => 1,
            Cipher::Aes256Gcm => 2,
        }
    }

    /// The suite with this wire number, if this build knows it.
    pub fn from_id(id: u8) -> Option<Cipher> {
        Cipher::ALL.into_iter().find(|c| c.id() == id)
    }

    /// RFC 9001 §6.6's limits for the suite. AES-GCM: 2^23 datagrams per key (confidentiality)
    /// and 2^52 forgeries. ChaCha20-Poly1305 has no practical confidentiality limit (2^62); the
    /// key changes every 2^30 datagrams all the same, and 2^36 forgeries end the connection.
    pub fn default_limits(self) -> KeyLimits {
        match self {
            Cipher::Aes256Gcm => KeyLimits {
                packets_per_key: 1 << 23,
                failed_opens: 1 << 52,
            },
            Cipher::ChaCha20Poly1305 => KeyLimits {
                packets_per_key: 1 << 30,
                failed_opens: 1 << 36,
            },
        }
    }

    fn algorithm(self) -> &'static aead::Algorithm {
        match self {
            Cipher::ChaCha20Poly1305 => &aead::CHACHA20_POLY1305,
            Cipher::Aes256Gcm => &aead::AES_256_GCM,
        }
    }
}

impl std::fmt::Display for Cipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One direction's key of one generation, ready to seal or open.
pub struct PacketKey {
    key: LessSafeKey,
}

impl std::fmt::Debug for PacketKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PacketKey({})", self.key.algorithm().key_len() * 8)
    }
}

/// Authentication failed: the datagram was forged, damaged, or sealed under another key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFailed;

fn nonce(seal_number: u64) -> Nonce {
    let mut n = [0u8; aead::NONCE_LEN];
    n[4..].copy_from_slice(&seal_number.to_be_bytes());
    Nonce::assume_unique_for_key(n)
}

impl PacketKey {
    /// The key for `cipher` from 32 bytes of secret (both suites take 256-bit keys).
    pub fn new(cipher: Cipher, secret: &[u8; 32]) -> PacketKey {
        let unbound =
            UnboundKey::new(cipher.algorithm(), secret).expect("both suites take 32-byte keys");
        PacketKey {
            key: LessSafeKey::new(unbound),
        }
    }

    /// Seal the datagram in `buf`: the inner packet lies at `buf[SEAL_HEADER_LEN..][..inner]`;
    /// the clear header is written in front of it and the tag after it. Returns the datagram's
    /// length, or `None` if `buf` has no room for the tag.
    pub fn seal(
        &self,
        key_phase: u8,
        seal_number: u64,
        buf: &mut [u8],
        inner: usize,
    ) -> Option<usize> {
        let len = SEAL_HEADER_LEN + inner + SEAL_TAG_LEN;
        if buf.len() < len {
            return None;
        }
        packet::encode_sealed_header(key_phase, seal_number, buf)?;
        let (header, rest) = buf.split_at_mut(SEAL_HEADER_LEN);
        let (body, tail) = rest.split_at_mut(inner);
        let tag = self
            .key
            .seal_in_place_separate_tag(nonce(seal_number), Aad::from(&header[..]), body)
            .ok()?;
        tail[..SEAL_TAG_LEN].copy_from_slice(tag.as_ref());
        Some(len)
    }

    /// Open the sealed datagram in `buf` (header, ciphertext, tag) in place. On success the
    /// inner packet lies at `buf[SEAL_HEADER_LEN..][..n]` and `n` is returned; on failure the
    /// buffer's contents are unspecified.
    pub fn open(&self, seal_number: u64, buf: &mut [u8]) -> Result<usize, OpenFailed> {
        if buf.len() < SEAL_HEADER_LEN + SEAL_TAG_LEN {
            return Err(OpenFailed);
        }
        let (header, body) = buf.split_at_mut(SEAL_HEADER_LEN);
        self.key
            .open_in_place(nonce(seal_number), Aad::from(&header[..]), body)
            .map(|plain| plain.len())
            .map_err(|_| OpenFailed)
    }
}

/// A datagram's seal, decided but not yet applied: the key, key phase and seal number are
/// fixed when the connection writes the packet (seal numbers are the nonces and must follow
/// the order the connection hands them out), the encryption itself may run later and on
/// another thread (`Connection::poll_transmit_vectored`), which is how a driver takes the AEAD
/// work off the connection's thread.
///
/// The datagram's bytes are the plain packet until [`PendingSeal::apply`] runs: they must not
/// leave the host before it does. Dropping a pending seal sends nothing; its seal number is
/// simply never used (the receiver's replay window does not need numbers without gaps).
#[must_use = "the datagram is plain until the seal is applied"]
#[derive(Debug)]
pub struct PendingSeal {
    key: Arc<PacketKey>,
    key_phase: u8,
    seal_number: u64,
    inner: usize,
}

impl PendingSeal {
    pub(crate) fn new(
        key: Arc<PacketKey>,
        key_phase: u8,
        seal_number: u64,
        inner: usize,
    ) -> PendingSeal {
        PendingSeal {
            key,
            key_phase,
            seal_number,
            inner,
        }
    }

    /// The sealed datagram's length.
    pub fn len(&self) -> usize {
        SEAL_HEADER_LEN + self.inner + SEAL_TAG_LEN
    }

    /// Never empty: a sealed datagram has at least its header and tag.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Seal the datagram in place: `datagram` starts with the room for the seal's header,
    /// holds the plain packet after it and room for the tag (at least [`PendingSeal::len`]
    /// bytes, as the connection wrote it). Returns the sealed length, or `None` when
    /// `datagram` is too short (nothing is then sealed).
    pub fn apply(self, datagram: &mut [u8]) -> Option<usize> {
        self.key
            .seal(self.key_phase, self.seal_number, datagram, self.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_open_round_trip_and_every_flipped_bit_fails() {
        for cipher in Cipher::ALL {
            let k = PacketKey::new(cipher, &[7u8; 32]);
            let other = PacketKey::new(cipher, &[8u8; 32]);
            let mut buf = [0u8; 128];
            buf[SEAL_HEADER_LEN..SEAL_HEADER_LEN + 5].copy_from_slice(b"hello");
            let n = k.seal(3, 42, &mut buf, 5).unwrap();
            assert_eq!(n, 5 + SEAL_HEADER_LEN + SEAL_TAG_LEN);
            assert_eq!(&buf[..3], &[packet::VERSION, 9, 3]);
            assert_ne!(&buf[SEAL_HEADER_LEN..SEAL_HEADER_LEN + 5], b"hello");
            let sealed = buf[..n].to_vec();
            let mut b = sealed.clone();
            assert_eq!(k.open(42, &mut b), Ok(5));
            assert_eq!(&b[SEAL_HEADER_LEN..SEAL_HEADER_LEN + 5], b"hello");
            let mut b = sealed.clone();
            assert_eq!(
                other.open(42, &mut b),
                Err(OpenFailed),
                "{cipher}: wrong key"
            );
            let mut b = sealed.clone();
            assert_eq!(k.open(43, &mut b), Err(OpenFailed), "{cipher}: wrong nonce");
            for i in 0..n * 8 {
                let mut b = sealed.clone();
                b[i / 8] ^= 1 << (i % 8);
                assert_eq!(k.open(42, &mut b), Err(OpenFailed), "{cipher}: bit {i}");
            }
            for cut in 0..n {
                let mut b = sealed[..cut].to_vec();
                assert_eq!(k.open(42, &mut b), Err(OpenFailed));
            }
        }
    }

    #[test]
    fn names_and_ids_round_trip() {
        for c in Cipher::ALL {
            assert_eq!(Cipher::from_name(c.name()), Some(c));
            assert_eq!(Cipher::from_id(c.id()), Some(c));
        }
        assert_eq!(Cipher::from_id(0), None);
    }

    /// Known answers: one datagram sealed under each suite, its bytes pinned (header, ciphertext
    /// and tag), so that whatever changes the wire — the AEAD implementation, the nonce's
    /// layout, the associated data, the tag's place — fails here (other implementations of the
    /// suites, ring 0.17's and OpenSSL's, give these bytes too). The inner packet is 40 bytes:
    /// two whole AES blocks and a part.
    #[test]
    fn a_sealed_datagram_is_the_pinned_bytes() {
        let secret: [u8; 32] = std::array::from_fn(|i| i as u8);
        let inner: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5c).collect();
        for (cipher, expected) in [
            (Cipher::Aes256Gcm, "01090501020304050607085828733d15048bc1778ed324feda638776d09a216f803a63cd3acaeb3b5ad5ead3b1aecbf2bfefd9d5e15061d2016903145fc3c740d1fa30"),
            (Cipher::ChaCha20Poly1305, "0109050102030405060708b39fb3cb6d692ac364aec61d6a517d2999a5a2b2a4185a133f14aa593c85afa2cb89b9de026a7470cdbcd3cc6e4a540942c6c762b3e4a947"),
        ] {
            let k = PacketKey::new(cipher, &secret);
            let mut buf = [0u8; SEAL_HEADER_LEN + 40 + SEAL_TAG_LEN];
            buf[SEAL_HEADER_LEN..][..40].copy_from_slice(&inner);
            let n = k.seal(5, 0x0102_0304_0506_0708, &mut buf, 40).unwrap();
            assert_eq!(crate::secure::hex(&buf[..n]), expected, "{cipher}");
        }
    }
}
