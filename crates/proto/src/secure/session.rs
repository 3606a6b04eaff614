//! One connection's secure layer: how far the handshake has come, the keys, the replay window.
//!
//! The connection asks this module for the handshake datagrams to send, hands it the ones that
//! arrive, and passes every datagram after the handshake through [`Session::seal_later`] and
//! [`Session::open`]. The transport's decisions (when to resend, what a refused peer means for
//! the connection) stay in the connection; this module only says what happened.

use super::handshake::{self, ClientHello, Noise, ServerHello};
use super::keys::{HeldKeys, OpenError, Opened, RecvKeys, Secret, SendKeys};
use super::replay::{Replay, ReplayWindow};
use super::seal::PendingSeal;
use super::{Cipher, Identity, KeyLimits, PeerPolicy, Security, StaticKey};
use crate::error::{ConfigError, PacketError};
use crate::packet::{self, HandshakeMessage, MAX_TOKEN_LEN, RETRY_ECHO_LEN};
use crate::side::Side;
use std::sync::Arc;

/// The largest datagram a sealed packet may be opened from (the largest UDP payload).
pub(crate) const MAX_DATAGRAM: usize = 65_535;
/// Room for any handshake payload.
const PAYLOAD_BUF: usize = 256;

/// What a new INIT led to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitOutcome {
    /// The first INIT: its hello; the RESPONSE is ready to send.
    New(ClientHello),
    /// The same INIT again (our RESPONSE was lost): send the RESPONSE again.
    Repeated,
}

#[derive(Debug)]
pub struct Session {
    side: Side,
    local: Identity,
    policy: PeerPolicy,
    preference: Cipher,
    limits_override: Option<KeyLimits>,
    /// Until the transport keys exist.
    noise: Option<Noise>,
    /// The handshake cannot go on (an authenticated message made no sense).
    broken: bool,
    token: [u8; MAX_TOKEN_LEN],
    token_len: usize,
    retry_used: bool,
    /// The handshake datagram this end sends and may have to resend as it was: the client's
    /// INIT, then its FINISH; the server's RESPONSE.
    cached: Vec<u8>,
    /// Times `cached` was handed out.
    sends: u32,
    /// Server: the ephemeral key of the INIT it answered.
    client_ephemeral: Option<[u8; RETRY_ECHO_LEN]>,
    peer_key: Option<StaticKey>,
    cipher: Option<Cipher>,
    limits: KeyLimits,
    send: Option<SendKeys>,
    recv: Option<RecvKeys>,
    next_seal: u64,
    replay: ReplayWindow,
    failed_opens: u64,
    /// A sealed datagram from the peer has authenticated (for the client: the server has the
    /// keys, so FINISH arrived).
    confirmed: bool,
}

fn handshake_refused(_: handshake::HandshakeError) -> PacketError {
    PacketError::Handshake("the message did not authenticate or is malformed")
}

impl Session {
    /// The secure layer for `security`, or `None` when it is off.
    pub fn new(security: &Security, side: Side) -> Result<Option<Session>, ConfigError> {
        let Security::Noise {
            local,
            peer,
            cipher,
            key_limits,
        } = security
        else {
            return Ok(None);
        };
        // A server builds its Noise state for each INIT it reads (see `on_init`).
        let noise = match side {
            Side::Client => Some(Noise::initiator(local).map_err(|_| {
                ConfigError::Security("the Noise handshake state could not be built")
            })?),
            Side::Server => None,
        };
        Ok(Some(Session {
            side,
            local: local.clone(),
            policy: peer.clone(),
            preference: *cipher,
            limits_override: *key_limits,
            noise,
            broken: false,
            token: [0; MAX_TOKEN_LEN],
            token_len: 0,
            retry_used: false,
            cached: Vec::new(),
            sends: 0,
            client_ephemeral: None,
            peer_key: None,
            cipher: None,
            limits: cipher.default_limits(),
            send: None,
            recv: None,
            next_seal: 0,
            replay: ReplayWindow::new(),
            failed_opens: 0,
            confirmed: false,
        }))
    }

    pub fn peer_key(&self) -> Option<StaticKey> {
        self.peer_key
    }

    /// The peer's key is known and the policy accepts it.
    pub fn peer_allowed(&self) -> bool {
        self.peer_key.is_some_and(|k| self.policy.allows(&k))
    }

    pub fn cipher(&self) -> Option<Cipher> {
        self.cipher
    }

    pub fn can_seal(&self) -> bool {
        self.send.is_some()
    }

    pub fn confirmed(&self) -> bool {
        self.confirmed
    }

    /// The handshake failed in a way it cannot recover from.
    pub fn broken(&self) -> bool {
        self.broken
    }

    /// Authentication failures have passed the suite's integrity limit.
    pub fn integrity_exceeded(&self) -> bool {
        self.failed_opens > self.limits.failed_opens
    }

    fn copy_cached(&mut self, buf: &mut [u8]) -> Option<usize> {
        let n = self.cached.len();
        if n == 0 || buf.len() < n {
            return None;
        }
        buf[..n].copy_from_slice(&self.cached);
        self.sends += 1;
        Some(n)
    }

    // ----------------------------------------------------------------------------------------
    // Client
    // ----------------------------------------------------------------------------------------

    /// The INIT to send: written the first time (with `hello`), the same bytes after that.
    /// Returns its length and whether it is a repetition.
    pub fn write_init(
        &mut self,
        synthetic: bool,
        recv_window: u64,
        timestamp_us: u64,
        buf: &mut [u8],
    ) -> Option<(usize, bool)> {
        if self.cached.is_empty() {
            let hello = ClientHello::new(synthetic, recv_window, timestamp_us, self.preference);
            let noise = self.noise.as_mut()?;
            let token = &self.token[..self.token_len];
            let mut payload = [0u8; PAYLOAD_BUF];
            let plen = handshake::client_hello_len(token.len());
            hello.encode(&mut payload[..plen])?;
            let mut out = [0u8; packet::MAX_HANDSHAKE_DATAGRAM];
            let at = packet::encode_handshake_header(HandshakeMessage::Init, token, &mut out)?;
            let n = noise.write(&payload[..plen], &mut out[at..]).ok()?;
            self.cached = out[..at + n].to_vec();
            self.sends = 0;
        }
        let n = self.copy_cached(buf)?;
        Some((n, self.sends > 1))
    }

    /// A RETRY arrived: take its token and start the handshake over, once, if it answers our
    /// INIT and no RESPONSE has come yet.
    pub fn on_retry(&mut self, echo: &[u8], token: &[u8]) -> Result<(), PacketError> {
        if self.side != Side::Client {
            return Err(PacketError::UnexpectedPacket("RETRY", "server"));
        }
        if self.peer_key.is_some() || self.send.is_some() {
            return Err(PacketError::RetryIgnored(
                "the RESPONSE has already arrived",
            ));
        }
        if self.retry_used {
            return Err(PacketError::RetryIgnored("a RETRY was taken already"));
        }
        let at = packet::INIT_HEADER_LEN + self.token_len;
        let Some(ours) = self.cached.get(at..at + RETRY_ECHO_LEN) else {
            return Err(PacketError::RetryIgnored("no INIT has been sent"));
        };
        if ours != echo {
            return Err(PacketError::RetryIgnored(
                "it does not echo this connection's INIT",
            ));
        }
        if token.len() > MAX_TOKEN_LEN {
            return Err(PacketError::TokenTooLong(token.len()));
        }
        let noise = Noise::initiator(&self.local).map_err(handshake_refused)?;
        self.token[..token.len()].copy_from_slice(token);
        self.token_len = token.len();
        self.retry_used = true;
        self.noise = Some(noise);
        self.cached.clear();
        self.sends = 0;
        Ok(())
    }

    /// The server's RESPONSE: its hello, once it authenticated. The peer's key is then known
    /// ([`Session::peer_allowed`] says whether to go on with [`Session::write_finish`]).
    pub fn on_response(&mut self, message: &[u8]) -> Result<ServerHello, PacketError> {
        if self.side != Side::Client {
            return Err(PacketError::UnexpectedPacket("RESPONSE", "server"));
        }
        if self.peer_key.is_some() {
            return Err(PacketError::RepeatedHandshake("RESPONSE"));
        }
        if self.cached.is_empty() {
            return Err(PacketError::UnexpectedPacket("RESPONSE", "no INIT sent"));
        }
        let noise = self
            .noise
            .as_mut()
            .ok_or(PacketError::RepeatedHandshake("RESPONSE"))?;
        let mut payload = [0u8; PAYLOAD_BUF];
        let n = noise
            .read(message, &mut payload)
            .map_err(handshake_refused)?;
        let Ok(hello) = ServerHello::decode(&payload[..n]) else {
            // It authenticated, so it came from whoever answers as the server; the Noise state
            // has moved past it and the handshake cannot be completed.
            self.broken = true;
            self.noise = None;
            return Err(PacketError::Handshake("the server's hello is malformed"));
        };
        let key = noise
            .remote_static()
            .ok_or(PacketError::Handshake("the RESPONSE carries no static key"))?;
        self.peer_key = Some(key);
        self.cipher = Some(hello.cipher);
        Ok(hello)
    }

    /// Write FINISH (cached, to be sent and resent) and take the transport keys.
    pub fn write_finish(&mut self) -> Result<(), PacketError> {
        let noise = self
            .noise
            .as_mut()
            .ok_or(PacketError::Handshake("no handshake in progress"))?;
        let mut out = [0u8; packet::MAX_HANDSHAKE_DATAGRAM];
        let at = packet::encode_handshake_header(HandshakeMessage::Finish, &[], &mut out)
            .ok_or(PacketError::Handshake("FINISH does not fit"))?;
        let n = noise
            .write(&[], &mut out[at..])
            .map_err(handshake_refused)?;
        let (c2s, s2c) = noise
            .split()
            .ok_or(PacketError::Handshake("the handshake did not finish"))?;
        self.cached = out[..at + n].to_vec();
        self.sends = 0;
        self.install(c2s, s2c);
        Ok(())
    }

    /// The FINISH to (re)send.
    pub fn finish_datagram(&mut self, buf: &mut [u8]) -> Option<usize> {
        if self.side != Side::Client || self.send.is_none() {
            return None;
        }
        self.copy_cached(buf)
    }

    // ----------------------------------------------------------------------------------------
    // Server
    // ----------------------------------------------------------------------------------------

    /// An INIT arrived. The first one is read and answered: `respond` makes the server's hello
    /// from the client's and the picked cipher, and the RESPONSE is written and cached.
    pub fn on_init(
        &mut self,
        message: &[u8],
        respond: impl FnOnce(&ClientHello, Cipher) -> ServerHello,
    ) -> Result<InitOutcome, PacketError> {
        if self.side != Side::Server {
            return Err(PacketError::UnexpectedPacket("INIT", "client"));
        }
        if let Some(e) = self.client_ephemeral {
            return if self.send.is_none() && message.get(..RETRY_ECHO_LEN) == Some(&e[..]) {
                Ok(InitOutcome::Repeated)
            } else {
                Err(PacketError::RepeatedHandshake("INIT"))
            };
        }
        // Read into a fresh state and keep it only if everything checks out: an INIT cannot be
        // authenticated, so a bad one must leave the server as it was.
        let mut noise = Noise::responder(&self.local).map_err(handshake_refused)?;
        let mut payload = [0u8; PAYLOAD_BUF];
        let n = noise
            .read(message, &mut payload)
            .map_err(handshake_refused)?;
        let hello = ClientHello::decode(&payload[..n])
            .map_err(|_| PacketError::Handshake("the client's hello is malformed"))?;
        let cipher = hello.pick(self.preference).ok_or(PacketError::Handshake(
            "the client proposes no cipher this end supports",
        ))?;
        let server_hello = respond(&hello, cipher);
        let mut out = [0u8; packet::MAX_HANDSHAKE_DATAGRAM];
        let at = packet::encode_handshake_header(HandshakeMessage::Response, &[], &mut out)
            .ok_or(PacketError::Handshake("RESPONSE does not fit"))?;
        let len = noise
            .write(&server_hello.encode(), &mut out[at..])
            .map_err(handshake_refused)?;
        self.noise = Some(noise);
        self.cached = out[..at + len].to_vec();
        self.sends = 0;
        let mut e = [0u8; RETRY_ECHO_LEN];
        e.copy_from_slice(&message[..RETRY_ECHO_LEN]);
        self.client_ephemeral = Some(e);
        self.cipher = Some(cipher);
        Ok(InitOutcome::New(hello))
    }

    /// The RESPONSE to (re)send.
    pub fn response_datagram(&mut self, buf: &mut [u8]) -> Option<usize> {
        if self.side != Side::Server || self.send.is_some() {
            return None;
        }
        self.copy_cached(buf)
    }

    /// The client's FINISH: once it authenticates, the client's key is known and the keys are
    /// taken ([`Session::peer_allowed`] says whether to accept the client).
    pub fn on_finish(&mut self, message: &[u8]) -> Result<(), PacketError> {
        if self.side != Side::Server {
            return Err(PacketError::UnexpectedPacket("FINISH", "client"));
        }
        if self.send.is_some() {
            return Err(PacketError::RepeatedHandshake("FINISH"));
        }
        if self.client_ephemeral.is_none() {
            return Err(PacketError::UnexpectedPacket("FINISH", "no INIT received"));
        }
        let noise = self
            .noise
            .as_mut()
            .ok_or(PacketError::RepeatedHandshake("FINISH"))?;
        // The payload is empty in this version; a later one may put something there.
        let mut payload = [0u8; PAYLOAD_BUF];
        noise
            .read(message, &mut payload)
            .map_err(handshake_refused)?;
        let key = noise
            .remote_static()
            .ok_or(PacketError::Handshake("FINISH carries no static key"))?;
        let (c2s, s2c) = noise
            .split()
            .ok_or(PacketError::Handshake("the handshake did not finish"))?;
        self.peer_key = Some(key);
        self.install(c2s, s2c);
        self.cached = Vec::new();
        self.confirmed = true;
        Ok(())
    }

    // ----------------------------------------------------------------------------------------
    // After the handshake
    // ----------------------------------------------------------------------------------------

    fn install(&mut self, c2s: [u8; 32], s2c: [u8; 32]) {
        let cipher = self.cipher.unwrap_or(self.preference);
        self.limits = self
            .limits_override
            .unwrap_or_else(|| cipher.default_limits());
        let (send, recv) = match self.side {
            Side::Client => (c2s, s2c),
            Side::Server => (s2c, c2s),
        };
        self.send = Some(SendKeys::new(
            cipher,
            Secret::new(send),
            self.limits.packets_per_key,
        ));
        self.recv = Some(RecvKeys::new(cipher, Secret::new(recv)));
        self.noise = None;
    }

    /// The seal of the next datagram, whose plain packet lies at `buf[SEAL_HEADER_LEN..][..inner]`
    /// of the buffer it is applied to (see [`PendingSeal`] and
    /// [`super::seal::PacketKey::seal`]); and whether the send key was updated for it.
    pub fn seal_later(&mut self, inner: usize) -> Option<(PendingSeal, bool)> {
        let seal_number = self.next_seal;
        let (key, phase, updated) = self.send.as_mut()?.next_key();
        let pending = PendingSeal::new(Arc::clone(key), phase, seal_number, inner);
        self.next_seal += 1;
        Some((pending, updated))
    }

    /// The receive keys held now and their epoch, for opening datagrams on another thread
    /// (`None` before the keys exist).
    pub fn held_keys(&self) -> Option<(HeldKeys, u64)> {
        self.recv.as_ref().map(RecvKeys::held)
    }

    /// The epoch of the receive keys held now (`None` before the keys exist).
    pub fn recv_epoch(&self) -> Option<u64> {
        self.recv.as_ref().map(RecvKeys::epoch)
    }

    /// A datagram opened elsewhere (with [`HeldKeys::open`]) authenticated under generation
    /// `generation`: the same checks as [`Session::open`] makes around its own opening, in the
    /// order that is possible after the fact (the key's generation against what this end takes
    /// now, then the replay window). Returns how many generations the receiver moved forward.
    pub fn accept_opened(&mut self, generation: u64, seal_number: u64) -> Result<u8, PacketError> {
        if self.recv.is_none() {
            return Err(PacketError::NoKeysYet);
        }
        self.check_replay(seal_number)?;
        let recv = self.recv.as_mut().expect("checked above");
        let how = recv
            .accept(generation, seal_number)
            .map_err(|e| self.refused(e))?;
        Ok(self.opened(seal_number, how))
    }

    /// A datagram opened elsewhere did not authenticate: counted towards the integrity limit.
    pub fn open_failed(&mut self) {
        self.failed_opens += 1;
    }

    /// Open the sealed datagram in `datagram` where it lies. On success the plain packet is
    /// at `datagram[SEAL_HEADER_LEN..][..n]`; returns `n` and how many key generations the
    /// receiver moved forward. On failure the datagram's bytes are unspecified.
    pub fn open(
        &mut self,
        datagram: &mut [u8],
        key_phase: u8,
        seal_number: u64,
    ) -> Result<(usize, u8), PacketError> {
        if self.recv.is_none() {
            return Err(PacketError::NoKeysYet);
        }
        self.check_replay(seal_number)?;
        if datagram.len() > MAX_DATAGRAM {
            return Err(PacketError::TrailingBytes(datagram.len() - MAX_DATAGRAM));
        }
        let recv = self.recv.as_mut().expect("checked above");
        match recv.open(key_phase, seal_number, datagram) {
            Ok((n, how)) => Ok((n, self.opened(seal_number, how))),
            Err(e) => Err(self.refused(e)),
        }
    }

    /// The anti-replay window's verdict on `seal_number`, before it counts.
    fn check_replay(&self, seal_number: u64) -> Result<(), PacketError> {
        self.replay.check(seal_number).map_err(|r| match r {
            Replay::Duplicate => PacketError::Replayed(seal_number),
            Replay::TooOld { oldest } => PacketError::TooOld {
                seal_number,
                oldest,
            },
        })
    }

    /// A datagram authenticated and was taken: its number is seen, the previous key may
    /// expire, the peer has the keys. Returns the generations the receiver moved forward.
    fn opened(&mut self, seal_number: u64, how: Opened) -> u8 {
        self.replay.mark(seal_number);
        if let Some(recv) = self.recv.as_mut() {
            recv.expire_previous(self.replay.oldest());
        }
        self.confirmed = true;
        match how {
            Opened::Current => 0,
            Opened::Updated(k) => k,
        }
    }

    /// A datagram refused by the keys; a failed authentication counts towards the limit.
    fn refused(&mut self, e: OpenError) -> PacketError {
        match e {
            OpenError::UnknownPhase { phase, current } => {
                PacketError::UnknownKeyPhase { phase, current }
            }
            OpenError::Failed => {
                self.failed_opens += 1;
                PacketError::AuthenticationFailed
            }
        }
    }
}
