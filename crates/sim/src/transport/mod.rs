//! The transports the simulator drives, behind one sans-IO interface.
//!
//! An [`Endpoint`] is one end of a connection, driven exactly as a real event loop drives it:
//! hand it a packet with `handle_packet`, drain `poll_transmit`, fire `handle_timeout` at
//! `poll_timeout`. The simulator owns the clock (integer ns) and the network; an endpoint owns
//! only its protocol state, so the same code paths run in simulation and over real sockets.

pub mod model;
pub mod proto;

use crate::packet::Packet;
use longhaul_metrics::online::DelayAccumulator;

/// One end of a connection, driven by the simulator.
pub trait Endpoint {
    /// A packet (and its bytes, for transports that encode them) arrived at `now`.
    fn handle_packet(&mut self, now: u64, pkt: &Packet, bytes: &[u8]);
    /// The next packet to send at `now`, if any. Header bytes, if the transport encodes them,
    /// are written into `buf` (cleared by the caller). The simulator fills in routing fields.
    fn poll_transmit(&mut self, now: u64, buf: &mut Vec<u8>) -> Option<Packet>;
    /// When `handle_timeout` must next be called (a timer or a pacing release), if ever.
    fn poll_timeout(&self) -> Option<u64>;
    /// Fire whatever is due at `now` (timers, pacing releases).
    fn handle_timeout(&mut self, now: u64);
}

/// What the simulator samples from a sender for time series and the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SenderSnapshot {
    /// Payload bytes per full packet.
    pub mss: u32,
    /// Congestion window, packets.
    pub cwnd: f64,
    /// Smoothed RTT, ns (0 before the first sample).
    pub srtt_ns: u64,
    /// Latest RTT sample, ns.
    pub latest_rtt_ns: u64,
    /// Payload bytes in flight.
    pub bytes_in_flight: u64,
    /// Data packets sent, retransmissions included.
    pub packets_sent: u64,
    /// Data packets retransmitted.
    pub retransmits: u64,
    /// Packets declared lost (by the sender's loss detection).
    pub packets_lost: u64,
    /// True once the sender has nothing more to send and everything is acknowledged.
    pub finished: bool,
}

/// A sending endpoint the simulator can observe.
pub trait FlowSender: Endpoint {
    /// The packet `poll_transmit` just returned was dropped by the sender's own full host queue
    /// (`access.on_full = "drop"`): it never left the host. The sender sends its data again and
    /// takes the drop as a local congestion signal, once per window (Linux 2.4's
    /// `tcp_transmit_skb` → `tcp_enter_cwr`).
    fn on_local_drop(&mut self, now: u64, pkt: &Packet);
    /// The sender's state now, for samples and the summary.
    fn snapshot(&self) -> SenderSnapshot;
    /// Every RTT sample the sender took, ns.
    fn rtt(&self) -> &DelayAccumulator;
    /// The sender's RTT samples, writable (to keep every sample for a reference check).
    fn rtt_mut(&mut self) -> &mut DelayAccumulator;
}

/// A receiving endpoint: its application's delivered bytes.
pub trait FlowReceiver: Endpoint {
    /// Unique payload bytes delivered to the application.
    fn delivered_bytes(&self) -> u64;
}

/// A sender of either transport, dispatched by `match` rather than through a vtable: the
/// engine calls `poll_transmit` at least twice per packet, and a static call lets the compiler
/// inline it and keep the returned packet in registers instead of passing it through memory.
// The engine keeps each endpoint in a `Box`, so a proto connection's size costs a model flow
// nothing.
#[allow(clippy::large_enum_variant)]
pub enum AnySender {
    /// The compact TCP model.
    Model(model::ModelSender),
    /// longhaul's own transport.
    Proto(proto::ProtoSender),
}

/// A receiver of either transport (see [`AnySender`]).
#[allow(clippy::large_enum_variant)]
pub enum AnyReceiver {
    /// The compact TCP model.
    Model(model::ModelReceiver),
    /// longhaul's own transport.
    Proto(proto::ProtoReceiver),
}

/// Forward a method to whichever transport an [`AnySender`] or [`AnyReceiver`] holds.
macro_rules! dispatch {
    ($self:expr, $e:ident => $body:expr) => {
        match $self {
            Self::Model($e) => $body,
            Self::Proto($e) => $body,
        }
    };
}

impl Endpoint for AnySender {
    #[inline]
    fn handle_packet(&mut self, now: u64, pkt: &Packet, bytes: &[u8]) {
        dispatch!(self, e => e.handle_packet(now, pkt, bytes))
    }
    #[inline]
    fn poll_transmit(&mut self, now: u64, buf: &mut Vec<u8>) -> Option<Packet> {
        dispatch!(self, e => e.poll_transmit(now, buf))
    }
    #[inline]
    fn poll_timeout(&self) -> Option<u64> {
        dispatch!(self, e => e.poll_timeout())
    }
    #[inline]
    fn handle_timeout(&mut self, now: u64) {
        dispatch!(self, e => e.handle_timeout(now))
    }
}

impl FlowSender for AnySender {
    fn on_local_drop(&mut self, now: u64, pkt: &Packet) {
        dispatch!(self, e => e.on_local_drop(now, pkt))
    }
    fn snapshot(&self) -> SenderSnapshot {
        dispatch!(self, e => e.snapshot())
    }
    fn rtt(&self) -> &DelayAccumulator {
        dispatch!(self, e => e.rtt())
    }
    fn rtt_mut(&mut self) -> &mut DelayAccumulator {
        dispatch!(self, e => e.rtt_mut())
    }
}

impl Endpoint for AnyReceiver {
    #[inline]
    fn handle_packet(&mut self, now: u64, pkt: &Packet, bytes: &[u8]) {
        dispatch!(self, e => e.handle_packet(now, pkt, bytes))
    }
    #[inline]
    fn poll_transmit(&mut self, now: u64, buf: &mut Vec<u8>) -> Option<Packet> {
        dispatch!(self, e => e.poll_transmit(now, buf))
    }
    #[inline]
    fn poll_timeout(&self) -> Option<u64> {
        dispatch!(self, e => e.poll_timeout())
    }
    #[inline]
    fn handle_timeout(&mut self, now: u64) {
        dispatch!(self, e => e.handle_timeout(now))
    }
}

impl FlowReceiver for AnyReceiver {
    #[inline]
    fn delivered_bytes(&self) -> u64 {
        dispatch!(self, e => e.delivered_bytes())
    }
}
