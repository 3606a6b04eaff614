//! The Noise handshake and the transport's fields that ride in it.
//!
//! Pattern `Noise_XX_25519_ChaChaPoly_BLAKE2s` (snow does the cryptography):
//!
//! ```text
//! client -> server   INIT      e                 payload: ClientHello (in clear)
//! server -> client   RESPONSE  e, ee, s, es      payload: ServerHello (encrypted)
//! client -> server   FINISH    s, se             payload: empty (encrypted)
//! ```
//!
//! After FINISH both ends hold each other's static key, authenticated, and two transport
//! secrets derived from three Diffie-Hellman results that mix ephemeral keys (forward secrecy:
//! the static keys alone never open recorded traffic). The ClientHello travels in clear, but the
//! handshake hash covers it: a changed byte makes the RESPONSE fail to decrypt at the client.
//! The prologue binds the protocol version, so a peer speaking another version fails the same
//! way rather than misreading fields.
//!
//! Why XX rather than IK (which would let the client encrypt its first message to a server key
//! it knows): the client sends FINISH and its first data together after one round trip either
//! way, XX works when the client does not know the server's key yet (trust on first use: the
//! caller reads the key after the handshake and decides), and one pattern is one code path.
//! What XX costs is that the client's identity is sent (encrypted) only in FINISH, so a server
//! learns who its client is one message later than with IK, and the client reveals its identity
//! only to a server whose key it has checked.
//!
//! ```text
//! ClientHello  flags:u8 (bit1 synthetic)  recv_window:u64  timestamp_us:u64
//!              n:u8 (1..=8)  n × cipher:u8 (preference order)  zero padding
//! ServerHello  flags:u8 (bit1 synthetic)  recv_window:u64  timestamp_us:u64  echo_us:u64
//!              cipher:u8 (the server's pick from the client's list)
//! ```
//!
//! The ClientHello is padded so that the INIT datagram is at least as long as the RESPONSE it
//! draws ([`packet::INIT_MIN_LEN`]): a forged source address earns no amplification.

use super::seal::Cipher;
use super::{Identity, StaticKey};
use crate::packet;
use snow::params::NoiseParams;
use snow::resolvers::{CryptoResolver, DefaultResolver};

/// The Noise protocol name.
pub const NOISE_PATTERN: &str = "Noise_XX_25519_ChaChaPoly_BLAKE2s";
const PROLOGUE: &[u8] = b"longhaul secure transport, protocol version 1";

const SYNTHETIC: u8 = 0x02;
/// Most suites a ClientHello may list.
const MAX_PROPOSED: usize = 8;
/// ClientHello without its list and padding.
const CLIENT_HELLO_FIXED: usize = 1 + 8 + 8 + 1;
/// Encoded ServerHello.
pub const SERVER_HELLO_LEN: usize = 1 + 8 + 8 + 8 + 1;
/// Bytes a Noise INIT message adds to its payload: the ephemeral key `e` (32).
pub const INIT_NOISE_OVERHEAD: usize = 32;
/// Bytes a Noise RESPONSE message adds to its payload: `e` (32), the encrypted `s` (32 + 16) and
/// the payload's tag (16).
pub const RESPONSE_NOISE_OVERHEAD: usize = 32 + 48 + 16;
/// Length of the Noise FINISH message: the encrypted `s` (32 + 16) and the empty payload's tag
/// (16).
pub const FINISH_NOISE_LEN: usize = 48 + 16;

fn params() -> NoiseParams {
    NOISE_PATTERN.parse().expect("the pattern name is valid")
}

/// Why a handshake message was refused or could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandshakeError {
    /// Noise refused the message (it did not decrypt or authenticate, or is malformed).
    Noise,
    /// The payload is malformed; the string names what.
    Payload(&'static str),
    /// The client offered no suite this end supports.
    NoCommonCipher,
}

/// The client's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientHello {
    /// The client carries synthetic payloads.
    pub synthetic: bool,
    /// The client's receive window, bytes (the server's initial flow-control limit).
    pub recv_window: u64,
    /// The client's clock when it sent INIT, µs (echoed by the server for the first RTT sample).
    pub timestamp_us: u64,
    /// Suites in preference order (unknown numbers from a newer peer are skipped).
    pub proposed: [Option<Cipher>; MAX_PROPOSED],
}

impl ClientHello {
    /// The hello of a client that prefers `first` and accepts every other suite too.
    pub fn new(synthetic: bool, recv_window: u64, timestamp_us: u64, first: Cipher) -> Self {
        let mut proposed = [None; MAX_PROPOSED];
        proposed[0] = Some(first);
        let mut i = 1;
        for c in Cipher::ALL {
            if c != first {
                proposed[i] = Some(c);
                i += 1;
            }
        }
        ClientHello {
            synthetic,
            recv_window,
            timestamp_us,
            proposed,
        }
    }

    /// The server's pick: its own preference if offered, else the client's first known one.
    pub fn pick(&self, server_preference: Cipher) -> Option<Cipher> {
        let offered = || self.proposed.iter().flatten().copied();
        offered()
            .find(|&c| c == server_preference)
            .or_else(|| offered().next())
    }

    /// Encode into `out`, padded with zeros to `out.len()` (at least the encoded length).
    pub fn encode(&self, out: &mut [u8]) -> Option<usize> {
        let n = self.proposed.iter().flatten().count();
        if out.len() < CLIENT_HELLO_FIXED + n {
            return None;
        }
        out.fill(0);
        out[0] = if self.synthetic { SYNTHETIC } else { 0 };
        out[1..9].copy_from_slice(&self.recv_window.to_be_bytes());
        out[9..17].copy_from_slice(&self.timestamp_us.to_be_bytes());
        out[17] = n as u8;
        for (i, c) in self.proposed.iter().flatten().enumerate() {
            out[18 + i] = c.id();
        }
        Some(out.len())
    }

    /// Reads a ClientHello; a truncated one, set reserved flags, a malformed suite list or
    /// padding that is not zero are errors.
    pub fn decode(b: &[u8]) -> Result<ClientHello, HandshakeError> {
        if b.len() < CLIENT_HELLO_FIXED {
            return Err(HandshakeError::Payload("client hello truncated"));
        }
        if b[0] & !SYNTHETIC != 0 {
            return Err(HandshakeError::Payload(
                "client hello: reserved flag bits set",
            ));
        }
        let n = b[17] as usize;
        if n == 0 || n > MAX_PROPOSED {
            return Err(HandshakeError::Payload(
                "client hello proposes no cipher or too many",
            ));
        }
        let Some(list) = b.get(18..18 + n) else {
            return Err(HandshakeError::Payload(
                "client hello's cipher list truncated",
            ));
        };
        if b[18 + n..].iter().any(|&x| x != 0) {
            return Err(HandshakeError::Payload(
                "client hello's padding is not zero",
            ));
        }
        let mut proposed = [None; MAX_PROPOSED];
        for (slot, &id) in proposed.iter_mut().zip(list) {
            *slot = Cipher::from_id(id);
        }
        Ok(ClientHello {
            synthetic: b[0] & SYNTHETIC != 0,
            recv_window: u64::from_be_bytes(b[1..9].try_into().expect("8 bytes")),
            timestamp_us: u64::from_be_bytes(b[9..17].try_into().expect("8 bytes")),
            proposed,
        })
    }
}

/// The server's fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerHello {
    /// The server carries synthetic payloads.
    pub synthetic: bool,
    /// The server's receive window, bytes (the client's initial flow-control limit).
    pub recv_window: u64,
    /// The server's clock when it sent RESPONSE, µs.
    pub timestamp_us: u64,
    /// The ClientHello's timestamp, echoed (the client's first RTT sample).
    pub echo_us: u64,
    /// The suite the server picked from the client's list.
    pub cipher: Cipher,
}

impl ServerHello {
    /// The ServerHello's encoding ([`SERVER_HELLO_LEN`] bytes).
    pub fn encode(&self) -> [u8; SERVER_HELLO_LEN] {
        let mut out = [0u8; SERVER_HELLO_LEN];
        out[0] = if self.synthetic { SYNTHETIC } else { 0 };
        out[1..9].copy_from_slice(&self.recv_window.to_be_bytes());
        out[9..17].copy_from_slice(&self.timestamp_us.to_be_bytes());
        out[17..25].copy_from_slice(&self.echo_us.to_be_bytes());
        out[25] = self.cipher.id();
        out
    }

    /// Reads a ServerHello; a wrong length, set reserved flags or an unknown suite are errors.
    pub fn decode(b: &[u8]) -> Result<ServerHello, HandshakeError> {
        if b.len() != SERVER_HELLO_LEN {
            return Err(HandshakeError::Payload("server hello has the wrong length"));
        }
        if b[0] & !SYNTHETIC != 0 {
            return Err(HandshakeError::Payload(
                "server hello: reserved flag bits set",
            ));
        }
        let cipher = Cipher::from_id(b[25]).ok_or(HandshakeError::Payload(
            "server hello picks an unknown cipher",
        ))?;
        Ok(ServerHello {
            synthetic: b[0] & SYNTHETIC != 0,
            recv_window: u64::from_be_bytes(b[1..9].try_into().expect("8 bytes")),
            timestamp_us: u64::from_be_bytes(b[9..17].try_into().expect("8 bytes")),
            echo_us: u64::from_be_bytes(b[17..25].try_into().expect("8 bytes")),
            cipher,
        })
    }
}

/// The only randomness a handshake state draws: its ephemeral key's 32 bytes, given out once.
struct SeededRng {
    seed: [u8; 32],
    used: bool,
}

impl snow::types::Random for SeededRng {
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), snow::Error> {
        if self.used || dest.len() > self.seed.len() {
            return Err(snow::Error::Rng);
        }
        dest.copy_from_slice(&self.seed[..dest.len()]);
        self.used = true;
        Ok(())
    }
}

/// snow's default primitives, with the ephemeral key's randomness drawn in advance (from the
/// operating system, by `getrandom`), so that a state can be built again identically.
struct Resolver {
    seed: [u8; 32],
}

impl CryptoResolver for Resolver {
    fn resolve_rng(&self) -> Option<Box<dyn snow::types::Random>> {
        Some(Box::new(SeededRng {
            seed: self.seed,
            used: false,
        }))
    }
    fn resolve_dh(&self, choice: &snow::params::DHChoice) -> Option<Box<dyn snow::types::Dh>> {
        DefaultResolver.resolve_dh(choice)
    }
    fn resolve_hash(
        &self,
        choice: &snow::params::HashChoice,
    ) -> Option<Box<dyn snow::types::Hash>> {
        DefaultResolver.resolve_hash(choice)
    }
    fn resolve_cipher(
        &self,
        choice: &snow::params::CipherChoice,
    ) -> Option<Box<dyn snow::types::Cipher>> {
        DefaultResolver.resolve_cipher(choice)
    }
}

/// What a state has done so far, to do it again.
enum Step {
    Wrote(Vec<u8>),
    Read(Vec<u8>),
}

/// One end's Noise handshake state.
///
/// snow restores only part of its state when a message fails to read (the chaining key and the
/// hash, not the cipher key a message's earlier tokens may already have changed): a copy of a
/// genuine RESPONSE or FINISH with a damaged last tag would leave a state that refuses the
/// genuine message after it. So a failed read rebuilds the state from the start — the same
/// ephemeral key (its randomness is drawn once, in advance), the same messages written and
/// read — and a bad message changes nothing, as for every other packet.
pub struct Noise {
    state: snow::HandshakeState,
    local: Identity,
    initiator: bool,
    seed: [u8; 32],
    steps: Vec<Step>,
}

impl std::fmt::Debug for Noise {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Noise")
            .field("initiator", &self.initiator)
            .field("steps", &self.steps.len())
            .field("finished", &self.state.is_handshake_finished())
            .finish()
    }
}

impl Drop for Noise {
    fn drop(&mut self) {
        for b in self.seed.iter_mut() {
            // Volatile, so the store is not optimized away as dead.
            unsafe { std::ptr::write_volatile(b, 0) };
        }
    }
}

impl Noise {
    fn build(
        local: &Identity,
        seed: [u8; 32],
        initiator: bool,
    ) -> Result<snow::HandshakeState, HandshakeError> {
        let b = snow::Builder::with_resolver(params(), Box::new(Resolver { seed }))
            .local_private_key(local.private_bytes())
            .and_then(|b| b.prologue(PROLOGUE))
            .map_err(|_| HandshakeError::Noise)?;
        if initiator {
            b.build_initiator()
        } else {
            b.build_responder()
        }
        .map_err(|_| HandshakeError::Noise)
    }

    fn new(local: &Identity, initiator: bool) -> Result<Noise, HandshakeError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|_| HandshakeError::Noise)?;
        Ok(Noise {
            state: Self::build(local, seed, initiator)?,
            local: local.clone(),
            initiator,
            seed,
            steps: Vec::new(),
        })
    }

    /// The client's side of a handshake with `local`'s key pair.
    pub fn initiator(local: &Identity) -> Result<Noise, HandshakeError> {
        Self::new(local, true)
    }

    /// The server's side of a handshake with `local`'s key pair.
    pub fn responder(local: &Identity) -> Result<Noise, HandshakeError> {
        Self::new(local, false)
    }

    /// Write the next message with `payload` into `out`; returns its length.
    pub fn write(&mut self, payload: &[u8], out: &mut [u8]) -> Result<usize, HandshakeError> {
        let n = self
            .state
            .write_message(payload, out)
            .map_err(|_| HandshakeError::Noise)?;
        self.steps.push(Step::Wrote(payload.to_vec()));
        Ok(n)
    }

    /// Read the peer's next message; its payload goes to `payload` and its length is returned.
    /// A message that fails leaves the state as it was (see the type's documentation).
    pub fn read(&mut self, message: &[u8], payload: &mut [u8]) -> Result<usize, HandshakeError> {
        match self.state.read_message(message, payload) {
            Ok(n) => {
                self.steps.push(Step::Read(message.to_vec()));
                Ok(n)
            }
            Err(_) => {
                self.rebuild()?;
                Err(HandshakeError::Noise)
            }
        }
    }

    /// The state as it was after the steps taken so far.
    fn rebuild(&mut self) -> Result<(), HandshakeError> {
        let mut state = Self::build(&self.local, self.seed, self.initiator)?;
        let mut scratch = [0u8; packet::MAX_HANDSHAKE_DATAGRAM];
        for step in &self.steps {
            match step {
                Step::Wrote(p) => state.write_message(p, &mut scratch),
                Step::Read(m) => state.read_message(m, &mut scratch),
            }
            .map_err(|_| HandshakeError::Noise)?;
        }
        self.state = state;
        Ok(())
    }

    /// The peer's static key, once its message carrying it has been read.
    pub fn remote_static(&self) -> Option<StaticKey> {
        self.state
            .get_remote_static()
            .and_then(|k| k.try_into().ok())
    }

    /// The transport secrets after the last message: (client to server, server to client).
    pub fn split(&mut self) -> Option<([u8; 32], [u8; 32])> {
        if !self.state.is_handshake_finished() {
            return None;
        }
        Some(self.state.dangerously_get_raw_split())
    }
}

/// The bytes a ClientHello's padding must bring the Noise payload to, so that an INIT with a
/// `token_len`-byte token is at least [`packet::INIT_MIN_LEN`] long.
pub fn client_hello_len(token_len: usize) -> usize {
    let fixed = packet::INIT_HEADER_LEN + token_len + INIT_NOISE_OVERHEAD;
    packet::INIT_MIN_LEN
        .saturating_sub(fixed)
        .max(CLIENT_HELLO_FIXED + Cipher::ALL.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hellos_round_trip_and_the_server_picks() {
        let h = ClientHello::new(true, 1 << 40, 77, Cipher::ChaCha20Poly1305);
        let mut b = [0u8; 64];
        h.encode(&mut b).unwrap();
        assert_eq!(ClientHello::decode(&b), Ok(h));
        assert_eq!(h.pick(Cipher::Aes256Gcm), Some(Cipher::Aes256Gcm));
        let mut only = b;
        only[17] = 1;
        only[19..18 + Cipher::ALL.len()].fill(0);
        let h1 = ClientHello::decode(&only).unwrap();
        assert_eq!(h1.pick(Cipher::Aes256Gcm), Some(Cipher::ChaCha20Poly1305));
        // A client that knows only the two aws-lc suites (a build before AEGIS-256X4) and a
        // server that prefers AEGIS-256X4: the client's first.
        let mut older = b;
        older[17] = 2;
        older[18..20].copy_from_slice(&[Cipher::Aes256Gcm.id(), Cipher::ChaCha20Poly1305.id()]);
        older[20..18 + Cipher::ALL.len()].fill(0);
        let h2 = ClientHello::decode(&older).unwrap();
        assert_eq!(h2.pick(Cipher::Aegis256X4), Some(Cipher::Aes256Gcm));
        assert_eq!(h.pick(Cipher::Aegis256X4), Some(Cipher::Aegis256X4));
        // Unknown suites are skipped; nothing known means no pick.
        only[18] = 200;
        assert_eq!(
            ClientHello::decode(&only).unwrap().pick(Cipher::Aes256Gcm),
            None
        );
        let mut dirty = b;
        dirty[63] = 1;
        assert!(ClientHello::decode(&dirty).is_err());
        let s = ServerHello {
            synthetic: false,
            recv_window: 5,
            timestamp_us: 6,
            echo_us: 7,
            cipher: Cipher::Aes256Gcm,
        };
        assert_eq!(ServerHello::decode(&s.encode()), Ok(s));
    }
}
