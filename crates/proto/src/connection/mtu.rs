//! Path MTU discovery in the connection ([`crate::pmtu`] is the search and says why it works
//! as it does): probes out and their fate in, the size new data packets are cut to, the
//! controller's view of larger packets, and the fall back to the base on a black hole.
//!
//! A probe is a zero-length data packet padded to the size tried, sent in place of a data
//! packet when the window and the pacer would let one go. It takes a packet number and a
//! record (so that ACKs and loss detection find it) but counts no bytes in flight, and the
//! controller hears nothing of it: not its sending, not its acknowledgment, not its loss.
//!
//! New chunks are cut to the size in use; chunks cut earlier keep their size when resent,
//! which fits as long as the size only grows. A black hole brings it back down: then every
//! packet in flight is taken out of flight and the chunks not yet acknowledged are cut again
//! at the base (`SendStream::rewind`).

use super::{Connection, MTU_PROBE_CHUNK};
use crate::config::IP_UDP_OVERHEAD;
use crate::packet::{self, DataHeader, MAX_HANDSHAKE_DATAGRAM};
use longhaul_cc::sender::rate::SendStamp;
use longhaul_cc::sender::sent::SentPacket;
use longhaul_cc::Time;

impl Connection {
    /// The IP packet size full data packets fill now: the configured one
    /// ([`crate::Config::base_mtu`]) unless path MTU discovery raised it.
    pub fn path_mtu(&self) -> u32 {
        self.pmtu
            .as_ref()
            .map_or(self.config.base_mtu(), |p| p.mtu())
    }

    /// Bytes of a full data datagram now (UDP payload, the seal included).
    pub fn data_datagram_size(&self) -> usize {
        self.data_mss as usize + self.config.data_overhead()
    }

    /// The buffer the next `poll_transmit` needs to send what it has now: a full data datagram,
    /// the path-MTU probe due, or a handshake message. A smaller buffer defers a probe, and
    /// cuts new data to fit. At most [`crate::Config::max_datagram_size`].
    pub fn datagram_room(&self) -> usize {
        let probe = self
            .pmtu
            .as_ref()
            .and_then(|p| p.next_probe())
            .map_or(0, |m| m as usize - IP_UDP_OVERHEAD);
        let handshake = if self.config.security.is_on() {
            MAX_HANDSHAKE_DATAGRAM
        } else {
            0
        };
        self.data_datagram_size().max(probe).max(handshake)
    }

    /// Bytes of the datagram a full data packet is now, as the pacer counts it.
    pub(super) fn full_datagram(&self) -> u64 {
        if self.pmtu.is_some() {
            self.data_datagram_size() as u64
        } else {
            self.config.max_datagram_size() as u64
        }
    }

    /// The plain length (before any seal) of the path-MTU probe due now, if one is and fits in
    /// `room` bytes.
    pub(super) fn mtu_probe_due(&self, room: usize) -> Option<usize> {
        let size = self.pmtu.as_ref()?.next_probe()? as usize;
        let len = size - IP_UDP_OVERHEAD - self.config.security.overhead();
        (len <= room).then_some(len)
    }

    /// Write the probe of plain length `len` into `buf` and record it; returns the datagram's
    /// wire length (before any seal) and its packet number.
    pub(super) fn send_mtu_probe(&mut self, now: Time, buf: &mut [u8], len: usize) -> (usize, u64) {
        let pn = self.sent.next_pn();
        let header = DataHeader {
            packet_number: pn,
            timestamp_us: now.as_micros(),
            // Below what the peer has, so that it is never out of its window.
            offset: self.stream.acked_offset(),
            len: 0,
            fin: false,
            synthetic: self.config.synthetic,
        };
        let written =
            packet::encode_padded_probe(&header, len, buf).expect("mtu_probe_due checked the room");
        // Not a delivery-rate sample: a probe's ACK is never given to the rate estimator.
        let stamp = SendStamp {
            delivered: 0,
            delivered_time: now,
            first_sent_time: now,
            app_limited: false,
        };
        self.sent.push(stamp.record(now, MTU_PROBE_CHUNK, 0));
        if let Some(p) = self.pmtu.as_mut() {
            p.on_probe_sent(pn);
        }
        self.last_ack_eliciting_sent = Some(now);
        (written, pn)
    }

    /// Packet `pn`, a probe, was acknowledged: new data packets fill the size it confirmed.
    pub(super) fn on_mtu_probe_acked(&mut self, pn: u64) {
        if let Some(mtu) = self.pmtu.as_mut().and_then(|p| p.on_probe_acked(pn)) {
            self.data_mss = self.config.mss_for(mtu).max(self.config.mss);
        }
    }

    /// The controller's count for an acknowledged data packet of `bytes` payload: 1 up to the
    /// base size, else its bytes in base-sized packets (the remainder carried to the next), so
    /// that its window, in base-sized packets, means the same bytes whatever the packet size.
    pub(super) fn acked_units(&mut self, bytes: u32) -> u32 {
        let base = self.config.mss as u64;
        if bytes as u64 <= base {
            return 1;
        }
        if let Some(p) = self.pmtu.as_mut() {
            p.on_large_acked();
        }
        self.acked_carry += bytes as u64;
        let n = self.acked_carry / base;
        self.acked_carry -= n * base;
        n as u32
    }

    /// Data packets larger than the base, the latest sent at `sent`, were declared lost at
    /// `now`: perhaps the path stopped carrying them.
    pub(super) fn on_large_lost(&mut self, now: Time, sent: Time) {
        if self
            .pmtu
            .as_mut()
            .is_some_and(|p| p.on_large_lost(now, sent))
        {
            self.fall_back_to_base();
        }
    }

    /// A black hole: everything in flight is lost, and what is not acknowledged is cut again
    /// at the base size (chunk ids are reused, so no packet carrying an old one may stay in
    /// flight). The controller has heard of the losses that led here.
    fn fall_back_to_base(&mut self) {
        let mut pn = self.sent.scan;
        while pn < self.sent.next_pn() {
            if let Some(p) = self.sent.lose(pn) {
                if p.chunk == MTU_PROBE_CHUNK {
                    self.mtu_probe_lost(pn);
                } else {
                    self.stats.packets_lost += 1;
                }
            }
            pn += 1;
        }
        self.sent.scan = self.sent.next_pn();
        self.sent.trim();
        self.loss_time = None;
        self.stream.rewind();
        self.data_mss = self.config.mss;
    }

    /// Retransmission timeout with nothing in flight but a probe: the probe is lost, and the
    /// timeout is not one (returns true).
    pub(super) fn rto_of_probe_alone(&mut self) -> bool {
        let Some(pn) = self.pmtu.as_ref().and_then(|p| p.outstanding()) else {
            return false;
        };
        if self.sent.packets_in_flight != 1 || self.sent.lose(pn).is_none() {
            return false;
        }
        self.mtu_probe_lost(pn);
        self.sent.trim();
        true
    }

    /// The driver could not send packet `pn`, just returned by `poll_transmit`: the local
    /// interface refused it as too big (`EMSGSIZE`: its MTU is below the packet). A probe's
    /// size is then too big; a data packet of a raised size brings the size back to the base,
    /// as a black hole does, and what was not acknowledged goes again in packets that fit.
    /// Returns false when the packet is of the base size: nothing smaller is left to try, and
    /// the driver should report the error.
    pub fn on_too_big(&mut self, pn: u64) -> bool {
        let Some(p) = self.sent.get(pn).copied() else {
            return false;
        };
        if p.chunk == MTU_PROBE_CHUNK {
            if self.sent.lose(pn).is_some() {
                if let Some(s) = self.pmtu.as_mut() {
                    s.on_probe_refused(pn);
                }
                self.sent.trim();
            }
            return true;
        }
        if p.bytes <= self.config.mss {
            return false;
        }
        // Already back at the base (an earlier packet of the batch): its record is lost too.
        if self.pmtu.as_mut().is_some_and(|s| s.on_refused()) {
            self.fall_back_to_base();
        }
        true
    }

    /// Packet `pn`, a probe, was taken out of flight as lost.
    pub(super) fn mtu_probe_lost(&mut self, pn: u64) {
        if let Some(p) = self.pmtu.as_mut() {
            p.on_probe_lost(pn);
        }
    }

    /// The probe `pn` never left (the host's queue was full): the search sends it again.
    pub(super) fn mtu_probe_not_sent(&mut self, pn: u64) {
        if let Some(p) = self.pmtu.as_mut() {
            p.on_probe_not_sent(pn);
        }
    }
}

/// What one pass of loss detection found among data packets (probes left out), in the
/// controller's units.
#[derive(Default)]
pub(super) struct LostData {
    /// Data packets lost.
    pub packets: u32,
    /// Those packets in base-sized packets (each rounded up).
    pub units: u32,
    /// The largest lost and its send time.
    pub largest: u64,
    pub largest_time_sent: Time,
    /// Send time of the latest lost packet larger than the base, if any.
    pub large_sent: Option<Time>,
}

impl LostData {
    /// Count packet `pn`, lost; `base` is the base payload size.
    pub fn add(&mut self, pn: u64, p: &SentPacket, base: u32) {
        self.packets += 1;
        if p.bytes > base {
            self.units += p.bytes.div_ceil(base);
            self.large_sent = Some(p.time_sent);
        } else {
            self.units += 1;
        }
        self.largest = pn;
        self.largest_time_sent = p.time_sent;
    }
}
