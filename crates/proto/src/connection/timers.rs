//! Timers: the retransmission timeout (the handshake's too), RACK's loss timer, the ACK delay,
//! the pacer's release and the idle timeout; `poll_timeout` reports the earliest.
//!
//! The retransmission timeout is RFC 9002's probe timeout, timed from the last ack-eliciting
//! packet sent and doubled per consecutive expiry (RFC 6298 §5.5); when it fires everything in
//! flight is presumed lost (RFC 6298 §5, Linux `tcp_enter_loss`), `on_rto` is called and a
//! recovery period starts. With nothing in flight and the peer's window closed it sends a
//! window probe instead; too many consecutive expiries close the connection.

use super::{Connection, State, MTU_PROBE_CHUNK, PROBE_CHUNK};
use crate::packet::CloseCode;
use longhaul_cc::sender::rtt;
use longhaul_cc::{RtoEvent, Time};
use std::time::Duration;

impl Connection {
    fn backed_off_rto(&self) -> Duration {
        rtt::backed_off(self.rto_base, self.rto_backoff, self.config.max_rto)
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

    fn on_rto(&mut self, now: Time) {
        if self.rto_of_probe_alone() {
            return;
        }
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
        let mut large_sent = None;
        while pn < self.sent.next_pn() {
            if let Some(p) = self.sent.lose(pn) {
                if p.chunk == MTU_PROBE_CHUNK {
                    self.mtu_probe_lost(pn);
                    pn += 1;
                    continue;
                }
                self.stats.packets_lost += 1;
                if p.chunk != PROBE_CHUNK {
                    self.stream.on_lost(p.chunk);
                }
                if p.bytes > self.config.mss {
                    large_sent = Some(p.time_sent);
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
        if let Some(sent) = large_sent {
            self.on_large_lost(now, sent);
        }
    }
}
