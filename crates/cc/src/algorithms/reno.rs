//! Reno: the standard TCP congestion control (RFC 5681), as Linux runs it.
//!
//! The window opens by the number of packets acknowledged while below the slow-start threshold
//! (doubling once per round trip), and by one packet per round trip above it ("additive
//! increase"): `cwnd += acked / cwnd` per ACK. On the first loss of a window the threshold and
//! the window become `max(cwnd · beta, 2)` ("multiplicative decrease", beta = 1/2); after a
//! retransmission timeout the threshold is set the same way and the window restarts from one
//! packet in slow start. The window grows only when the sender actually used it (`cwnd_limited`)
//! and never during loss recovery.
//!
//! Seed 004 explains why this fails on long fat paths: after a halving, throughput recovers at
//! MTU/RTT² — about 4,500 s from 200 to 1,000 Mb/s at 180 ms with 1500-byte packets.
//!
//! Source: RFC 5681 §3.1; Linux `tcp_reno_cong_avoid`, `tcp_reno_ssthresh`.
//! Deviations: the reduction is computed from cwnd (as Linux does) rather than from FlightSize,
//! and the window is set to the new threshold at once instead of being inflated by duplicate
//! ACKs; the transport's recovery (SACK, RFC 6675 style) decides what to send meanwhile. This is
//! also how RFC 9002 applies NewReno. `beta` is a parameter so the same file serves experiments
//! with gentler decreases.

use crate::controller::{CongestionControl, Setup, INFINITE_SSTHRESH};
use crate::event::{AckEvent, LossEvent, RtoEvent};
use crate::params::{ParamError, ParamKind, ParamSpec, Params, Value};
use crate::registry::Algorithm;
use crate::window::{
    additive_increase, in_slow_start, reduce_to_threshold, restart_after_timeout, slow_start,
    timeout_lowers_threshold,
};

/// Reno's one parameter, the multiplicative-decrease factor `beta`.
pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "beta",
    kind: ParamKind::Float {
        min: 0.05,
        max: 0.95,
    },
    default: Value::Float(0.5),
    unit: "",
    help: "multiplicative-decrease factor: the window after a loss is beta × cwnd",
}];

/// Reno as the registry lists it (`reno`).
pub const ALGORITHM: Algorithm = Algorithm {
    name: "reno",
    summary: "standard TCP: slow start, +1 packet per RTT, halve on loss",
    source: "RFC 5681; Linux tcp_cong.c",
    params: PARAMS,
    presets: &[],
    build,
};

fn build(p: &Params, setup: &Setup) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Reno::new(*setup, p.f64("beta"))))
}

/// Reno's state: just the window and the threshold.
#[derive(Debug, Clone)]
pub struct Reno {
    setup: Setup,
    beta: f64,
    cwnd: f64,
    ssthresh: f64,
}

impl Reno {
    /// A controller in slow start with the initial window, reducing to `beta × cwnd` on loss.
    pub fn new(setup: Setup, beta: f64) -> Reno {
        Reno {
            setup,
            beta,
            cwnd: setup.clamp_cwnd(setup.initial_cwnd),
            ssthresh: INFINITE_SSTHRESH,
        }
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if ev.in_recovery || !ev.cwnd_limited {
            return;
        }
        let mut acked = ev.acked_packets as f64;
        if in_slow_start(self.cwnd, self.ssthresh) {
            acked = slow_start(&mut self.cwnd, self.ssthresh, acked);
        }
        if acked > 0.0 {
            let w = self.cwnd;
            additive_increase(&mut self.cwnd, w, acked);
        }
        self.cwnd = self.setup.clamp_cwnd(self.cwnd);
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        if ev.first_in_window {
            let t = self.cwnd * self.beta;
            reduce_to_threshold(&self.setup, &mut self.cwnd, &mut self.ssthresh, t);
        }
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        let t = timeout_lowers_threshold(ev.consecutive).then_some(self.cwnd * self.beta);
        restart_after_timeout(&self.setup, &mut self.cwnd, &mut self.ssthresh, t, 1.0);
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn phase(&self) -> &'static str {
        if in_slow_start(self.cwnd, self.ssthresh) {
            "slow_start"
        } else {
            "congestion_avoidance"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{ack, loss, rto};

    #[test]
    fn slow_start_doubles_then_additive_increase_adds_one_per_window() {
        let mut r = Reno::new(Setup::default(), 0.5);
        for _ in 0..10 {
            r.on_ack(&ack(1));
        }
        assert_eq!(r.cwnd(), 20.0, "ten ACKs in slow start add ten packets");
        r.on_loss(&loss(true));
        assert_eq!(r.ssthresh(), 10.0);
        assert_eq!(r.cwnd(), 10.0);
        for _ in 0..10 {
            r.on_ack(&ack(1));
        }
        assert!(
            (r.cwnd() - 11.0).abs() < 0.05,
            "one RTT of ACKs adds about one packet: {}",
            r.cwnd()
        );
    }

    #[test]
    fn only_the_first_loss_of_a_window_reduces() {
        let mut r = Reno::new(
            Setup {
                initial_cwnd: 100.0,
                ..Setup::default()
            },
            0.5,
        );
        r.on_loss(&loss(true));
        r.on_loss(&loss(false));
        assert_eq!(r.cwnd(), 50.0);
    }

    #[test]
    fn rto_restarts_from_one_packet_in_slow_start() {
        let mut r = Reno::new(
            Setup {
                initial_cwnd: 64.0,
                ..Setup::default()
            },
            0.5,
        );
        r.on_rto(&rto(1));
        assert_eq!((r.cwnd(), r.ssthresh()), (1.0, 32.0));
        r.on_rto(&rto(2));
        assert_eq!(
            r.ssthresh(),
            32.0,
            "a backed-off RTO does not shrink the threshold again"
        );
        assert_eq!(r.phase(), "slow_start");
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_or_in_recovery() {
        let mut r = Reno::new(Setup::default(), 0.5);
        r.on_ack(&AckEvent {
            cwnd_limited: false,
            ..ack(5)
        });
        r.on_ack(&AckEvent {
            in_recovery: true,
            ..ack(5)
        });
        assert_eq!(r.cwnd(), 10.0);
    }
}
