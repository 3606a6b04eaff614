//! ACKs in: what the peer acknowledged, RTT samples, loss detection and recovery, and the events
//! the controller hears of them.
//!
//! Every ACK that newly acknowledges data produces one `AckEvent`, after the losses it
//! revealed were reported with `on_loss`, so `in_recovery` is already accurate. A loss is
//! `first_in_window` when the largest lost packet was sent after the current recovery period
//! began (RFC 9002 §7.3.2: one reduction per window); ECN-CE echoes call `on_ecn` under the same
//! once-per-window rule. An ACK is `cwnd_limited` only if the window was found full during the
//! latest window of data (or, in slow start, is below twice the most that was in flight),
//! Linux's `tcp_is_cwnd_limited`: a sender held back by a full device queue or the pacer does
//! not earn window growth. The records, loss detection, RTT estimator and delivery rate are
//! the shared sender's parts (`crates/cc/src/sender.rs`).
//!
//! Known simplifications: the packet threshold is fixed at 3 (no RACK reordering-window
//! adaptation, RFC 8985 §6.2), so heavy reordering causes spurious retransmissions and window
//! reductions, as in TCP without RACK; a late ACK of a packet already declared lost does not
//! undo the reduction (no F-RTO/Eifel); there is no persistent-congestion rule (RFC 9002 §7.6)
//! beyond the retransmission timeout itself.

use super::mtu::LostData;
use super::{Connection, State, MTU_PROBE_CHUNK, PROBE_CHUNK};
use crate::error::PacketError;
use crate::packet;
use longhaul_cc::sender::loss::detect_lost;
use longhaul_cc::{AckEvent, EcnEvent, LossEvent, Time};
use std::time::Duration;

impl Connection {
    pub(super) fn on_ack(&mut self, now: Time, a: &packet::Ack<'_>) -> Result<(), PacketError> {
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
        let mut data_acked = false;
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
                    if newest.is_none_or(|(n, _, _)| pn > n) {
                        newest = Some((pn, p.time_sent, p.in_flight_at_send));
                    }
                    if p.chunk == MTU_PROBE_CHUNK {
                        // Its RTT counts; the controller and the delivery rate never see it.
                        self.on_mtu_probe_acked(pn);
                        pn += 1;
                        continue;
                    }
                    data_acked = true;
                    acked_packets += self.acked_units(p.bytes);
                    acked_bytes += p.bytes as u64;
                    if p.chunk != PROBE_CHUNK {
                        self.stream.on_acked(p.chunk);
                    }
                    self.rate.on_acked(&p, now);
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
        if !data_acked {
            // Only path-MTU probes.
            return Ok(());
        }
        let rate = self.rate.take_sample(self.rtt.min_rtt());
        let in_recovery = self
            .recovery_start
            .is_some_and(|start| newest_sent <= start);
        let cwnd_limited = self.window_was_used(prior_cwnd)
            || prior_in_flight + self.data_mss as u64 >= prior_cwnd;
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
    pub(super) fn detect_losses(&mut self, now: Time) {
        let prior_in_flight = self.sent.bytes_in_flight;
        let (stream, pmtu, base) = (&mut self.stream, &mut self.pmtu, self.config.mss);
        let mut data = LostData::default();
        let (lost, next) = detect_lost(&mut self.sent, now, self.loss_delay, |pn, p| {
            if p.chunk == MTU_PROBE_CHUNK {
                // Not a congestion signal, not data: only the search hears of it.
                if let Some(s) = pmtu.as_mut() {
                    s.on_probe_lost(pn);
                }
                return;
            }
            if p.chunk != PROBE_CHUNK {
                stream.on_lost(p.chunk);
            }
            data.add(pn, p, base);
        });
        self.sent.trim();
        self.loss_time = next;
        if data.packets == 0 {
            return;
        }
        self.stats.packets_lost += data.packets as u64;
        let first = self
            .recovery_start
            .is_none_or(|start| data.largest_time_sent > start);
        if first {
            self.recovery_start = Some(now);
            self.stats.congestion_events += 1;
        }
        self.cc.on_loss(&LossEvent {
            now,
            lost_packets: data.units,
            lost_bytes: lost.bytes,
            prior_bytes_in_flight: prior_in_flight,
            largest_lost: data.largest,
            first_in_window: first,
        });
        if let Some(sent) = data.large_sent {
            self.on_large_lost(now, sent);
        }
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
        if p.chunk == MTU_PROBE_CHUNK {
            self.mtu_probe_not_sent(pn);
            self.sent.trim();
            return;
        }
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

    /// The RTT of a packet sent at `echo` whose answer is being handled: from the answer's
    /// arrival, or from `now` should a stamp conversion have put the arrival before the send.
    pub(super) fn rtt_sample(&self, now: Time, echo: Time) -> Duration {
        if self.arrived >= echo {
            self.arrived - echo
        } else {
            now - echo
        }
    }

    pub(super) fn update_rtt(&mut self, sample: Duration, ack_delay: Duration) {
        self.rtt.update(sample, ack_delay);
        let c = &self.config;
        self.rto_base = self.rtt.rto(c.max_ack_delay, c.min_rto, c.max_rto);
        self.loss_delay = self.rtt.loss_delay();
    }
}
