//! # The secure transport: a Noise handshake, then every datagram sealed
//!
//! With [`Security::Noise`] in the [`crate::Config`], a connection authenticates both ends by
//! their static X25519 keys, agrees on fresh keys with forward secrecy, and from then on sends
//! only sealed datagrams: encrypted and authenticated, numbered for replay protection, under
//! keys that change before they wear out. [`Security::Off`] keeps the plain protocol (the
//! simulator's default, where crypto would only cost time). Everything here lives in the
//! connection's packet path, so the simulator and the UDP driver run the same code.
//!
//! ## The exchange
//!
//! ```text
//! client                                                    server
//!   INIT      e, ClientHello (window, mode, ciphers)   ->           (clear; hash-bound)
//!                             <-   RESPONSE  e, ee, s, es, ServerHello (pick)   (encrypted)
//!   check server key against PeerPolicy
//!   FINISH    s, se                                     ->
//!   SEALED data ...                                     ->   check client key; established
//!                             <-   SEALED ack ...
//! ```
//!
//! The Noise pattern is XX ([`handshake`] says why): one round trip before the client's data,
//! like TCP's. The transport's own opening fields (receive windows, synthetic mode, the
//! timestamp that gives the first RTT sample) ride in the Noise payloads, so the plain
//! HANDSHAKE packet is not used. The client proposes ciphers, the server picks
//! ([`Cipher::preferred`] on each end by default: the fastest suite this host measures,
//! AEGIS-256X4 or AES-256-GCM where the CPU has AES instructions, ChaCha20-Poly1305 elsewhere).
//!
//! Lost messages: the client resends its INIT, byte for byte, on the handshake timer (the
//! server answers a repeated INIT with its cached RESPONSE; the client takes no RTT sample from
//! a resent INIT, Karn's rule); the client resends FINISH on its retransmission timer until a
//! sealed datagram from the server shows that the server has the keys. Sealed datagrams that
//! arrive before the keys exist are dropped (their data is resent as after any loss).
//!
//! ## Trust
//!
//! [`PeerPolicy`] says whose static key is acceptable: [`PeerPolicy::Any`] (the caller decides
//! after the handshake, reading [`crate::Connection::peer_key`]: trust on first use),
//! [`PeerPolicy::Exactly`] one key, or an [`PeerPolicy::AllowList`]. A client whose server
//! presents another key closes with [`crate::CloseCode::PeerKeyMismatch`] before sending FINISH:
//! it neither reveals its identity nor sends a byte of data to the impostor. A server whose
//! client is not allowed answers FINISH with a sealed CLOSE [`crate::CloseCode::Unauthorized`]
//! and accepts none of its data.
//!
//! ## Sealed datagrams
//!
//! Each datagram after the handshake is one plain DATA, ACK or CLOSE packet sealed whole
//! ([`seal`]): a clear header `version, type, key_phase, seal_number` authenticated as
//! associated data, the packet encrypted in place, a 16-byte tag: [`crate::packet::SEAL_OVERHEAD`]
//! (27) bytes per datagram, which [`crate::Config::max_datagram_size`] and
//! [`crate::Config::mss_for`] count. The seal number counts every datagram a side seals and is
//! the nonce, so no nonce repeats under a key.
//!
//! The receiver, in this order: checks the seal number against its anti-replay window
//! ([`replay`]: duplicates and numbers too far behind are refused before any decryption), opens
//! the datagram with the key its phase names ([`keys`]), and only then marks the number seen and
//! lets the packet inside act on the connection. **Nothing in a datagram changes the
//! connection's state before it authenticates**: a forged, replayed, truncated or altered
//! datagram, or any clear DATA, ACK or CLOSE once security is on, is dropped and counted
//! ([`crate::Stats`]: `auth_failures`, `replays`, `too_old`, `unsealed`). This is what makes an
//! off-path CLOSE or an absurd packet number from a spoofed address harmless.
//!
//! ## Key updates and limits
//!
//! Each direction has its own chain of keys (next = HKDF-Expand(current, "longhaul key
//! update")); a sender moves to the next key after [`KeyLimits::packets_per_key`] datagrams
//! (RFC 9001 §6.6: 2^23 for AES-GCM, 2^30 chosen for ChaCha20-Poly1305 and AEGIS-256X4) and the
//! receiver follows the key phase ([`keys`]). After [`KeyLimits::failed_opens`] authentication
//! failures (2^52 for AES-GCM, 2^36 for the others) the connection closes with
//! [`crate::CloseCode::IntegrityLimit`].
//!
//! ## Address validation (RETRY)
//!
//! A server's driver may refuse to create a connection for an INIT until the client proves it
//! receives at its address: it answers with a RETRY carrying an opaque token (at most 64 bytes:
//! [`crate::packet::encode_retry`]), and the client sends its INIT again with the token, which
//! the driver reads with [`crate::packet::handshake_token`] before spending any state or
//! Diffie-Hellman work. What the token holds and when to demand one is the driver's business.
//! A client takes one RETRY, and only while it waits for the RESPONSE; the RETRY echoes the
//! INIT's ephemeral key, so only someone who saw the INIT can send one. An INIT is padded to at
//! least the size of what it draws, so a forged source address earns no amplification.
//!
//! ## State before the handshake ends
//!
//! A server connection waiting for FINISH holds the Noise state and the cached RESPONSE (a few
//! hundred bytes, no buffer sized by the configuration); receive and send buffers grow only with
//! data, and the buffer for opening datagrams is allocated when the keys are.
//!
//! ## Which cipher by default
//!
//! Sealing and opening a datagram costs the AES-based suites (AES-256-GCM, and AEGIS-256X4,
//! built from the AES round alone) a fraction of what it costs ChaCha20-Poly1305 where the CPU
//! has AES instructions, and more where it has none (`cargo bench -p longhaul-proto --bench
//! seal`; the measurements are in `bench/README.md`, "The secure transport's cost" and
//! "AEGIS-256X4"), so [`Cipher::preferred`] measures all three once per process ([`choice`]: a
//! few dozen datagrams each, well under a millisecond) and takes the fastest: AEGIS-256X4 on
//! the development machine, ChaCha20-Poly1305 where AES runs in software. The same entry gives a whole connection pair's cost per packet
//! plain and sealed (`cargo bench -p longhaul-proto --bench per_packet`).

pub mod choice;
pub mod handshake;
pub mod keys;
pub mod opener;
pub mod replay;
pub mod seal;
pub(crate) mod session;

pub use opener::{OpenAttempt, OpenedDatagram, Opener};
pub use seal::{Cipher, KeyLimits, PendingSeal};

use snow::resolvers::{CryptoResolver, DefaultResolver};
use std::collections::HashSet;
use std::sync::Arc;

/// An X25519 static public key, the 32 raw bytes the Noise handshake proves: what identifies
/// an end (`longhaul_net::keys::PublicKey` is the same key as users write it, with its file
/// format and fingerprint).
pub type StaticKey = [u8; 32];

/// A static X25519 key pair: this end's identity.
#[derive(Clone, PartialEq, Eq)]
pub struct Identity {
    private: [u8; 32],
    public: StaticKey,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Identity(public {})", hex(&self.public))
    }
}

/// Why an identity could not be made.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum IdentityError {
    /// The operating system's random number generator failed.
    #[error("the operating system's random number generator failed: no key pair was generated")]
    Random,
}

impl Identity {
    /// A new key pair from the operating system's random number generator.
    pub fn generate() -> Result<Identity, IdentityError> {
        let params = handshake::NOISE_PATTERN
            .parse()
            .map_err(|_| IdentityError::Random)?;
        let kp = snow::Builder::new(params)
            .generate_keypair()
            .map_err(|_| IdentityError::Random)?;
        let private: [u8; 32] = kp.private.as_slice().try_into().expect("X25519: 32 bytes");
        Ok(Identity::from_private(private))
    }

    /// The identity whose private key is `private` (the public key is computed from it).
    pub fn from_private(private: [u8; 32]) -> Identity {
        let mut dh = DefaultResolver
            .resolve_dh(&snow::params::DHChoice::Curve25519)
            .expect("the default resolver has X25519");
        dh.set(&private);
        let public = dh.pubkey().try_into().expect("X25519: 32 bytes");
        Identity { private, public }
    }

    /// This end's public key.
    pub fn public_key(&self) -> StaticKey {
        self.public
    }

    /// The private key's bytes (to store in a key file).
    pub fn private_key(&self) -> [u8; 32] {
        self.private
    }

    pub(crate) fn private_bytes(&self) -> &[u8] {
        &self.private
    }
}

/// Whose static key this end accepts from its peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PeerPolicy {
    /// Anyone's: the caller decides after the handshake (trust on first use), reading
    /// [`crate::Connection::peer_key`].
    Any,
    /// This key only (a client: the server's known key).
    Exactly(StaticKey),
    /// Any of these keys (a server: its authorized clients).
    AllowList(Arc<HashSet<StaticKey>>),
}

impl PeerPolicy {
    /// Whether a peer presenting `key` is acceptable.
    pub fn allows(&self, key: &StaticKey) -> bool {
        match self {
            PeerPolicy::Any => true,
            PeerPolicy::Exactly(k) => k == key,
            PeerPolicy::AllowList(set) => set.contains(key),
        }
    }
}

/// Whether and how a connection protects its datagrams.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Security {
    /// Plain datagrams: no authentication, no encryption (the simulator's default).
    #[default]
    Off,
    /// The Noise handshake, then every datagram sealed.
    Noise {
        /// This end's key pair.
        local: Identity,
        /// Which peer keys to accept.
        peer: PeerPolicy,
        /// The suite this end prefers (a client proposes it first; a server picks it if the
        /// client offers it).
        cipher: Cipher,
        /// Overrides the negotiated suite's [`Cipher::default_limits`] (for tests that need
        /// key updates or the integrity limit to happen soon); `None` in normal use.
        key_limits: Option<KeyLimits>,
    },
}

impl Security {
    /// Noise with `local`'s key pair, accepting peers by `peer`, this machine's preferred
    /// cipher and the standard limits.
    pub fn noise(local: Identity, peer: PeerPolicy) -> Security {
        Security::Noise {
            local,
            peer,
            cipher: Cipher::preferred(),
            key_limits: None,
        }
    }

    /// Whether security is on.
    pub fn is_on(&self) -> bool {
        matches!(self, Security::Noise { .. })
    }

    /// Bytes each datagram after the handshake carries beyond its plain packet.
    pub fn overhead(&self) -> usize {
        if self.is_on() {
            crate::packet::SEAL_OVERHEAD
        } else {
            0
        }
    }
}

/// Lower-case hexadecimal, for keys in messages.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
