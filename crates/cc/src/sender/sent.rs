//! The sender's record of packets in flight: a ring indexed by packet number.
//!
//! Packet numbers are assigned consecutively and never reused, so the records form a
//! `VecDeque` where packet `pn` lives at index `pn − base`. A record is created when a data
//! packet is sent and leaves the ring when it, and every older packet, is acknowledged or
//! declared lost; the ring therefore holds exactly the window (plus the few acked or lost
//! records stranded above the oldest packet still in flight). At 100 Gb/s × 200 ms that is
//! about 2 million records; the ring grows to that once and is then reused, so sending and
//! acknowledging allocate nothing.
//!
//! `scan` is the loss-detection cursor: every packet below it is no longer in flight. ACK
//! processing only looks at packet numbers at or above it, and loss detection starts there, so
//! each packet is visited a bounded number of times over its life no matter how many SACK
//! ranges repeat it (the quadratic SACK-walk that bit Linux before 2.6.26 at 20 MB windows).
//! The price: an ACK that arrives for a packet already declared lost (a spurious loss) is not
//! noticed through its packet number; the receiver's cumulative offset still stops the
//! retransmission from being sent if it has not left yet.

use crate::time::Time;
use std::collections::VecDeque;

/// Where a sent packet stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketState {
    /// Sent, neither acknowledged nor declared lost.
    InFlight,
    /// Acknowledged.
    Acked,
    /// Declared lost (its data is resent in a new packet).
    Lost,
}

/// What the sender remembers about one data packet.
#[derive(Clone, Copy, Debug)]
pub struct SentPacket {
    /// When it was sent.
    pub time_sent: Time,
    /// The sender's name for the data it carried, which a loss puts back in the queue (proto's
    /// stream chunk, the model's MSS-sized chunk).
    pub chunk: u64,
    /// Bytes counted in flight: the payload length.
    pub bytes: u32,
    /// In flight, acknowledged or lost.
    pub state: PacketState,
    /// Bytes in flight just after this packet was sent (for `AckEvent::in_flight_at_send`).
    pub in_flight_at_send: u64,
    /// Delivery-rate state at send time (draft-cheng-iccrg-delivery-rate-estimation §3.2).
    pub delivered: u64,
    /// When the last delivery before it happened (delivery-rate state).
    pub delivered_time: Time,
    /// When the first packet of its flight was sent (delivery-rate state).
    pub first_sent_time: Time,
    /// It was sent while the sender was application-limited.
    pub app_limited: bool,
}

/// The records of sent data packets, by packet number (see the module header).
#[derive(Debug, Default)]
pub struct SentPackets {
    ring: VecDeque<SentPacket>,
    /// Packet number of `ring[0]`.
    base: u64,
    /// The next packet number to assign.
    next_pn: u64,
    /// Every packet below this is acknowledged or lost.
    pub scan: u64,
    /// Payload bytes of the packets in flight.
    pub bytes_in_flight: u64,
    /// Packets in flight.
    pub packets_in_flight: u64,
    /// Largest packet number acknowledged so far.
    pub largest_acked: Option<u64>,
    /// Records visited by ACK processing and loss detection (a work counter for tests).
    pub work: u64,
}

impl SentPackets {
    /// An empty record; the first packet gets number 0.
    pub fn new() -> SentPackets {
        SentPackets::default()
    }

    /// The packet number the next packet sent will get.
    pub fn next_pn(&self) -> u64 {
        self.next_pn
    }

    /// Record a packet sent now; returns its packet number.
    pub fn push(&mut self, mut p: SentPacket) -> u64 {
        let pn = self.next_pn;
        self.next_pn += 1;
        self.bytes_in_flight += p.bytes as u64;
        self.packets_in_flight += 1;
        p.in_flight_at_send = self.bytes_in_flight;
        p.state = PacketState::InFlight;
        if self.ring.is_empty() {
            self.base = pn;
        }
        self.ring.push_back(p);
        pn
    }

    /// The record of packet `pn`, if it is still kept.
    pub fn get(&self, pn: u64) -> Option<&SentPacket> {
        pn.checked_sub(self.base)
            .and_then(|i| self.ring.get(usize::try_from(i).ok()?))
    }

    /// The record of packet `pn`, writable, if it is still kept.
    pub fn get_mut(&mut self, pn: u64) -> Option<&mut SentPacket> {
        pn.checked_sub(self.base)
            .and_then(|i| self.ring.get_mut(usize::try_from(i).ok()?))
    }

    /// Mark `pn` acknowledged if it is in flight; returns the record.
    pub fn ack(&mut self, pn: u64) -> Option<SentPacket> {
        self.work += 1;
        self.leave_flight(pn, PacketState::Acked)
    }

    /// Mark `pn` lost if it is in flight; returns the record.
    pub fn lose(&mut self, pn: u64) -> Option<SentPacket> {
        self.leave_flight(pn, PacketState::Lost)
    }

    /// Move `pn` out of flight into `state` (if it is in flight) and return its record.
    fn leave_flight(&mut self, pn: u64, state: PacketState) -> Option<SentPacket> {
        let p = self.get_mut(pn)?;
        if p.state != PacketState::InFlight {
            return None;
        }
        p.state = state;
        let p = *p;
        self.bytes_in_flight -= p.bytes as u64;
        self.packets_in_flight -= 1;
        Some(p)
    }

    /// Drop records from the front that are no longer in flight, and move `scan` past them.
    pub fn trim(&mut self) {
        while let Some(front) = self.ring.front() {
            if front.state == PacketState::InFlight {
                break;
            }
            self.ring.pop_front();
            self.base += 1;
        }
        if self.ring.is_empty() {
            self.base = self.next_pn;
        }
        self.scan = self.scan.max(self.base);
    }
}
