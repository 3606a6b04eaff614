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
//! **A lent payload.** A data packet's payload usually lies in a buffer the application gave
//! (`send_buffer`'s [`Payload`]). Copying it after its header only to encrypt it there would
//! read and write every byte twice; instead [`PacketKey::seal_lent`] encrypts the header in
//! place and the payload from where it lies into the datagram after the header, tag last
//! (`seal_in_place_scatter`: one pass). The ciphertext is the one of the packet written whole —
//! AES-GCM and ChaCha20-Poly1305 are stream ciphers with one tag over the whole plaintext, so
//! where the plaintext lay changes nothing on the wire. AES-256-GCM does this at the rate of an
//! in-place seal; aws-lc's ChaCha20-Poly1305 encrypts a scattered part several times slower than
//! a contiguous one, so with that suite the payload is copied after the header and sealed in
//! place, as a whole packet is (the numbers: `bench/README.md`, "Sealing a lent payload").
//!
//! Three suites: aws-lc-rs's ChaCha20-Poly1305 (fast everywhere in software) and AES-256-GCM
//! (faster where the CPU has AES and carry-less multiplication instructions; aws-lc picks its
//! implementation from the CPU's features at run time), and libaegis's AEGIS-256X4
//! (draft-irtf-cfrg-aegis-aead: four AEGIS-256 lanes, built from the AES round function alone,
//! so where the CPU has AES instructions it seals and opens twice as fast as AES-256-GCM;
//! `bench/README.md`, "AEGIS-256X4"). AEGIS-256X4 takes a 256-bit key and a
//! 256-bit nonce: 24 zero bytes and the seal number, big-endian; its tag is 16 bytes, as the
//! others', so the datagram's layout is the same whatever the suite. It encrypts a lent payload
//! where it lies as AES-256-GCM does (one incremental pass: the header in place, then the
//! payload into the datagram). [`Cipher::preferred`] is this host's fastest suite, measured
//! when the process first asks (`choice.rs`).

use super::keys::Secret;
use crate::packet::{self, SEAL_HEADER_LEN, SEAL_TAG_LEN};
use crate::send_buffer::Payload;
use aegis::aegis256x4::Aegis256X4;
use aws_lc_rs::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use std::sync::Arc;

/// An AEAD suite for the datagrams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cipher {
    /// ChaCha20-Poly1305 (RFC 8439): fast without AES instructions.
    ChaCha20Poly1305,
    /// AES-256-GCM: fast where the CPU has AES and carry-less multiplication instructions.
    Aes256Gcm,
    /// AEGIS-256X4: faster still where the CPU has AES instructions.
    Aegis256X4,
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
    pub const ALL: [Cipher; 3] = [
        Cipher::Aes256Gcm,
        Cipher::ChaCha20Poly1305,
        Cipher::Aegis256X4,
    ];

    /// The fastest suite on this host, as measured once per process (`choice.rs`): one of the
    /// AES-based suites where the CPU has AES instructions (AEGIS-256X4 on the development
    /// machine, `bench/README.md`), ChaCha20-Poly1305 where AES runs in software.
    pub fn preferred() -> Cipher {
        super::choice::fastest(super::choice::measured())
    }

    /// The suite's name as shown to people (`aes-256-gcm`, `chacha20-poly1305`).
    pub fn name(self) -> &'static str {
        match self {
            Cipher::ChaCha20Poly1305 => "chacha20-poly1305",
            Cipher::Aes256Gcm => "aes-256-gcm",
            Cipher::Aegis256X4 => "aegis-256x4",
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
            Cipher::Aegis256X4 => 3,
        }
    }

    /// The suite with this wire number, if this build knows it.
    pub fn from_id(id: u8) -> Option<Cipher> {
        Cipher::ALL.into_iter().find(|c| c.id() == id)
    }

    /// RFC 9001 §6.6's limits for the suite. AES-GCM: 2^23 datagrams per key (confidentiality)
    /// and 2^52 forgeries. ChaCha20-Poly1305 has no practical confidentiality limit (2^62); the
    /// key changes every 2^30 datagrams all the same, and 2^36 forgeries end the connection.
    /// AEGIS-256X4 has no birthday bound on a key's use (its 256-bit nonces never repeat here)
    /// and a forgery succeeds with probability 2^-128 per try; it takes ChaCha20-Poly1305's
    /// limits, the lower of the two others'.
    pub fn default_limits(self) -> KeyLimits {
        match self {
            Cipher::Aes256Gcm => KeyLimits {
                packets_per_key: 1 << 23,
                failed_opens: 1 << 52,
            },
            Cipher::ChaCha20Poly1305 | Cipher::Aegis256X4 => KeyLimits {
                packets_per_key: 1 << 30,
                failed_opens: 1 << 36,
            },
        }
    }

    /// aws-lc's algorithm for the suite, if aws-lc implements it.
    fn algorithm(self) -> Option<&'static aead::Algorithm> {
        match self {
            Cipher::ChaCha20Poly1305 => Some(&aead::CHACHA20_POLY1305),
            Cipher::Aes256Gcm => Some(&aead::AES_256_GCM),
            Cipher::Aegis256X4 => None,
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
    cipher: Cipher,
    key: SuiteKey,
}

/// The key in the form its implementation takes.
enum SuiteKey {
    /// An aws-lc suite's key, expanded.
    AwsLc(LessSafeKey),
    /// AEGIS-256X4's key: its bytes (each call starts from key and nonce), overwritten when
    /// dropped.
    Aegis(Secret),
}

impl std::fmt::Debug for PacketKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PacketKey({})", self.cipher)
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

/// AEGIS-256X4's state for one datagram: the key and the 256-bit nonce of `seal_number`.
fn aegis(key: &Secret, seal_number: u64) -> Aegis256X4<SEAL_TAG_LEN> {
    let mut n = [0u8; 32];
    n[24..].copy_from_slice(&seal_number.to_be_bytes());
    Aegis256X4::new(key.bytes(), &n)
}

impl PacketKey {
    /// The key for `cipher` from 32 bytes of secret (every suite takes a 256-bit key).
    pub fn new(cipher: Cipher, secret: &[u8; 32]) -> PacketKey {
        let key = match cipher.algorithm() {
            Some(algorithm) => SuiteKey::AwsLc(LessSafeKey::new(
                UnboundKey::new(algorithm, secret).expect("aws-lc's suites take 32-byte keys"),
            )),
            None => SuiteKey::Aegis(Secret::new(*secret)),
        };
        PacketKey { cipher, key }
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
        match &self.key {
            SuiteKey::AwsLc(key) => {
                let tag = key
                    .seal_in_place_separate_tag(nonce(seal_number), Aad::from(&header[..]), body)
                    .ok()?;
                tail[..SEAL_TAG_LEN].copy_from_slice(tag.as_ref());
            }
            SuiteKey::Aegis(key) => {
                let tag = aegis(key, seal_number).encrypt_in_place(body, header);
                tail[..SEAL_TAG_LEN].copy_from_slice(&tag);
            }
        }
        Some(len)
    }

    /// [`PacketKey::seal`] of a datagram whose inner packet lies in two places: its first
    /// `inner` bytes (a data packet's header) at `buf[SEAL_HEADER_LEN..][..inner]`, the rest in
    /// `payload`, read where it lies. The ciphertext of both and the tag are written after the
    /// clear header, so the datagram is byte for byte the one `seal` makes of the packet written
    /// whole. Returns the datagram's length, or `None` if `buf` has no room for it (nothing is
    /// then sealed).
    pub fn seal_lent(
        &self,
        key_phase: u8,
        seal_number: u64,
        buf: &mut [u8],
        inner: usize,
        payload: &[u8],
    ) -> Option<usize> {
        let len = SEAL_HEADER_LEN + inner + payload.len() + SEAL_TAG_LEN;
        if buf.len() < len {
            return None;
        }
        if self.cipher == Cipher::ChaCha20Poly1305 {
            // Scattered input is slow in this suite (the module header): copy, then seal the
            // whole packet in place.
            buf[SEAL_HEADER_LEN + inner..][..payload.len()].copy_from_slice(payload);
            return self.seal(key_phase, seal_number, buf, inner + payload.len());
        }
        packet::encode_sealed_header(key_phase, seal_number, buf)?;
        let (header, rest) = buf.split_at_mut(SEAL_HEADER_LEN);
        let (head, tail) = rest.split_at_mut(inner);
        let tail = &mut tail[..payload.len() + SEAL_TAG_LEN];
        match &self.key {
            SuiteKey::AwsLc(key) => {
                key.seal_in_place_scatter(
                    nonce(seal_number),
                    Aad::from(&header[..]),
                    head,
                    payload,
                    tail,
                )
                .ok()?;
            }
            SuiteKey::Aegis(key) => {
                let (body, tag) = tail.split_at_mut(payload.len());
                let mut e = aegis(key, seal_number).encryptor(header);
                e.update_in_place(head);
                e.update(payload, body);
                tag.copy_from_slice(&e.finalize());
            }
        }
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
        match &self.key {
            SuiteKey::AwsLc(key) => key
                .open_in_place(nonce(seal_number), Aad::from(&header[..]), body)
                .map(|plain| plain.len())
                .map_err(|_| OpenFailed),
            SuiteKey::Aegis(key) => {
                let (text, tag) = body.split_at_mut(body.len() - SEAL_TAG_LEN);
                let tag: &[u8; SEAL_TAG_LEN] = (&*tag).try_into().expect("the tag's length");
                aegis(key, seal_number)
                    .decrypt_in_place(text, tag, header)
                    .map(|()| text.len())
                    .map_err(|_| OpenFailed)
            }
        }
    }
}

/// A datagram's seal, decided but not yet applied: the key, key phase and seal number are
/// fixed when the connection writes the packet (seal numbers are the nonces and must follow
/// the order the connection hands them out), the encryption itself may run later and on
/// another thread (`Connection::poll_transmit_vectored`), which is how a driver takes the AEAD
/// work off the connection's thread.
///
/// The datagram's bytes are the plain packet until [`PendingSeal::apply`] runs: they must not
/// leave the host before it does. A data packet's payload may be lent to the seal rather than
/// written into the datagram (a range of a buffer the application gave, `send_buffer`'s
/// [`Payload`]): the seal then holds it, reads it where it lies when applied and writes its
/// ciphertext into the datagram; the buffer goes back to the application only once the seal
/// is applied or dropped. Dropping a pending seal sends nothing; its seal number is simply
/// never used (the receiver's replay window does not need numbers without gaps).
#[must_use = "the datagram is plain until the seal is applied"]
#[derive(Debug)]
#[cfg_attr(test, derive(Clone))]
pub struct PendingSeal {
    key: Arc<PacketKey>,
    key_phase: u8,
    seal_number: u64,
    /// Bytes of the inner packet the connection wrote after the room for the clear header.
    inner: usize,
    /// The rest of the inner packet, lent: it follows those bytes in the plaintext.
    payload: Option<Payload>,
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
            payload: None,
        }
    }

    /// The seal, with `payload` lent to it: the inner packet is the `inner` bytes written and
    /// then the payload's bytes.
    pub(crate) fn lending(self, payload: Option<Payload>) -> PendingSeal {
        PendingSeal { payload, ..self }
    }

    /// The seal as the connection makes it when it copies the lent payload instead: the
    /// payload written into `datagram` after the bytes written, and sealed with them in place.
    /// (For tests that compare the two paths.)
    #[cfg(test)]
    pub(crate) fn written_whole(self, datagram: &mut [u8]) -> PendingSeal {
        let lent = self.lent();
        if let Some(p) = &self.payload {
            datagram[SEAL_HEADER_LEN + self.inner..][..lent].copy_from_slice(p.as_slice());
        }
        PendingSeal {
            inner: self.inner + lent,
            payload: None,
            ..self
        }
    }

    /// Bytes of the inner packet a lent payload brings (0 if none is lent).
    fn lent(&self) -> usize {
        self.payload.as_ref().map_or(0, Payload::len)
    }

    /// The sealed datagram's length.
    pub fn len(&self) -> usize {
        SEAL_HEADER_LEN + self.inner + self.lent() + SEAL_TAG_LEN
    }

    /// Never empty: a sealed datagram has at least its header and tag.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Seal the datagram: `datagram` starts with the room for the seal's header and holds the
    /// plain packet the connection wrote after it, then room for the rest (at least
    /// [`PendingSeal::len`] bytes, as the connection left it). A lent payload is encrypted from
    /// where it lies into that room, after the bytes written. Returns the sealed length, or
    /// `None` when `datagram` is too short (nothing is then sealed).
    pub fn apply(self, datagram: &mut [u8]) -> Option<usize> {
        match &self.payload {
            Some(p) => self.key.seal_lent(
                self.key_phase,
                self.seal_number,
                datagram,
                self.inner,
                p.as_slice(),
            ),
            None => self
                .key
                .seal(self.key_phase, self.seal_number, datagram, self.inner),
        }
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

    /// The pinned AES-256-GCM datagram (see `a_sealed_datagram_is_the_pinned_bytes`).
    const PINNED_AES: &str = "01090501020304050607085828733d15048bc1778ed324feda638776d09a216f803a63cd3acaeb3b5ad5ead3b1aecbf2bfefd9d5e15061d2016903145fc3c740d1fa30";

    /// Known answers: one datagram sealed under each suite, its bytes pinned (header, ciphertext
    /// and tag), so that whatever changes the wire — the AEAD implementation, the nonce's
    /// layout, the associated data, the tag's place — fails here (other implementations of the
    /// suites give these bytes too: ring 0.17's and OpenSSL's for the aws-lc suites, the `aegis`
    /// crate's pure-Rust one for AEGIS-256X4). The inner packet is 40 bytes:
    /// two whole AES blocks and a part.
    #[test]
    fn a_sealed_datagram_is_the_pinned_bytes() {
        let secret: [u8; 32] = std::array::from_fn(|i| i as u8);
        let inner: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5c).collect();
        for (cipher, expected) in [
            (Cipher::Aes256Gcm, PINNED_AES),
            (Cipher::ChaCha20Poly1305, "0109050102030405060708b39fb3cb6d692ac364aec61d6a517d2999a5a2b2a4185a133f14aa593c85afa2cb89b9de026a7470cdbcd3cc6e4a540942c6c762b3e4a947"),
            (Cipher::Aegis256X4, "0109050102030405060708e80846b50c2ea510cd950e96262c971cb4b177f73acceb58e049f5eb4428478f5969d1c3d72bc848f2eb74e93c9071e443b24a7a954d4057"),
        ] {
            let k = PacketKey::new(cipher, &secret);
            let mut buf = [0u8; SEAL_HEADER_LEN + 40 + SEAL_TAG_LEN];
            buf[SEAL_HEADER_LEN..][..40].copy_from_slice(&inner);
            let n = k.seal(5, 0x0102_0304_0506_0708, &mut buf, 40).unwrap();
            assert_eq!(crate::secure::hex(&buf[..n]), expected, "{cipher}");
        }
    }

    /// A payload lent from a buffer the application gave (as the send buffer lends one).
    fn lent(bytes: &[u8]) -> Payload {
        let mut b = crate::send_buffer::SendBuffer::new();
        b.push_owned(bytes.to_vec());
        b.lend(0, bytes.len()).expect("one owned buffer")
    }

    /// Sealing a packet whose payload is lent gives the bytes of sealing it written whole, for
    /// both suites, any split of the inner packet (a whole data header, a part of one, nothing)
    /// and payloads around the AES block size, up to a jumbo datagram's; the pinned datagram
    /// comes out of the lent path too. A buffer too short for the datagram is refused.
    #[test]
    fn a_lent_payload_seals_to_the_bytes_of_the_packet_written_whole() {
        let secret: [u8; 32] = std::array::from_fn(|i| (i * 11) as u8);
        let bytes: Vec<u8> = (0..9_100u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        for cipher in Cipher::ALL {
            let k = PacketKey::new(cipher, &secret);
            for inner in [0, 1, 16, packet::DATA_HEADER_LEN] {
                for lent_len in [0, 1, 15, 16, 17, 1_400, 9_000] {
                    let plain = &bytes[..inner + lent_len];
                    let len = SEAL_HEADER_LEN + plain.len() + SEAL_TAG_LEN;
                    let mut whole = vec![0u8; len];
                    whole[SEAL_HEADER_LEN..][..plain.len()].copy_from_slice(plain);
                    let n = k.seal(7, (1 << 40) | inner as u64, &mut whole, plain.len());
                    assert_eq!(n, Some(len));
                    let mut split = vec![0xeeu8; len + 5];
                    split[SEAL_HEADER_LEN..][..inner].copy_from_slice(&plain[..inner]);
                    let payload = &plain[inner..];
                    let n = k.seal_lent(7, (1 << 40) | inner as u64, &mut split, inner, payload);
                    assert_eq!(n, Some(len), "{cipher} {inner}+{lent_len}");
                    assert!(
                        split[..len] == whole[..],
                        "{cipher} {inner}+{lent_len}: the lent seal differs"
                    );
                    assert_eq!(
                        &split[len..],
                        &[0xee; 5],
                        "{cipher}: wrote past the datagram"
                    );
                    let mut short = vec![0u8; len - 1];
                    let n = k.seal_lent(7, 1, &mut short, inner, payload);
                    assert_eq!(n, None, "{cipher} {inner}+{lent_len}: too short");
                }
            }
        }
        let secret: [u8; 32] = std::array::from_fn(|i| i as u8);
        let inner: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37) ^ 0x5c).collect();
        let k = PacketKey::new(Cipher::Aes256Gcm, &secret);
        let mut buf = [0u8; SEAL_HEADER_LEN + 40 + SEAL_TAG_LEN];
        buf[SEAL_HEADER_LEN..][..29].copy_from_slice(&inner[..29]);
        let n = k.seal_lent(5, 0x0102_0304_0506_0708, &mut buf, 29, &inner[29..]);
        assert_eq!(crate::secure::hex(&buf[..n.unwrap()]), PINNED_AES);
    }

    /// A pending seal that holds a lent payload counts it in its length, seals it into the
    /// datagram after the bytes written, and opens to the packet; a datagram too short for it
    /// is refused.
    #[test]
    fn a_pending_seal_with_a_lent_payload_seals_it_after_the_bytes_written() {
        for cipher in Cipher::ALL {
            let key = Arc::new(PacketKey::new(cipher, &[3u8; 32]));
            let payload: Vec<u8> = (0..1_000u32).map(|i| (i % 251) as u8).collect();
            let seal = PendingSeal::new(Arc::clone(&key), 2, 9, 29).lending(Some(lent(&payload)));
            assert_eq!(seal.len(), SEAL_HEADER_LEN + 29 + 1_000 + SEAL_TAG_LEN);
            let mut d = vec![0u8; seal.len()];
            d[SEAL_HEADER_LEN..][..29].fill(0x29);
            assert_eq!(seal.clone().apply(&mut d[..seal.len() - 1]), None);
            assert_eq!(seal.apply(&mut d), Some(d.len()));
            let n = key.open(9, &mut d).unwrap();
            assert_eq!(n, 1_029);
            assert_eq!(&d[SEAL_HEADER_LEN..][..29], &[0x29; 29]);
            assert_eq!(&d[SEAL_HEADER_LEN + 29..][..1_000], &payload[..]);
        }
    }
}
