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
use ring::hkdf;
use std::sync::Arc;

/// How many generations ahead of its own a receiver follows a sender.
pub const MAX_KEY_SKIP: u8 = 4;

const KEY_UPDATE_LABEL: &[u8] = b"longhaul key update";

/// A 32-byte secret, overwritten when dropped.
pub struct Secret([u8; 32]);

impl Secret {
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
    UnknownPhase { phase: u8, current: u8 },
    /// It did not authenticate.
    Failed,
}

/// The receiving direction's keys.
#[derive(Debug)]
pub struct RecvKeys {
    cipher: Cipher,
    generation: u64,
    current: PacketKey,
    /// The next generation's secret and key, derived in advance.
    next_secret: Secret,
    next: PacketKey,
    /// The previous generation's key, while datagrams sealed under it may still arrive.
    previous: Option<PacketKey>,
    /// The first seal number opened under the current generation.
    first_of_current: u64,
}

impl RecvKeys {
    pub fn new(cipher: Cipher, secret: Secret) -> RecvKeys {
        let next_secret = secret.next();
        RecvKeys {
            cipher,
            generation: 0,
            current: secret.key(cipher),
            next: next_secret.key(cipher),
            next_secret,
            previous: None,
            first_of_current: 0,
        }
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Open `buf` (a whole sealed datagram) with the key its phase names; see
    /// [`PacketKey::open`]. A datagram that authenticates under a newer key moves the receiver
    /// to that generation.
    pub fn open(
        &mut self,
        phase: u8,
        seal_number: u64,
        buf: &mut [u8],
    ) -> Result<(usize, Opened), OpenError> {
        let ahead = phase.wrapping_sub(self.generation as u8);
        match ahead {
            0 => self
                .current
                .open(seal_number, buf)
                .map(|n| (n, Opened::Current))
                .map_err(|OpenFailed| OpenError::Failed),
            u8::MAX => match &self.previous {
                Some(k) if seal_number < self.first_of_current => k
                    .open(seal_number, buf)
                    .map(|n| (n, Opened::Current))
                    .map_err(|OpenFailed| OpenError::Failed),
                _ => Err(OpenError::UnknownPhase {
                    phase,
                    current: self.generation as u8,
                }),
            },
            1 => {
                let n = self
                    .next
                    .open(seal_number, buf)
                    .map_err(|OpenFailed| OpenError::Failed)?;
                self.advance(1, None, seal_number);
                Ok((n, Opened::Updated(1)))
            }
            k if k <= MAX_KEY_SKIP => {
                // Derive the generations in between; nothing is kept unless the datagram opens.
                let mut secret = self.next_secret.next();
                for _ in 2..k {
                    secret = secret.next();
                }
                let key = secret.key(self.cipher);
                let n = key
                    .open(seal_number, buf)
                    .map_err(|OpenFailed| OpenError::Failed)?;
                self.advance(k, Some((secret, key)), seal_number);
                Ok((n, Opened::Updated(k)))
            }
            _ => Err(OpenError::UnknownPhase {
                phase,
                current: self.generation as u8,
            }),
        }
    }

    /// Move `k` generations forward; `derived` is the new generation's secret and key when
    /// `k > 1` (for `k = 1` it is the prepared next one).
    fn advance(&mut self, k: u8, derived: Option<(Secret, PacketKey)>, seal_number: u64) {
        let (secret, key) = match derived {
            Some(sk) => sk,
            None => {
                let secret = self.next_secret.next();
                let key = secret.key(self.cipher);
                let old_next_secret = std::mem::replace(&mut self.next_secret, secret);
                let old_next = std::mem::replace(&mut self.next, key);
                // The new current generation is the old "next"; its own next is the fresh one.
                let old_current = std::mem::replace(&mut self.current, old_next);
                self.previous = Some(old_current);
                self.generation += 1;
                self.first_of_current = seal_number;
                drop(old_next_secret);
                return;
            }
        };
        // Skipped ahead: the previous generation's key is unknown here (its datagrams were all
        // lost or are still on the way; those are refused and their data resent).
        self.next_secret = secret.next();
        self.next = self.next_secret.key(self.cipher);
        self.current = key;
        self.previous = None;
        self.generation += k as u64;
        self.first_of_current = seal_number;
    }

    /// Forget the previous generation's key once the replay window no longer admits anything
    /// sealed under it (`oldest` is the oldest seal number the window still accepts).
    pub fn expire_previous(&mut self, oldest: u64) {
        if self.previous.is_some() && oldest > self.first_of_current {
            self.previous = None;
        }
    }

    pub fn has_previous(&self) -> bool {
        self.previous.is_some()
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

    #[test]
    fn the_chain_only_goes_forward_and_differs_per_step() {
        let a = Secret::new([9; 32]);
        let b = a.next();
        let c = b.next();
        assert_ne!(a.0, b.0);
        assert_ne!(b.0, c.0);
        assert_eq!(Secret::new([9; 32]).next().0, b.0);
    }
}
