//! Security on: every datagram after the handshake is sealed and opened.
//!
//! Arriving, a sealed datagram is opened (replay window, then key, then tag) before anything in
//! it counts, either here or by an [`Opener`] on another thread; the plain packet inside is then
//! processed as with security off. Refusals are counted by reason, and too many failed opens
//! close the connection (the integrity limit). Leaving, every datagram is written after room
//! for the seal's header and sealed in place; `poll_transmit_vectored` leaves the sealing to
//! the driver, which may do it on another thread.

use super::{Connection, Side, State, Transmit, Written};
use crate::error::PacketError;
use crate::packet::{
    self, CloseCode, Outer, Packet, PacketKind, SEAL_HEADER_LEN, SEAL_OVERHEAD, SEAL_TAG_LEN,
};
use crate::secure::session::Session;
use crate::secure::{OpenedDatagram, Opener};
use longhaul_cc::Time;

impl Connection {
    pub(super) fn session(&mut self) -> &mut Session {
        self.secure
            .as_deref_mut()
            .expect("called only with security on")
    }

    /// [`Connection::process_secure`] for a datagram the caller lets it change: a sealed one
    /// is opened where it lies instead of in a copy.
    pub(super) fn process_secure_in_place(
        &mut self,
        now: Time,
        datagram: &mut [u8],
        ce: bool,
    ) -> Result<(), PacketError> {
        if let Ok(Outer::Sealed {
            key_phase,
            seal_number,
        }) = packet::decode_outer(datagram)
        {
            return self.open_sealed(now, datagram, key_phase, seal_number, ce);
        }
        self.process_secure(now, datagram, ce)
    }

    /// Security on: the handshake's clear messages, and sealed datagrams; nothing else.
    pub(super) fn process_secure(
        &mut self,
        now: Time,
        datagram: &[u8],
        ce: bool,
    ) -> Result<(), PacketError> {
        match packet::decode_outer(datagram)? {
            Outer::Sealed {
                key_phase,
                seal_number,
            } => self.on_sealed(now, datagram, key_phase, seal_number, ce),
            Outer::Init { message, .. } => self.on_init(now, message),
            Outer::Response { message } => self.on_response(now, message),
            Outer::Finish { message } => self.on_finish(now, message),
            Outer::Retry { echo, token } => {
                if self.side == Side::Client && self.state != State::Connecting {
                    return Err(PacketError::RetryIgnored(
                        "the RESPONSE has already arrived",
                    ));
                }
                self.session().on_retry(echo, token)?;
                // The INIT goes again, new, with the token: its answer gives an RTT sample.
                self.handshake_pending = true;
                self.handshake_repeated = false;
                Ok(())
            }
            Outer::Plain(kind) => {
                self.stats.unsealed += 1;
                Err(PacketError::Unsealed(match kind {
                    PacketKind::Handshake => "HANDSHAKE",
                    PacketKind::Data => "DATA",
                    PacketKind::Ack => "ACK",
                    PacketKind::Close => "CLOSE",
                }))
            }
        }
    }

    /// A copy of the receive keys, to open this connection's sealed datagrams on another
    /// thread ([`crate::secure::opener`]); `None` with security off or before the keys exist.
    pub fn opener(&self) -> Option<Opener> {
        let (keys, epoch) = self.secure.as_deref()?.held_keys()?;
        Some(Opener::new(keys, epoch))
    }

    /// Which state of the receive keys an [`Opener`] taken now would be of: a copy with another
    /// epoch is out of date.
    pub fn opener_epoch(&self) -> Option<u64> {
        self.secure.as_deref()?.recv_epoch()
    }

    /// A datagram an [`Opener`] opened (in place, in `datagram`): taken as if this connection
    /// had opened it, which it checks (the key's generation, the replay window) before the
    /// packet inside counts. `arrived` and `ce` as for [`Connection::handle_packet_at`];
    /// `room` and the range returned as for [`Connection::handle_datagram`].
    pub fn handle_opened(
        &mut self,
        now: Time,
        arrived: Time,
        opened: OpenedDatagram,
        datagram: &[u8],
        ce: bool,
        room: usize,
    ) -> Result<std::ops::Range<usize>, PacketError> {
        self.taking(datagram, room, |c| {
            c.accept_opened(now, arrived, opened, datagram, ce)
        })
    }

    fn accept_opened(
        &mut self,
        now: Time,
        arrived: Time,
        opened: OpenedDatagram,
        datagram: &[u8],
        ce: bool,
    ) -> Result<(), PacketError> {
        self.arriving(now, arrived, |c| {
            if c.state == State::Closed {
                return Err(PacketError::Closed);
            }
            if c.secure.is_none() {
                return Err(PacketError::Unsealed("opened datagram"));
            }
            match c
                .session()
                .accept_opened(opened.generation, opened.seal_number)
            {
                Ok(updates) => {
                    c.stats.peer_key_updates += updates as u64;
                    c.process_opened(now, opened.plain(datagram), ce)
                }
                Err(e) => Err(c.open_refused(e)),
            }
        })
    }

    /// A datagram an [`Opener`] could not authenticate: counted as this connection counts
    /// its own failures (towards the integrity limit).
    pub fn handle_open_failed(&mut self) {
        self.stats.packets_rejected += 1;
        if self.secure.is_some() {
            self.session().open_failed();
            let _ = self.open_refused(PacketError::AuthenticationFailed);
        }
    }

    /// The plain packet of a sealed datagram that authenticated and was accepted.
    fn process_opened(&mut self, now: Time, plain: &[u8], ce: bool) -> Result<(), PacketError> {
        match packet::decode(plain) {
            Ok(Packet::Handshake(_)) => Err(PacketError::UnexpectedPacket(
                "plain handshake",
                "sealed datagram",
            )),
            Ok(p) => self.process_decoded(now, p, ce),
            Err(e) => Err(e),
        }
    }

    /// A sealed datagram refused: counted by reason; too many failures close the connection.
    fn open_refused(&mut self, e: PacketError) -> PacketError {
        match e {
            PacketError::AuthenticationFailed | PacketError::UnknownKeyPhase { .. } => {
                self.stats.auth_failures += 1
            }
            PacketError::Replayed(_) => self.stats.replays += 1,
            PacketError::TooOld { .. } => self.stats.too_old += 1,
            _ => {}
        }
        if self.session().integrity_exceeded() {
            self.close_with(CloseCode::IntegrityLimit);
        }
        e
    }

    /// A sealed datagram: opened (replay window, then key, then tag) before anything in it
    /// counts; then the plain packet inside is processed as with security off.
    fn on_sealed(
        &mut self,
        now: Time,
        datagram: &[u8],
        key_phase: u8,
        seal_number: u64,
        ce: bool,
    ) -> Result<(), PacketError> {
        let mut scratch = std::mem::take(&mut self.scratch);
        if scratch.len() < datagram.len() {
            scratch.resize(datagram.len(), 0);
        }
        let buf = &mut scratch[..datagram.len()];
        buf.copy_from_slice(datagram);
        let result = self.open_sealed(now, buf, key_phase, seal_number, ce);
        self.scratch = scratch;
        result
    }

    /// Open the sealed datagram in `buf` where it lies, then process the packet inside.
    fn open_sealed(
        &mut self,
        now: Time,
        buf: &mut [u8],
        key_phase: u8,
        seal_number: u64,
        ce: bool,
    ) -> Result<(), PacketError> {
        match self.session().open(buf, key_phase, seal_number) {
            Ok((n, updates)) => {
                self.stats.peer_key_updates += updates as u64;
                self.process_opened(now, &buf[SEAL_HEADER_LEN..SEAL_HEADER_LEN + n], ce)
            }
            Err(e) => Err(self.open_refused(e)),
        }
    }

    /// The next datagram, and with security on its seal, not yet applied. With security off
    /// and `lend`, a data payload may be lent rather than written (`transmit_plain`); a sealed
    /// one never is (the seal covers it, in place).
    pub(super) fn transmit_unsealed(
        &mut self,
        now: Time,
        buf: &mut [u8],
        encode_data: bool,
        lend: bool,
    ) -> Option<Written> {
        if self.secure.is_none() {
            return self.transmit_plain(now, buf, encode_data, lend);
        }
        if let Some(len) = self.poll_handshake_message(now, buf) {
            let t = self.count(Transmit {
                len,
                wire_len: len,
                kind: PacketKind::Handshake,
                packet_number: None,
                retransmission: false,
            });
            return Some(Written::whole(t));
        }
        if !self.session().can_seal() {
            // Before the keys nothing can be sent that the peer could authenticate: a close
            // ends the connection without a packet.
            if self.close_pending.take().is_some() {
                self.state = State::Closed;
            }
            return None;
        }
        // The plain packet is written where the seal's header leaves room, to be sealed in
        // place (the seal number, the nonce, is taken now, in the order of sending).
        let end = buf.len().checked_sub(SEAL_TAG_LEN)?;
        if end <= SEAL_HEADER_LEN {
            return None;
        }
        let mut w = self.transmit_plain(now, &mut buf[SEAL_HEADER_LEN..end], true, false)?;
        debug_assert!(w.payload.is_none(), "a sealed payload is written whole");
        let (seal, updated) = self
            .session()
            .seal_later(w.t.len)
            .expect("the keys exist (can_seal)");
        if updated {
            self.stats.key_updates += 1;
        }
        w.t.len = seal.len();
        w.t.wire_len += SEAL_OVERHEAD;
        w.seal = Some(seal);
        self.stats.wire_bytes_sent += SEAL_OVERHEAD as u64;
        Some(w)
    }
}
