//! Paced: a fixed-rate sender for experiments, not a congestion control.
//!
//! Seed 002's maximum-burst-size argument (Figs. 2–4) compares senders that move the same data
//! at the same average rate and differ only in how it is clumped: "when encountering the same
//! cross traffic, the larger burst has higher probability to cause packet drop", and a
//! window-based sender of the same data loses more than small bursts with proper gaps. Testing
//! that needs a sender whose rate and burst size do not react to anything, which is this:
//!
//! - `clock = "pacer"` (default): pacing rate `rate`, bursts of `burst` packets
//!   ([`CongestionControl::max_burst`]), and a window large enough (`4 · rate · srtt`) that the
//!   pacer, never the window, sets the pace. A transport that sends trains (the simulator's
//!   model transport) emits `burst` packets back to back every `burst · size / rate` seconds.
//! - `clock = "ack"`: the window-based sender of the same average rate: no pacing, a fixed window
//!   of `rate · min_rtt` (the initial window until the first RTT sample), so the ACK clock alone
//!   spaces its packets — Fig. 4b's "window-based transmission control" with the window held at
//!   the size that carries `rate`.
//!
//! Loss and timeouts change nothing: the rate is the experiment's independent variable. It is
//! registered apart from the congestion controls (`registry::find` knows it, `longhaul cc
//! list` and the vector files do not), because it is unfit for sharing a path.
//!
//! Source: seed 002, Figs. 2–4 (the controlled comparison this sender makes possible).

use crate::controller::{CongestionControl, Setup, INFINITE_SSTHRESH};
use crate::event::{AckEvent, LossEvent, RtoEvent};
use crate::params::{ParamError, ParamKind, ParamSpec, Params, Value};
use crate::registry::Algorithm;

/// The pacer-clocked window: this many rate × RTT products, so that it never binds.
const PACER_WINDOW_GAIN: f64 = 4.0;

/// The fixed sender's parameters: rate, burst and clock.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "rate",
        kind: ParamKind::Float {
            min: 1e3,
            max: 1e12,
        },
        default: Value::Float(100e6),
        unit: "bit/s",
        help: "average sending rate, bits per second as the transport paces them",
    },
    ParamSpec {
        name: "burst",
        kind: ParamKind::Int {
            min: 1,
            max: 1_000_000,
        },
        default: Value::Int(1),
        unit: "packets",
        help: "packets sent back to back per pacing gap (clock = pacer)",
    },
    ParamSpec {
        name: "clock",
        kind: ParamKind::Choice(&["pacer", "ack"]),
        default: Value::Choice("pacer"),
        unit: "",
        help: "pacer: paced bursts; ack: a fixed window of rate × min RTT, clocked by ACKs",
    },
];

/// The fixed-rate, fixed-burst sender (`paced`): found by name, not listed, as it controls no
/// congestion.
pub const ALGORITHM: Algorithm = Algorithm {
    name: "paced",
    summary: "experiments only: fixed average rate in fixed bursts, or a fixed window (clock=ack)",
    source: "seed 002, Figs. 2–4 (same data, same rate, different burst sizes)",
    params: PARAMS,
    presets: &[],
    build,
};

fn build(p: &Params, setup: &Setup) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Paced::new(
        *setup,
        p.f64("rate") / 8.0,
        p.i64("burst").clamp(1, 1_000_000) as u32,
        p.choice("clock") == "ack",
    )))
}

/// The fixed sender's state: the settings and the smallest RTT seen.
#[derive(Debug, Clone)]
pub struct Paced {
    setup: Setup,
    /// Payload bytes per second.
    rate: f64,
    burst: u32,
    ack_clocked: bool,
    min_rtt: f64,
    cwnd: f64,
}

impl Paced {
    /// A sender of `rate` payload bytes per second in bursts of `burst` packets; with `ack_clocked`
    /// it keeps a fixed window of rate × min RTT instead of pacing.
    pub fn new(setup: Setup, rate: f64, burst: u32, ack_clocked: bool) -> Paced {
        Paced {
            setup,
            rate,
            burst,
            ack_clocked,
            min_rtt: f64::INFINITY,
            cwnd: setup.clamp_cwnd(setup.initial_cwnd),
        }
    }
}

impl CongestionControl for Paced {
    fn name(&self) -> &'static str {
        "paced"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        let Some(rtt) = ev.rtt else { return };
        self.min_rtt = self.min_rtt.min(rtt.as_secs_f64());
        let pipe = self.rate * self.min_rtt / self.setup.mss as f64;
        let w = if self.ack_clocked {
            pipe
        } else {
            (PACER_WINDOW_GAIN * pipe).max(2.0 * self.burst as f64)
        };
        self.cwnd = self.setup.clamp_cwnd(w.max(1.0));
    }

    fn on_loss(&mut self, _ev: &LossEvent) {}

    fn on_rto(&mut self, _ev: &RtoEvent) {}

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        INFINITE_SSTHRESH
    }

    fn pacing_rate(&self) -> Option<u64> {
        (!self.ack_clocked).then_some((self.rate as u64).max(1))
    }

    fn max_burst(&self) -> Option<u32> {
        (!self.ack_clocked).then_some(self.burst)
    }

    fn phase(&self) -> &'static str {
        if self.ack_clocked {
            "window"
        } else {
            "paced"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{ack, loss, rto};
    use crate::CcSpec;
    use std::time::Duration;

    fn build(spec: &str) -> Box<dyn CongestionControl> {
        spec.parse::<CcSpec>()
            .unwrap()
            .build(&Setup::default())
            .unwrap()
    }

    #[test]
    fn paced_sender_holds_rate_burst_and_a_window_that_never_binds() {
        let mut cc = build("paced:rate=200e6,burst=16");
        assert_eq!(cc.pacing_rate(), Some(25_000_000));
        assert_eq!(cc.max_burst(), Some(16));
        cc.on_ack(&AckEvent {
            rtt: Some(Duration::from_millis(80)),
            ..ack(1)
        });
        // 25 MB/s × 80 ms = 1381.2 packets of 1448 bytes; four of them.
        let pipe = 25e6 * 0.080 / 1448.0;
        assert!((cc.cwnd() - 4.0 * pipe).abs() < 1e-6, "{}", cc.cwnd());
        cc.on_loss(&loss(true));
        cc.on_rto(&rto(1));
        assert_eq!(cc.pacing_rate(), Some(25_000_000));
        assert!((cc.cwnd() - 4.0 * pipe).abs() < 1e-6);
    }

    #[test]
    fn a_burst_larger_than_the_pipe_still_fits_the_window_twice() {
        // 200 Mb/s × 80 ms is 1381 packets; four of them (5525) would not hold two bursts of
        // 4000, so the window is two bursts: one leaves while the one before is unacknowledged.
        let mut cc = build("paced:rate=200e6,burst=4000");
        cc.on_ack(&AckEvent {
            rtt: Some(Duration::from_millis(80)),
            ..ack(1)
        });
        assert_eq!(cc.cwnd(), 8000.0);
    }

    #[test]
    fn ack_clocked_sender_has_a_fixed_window_of_rate_times_min_rtt_and_no_pacing() {
        let mut cc = build("paced:rate=200e6,clock=ack");
        assert_eq!((cc.pacing_rate(), cc.max_burst()), (None, None));
        assert_eq!(cc.cwnd(), 10.0);
        for ms in [90, 80, 120] {
            cc.on_ack(&AckEvent {
                rtt: Some(Duration::from_millis(ms)),
                ..ack(1)
            });
        }
        assert!((cc.cwnd() - 25e6 * 0.080 / 1448.0).abs() < 1e-6);
        cc.on_loss(&loss(true));
        assert!((cc.cwnd() - 25e6 * 0.080 / 1448.0).abs() < 1e-6);
    }

    #[test]
    fn bad_settings_are_refused_with_the_range() {
        let e = "paced:burst=0".parse::<CcSpec>().unwrap_err().to_string();
        assert!(e.contains("burst"), "{e}");
        let e = "paced:clock=both"
            .parse::<CcSpec>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("pacer") && e.contains("ack"), "{e}");
    }
}
