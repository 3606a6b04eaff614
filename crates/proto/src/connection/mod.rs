//! The connection: one endpoint of a reliable, congestion-controlled byte stream in each
//! direction, as a sans-IO state machine.
//!
//! The driver (simulator, UDP transport, test) owns time and the network. It hands datagrams in
//! with [`Connection::handle_packet`], drains datagrams out with [`Connection::poll_transmit`]
//! until it returns `None`, asks [`Connection::poll_timeout`] when to come back, and calls
//! [`Connection::handle_timeout`] then. The application side writes and reads the stream.
//!
//! `finish` ends the local stream (the last data packet carries a fin); `close` sends a close
//! packet and ends the connection at once.
//!
//! The state is one struct; its methods are grouped by concern, one file each:
//! - this file: the state, its creation, the application side and what a caller can read;
//! - `receive.rs`: datagrams in, by kind; data packets into the receive buffer;
//! - `handshake.rs`: establishing the connection, plain or with the Noise handshake;
//! - `sealed.rs`: security on, opening and sealing datagrams;
//! - `ack.rs`: ACKs in: RTT samples, loss detection, recovery and the controller's events;
//! - `timers.rs`: the retransmission, loss and idle timers;
//! - `transmit.rs`: datagrams out: close, handshake, ACK, and data within window and pacing;
//! - `mtu.rs`: path MTU discovery's probes, the data packets' size, and black holes.

mod ack;
mod handshake;
mod mtu;
mod receive;
mod sealed;
mod timers;
mod transmit;

use crate::config::Config;
use crate::error::ConfigError;
use crate::limits::SendClock;
use crate::packet::{CloseCode, DataHeader, PacketKind};
use crate::pmtu::PmtuSearch;
use crate::reassembly::Reassembly;
use crate::recv::AckState;
use crate::secure::session::Session;
use crate::secure::{Cipher, PendingSeal, StaticKey};
use crate::send_buffer::Payload;
use crate::stats::Stats;
use crate::stream::SendStream;
use longhaul_cc::sender::pacer::Pacer;
use longhaul_cc::sender::rate::DeliveryRate;
use longhaul_cc::sender::rtt::RttEstimator;
use longhaul_cc::sender::sent::SentPackets;
use longhaul_cc::{CongestionControl, Time};
use std::time::Duration;

pub use crate::side::Side;

/// One datagram produced by [`Connection::poll_transmit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Bytes written to the buffer: the datagram to hand to the network, or, when its payload
    /// is lent ([`Connection::poll_transmit_vectored`]), the part before the payload.
    pub len: usize,
    /// Bytes the datagram occupies on the wire (UDP payload): `len` plus the payload elided in
    /// synthetic mode. In real mode, `len` plus the lent payload's length if there is one.
    pub wire_len: usize,
    /// Which kind of packet the datagram is.
    pub kind: PacketKind,
    /// The data packet's number.
    pub packet_number: Option<u64>,
    /// A data packet resending earlier data.
    pub retransmission: bool,
}

/// A datagram as the connection writes it, before the public calls pick their parts.
#[derive(Debug)]
struct Written {
    t: Transmit,
    /// Synthetic mode: the data packet's header, not encoded.
    header: Option<DataHeader>,
    /// Security on: the seal still to apply.
    seal: Option<PendingSeal>,
    /// The data payload, lent instead of written after the header (`t.len` bytes).
    payload: Option<Payload>,
}

impl Written {
    /// A datagram written whole into the buffer.
    fn whole(t: Transmit) -> Written {
        Written {
            t,
            header: None,
            seal: None,
            payload: None,
        }
    }
}

/// Why the connection closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CloseReason {
    /// Why: the application, a timeout, a protocol or security failure.
    pub code: CloseCode,
    /// True if the peer closed (its close packet arrived).
    pub by_peer: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Client: handshake sent, no answer yet.
    Connecting,
    /// Server: waiting for a handshake.
    Listening,
    Established,
    Closed,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Connecting => "connecting",
            State::Listening => "listening",
            State::Established => "established",
            State::Closed => "closed",
        }
    }
}

/// A packet number farther than this above the largest received is rejected.
const MAX_PN_JUMP: u64 = 1 << 32;
/// Chunk id used by window probes, which carry no stream data.
const PROBE_CHUNK: u64 = u64::MAX;
/// Chunk id used by path-MTU probes, which carry no stream data either.
const MTU_PROBE_CHUNK: u64 = u64::MAX - 1;

/// One endpoint. See the module documentation.
#[derive(Debug)]
pub struct Connection {
    config: Config,
    side: Side,
    state: State,
    cc: Box<dyn CongestionControl>,
    rtt: RttEstimator,
    /// The RTO before backoff and the loss-detection delay, both functions of the RTT
    /// estimate alone: recomputed when it changes rather than at every `poll_timeout` and ACK.
    rto_base: Duration,
    loss_delay: Duration,
    sent: SentPackets,
    stream: SendStream,
    rate: DeliveryRate,
    pacer: Pacer,
    ack: AckState,
    recv: Reassembly,
    /// The peer's flow-control limit.
    peer_max_offset: u64,
    /// Our own limit crossing this announces the larger window at once (see `after_read`).
    next_window_update: u64,
    /// CE marks the peer has echoed so far.
    peer_ce_count: u64,
    /// A handshake (request or answer) should be sent.
    handshake_pending: bool,
    handshake_sent_at: Option<Time>,
    /// Timestamp of the peer's handshake, echoed in the answer.
    handshake_echo_us: u64,
    /// Consecutive retransmission timeouts (the backoff exponent).
    rto_backoff: u32,
    /// When the time threshold declares the next packet lost.
    loss_time: Option<Time>,
    last_ack_eliciting_sent: Option<Time>,
    recovery_start: Option<Time>,
    /// Send time of the newest packet the latest ACK acknowledged (a recovery period is over
    /// once this passes `recovery_start`).
    newest_acked_sent: Time,
    /// The window was found full during the current window of data (Linux `is_cwnd_limited`).
    window_used: bool,
    /// Most bytes in flight during it (Linux `max_packets_out`).
    max_in_flight: u64,
    /// That window of data ends when this packet is acknowledged (Linux `cwnd_usage_seq`).
    window_usage_end: u64,
    app_limited_notified: bool,
    /// A window probe (zero-length data packet) may go out regardless of the window.
    probe_pending: bool,
    /// When the pacer next releases a packet, if it is what holds data back.
    pacing_release: Option<Time>,
    /// Time spent sending and held back, by reason.
    send_clock: SendClock,
    close_pending: Option<CloseCode>,
    close_reason: Option<CloseReason>,
    last_received: Time,
    /// When the datagram being handled entered the host (`handle_packet_at`; `now` otherwise):
    /// what its RTT sample or the ACK delay it starts counts from.
    arrived: Time,
    stats: Stats,
    /// The secure layer (`None` with security off).
    secure: Option<Box<Session>>,
    /// Where sealed datagrams are opened (allocated with the keys).
    scratch: Vec<u8>,
    /// While a datagram is handled by [`Connection::handle_datagram`]: how many of the
    /// stream's next bytes the caller takes itself, and (address, length) of those taken.
    take_room: usize,
    taken: (usize, usize),
    /// Client, security on: the INIT went out more than once (no RTT sample from its answer).
    handshake_repeated: bool,
    /// Client, security on: FINISH should be sent (first after the RESPONSE, then again on
    /// the retransmission timer until the server shows it has the keys).
    finish_pending: bool,
    /// Server, security on: the client's synthetic flag from its INIT, checked at FINISH.
    peer_synthetic: bool,
    /// Path MTU discovery, when configured (`mtu.rs`).
    pmtu: Option<PmtuSearch>,
    /// Payload bytes of a full data packet now: `config.mss` (the base) unless the search
    /// raised it.
    data_mss: u32,
    /// Payload bytes of acknowledged large packets not yet counted to the controller in whole
    /// base-sized packets (`mtu.rs`).
    acked_carry: u64,
}

impl Connection {
    /// A new endpoint at `now`. The client's first `poll_transmit` sends the handshake.
    pub fn new(mut config: Config, side: Side, now: Time) -> Result<Connection, ConfigError> {
        config.validate()?;
        config.setup.mss = config.mss;
        // The pacer counts datagrams: payload plus the data header (and seal).
        config.setup.header_bytes = config.data_overhead() as u32;
        let mut cc = config.cc.build(&config.setup)?;
        // Every packet is paced: at the controller's rate, else by Linux's default rule.
        cc.on_transport_pacing(true);
        let secure = Session::new(&config.security, side)?.map(Box::new);
        let rtt = RttEstimator::new(config.initial_rto);
        let pmtu = config
            .pmtu_max
            .filter(|&bound| bound > config.base_mtu())
            .map(|bound| PmtuSearch::new(config.base_mtu(), bound));
        Ok(Connection {
            side,
            state: match side {
                Side::Client => State::Connecting,
                Side::Server => State::Listening,
            },
            cc,
            rto_base: rtt.rto(config.max_ack_delay, config.min_rto, config.max_rto),
            loss_delay: rtt.loss_delay(),
            rtt,
            sent: SentPackets::new(),
            stream: SendStream::new(config.synthetic, config.send_buffer),
            rate: DeliveryRate::default(),
            pacer: Pacer::new(),
            ack: AckState::new(config.ack_every, config.max_ack_delay, config.mss),
            recv: Reassembly::new(config.synthetic, config.recv_window),
            peer_max_offset: 0,
            next_window_update: Self::window_update_after(config.recv_window, config.recv_window),
            peer_ce_count: 0,
            handshake_pending: side == Side::Client,
            handshake_sent_at: None,
            handshake_echo_us: 0,
            rto_backoff: 0,
            loss_time: None,
            last_ack_eliciting_sent: None,
            recovery_start: None,
            newest_acked_sent: Time::ZERO,
            window_used: false,
            max_in_flight: 0,
            window_usage_end: 0,
            app_limited_notified: false,
            probe_pending: false,
            pacing_release: None,
            send_clock: SendClock::default(),
            close_pending: None,
            close_reason: None,
            last_received: now,
            arrived: now,
            stats: Stats::default(),
            secure,
            scratch: Vec::new(),
            take_room: 0,
            taken: (0, 0),
            handshake_repeated: false,
            finish_pending: false,
            peer_synthetic: false,
            pmtu,
            data_mss: config.mss,
            acked_carry: 0,
            config,
        })
    }

    /// Queue bytes for sending (real mode); returns how many fit in the send buffer.
    pub fn write(&mut self, data: &[u8]) -> usize {
        if self.state == State::Closed {
            return 0;
        }
        self.stream.write(data)
    }

    /// Queue `buf` for sending without copying it (real mode): taken whole if the send buffer
    /// has room for any of it, else handed back. Once every byte in it is acknowledged, and
    /// no [`Payload`] of it lent by [`Connection::poll_transmit_vectored`] remains, it is
    /// offered back by [`Connection::take_spent`], for the application to fill again.
    pub fn write_owned(&mut self, buf: Vec<u8>) -> Result<usize, Vec<u8>> {
        if self.state == State::Closed {
            return Err(buf);
        }
        self.stream.write_owned(buf)
    }

    /// A buffer given to [`Connection::write_owned`] whose bytes are all acknowledged and of
    /// which no lent [`Payload`] remains.
    pub fn take_spent(&mut self) -> Option<Vec<u8>> {
        self.stream.take_spent()
    }

    /// Queue `n` bytes of synthetic data; returns how many fit in the send buffer.
    pub fn write_synthetic(&mut self, n: u64) -> u64 {
        if self.state == State::Closed {
            return 0;
        }
        self.stream.write_synthetic(n)
    }

    /// End the local stream: no more writes; the peer sees the end after the last byte.
    pub fn finish(&mut self) {
        self.stream.finish();
    }

    /// Read received bytes in order (real mode); returns the count (0 if none are ready).
    pub fn read(&mut self, out: &mut [u8]) -> usize {
        let n = self.recv.read(out);
        self.after_read(n as u64);
        n
    }

    /// Consume every received in-order byte (synthetic mode); returns the count.
    pub fn read_synthetic(&mut self) -> u64 {
        let n = self.recv.read_synthetic();
        self.after_read(n);
        n
    }

    /// The application holds `bytes` of the stream it has read and not finished with (a
    /// file's pieces queued for its disk, say): they count against the receive window, so the
    /// peer sends no further ahead than the window allows of the bytes held and buffered
    /// together (a limit already advertised stands). Give the total held now at each call;
    /// letting bytes go announces the larger window once a quarter of it is free, as reading
    /// does.
    pub fn set_held(&mut self, bytes: u64) {
        self.recv.set_held(bytes);
        self.limit_moved();
    }

    /// Bytes ready to be read.
    pub fn readable(&self) -> u64 {
        self.recv.readable()
    }

    /// The peer finished its stream and the application has read all of it.
    pub fn is_recv_finished(&self) -> bool {
        self.recv.is_finished()
    }

    /// `finish` was called and the peer acknowledged every byte and the end of the stream.
    pub fn is_send_complete(&self) -> bool {
        self.stream.all_acked()
    }

    /// Bytes written and not yet acknowledged.
    pub fn send_buffered(&self) -> u64 {
        self.stream.written() - self.stream.acked_offset()
    }

    /// Close now: a close packet goes out with the next `poll_transmit`, then the connection is
    /// closed. Unacknowledged data is abandoned (call `finish` and wait for
    /// `is_send_complete` first for a graceful end).
    pub fn close(&mut self) {
        if self.state != State::Closed && self.close_pending.is_none() {
            self.close_pending = Some(CloseCode::Application);
            self.close_reason = Some(CloseReason {
                code: CloseCode::Application,
                by_peer: false,
            });
        }
    }

    /// The connection is closed (locally, by the peer, or by a timeout) and its close packet,
    /// if any, has been sent.
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed && self.close_pending.is_none()
    }

    /// Why the connection closed; `None` while it is open.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.close_reason
    }

    /// Both ends have exchanged handshakes (as far as this end knows).
    pub fn is_established(&self) -> bool {
        self.state == State::Established
    }

    /// Which end this is.
    pub fn side(&self) -> Side {
        self.side
    }

    /// Security on: the peer's static public key, once the handshake has authenticated it (the
    /// client learns it from the RESPONSE, the server from FINISH). It is set even when the
    /// [`crate::secure::PeerPolicy`] refused it, so that a refusal can name the key.
    pub fn peer_key(&self) -> Option<StaticKey> {
        self.secure.as_ref().and_then(|s| s.peer_key())
    }

    /// Security on: the AEAD suite the handshake settled on.
    pub fn cipher(&self) -> Option<Cipher> {
        self.secure.as_ref().and_then(|s| s.cipher())
    }

    /// Security is on for this connection.
    pub fn is_secure(&self) -> bool {
        self.secure.is_some()
    }

    /// The settings the connection was created with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The congestion controller, to read its state.
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// Counters and current estimates.
    pub fn stats(&self) -> Stats {
        let mut s = self.stats;
        s.srtt_us = self.rtt.srtt().map_or(0, |d| d.as_micros() as u64);
        s.min_rtt_us = self.rtt.min_rtt().map_or(0, |d| d.as_micros() as u64);
        s.rttvar_us = self.rtt.rttvar().as_micros() as u64;
        s.latest_rtt_us = self.rtt.latest().as_micros() as u64;
        s.cwnd_packets = self.cc.cwnd();
        s.cwnd_bytes = self.cwnd_bytes();
        s.ssthresh_packets = self.cc.ssthresh();
        s.pacing_rate = self.pacing_rate().unwrap_or(0);
        s.bytes_in_flight = self.sent.bytes_in_flight;
        s.packets_in_flight = self.sent.packets_in_flight;
        s.send_times = self.send_clock.times();
        s.pmtu = self.pmtu.as_ref().map(PmtuSearch::stats);
        s
    }

    /// RTT samples taken so far and the latest one: what `stats()` reports as `rtt_samples`
    /// and `latest_rtt_us`, without assembling the whole snapshot (for drivers that look after
    /// every packet).
    pub fn rtt_samples(&self) -> (u64, Duration) {
        (self.stats.rtt_samples, self.rtt.latest())
    }

    /// Records visited by ACK processing and loss detection so far (a work counter, for
    /// checking that per-packet cost stays constant).
    pub fn scoreboard_work(&self) -> u64 {
        self.sent.work
    }

    fn close_with(&mut self, code: CloseCode) {
        if self.state == State::Closed {
            return;
        }
        self.state = State::Closed;
        self.close_pending = Some(code);
        self.close_reason = Some(CloseReason {
            code,
            by_peer: false,
        });
    }
}
