//! Datagrams out.
//!
//! Per `poll_transmit`: a pending close, then a handshake, then an ACK if the ACK policy says
//! one is due, then data — a queued retransmission before new data — while a full packet fits
//! in the congestion window, the pacer releases the packet and the peer's window has room. ACKs
//! and handshakes are neither paced nor counted in flight. Every data packet is reported to the
//! controller with `on_sent`. The window is `cc.cwnd() × mss` bytes of payload in flight (the
//! configured `mss`, whatever size path MTU discovery lets data packets have: `mtu.rs`).
//! Every packet is paced: at the controller's rate and burst, else by Linux's default rule
//! (2·cwnd/srtt in slow start, 1.2·cwnd/srtt after) with the pacer's default burst.
//!
//! A data packet's payload is copied from the send buffer into the caller's buffer after its
//! header — except through `poll_transmit_vectored`, where a payload that lies in one buffer
//! the application gave is lent instead (`send_buffer`'s [`Payload`]). With security off the
//! driver hands the kernel the header and the payload as two slices of one datagram, so a file
//! byte leaving a plain sender is copied once, by the kernel, rather than also into the
//! datagram here (about a tenth of a plain loopback sender's CPU: bench/README.md). With
//! security on the payload is lent to the datagram's seal, which encrypts it from where it
//! lies into the room left after the header (`secure::seal`). Lent or copied, a packet is cut
//! the same (the room for its payload in the caller's buffer is required either way), so the
//! bytes that leave are the same.

use super::{Connection, Side, State, Transmit, Written, PROBE_CHUNK};
use crate::limits::SendState;
use crate::packet::{self, AckFields, DataHeader, Handshake, PacketKind, DATA_HEADER_LEN};
use crate::secure::PendingSeal;
use crate::send_buffer::Payload;
use longhaul_cc::sender::pacer::{Pacer, DEFAULT_BURST};
use longhaul_cc::{SentEvent, Time};

impl Connection {
    /// Write the next datagram to send at `now` into `buf` (at least
    /// [`crate::Config::max_datagram_size`] bytes), or return `None` if nothing may be sent now.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut [u8]) -> Option<Transmit> {
        self.transmit(now, buf, true).map(|(t, _)| t)
    }

    /// [`Connection::poll_transmit`] for a driver that seals on another thread and sends a
    /// datagram from several slices (`sendmsg` with an iovec list). With security on, a sealed
    /// datagram's bytes in `buf` are its plain packet (after room for the seal's header, with
    /// room for the tag after it) and the returned [`PendingSeal`] turns them into the
    /// datagram of `Transmit::len` bytes. The seal must be applied before the bytes leave;
    /// seals may be applied in any order and on any thread. Handshake datagrams, and every
    /// datagram with security off, need no seal. A data packet whose payload lies in one
    /// buffer given to [`Connection::write_owned`] has only its header written to `buf`. With
    /// security off its payload comes back as a [`Payload`], to follow the header on the wire
    /// (`Transmit::len` bytes written, `Transmit::wire_len` in all). With security on the
    /// pending seal holds the payload and writes its ciphertext and the tag into `buf` after
    /// the header when applied (no [`Payload`] comes back: `buf` then holds the whole sealed
    /// datagram). Everything else — a payload in copied bytes or across two buffers, and every
    /// other packet — is written to `buf` whole. The datagram's bytes are the same either way;
    /// what changes is that the payload is not copied here. The buffer is offered back by
    /// [`Connection::take_spent`] only once its last payload, or the last seal that holds one,
    /// is dropped.
    pub fn poll_transmit_vectored(
        &mut self,
        now: Time,
        buf: &mut [u8],
    ) -> Option<(Transmit, Option<PendingSeal>, Option<Payload>)> {
        self.transmit_unsealed(now, buf, true, true)
            .map(|w| (w.t, w.seal, w.payload))
    }

    /// [`Connection::poll_transmit`] for a driver that carries data headers itself (the
    /// simulator): in synthetic mode a data packet's header is returned as a struct instead of
    /// being encoded (its `Transmit::len` is 0, its `wire_len` counts the header all the same),
    /// and the peer takes it in with [`Connection::handle_data_header`]. Every other packet, and
    /// every packet in real mode, is encoded into `buf` as by `poll_transmit`. This spares the
    /// encoding, a copy and the decoding of each data packet — the bulk of a simulated run.
    pub fn poll_transmit_header(
        &mut self,
        now: Time,
        buf: &mut [u8],
    ) -> Option<(Transmit, Option<DataHeader>)> {
        // Sealed packets are always encoded.
        let encode = !self.config.synthetic || self.secure.is_some();
        self.transmit(now, buf, encode)
    }

    pub(super) fn transmit(
        &mut self,
        now: Time,
        buf: &mut [u8],
        encode_data: bool,
    ) -> Option<(Transmit, Option<DataHeader>)> {
        let w = self.transmit_unsealed(now, buf, encode_data, false)?;
        if let Some(seal) = w.seal {
            let len = seal.apply(buf).expect("the buffer has room for the seal");
            debug_assert_eq!(len, w.t.len);
        }
        Some((w.t, w.header))
    }

    /// The next datagram, unsealed; with `lend`, a data payload may be lent rather than
    /// written to `buf` (the caller then sends it beside the datagram, or lends it to the
    /// datagram's seal).
    pub(super) fn transmit_plain(
        &mut self,
        now: Time,
        buf: &mut [u8],
        encode_data: bool,
        lend: bool,
    ) -> Option<Written> {
        if let Some(code) = self.close_pending {
            let len = packet::encode_close(code, buf)?;
            self.close_pending = None;
            self.state = State::Closed;
            return Some(Written::whole(self.count(Transmit {
                len,
                wire_len: len,
                kind: PacketKind::Close,
                packet_number: None,
                retransmission: false,
            })));
        }
        if self.state == State::Closed {
            return None;
        }
        if self.handshake_pending && self.secure.is_none() {
            let h = Handshake {
                response: self.side == Side::Server,
                synthetic: self.config.synthetic,
                recv_window: self.recv.advertise(),
                timestamp_us: now.as_micros(),
                echo_us: self.handshake_echo_us,
            };
            let len = packet::encode_handshake(&h, buf)?;
            self.handshake_pending = false;
            if self.side == Side::Client {
                self.handshake_sent_at = Some(now);
            }
            return Some(Written::whole(self.count(Transmit {
                len,
                wire_len: len,
                kind: PacketKind::Handshake,
                packet_number: None,
                retransmission: false,
            })));
        }
        if self.ack.ack_due(now) {
            let (echo_us, ack_delay_us) = self.ack.echo(now);
            let fields = AckFields {
                ack_delay_us,
                echo_us,
                cumulative: self.recv.frontier(),
                max_offset: self.recv.advertise(),
                ce_count: self.ack.ce_count,
            };
            let len = packet::encode_ack(&fields, self.ack.ranges(), buf)?;
            self.ack.on_ack_sent();
            self.stats.acks_sent += 1;
            return Some(Written::whole(self.count(Transmit {
                len,
                wire_len: len,
                kind: PacketKind::Ack,
                packet_number: None,
                retransmission: false,
            })));
        }
        if self.state != State::Established {
            return None;
        }
        self.poll_data(now, buf, encode_data, lend)
    }

    pub(super) fn count(&mut self, t: Transmit) -> Transmit {
        self.stats.datagrams_sent += 1;
        self.stats.wire_bytes_sent += t.wire_len as u64;
        t
    }

    fn poll_data(
        &mut self,
        now: Time,
        buf: &mut [u8],
        encode: bool,
        lend: bool,
    ) -> Option<Written> {
        self.pacing_release = None;
        let limit = self.peer_max_offset;
        let has_work = self.probe_pending
            || self.stream.has_retransmissions()
            || self.stream.has_new_data(limit);
        if !has_work {
            if self.stream.all_sent() || self.stream.written() == 0 {
                // Nothing was ever given to send, or all of it went: not a sender's wait.
                self.send_clock.stop(now);
            } else if self.stream.flow_blocked(limit) {
                self.send_clock.enter(now, SendState::ReceiverWindow, None);
            } else {
                self.send_clock.enter(now, SendState::NoData, None);
            }
            if !self.app_limited_notified {
                self.app_limited_notified = true;
                self.window_used = false;
                self.rate.on_app_limited(self.sent.bytes_in_flight);
                self.cc.on_app_limited(now);
            }
            return None;
        }
        // The controller's window is read once here: nothing below changes it before the send.
        let cwnd = self.cc.cwnd();
        // A packet goes only if it fits (RFC 9002 §7: bytes in flight may not exceed the
        // window; Linux's `tcp_cwnd_test` on its whole-packet window), at least one at a time.
        let mss = self.data_mss as u64;
        let window = self.bytes_of(cwnd).max(mss);
        // Once the path-MTU search has raised the size, a window of a few base-size packets may
        // have room for less than a datagram: a shorter packet of new data fills that room (at
        // least a base-size one), as Linux cuts a TSO packet to its window
        // (`tcp_mss_split_point`). Waiting instead until all in flight is acknowledged would
        // leave the last packet alone at the receiver, which holds a lone base-size packet's
        // ACK up to its timer. A retransmission keeps its length, so it waits for the room.
        let free = window.saturating_sub(self.sent.bytes_in_flight);
        let short =
            (free < mss && free >= self.config.mss as u64 && !self.stream.has_retransmissions())
                .then_some(free);
        if !self.probe_pending && free < mss && short.is_none() {
            self.validate_window(true);
            self.send_clock.enter(now, SendState::Window, None);
            return None;
        }
        let rate = self.pacing_rate_at(cwnd);
        // A path-MTU probe goes in place of a data packet (`mtu.rs`).
        let mtu_probe = match self.probe_pending {
            true => None,
            false => self.mtu_probe_due(buf.len()),
        };
        let full = match mtu_probe {
            Some(len) => (len + self.config.security.overhead()) as u64,
            None => self.full_datagram(),
        };
        if let Some(rate) = rate {
            let burst = self.burst_bytes(rate, full);
            let at = self.pacer.release_time(now, full, rate, burst);
            if at > now {
                self.pacing_release = Some(at);
                // A driver back later than `at` sends the packets it owes as one burst, up to
                // the bucket's size; only past that is the rate lost.
                let overflow = at + Pacer::time_for(burst, rate);
                self.send_clock
                    .enter(now, SendState::Pacing, Some(overflow));
                return None;
            }
        }
        if let Some(len) = mtu_probe {
            let (len, pn) = self.send_mtu_probe(now, buf, len);
            if let Some(rate) = rate {
                self.pacer.commit(full, rate);
            }
            self.send_clock.enter(now, SendState::Sending, None);
            return Some(Written::whole(self.count(Transmit {
                len,
                wire_len: len,
                kind: PacketKind::Data,
                packet_number: Some(pn),
                retransmission: false,
            })));
        }
        let room = buf.len().checked_sub(DATA_HEADER_LEN)?;
        let fit = short.map_or(self.data_mss, |r| r as u32);
        let max_len = if self.config.synthetic {
            fit
        } else {
            (fit as usize).min(room) as u32
        };
        let (chunk_id, offset, len, fin, retransmission) = if self.probe_pending {
            self.probe_pending = false;
            (
                PROBE_CHUNK,
                self.stream.written().min(limit),
                0u32,
                false,
                false,
            )
        } else {
            let (id, c) = self.stream.next_chunk(max_len, limit)?;
            if !self.config.synthetic && c.len as usize > room {
                // The caller's buffer shrank below a chunk cut earlier: keep it for later.
                self.stream.on_lost(id);
                return None;
            }
            (id, c.offset, c.len, c.fin, c.transmissions > 1)
        };
        let pn = self.sent.next_pn();
        let header = DataHeader {
            packet_number: pn,
            timestamp_us: now.as_micros(),
            offset,
            len: len as u16,
            fin,
            synthetic: self.config.synthetic,
        };
        let hlen = if encode {
            packet::encode_data_header(&header, buf)?
        } else {
            0
        };
        let mut written = hlen;
        let mut payload = None;
        if !self.config.synthetic && len > 0 {
            let c = crate::stream::Chunk {
                offset,
                len,
                fin,
                acked: false,
                queued: false,
                transmissions: 0,
            };
            // Lent where the bytes lie in one buffer the application gave; else copied. The
            // room for them in `buf` was required all the same, so the chunk is cut alike.
            payload = if lend {
                self.stream.lend_chunk(&c)
            } else {
                None
            };
            if payload.is_none() {
                self.stream
                    .copy_chunk(&c, &mut buf[hlen..hlen + len as usize]);
                written += len as usize;
            }
        }
        let wire_len = DATA_HEADER_LEN + len as usize;
        let stamp = self.rate.on_send(now, self.sent.bytes_in_flight);
        self.sent.push(stamp.record(now, chunk_id, len));
        self.cc.on_sent(&SentEvent {
            now,
            packet_number: pn,
            bytes: len,
            bytes_in_flight: self.sent.bytes_in_flight,
            is_retransmission: retransmission,
        });
        if let Some(rate) = rate {
            // `release_time` refilled the bucket for this instant, rate and burst above.
            self.pacer
                .commit((wire_len + self.config.security.overhead()) as u64, rate);
        }
        let full = self.sent.bytes_in_flight + mss > window;
        self.validate_window(full);
        self.send_clock.enter(now, SendState::Sending, None);
        self.last_ack_eliciting_sent = Some(now);
        self.app_limited_notified = false;
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += len as u64;
        if retransmission {
            self.stats.packets_retransmitted += 1;
        }
        let t = self.count(Transmit {
            len: written,
            wire_len,
            kind: PacketKind::Data,
            packet_number: Some(pn),
            retransmission,
        });
        Some(Written {
            t,
            header: (!encode).then_some(header),
            seal: None,
            payload,
        })
    }

    pub(super) fn cwnd_bytes(&self) -> u64 {
        self.bytes_of(self.cc.cwnd())
    }

    /// A window in packets (the controller's unit) in bytes.
    fn bytes_of(&self, cwnd_packets: f64) -> u64 {
        (cwnd_packets * self.config.mss as f64) as u64
    }

    /// Linux `tcp_cwnd_validate`: remember whether the window was full (`full`) during the
    /// current window of data, and start a new window once the old one is acknowledged. A sender
    /// held back by something else (a full device queue, the pacer, the application) then
    /// stops earning window growth one window later.
    fn validate_window(&mut self, full: bool) {
        let settled = self.sent.scan >= self.window_usage_end;
        if settled || full || (!self.window_used && self.sent.bytes_in_flight > self.max_in_flight)
        {
            self.window_used = full;
            self.max_in_flight = self.sent.bytes_in_flight;
            self.window_usage_end = self.sent.next_pn();
        }
    }

    /// Linux `tcp_is_cwnd_limited`: the window was used, or, in slow start, it is below twice
    /// the most that was in flight.
    pub(super) fn window_was_used(&self, cwnd: u64) -> bool {
        self.window_used || (self.cc.cwnd() < self.cc.ssthresh() && cwnd < 2 * self.max_in_flight)
    }

    /// The pacing rate in bytes/s: the controller's, else Linux's default rule; `None` before
    /// the first RTT sample.
    pub(super) fn pacing_rate(&self) -> Option<u64> {
        self.pacing_rate_at(self.cc.cwnd())
    }

    /// [`Connection::pacing_rate`] given the controller's current window, `cwnd` packets.
    fn pacing_rate_at(&self, cwnd: f64) -> Option<u64> {
        if let Some(r) = self.cc.pacing_rate() {
            return Some(r.max(1));
        }
        let srtt = self.rtt.srtt()?;
        let factor = if cwnd < self.cc.ssthresh() { 2.0 } else { 1.2 };
        let wire_per_packet = (self.config.mss as usize + self.config.data_overhead()) as f64;
        let rate = factor * cwnd * wire_per_packet / srtt.as_secs_f64().max(1e-6);
        Some((rate as u64).max(1))
    }

    /// The pacer's bucket for datagrams of `full` bytes: the controller's burst if it sets one,
    /// else [`DEFAULT_BURST`] packets or [`crate::Config::burst_time`] of `rate`, whichever is more.
    /// Per packet: with `burst_time` zero (the simulator) no division.
    fn burst_bytes(&self, rate: u64, full: u64) -> u64 {
        if let Some(pkts) = self.cc.max_burst() {
            return pkts.max(1) as u64 * full;
        }
        let by_count = DEFAULT_BURST as u64 * full;
        let ns = self.config.burst_time.as_nanos() as u64;
        if ns == 0 {
            return by_count;
        }
        by_count.max(rate.saturating_mul(ns) / 1_000_000_000)
    }
}
