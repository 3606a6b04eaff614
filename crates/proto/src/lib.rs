//! # longhaul-proto: the reliable transport as a sans-IO state machine
//!
//! One [`Connection`] is one endpoint of a reliable byte stream (in each direction) with
//! pluggable congestion control from `longhaul-cc`. It never reads a clock, touches a socket or
//! allocates per packet in steady state; the simulator drives it in virtual time and the UDP
//! transport in real time, through the same calls (in the style of quinn-proto):
//!
//! ```text
//! Connection::new(config: Config, side: Side, now: Time) -> Result<Connection, ConfigError>
//!
//! // network side (the driver)
//! handle_packet(&mut self, now: Time, datagram: &[u8]) -> Result<(), PacketError>
//! handle_packet_ecn(&mut self, now: Time, datagram: &[u8], ce: bool) -> Result<(), PacketError>
//! handle_packet_at(&mut self, now: Time, arrived: Time, datagram: &[u8], ce: bool)  // kernel stamp
//! poll_transmit(&mut self, now: Time, buf: &mut [u8]) -> Option<Transmit>   // call until None
//! poll_timeout(&self) -> Option<Time>                                         // then sleep until
//! handle_timeout(&mut self, now: Time)                                        // ... and call this
//!
//! // for a driver that seals on another thread and sends a file's bytes from where the
//! // application gave them (the header in buf, the payload lent: `send_buffer`)
//! poll_transmit_vectored(&mut self, now, buf)
//!     -> Option<(Transmit, Option<PendingSeal>, Option<Payload>)>
//!
//! // for a driver that carries synthetic data headers as structs (the simulator)
//! poll_transmit_header(&mut self, now, buf) -> Option<(Transmit, Option<DataHeader>)>
//! handle_data_header(&mut self, now, &DataHeader, ce: bool) -> Result<(), PacketError>
//!
//! // application side
//! write(&mut self, &[u8]) -> usize            read(&mut self, &mut [u8]) -> usize      (real mode)
//! write_owned(&mut self, Vec<u8>) -> Result<usize, Vec<u8>>   take_spent() -> Option<Vec<u8>>
//! write_synthetic(&mut self, u64) -> u64      read_synthetic(&mut self) -> u64        (synthetic)
//! finish(&mut self)                           // end of the local stream
//! close(&mut self)                            // close now (sends a close packet)
//! readable(), is_recv_finished(), is_send_complete(), send_buffered(),
//! is_established(), is_closed(), close_reason(), stats() -> Stats, cc() -> &dyn CongestionControl,
//! config(), side(), scoreboard_work(), rtt_samples()
//!
//! // security (Config::security = Security::Noise { .. })
//! peer_key() -> Option<[u8; 32]>      cipher() -> Option<Cipher>      is_secure()
//!
//! // a server's driver, before any connection exists (address validation)
//! packet::handshake_token(datagram) -> Option<&[u8]>      // Some for an INIT (token may be empty)
//! packet::encode_retry(init, token, buf) -> Option<usize> // the RETRY answering that INIT
//! ```
//!
//! **Security** ([`secure`]): with `Config::security = Security::Noise { local, peer, cipher,
//! .. }` the connection opens with a Noise XX handshake (mutual authentication by static X25519
//! keys, forward secrecy) and then seals every datagram (AEGIS-256X4, AES-256-GCM or
//! ChaCha20-Poly1305; the seal number as nonce, the clear header as associated data, an
//! anti-replay window, key updates before the usage limits). Nothing in a datagram changes the connection before it
//! authenticates. `Security::Off` (the default, and the simulator's) is the plain protocol. A
//! secure datagram is 27 bytes longer: [`Config::mss_for`] and [`Config::max_datagram_size`]
//! count that. A server's driver creates a connection for each new INIT (it may first demand
//! a RETRY token); the peer's key is known and checked against the [`PeerPolicy`] before any of
//! its data is accepted, and [`Connection::peer_key`] tells the caller whom it talks to.
//!
//! A driver's loop: after every `handle_packet`, `handle_timeout`, `write` or `read`, call
//! `poll_transmit` until it returns `None` and send what it produced; then wake up at
//! `poll_timeout()` (which includes the pacer's next release time) and call `handle_timeout`.
//! `poll_transmit` needs a buffer of at least [`Config::max_datagram_size`] bytes.
//!
//! **Synthetic mode** (`Config::synthetic`, both ends alike, checked in the handshake): data
//! packets carry their header and payload length but no payload bytes, the application side
//! counts bytes with `write_synthetic`/`read_synthetic`, and no payload byte is stored or copied.
//! [`Transmit::len`] is the encoded length (what is in the buffer) and [`Transmit::wire_len`]
//! the length the packet has on the wire (what a link should serialize and a queue should
//! count). In real mode the two are equal.
//!
//! **Graceful end of a transfer**: the sender calls `finish()` after its last write and waits
//! for `is_send_complete()`; the receiver reads until `is_recv_finished()`. Either may then
//! `close()`.
//!
//! **Notes for drivers**
//! - Errors from `handle_packet` are never fatal: the datagram is ignored (and counted in
//!   `Stats::packets_rejected`). After the connection closed every datagram gets
//!   `PacketError::Closed`.
//! - `Transmit::wire_len` is the UDP payload. Add [`IP_UDP_OVERHEAD`] (28 bytes) for the IP
//!   packet; [`Config::mss_for_mtu`] gives the mss whose packets fill an MTU exactly.
//! - `Config::idle_timeout` (default 120 s) closes an *established* connection that has heard
//!   nothing for that long; a listening server never times out. Set it to `None` for flows that
//!   may pause longer (on/off traffic in a simulation).
//! - Timestamps on the wire are microseconds of the sender's own clock (only echoed back, so
//!   the two ends need no common epoch); RTT samples are exact to 1 µs.
//! - Security off, integrity is the UDP checksum's job: a damaged datagram that still decodes
//!   (a flipped payload byte or timestamp) is not detected. Security on, every datagram is
//!   authenticated, and refusals are counted by kind (`Stats::auth_failures`, `replays`,
//!   `too_old`, `unsealed`).
//! - Security on, `handle_data_header` refuses every header (a header carried as a struct was
//!   never sealed) and `poll_transmit_header` encodes every packet.
//!
//! **Path MTU discovery** ([`pmtu`], `Config::pmtu_max`, off by default): padded probes find
//! the largest datagram the path carries, up to the bound, and new data packets fill it
//! ([`Connection::path_mtu`]); a black hole brings them back to `mss`. The driver must send with
//! don't-fragment set and never fragment (Linux `IP_PMTUDISC_PROBE`), and hand
//! `poll_transmit` a buffer of [`Connection::datagram_room`] bytes (a smaller one defers a
//! probe); [`Config::max_datagram_size`] counts the bound.
//!
//! Modules, one concept each: [`packet`] (wire format), [`secure`] (handshake, sealing,
//! anti-replay, key schedule), [`pmtu`] (the path MTU search), `stream` (the sent stream's
//! chunks), `send_buffer` (its bytes,
//! copied or handed over whole), `recv` (ACK ranges and ACK policy), `reassembly` (receive
//! buffer and window), `side` (client or server), [`connection`] (one file per concern),
//! [`stats`], [`error`], [`config`]. The sender's parts every longhaul transport shares —
//! [`sent`] (in-flight records), [`loss`] (loss detection), [`rtt`] (RTT estimator and RTO),
//! [`pacer`] and [`rate`] (delivery-rate samples) — live in `longhaul_cc::sender`
//! (`crates/cc/src/sender.rs`), below this crate, the simulator's TCP model and the
//! controllers' single-bottleneck loop; they are re-exported here under their own names.

#![warn(missing_docs)]

pub mod config;
pub mod connection;
pub mod error;
pub mod limits;
pub mod packet;
mod pages;
pub mod pmtu;
mod reassembly;
mod recv;
pub mod secure;
mod send_buffer;
mod side;
pub mod stats;
mod stream;

pub use config::{Config, HOST_BURST_TIME, IP_UDP_OVERHEAD};
pub use connection::{CloseReason, Connection, Side, Transmit};
pub use error::{ConfigError, PacketError};
pub use limits::{SendState, SendTimes};
pub use longhaul_cc::sender::{loss, pacer, rate, rtt, sent};
pub use longhaul_cc::Time;
pub use packet::{CloseCode, PacketKind};
pub use pmtu::{Phase as PmtuPhase, PmtuStats};
pub use secure::{
    Cipher, Identity, KeyLimits, OpenAttempt, OpenedDatagram, Opener, PeerPolicy, PendingSeal,
    Security, StaticKey,
};
pub use send_buffer::Payload;
pub use stats::Stats;
