//! A compact TCP-like transport model: the sender and receiver the simulator uses for
//! responsive cross traffic, and for flows when `transport = "model"` is asked for.
//!
//! It is built the way RFC 9002 (QUIC loss detection and congestion control) describes a
//! sender, because that design has O(1) amortised work per ACK — the property that makes
//! ns-3's TCP slow on long fat paths is its O(window) scan per segment (notes/simulation.md
//! §1.5):
//!
//! * Every transmission gets a fresh packet number; data is counted in MSS-sized chunks, and a
//!   retransmission sends an old chunk under a new number. There is no retransmission
//!   ambiguity, so every ACK gives an RTT sample (`echo` carries the send time, like the TCP
//!   timestamp option).
//! * The receiver acknowledges every packet at once, with the packet's number, its cumulative
//!   chunk count and the CE mark it saw (an ACK per packet, as a TCP receiver with quickack).
//! * A packet is declared lost when a packet sent three or more numbers later is acknowledged
//!   (RFC 9002 §6.1.1's packet threshold, the analogue of three duplicate ACKs). A pointer walks
//!   forward over the sent ring, so each packet is inspected once.
//! * Recovery follows RFC 9002 §7.3.2: one window reduction per round trip (a loss of a packet
//!   sent before the recovery start is not a new congestion event), and the window does not
//!   grow for ACKs of packets sent before it. The controller sets the new window at once; lost
//!   chunks are resent first, within the window.
//! * The retransmission timer is RFC 6298's `srtt + 4·rttvar`, at least 200 ms (Linux's
//!   `TCP_RTO_MIN`), doubled per consecutive expiry; on expiry every packet in flight is lost.
//! * Pacing happens only when the controller asks for a rate (`pacing_rate`), at that rate, in
//!   trains of the controller's `max_burst` packets (one when it names none): a train leaves
//!   back to back and the next waits until the train's bytes are paid for at the rate, as Linux
//!   sends a TSO segment of `tso_segs` packets and then waits `len / sk_pacing_rate`.
//! * A packet its own full host queue dropped (`access.on_full = "drop"`) was never sent, as in
//!   Linux 2.4's `tcp_write_xmit`: its chunk goes out again first (not counted as a
//!   retransmission), and the controller sees a loss — the first of a window unless a reduction
//!   is still in progress (Linux 2.4 `tcp_enter_cwr` acts only outside CWR/Recovery, which last
//!   until the data sent before them is acknowledged).
//! * The window grows only when it was used (Linux `tcp_cwnd_validate` and
//!   `tcp_is_cwnd_limited`, the rule RFC 7661 motivates): an ACK reports `cwnd_limited` if,
//!   during the latest window of data, a transmission found the window full, or, in slow start,
//!   if the window is below twice the most bytes that were in flight in that window. A sender
//!   held back by something else — a full host queue, the application — does not earn growth.
//!
//! Linux 2.4 (`stack = "linux-2.4"`, `ModelConfig::linux24`): the receiver holds the ACK of an
//! in-order packet until a second one arrives or 40 ms pass (2.4's `TCP_ATO_MIN`), and
//! acknowledges out-of-order and duplicate packets at once; an ACK that covers two packets is
//! sent as the two per-packet ACKs back to back, the first flagged as part of a pair. The sender
//! gives the controller one event per ACK with `acked_packets = 1` (2.4's `tcp_cong_avoid` runs
//! once per ACK), so Reno grows half a packet per RTT in congestion avoidance and 1.5× per RTT
//! in slow start. Not modelled: 2.4's quick-ACK mode for the first few segments.
//!
//! Deviations from TCP: no SACK blocks (the per-packet ACK carries the same information); an
//! ACK lost on the reverse path can make the sender retransmit a chunk the receiver already has
//! (counted as a retransmission; the receiver discards the duplicate); no delayed ACKs.

use super::{Endpoint, FlowReceiver, FlowSender, SenderSnapshot};
use crate::histogram::Histogram;
use crate::packet::{Ecn, Packet};
use crate::ring::Ring;
use longhaul_cc::{
    AckEvent, CongestionControl, EcnEvent, LossEvent, RateSample, RtoEvent, SentEvent, Time,
};
use std::collections::VecDeque;
use std::time::Duration;

/// Packets later than a lost one that must be acknowledged first (RFC 9002 kPacketThreshold).
const PACKET_THRESHOLD: u64 = 3;
const RTO_MIN_NS: u64 = 200_000_000;
const RTO_MAX_NS: u64 = 60_000_000_000;
const INITIAL_RTO_NS: u64 = 1_000_000_000;
/// Flag bit in an ACK: the acknowledged packet arrived CE-marked.
const FLAG_CE: u8 = 1;
/// Flag bit in a data packet: it resends a chunk.
const FLAG_RETX: u8 = 2;
/// Flag bit in an ACK: the first of two per-packet ACKs that make one delayed ACK.
const FLAG_PAIR_FIRST: u8 = 4;
/// Linux 2.4's shortest delayed-ACK timeout (`TCP_ATO_MIN`, HZ/25).
const DELAYED_ACK_NS: u64 = 40_000_000;

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
    pub ecn: bool,
    /// Linux 2.4's delayed ACKs and per-ACK window growth.
    pub linux24: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Outstanding,
    Acked,
    Lost,
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    chunk: u64,
    /// Payload bytes carried (the last chunk of a sized transfer may be short).
    bytes: u32,
    sent_at: u64,
    in_flight_at_send: u64,
    delivered: u64,
    delivered_time: u64,
    state: State,
    app_limited: bool,
}

#[derive(Debug)]
pub struct ModelSender {
    cfg: ModelConfig,
    cc: Box<dyn CongestionControl>,
    ring: Ring<Sent>,
    base_pn: u64,
    next_pn: u64,
    next_chunk: u64,
    total_chunks: u64,
    retx: Ring<u64>,
    /// Chunks (and whether they were retransmissions) the host queue dropped: sent again first.
    stalled: Ring<(u64, bool)>,
    cum_acked: u64,
    in_flight: u64,
    largest_acked: u64,
    any_acked: bool,
    loss_scan: u64,
    recovery_end: u64,
    ecn_end: u64,
    srtt: u64,
    rttvar: u64,
    latest_rtt: u64,
    rto_deadline: Option<u64>,
    rto_backoff: u32,
    pacing_next: u64,
    pacing_blocked: bool,
    /// Packets the current pacing train may still send back to back.
    train_left: u32,
    /// The window was found full during the current window of data (Linux `is_cwnd_limited`).
    window_used: bool,
    /// Most bytes in flight during it (Linux `max_packets_out`), when not window-limited.
    max_in_flight: u64,
    /// The window of data that `window_used` speaks for ends when this packet number is
    /// settled (Linux `cwnd_usage_seq`).
    window_usage_end: u64,
    delivered: u64,
    delivered_time: u64,
    app_limited: bool,
    started: bool,
    /// Every RTT sample, ns.
    pub rtt: Histogram,
    packets_sent: u64,
    retransmits: u64,
    packets_lost: u64,
    /// Linux 2.4: bytes acknowledged by the first half of a delayed ACK, reported with the rest.
    pair_bytes: u64,
}

impl ModelSender {
    pub fn new(cfg: ModelConfig, cc: Box<dyn CongestionControl>) -> ModelSender {
        let total_chunks = match cfg.bytes {
            Some(b) => b.div_ceil(cfg.mss as u64),
            None => u64::MAX,
        };
        ModelSender {
            cfg,
            cc,
            ring: Ring::new(),
            base_pn: 0,
            next_pn: 0,
            next_chunk: 0,
            total_chunks,
            retx: Ring::new(),
            stalled: Ring::new(),
            cum_acked: 0,
            in_flight: 0,
            largest_acked: 0,
            any_acked: false,
            loss_scan: 0,
            recovery_end: 0,
            ecn_end: 0,
            srtt: 0,
            rttvar: 0,
            latest_rtt: 0,
            rto_deadline: None,
            rto_backoff: 0,
            pacing_next: 0,
            pacing_blocked: false,
            train_left: 0,
            window_used: false,
            max_in_flight: 0,
            window_usage_end: 0,
            delivered: 0,
            delivered_time: 0,
            app_limited: false,
            started: false,
            rtt: Histogram::default(),
            packets_sent: 0,
            retransmits: 0,
            packets_lost: 0,
            pair_bytes: 0,
        }
    }

    pub fn controller(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    fn rto(&self) -> u64 {
        let base = if self.srtt == 0 {
            INITIAL_RTO_NS
        } else {
            (self.srtt + 4 * self.rttvar).max(RTO_MIN_NS)
        };
        (base << self.rto_backoff.min(16)).min(RTO_MAX_NS)
    }

    fn cwnd_bytes(&self) -> u64 {
        (self.cc.cwnd() * self.cfg.mss as f64) as u64
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
            srtt_ns: self.srtt,
            latest_rtt_ns: self.latest_rtt,
            bytes_in_flight: self.in_flight,
            packets_sent: self.packets_sent,
            retransmits: self.retransmits,
            packets_lost: self.packets_lost,
            finished: self.next_chunk >= self.total_chunks
                && self.retx.is_empty()
                && self.stalled.is_empty()
                && self.in_flight == 0,
        }
    }

    fn on_rtt_sample(&mut self, rtt: u64) {
        self.latest_rtt = rtt;
        self.rtt.record(rtt);
        if self.srtt == 0 {
            self.srtt = rtt;
            self.rttvar = rtt / 2;
        } else {
            let err = self.srtt.abs_diff(rtt);
            self.rttvar = (3 * self.rttvar + err) / 4;
            self.srtt = (7 * self.srtt + rtt) / 8;
        }
    }

    /// Linux `tcp_cwnd_validate`: remember whether the window was full (`full`) in the current
    /// window of data; start a new one once the old one is settled.
    fn validate_window(&mut self, full: bool) {
        if self.base_pn >= self.window_usage_end
            || full
            || (!self.window_used && self.in_flight > self.max_in_flight)
        {
            self.window_used = full;
            self.max_in_flight = self.in_flight;
            self.window_usage_end = self.next_pn;
        }
    }

    /// Linux `tcp_is_cwnd_limited`: did the sender use its window (or, in slow start, is the
    /// window still below twice what was in flight)?
    fn cwnd_limited(&self) -> bool {
        self.window_used
            || (self.cc.cwnd() < self.cc.ssthresh() && self.cwnd_bytes() < 2 * self.max_in_flight)
    }

    fn pop_settled(&mut self) {
        while let Some(front) = self.ring.front() {
            if front.state == State::Outstanding {
                break;
            }
            self.ring.pop_front();
            self.base_pn += 1;
        }
        self.loss_scan = self.loss_scan.max(self.base_pn);
    }
}

impl Endpoint for ModelSender {
    fn handle_packet(&mut self, now: u64, pkt: &Packet, _bytes: &[u8]) {
        let pn = pkt.seq;
        self.cum_acked = self.cum_acked.max(pkt.aux);
        if pn < self.base_pn || pn >= self.next_pn {
            return;
        }
        self.on_rtt_sample(now.saturating_sub(pkt.echo));
        let prior_in_flight = self.in_flight;
        let rec = self.ring[(pn - self.base_pn) as usize];
        let newly = rec.state == State::Outstanding;
        if rec.state != State::Acked {
            if newly {
                self.in_flight -= rec.bytes as u64;
            }
            self.ring[(pn - self.base_pn) as usize].state = State::Acked;
            self.delivered += rec.bytes as u64;
            self.delivered_time = now;
        }
        if !self.any_acked || pn > self.largest_acked {
            self.largest_acked = pn;
            self.any_acked = true;
        }
        self.rto_backoff = 0;
        let pair_first = self.cfg.linux24 && pkt.flags & FLAG_PAIR_FIRST != 0;
        if newly && pair_first {
            self.pair_bytes += rec.bytes as u64;
        } else if newly {
            // One ACK, one controller event (with Linux 2.4 it may cover two packets).
            let acked_bytes = rec.bytes as u64 + std::mem::take(&mut self.pair_bytes);
            let interval = now
                .saturating_sub(rec.sent_at)
                .max(now.saturating_sub(rec.delivered_time));
            self.cc.on_ack(&AckEvent {
                now: Time::from_nanos(now),
                acked_packets: 1,
                acked_bytes,
                rtt: Some(Duration::from_nanos(now.saturating_sub(pkt.echo))),
                prior_bytes_in_flight: prior_in_flight,
                bytes_in_flight: self.in_flight,
                in_flight_at_send: rec.in_flight_at_send,
                largest_acked: pn,
                next_packet: self.next_pn,
                rate: Some(RateSample {
                    delivered: self.delivered,
                    prior_delivered: rec.delivered,
                    interval: Duration::from_nanos(interval),
                    is_app_limited: rec.app_limited,
                }),
                in_recovery: pn < self.recovery_end,
                cwnd_limited: self.cwnd_limited(),
            });
        }
        // Packet-threshold loss detection.
        let mut lost = 0u32;
        let mut largest_lost = 0;
        let mut lost_bytes = 0;
        let prior_loss_in_flight = self.in_flight;
        while self.loss_scan + PACKET_THRESHOLD <= self.largest_acked {
            let i = (self.loss_scan - self.base_pn) as usize;
            let r = &mut self.ring[i];
            if r.state == State::Outstanding {
                r.state = State::Lost;
                self.in_flight -= r.bytes as u64;
                lost_bytes += r.bytes as u64;
                self.retx.push_back(r.chunk);
                lost += 1;
                largest_lost = self.loss_scan;
            }
            self.loss_scan += 1;
        }
        if lost > 0 {
            self.packets_lost += lost as u64;
            let first = largest_lost >= self.recovery_end;
            if first {
                self.recovery_end = self.next_pn;
            }
            self.cc.on_loss(&LossEvent {
                now: Time::from_nanos(now),
                lost_packets: lost,
                lost_bytes,
                prior_bytes_in_flight: prior_loss_in_flight,
                largest_lost,
                first_in_window: first,
            });
        }
        if pkt.flags & FLAG_CE != 0 {
            let first = pn >= self.ecn_end && pn >= self.recovery_end;
            if first {
                self.ecn_end = self.next_pn;
                self.recovery_end = self.next_pn;
            }
            self.cc.on_ecn(&EcnEvent {
                now: Time::from_nanos(now),
                ce_packets: 1,
                bytes_in_flight: self.in_flight,
                first_in_window: first,
            });
        }
        self.pop_settled();
        self.rto_deadline = (self.in_flight > 0).then(|| now + self.rto());
    }

    fn poll_transmit(&mut self, now: u64, _buf: &mut Vec<u8>) -> Option<Packet> {
        self.pacing_blocked = false;
        if now < self.cfg.start {
            return None;
        }
        self.started = true;
        let mss = self.cfg.mss as u64;
        // Nothing below changes the controller before the packet is accounted for.
        let window = self.cwnd_bytes().max(mss);
        if self.in_flight + mss > window {
            self.validate_window(true);
            return None;
        }
        if !self.has_data(now) {
            if !self.app_limited {
                self.app_limited = true;
                self.cc.on_app_limited(Time::from_nanos(now));
            }
            return None;
        }
        let rate = self.cc.pacing_rate();
        if rate.is_some() && self.train_left == 0 && now < self.pacing_next {
            self.pacing_blocked = true;
            return None;
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
        let pn = self.next_pn;
        self.next_pn += 1;
        self.in_flight += payload as u64;
        self.ring.push_back(Sent {
            chunk,
            bytes: payload,
            sent_at: now,
            in_flight_at_send: self.in_flight,
            delivered: self.delivered,
            delivered_time: if self.delivered_time == 0 {
                now
            } else {
                self.delivered_time
            },
            state: State::Outstanding,
            app_limited: false,
        });
        self.packets_sent += 1;
        if is_retx {
            self.retransmits += 1;
        }
        let full = self.in_flight + mss > window;
        self.validate_window(full);
        self.cc.on_sent(&SentEvent {
            now: Time::from_nanos(now),
            packet_number: pn,
            bytes: payload,
            bytes_in_flight: self.in_flight,
            is_retransmission: is_retx,
        });
        if let Some(r) = rate {
            // Every packet pays its gap; a new train starts only once the last one is paid for.
            let gap = (size as f64 * 1e9 / r.max(1) as f64) as u64;
            self.pacing_next = self.pacing_next.max(now.saturating_sub(gap)) + gap;
            if self.train_left == 0 {
                self.train_left = self.cc.max_burst().unwrap_or(1).max(1);
            }
            self.train_left -= 1;
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
        let pacing = self.pacing_blocked.then_some(self.pacing_next);
        match (self.rto_deadline, pacing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_timeout(&mut self, now: u64) {
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        let prior = self.in_flight;
        let mut lost = 0;
        for r in self.ring.iter_mut() {
            if r.state == State::Outstanding {
                r.state = State::Lost;
                self.retx.push_back(r.chunk);
                lost += 1;
            }
        }
        self.in_flight = 0;
        self.packets_lost += lost;
        self.rto_backoff += 1;
        self.recovery_end = self.next_pn;
        self.cc.on_rto(&RtoEvent {
            now: Time::from_nanos(now),
            bytes_in_flight: prior,
            consecutive: self.rto_backoff,
        });
        self.pop_settled();
        self.loss_scan = self
            .loss_scan
            .max(self.next_pn.min(self.base_pn + self.ring.len() as u64));
        self.rto_deadline = self.has_data(now).then(|| now + self.rto());
    }
}

impl FlowSender for ModelSender {
    fn on_local_drop(&mut self, now: u64, pkt: &Packet) {
        let pn = pkt.seq;
        if pn < self.base_pn || pn >= self.next_pn {
            return;
        }
        let i = (pn - self.base_pn) as usize;
        let r = &mut self.ring[i];
        if r.state != State::Outstanding {
            return;
        }
        let prior_in_flight = self.in_flight;
        r.state = State::Lost;
        self.in_flight -= r.bytes as u64;
        let (chunk, bytes, was_retx) = (r.chunk, r.bytes, pkt.flags & FLAG_RETX != 0);
        // It was never sent: it neither counts as sent nor, when it goes again, as resent.
        self.packets_sent -= 1;
        if was_retx {
            self.retransmits -= 1;
        }
        self.stalled.push_back((chunk, was_retx));
        // A reduction is in progress until a packet sent after it is acknowledged.
        let first =
            self.recovery_end == 0 || (self.any_acked && self.largest_acked >= self.recovery_end);
        if first {
            self.recovery_end = self.next_pn;
        }
        self.cc.on_loss(&LossEvent {
            now: Time::from_nanos(now),
            lost_packets: 1,
            lost_bytes: bytes as u64,
            prior_bytes_in_flight: prior_in_flight,
            largest_lost: pn,
            first_in_window: first,
        });
        self.pop_settled();
    }

    fn snapshot(&self) -> SenderSnapshot {
        self.snapshot_now()
    }

    fn rtt(&self) -> &Histogram {
        &self.rtt
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
    pub duplicate_packets: u64,
}

impl ModelReceiver {
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

    fn sender(bytes: Option<u64>) -> ModelSender {
        let cc = CcSpec::default_for("reno")
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

    /// A sender of the experiment-only fixed controller, `spec`, with 1460-byte payloads.
    fn paced_sender(spec: &str) -> ModelSender {
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
                bytes: None,
                ecn: false,
                linux24: false,
            },
            cc,
        )
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
        // Slow start grew 10 → 13 on the three ACKs; the loss halves it.
        assert_eq!(s.controller().cwnd(), 6.5, "Reno halves 13 packets");
        let rtx = s.poll_transmit(2_000_000, &mut buf);
        // In flight are 6 packets; a 7th would exceed 6.5: nothing may be sent yet.
        assert!(rtx.is_none());
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
