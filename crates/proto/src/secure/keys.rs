//! The key schedule after the handshake: one chain of keys per direction, and key updates.
//!
//! The handshake leaves two 32-byte secrets, one per direction (Noise's split: the first
//! protects what the client sends, the second what the server sends). Each direction's secret
//! is the root of a chain: the next secret is `HKDF-Expand(current, "longhaul key update", 32)`
//! with SHA-256 (as QUIC's key update, RFC 9001 §6, derives "quic ku"), and each secret gives one
//! AEAD key. The chain only goes forward: an old secret cannot be computed from a newer one, so
//! a key stolen later does not open what was sealed before.
//!
//! **Sender.** Seals with its current key and counts. When the count reaches the key's limit
//! ([`super::KeyLimits::packets_per_key`]: RFC 9001's confidentiality limit), it moves to the next
//! secret and counts the generation up; the datagram's `key_phase` byte is the generation
//! modulo 256. The directions are independent: each sender updates on its own count, and
//! nothing needs to be confirmed by the peer.
//!
//! **Receiver.** Keeps the current key, the next one already derived (so a datagram of the new
//! phase costs one trial decryption, no key derivation — nothing a forger can make expensive),
//! and the previous one for datagrams reordered across the update. The key phase of a datagram
//! says which to try: the current generation, the previous one, or one to [`MAX_KEY_SKIP`]
//! ahead (the sender may have moved on more than once while every datagram of a generation was
//! lost; beyond that the datagram is refused unopened). Only a datagram that authenticates
//! under a newer key moves the receiver forward. The previous key is dropped once the
//! anti-replay window has passed the first seal number of the current generation: anything
//! sealed under it would be refused as too old anyway.

use super::seal::{Cipher, OpenFailed, PacketKey};
use aws_lc_rs::hkdf;
use std::sync::Arc;

/// How many generations ahead of its own a receiver follows a sender.
pub const MAX_KEY_SKIP: u8 = 4;

const KEY_UPDATE_LABEL: &[u8] = b"longhaul key update";

/// A 32-byte secret, overwritten when dropped.
pub struct Secret([u8; 32]);

impl Secret {
    /// A secret of these bytes.
    pub fn new(bytes: [u8; 32]) -> Secret {
        Secret(bytes)
    }

    /// The next secret of the chain.
    pub fn next(&self) -> Secret {
        struct Len32;
        impl hkdf::KeyType for Len32 {
            fn len(&self) -> usize {
                32
            }
        }
        let prk = hkdf::Prk::new_less_safe(hkdf::HKDF_SHA256, &self.0);
        let mut out = [0u8; 32];
        prk.expand(&[KEY_UPDATE_LABEL], Len32)
            .and_then(|okm| okm.fill(&mut out))
            .expect("32 bytes is within HKDF-SHA256's output limit");
        Secret(out)
    }

    /// The secret's bytes.
    pub(super) fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    fn key(&self, cipher: Cipher) -> PacketKey {
        PacketKey::new(cipher, &self.0)
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        for b in self.0.iter_mut() {
            // Volatile, so the store is not optimized away as dead.
            unsafe { std::ptr::write_volatile(b, 0) };
        }
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// The sending direction's chain.
#[derive(Debug)]
pub struct SendKeys {
    cipher: Cipher,
    secret: Secret,
    /// Shared with the seals not yet applied (`super::PendingSeal`), which may be on another
    /// thread when the key moves on.
    key: Arc<PacketKey>,
    generation: u64,
    sealed_with_key: u64,
    packets_per_key: u64,
}

impl SendKeys {
    /// The chain rooted at `secret`, moving to the next key after `packets_per_key` datagrams (at
    /// least 1).
    pub fn new(cipher: Cipher, secret: Secret, packets_per_key: u64) -> SendKeys {
        SendKeys {
            cipher,
            key: Arc::new(secret.key(cipher)),
            secret,
            generation: 0,
            sealed_with_key: 0,
            packets_per_key: packets_per_key.max(1),
        }
    }

    /// The key for the next datagram and its key phase; moves to the next key first if the
    /// current one has sealed its limit (`updated` then says so).
    pub fn next_key(&mut self) -> (&Arc<PacketKey>, u8, bool) {
        let mut updated = false;
        if self.sealed_with_key >= self.packets_per_key {
            self.secret = self.secret.next();
            let key = self.secret.key(self.cipher);
            match Arc::get_mut(&mut self.key) {
                // No pending seal holds the old key: its allocation is reused (a connection
                // that seals as it writes allocates nothing per key update).
                Some(old) => *old = key,
                None => self.key = Arc::new(key),
            }
            self.generation += 1;
            self.sealed_with_key = 0;
            updated = true;
        }
        self.sealed_with_key += 1;
        (&self.key, self.generation as u8, updated)
    }

    /// How many times the sender has moved to the next key.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}

/// Which key opened a datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opened {
    /// The current (or the previous) key.
    Current,
    /// A key `n` generations ahead: the receiver has moved to it.
    Updated(u8),
}

/// Why a datagram could not be opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// Its key phase names no generation the receiver keeps or follows (not tried).
    UnknownPhase {
        /// The datagram's key phase.
        phase: u8,
        /// The receiver's current generation, modulo 256.
        current: u8,
    },
    /// It did not authenticate.
    Failed,
}

/// The keys a receiver holds at one moment: its current generation's, the next one's (derived
/// in advance) and, for a while after an update, the previous one's. Opening with them changes
/// nothing, so a copy ([`RecvKeys::held`]) can open datagrams on another thread; whether an
/// opened datagram is then accepted is the receiver's decision ([`RecvKeys::accept`]).
#[derive(Clone, Debug)]
pub struct HeldKeys {
    generation: u64,
    current: Arc<PacketKey>,
    next: Arc<PacketKey>,
    /// The previous generation's key, while datagrams sealed under it may still arrive.
    previous: Option<Arc<PacketKey>>,
    /// The first seal number opened under the current generation.
    first_of_current: u64,
}

impl HeldKeys {
    /// Open the sealed datagram in `buf` in place with the key its phase names, if held:
    /// the current, the next, or the previous (for a seal number from before the current
    /// generation began). Returns the plain length and the key's generation.
    pub fn open(
        &self,
        phase: u8,
        seal_number: u64,
        buf: &mut [u8],
    ) -> Result<(usize, u64), OpenError> {
        let ahead = phase.wrapping_sub(self.generation as u8);
        let (key, generation) = match ahead {
            0 => (&self.current, self.generation),
            1 => (&self.next, self.generation + 1),
            u8::MAX => match &self.previous {
                Some(k) if seal_number < self.first_of_current => (k, self.generation - 1),
                _ => return Err(self.unknown(phase)),
            },
            _ => return Err(self.unknown(phase)),
        };
        key.open(seal_number, buf)
            .map(|n| (n, generation))
            .map_err(|OpenFailed| OpenError::Failed)
    }

    fn unknown(&self, phase: u8) -> OpenError {
        OpenError::UnknownPhase {
            phase,
            current: self.generation as u8,
        }
    }
}

/// `key` in `slot`'s allocation if nothing else holds it, else in a new one.
fn reuse(slot: Option<Arc<PacketKey>>, key: PacketKey) -> Arc<PacketKey> {
    if let Some(mut shared) = slot {
        if let Some(k) = Arc::get_mut(&mut shared) {
            *k = key;
            return shared;
        }
    }
    Arc::new(key)
}

/// The receiving direction's keys.
#[derive(Debug)]
pub struct RecvKeys {
    cipher: Cipher,
    held: HeldKeys,
    /// The next generation's secret.
    next_secret: Secret,
    /// Counts every change of `held`, so that a copy can tell it is out of date.
    epoch: u64,
}

impl RecvKeys {
    /// The chain rooted at `secret`, with the next key already derived.
    pub fn new(cipher: Cipher, secret: Secret) -> RecvKeys {
        let next_secret = secret.next();
        RecvKeys {
            cipher,
            held: HeldKeys {
                generation: 0,
                current: Arc::new(secret.key(cipher)),
                next: Arc::new(next_secret.key(cipher)),
                previous: None,
                first_of_current: 0,
            },
            next_secret,
            epoch: 0,
        }
    }

    /// The generation of the current key (how many times the sender moved on, as followed).
    pub fn generation(&self) -> u64 {
        self.held.generation
    }

    /// The keys held now, to open datagrams elsewhere; and the epoch they belong to.
    pub fn held(&self) -> (HeldKeys, u64) {
        (self.held.clone(), self.epoch)
    }

    /// Counts every change of the keys held; a copy of an older epoch is out of date.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Open a sealed datagram in place with the key its phase names; a datagram that
    /// authenticates under a newer generation moves the receiver to it.
    pub fn open(
        &mut self,
        phase: u8,
        seal_number: u64,
        buf: &mut [u8],
    ) -> Result<(usize, Opened), OpenError> {
        let ahead = phase.wrapping_sub(self.held.generation as u8);
        if (2..=MAX_KEY_SKIP).contains(&ahead) {
            // Several generations ahead: derived for this datagram, kept only if it opens.
            let (secret, key) = self.ahead(ahead);
            let n = key
                .open(seal_number, buf)
                .map_err(|OpenFailed| OpenError::Failed)?;
            self.jump(ahead, secret, key, seal_number);
            return Ok((n, Opened::Updated(ahead)));
        }
        let (n, generation) = self.held.open(phase, seal_number, buf)?;
        let how = self
            .accept(generation, seal_number)
            .expect("a held key's generation is accepted");
        Ok((n, how))
    }

    /// A datagram numbered `seal_number` authenticated under generation `generation`'s key
    /// (here, or elsewhere with keys held at some earlier epoch): whether this receiver takes
    /// it now, moving to that generation if it is newer. Refused: a generation behind the
    /// previous one, or the previous one once it has expired or for a seal number from after
    /// the current one began, or one further ahead than [`MAX_KEY_SKIP`].
    pub fn accept(&mut self, generation: u64, seal_number: u64) -> Result<Opened, OpenError> {
        let current = self.held.generation;
        let unknown = OpenError::UnknownPhase {
            phase: generation as u8,
            current: current as u8,
        };
        if generation == current {
            return Ok(Opened::Current);
        }
        if generation + 1 == current {
            return match self.held.previous {
                Some(_) if seal_number < self.held.first_of_current => Ok(Opened::Current),
                _ => Err(unknown),
            };
        }
        if generation < current || generation - current > MAX_KEY_SKIP as u64 {
            return Err(unknown);
        }
        let ahead = (generation - current) as u8;
        if ahead == 1 {
            self.step(seal_number);
        } else {
            let (secret, key) = self.ahead(ahead);
            self.jump(ahead, secret, key, seal_number);
        }
        Ok(Opened::Updated(ahead))
    }

    /// To the next generation: its key was derived in advance; the current becomes previous.
    fn step(&mut self, seal_number: u64) {
        let secret = self.next_secret.next();
        // The previous key's allocation takes the new next key, unless a copy of the held
        // keys still uses it.
        let next = reuse(self.held.previous.take(), secret.key(self.cipher));
        drop(std::mem::replace(&mut self.next_secret, secret));
        let old_next = std::mem::replace(&mut self.held.next, next);
        let old_current = std::mem::replace(&mut self.held.current, old_next);
        self.held.previous = Some(old_current);
        self.held.generation += 1;
        self.held.first_of_current = seal_number;
        self.epoch += 1;
    }

    /// The secret and key `k` ≥ 2 generations ahead of the current one.
    fn ahead(&self, k: u8) -> (Secret, PacketKey) {
        let mut secret = self.next_secret.next();
        for _ in 2..k {
            secret = secret.next();
        }
        let key = secret.key(self.cipher);
        (secret, key)
    }

    /// `k` ≥ 2 generations ahead, to `secret` and its `key`: nothing between is kept.
    fn jump(&mut self, k: u8, secret: Secret, key: PacketKey, seal_number: u64) {
        self.next_secret = secret.next();
        self.held.next = Arc::new(self.next_secret.key(self.cipher));
        self.held.current = Arc::new(key);
        self.held.previous = None;
        self.held.generation += k as u64;
        self.held.first_of_current = seal_number;
        self.epoch += 1;
    }

    /// Drop the previous key once the anti-replay window has moved past the first seal number
    /// of the current generation (`oldest`: the window's oldest acceptable number).
    pub fn expire_previous(&mut self, oldest: u64) {
        if self.held.previous.is_some() && oldest > self.held.first_of_current {
            self.held.previous = None;
            self.epoch += 1;
        }
    }

    /// Whether the previous generation's key is still held.
    pub fn has_previous(&self) -> bool {
        self.held.previous.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::SEAL_HEADER_LEN;

    fn seal(tx: &mut SendKeys, n: u64, byte: u8) -> Vec<u8> {
        let mut buf = vec![0u8; 64];
        buf[SEAL_HEADER_LEN] = byte;
        let (key, phase, _) = tx.next_key();
        let len = key.seal(phase, n, &mut buf, 1).unwrap();
        buf.truncate(len);
        buf
    }

    fn open(rx: &mut RecvKeys, d: &[u8]) -> Result<(u8, Opened), OpenError> {
        let mut b = d.to_vec();
        let n = u64::from_be_bytes(b[3..11].try_into().unwrap());
        let (len, how) = rx.open(b[2], n, &mut b)?;
        assert_eq!(len, 1);
        Ok((b[SEAL_HEADER_LEN], how))
    }

    #[test]
    fn receiver_follows_updates_and_keeps_the_previous_key_for_reordering() {
        let mut tx = SendKeys::new(Cipher::ChaCha20Poly1305, Secret::new([1; 32]), 3);
        let mut rx = RecvKeys::new(Cipher::ChaCha20Poly1305, Secret::new([1; 32]));
        let d: Vec<_> = (0..12u64).map(|n| seal(&mut tx, n, n as u8)).collect();
        assert_eq!(tx.generation(), 3);
        assert_eq!(open(&mut rx, &d[0]), Ok((0, Opened::Current)));
        // 3 opens generation 1 before the reordered 2 (generation 0) arrives.
        assert_eq!(open(&mut rx, &d[3]), Ok((3, Opened::Updated(1))));
        assert_eq!(open(&mut rx, &d[2]), Ok((2, Opened::Current)));
        assert!(rx.has_previous());
        // Generation 2 lost entirely: 9 (generation 3) skips ahead.
        assert_eq!(open(&mut rx, &d[9]), Ok((9, Opened::Updated(2))));
        assert_eq!(rx.generation(), 3);
        assert_eq!(open(&mut rx, &d[11]), Ok((11, Opened::Current)));
        // A datagram of the old generations is refused without a trial.
        assert!(matches!(
            open(&mut rx, &d[4]),
            Err(OpenError::UnknownPhase { .. })
        ));
        // A phase far ahead is not tried either.
        let mut far = d[11].clone();
        far[2] = 3 + MAX_KEY_SKIP + 1;
        assert!(matches!(
            open(&mut rx, &far),
            Err(OpenError::UnknownPhase { .. })
        ));
        // A forged datagram of the next phase fails and leaves the receiver where it was.
        let mut forged = d[11].clone();
        forged[2] = 4;
        assert_eq!(open(&mut rx, &forged), Err(OpenError::Failed));
        assert_eq!(rx.generation(), 3);
    }

    /// What a datagram opened elsewhere may do: the generations `accept` takes are exactly
    /// those `open` would have used, judged at the time of accepting.
    #[test]
    fn accept_takes_the_generations_open_would_have_used() {
        let mut rx = RecvKeys::new(Cipher::ChaCha20Poly1305, Secret::new([2; 32]));
        let (copy, epoch) = rx.held();
        assert_eq!(rx.accept(0, 0), Ok(Opened::Current));
        assert_eq!(rx.accept(1, 10), Ok(Opened::Updated(1)));
        assert!(rx.epoch() > epoch, "stepping moves the epoch");
        // The previous generation, for numbers from before the step only.
        assert_eq!(rx.accept(0, 9), Ok(Opened::Current));
        assert!(rx.accept(0, 11).is_err());
        // Once expired, never again.
        rx.expire_previous(11);
        assert!(rx.accept(0, 9).is_err());
        // Too far ahead is refused; up to MAX_KEY_SKIP is followed.
        assert!(rx.accept(1 + MAX_KEY_SKIP as u64 + 1, 20).is_err());
        assert_eq!(rx.accept(4, 20), Ok(Opened::Updated(3)));
        assert!(rx.accept(2, 19).is_err(), "two behind");
        // A copy of the keys taken before is out of date, and its keys open what they opened.
        assert_eq!(copy.generation, 0);
        assert_eq!(rx.generation(), 4);
    }

    #[test]
    fn the_chain_only_goes_forward_and_differs_per_step() {
        let a = Secret::new([9; 32]);
        let b = a.next();
        let c = b.next();
        assert_ne!(a.0, b.0);
        assert_ne!(b.0, c.0);
        assert_eq!(Secret::new([9; 32]).next().0, b.0);
    }

    /// Known answers for the chain: two steps of HKDF-Expand from a fixed secret, pinned, so
    /// that a change of the derivation (its label, its hash, its implementation) fails here.
    /// (For 32 bytes, HKDF-Expand is one HMAC-SHA256 of the label and a 1 byte under the
    /// secret, RFC 5869 §2.3: any HMAC gives these values.)
    #[test]
    fn the_key_chain_is_the_pinned_hkdf_outputs() {
        let first = Secret::new(std::array::from_fn(|i| 0xa0 ^ i as u8));
        let second = first.next();
        let third = second.next();
        assert_eq!(
            crate::secure::hex(&second.0),
            "7d46c0b0bc4ea9f97b076b025fd6cca0f06d487d30c8e4876dfe6d2527fb6c52"
        );
        assert_eq!(
            crate::secure::hex(&third.0),
            "dc865c1f21746d622553eb14b5df9b917959080a92426eb26ee5b97aaf052cb7"
        );
    }
}
