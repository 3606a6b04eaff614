//! A compact TCP-like transport model: the sender and receiver the simulator uses for
//! responsive cross traffic, and for flows when `transport = "model"` is asked for.
//!
//! It exists for speed: it encodes nothing, keeps no stream buffers and answers every packet
//! with one ACK, which makes a run about twice as fast as the same run over longhaul's own
//! transport (`transport = "proto"`, docs/transports.md). Its sender is built from the parts
//! that transport is built from (`longhaul_cc::sender`), so there is one implementation of each
//! algorithm:
//!
//! * In-flight records and RACK loss detection (`longhaul_cc::sender::sent`, `sender::loss`;
//!   RFC 8985 in RFC 9002 §6.1's form): a packet is lost when a packet sent three or more
//!   numbers later is acknowledged, or when it was sent more than 9/8 of the RTT before an ACK
//!   of a later one (the time threshold, which catches a loss with fewer than three packets
//!   after it). Every transmission gets a fresh packet number and a retransmission resends an
//!   old MSS-sized chunk under a new one, so every ACK gives an unambiguous RTT sample (`echo`
//!   carries the send time, like the TCP timestamp option).
//! * RTT smoothing and the retransmission timeout (`sender::rtt`, RFC 6298): `srtt +
//!   4·rttvar`, at least 200 ms (Linux's `TCP_RTO_MIN`), doubled per consecutive expiry up to
//!   60 s (§5.5, §2.5), restarted by every ACK while data is outstanding (§5.3); on expiry every
//!   packet in flight is lost.
//! * Delivery-rate samples (`sender::rate`, draft-cheng-iccrg-delivery-rate-estimation).
//! * Pacing (`sender::pacer`'s `Train`) at the controller's `pacing_rate`, on wire bytes,
//!   in Linux's shape: trains of the controller's `max_burst` packets (one when it names none)
//!   leave back to back, and the next train waits until the last one is paid for at the rate,
//!   as Linux sends a TSO segment of `tso_segs` packets and then waits `len / sk_pacing_rate`.
//!
//! Recovery follows RFC 6675's RecoveryPoint (RFC 9002 §7.3.2): one window reduction per episode
//! (a loss of a packet sent before the reduction is not a new congestion event), and ACKs of
//! packets sent before it do not grow the window. An ACK's losses reach the controller before
//! the ACK does (Linux's `tcp_fastretrans_alert` runs before `tcp_cong_control`). Lost chunks
//! are resent first, within the window; a packet is sent only if it fits in the window
//! (Linux's `tcp_cwnd_test`).
//!
//! A packet its own full host queue dropped (`access.on_full = "drop"`) was never sent, as in
//! Linux 2.4's `tcp_write_xmit`: its chunk goes out again first (not counted as a
//! retransmission), and the controller sees a loss — the first of a window unless a reduction
//! is still in progress (Linux 2.4 `tcp_enter_cwr` acts only outside CWR/Recovery, which last
//! until the data sent before them is acknowledged). The window grows only when it was used
//! (Linux `tcp_cwnd_validate` and `tcp_is_cwnd_limited`, the rule RFC 7661 motivates): an ACK
//! reports `cwnd_limited` if, during the latest window of data, a transmission found the window
//! full, or, in slow start, if the window is below twice the most bytes that were in flight in
//! that window.
//!
//! Linux 2.4 (`stack = "linux-2.4"`, `ModelConfig::linux24`): the receiver holds the ACK of an
//! in-order packet until a second one arrives or 40 ms pass (2.4's `TCP_ATO_MIN`), and
//! acknowledges out-of-order and duplicate packets at once; an ACK that covers two packets is
//! sent as the two per-packet ACKs back to back, the first flagged as part of a pair. The sender
//! gives the controller one event per ACK with `acked_packets = 1` (2.4's `tcp_cong_avoid` runs
//! once per ACK), so Reno grows half a packet per RTT in congestion avoidance and 1.5× per RTT
//! in slow start. Not modelled: 2.4's quick-ACK mode for the first few segments.
//!
//! Deliberate differences from longhaul's transport, each with its reason
//! (`crates/sim/tests/transports.rs` runs both and bounds what these change):
//! * 40-byte TCP/IP headers: 1460 payload bytes per 1500-byte packet, where proto carries 1443.
//!   The model stands for TCP, and the seed papers count utilization net of 40 bytes.
//! * An ACK per packet, at once (a TCP receiver in quick-ACK mode, and the per-packet ACK of
//!   the papers' simulations); proto acknowledges every second packet or after 25 ms (RFC 9000
//!   §13.2.2). Fewer ACKs mean fewer delivery-rate samples, and a loss detected a little
//!   later; over the suite's 120-s runs two BBR flows still fill the buffer alike on both.
//! * No handshake: data starts at the flow's start time and the first RTT sample comes with the
//!   first ACK; proto spends a round trip on its handshake, whose RTT it gives the controller.
//! * Proto's pacer is a token bucket: after an idle spell it sends up to `max_burst` packets at
//!   once, then one packet per interval; the model sends every train whole (above). Seed 002's
//!   burst experiment (`reproduce lion-mbs`) needs bursts of a fixed size, as Linux makes them.
//! * Pacing only when the controller asks for a rate (BBR, Lion): a window controller is
//!   ACK-clocked, as in Linux without the fq qdisc and in the Linux 2.4–2.6 stacks the seed
//!   papers measured. Proto paces every controller (Linux's default rule with fq: 2·cwnd/srtt in
//!   slow start, 1.2·cwnd/srtt after), so a window controller's slow start can end without the
//!   buffer overflow the model's bursts cause.
//! * The retransmission timeout has no ACK-delay term (its ACKs are not delayed) and restarts on
//!   every ACK (RFC 6298 §5.3); proto's is RFC 9002's probe timeout, `+ max_ack_delay`, timed
//!   from the last packet sent.
//! * No flow control and no send buffer: the application always has the next chunk.
//! * No SACK blocks (the per-packet ACK carries the same information); an ACK lost on the
//!   reverse path can make the sender retransmit a chunk the receiver already has (counted as a
//!   retransmission; the receiver discards the duplicate).

use super::{Endpoint, FlowReceiver, FlowSender, SenderSnapshot};
use crate::packet::{Ecn, Packet};
use crate::ring::Ring;
use longhaul_cc::sender::loss::detect_lost;
use longhaul_cc::sender::pacer::Train;
use longhaul_cc::sender::rate::DeliveryRate;
use longhaul_cc::sender::rtt::{backed_off, RttEstimator};
use longhaul_cc::sender::sent::SentPackets;
use longhaul_cc::{AckEvent, CongestionControl, EcnEvent, LossEvent, RtoEvent, SentEvent, Time};
use longhaul_metrics::online::DelayAccumulator;
use longhaul_proto::config::DEFAULT_RECV_WINDOW as RECEIVE_WINDOW;
use std::collections::VecDeque;
use std::time::Duration;

/// Linux's `TCP_RTO_MIN`.
const RTO_MIN: Duration = Duration::from_millis(200);
/// RFC 6298 §2.5's ceiling.
const RTO_MAX: Duration = Duration::from_secs(60);
/// RFC 6298 §2.1.
const INITIAL_RTO: Duration = Duration::from_secs(1);
/// Flag bit in an ACK: the acknowledged packet arrived CE-marked.
const FLAG_CE: u8 = 1;
/// Flag bit in a data packet: it resends a chunk.
const FLAG_RETX: u8 = 2;
/// Flag bit in an ACK: the first of two per-packet ACKs that make one delayed ACK.
const FLAG_PAIR_FIRST: u8 = 4;
/// Linux 2.4's shortest delayed-ACK timeout (`TCP_ATO_MIN`, HZ/25).
const DELAYED_ACK_NS: u64 = 40_000_000;

/// What a model sender needs besides its controller.
#[derive(Clone, Copy, Debug)]
pub struct ModelConfig {
    /// Payload bytes per full packet.
    pub mss: u32,
    /// Header bytes per packet (40, as TCP/IP without options).
    pub header: u32,
    /// When the application starts writing.
    pub start: u64,
    /// When it stops writing new data.
    pub stop: u64,
    /// Total payload to send, or unlimited.
    pub bytes: Option<u64>,
    /// Send ECN-capable packets.
    pub ecn: bool,
    /// Linux 2.4's delayed ACKs and per-ACK window growth.
    pub linux24: bool,
}

/// The model transport's sending end.
pub struct ModelSender {
    cfg: ModelConfig,
    cc: Box<dyn CongestionControl>,
    /// Packets in flight, loss-detection cursor and largest acknowledged (proto's records).
    sent: SentPackets,
    next_chunk: u64,
    total_chunks: u64,
    retx: Ring<u64>,
    /// Chunks (and whether they were retransmissions) the host queue dropped: sent again first.
    stalled: Ring<(u64, bool)>,
    cum_acked: u64,
    /// The first packet number sent after the latest reduction: an earlier packet's loss belongs
    /// to that episode (RFC 6675 §5's RecoveryPoint, RFC 9002 §7.3.2).
    recovery_end: u64,
    ecn_end: u64,
    rtt_est: RttEstimator,
    /// The RTO before backoff and RACK's reordering window, updated with each RTT sample.
    rto_base: Duration,
    loss_delay: Duration,
    /// When the time threshold declares the oldest packet in flight lost, if it will.
    loss_time: Option<u64>,
    rto_deadline: Option<u64>,
    rto_backoff: u32,
    pacer: Train,
    /// The pacer holds the next packet until then.
    pacing_release: Option<u64>,
    /// The window was found full during the current window of data (Linux `is_cwnd_limited`).
    window_used: bool,
    /// Most bytes in flight during it (Linux `max_packets_out`), when not window-limited.
    max_in_flight: u64,
    /// The window of data that `window_used` speaks for ends when this packet number is
    /// settled (Linux `cwnd_usage_seq`).
    window_usage_end: u64,
    rate: DeliveryRate,
    app_limited: bool,
    started: bool,
    /// Every RTT sample, ns.
    pub rtt: DelayAccumulator,
    packets_sent: u64,
    retransmits: u64,
    packets_lost: u64,
    /// Linux 2.4: bytes acknowledged by the first half of a delayed ACK, reported with the rest.
    pair_bytes: u64,
}

impl std::fmt::Debug for ModelSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSender")
            .field("cfg", &self.cfg)
            .field("snapshot", &self.snapshot_now())
            .finish_non_exhaustive()
    }
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl ModelSender {
    /// A sender with `cfg`, controlled by `cc`.
    pub fn new(cfg: ModelConfig, cc: Box<dyn CongestionControl>) -> ModelSender {
        let total_chunks = match cfg.bytes {
            Some(b) => b.div_ceil(cfg.mss as u64),
            None => u64::MAX,
        };
        let rtt_est = RttEstimator::new(INITIAL_RTO);
        ModelSender {
            cfg,
            cc,
            sent: SentPackets::new(),
            next_chunk: 0,
            total_chunks,
            retx: Ring::new(),
            stalled: Ring::new(),
            cum_acked: 0,
            recovery_end: 0,
            ecn_end: 0,
            rto_base: INITIAL_RTO,
            loss_delay: rtt_est.loss_delay(),
            rtt_est,
            loss_time: None,
            rto_deadline: None,
            rto_backoff: 0,
            pacer: Train::new(),
            pacing_release: None,
            window_used: false,
            max_in_flight: 0,
            window_usage_end: 0,
            rate: DeliveryRate::default(),
            app_limited: false,
            started: false,
            rtt: DelayAccumulator::default(),
            packets_sent: 0,
            retransmits: 0,
            packets_lost: 0,
            pair_bytes: 0,
        }
    }

    /// The congestion controller.
    pub fn controller(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// The backed-off retransmission timeout, ns (RFC 6298 §5.5: doubled per expiry).
    fn rto(&self) -> u64 {
        ns(backed_off(self.rto_base, self.rto_backoff, RTO_MAX))
    }

    fn cwnd_bytes(&self) -> u64 {
        (self.cc.cwnd() * self.cfg.mss as f64) as u64
    }

    fn in_flight(&self) -> u64 {
        self.sent.bytes_in_flight
    }

    fn has_data(&self, now: u64) -> bool {
        !self.stalled.is_empty()
            || !self.retx.is_empty()
            || (now < self.cfg.stop && self.next_chunk < self.total_chunks)
    }

    fn snapshot_now(&self) -> SenderSnapshot {
        SenderSnapshot {
            mss: self.cfg.mss,
            cwnd: self.cc.cwnd(),
            srtt_ns: self.rtt_est.srtt().map_or(0, ns),
            latest_rtt_ns: ns(self.rtt_est.latest()),
            bytes_in_flight: self.in_flight(),
            packets_sent: self.packets_sent,
            retransmits: self.retransmits,
            packets_lost: self.packets_lost,
            finished: self.next_chunk >= self.total_chunks
                && self.retx.is_empty()
                && self.stalled.is_empty()
                && self.in_flight() == 0,
        }
    }

    fn on_rtt_sample(&mut self, rtt: u64) {
        self.rtt.record_ns(rtt);
        // The model's receiver reports no ACK delay: its ACKs leave at once (Linux 2.4's held
        // ones are sent as if they had).
        self.rtt_est
            .update(Duration::from_nanos(rtt), Duration::ZERO);
        self.rto_base = self.rtt_est.rto(Duration::ZERO, RTO_MIN, RTO_MAX);
        self.loss_delay = self.rtt_est.loss_delay();
    }

    /// Linux `tcp_cwnd_validate`: remember whether the window was full (`full`) in the current
    /// window of data; start a new one once the old one is settled.
    fn validate_window(&mut self, full: bool) {
        if self.sent.scan >= self.window_usage_end
            || full
            || (!self.window_used && self.in_flight() > self.max_in_flight)
        {
            self.window_used = full;
            self.max_in_flight = self.in_flight();
            self.window_usage_end = self.sent.next_pn();
        }
    }

    /// Linux `tcp_is_cwnd_limited`: did the sender use its window (or, in slow start, is the
    /// window still below twice what was in flight)?
    fn cwnd_limited(&self) -> bool {
        self.window_used
            || (self.cc.cwnd() < self.cc.ssthresh() && self.cwnd_bytes() < 2 * self.max_in_flight)
    }

    /// RACK in RFC 9002's form (proto's `detect_lost`): the packet threshold, and the time
    /// threshold for a tail with fewer than three packets after a loss. Lost chunks queue
    /// for retransmission; the controller hears of the loss, once per episode as a reduction.
    fn detect_losses(&mut self, now: u64) {
        let prior_in_flight = self.in_flight();
        let retx = &mut self.retx;
        let (lost, next) = detect_lost(
            &mut self.sent,
            Time::from_nanos(now),
            self.loss_delay,
            |_, p| retx.push_back(p.chunk),
        );
        self.loss_time = next.map(|t| t.as_nanos());
        if lost.packets == 0 {
            return;
        }
        self.packets_lost += lost.packets as u64;
        let first = lost.largest >= self.recovery_end;
        if first {
            self.recovery_end = self.sent.next_pn();
        }
        self.cc.on_loss(&LossEvent {
            now: Time::from_nanos(now),
            lost_packets: lost.packets,
            lost_bytes: lost.bytes,
            prior_bytes_in_flight: prior_in_flight,
            largest_lost: lost.largest,
            first_in_window: first,
        });
    }
}

impl Endpoint for ModelSender {
    fn handle_packet(&mut self, now: u64, pkt: &Packet, _bytes: &[u8]) {
        let pn = pkt.seq;
        self.cum_acked = self.cum_acked.max(pkt.aux);
        if pn >= self.sent.next_pn() {
            return;
        }
        // Every ACK names one transmission: an unambiguous sample, even of a packet declared
        // lost meanwhile (the TCP timestamp option's echo).
        self.on_rtt_sample(now.saturating_sub(pkt.echo));
        self.rto_backoff = 0;
        let prior_in_flight = self.in_flight();
        let newly = self.sent.ack(pn);
        if let Some(p) = &newly {
            self.rate.on_acked(p, Time::from_nanos(now));
            self.sent.largest_acked = Some(self.sent.largest_acked.map_or(pn, |l| l.max(pn)));
        }
        self.detect_losses(now);
        let pair_first = self.cfg.linux24 && pkt.flags & FLAG_PAIR_FIRST != 0;
        match newly {
            Some(p) if pair_first => self.pair_bytes += p.bytes as u64,
            Some(p) => {
                // One ACK, one controller event (with Linux 2.4 it may cover two packets).
                let acked_bytes = p.bytes as u64 + std::mem::take(&mut self.pair_bytes);
                let rate = self.rate.take_sample(self.rtt_est.min_rtt());
                self.cc.on_ack(&AckEvent {
                    now: Time::from_nanos(now),
                    acked_packets: 1,
                    acked_bytes,
                    rtt: Some(self.rtt_est.latest()),
                    prior_bytes_in_flight: prior_in_flight,
                    bytes_in_flight: self.in_flight(),
                    in_flight_at_send: p.in_flight_at_send,
                    largest_acked: pn,
                    next_packet: self.sent.next_pn(),
                    rate,
                    in_recovery: pn < self.recovery_end,
                    cwnd_limited: self.cwnd_limited(),
                });
            }
            None => {}
        }
        if pkt.flags & FLAG_CE != 0 {
            let first = pn >= self.ecn_end && pn >= self.recovery_end;
            if first {
                self.ecn_end = self.sent.next_pn();
                self.recovery_end = self.sent.next_pn();
            }
            self.cc.on_ecn(&EcnEvent {
                now: Time::from_nanos(now),
                ce_packets: 1,
                bytes_in_flight: self.in_flight(),
                first_in_window: first,
            });
        }
        self.sent.trim();
        // RFC 6298 §5.3: restart the timer on an ACK while data is outstanding.
        self.rto_deadline = (self.in_flight() > 0).then(|| now + self.rto());
    }

    fn poll_transmit(&mut self, now: u64, _buf: &mut Vec<u8>) -> Option<Packet> {
        self.pacing_release = None;
        if now < self.cfg.start {
            return None;
        }
        self.started = true;
        let mss = self.cfg.mss as u64;
        // Nothing below changes the controller before the packet is accounted for.
        let window = self.cwnd_bytes().max(mss);
        if self.in_flight() + mss > window {
            self.validate_window(true);
            return None;
        }
        // The receiver's window, as longhaul's transport advertises it: a controller whose
        // window runs away sends no more than a real host would have in flight.
        if self.in_flight() + mss > RECEIVE_WINDOW {
            return None;
        }
        if !self.has_data(now) {
            if !self.app_limited {
                self.app_limited = true;
                self.window_used = false;
                self.rate.on_app_limited(self.in_flight());
                self.cc.on_app_limited(Time::from_nanos(now));
            }
            return None;
        }
        let pacing = self
            .cc
            .pacing_rate()
            .map(|r| (r.max(1), self.cc.max_burst().unwrap_or(1).max(1)));
        if let Some((rate, _)) = pacing {
            // Linux's internal pacing: trains of `max_burst` packets (the pacer's `Train`).
            let at = self.pacer.release_time(Time::from_nanos(now), rate);
            if at.as_nanos() > now {
                self.pacing_release = Some(at.as_nanos());
                return None;
            }
        }
        // Skip retransmissions of chunks the receiver has meanwhile acknowledged.
        while self.retx.front().is_some_and(|&c| c < self.cum_acked) {
            self.retx.pop_front();
        }
        let (chunk, is_retx) = match self
            .stalled
            .pop_front()
            .or_else(|| self.retx.pop_front().map(|c| (c, true)))
        {
            Some(c) => c,
            None if now < self.cfg.stop && self.next_chunk < self.total_chunks => {
                self.next_chunk += 1;
                (self.next_chunk - 1, false)
            }
            None => return None,
        };
        self.app_limited = false;
        let payload = match self.cfg.bytes {
            Some(total) => (total - chunk * mss).min(mss) as u32,
            None => self.cfg.mss,
        };
        let size = payload + self.cfg.header;
        let t = Time::from_nanos(now);
        let stamp = self.rate.on_send(t, self.in_flight());
        let pn = self.sent.push(stamp.record(t, chunk, payload));
        self.packets_sent += 1;
        if is_retx {
            self.retransmits += 1;
        }
        let full = self.in_flight() + mss > window;
        self.validate_window(full);
        self.cc.on_sent(&SentEvent {
            now: t,
            packet_number: pn,
            bytes: payload,
            bytes_in_flight: self.in_flight(),
            is_retransmission: is_retx,
        });
        if let Some((rate, burst)) = pacing {
            self.pacer.on_sent(t, size as u64, rate, burst);
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rto());
        }
        Some(Packet {
            size: size as u16,
            payload: payload as u16,
            seq: pn,
            aux: chunk,
            echo: now,
            ecn: if self.cfg.ecn { Ecn::Ect } else { Ecn::NotEct },
            flags: if is_retx { FLAG_RETX } else { 0 },
            ..Packet::EMPTY
        })
    }

    fn poll_timeout(&self) -> Option<u64> {
        if !self.started {
            return Some(self.cfg.start);
        }
        [self.rto_deadline, self.loss_time, self.pacing_release]
            .into_iter()
            .flatten()
            .min()
    }

    fn handle_timeout(&mut self, now: u64) {
        if self.loss_time.is_some_and(|t| t <= now) {
            self.detect_losses(now);
            self.sent.trim();
        }
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        // RFC 6298 §5 / Linux `tcp_enter_loss`: everything outstanding is presumed lost.
        let prior = self.in_flight();
        let mut lost = 0;
        for pn in self.sent.scan..self.sent.next_pn() {
            if let Some(p) = self.sent.lose(pn) {
                self.retx.push_back(p.chunk);
                lost += 1;
            }
        }
        self.sent.scan = self.sent.next_pn();
        self.sent.trim();
        self.loss_time = None;
        self.packets_lost += lost;
        self.rto_backoff += 1;
        self.recovery_end = self.sent.next_pn();
        self.cc.on_rto(&RtoEvent {
            now: Time::from_nanos(now),
            bytes_in_flight: prior,
            consecutive: self.rto_backoff,
        });
        self.rto_deadline = self.has_data(now).then(|| now + self.rto());
    }
}

impl FlowSender for ModelSender {
    fn on_local_drop(&mut self, now: u64, pkt: &Packet) {
        let pn = pkt.seq;
        let prior_in_flight = self.in_flight();
        let Some(p) = self.sent.lose(pn) else { return };
        let was_retx = pkt.flags & FLAG_RETX != 0;
        // It was never sent: it neither counts as sent nor, when it goes again, as resent.
        self.packets_sent -= 1;
        if was_retx {
            self.retransmits -= 1;
        }
        self.stalled.push_back((p.chunk, was_retx));
        // A reduction is in progress until a packet sent after it is acknowledged.
        let first = self.recovery_end == 0
            || self
                .sent
                .largest_acked
                .is_some_and(|l| l >= self.recovery_end);
        if first {
            self.recovery_end = self.sent.next_pn();
        }
        self.cc.on_loss(&LossEvent {
            now: Time::from_nanos(now),
            lost_packets: 1,
            lost_bytes: p.bytes as u64,
            prior_bytes_in_flight: prior_in_flight,
            largest_lost: pn,
            first_in_window: first,
        });
        self.sent.trim();
    }

    fn snapshot(&self) -> SenderSnapshot {
        self.snapshot_now()
    }

    fn rtt(&self) -> &DelayAccumulator {
        &self.rtt
    }
    fn rtt_mut(&mut self) -> &mut DelayAccumulator {
        &mut self.rtt
    }
}

impl FlowReceiver for ModelReceiver {
    fn delivered_bytes(&self) -> u64 {
        self.delivered_bytes
    }
}

/// The receiving end: reassembles chunks and acknowledges every packet (Linux 2.4: every
/// second in-order packet).
#[derive(Debug)]
pub struct ModelReceiver {
    header: u32,
    linux24: bool,
    /// Linux 2.4: the ACK held back for a second packet, and since when.
    held: Option<(Packet, u64)>,
    cum: u64,
    /// Received flags for chunks `cum..`.
    ooo: VecDeque<bool>,
    pending: Ring<Packet>,
    /// Unique payload bytes delivered to the application.
    pub delivered_bytes: u64,
    /// Data packets that carried nothing new.
    pub duplicate_packets: u64,
}

impl ModelReceiver {
    /// A receiver that acknowledges every packet, with `header` bytes per ACK.
    pub fn new(header: u32) -> ModelReceiver {
        ModelReceiver::with_delayed_acks(header, false)
    }

    /// A receiver that, if `linux24`, delays ACKs as Linux 2.4 did.
    pub fn with_delayed_acks(header: u32, linux24: bool) -> ModelReceiver {
        ModelReceiver {
            header,
            linux24,
            held: None,
            cum: 0,
            ooo: VecDeque::new(),
            pending: Ring::new(),
            delivered_bytes: 0,
            duplicate_packets: 0,
        }
    }
}

impl Endpoint for ModelReceiver {
    fn handle_packet(&mut self, now: u64, pkt: &Packet, _bytes: &[u8]) {
        let chunk = pkt.aux;
        // In order: the next chunk expected, with nothing received beyond it.
        let in_order = chunk == self.cum && self.ooo.len() <= 1;
        if chunk == self.cum && self.ooo.is_empty() {
            // The common case, without touching the reordering window.
            self.delivered_bytes += pkt.payload as u64;
            self.cum += 1;
        } else if chunk >= self.cum {
            let i = (chunk - self.cum) as usize;
            if self.ooo.len() <= i {
                self.ooo.resize(i + 1, false);
            }
            if self.ooo[i] {
                self.duplicate_packets += 1;
            } else {
                self.ooo[i] = true;
                self.delivered_bytes += pkt.payload as u64;
                while self.ooo.front() == Some(&true) {
                    self.ooo.pop_front();
                    self.cum += 1;
                }
            }
        } else {
            self.duplicate_packets += 1;
        }
        let ack = Packet {
            size: self.header as u16,
            payload: 0,
            seq: pkt.seq,
            aux: self.cum,
            echo: pkt.echo,
            flags: if pkt.ecn == Ecn::Ce { FLAG_CE } else { 0 },
            ..Packet::EMPTY
        };
        if !self.linux24 {
            self.pending.push_back(ack);
            return;
        }
        match self.held.take() {
            // A second packet: one ACK for both (two per-packet ACKs, the first flagged).
            Some((mut first, _)) => {
                first.flags |= FLAG_PAIR_FIRST;
                self.pending.push_back(first);
                self.pending.push_back(ack);
            }
            // Out of order or duplicate: acknowledge at once (Linux 2.4 `tcp_data_queue`).
            None if !in_order => self.pending.push_back(ack),
            None => self.held = Some((ack, now)),
        }
    }

    fn poll_transmit(&mut self, _now: u64, _buf: &mut Vec<u8>) -> Option<Packet> {
        self.pending.pop_front()
    }

    fn poll_timeout(&self) -> Option<u64> {
        self.held.map(|(_, since)| since + DELAYED_ACK_NS)
    }

    fn handle_timeout(&mut self, now: u64) {
        if let Some((ack, since)) = self.held {
            if since + DELAYED_ACK_NS <= now {
                self.held = None;
                self.pending.push_back(ack);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use longhaul_cc::{CcSpec, Setup};

    /// A sender of controller `spec` with 1460-byte payloads, sending `bytes` (or forever).
    fn sender_of(spec: &str, bytes: Option<u64>) -> ModelSender {
        let cc = spec
            .parse::<CcSpec>()
            .unwrap()
            .build(&Setup::for_mtu(1500))
            .unwrap();
        ModelSender::new(
            ModelConfig {
                mss: 1460,
                header: 40,
                start: 0,
                stop: u64::MAX,
                bytes,
                ecn: false,
                linux24: false,
            },
            cc,
        )
    }

    fn sender(bytes: Option<u64>) -> ModelSender {
        sender_of("reno", bytes)
    }

    /// A sender of the experiment-only fixed controller, `spec`.
    fn paced_sender(spec: &str) -> ModelSender {
        sender_of(spec, None)
    }

    /// Send times (ns) of the first `n` packets, polling at every pacing deadline.
    fn send_times(s: &mut ModelSender, n: usize) -> Vec<u64> {
        let (mut now, mut buf, mut times) = (0u64, Vec::new(), Vec::new());
        while times.len() < n {
            match s.poll_transmit(now, &mut buf) {
                Some(_) => times.push(now),
                None => {
                    now = s
                        .poll_timeout()
                        .expect("a paced sender waits for its pacer")
                }
            }
        }
        times
    }

    #[test]
    fn paced_packets_leave_in_trains_of_the_controllers_burst() {
        // 1500 bytes at 12 Mb/s (1.5 MB/s) is one packet per millisecond; trains of 4 leave
        // back to back every 4 ms. Before the first RTT sample the window is 10 packets.
        let mut s = paced_sender("paced:rate=12e6,burst=4");
        let t = send_times(&mut s, 10);
        assert_eq!(
            t,
            [0, 0, 0, 0, 4_000_000, 4_000_000, 4_000_000, 4_000_000, 8_000_000, 8_000_000]
        );
        // One packet per train is the plain pacer: one packet per millisecond.
        let mut s = paced_sender("paced:rate=12e6,burst=1");
        let t = send_times(&mut s, 4);
        assert_eq!(t, [0, 1_000_000, 2_000_000, 3_000_000]);
    }

    #[test]
    fn sends_initial_window_then_detects_a_hole() {
        let mut s = sender(None);
        let mut r = ModelReceiver::new(40);
        let mut buf = Vec::new();
        let mut sent = Vec::new();
        while let Some(p) = s.poll_transmit(0, &mut buf) {
            sent.push(p);
        }
        assert_eq!(sent.len(), 10, "RFC 6928 initial window");
        assert_eq!(s.snapshot_now().bytes_in_flight, 10 * 1460);
        // Packet 0 is lost; 1..=3 arrive: the third later packet declares 0 lost.
        for p in &sent[1..4] {
            r.handle_packet(1_000_000, p, &[]);
            let ack = r.poll_transmit(0, &mut buf).unwrap();
            assert_eq!(ack.aux, 0, "cumulative count stays at the hole");
            s.handle_packet(2_000_000, &ack, &[]);
        }
        assert_eq!(s.snapshot_now().packets_lost, 1);
        // Slow start grew 10 → 12 on the first two ACKs. The third reveals the loss before it
        // may grow the window (Linux's `tcp_fastretrans_alert` runs before
        // `tcp_cong_control`), and an ACK in recovery does not grow it: Reno halves 12.
        assert_eq!(s.controller().cwnd(), 6.0, "Reno halves 12 packets");
        let rtx = s.poll_transmit(2_000_000, &mut buf);
        // In flight are 6 packets; a 7th would exceed 6: nothing may be sent yet.
        assert!(rtx.is_none());
    }

    #[test]
    fn a_tail_loss_is_found_by_the_time_threshold_not_the_timeout() {
        let mut s = sender(None);
        let mut r = ModelReceiver::new(40);
        let mut buf = Vec::new();
        let sent: Vec<_> = std::iter::from_fn(|| s.poll_transmit(0, &mut buf)).collect();
        // Packet 8 of the initial 10 is lost: only packet 9 follows it, short of the packet
        // threshold. Every ACK arrives 100 ms after its packet left.
        for p in sent.iter().filter(|p| p.seq != 8) {
            r.handle_packet(50_000_000, p, &[]);
            let ack = r.poll_transmit(0, &mut buf).unwrap();
            s.handle_packet(100_000_000, &ack, &[]);
        }
        assert_eq!(s.snapshot_now().packets_lost, 0);
        // RFC 8985 §6.2 (RFC 9002 §6.1.2): lost 9/8 × RTT = 112.5 ms after it was sent, long
        // before the 200 ms minimum retransmission timeout.
        assert_eq!(s.poll_timeout(), Some(112_500_000));
        s.handle_timeout(112_499_999);
        assert_eq!(s.snapshot_now().packets_lost, 0);
        s.handle_timeout(112_500_000);
        assert_eq!(s.snapshot_now().packets_lost, 1);
        let again: Vec<_> = std::iter::from_fn(|| s.poll_transmit(112_500_000, &mut buf)).collect();
        assert_eq!(
            again.first().map(|p| (p.aux, p.flags)),
            Some((8, FLAG_RETX))
        );
    }

    /// A controller that paces at a fixed rate in bursts of a fixed size.
    #[derive(Debug)]
    struct Paced {
        rate: u64,
        burst: u32,
    }

    impl CongestionControl for Paced {
        fn name(&self) -> &'static str {
            "paced"
        }
        fn on_ack(&mut self, _: &AckEvent) {}
        fn on_loss(&mut self, _: &LossEvent) {}
        fn on_rto(&mut self, _: &RtoEvent) {}
        fn cwnd(&self) -> f64 {
            100.0
        }
        fn ssthresh(&self) -> f64 {
            100.0
        }
        fn pacing_rate(&self) -> Option<u64> {
            Some(self.rate)
        }
        fn max_burst(&self) -> Option<u32> {
            Some(self.burst)
        }
        fn phase(&self) -> &'static str {
            "paced"
        }
    }

    #[test]
    fn pacing_sends_trains_of_the_controllers_burst() {
        let cfg = ModelConfig {
            mss: 1460,
            header: 40,
            start: 1_000_000_000,
            stop: u64::MAX,
            bytes: None,
            ecn: false,
            linux24: false,
        };
        // 1.5 MB/s: one 1500-byte packet per millisecond, in trains of 4.
        let cc = Box::new(Paced {
            rate: 1_500_000,
            burst: 4,
        });
        let mut s = ModelSender::new(cfg, cc);
        let mut buf = Vec::new();
        let start = 1_000_000_000;
        let burst = std::iter::from_fn(|| s.poll_transmit(start, &mut buf)).count();
        assert_eq!(burst, 4, "the controller's max_burst");
        // The next train waits until the first one's 4 ms are paid for, then leaves whole.
        assert_eq!(s.poll_timeout(), Some(start + 4_000_000));
        assert!(s.poll_transmit(start + 3_999_999, &mut buf).is_none());
        let next = std::iter::from_fn(|| s.poll_transmit(start + 4_000_000, &mut buf)).count();
        assert_eq!(next, 4);
    }

    #[test]
    fn a_local_drop_is_unsent_and_reduces_once_per_window() {
        let mut s = sender(None);
        let mut r = ModelReceiver::new(40);
        let mut buf = Vec::new();
        let sent: Vec<_> = std::iter::from_fn(|| s.poll_transmit(0, &mut buf)).collect();
        assert_eq!(sent.len(), 10);
        // The host queue drops the 10th packet: Reno halves 10 → 5 (Linux 2.4 tcp_enter_cwr).
        s.on_local_drop(0, &sent[9]);
        assert_eq!(s.controller().cwnd(), 5.0);
        let snap = s.snapshot_now();
        assert_eq!((snap.packets_sent, snap.bytes_in_flight), (9, 9 * 1460));
        // Another drop before anything sent after the reduction is acknowledged: the same
        // episode, no second reduction.
        s.on_local_drop(0, &sent[8]);
        assert_eq!(s.controller().cwnd(), 5.0);
        // The ACK of packet 0 (sent before the reduction) frees no room under a 5-packet window
        // with 7 in flight; the ACKs of 0..=3 leave 4 in flight, so one packet may go: the
        // oldest dropped chunk, again, and not as a retransmission.
        for p in &sent[..4] {
            r.handle_packet(1_000_000, p, &[]);
            let ack = r.poll_transmit(0, &mut buf).unwrap();
            s.handle_packet(2_000_000, &ack, &[]);
        }
        assert_eq!(s.controller().cwnd(), 5.0, "no growth while reducing");
        let again = s.poll_transmit(2_000_000, &mut buf).unwrap();
        assert_eq!(
            (again.aux, again.seq),
            (9, 10),
            "chunk 9 under a new packet number"
        );
        assert!(
            s.poll_transmit(2_000_000, &mut buf).is_none(),
            "window full"
        );
        assert_eq!(
            (s.snapshot_now().packets_sent, s.snapshot_now().retransmits),
            (9, 0)
        );
        // Once a packet sent after the reduction is acknowledged, a new drop is a new episode.
        r.handle_packet(3_000_000, &again, &[]);
        let ack = r.poll_transmit(0, &mut buf).unwrap();
        s.handle_packet(4_000_000, &ack, &[]);
        let next = s.poll_transmit(4_000_000, &mut buf).unwrap();
        assert_eq!(next.aux, 8, "the second dropped chunk");
        s.on_local_drop(4_000_000, &next);
        // That ACK ended the episode and grew the window in congestion avoidance (5 + 1/5).
        assert!(
            (s.controller().cwnd() - 2.6).abs() < 1e-12,
            "{}",
            s.controller().cwnd()
        );
    }

    #[test]
    fn linux24_acks_every_second_packet_and_grows_once_per_ack() {
        let mut s = sender(None);
        s.cfg.linux24 = true;
        let mut r = ModelReceiver::with_delayed_acks(40, true);
        let mut buf = Vec::new();
        let sent: Vec<_> = std::iter::from_fn(|| s.poll_transmit(0, &mut buf)).collect();
        assert_eq!(sent.len(), 10);
        // The first in-order packet is held; its timer is 2.4's 40 ms.
        r.handle_packet(1_000_000, &sent[0], &[]);
        assert!(r.poll_transmit(0, &mut buf).is_none());
        assert_eq!(r.poll_timeout(), Some(41_000_000));
        // The second releases both, the first flagged as half of the pair.
        r.handle_packet(1_100_000, &sent[1], &[]);
        let pair: Vec<_> = std::iter::from_fn(|| r.poll_transmit(0, &mut buf)).collect();
        assert_eq!(pair.len(), 2);
        assert_eq!(
            (pair[0].flags & FLAG_PAIR_FIRST, pair[1].flags),
            (FLAG_PAIR_FIRST, 0)
        );
        assert_eq!(r.poll_timeout(), None);
        // Slow start: one ACK (for two packets) adds one packet, not two (2.4 tcp_cong_avoid).
        for a in &pair {
            s.handle_packet(2_000_000, a, &[]);
        }
        assert_eq!(s.controller().cwnd(), 11.0);
        // A lone packet is acknowledged when the timer fires.
        r.handle_packet(3_000_000, &sent[2], &[]);
        r.handle_timeout(42_999_999);
        assert!(r.poll_transmit(0, &mut buf).is_none());
        r.handle_timeout(43_000_000);
        let ack = r.poll_transmit(0, &mut buf).unwrap();
        assert_eq!((ack.seq, ack.flags), (2, 0));
        // A packet after a hole (4 without 3) is acknowledged at once.
        r.handle_packet(44_000_000, &sent[4], &[]);
        let ack = r.poll_transmit(0, &mut buf).unwrap();
        assert_eq!(
            (ack.seq, ack.aux),
            (4, 3),
            "cumulative count stays at the hole"
        );
    }

    #[test]
    fn receiver_counts_unique_bytes_once() {
        let mut r = ModelReceiver::new(40);
        let mut buf = Vec::new();
        let p = |chunk| Packet {
            aux: chunk,
            payload: 1460,
            ..Packet::EMPTY
        };
        r.handle_packet(0, &p(1), &[]);
        r.handle_packet(0, &p(0), &[]);
        r.handle_packet(0, &p(0), &[]);
        assert_eq!(r.delivered_bytes, 2 * 1460);
        assert_eq!(r.duplicate_packets, 1);
        let acks: Vec<_> = std::iter::from_fn(|| r.poll_transmit(0, &mut buf)).collect();
        assert_eq!(
            acks.iter().map(|a| a.aux).collect::<Vec<_>>(),
            vec![0, 2, 2]
        );
    }
}
