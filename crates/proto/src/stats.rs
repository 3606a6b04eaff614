//! Counters and current estimates, as `ss -i` shows them for a TCP socket.

use crate::limits::SendTimes;
use crate::pmtu::PmtuStats;

/// A snapshot of a connection's counters and state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes newly acknowledged by the peer.
    pub bytes_acked: u64,
    /// Payload bytes the application has read.
    pub bytes_delivered: u64,
    /// Of those, bytes the application took from their packets (`Connection::handle_datagram`),
    /// without passing through the receive buffer.
    pub bytes_delivered_direct: u64,
    /// New payload bytes received (duplicates excluded).
    pub bytes_received: u64,
    /// Datagrams produced by `poll_transmit`, and their on-wire bytes.
    pub datagrams_sent: u64,
    /// Bytes those datagrams occupy on the wire (UDP payload).
    pub wire_bytes_sent: u64,
    /// Data packets sent, retransmissions included.
    pub packets_sent: u64,
    /// Data packets declared lost (by loss detection or a retransmission timeout).
    pub packets_lost: u64,
    /// Data packets sent that resend earlier data.
    pub packets_retransmitted: u64,
    /// Data packets received.
    pub packets_received: u64,
    /// Data packets received that carried no new byte.
    pub duplicate_packets: u64,
    /// ACK packets sent.
    pub acks_sent: u64,
    /// ACK packets received.
    pub acks_received: u64,
    /// Datagrams rejected by `handle_packet` (every kind of rejection, the ones below included).
    pub packets_rejected: u64,
    /// Security on: sealed datagrams that failed authentication, or named a key phase this end
    /// does not keep (forged, damaged, or sealed under a key long gone).
    pub auth_failures: u64,
    /// Security on: sealed datagrams refused because their seal number was accepted before.
    pub replays: u64,
    /// Security on: sealed datagrams refused because their seal number is behind the
    /// anti-replay window.
    pub too_old: u64,
    /// Security on: clear DATA, ACK, CLOSE or plain HANDSHAKE packets, ignored.
    pub unsealed: u64,
    /// Security on: times this end moved its sending key to the next one.
    pub key_updates: u64,
    /// Security on: times the peer's sending key moved on (as followed by this end).
    pub peer_key_updates: u64,
    /// Retransmission timeouts that fired.
    pub rto_count: u64,
    /// Loss events that started a recovery period (window reductions).
    pub congestion_events: u64,
    /// Smoothed RTT, µs (0 before the first sample).
    pub srtt_us: u64,
    /// Smallest RTT sample, µs (0 before the first).
    pub min_rtt_us: u64,
    /// RTT variation, µs.
    pub rttvar_us: u64,
    /// The latest RTT sample, µs.
    pub latest_rtt_us: u64,
    /// RTT samples taken so far (`latest_rtt_us` is new whenever this grows).
    pub rtt_samples: u64,
    /// The congestion window in bytes: `cwnd_packets × mss`.
    pub cwnd_bytes: u64,
    /// The congestion window, packets (the controller's unit).
    pub cwnd_packets: f64,
    /// The slow-start threshold, packets.
    pub ssthresh_packets: f64,
    /// The pacing rate in use, bytes/s (0 before the first RTT sample).
    pub pacing_rate: u64,
    /// Payload bytes in flight.
    pub bytes_in_flight: u64,
    /// Data packets in flight.
    pub packets_in_flight: u64,
    /// Time the sender spent sending and in each state that held it back
    /// ([`crate::limits`]).
    pub send_times: SendTimes,
    /// Path MTU discovery's state and counters (`None`: discovery is off). Probes are counted
    /// in `datagrams_sent` and `wire_bytes_sent`, not as data packets.
    pub pmtu: Option<PmtuStats>,
}
