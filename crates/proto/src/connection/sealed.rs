//! Security on: every datagram after the handshake is sealed and opened.
//!
//! Arriving, a sealed datagram is opened (replay window, then key, then tag) before anything in
//! it counts, either here or by an [`Opener`] on another thread; here, where it lies when the
//! driver lets it change (`Connection::handle_datagram`), else in a copy. The plain packet
//! inside is then processed as with security off. Refusals are counted by reason, and too many
//! failed opens close the connection (the integrity limit). Leaving, every datagram is written after room
//! for the seal's header and sealed in place; `poll_transmit_vectored` leaves the sealing to
//! the driver, which may do it on another thread, and lends a data payload that lies in a
//! buffer the application gave to the seal instead of writing it: the seal encrypts it from
//! there into the datagram (`secure::seal`), so a file byte leaving a sealed sender is read
//! once by the AEAD rather than also copied here first.

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
        let at = (datagram.as_ptr() as usize, datagram.len());
        self.taking(at, room, |c| {
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

    /// The next datagram, and with security on its seal, not yet applied. With `lend`, a data
    /// payload may be lent rather than written (`transmit_plain`): with security off it comes
    /// back beside the datagram, with security on the seal holds it and encrypts it into the
    /// room left for it after the header.
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
        // place (the seal number, the nonce, is taken now, in the order of sending); a lent
        // payload's room after its header is left for the seal to fill.
        let end = buf.len().checked_sub(SEAL_TAG_LEN)?;
        if end <= SEAL_HEADER_LEN {
            return None;
        }
        let mut w = self.transmit_plain(now, &mut buf[SEAL_HEADER_LEN..end], true, lend)?;
        let (seal, updated) = self
            .session()
            .seal_later(w.t.len)
            .expect("the keys exist (can_seal)");
        let seal = seal.lending(w.payload.take());
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

#[cfg(test)]
mod tests {
    use crate::packet::{DATA_HEADER_LEN, SEAL_HEADER_LEN, SEAL_TAG_LEN};
    use crate::{
        Cipher, Config, Connection, Identity, KeyLimits, PacketKind, PeerPolicy, Security, Side,
    };
    use longhaul_cc::{CcSpec, Time};
    use std::time::Duration;

    fn config(seed: u8, cipher: Cipher) -> Config {
        Config {
            recv_window: 8 << 20,
            security: Security::Noise {
                local: Identity::from_private([seed; 32]),
                peer: PeerPolicy::Any,
                cipher,
                // A key update every 40 datagrams: the transfer crosses several.
                key_limits: Some(KeyLimits {
                    packets_per_key: 40,
                    failed_opens: 1 << 20,
                }),
            },
            ..Config::new(CcSpec::default_for("reno").unwrap())
        }
    }

    /// Bytes none of which is zero, so that a run of zeros in a datagram is room not written.
    fn pattern(n: usize, seed: u32) -> Vec<u8> {
        (0..n as u32)
            .map(|i| ((i.wrapping_mul(2_654_435_761) ^ seed) >> 13) as u8 | 1)
            .collect()
    }

    /// A sealed sender lends the payloads that lie in a buffer given to `write_owned` to their
    /// seals: the connection writes only the headers, and each datagram the seal makes is byte
    /// for byte the one the copying path makes (payload written after its header, sealed in
    /// place), under every suite and across key updates; payloads in copied bytes or across
    /// two buffers are written whole. The server opens every datagram and reads the stream.
    #[test]
    fn a_lent_payload_seals_to_the_datagram_the_copying_path_makes() {
        for cipher in Cipher::ALL {
            let mut now = Time::from_millis(1);
            let mut c = Connection::new(config(1, cipher), Side::Client, now).unwrap();
            let mut s = Connection::new(config(2, cipher), Side::Server, now).unwrap();
            let mut buf = vec![0u8; 65_536];
            for _ in 0..4 {
                while let Some(t) = c.poll_transmit(now, &mut buf) {
                    s.handle_packet(now, &buf[..t.len]).unwrap();
                }
                while let Some(t) = s.poll_transmit(now, &mut buf) {
                    c.handle_packet(now, &buf[..t.len]).unwrap();
                }
            }
            assert!(c.is_established() && s.is_established(), "{cipher}");
            let mut stream = pattern(3_000, 1);
            assert_eq!(c.write(&stream), 3_000);
            for (n, seed) in [(200_000, 2), (7, 3), (150_000, 4)] {
                let piece = pattern(n, seed);
                stream.extend_from_slice(&piece);
                assert_eq!(c.write_owned(piece), Ok(n));
            }
            c.finish();

            let max = c.config().max_datagram_size();
            let (mut lent, mut whole, mut rounds) = (0, 0, 0);
            let mut room = vec![0u8; max];
            while !c.is_send_complete() {
                rounds += 1;
                assert!(rounds < 2_000, "{cipher}: the transfer stalled");
                while let Some((t, seal, payload)) = c.poll_transmit_vectored(now, &mut room) {
                    assert!(payload.is_none(), "{cipher}: a sealed payload came back");
                    let seal = seal.expect("sealed");
                    assert_eq!(seal.len(), t.len);
                    let mut copied = room.clone();
                    let twin = seal.clone().written_whole(&mut copied);
                    let body = SEAL_HEADER_LEN + DATA_HEADER_LEN..t.len - SEAL_TAG_LEN;
                    if t.kind == PacketKind::Data && !body.is_empty() {
                        match room[body].iter().all(|&b| b == 0) {
                            true => lent += 1,
                            false => whole += 1,
                        }
                    }
                    assert_eq!(seal.apply(&mut room), Some(t.len));
                    assert_eq!(twin.apply(&mut copied), Some(t.len));
                    assert!(
                        room[..t.len] == copied[..t.len],
                        "{cipher}: a {:?} datagram of {} bytes differs from the copying path's",
                        t.kind,
                        t.len
                    );
                    s.handle_packet(now, &room[..t.len]).expect("it opens");
                    room.fill(0);
                }
                now += Duration::from_millis(1);
                while let Some(t) = s.poll_transmit(now, &mut buf) {
                    c.handle_packet(now, &buf[..t.len]).unwrap();
                }
                for conn in [&mut c, &mut s] {
                    if conn.poll_timeout().is_some_and(|t| t <= now) {
                        conn.handle_timeout(now);
                    }
                }
            }
            // 353,007 bytes in packets of 1,448: 244 packets, of which two lie in the copied
            // message and two across two buffers (the message's end, and the 7-byte piece
            // with both its ends): those are written whole, the other 240 lent.
            assert_eq!((lent, whole), (240, 4), "{cipher}: lent, written whole");
            assert!(c.stats().key_updates >= 5, "{cipher}: {:?}", c.stats());
            let mut got = vec![0u8; stream.len() + 1];
            assert_eq!(s.read(&mut got), stream.len());
            assert!(
                got[..stream.len()] == stream[..],
                "{cipher}: the stream differs"
            );
        }
    }
}
