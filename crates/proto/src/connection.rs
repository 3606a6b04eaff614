//! The connection: one endpoint of a reliable, congestion-controlled byte stream in each
//! direction, as a sans-IO state machine.
//!
//! The driver (simulator, UDP transport, test) owns time and the network. It hands datagrams in
//! with [`Connection::handle_packet`], drains datagrams out with [`Connection::poll_transmit`]
//! until it returns `None`, asks [`Connection::poll_timeout`] when to come back, and calls
//! [`Connection::handle_timeout`] then. The application side writes and reads the stream.
//!
//! Life cycle: the client sends a handshake carrying its receive window and mode; the server
//! answers with its own and is established at once; the client is established when the answer
//! arrives (its RTT is the first sample). Lost handshakes are resent on the retransmission timer
//! with backoff. Either side may then send data. With security on ([`crate::secure`]) the same
//! fields ride in the Noise handshake instead: INIT, RESPONSE (the client is established when
//! it arrives and its key is accepted), FINISH (the server is established when it authenticates
//! and the client's key is accepted); the client resends FINISH on its retransmission timer
//! until a sealed datagram from the server shows it arrived. Every later datagram is sealed on
//! its way out of `poll_transmit` (the plain packet is written after room for the seal's header
//! and sealed in place; `poll_transmit_unsealed` leaves the sealing to the driver, which may do
//! it on another thread) and opened before `process_decoded` sees it. `finish` ends the local
//! stream (the last data packet carries a fin); `close` sends a close packet and ends the
//! connection at once.
//!
//! Sending, per `poll_transmit`: a pending close, then a handshake, then an ACK if the ACK
//! policy says one is due, then data — a queued retransmission before new data — while a full
//! packet fits in the congestion window, the pacer releases the packet and the peer's window
//! has room. ACKs and handshakes are neither paced nor counted in flight.
//!
//! Congestion-control integration: every data packet is reported with `on_sent`; every ACK that
//! newly acknowledges data produces one `AckEvent` (after the losses it revealed were reported
//! with `on_loss`, so `in_recovery` is already accurate); a loss is `first_in_window` when the
//! largest lost packet was sent after the current recovery period began (RFC 9002 §7.3.2: one
//! reduction per window); a retransmission timeout marks everything in flight lost, calls
//! `on_rto` and starts a recovery period; ECN-CE echoes call `on_ecn` under the same
//! once-per-window rule. The window is `cc.cwnd() × mss` bytes of payload in flight. An ACK is
//! `cwnd_limited` only if the window was found full during the latest window of data (or, in
//! slow start, is below twice the most that was in flight), Linux's `tcp_is_cwnd_limited`: a
//! sender held back by a full device queue or the pacer does not earn window growth.
//!
//! Known simplifications: the packet threshold is fixed at 3 (no RACK reordering-window
//! adaptation, RFC 8985 §6.2), so heavy reordering causes spurious retransmissions and window
//! reductions, as in TCP without RACK; a late ACK of a packet already declared lost does not
//! undo the reduction (no F-RTO/Eifel); there is no persistent-congestion rule (RFC 9002 §7.6)
//! beyond the retransmission timeout itself.

use crate::config::Config;
use crate::error::{ConfigError, PacketError};
use crate::limits::{SendClock, SendState};
use crate::loss::detect_lost;
use crate::pacer::{Pacer, DEFAULT_BURST};
use crate::packet::{
    self, AckFields, CloseCode, DataHeader, Handshake, Outer, Packet, PacketKind, DATA_HEADER_LEN,
    SEAL_HEADER_LEN, SEAL_OVERHEAD, SEAL_TAG_LEN,
};
use crate::rate::DeliveryRate;
use crate::reassembly::{Reassembly, Sink};
use crate::recv::{AckState, Arrival};
use crate::rtt::RttEstimator;
use crate::secure::session::{InitOutcome, Session};
use crate::secure::{Cipher, OpenedDatagram, Opener, PendingSeal, StaticKey};
use crate::sent::{PacketState, SentPacket, SentPackets};
use crate::stats::Stats;
use crate::stream::SendStream;
use longhaul_cc::{AckEvent, CongestionControl, EcnEvent, LossEvent, RtoEvent, SentEvent, Time};
use std::time::Duration;

/// Which end of the connection this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// Starts the handshake.
    Client,
    /// Waits for it.
    Server,
}

/// One datagram produced by [`Connection::poll_transmit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Bytes written to the buffer: the datagram to hand to the network.
    pub len: usize,
    /// Bytes the datagram occupies on the wire (UDP payload): `len` plus the payload elided in
    /// synthetic mode. Equal to `len` in real mode.
    pub wire_len: usize,
    /// Which kind of packet the datagram is.
    pub kind: PacketKind,
    /// The data packet's number.
    pub packet_number: Option<u64>,
    /// A data packet resending earlier data.
    pub retransmission: bool,
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
    /// Client, security on: the INIT went out more than once (no RTT sample from its answer).
    handshake_repeated: bool,
    /// Client, security on: FINISH should be sent (first after the RESPONSE, then again on
    /// the retransmission timer until the server shows it has the keys).
    finish_pending: bool,
    /// Server, security on: the client's synthetic flag from its INIT, checked at FINISH.
    peer_synthetic: bool,
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
            ack: AckState::new(config.ack_every, config.max_ack_delay),
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
            handshake_repeated: false,
            finish_pending: false,
            peer_synthetic: false,
            config,
        })
    }

    // ----------------------------------------------------------------------------------------
    // Application side
    // ----------------------------------------------------------------------------------------

    /// Queue bytes for sending (real mode); returns how many fit in the send buffer.
    pub fn write(&mut self, data: &[u8]) -> usize {
        if self.state == State::Closed {
            return 0;
        }
        self.stream.write(data)
    }

    /// Queue `buf` for sending without copying it (real mode): taken whole if the send buffer
    /// has room for any of it, else handed back. Once every byte in it is acknowledged it is
    /// offered back by [`Connection::take_spent`], for the application to fill again.
    pub fn write_owned(&mut self, buf: Vec<u8>) -> Result<usize, Vec<u8>> {
        if self.state == State::Closed {
            return Err(buf);
        }
        self.stream.write_owned(buf)
    }

    /// A buffer given to [`Connection::write_owned`] whose bytes are all acknowledged.
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

    /// Lend `sink` for the next bytes of the stream: while everything that arrived has been
    /// read, data arriving in order is copied from its packet straight into the sink (as much
    /// as it has room for) and counts as read, saving the copy into the receive buffer and out
    /// again (real mode). Returns a sink lent before, if any.
    pub fn lend(&mut self, sink: Box<dyn Sink>) -> Option<Box<dyn Sink>> {
        self.recv.lend(sink)
    }

    /// The lent sink back, with what it took.
    pub fn take_lent(&mut self) -> Option<Box<dyn Sink>> {
        self.recv.take_lent()
    }

    /// Consume every received in-order byte (synthetic mode); returns the count.
    pub fn read_synthetic(&mut self) -> u64 {
        let n = self.recv.read_synthetic();
        self.after_read(n);
        n
    }

    fn after_read(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        self.stats.bytes_delivered += n;
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
    fn window_update_after(limit: u64, recv_window: u64) -> u64 {
        let quarter = (recv_window / 4).max(1);
        (limit / quarter).saturating_add(1).saturating_mul(quarter)
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

    // ----------------------------------------------------------------------------------------
    // Driver side: input
    // ----------------------------------------------------------------------------------------

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

    /// Handle one arrival at `arrived` with `handle`; a rejected one is counted.
    fn arriving(
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

    fn session(&mut self) -> &mut Session {
        self.secure
            .as_deref_mut()
            .expect("called only with security on")
    }

    /// Security on: the handshake's clear messages, and sealed datagrams; nothing else.
    fn process_secure(&mut self, now: Time, datagram: &[u8], ce: bool) -> Result<(), PacketError> {
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
    /// packet inside counts. `arrived` and `ce` as for [`Connection::handle_packet_at`].
    pub fn handle_opened(
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
        let opened = self
            .session()
            .open(datagram, key_phase, seal_number, &mut scratch);
        let result = match opened {
            Ok((n, updates)) => {
                self.stats.peer_key_updates += updates as u64;
                self.process_opened(now, &scratch[SEAL_HEADER_LEN..SEAL_HEADER_LEN + n], ce)
            }
            Err(e) => Err(self.open_refused(e)),
        };
        self.scratch = scratch;
        result
    }

    /// Server: the client's INIT. The first is answered with a RESPONSE (the connection stays
    /// listening until FINISH); a repeated one is answered with the same RESPONSE again.
    fn on_init(&mut self, now: Time, message: &[u8]) -> Result<(), PacketError> {
        if self.side != Side::Server {
            return Err(PacketError::UnexpectedPacket("INIT", "client"));
        }
        if self.state != State::Listening {
            return Err(PacketError::RepeatedHandshake("INIT"));
        }
        let synthetic = self.config.synthetic;
        let recv_window = self.recv.max_offset();
        let outcome = self.session().on_init(message, |hello, cipher| {
            crate::secure::handshake::ServerHello {
                synthetic,
                recv_window,
                timestamp_us: now.as_micros(),
                echo_us: hello.timestamp_us,
                cipher,
            }
        })?;
        if let InitOutcome::New(hello) = outcome {
            self.peer_max_offset = hello.recv_window;
            self.peer_synthetic = hello.synthetic;
        }
        self.handshake_pending = true;
        Ok(())
    }

    /// Client: the server's RESPONSE. Its key is checked against the policy; then FINISH goes
    /// out, the keys are in place and the connection is established.
    fn on_response(&mut self, now: Time, message: &[u8]) -> Result<(), PacketError> {
        if self.side != Side::Client {
            return Err(PacketError::UnexpectedPacket("RESPONSE", "server"));
        }
        if self.state != State::Connecting {
            return Err(PacketError::RepeatedHandshake("RESPONSE"));
        }
        let hello = match self.session().on_response(message) {
            Ok(h) => h,
            Err(e) => {
                if self.session().broken() {
                    self.close_with(CloseCode::HandshakeFailed);
                }
                return Err(e);
            }
        };
        self.last_received = now;
        if !self.session().peer_allowed() {
            // Not the server we meant to reach: stop before revealing who we are.
            self.close_with(CloseCode::PeerKeyMismatch);
            return Ok(());
        }
        if let Err(e) = self.session().write_finish() {
            self.close_with(CloseCode::HandshakeFailed);
            return Err(e);
        }
        self.finish_pending = true;
        self.scratch = vec![0; self.config.max_datagram_size()];
        if let Err(e) = self.check_mode(hello.synthetic) {
            // FINISH goes out first, so that the close can be sealed.
            self.close_with(CloseCode::ProtocolError);
            return Err(e);
        }
        let echo = Time::from_micros(hello.echo_us);
        if echo > now {
            return Err(PacketError::FutureTimestamp {
                echo_us: hello.echo_us,
                now_us: now.as_micros(),
            });
        }
        if !self.handshake_repeated {
            // Karn: after a repeated INIT the echo may belong to an earlier copy.
            let sample = self.rtt_sample(now, echo);
            self.update_rtt(sample, Duration::ZERO);
            self.cc.on_rtt_sample(now, sample);
            self.stats.rtt_samples += 1;
        }
        self.peer_max_offset = hello.recv_window;
        self.state = State::Established;
        self.rto_backoff = 0;
        self.handshake_sent_at = None;
        Ok(())
    }

    /// Server: the client's FINISH. Once it authenticates, the client's key is checked against
    /// the policy: accepted, the connection is established; refused, a sealed close
    /// `Unauthorized` answers and nothing of the client's is taken.
    fn on_finish(&mut self, now: Time, message: &[u8]) -> Result<(), PacketError> {
        if self.side != Side::Server {
            return Err(PacketError::UnexpectedPacket("FINISH", "client"));
        }
        if self.state != State::Listening {
            return Err(PacketError::RepeatedHandshake("FINISH"));
        }
        self.session().on_finish(message)?;
        self.last_received = now;
        self.handshake_pending = false;
        if !self.session().peer_allowed() {
            self.close_with(CloseCode::Unauthorized);
            return Ok(());
        }
        if let Err(e) = self.check_mode(self.peer_synthetic) {
            self.close_with(CloseCode::ProtocolError);
            return Err(e);
        }
        self.scratch = vec![0; self.config.max_datagram_size()];
        self.state = State::Established;
        Ok(())
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

    fn process_decoded(
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

    fn mode_name(synthetic: bool) -> &'static str {
        if synthetic {
            "synthetic"
        } else {
            "real"
        }
    }

    fn check_mode(&self, peer_synthetic: bool) -> Result<(), PacketError> {
        if peer_synthetic != self.config.synthetic {
            return Err(PacketError::ModeMismatch {
                local: Self::mode_name(self.config.synthetic),
                peer: Self::mode_name(peer_synthetic),
            });
        }
        Ok(())
    }

    fn on_handshake(&mut self, now: Time, h: Handshake) -> Result<(), PacketError> {
        if let Err(e) = self.check_mode(h.synthetic) {
            self.close_with(CloseCode::ProtocolError);
            return Err(e);
        }
        match (self.side, h.response) {
            (Side::Server, false) => {
                // A request; a repeat means our answer was lost.
                self.peer_max_offset = self.peer_max_offset.max(h.recv_window);
                self.handshake_echo_us = h.timestamp_us;
                self.handshake_pending = true;
                if self.state == State::Listening {
                    self.state = State::Established;
                }
                Ok(())
            }
            (Side::Client, true) => {
                if self.state == State::Connecting {
                    let echo = Time::from_micros(h.echo_us);
                    if echo > now {
                        return Err(PacketError::FutureTimestamp {
                            echo_us: h.echo_us,
                            now_us: now.as_micros(),
                        });
                    }
                    let sample = self.rtt_sample(now, echo);
                    self.update_rtt(sample, Duration::ZERO);
                    // Measured before any queue of ours: delay-based controllers take it as
                    // the propagation delay (Linux: the SYN-ACK's RTT enters tp->rtt_min).
                    self.cc.on_rtt_sample(now, sample);
                    self.stats.rtt_samples += 1;
                    self.peer_max_offset = h.recv_window;
                    self.state = State::Established;
                    self.rto_backoff = 0;
                    self.handshake_sent_at = None;
                }
                Ok(())
            }
            (Side::Server, true) => Err(PacketError::UnexpectedPacket(
                "handshake response",
                "server",
            )),
            (Side::Client, false) => {
                Err(PacketError::UnexpectedPacket("handshake request", "client"))
            }
        }
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
        let new = self.recv.insert(h.offset, h.len as u64, payload, h.fin)?;
        self.stats.packets_received += 1;
        self.stats.bytes_received += new;
        // Bytes that went straight into a lent sink were read as they arrived.
        let direct = self.recv.take_direct();
        self.stats.bytes_delivered_direct += direct;
        self.after_read(direct);
        let arrival = self
            .ack
            .on_packet(self.arrived, h.packet_number, h.timestamp_us);
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

    fn on_ack(&mut self, now: Time, a: &packet::Ack<'_>) -> Result<(), PacketError> {
        if self.state == State::Listening {
            return Err(PacketError::UnexpectedPacket("ack", self.state.name()));
        }
        let largest = a.largest();
        if largest >= self.sent.next_pn() {
            return Err(PacketError::AckOfUnsentPacket {
                acked: largest,
                next: self.sent.next_pn(),
            });
        }
        if a.echo_us > now.as_micros() {
            return Err(PacketError::FutureTimestamp {
                echo_us: a.echo_us,
                now_us: now.as_micros(),
            });
        }
        if a.cumulative > self.stream.sent_end() {
            return Err(PacketError::CumulativeBeyondSent {
                cumulative: a.cumulative,
                sent: self.stream.sent_end(),
            });
        }
        self.stats.acks_received += 1;
        self.peer_max_offset = self.peer_max_offset.max(a.max_offset);
        self.stream.on_cumulative(a.cumulative);
        let new_ce = a.ce_count.saturating_sub(self.peer_ce_count);
        self.peer_ce_count = self.peer_ce_count.max(a.ce_count);

        let prior_in_flight = self.sent.bytes_in_flight;
        let prior_cwnd = self.cwnd_bytes();
        let mut acked_packets = 0u32;
        let mut acked_bytes = 0u64;
        // The newest packet acknowledged: its number, send time and the bytes in flight when
        // it was sent (only these, not the whole record, are needed below).
        let mut newest: Option<(u64, Time, u64)> = None;
        for r in a.ranges() {
            if r.high < self.sent.scan {
                break;
            }
            let mut pn = r.low.max(self.sent.scan);
            while pn <= r.high {
                if let Some(p) = self.sent.ack(pn) {
                    acked_packets += 1;
                    acked_bytes += p.bytes as u64;
                    if p.chunk != PROBE_CHUNK {
                        self.stream.on_acked(p.chunk);
                    }
                    self.rate.on_acked(&p, now);
                    if newest.is_none_or(|(n, _, _)| pn > n) {
                        newest = Some((pn, p.time_sent, p.in_flight_at_send));
                    }
                }
                pn += 1;
            }
        }
        let Some((newest_pn, newest_sent, newest_in_flight_at_send)) = newest else {
            return Ok(());
        };
        self.sent.largest_acked = Some(self.sent.largest_acked.map_or(largest, |l| l.max(largest)));
        if newest_pn == largest {
            let echo = Time::from_micros(a.echo_us);
            let max_delay = self.config.max_ack_delay;
            self.update_rtt(
                self.rtt_sample(now, echo),
                Duration::from_micros(a.ack_delay_us).min(max_delay),
            );
            self.stats.rtt_samples += 1;
        }
        self.rto_backoff = 0;
        self.stats.bytes_acked += acked_bytes;

        self.detect_losses(now);

        if new_ce > 0 {
            let first = self.recovery_start.is_none_or(|start| newest_sent > start);
            if first {
                self.recovery_start = Some(now);
                self.stats.congestion_events += 1;
            }
            self.cc.on_ecn(&EcnEvent {
                now,
                ce_packets: new_ce.min(u32::MAX as u64) as u32,
                bytes_in_flight: self.sent.bytes_in_flight,
                first_in_window: first,
            });
        }
        self.newest_acked_sent = newest_sent;
        let rate = self.rate.take_sample(self.rtt.min_rtt());
        let in_recovery = self
            .recovery_start
            .is_some_and(|start| newest_sent <= start);
        let cwnd_limited = self.window_was_used(prior_cwnd)
            || prior_in_flight + self.config.mss as u64 >= prior_cwnd;
        self.cc.on_ack(&AckEvent {
            now,
            acked_packets,
            acked_bytes,
            rtt: (newest_pn == largest).then(|| self.rtt.latest()),
            prior_bytes_in_flight: prior_in_flight,
            bytes_in_flight: self.sent.bytes_in_flight,
            in_flight_at_send: newest_in_flight_at_send,
            largest_acked: newest_pn,
            next_packet: self.sent.next_pn(),
            rate,
            in_recovery,
            cwnd_limited,
        });
        Ok(())
    }

    /// Run loss detection; report what it found to the controller and the stream.
    fn detect_losses(&mut self, now: Time) {
        let prior_in_flight = self.sent.bytes_in_flight;
        let stream = &mut self.stream;
        let (lost, next) = detect_lost(&mut self.sent, now, self.loss_delay, |_, p| {
            if p.chunk != PROBE_CHUNK {
                stream.on_lost(p.chunk);
            }
        });
        self.sent.trim();
        self.loss_time = next;
        if lost.packets == 0 {
            return;
        }
        self.stats.packets_lost += lost.packets as u64;
        let first = self
            .recovery_start
            .is_none_or(|start| lost.largest_time_sent > start);
        if first {
            self.recovery_start = Some(now);
            self.stats.congestion_events += 1;
        }
        self.cc.on_loss(&LossEvent {
            now,
            lost_packets: lost.packets,
            lost_bytes: lost.bytes,
            prior_bytes_in_flight: prior_in_flight,
            largest_lost: lost.largest,
            first_in_window: first,
        });
    }

    /// The driver could not hand data packet `pn`, just returned by `poll_transmit`, to the
    /// network: the host's own device queue was full (Linux `NET_XMIT_DROP`, a UDP `ENOBUFS`,
    /// a simulated host queue). It never left: its data is queued to go out again, and the
    /// controller takes the drop as a congestion signal, reducing once unless a recovery period
    /// is still in progress — Linux 2.4's `tcp_transmit_skb`, which calls `tcp_enter_cwr` when
    /// the device drops a segment.
    pub fn on_local_drop(&mut self, now: Time, pn: u64) {
        let prior_in_flight = self.sent.bytes_in_flight;
        let Some(p) = self.sent.lose(pn) else { return };
        if p.chunk != PROBE_CHUNK {
            self.stream.on_lost(p.chunk);
        }
        self.sent.trim();
        // A recovery period lasts until a packet sent after it began is acknowledged.
        let first = match self.recovery_start {
            None => true,
            Some(start) => self.newest_acked_sent > start,
        };
        if first {
            self.recovery_start = Some(now);
            self.stats.congestion_events += 1;
        }
        self.cc.on_loss(&LossEvent {
            now,
            lost_packets: 1,
            lost_bytes: p.bytes as u64,
            prior_bytes_in_flight: prior_in_flight,
            largest_lost: pn,
            first_in_window: first,
        });
    }

    // ----------------------------------------------------------------------------------------
    // Driver side: timers
    // ----------------------------------------------------------------------------------------

    /// The RTT of a packet sent at `echo` whose answer is being handled: from the answer's
    /// arrival, or from `now` should a stamp conversion have put the arrival before the send.
    fn rtt_sample(&self, now: Time, echo: Time) -> Duration {
        if self.arrived >= echo {
            self.arrived - echo
        } else {
            now - echo
        }
    }

    fn update_rtt(&mut self, sample: Duration, ack_delay: Duration) {
        self.rtt.update(sample, ack_delay);
        let c = &self.config;
        self.rto_base = self.rtt.rto(c.max_ack_delay, c.min_rto, c.max_rto);
        self.loss_delay = self.rtt.loss_delay();
    }

    fn backed_off_rto(&self) -> Duration {
        let base = self.rto_base;
        if self.rto_backoff == 0 {
            return base.min(self.config.max_rto);
        }
        base.saturating_mul(1u32 << self.rto_backoff.min(16))
            .min(self.config.max_rto)
    }

    /// When the retransmission (or handshake) timer fires, if armed.
    fn rto_deadline(&self) -> Option<Time> {
        match self.state {
            State::Connecting => self.handshake_sent_at.map(|t| t + self.backed_off_rto()),
            State::Established => {
                let armed = self.sent.packets_in_flight > 0
                    || (self.stream.flow_blocked(self.peer_max_offset) && !self.probe_pending)
                    || self.finish_unconfirmed();
                if !armed {
                    return None;
                }
                let from = self.last_ack_eliciting_sent.unwrap_or(self.last_received);
                Some(from + self.backed_off_rto())
            }
            _ => None,
        }
    }

    /// The earliest time `handle_timeout` (or `poll_transmit`, for a paced packet) has work.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.close_pending.is_some() {
            return None;
        }
        if self.state == State::Closed {
            return None;
        }
        // Only an established connection can go idle: a listening server has nothing to time
        // out, and a connecting client is governed by the handshake's retransmission limit.
        let idle = self
            .config
            .idle_timeout
            .filter(|_| self.state == State::Established)
            .map(|d| self.last_received + d);
        // Pairwise rather than an iterator over the five: this runs after every event.
        let earliest = |a: Option<Time>, b: Option<Time>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, None) => a,
            (None, b) => b,
        };
        let t = earliest(self.rto_deadline(), self.loss_time);
        let t = earliest(t, self.ack.deadline());
        earliest(earliest(t, self.pacing_release), idle)
    }

    /// Let timers that are due at `now` act.
    pub fn handle_timeout(&mut self, now: Time) {
        if self.state == State::Closed {
            return;
        }
        if self.state == State::Established
            && self
                .config
                .idle_timeout
                .is_some_and(|d| now >= self.last_received + d)
        {
            self.close_with(CloseCode::TimedOut);
            return;
        }
        if self.loss_time.is_some_and(|t| t <= now) {
            self.detect_losses(now);
        }
        if self.rto_deadline().is_some_and(|t| t <= now) {
            self.on_rto(now);
        }
    }

    /// Client, security on: FINISH was sent and nothing sealed from the server has shown yet
    /// that it arrived.
    fn finish_unconfirmed(&self) -> bool {
        self.side == Side::Client && self.secure.as_ref().is_some_and(|s| !s.confirmed())
    }

    fn on_rto(&mut self, now: Time) {
        let consecutive = self.rto_backoff + 1;
        if consecutive > self.config.max_rtos {
            self.close_with(CloseCode::TimedOut);
            return;
        }
        self.rto_backoff = consecutive;
        self.stats.rto_count += 1;
        if self.state == State::Connecting {
            self.handshake_pending = true;
            return;
        }
        if self.finish_unconfirmed() {
            // FINISH (or everything after it) may have been lost: send it again before the
            // resent data, or the server cannot open any of it.
            self.finish_pending = true;
        }
        let prior_in_flight = self.sent.bytes_in_flight;
        if self.sent.packets_in_flight == 0 {
            // Nothing to resend: the peer's window is closed and its update may have been lost.
            self.probe_pending = true;
            self.last_ack_eliciting_sent = Some(now);
            return;
        }
        // RFC 6298 §5 / Linux tcp_enter_loss: everything outstanding is presumed lost.
        let mut pn = self.sent.scan;
        while pn < self.sent.next_pn() {
            if let Some(p) = self.sent.lose(pn) {
                self.stats.packets_lost += 1;
                if p.chunk != PROBE_CHUNK {
                    self.stream.on_lost(p.chunk);
                }
            }
            pn += 1;
        }
        self.sent.scan = self.sent.next_pn();
        self.sent.trim();
        self.loss_time = None;
        self.recovery_start = Some(now);
        self.cc.on_rto(&RtoEvent {
            now,
            bytes_in_flight: prior_in_flight,
            consecutive,
        });
        // The backed-off timer runs from now.
        self.last_ack_eliciting_sent = Some(now);
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

    // ----------------------------------------------------------------------------------------
    // Driver side: output
    // ----------------------------------------------------------------------------------------

    fn cwnd_bytes(&self) -> u64 {
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
    fn window_was_used(&self, cwnd: u64) -> bool {
        self.window_used || (self.cc.cwnd() < self.cc.ssthresh() && cwnd < 2 * self.max_in_flight)
    }

    /// The pacing rate in bytes/s: the controller's, else Linux's default rule; `None` before
    /// the first RTT sample.
    fn pacing_rate(&self) -> Option<u64> {
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
    /// else [`DEFAULT_BURST`] packets or [`Config::burst_time`] of `rate`, whichever is more.
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

    /// Write the next datagram to send at `now` into `buf` (at least
    /// [`Config::max_datagram_size`] bytes), or return `None` if nothing may be sent now.
    pub fn poll_transmit(&mut self, now: Time, buf: &mut [u8]) -> Option<Transmit> {
        self.transmit(now, buf, true).map(|(t, _)| t)
    }

    /// [`Connection::poll_transmit`] for a driver that seals on another thread: with security
    /// on, a sealed datagram's bytes in `buf` are its plain packet (after room for the seal's
    /// header, with room for the tag after it) and the returned [`PendingSeal`] turns them
    /// into the datagram of `Transmit::len` bytes. The seal must be applied before the bytes
    /// leave; seals may be applied in any order and on any thread. Handshake datagrams, and
    /// every datagram with security off, are complete as returned (no seal).
    pub fn poll_transmit_unsealed(
        &mut self,
        now: Time,
        buf: &mut [u8],
    ) -> Option<(Transmit, Option<PendingSeal>)> {
        self.transmit_unsealed(now, buf, true)
            .map(|(t, _, seal)| (t, seal))
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

    fn transmit(
        &mut self,
        now: Time,
        buf: &mut [u8],
        encode_data: bool,
    ) -> Option<(Transmit, Option<DataHeader>)> {
        let (t, header, seal) = self.transmit_unsealed(now, buf, encode_data)?;
        if let Some(seal) = seal {
            let len = seal.apply(buf).expect("the buffer has room for the seal");
            debug_assert_eq!(len, t.len);
        }
        Some((t, header))
    }

    /// The next datagram, and with security on its seal, not yet applied.
    fn transmit_unsealed(
        &mut self,
        now: Time,
        buf: &mut [u8],
        encode_data: bool,
    ) -> Option<(Transmit, Option<DataHeader>, Option<PendingSeal>)> {
        if self.secure.is_none() {
            return self
                .transmit_plain(now, buf, encode_data)
                .map(|(t, h)| (t, h, None));
        }
        if let Some(len) = self.poll_handshake_message(now, buf) {
            let t = self.count(Transmit {
                len,
                wire_len: len,
                kind: PacketKind::Handshake,
                packet_number: None,
                retransmission: false,
            });
            return Some((t, None, None));
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
        // place (the seal number, the nonce, is taken now, in the order of sending).
        let end = buf.len().checked_sub(SEAL_TAG_LEN)?;
        if end <= SEAL_HEADER_LEN {
            return None;
        }
        let (mut t, header) = self.transmit_plain(now, &mut buf[SEAL_HEADER_LEN..end], true)?;
        let (seal, updated) = self
            .session()
            .seal_later(t.len)
            .expect("the keys exist (can_seal)");
        if updated {
            self.stats.key_updates += 1;
        }
        t.len = seal.len();
        t.wire_len += SEAL_OVERHEAD;
        self.stats.wire_bytes_sent += SEAL_OVERHEAD as u64;
        Some((t, header, Some(seal)))
    }

    /// Security on: the next handshake message to send, if one is due: the client's INIT (new,
    /// or the same again) and FINISH, the server's RESPONSE.
    fn poll_handshake_message(&mut self, now: Time, buf: &mut [u8]) -> Option<usize> {
        match self.side {
            Side::Client if self.finish_pending => {
                let n = self.session().finish_datagram(buf)?;
                self.finish_pending = false;
                Some(n)
            }
            Side::Client if self.handshake_pending && self.state == State::Connecting => {
                let (synthetic, window) = (self.config.synthetic, self.recv.max_offset());
                let (n, repeated) =
                    self.session()
                        .write_init(synthetic, window, now.as_micros(), buf)?;
                self.handshake_pending = false;
                self.handshake_sent_at = Some(now);
                self.handshake_repeated |= repeated;
                Some(n)
            }
            Side::Server if self.handshake_pending && self.state == State::Listening => {
                let n = self.session().response_datagram(buf)?;
                self.handshake_pending = false;
                Some(n)
            }
            _ => None,
        }
    }

    fn transmit_plain(
        &mut self,
        now: Time,
        buf: &mut [u8],
        encode_data: bool,
    ) -> Option<(Transmit, Option<DataHeader>)> {
        if let Some(code) = self.close_pending {
            let len = packet::encode_close(code, buf)?;
            self.close_pending = None;
            self.state = State::Closed;
            return Some((
                self.count(Transmit {
                    len,
                    wire_len: len,
                    kind: PacketKind::Close,
                    packet_number: None,
                    retransmission: false,
                }),
                None,
            ));
        }
        if self.state == State::Closed {
            return None;
        }
        if self.handshake_pending && self.secure.is_none() {
            let h = Handshake {
                response: self.side == Side::Server,
                synthetic: self.config.synthetic,
                recv_window: self.recv.max_offset(),
                timestamp_us: now.as_micros(),
                echo_us: self.handshake_echo_us,
            };
            let len = packet::encode_handshake(&h, buf)?;
            self.handshake_pending = false;
            if self.side == Side::Client {
                self.handshake_sent_at = Some(now);
            }
            return Some((
                self.count(Transmit {
                    len,
                    wire_len: len,
                    kind: PacketKind::Handshake,
                    packet_number: None,
                    retransmission: false,
                }),
                None,
            ));
        }
        if self.ack.ack_due(now) {
            let (echo_us, ack_delay_us) = self.ack.echo(now);
            let fields = AckFields {
                ack_delay_us,
                echo_us,
                cumulative: self.recv.frontier(),
                max_offset: self.recv.max_offset(),
                ce_count: self.ack.ce_count,
            };
            let len = packet::encode_ack(&fields, self.ack.ranges(), buf)?;
            self.ack.on_ack_sent();
            self.stats.acks_sent += 1;
            return Some((
                self.count(Transmit {
                    len,
                    wire_len: len,
                    kind: PacketKind::Ack,
                    packet_number: None,
                    retransmission: false,
                }),
                None,
            ));
        }
        if self.state != State::Established {
            return None;
        }
        self.poll_data(now, buf, encode_data)
    }

    fn count(&mut self, t: Transmit) -> Transmit {
        self.stats.datagrams_sent += 1;
        self.stats.wire_bytes_sent += t.wire_len as u64;
        t
    }

    fn poll_data(
        &mut self,
        now: Time,
        buf: &mut [u8],
        encode: bool,
    ) -> Option<(Transmit, Option<DataHeader>)> {
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
        let mss = self.config.mss as u64;
        let window = self.bytes_of(cwnd).max(mss);
        if !self.probe_pending && self.sent.bytes_in_flight + mss > window {
            self.validate_window(true);
            self.send_clock.enter(now, SendState::Window, None);
            return None;
        }
        let rate = self.pacing_rate_at(cwnd);
        let full = self.config.max_datagram_size() as u64;
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
        let room = buf.len().checked_sub(DATA_HEADER_LEN)?;
        let max_len = if self.config.synthetic {
            self.config.mss
        } else {
            (self.config.mss as usize).min(room) as u32
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
        if !self.config.synthetic && len > 0 {
            let c = crate::stream::Chunk {
                offset,
                len,
                fin,
                acked: false,
                queued: false,
                transmissions: 0,
            };
            self.stream
                .copy_chunk(&c, &mut buf[hlen..hlen + len as usize]);
            written += len as usize;
        }
        let wire_len = DATA_HEADER_LEN + len as usize;
        let stamp = self.rate.on_send(now, self.sent.bytes_in_flight);
        self.sent.push(SentPacket {
            time_sent: now,
            chunk: chunk_id,
            bytes: len,
            state: PacketState::InFlight,
            in_flight_at_send: 0,
            delivered: stamp.delivered,
            delivered_time: stamp.delivered_time,
            first_sent_time: stamp.first_sent_time,
            app_limited: stamp.app_limited,
        });
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
        Some((t, (!encode).then_some(header)))
    }
}
