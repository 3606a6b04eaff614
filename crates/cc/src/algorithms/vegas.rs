//! TCP Vegas (Brakmo & Peterson 1994/95): keep a few packets, between `alpha` and `beta`, of the
//! flow's own data queued at the bottleneck, judged once per round trip from the RTT.
//!
//! Vegas compares the rate it would get with an empty queue, `Expected = cwnd/baseRTT` (baseRTT is
//! the smallest RTT ever seen, the propagation delay), with the rate it actually gets,
//! `Actual = cwnd/RTT`. The difference, scaled back to packets by baseRTT,
//!
//! ```text
//! diff = (Expected − Actual)·baseRTT = cwnd·(RTT − baseRTT)/RTT
//! ```
//!
//! is the number of the flow's packets sitting in queues: by Little's law, rate `cwnd/RTT` times
//! queueing delay `RTT − baseRTT`. Once per round trip, in congestion avoidance, the window grows
//! by one packet when `diff < alpha`, shrinks by one when `diff > beta`, and holds in between, so
//! in equilibrium each flow keeps between alpha and beta packets queued and the rates settle at
//! `x = diff/q` for queueing delay `q`: weighted proportional fairness, independent of
//! propagation delay.
//! In slow start Vegas leaves as soon as `diff > gamma`, setting the window to the rate actually
//! achieved, `cwnd·baseRTT/RTT + 1`, before the queue grows large. Losses are still handled as by
//! Reno: the window halves.
//!
//! This follows Linux `net/ipv4/tcp_vegas.c`:
//! - RTT is the *minimum* sample of the last round trip (filters delayed ACKs); baseRTT is the
//!   minimum ever.
//! - A round ends when a packet sent after the previous round's end is acknowledged (Linux
//!   `after(ack, beg_snd_nxt)`; here `largest_acked ≥` the `next_packet` remembered then).
//! - With two or fewer RTT samples in a round (one delayed ACK per RTT) the ACK is handled by
//!   Reno instead. Between round ends the window changes only by slow start.
//! - Slow start grows every RTT (the paper grew every other RTT to measure in between).
//! - After each decision the window is kept ≥ 2 and ssthresh is raised to at least ¾·cwnd
//!   (`tcp_current_ssthresh`); a decrease also lowers ssthresh to the new window, so leaving
//!   slow start is permanent until a loss. (We apply the floor of 2 before ssthresh follows the
//!   window; Linux applies it after, so its ssthresh can fall to 1 on a tiny window.)
//! - Vegas is suspended during loss recovery and after a timeout, and restarts its measurement
//!   (round boundary, sample count, round minimum) when recovery ends (`vegas_enable` on
//!   `TCP_CA_Open`).
//! - Constants alpha = 2, beta = 4, gamma = 1 packets (module parameters). The `ns2` preset sets
//!   ns-2's 1, 3, 1 (only the thresholds; ns-2's Vegas differs in other details).
//!
//! `diff`'s denominator: the paper's `Expected − Actual` form divides by RTT, as above, and that is
//! our default. Linux commit 8d3a564da34e (2008) changed it to `cwnd·(RTT − baseRTT)/baseRTT`,
//! which overstates the queue by RTT/baseRTT: the equilibrium becomes `x = alpha·baseRTT/(RTT·q)`
//! for queueing delay `q`, proportional to `1/q²` when queueing dominates the RTT, and Vegas loses
//! proportional fairness (parking-lot throughput ratios grow with the square of the hop count).
//! A 2025 netdev thread ("Potential bug in Linux TCP vegas implementation", Agarwal; Cardwell
//! encouraged a fix) identified this.
//! `linux_compat = true` computes exactly what Linux does: the `/baseRTT` denominator and the
//! kernel's integer truncation of `diff` and of the slow-start target.
//!
//! Sources: L. S. Brakmo, L. L. Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
//! Internet", IEEE JSAC 13(8), 1995 (SIGCOMM 1994); Linux `net/ipv4/tcp_vegas.c`; ns-2
//! `tcp-vegas.cc` defaults.
//!
//! Other deviations:
//! - By default `diff` and the slow-start target are real numbers, as in the paper. Linux
//!   truncates them to integers, which leaves the alpha test as it is (⌊diff⌋ < 2 exactly when
//!   diff < 2) but raises the others by up to one packet: with beta = 4 it shrinks only once
//!   diff ≥ 5, and with gamma = 1 it leaves slow start only once diff ≥ 2.
//! - The window only grows when the sender used it (`cwnd_limited`), like every controller here;
//!   Linux Vegas's own slow start and +1 ignore that. Decreases apply regardless.
//! - RTTs are kept in nanoseconds; a zero sample counts as 1 ns (Linux adds 1 µs to every sample
//!   so that none is zero).
//! - baseRTT is kept for the life of the controller: Linux re-measures it when a connection
//!   restarts after idle (`CA_EVENT_TX_START`), an event this interface does not deliver.

use crate::controller::{CongestionControl, Setup, INFINITE_SSTHRESH};
use crate::event::{AckEvent, LossEvent, RtoEvent};
use crate::params::{ParamError, ParamKind, ParamSpec, Params, Preset, Value};
use crate::registry::Algorithm;
use crate::window::{
    additive_increase, in_slow_start, reduce_to_threshold, restart_after_timeout, slow_start,
    timeout_lowers_threshold,
};
use std::time::Duration;

/// Vegas's parameters: the thresholds `alpha`, `beta`, `gamma` and Linux's arithmetic.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha",
        kind: ParamKind::Float {
            min: 0.0,
            max: 10_000.0,
        },
        default: Value::Float(2.0),
        unit: "packets",
        help: "grow by one packet per RTT while fewer than alpha of the flow's packets are queued",
    },
    ParamSpec {
        name: "beta",
        kind: ParamKind::Float {
            min: 0.0,
            max: 10_000.0,
        },
        default: Value::Float(4.0),
        unit: "packets",
        help: "shrink by one packet per RTT while more than beta of the flow's packets are queued",
    },
    ParamSpec {
        name: "gamma",
        kind: ParamKind::Float {
            min: 0.0,
            max: 10_000.0,
        },
        default: Value::Float(1.0),
        unit: "packets",
        help: "leave slow start once more than gamma packets are queued",
    },
    ParamSpec {
        name: "linux_compat",
        kind: ParamKind::Bool,
        default: Value::Bool(false),
        unit: "",
        help: "compute diff as Linux does: cwnd·(rtt − baseRTT)/baseRTT, truncated to an integer",
    },
];

/// `ns2`: ns-2's thresholds 1, 3, 1.
pub const PRESETS: &[Preset] = &[Preset {
    name: "ns2",
    help: "ns-2 Agent/TCP/Vegas thresholds: alpha 1, beta 3, gamma 1",
    values: &[("alpha", Value::Float(1.0)), ("beta", Value::Float(3.0))],
}];

/// TCP Vegas as the registry lists it (`vegas`).
pub const ALGORITHM: Algorithm = Algorithm {
    name: "vegas",
    summary: "TCP Vegas: keep alpha..beta packets queued, ±1 packet per RTT from RTT vs baseRTT",
    source: "Brakmo & Peterson, IEEE JSAC 1995; Linux tcp_vegas.c",
    params: PARAMS,
    presets: PRESETS,
    build,
};

fn build(p: &Params, setup: &Setup) -> Result<Box<dyn CongestionControl>, ParamError> {
    let config = VegasConfig {
        alpha: p.f64("alpha"),
        beta: p.f64("beta"),
        gamma: p.f64("gamma"),
        linux_compat: p.bool("linux_compat"),
    };
    if config.alpha > config.beta {
        return Err(p.invalid(format!(
            "alpha ({}) must not exceed beta ({}): the window holds while alpha ≤ diff ≤ beta",
            config.alpha, config.beta
        )));
    }
    Ok(Box::new(Vegas::new(*setup, config)))
}

/// Vegas's thresholds, in packets queued.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VegasConfig {
    /// Grow by one packet per RTT while fewer than this many of the flow's packets are queued.
    pub alpha: f64,
    /// Shrink by one packet per RTT while more than this many of the flow's packets are queued.
    pub beta: f64,
    /// Leave slow start once more than this many of the flow's packets are queued.
    pub gamma: f64,
    /// Linux's `/baseRTT` denominator and integer arithmetic.
    pub linux_compat: bool,
}

impl VegasConfig {
    /// Linux's module defaults.
    pub const LINUX: VegasConfig = VegasConfig {
        alpha: 2.0,
        beta: 4.0,
        gamma: 1.0,
        linux_compat: false,
    };

    /// The queue estimate `diff` and the window matching the actual rate, `cwnd·baseRTT/rtt`,
    /// for a window `cwnd` that saw round-trip time `rtt` on a path whose base RTT is `base`.
    pub fn diff_and_target(&self, cwnd: f64, base: Duration, rtt: Duration) -> (f64, f64) {
        let base = base.as_nanos() as f64;
        let rtt = rtt.as_nanos() as f64;
        if self.linux_compat {
            let cwnd = cwnd.floor();
            (
                (cwnd * (rtt - base) / base).floor(),
                (cwnd * base / rtt).floor(),
            )
        } else {
            (cwnd * (rtt - base) / rtt, cwnd * base / rtt)
        }
    }
}

/// Vegas's state.
#[derive(Debug, Clone)]
pub struct Vegas {
    setup: Setup,
    config: VegasConfig,
    cwnd: f64,
    ssthresh: f64,
    /// False during loss recovery (Linux `doing_vegas_now`).
    enabled: bool,
    /// Acknowledging this packet number or a later one ends the round (Linux `beg_snd_nxt`).
    round_end: u64,
    /// Smallest RTT ever seen: the propagation delay.
    base_rtt: Duration,
    /// Smallest RTT seen in the current round.
    round_min_rtt: Duration,
    /// RTT samples in the current round (Linux `cntRTT`).
    round_samples: u32,
}

impl Vegas {
    /// A controller in slow start with the initial window and no RTT sample yet.
    pub fn new(setup: Setup, config: VegasConfig) -> Vegas {
        Vegas {
            setup,
            config,
            cwnd: setup.clamp_cwnd(setup.initial_cwnd),
            ssthresh: INFINITE_SSTHRESH,
            enabled: true,
            round_end: 0,
            base_rtt: Duration::MAX,
            round_min_rtt: Duration::MAX,
            round_samples: 0,
        }
    }

    /// The propagation-delay estimate, once an RTT has been measured.
    pub fn base_rtt(&self) -> Option<Duration> {
        (self.base_rtt != Duration::MAX).then_some(self.base_rtt)
    }

    /// Start measuring afresh: the next decision comes after a full round of new samples.
    fn enable(&mut self, next_packet: u64) {
        self.enabled = true;
        self.round_end = next_packet;
        self.start_round();
    }

    fn start_round(&mut self) {
        self.round_samples = 0;
        self.round_min_rtt = Duration::MAX;
    }

    fn reno(&mut self, ev: &AckEvent) {
        if !ev.cwnd_limited {
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
    }

    /// The once-per-round decision from this round's minimum RTT.
    fn adjust(&mut self, ev: &AckEvent) {
        let (diff, target) =
            self.config
                .diff_and_target(self.cwnd, self.base_rtt, self.round_min_rtt);
        let slow = in_slow_start(self.cwnd, self.ssthresh);
        if slow && diff > self.config.gamma {
            // Going too fast: match the rate actually achieved and leave slow start.
            self.cwnd = self.cwnd.min(target + 1.0).max(2.0);
            self.ssthresh = self.ssthresh.min(self.cwnd);
        } else if slow {
            if ev.cwnd_limited {
                slow_start(&mut self.cwnd, self.ssthresh, ev.acked_packets as f64);
            }
        } else if diff > self.config.beta {
            self.cwnd = (self.cwnd - 1.0).max(2.0);
            self.ssthresh = self.ssthresh.min(self.cwnd);
        } else if diff < self.config.alpha && ev.cwnd_limited {
            self.cwnd += 1.0;
        }
        self.cwnd = self.setup.clamp_cwnd(self.cwnd.max(2.0));
        // Linux tcp_current_ssthresh outside recovery: at least ¾ of the window.
        self.ssthresh = self.ssthresh.max(0.75 * self.cwnd);
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if let Some(rtt) = ev.rtt {
            let rtt = rtt.max(Duration::from_nanos(1));
            self.base_rtt = self.base_rtt.min(rtt);
            self.round_min_rtt = self.round_min_rtt.min(rtt);
            self.round_samples = self.round_samples.saturating_add(1);
        }
        if ev.in_recovery {
            self.enabled = false;
            return;
        }
        if !self.enabled {
            self.enable(ev.next_packet);
        }
        if ev.largest_acked >= self.round_end {
            self.round_end = ev.next_packet;
            if self.round_samples <= 2 {
                // Probably only delayed ACKs: too few samples to judge the queue.
                self.reno(ev);
            } else {
                self.adjust(ev);
            }
            self.start_round();
        } else if in_slow_start(self.cwnd, self.ssthresh) && ev.cwnd_limited {
            slow_start(&mut self.cwnd, self.ssthresh, ev.acked_packets as f64);
        }
        self.cwnd = self.setup.clamp_cwnd(self.cwnd);
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        if ev.first_in_window {
            self.enabled = false;
            let t = self.cwnd * 0.5;
            reduce_to_threshold(&self.setup, &mut self.cwnd, &mut self.ssthresh, t);
        }
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        self.enabled = false;
        let t = timeout_lowers_threshold(ev.consecutive).then_some(self.cwnd * 0.5);
        restart_after_timeout(&self.setup, &mut self.cwnd, &mut self.ssthresh, t, 1.0);
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn phase(&self) -> &'static str {
        if !self.enabled {
            "recovery"
        } else if in_slow_start(self.cwnd, self.ssthresh) {
            "slow_start"
        } else {
            "congestion_avoidance"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::CcSpec;
    use crate::testkit::{ack, ack_rtt, arbitrary_events, loss, rto};
    use crate::time::Time;

    const BASE: Duration = Duration::from_millis(100);

    /// A window-limited sender on a path whose RTT the test sets per round trip. Packets are
    /// numbered from 0; every packet is acknowledged by its own ACK carrying an RTT sample, and
    /// the sender refills its window after each ACK.
    struct Path {
        una: u64,
        next: u64,
        now: Time,
    }

    impl Path {
        /// One round trip: every packet in flight is acknowledged.
        fn round_trip(&mut self, v: &mut Vegas, rtt: Duration) {
            self.now += rtt;
            for _ in 0..self.next - self.una {
                v.on_ack(&AckEvent {
                    largest_acked: self.una,
                    next_packet: self.next,
                    ..ack_rtt(self.now, 1, rtt)
                });
                self.una += 1;
                while self.next - self.una < v.cwnd().floor() as u64 {
                    self.next += 1;
                }
            }
        }
    }

    /// A Vegas flow with window `cwnd` and threshold `ssthresh` whose first window is in flight
    /// and whose measurement starts with it, as after Linux's `vegas_enable`.
    fn flow(cwnd: f64, ssthresh: f64, config: VegasConfig) -> (Vegas, Path) {
        let mut v = Vegas::new(
            Setup {
                initial_cwnd: cwnd,
                ..Setup::default()
            },
            config,
        );
        v.ssthresh = ssthresh;
        let path = Path {
            una: 0,
            next: cwnd as u64,
            now: Time::ZERO,
        };
        v.enable(path.next);
        (v, path)
    }

    fn linux_compat() -> VegasConfig {
        VegasConfig {
            linux_compat: true,
            ..VegasConfig::LINUX
        }
    }

    #[test]
    fn without_queueing_the_window_grows_exactly_one_packet_per_rtt() {
        let (mut v, mut path) = flow(20.0, 10.0, VegasConfig::LINUX);
        path.round_trip(&mut v, BASE);
        assert_eq!(v.cwnd(), 20.0, "the first round only measures");
        for k in 1..=30 {
            path.round_trip(&mut v, BASE);
            assert_eq!(v.cwnd(), 20.0 + k as f64, "round {k}");
        }
        assert_eq!(v.base_rtt(), Some(BASE));
        assert_eq!(v.phase(), "congestion_avoidance");
    }

    #[test]
    fn above_beta_the_window_shrinks_one_packet_per_rtt_then_holds() {
        // With RTT = 2·baseRTT, diff = cwnd/2: shrink while cwnd > 8 (diff > 4).
        let (mut v, mut path) = flow(20.0, 10.0, VegasConfig::LINUX);
        path.round_trip(&mut v, BASE);
        // This round's decision still sees the previous round's 100 ms samples: +1.
        path.round_trip(&mut v, 2 * BASE);
        assert_eq!(v.cwnd(), 21.0);
        for want in (8..=20).rev() {
            path.round_trip(&mut v, 2 * BASE);
            assert_eq!(v.cwnd(), want as f64);
        }
        for _ in 0..10 {
            path.round_trip(&mut v, 2 * BASE);
            assert_eq!(v.cwnd(), 8.0, "diff = 4 = beta: hold");
        }
        assert_eq!(
            v.ssthresh(),
            8.0,
            "a decrease lowers ssthresh with the window"
        );
        assert_eq!(v.phase(), "congestion_avoidance");
    }

    #[test]
    fn between_alpha_and_beta_the_window_holds() {
        // RTT = 2·baseRTT at 6 packets: diff = 6·100/200 = 3 queued packets, 2 ≤ 3 ≤ 4.
        let (mut v, mut path) = flow(5.0, 3.0, VegasConfig::LINUX);
        path.round_trip(&mut v, BASE);
        path.round_trip(&mut v, 2 * BASE); // decided on the 100 ms samples: +1
        assert_eq!(v.cwnd(), 6.0);
        for _ in 0..10 {
            path.round_trip(&mut v, 2 * BASE);
            assert_eq!(v.cwnd(), 6.0);
        }
        // RTT = 1.25·baseRTT: diff = cwnd/5 grows by one packet per RTT until diff = 2 = alpha.
        let rtt = Duration::from_millis(125);
        let (mut v, mut path) = flow(5.0, 3.0, VegasConfig::LINUX);
        path.round_trip(&mut v, BASE);
        path.round_trip(&mut v, rtt);
        assert_eq!(v.cwnd(), 6.0);
        for want in [7.0, 8.0, 9.0, 10.0, 10.0, 10.0, 10.0] {
            path.round_trip(&mut v, rtt);
            assert_eq!(v.cwnd(), want);
        }
    }

    #[test]
    fn linux_denominator_shrinks_where_the_paper_holds() {
        // cwnd 6, baseRTT 100 ms, RTT 200 ms. Paper: 6·100/200 = 3 → hold.
        // Linux: 6·100/100 = 6 > beta → −1 per RTT until 4·100/100 = 4.
        let (mut paper, mut p1) = flow(5.0, 3.0, VegasConfig::LINUX);
        let (mut linux, mut p2) = flow(5.0, 3.0, linux_compat());
        for rtt in [BASE, 2 * BASE] {
            p1.round_trip(&mut paper, rtt);
            p2.round_trip(&mut linux, rtt);
        }
        assert_eq!((paper.cwnd(), linux.cwnd()), (6.0, 6.0));
        for want in [5.0, 4.0, 4.0, 4.0] {
            p1.round_trip(&mut paper, 2 * BASE);
            p2.round_trip(&mut linux, 2 * BASE);
            assert_eq!((paper.cwnd(), linux.cwnd()), (6.0, want));
        }
    }

    #[test]
    fn linux_denominator_holds_where_the_paper_grows() {
        // cwnd 9, RTT 125 ms. Paper: 9·25/125 = 1.8 < alpha → +1.
        // Linux: ⌊9·25/100⌋ = ⌊2.25⌋ = 2, not below alpha → hold.
        let rtt = Duration::from_millis(125);
        assert_eq!(
            VegasConfig::LINUX.diff_and_target(9.0, BASE, rtt),
            (1.8, 7.2)
        );
        assert_eq!(linux_compat().diff_and_target(9.0, BASE, rtt), (2.0, 7.0));
        let (mut paper, mut p1) = flow(8.0, 4.0, VegasConfig::LINUX);
        let (mut linux, mut p2) = flow(8.0, 4.0, linux_compat());
        for rtt in [BASE, rtt] {
            p1.round_trip(&mut paper, rtt);
            p2.round_trip(&mut linux, rtt);
        }
        assert_eq!((paper.cwnd(), linux.cwnd()), (9.0, 9.0));
        p1.round_trip(&mut paper, rtt);
        p2.round_trip(&mut linux, rtt);
        assert_eq!((paper.cwnd(), linux.cwnd()), (10.0, 9.0));
    }

    #[test]
    fn linux_compat_truncates_diff_to_whole_packets() {
        // cwnd 9, RTT 150 ms: Linux's diff is 9·50/100 = 4.5, truncated to 4 = beta → hold
        // (without truncation it would shrink). The paper's diff is 9·50/150 = 3 → hold.
        let rtt = Duration::from_millis(150);
        assert_eq!(linux_compat().diff_and_target(9.0, BASE, rtt), (4.0, 6.0));
        assert_eq!(
            VegasConfig::LINUX.diff_and_target(9.0, BASE, rtt),
            (3.0, 6.0)
        );
        let (mut v, mut path) = flow(8.0, 4.0, linux_compat());
        path.round_trip(&mut v, BASE);
        path.round_trip(&mut v, rtt);
        assert_eq!(v.cwnd(), 9.0);
        for _ in 0..5 {
            path.round_trip(&mut v, rtt);
            assert_eq!(v.cwnd(), 9.0);
        }
        // At 10 packets Linux's diff is exactly 5 > beta: shrink back to 9.
        let (mut v, mut path) = flow(9.0, 4.0, linux_compat());
        path.round_trip(&mut v, BASE);
        path.round_trip(&mut v, rtt);
        assert_eq!(v.cwnd(), 10.0);
        path.round_trip(&mut v, rtt);
        assert_eq!(v.cwnd(), 9.0);
    }

    #[test]
    fn on_a_bottleneck_the_flow_settles_with_alpha_to_beta_packets_queued() {
        // A 1000 packet/s bottleneck behind 100 ms of propagation delay: 100 packets fill the
        // pipe and each packet beyond them adds 1 ms of queueing to the round trip.
        let (mut v, mut path) = flow(10.0, INFINITE_SSTHRESH, VegasConfig::LINUX);
        let mut history = Vec::new();
        for _ in 0..150 {
            let queued = (path.next - path.una).saturating_sub(100);
            path.round_trip(&mut v, BASE + Duration::from_millis(queued));
            history.push(v.cwnd());
        }
        // Slow start doubles each RTT; the round in which 160 packets were in flight (60 queued,
        // RTT 160 ms) is judged one RTT later at cwnd 320: diff = 320·60/160 = 120 > gamma, so
        // cwnd = 320·100/160 + 1 = 201. Congestion avoidance then removes one packet per RTT
        // while more than beta = 4 are queued (at 105: diff = 105·5/105 = 5) and holds at 104,
        // where diff = 104·4/104 = 4.
        let mut expected = vec![20.0, 40.0, 80.0, 160.0, 320.0];
        expected.extend((104..=201).rev().map(f64::from));
        expected.resize(150, 104.0);
        assert_eq!(history, expected);
        assert_eq!(v.phase(), "congestion_avoidance");
    }

    #[test]
    fn slow_start_ends_when_more_than_gamma_packets_queue() {
        let (mut v, mut path) = flow(10.0, INFINITE_SSTHRESH, VegasConfig::LINUX);
        path.round_trip(&mut v, BASE);
        assert_eq!(v.cwnd(), 20.0, "slow start between decisions");
        let rtt = Duration::from_millis(125);
        path.round_trip(&mut v, rtt); // decision on BASE samples: keep doubling
        assert_eq!(v.cwnd(), 40.0);
        assert_eq!(v.phase(), "slow_start");
        // Decision at 40 packets with RTT 125 ms: diff = 40·25/125 = 8 > gamma.
        // Target = 40·100/125 = 32; cwnd = min(40, 32 + 1) = 33, ssthresh = 33.
        path.round_trip(&mut v, rtt);
        assert_eq!((v.cwnd(), v.ssthresh()), (33.0, 33.0));
        assert_eq!(v.phase(), "congestion_avoidance");
    }

    #[test]
    fn slow_start_ends_just_above_gamma() {
        // Decision at 40 packets with RTT 103.1 ms: diff = 40·3.1/103.1 = 1.20, above gamma = 1
        // by less than a packet: slow start ends there (not only at whole packets queued).
        let (mut v, mut path) = flow(10.0, INFINITE_SSTHRESH, VegasConfig::LINUX);
        path.round_trip(&mut v, BASE);
        let rtt = Duration::from_micros(103_100);
        path.round_trip(&mut v, rtt);
        assert_eq!(v.cwnd(), 40.0);
        path.round_trip(&mut v, rtt);
        assert!(v.cwnd() < 40.0, "{}", v.cwnd());
        assert_eq!(v.phase(), "congestion_avoidance");
    }

    #[test]
    fn slow_start_continues_while_at_most_gamma_packets_queue() {
        let (mut v, mut path) = flow(10.0, INFINITE_SSTHRESH, VegasConfig::LINUX);
        path.round_trip(&mut v, BASE);
        let rtt = Duration::from_millis(102);
        path.round_trip(&mut v, rtt);
        // Decision at 40 packets: diff = 40·2/102 = 0.78 ≤ gamma: keep doubling.
        path.round_trip(&mut v, rtt);
        assert_eq!(v.cwnd(), 80.0);
        assert_eq!(v.ssthresh(), INFINITE_SSTHRESH);
    }

    #[test]
    fn with_two_or_fewer_samples_per_round_it_behaves_as_reno() {
        let mut v = Vegas::new(Setup::default(), VegasConfig::LINUX);
        v.ssthresh = 5.0;
        // Two ACKs per round trip (a 10-packet window, each ACK covering 5 packets): the round's
        // first ACK decides with two samples, so Reno adds 5/cwnd there, and nothing happens on
        // the second. Vegas proper would add a whole packet (diff = 0) in the first two rounds
        // and shrink in the third (RTT 300 ms, diff = 6.7 > beta).
        let mut want = 10.0;
        for (round, rtt_ms) in [(0, 100), (1, 100), (2, 300), (3, 300)] {
            let rtt = Duration::from_millis(rtt_ms);
            for largest in [10 * round + 4, 10 * round + 9] {
                v.on_ack(&AckEvent {
                    largest_acked: largest,
                    next_packet: 10 * round + 10,
                    ..ack_rtt(Time::ZERO, 5, rtt)
                });
                if largest % 10 == 4 {
                    want += 5.0 / want;
                }
                assert_eq!(v.cwnd(), want, "round {round}, packet {largest}");
            }
        }
        // 10 → 10.5 → 10.976 → 11.432 → 11.869
        assert!((want - 11.869).abs() < 0.001, "{want}");
    }

    #[test]
    fn recovery_suspends_vegas_and_measurement_restarts_after_it() {
        let (mut v, mut path) = flow(20.0, 10.0, VegasConfig::LINUX);
        path.round_trip(&mut v, BASE);
        path.round_trip(&mut v, BASE);
        assert_eq!(v.cwnd(), 21.0);
        v.on_loss(&loss(true));
        assert_eq!((v.cwnd(), v.ssthresh()), (10.5, 10.5));
        v.on_ack(&AckEvent {
            in_recovery: true,
            largest_acked: u64::MAX,
            ..ack_rtt(Time::ZERO, 1, BASE)
        });
        assert_eq!(v.cwnd(), 10.5);
        assert_eq!(v.phase(), "recovery");
        // The first ACK after recovery only re-arms the round at the current next packet.
        v.on_ack(&AckEvent {
            largest_acked: 100,
            next_packet: 200,
            ..ack_rtt(Time::ZERO, 1, BASE)
        });
        assert_eq!(v.cwnd(), 10.5);
        assert_eq!(v.phase(), "congestion_avoidance");
        for pn in 101..=199 {
            v.on_ack(&AckEvent {
                largest_acked: pn,
                next_packet: 210,
                ..ack_rtt(Time::ZERO, 1, BASE)
            });
        }
        assert_eq!(
            v.cwnd(),
            10.5,
            "no decision before packet 200 is acknowledged"
        );
        v.on_ack(&AckEvent {
            largest_acked: 200,
            next_packet: 210,
            ..ack_rtt(Time::ZERO, 1, BASE)
        });
        assert_eq!(v.cwnd(), 11.5);
    }

    #[test]
    fn loss_halves_and_rto_restarts_from_one_packet() {
        let mut v = Vegas::new(
            Setup {
                initial_cwnd: 40.0,
                ..Setup::default()
            },
            VegasConfig::LINUX,
        );
        v.on_loss(&loss(true));
        v.on_loss(&loss(false));
        assert_eq!((v.cwnd(), v.ssthresh()), (20.0, 20.0));
        v.on_rto(&rto(1));
        assert_eq!((v.cwnd(), v.ssthresh()), (1.0, 10.0));
        v.on_rto(&rto(2));
        assert_eq!(v.ssthresh(), 10.0);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let (mut v, _) = flow(10.0, INFINITE_SSTHRESH, VegasConfig::LINUX);
        for pn in 0..5 {
            v.on_ack(&AckEvent {
                cwnd_limited: false,
                largest_acked: pn,
                next_packet: 10,
                ..ack(1)
            });
        }
        assert_eq!(v.cwnd(), 10.0);
    }

    #[test]
    fn parameters_and_presets() {
        let spec: CcSpec = "vegas:preset=ns2".parse().unwrap();
        assert_eq!(
            (
                spec.params.f64("alpha"),
                spec.params.f64("beta"),
                spec.params.f64("gamma")
            ),
            (1.0, 3.0, 1.0)
        );
        let spec: CcSpec = "vegas:linux_compat=true,alpha=3,beta=6".parse().unwrap();
        assert!(spec.params.bool("linux_compat"));
        let e = "vegas:alpha=5".parse::<CcSpec>().unwrap_err().to_string();
        assert!(e.contains("must not exceed beta"), "{e}");
        assert!("vegas:gamma=-1".parse::<CcSpec>().is_err());
        assert!("vegas:preset=linux".parse::<CcSpec>().is_err());
    }

    proptest::proptest! {
        #[test]
        fn window_stays_finite_and_within_bounds(
            events in arbitrary_events(400),
            initial in 1.0f64..100_000.0,
            linux_compat in proptest::bool::ANY,
        ) {
            let setup = Setup { initial_cwnd: initial, max_cwnd: 50_000.0, ..Setup::default() };
            let mut v = Vegas::new(setup, VegasConfig { linux_compat, ..VegasConfig::LINUX });
            for ev in &events {
                ev.apply(&mut v);
                proptest::prop_assert!(
                    v.cwnd().is_finite() && v.cwnd() >= 1.0 && v.cwnd() <= 50_000.0,
                    "cwnd {} after {:?}", v.cwnd(), ev
                );
                proptest::prop_assert!(v.ssthresh() >= 2.0, "ssthresh {}", v.ssthresh());
            }
        }
    }
}
