//! Scalable TCP (Kelly 2003): multiplicative increase, multiplicative decrease above a legacy
//! window, so that recovering from a loss takes a fixed number of round trips at any rate.
//!
//! Reno adds one packet per round trip and halves on loss, so after a loss at window `w` it
//! needs `w/2` round trips to return: the recovery time grows with the rate (seed 004: about
//! 4,500 s from 200 to 1,000 Mb/s at 180 ms). Scalable TCP instead adds a fixed `a` packets per
//! acknowledged packet, `cwnd += a` per ACK, which is `a·cwnd` per round trip: the window grows
//! by the factor `1 + a` each RTT. On the first loss of a window it takes away `b·cwnd`. Both
//! steps are proportional to the window, so the number of round trips to regain the window lost
//! at one congestion event is `ln(1/(1−b)) / ln(1+a)` — about 13.4 RTTs for the suggested
//! `a = 0.01`, `b = 0.125` — whether the window is 1,000 packets or 100,000. At 1 Gb/s and 180 ms
//! (15,000 packets of 1500 bytes) that is 2.4 s, against Reno's 7,500 round trips, 22 minutes.
//!
//! With a loss every `1/p` packets, the window gains `a/p` between losses and must give the same
//! back, `b·W`, at each: losses come at `W = a/(b·p)` and the window averages
//! `W·b/ln(1/(1−b)) ≈ 0.075/p` packets, inversely proportional to `p` where Reno's `1.22/√p`
//! goes with its square root. The two cross at a small window, `p ≈ 0.4 %` and `w ≈ 20` packets
//! with these constants. At higher loss rates (smaller windows) the scalable rules would leave a
//! flow behind standard TCP, and there standard TCP already works well. Kelly therefore keeps
//! standard TCP below a *legacy window*: where Reno performs, a Scalable flow is
//! indistinguishable from it, and only on paths where Reno's window is large does it differ.
//! While the window is at most `legacy_threshold` packets the increase is Reno's `1/cwnd` per ACK
//! and the decrease Reno's halving. Slow start is unchanged. After a retransmission timeout the
//! window restarts from one packet in slow start and the threshold follows the same decrease
//! rule as a loss.
//!
//! Sources: seed 003 (Kelly, "Scalable TCP: Improving Performance in HighSpeed Wide Area
//! Networks", PFLDnet 2003; a = 0.01, b = 0.125, legacy window 16, all configurable); Linux
//! `net/ipv4/tcp_scalable.c`.
//!
//! Linux (`preset=linux`): `tcp_cong_avoid_ai(tp, min(cwnd, 100), acked)`, i.e. `acked/cwnd`
//! below 100 packets and `acked/100` (0.01 per packet) above, and `ssthresh = cwnd − cwnd>>3`
//! (7/8) at every window size, floor 2. The threshold 100 = 1/a makes the increase continuous:
//! at 100 packets Reno's `1/cwnd` equals Scalable's 0.01. The constant was 50 until the stretch-ACK
//! fix that passes `acked` into `tcp_cong_avoid_ai`: with one growth step per ACK, 50 compensated
//! for delayed ACKs (one ACK per two packets). This code, like current Linux, scales every
//! increase by the packets acknowledged, so 0.01 per packet is right whatever the ACK ratio.
//!
//! Interpretation and deviations:
//! - Seed 003 says only that the modified rules apply "above the threshold window size". We read
//!   that literally for both rules: growth is Reno's when `cwnd ≤ legacy_threshold` and Scalable's
//!   when larger, and a loss at `cwnd ≤ legacy_threshold` halves (`legacy_decrease = true`). With
//!   Kelly's threshold of 16 the per-ACK increase drops from 1/16 to 0.01 at the threshold, so
//!   between 16 and 100 packets the window grows more slowly than Reno's would; that is the
//!   published rule and we keep it. `legacy_decrease = false` applies `b` at every window, as
//!   Linux does.
//! - Windows are floating point: 100 ACKs above the threshold add exactly one packet, and 7/8 of
//!   100 is 87.5 here where Linux's integer shift gives 88.
//! - As in `reno`, the reduction is computed from cwnd and applied at once; the transport's
//!   recovery decides what to send meanwhile. A stretch ACK that leaves slow start feeds its
//!   leftover packets into congestion avoidance (Linux `tcp_slow_start` semantics).

use crate::controller::{CongestionControl, Setup, INFINITE_SSTHRESH};
use crate::event::{AckEvent, LossEvent, RtoEvent};
use crate::params::{ParamError, ParamKind, ParamSpec, Params, Preset, Value};
use crate::registry::Algorithm;
use crate::window::{
    additive_increase, in_slow_start, reduce_to_threshold, restart_after_timeout, slow_start,
    timeout_lowers_threshold,
};

/// Scalable's parameters: increase `a`, decrease `b`, and the legacy window below which standard
/// TCP applies.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "a",
        kind: ParamKind::Float {
            min: 0.0001,
            max: 0.5,
        },
        default: Value::Float(0.01),
        unit: "packets",
        help: "packets added per packet acknowledged above legacy_threshold: ×(1+a) per RTT",
    },
    ParamSpec {
        name: "b",
        kind: ParamKind::Float {
            min: 0.01,
            max: 0.5,
        },
        default: Value::Float(0.125),
        unit: "",
        help: "decrease on the first loss of a window: cwnd −= b × cwnd",
    },
    ParamSpec {
        name: "legacy_threshold",
        kind: ParamKind::Int {
            min: 0,
            max: 1_000_000_000,
        },
        default: Value::Int(16),
        unit: "packets",
        help: "at or below this window, behave as standard TCP (Reno)",
    },
    ParamSpec {
        name: "legacy_decrease",
        kind: ParamKind::Bool,
        default: Value::Bool(true),
        unit: "",
        help: "halve on loss at or below legacy_threshold (Kelly); false: always apply b (Linux)",
    },
];

/// `linux`: Linux's legacy threshold of 100 packets and its decrease at every window.
pub const PRESETS: &[Preset] = &[Preset {
    name: "linux",
    help: "Linux tcp_scalable.c: acked/min(cwnd,100) growth, cwnd − cwnd>>3 at every window",
    values: &[
        ("legacy_threshold", Value::Int(100)),
        ("legacy_decrease", Value::Bool(false)),
    ],
}];

/// Scalable TCP as the registry lists it (`scalable`).
pub const ALGORITHM: Algorithm = Algorithm {
    name: "scalable",
    summary:
        "Scalable TCP: +0.01 packet per ACK, −1/8 on loss, loss recovery in ~13 RTTs at any rate",
    source: "Kelly, PFLDnet 2003 (seed 003); Linux tcp_scalable.c",
    params: PARAMS,
    presets: PRESETS,
    build,
};

fn build(p: &Params, setup: &Setup) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Scalable::new(
        *setup,
        ScalableConfig::from_params(p),
    )))
}

/// Scalable TCP's constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalableConfig {
    /// Packets added per acknowledged packet above the legacy threshold.
    pub a: f64,
    /// Fraction of the window removed on the first loss of a window.
    pub b: f64,
    /// Windows at or below this many packets follow Reno.
    pub legacy_threshold: f64,
    /// Halve (rather than apply `b`) on a loss at or below the legacy threshold.
    pub legacy_decrease: bool,
}

impl ScalableConfig {
    /// Kelly's suggested values (seed 003).
    pub const KELLY: ScalableConfig = ScalableConfig {
        a: 0.01,
        b: 0.125,
        legacy_threshold: 16.0,
        legacy_decrease: true,
    };

    /// Linux `tcp_scalable.c`.
    pub const LINUX: ScalableConfig = ScalableConfig {
        a: 0.01,
        b: 0.125,
        legacy_threshold: 100.0,
        legacy_decrease: false,
    };

    /// The typed values of validated `scalable` parameters.
    pub fn from_params(p: &Params) -> ScalableConfig {
        ScalableConfig {
            a: p.f64("a"),
            b: p.f64("b"),
            legacy_threshold: p.i64("legacy_threshold") as f64,
            legacy_decrease: p.bool("legacy_decrease"),
        }
    }

    /// Round trips needed to regain the window lost at one congestion event when every packet of
    /// the window is acknowledged once per round trip: `ln(1/(1−b)) / ln(1+a)`.
    pub fn recovery_rtts(&self) -> f64 {
        (1.0 / (1.0 - self.b)).ln() / (1.0 + self.a).ln()
    }
}

/// Scalable TCP's state: the window, the threshold and the constants.
#[derive(Debug, Clone)]
pub struct Scalable {
    setup: Setup,
    config: ScalableConfig,
    cwnd: f64,
    ssthresh: f64,
}

impl Scalable {
    /// A controller in slow start with the initial window.
    pub fn new(setup: Setup, config: ScalableConfig) -> Scalable {
        Scalable {
            setup,
            config,
            cwnd: setup.clamp_cwnd(setup.initial_cwnd),
            ssthresh: INFINITE_SSTHRESH,
        }
    }

    /// True when the window is above the legacy threshold, where the scalable rules apply.
    fn above_legacy(&self) -> bool {
        self.cwnd > self.config.legacy_threshold
    }

    /// The threshold after a congestion signal at the current window (before the floor of 2).
    fn reduced_threshold(&self) -> f64 {
        let keep = if self.config.legacy_decrease && !self.above_legacy() {
            0.5
        } else {
            1.0 - self.config.b
        };
        self.cwnd * keep
    }
}

impl CongestionControl for Scalable {
    fn name(&self) -> &'static str {
        "scalable"
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
            if self.above_legacy() {
                self.cwnd += self.config.a * acked;
            } else {
                let w = self.cwnd;
                additive_increase(&mut self.cwnd, w, acked);
            }
        }
        self.cwnd = self.setup.clamp_cwnd(self.cwnd);
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        if ev.first_in_window {
            let t = self.reduced_threshold();
            reduce_to_threshold(&self.setup, &mut self.cwnd, &mut self.ssthresh, t);
        }
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        let t = timeout_lowers_threshold(ev.consecutive).then(|| self.reduced_threshold());
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
        } else if self.above_legacy() {
            "scalable_avoidance"
        } else {
            "legacy_avoidance"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::reno::Reno;
    use crate::registry::CcSpec;
    use crate::testkit::{ack, arbitrary_events, loss, rto};

    /// A controller in congestion avoidance at window `w`.
    fn in_avoidance(w: f64, config: ScalableConfig) -> Scalable {
        let mut s = Scalable::new(
            Setup {
                initial_cwnd: w,
                ..Setup::default()
            },
            config,
        );
        s.ssthresh = w;
        s
    }

    /// One round trip of a window-limited flow: every packet of the current window is
    /// acknowledged by its own ACK.
    fn one_rtt(cc: &mut dyn CongestionControl) {
        for _ in 0..cc.cwnd().floor() as u64 {
            cc.on_ack(&ack(1));
        }
    }

    #[test]
    fn hundred_acks_above_threshold_add_one_packet_at_any_window() {
        for w in [17.0, 1000.0, 100_000.0] {
            let mut s = in_avoidance(w, ScalableConfig::KELLY);
            for _ in 0..100 {
                s.on_ack(&ack(1));
            }
            assert!(
                (s.cwnd() - (w + 1.0)).abs() < 1e-9,
                "at {w}: 100 × 0.01 = 1 packet, got {}",
                s.cwnd() - w
            );
            assert_eq!(s.phase(), "scalable_avoidance");
        }
        // A stretch ACK of 100 packets earns the same packet as 100 single ACKs.
        let mut s = in_avoidance(5000.0, ScalableConfig::KELLY);
        s.on_ack(&ack(100));
        assert!((s.cwnd() - 5001.0).abs() < 1e-9);
    }

    #[test]
    fn at_or_below_the_legacy_threshold_growth_is_exactly_renos() {
        let mut s = in_avoidance(10.0, ScalableConfig::KELLY);
        let mut r = Reno::new(
            Setup {
                initial_cwnd: 20.0,
                ..Setup::default()
            },
            0.5,
        );
        r.on_loss(&loss(true)); // cwnd = ssthresh = 10: congestion avoidance at 10
        assert_eq!((r.cwnd(), r.ssthresh()), (10.0, 10.0));
        for _ in 0..10 {
            s.on_ack(&ack(1));
            r.on_ack(&ack(1));
            assert_eq!(s.cwnd(), r.cwnd());
        }
        assert_eq!(s.phase(), "legacy_avoidance");
        // Ten ACKs at 10 packets add about one packet (1/10 + 1/10.1 + …), not 10 × 0.01:
        // Reno's w += 1/w, ten times.
        let reno = (0..10).fold(10.0_f64, |w, _| w + 1.0 / w);
        assert!((reno - 10.9586).abs() < 1e-4);
        assert_eq!(s.cwnd(), reno);
    }

    #[test]
    fn linux_preset_grows_as_reno_to_100_packets_and_by_a_hundredth_above() {
        let spec: CcSpec = "scalable:preset=linux".parse().unwrap();
        assert_eq!(
            ScalableConfig::from_params(&spec.params),
            ScalableConfig::LINUX
        );
        // At 50 packets (above Kelly's 16, below Linux's 100): acked/cwnd.
        let mut s = in_avoidance(50.0, ScalableConfig::LINUX);
        s.on_ack(&ack(1));
        assert_eq!(s.cwnd(), 50.0 + 1.0 / 50.0);
        let mut kelly = in_avoidance(50.0, ScalableConfig::KELLY);
        kelly.on_ack(&ack(1));
        assert_eq!(kelly.cwnd(), 50.0 + 0.01);
        // At exactly 100 the two Linux rules agree (acked/min(cwnd, 100)).
        let mut s = in_avoidance(100.0, ScalableConfig::LINUX);
        s.on_ack(&ack(1));
        assert_eq!(s.cwnd(), 100.01);
        let mut s = in_avoidance(250.0, ScalableConfig::LINUX);
        s.on_ack(&ack(3));
        assert!((s.cwnd() - 250.03).abs() < 1e-12);
    }

    #[test]
    fn first_loss_of_a_window_takes_one_eighth() {
        let mut s = in_avoidance(1000.0, ScalableConfig::KELLY);
        s.on_loss(&loss(true));
        assert_eq!((s.cwnd(), s.ssthresh()), (875.0, 875.0));
        s.on_loss(&loss(false));
        assert_eq!(
            s.cwnd(),
            875.0,
            "later losses of the same window do not reduce"
        );
        s.on_loss(&loss(true));
        assert_eq!(s.cwnd(), 765.625);
    }

    #[test]
    fn loss_at_the_legacy_window_halves_unless_linux() {
        let mut s = in_avoidance(16.0, ScalableConfig::KELLY);
        s.on_loss(&loss(true));
        assert_eq!(s.cwnd(), 8.0, "16 is not above the threshold: Reno halving");
        let mut s = in_avoidance(17.0, ScalableConfig::KELLY);
        s.on_loss(&loss(true));
        assert_eq!(s.cwnd(), 14.875);
        let mut s = in_avoidance(16.0, ScalableConfig::LINUX);
        s.on_loss(&loss(true));
        assert_eq!(s.cwnd(), 14.0, "Linux: cwnd − cwnd/8 at every window");
        let mut s = in_avoidance(2.0, ScalableConfig::LINUX);
        s.on_loss(&loss(true));
        assert_eq!(s.cwnd(), 2.0, "floor of two packets");
    }

    #[test]
    fn loss_recovery_takes_the_same_number_of_rtts_at_any_window() {
        let config = ScalableConfig::KELLY;
        let predicted = config.recovery_rtts();
        assert!(
            (predicted - 13.42).abs() < 0.01,
            "ln(8/7)/ln(1.01) = {predicted}"
        );
        for w in [1000.0, 100_000.0] {
            let mut s = in_avoidance(w, config);
            s.on_loss(&loss(true));
            let mut rtts = 0;
            while s.cwnd() < w {
                one_rtt(&mut s);
                rtts += 1;
                assert!(rtts < 100, "no recovery at {w}");
            }
            // 0.875 × 1.01^13 = 0.9958 < 1 ≤ 0.875 × 1.01^14 = 1.0058
            assert_eq!(rtts, 14, "window {w}");
            assert_eq!(rtts, predicted.ceil() as u32);
        }
        // Reno at 1000 packets needs 500 round trips for the same recovery.
        let mut r = Reno::new(
            Setup {
                initial_cwnd: 1000.0,
                ..Setup::default()
            },
            0.5,
        );
        r.on_loss(&loss(true));
        let mut rtts = 0;
        while r.cwnd() < 999.5 {
            one_rtt(&mut r);
            rtts += 1;
        }
        assert!((495..=505).contains(&rtts), "Reno: {rtts} RTTs");
    }

    #[test]
    fn periodic_losses_settle_on_the_mimd_equilibrium() {
        // One loss every 1/p = 10,000 packets. Between losses the window gains a/p = 100
        // packets and at each loss gives up b·W, so losses come at W = a/(b·p) = 800 packets;
        // growing geometrically from 700 to 800, the window averages
        // W·b/ln(1/(1−b)) = 800·0.125/ln(8/7) = 748.9 packets.
        let p = 1e-4;
        let mut s = in_avoidance(720.0, ScalableConfig::KELLY);
        let (mut sent, mut next_loss) = (0.0, 1.0 / p);
        let (mut sum, mut rtts, mut peaks) = (0.0, 0, Vec::new());
        for rtt in 0..1500 {
            let mut lost = false;
            for _ in 0..s.cwnd() as u64 {
                sent += 1.0;
                if sent >= next_loss {
                    next_loss += 1.0 / p;
                    lost = true;
                }
                s.on_ack(&ack(1));
            }
            if rtt >= 500 {
                sum += s.cwnd();
                rtts += 1;
                if lost {
                    peaks.push(s.cwnd());
                }
            }
            if lost {
                s.on_loss(&loss(true));
            }
        }
        let peak = peaks.iter().sum::<f64>() / peaks.len() as f64;
        let mean = sum / rtts as f64;
        assert!(
            (peak / 800.0 - 1.0).abs() < 0.005,
            "window at losses {peak}"
        );
        assert!((mean / 748.9 - 1.0).abs() < 0.01, "mean window {mean}");
    }

    #[test]
    fn slow_start_is_unchanged_and_leftover_acks_continue_in_avoidance() {
        let mut s = Scalable::new(Setup::default(), ScalableConfig::KELLY);
        for _ in 0..10 {
            s.on_ack(&ack(1));
        }
        assert_eq!(s.cwnd(), 20.0);
        assert_eq!(s.phase(), "slow_start");
        let mut s = Scalable::new(
            Setup {
                initial_cwnd: 195.0,
                ..Setup::default()
            },
            ScalableConfig::KELLY,
        );
        s.ssthresh = 200.0;
        s.on_ack(&ack(10));
        // Five packets reach the threshold; five more at 0.01 each.
        assert!((s.cwnd() - 200.05).abs() < 1e-9, "{}", s.cwnd());
    }

    #[test]
    fn rto_restarts_from_one_packet_with_the_scalable_threshold() {
        let mut s = in_avoidance(1000.0, ScalableConfig::KELLY);
        s.on_rto(&rto(1));
        assert_eq!((s.cwnd(), s.ssthresh()), (1.0, 875.0));
        s.on_rto(&rto(2));
        assert_eq!(s.ssthresh(), 875.0);
        assert_eq!(s.phase(), "slow_start");
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_or_in_recovery() {
        let mut s = in_avoidance(1000.0, ScalableConfig::KELLY);
        s.on_ack(&AckEvent {
            cwnd_limited: false,
            ..ack(50)
        });
        s.on_ack(&AckEvent {
            in_recovery: true,
            ..ack(50)
        });
        assert_eq!(s.cwnd(), 1000.0);
    }

    #[test]
    fn parameters_are_validated() {
        let spec: CcSpec = "scalable:a=0.02,b=0.25,legacy_threshold=38"
            .parse()
            .unwrap();
        let c = ScalableConfig::from_params(&spec.params);
        assert_eq!((c.a, c.b, c.legacy_threshold), (0.02, 0.25, 38.0));
        assert_eq!(
            spec.to_string(),
            "scalable:a=0.02,b=0.25,legacy_threshold=38"
        );
        for bad in [
            "scalable:a=0",
            "scalable:a=1",
            "scalable:b=0.9",
            "scalable:legacy_threshold=-1",
            "scalable:legacy_threshold=16.5",
            "scalable:preset=bsd",
        ] {
            assert!(bad.parse::<CcSpec>().is_err(), "{bad} accepted");
        }
        let e = "scalable:b=0.9".parse::<CcSpec>().unwrap_err().to_string();
        assert!(e.contains("[0.01, 0.5]"), "{e}");
    }

    proptest::proptest! {
        #[test]
        fn window_stays_finite_and_within_bounds(
            events in arbitrary_events(400),
            initial in 1.0f64..200_000.0,
            linux in proptest::bool::ANY,
        ) {
            let setup = Setup { initial_cwnd: initial, max_cwnd: 150_000.0, ..Setup::default() };
            let config = if linux { ScalableConfig::LINUX } else { ScalableConfig::KELLY };
            let mut s = Scalable::new(setup, config);
            for ev in &events {
                ev.apply(&mut s);
                proptest::prop_assert!(
                    s.cwnd().is_finite() && s.cwnd() >= 1.0 && s.cwnd() <= 150_000.0,
                    "cwnd {} after {:?}", s.cwnd(), ev
                );
                proptest::prop_assert!(s.ssthresh() >= 2.0, "ssthresh {}", s.ssthresh());
            }
        }
    }
}
