//! Datagrams in: each one is decoded (or, security on, opened first: `sealed.rs`) and handed
//! to the part that handles its kind: a handshake (`handshake.rs`), an ACK (`ack.rs`), a close,
//! or a data packet, whose bytes go into the receive buffer and whose number into the ACK state
//! (the ACK policy and ranges of `recv.rs`). A rejected datagram changes nothing and is counted.
//! Reading frees receive window; the larger window is announced when the limit crosses a
//! multiple of a quarter window.

use super::{CloseReason, Connection, State, MAX_PN_JUMP};
use crate::error::PacketError;
use crate::packet::{self, DataHeader, Packet};
use crate::recv::Arrival;
use longhaul_cc::Time;
use std::ops::Range;

impl Connection {
    /// Process one received datagram.
    pub fn handle_packet(&mut self, now: Time, datagram: &[u8]) -> Result<(), PacketError> {
        self.handle_packet_ecn(now, datagram, false)
    }

    /// Process one received datagram that arrived with (`ce = true`) or without an ECN
    /// Congestion Experienced mark.
    pub fn handle_packet_ecn(
        &mut self,
        now: Time,
        datagram: &[u8],
        ce: bool,
    ) -> Result<(), PacketError> {
        self.handle_packet_at(now, now, datagram, ce)
    }

    /// Process one received datagram that entered the host at `arrived` (a kernel receive
    /// timestamp; no later than `now`) and is handled at `now`. The RTT sample an ACK gives,
    /// and the ACK delay a data packet starts, count from `arrived`: the time a datagram waited
    /// for a busy driver is not on the path. Everything else (timers, idle time) uses `now`,
    /// which must not run backwards from one call to the next; `arrived` may.
    pub fn handle_packet_at(
        &mut self,
        now: Time,
        arrived: Time,
        datagram: &[u8],
        ce: bool,
    ) -> Result<(), PacketError> {
        self.arriving(now, arrived, |c| c.process(now, datagram, ce))
    }

    /// [`Connection::handle_packet_at`], opening a sealed datagram where it lies (no copy; on
    /// failure its bytes are unspecified), and letting the caller take up to `room` of the
    /// stream's next bytes itself. While everything that arrived has been read, the part of a
    /// data packet that continues the stream is not buffered: it counts as read at once, and
    /// the range of `datagram` returned holds it (empty when there is none), for the caller to
    /// take from there — or, where it received the datagram into its own storage so that the
    /// payload already lies where the stream's next bytes go, to leave in place. (The receiver
    /// of a file takes them into the piece its writer takes next.)
    pub fn handle_datagram(
        &mut self,
        now: Time,
        arrived: Time,
        datagram: &mut [u8],
        ce: bool,
        room: usize,
    ) -> Result<Range<usize>, PacketError> {
        let at = (datagram.as_ptr() as usize, datagram.len());
        self.taking(at, room, |c| {
            c.arriving(now, arrived, |c| c.process_in_place(now, datagram, ce))
        })
    }

    /// Bytes of a data datagram before its payload: the data header, and with security on the
    /// seal's header before it. A driver that receives a datagram this far before where the
    /// stream's next bytes go finds a data packet's payload in place
    /// ([`Connection::handle_datagram`]).
    pub fn data_prefix(&self) -> usize {
        let seal = if self.secure.is_some() {
            packet::SEAL_HEADER_LEN
        } else {
            0
        };
        seal + packet::DATA_HEADER_LEN
    }

    /// Run `handle` on the datagram at `(address, length)`, letting the caller take up to
    /// `room` bytes (see [`Connection::handle_datagram`]); the range of the datagram taken.
    pub(super) fn taking(
        &mut self,
        (base, len): (usize, usize),
        room: usize,
        handle: impl FnOnce(&mut Self) -> Result<(), PacketError>,
    ) -> Result<Range<usize>, PacketError> {
        self.take_room = room;
        let result = handle(self);
        self.take_room = 0;
        let taken = Self::taken_range(base, len, std::mem::take(&mut self.taken));
        debug_assert!(result.is_ok() || taken.is_empty(), "bytes are taken last");
        result.map(|()| taken)
    }

    /// The bytes taken (`(address, length)`), as a range of the datagram at `base`.
    fn taken_range(base: usize, len: usize, (at, n): (usize, usize)) -> Range<usize> {
        if n == 0 {
            return 0..0;
        }
        let start = at.wrapping_sub(base);
        assert!(
            start <= len && n <= len - start,
            "the payload lies in the datagram handled"
        );
        start..start + n
    }

    /// Handle one arrival at `arrived` with `handle`; a rejected one is counted.
    pub(super) fn arriving(
        &mut self,
        now: Time,
        arrived: Time,
        handle: impl FnOnce(&mut Self) -> Result<(), PacketError>,
    ) -> Result<(), PacketError> {
        self.arrived = arrived.min(now);
        let result = handle(self);
        if result.is_err() {
            self.stats.packets_rejected += 1;
        }
        result
    }

    /// [`Connection::process`], a sealed datagram opened where it lies.
    fn process_in_place(
        &mut self,
        now: Time,
        datagram: &mut [u8],
        ce: bool,
    ) -> Result<(), PacketError> {
        if self.state != State::Closed && self.secure.is_some() {
            return self.process_secure_in_place(now, datagram, ce);
        }
        self.process(now, datagram, ce)
    }

    fn process(&mut self, now: Time, datagram: &[u8], ce: bool) -> Result<(), PacketError> {
        if self.state == State::Closed {
            return Err(PacketError::Closed);
        }
        if self.secure.is_some() {
            return self.process_secure(now, datagram, ce);
        }
        let packet = packet::decode(datagram)?;
        self.process_decoded(now, packet, ce)
    }

    /// Process one data packet whose header the driver carried as a struct rather than as bytes
    /// (see [`Connection::poll_transmit_header`]): the same checks and effects as
    /// [`Connection::handle_packet_ecn`] with the encoded packet, minus the decoding. A header
    /// that claims real payload bytes is rejected, as a datagram without them would be.
    pub fn handle_data_header(
        &mut self,
        now: Time,
        header: &DataHeader,
        ce: bool,
    ) -> Result<(), PacketError> {
        self.arrived = now;
        let result = self.process_header(now, header, ce);
        if result.is_err() {
            self.stats.packets_rejected += 1;
        }
        result
    }

    fn process_header(&mut self, now: Time, h: &DataHeader, ce: bool) -> Result<(), PacketError> {
        if self.state == State::Closed {
            return Err(PacketError::Closed);
        }
        if self.secure.is_some() {
            // A header carried as a struct was never sealed.
            self.stats.unsealed += 1;
            return Err(PacketError::Unsealed("DATA"));
        }
        h.check()?;
        if !h.synthetic && h.len > 0 {
            return Err(PacketError::PayloadLength {
                declared: h.len as usize,
                carried: 0,
            });
        }
        let packet = Packet::Data {
            header: *h,
            payload: &[],
        };
        self.process_decoded(now, packet, ce)
    }

    pub(super) fn process_decoded(
        &mut self,
        now: Time,
        packet: Packet<'_>,
        ce: bool,
    ) -> Result<(), PacketError> {
        match packet {
            Packet::Handshake(h) => self.on_handshake(now, h)?,
            Packet::Data { header, payload } => self.on_data(header, payload, ce)?,
            Packet::Ack(a) => self.on_ack(now, &a)?,
            Packet::Close(code) => {
                self.state = State::Closed;
                self.close_pending = None;
                self.close_reason = Some(CloseReason {
                    code,
                    by_peer: true,
                });
            }
        }
        self.last_received = now;
        Ok(())
    }

    fn on_data(&mut self, h: DataHeader, payload: &[u8], ce: bool) -> Result<(), PacketError> {
        if self.state == State::Listening {
            return Err(PacketError::UnexpectedPacket("data", self.state.name()));
        }
        self.check_mode(h.synthetic)?;
        if let Some(largest) = self.ack.largest() {
            if h.packet_number > largest.saturating_add(MAX_PN_JUMP) {
                return Err(PacketError::PacketNumberOutOfWindow {
                    pn: h.packet_number,
                    largest,
                });
            }
        }
        let inserted =
            self.recv
                .insert_taking(h.offset, h.len as u64, payload, h.fin, self.take_room)?;
        let new = inserted.new;
        if !inserted.taken.is_empty() {
            // Where they lie, for `taken_range`.
            let at = payload.as_ptr() as usize + inserted.taken.start;
            self.taken = (at, inserted.taken.len());
        }
        self.stats.packets_received += 1;
        self.stats.bytes_received += new;
        // Bytes the caller took from their packet were read as they arrived.
        let direct = self.recv.take_direct();
        self.stats.bytes_delivered_direct += direct;
        self.after_read(direct);
        let arrival =
            self.ack
                .on_packet(self.arrived, h.packet_number, h.timestamp_us, h.len.into());
        if new == 0 && (h.len > 0 || arrival == Arrival::Duplicate) {
            self.stats.duplicate_packets += 1;
        }
        if ce {
            // Echo congestion promptly (RFC 3168 §6.1.3), like an out-of-order arrival.
            self.ack.ce_count += 1;
            self.ack.request_immediate();
        }
        Ok(())
    }

    pub(super) fn after_read(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        self.stats.bytes_delivered += n;
        self.limit_moved();
    }

    /// The receive limit may have moved on (bytes read or let go): announce it once it has
    /// crossed the next quarter window.
    pub(super) fn limit_moved(&mut self) {
        // Advertise the larger window when the limit crosses a multiple of a quarter window
        // (so a quarter of it has been freed since the last read that crossed one): cheap, and
        // never silent for long. The next multiple is kept, so a read costs no division.
        let limit = self.recv.max_offset();
        if limit >= self.next_window_update {
            self.ack.request_immediate();
            self.next_window_update = Self::window_update_after(limit, self.config.recv_window);
        }
    }

    /// The first multiple of a quarter window above `limit`.
    pub(super) fn window_update_after(limit: u64, recv_window: u64) -> u64 {
        let quarter = (recv_window / 4).max(1);
        (limit / quarter).saturating_add(1).saturating_mul(quarter)
    }
}
