//! A packet in flight: a small `Copy` struct passed by value from queue to delay line to
//! endpoint, so the simulator never allocates per packet.
//!
//! The transport's own header fields ride in `seq`, `aux` and `echo`; a transport whose packets
//! are real bytes (proto) keeps them in a reusable buffer slot named by `buf`.

/// Which way a packet travels along its flow's route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Dir {
    /// Sender to receiver (data).
    Forward = 0,
    /// Receiver to sender (ACKs).
    Reverse = 1,
}

/// ECN codepoint (RFC 3168).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable.
    NotEct = 0,
    /// ECN-capable transport (ECT).
    Ect = 1,
    /// Congestion experienced: marked by a queue.
    Ce = 2,
}

/// No buffer slot: the packet's header lives in its fields.
pub const NO_BUF: u32 = u32::MAX;

/// A packet in flight through the simulated network (see the module header).
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// Flow (or cross-traffic source) the packet belongs to; indexes the route table.
    pub flow: u32,
    /// Bytes on the wire, headers included. 16 bits hold any packet: a scenario's MTU is at
    /// most 65,535 bytes (and a smaller struct is less to copy and to keep in delay lines).
    pub size: u16,
    /// Application payload bytes carried (0 for pure ACKs).
    pub payload: u16,
    /// Reusable byte-buffer slot, or [`NO_BUF`].
    pub buf: u32,
    /// Transport header fields.
    pub seq: u64,
    /// Transport header field: the model transport's chunk (data) or cumulative count (ACKs).
    pub aux: u64,
    /// Transport header field: the sender's timestamp, echoed back in ACKs.
    pub echo: u64,
    /// Position along the route: index of the port the packet is in or was last in.
    pub hop: u8,
    /// Which way it travels along its flow's route.
    pub dir: Dir,
    /// Its ECN codepoint.
    pub ecn: Ecn,
    /// Transport-specific flag bits.
    pub flags: u8,
}

impl Packet {
    /// A zero packet, for filling fields with `..Packet::EMPTY`.
    pub const EMPTY: Packet = Packet {
        flow: 0,
        size: 0,
        payload: 0,
        buf: NO_BUF,
        seq: 0,
        aux: 0,
        echo: 0,
        hop: 0,
        dir: Dir::Forward,
        ecn: Ecn::NotEct,
        flags: 0,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_is_five_words() {
        // Delay lines hold 10^4–10^5 of these per long fat link; keep them small.
        assert_eq!(std::mem::size_of::<Packet>(), 40);
    }
}
