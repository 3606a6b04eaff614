//! CUBIC: window growth as a cubic function of the time since the last loss (RFC 9438), with
//! HyStart slow-start exit, as Linux runs it (`tcp_cubic.c`, the default congestion control).
//!
//! Reno grows by one packet per round trip, so on a long fat path it takes hours to refill a
//! window after a loss, and its growth depends on the RTT. CUBIC makes growth a function of real
//! time instead. At a loss it remembers the window it had, `W_max`, and reduces to `β·W_max`
//! (β = 0.7). It then steers the window along
//!
//! ```text
//!     W_cubic(t) = C·(t − K)³ + W_max,    K = ∛(W_max·(1 − β) / C),    C = 0.4
//! ```
//!
//! where `t` is the time since the first ACK after the reduction (the "epoch"). `W_cubic(0)` is
//! the reduced window and `W_cubic(K) = W_max`: the curve rises fast, flattens as it approaches
//! the window where the last loss happened (concave region), stays there for a while, and then
//! probes beyond it, slowly at first and faster and faster (convex region). Each ACK moves the
//! window toward `W_cubic(t + RTT)`, the target one round trip ahead: with `target > cwnd` the
//! window grows by `acked / cnt` where `cnt = cwnd / (target − cwnd)`, i.e. by `target − cwnd`
//! over one window of ACKs. `cnt` is never below 2, so the window grows at most 1.5× per RTT.
//!
//! *Reno-friendly region* (RFC 9438 §4.3). At small BDPs the cubic curve is slower than Reno;
//! CUBIC then follows an estimate of what Reno with the same β would have: `W_est` starts at the
//! epoch's window and grows by `α·acked/cwnd` with `α = 3(1 − β)/(1 + β)` (0.53 for β = 0.7), the
//! additive increase that gives AIMD(α, β) Reno's average throughput. When `W_est > cwnd`, the
//! window grows at least fast enough to reach `W_est` within a round trip.
//!
//! *Fast convergence* (RFC 9438 §4.7). A loss below the previous `W_max` suggests a new flow
//! has arrived; CUBIC then remembers `W_max = cwnd·(1 + β)/2` instead of `cwnd`, releasing
//! bandwidth sooner.
//!
//! *HyStart* (Ha & Rhee, "Taming the Elephants: New TCP Slow Start", Computer Networks 2011;
//! Linux `hystart_update`) leaves slow start before it overflows the bottleneck queue. From a
//! window of `hystart_low_window` packets it watches each round trip (a round ends when the
//! first packet sent after it began is acknowledged) for either
//!   * an *ACK train*: ACKs arriving at most `hystart_ack_delta` apart have kept coming for more
//!     than half the minimum RTT since the round began, so the window already covers the path's
//!     BDP; or
//!   * a *delay increase*: the round's minimum RTT, over at least 8 samples, exceeds
//!     `delay_min + clamp(delay_min/8, 4 ms, 16 ms)`, so a queue is building.
//!
//! Either sets `ssthresh = cwnd`, ending slow start without a loss.
//!
//! Sources: RFC 9438 §4 (the curve, §4.2-4.7); Linux `net/ipv4/tcp_cubic.c` (`bictcp_update`,
//! `cubictcp_recalc_ssthresh`, `hystart_update`, `cubictcp_acked`, `cubictcp_cwnd_event`).
//! Behaviour taken from Linux rather than the RFC:
//! * `t` includes the minimum RTT (`delay_min`), i.e. the target is `W_cubic(t + RTT)` with the
//!   minimum rather than the smoothed RTT;
//! * before the first loss (`W_max` unknown) growth after slow start is at least 5% per RTT
//!   (`cnt ≤ 20`);
//! * RTT samples in the first second of an epoch are ignored ("right after fast recovery");
//! * `α` stays `3(1 − β)/(1 + β)` (RFC 9438 switches it to 1 once `W_est` passes the window at
//!   the last reduction);
//! * after a retransmission timeout all state, including `W_max` and `delay_min`, is forgotten,
//!   and the window restarts from one packet in slow start;
//! * after an idle period (nothing in flight) the epoch start moves forward by the idle time so
//!   the curve does not jump ahead (`CA_EVENT_TX_START`).
//!
//! Deviations from Linux:
//! * Floating point throughout. Linux counts time in 1/1024 s units and jiffies, computes K with a
//!   64-entry cube-root table plus one Newton step (about 0.2% error) and recomputes `cnt` at
//!   most once per jiffy, and only every 1/32 s while cwnd is unchanged; here `cnt` is exact and
//!   recomputed on every ACK. The `linux` preset gives Linux's constants (β = 717/1024,
//!   C = 41·10/1024 = 0.4004), not its rounding.
//! * The Reno estimate grows by `α·acked/cwnd` continuously; Linux adds a whole packet every
//!   `cwnd·⌊8(1024+717)/3/(1024−717)⌋/8 = 1.875·cwnd` ACKs (α = 0.533).
//! * The ACK-train threshold is Linux's: `delay_min / 2` for an unpaced socket and `delay_min`
//!   when the transport paces (`on_transport_pacing`; Linux: `sk_pacing_status`, set by fq or
//!   internal pacing), because paced slow start (2·cwnd/srtt) spreads a round's packets, and so
//!   its ACKs, over half an RTT by itself: halving would end slow start at about a fifth of the
//!   BDP (156 packets of 833 on a 100 Mb/s × 100 ms path, measured in the simulator with the
//!   unpaced threshold). Linux's TSO/GRO cushion (`hystart_ack_delay`, at most 1 ms, added before halving)
//!   is left out.
//! * As in the Reno template, the window is set to the new threshold at once on loss; the
//!   transport's recovery (PRR in Linux) decides what is sent meanwhile.

use crate::controller::{CongestionControl, Setup, INFINITE_SSTHRESH};
use crate::event::{AckEvent, LossEvent, RtoEvent, SentEvent};
use crate::params::{ParamError, ParamKind, ParamSpec, Params, Preset, Value};
use crate::registry::Algorithm;
use crate::time::Time;
use crate::window::{
    additive_increase, in_slow_start, reduce_to_threshold, restart_after_timeout, slow_start,
    timeout_lowers_threshold,
};
use std::time::Duration;

/// CUBIC's parameters: β, C, fast convergence, the Reno-friendly region and HyStart.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "beta",
        kind: ParamKind::Float {
            min: 0.05,
            max: 0.95,
        },
        default: Value::Float(0.7),
        unit: "",
        help: "multiplicative-decrease factor: the window after a loss is beta × cwnd",
    },
    ParamSpec {
        name: "c",
        kind: ParamKind::Float {
            min: 0.001,
            max: 100.0,
        },
        default: Value::Float(0.4),
        unit: "packets/s³",
        help: "scaling constant C of the cubic curve C·(t − K)³ + W_max",
    },
    ParamSpec {
        name: "fast_convergence",
        kind: ParamKind::Bool,
        default: Value::Bool(true),
        unit: "",
        help: "after a loss below the previous W_max, remember W_max = cwnd·(1 + beta)/2",
    },
    ParamSpec {
        name: "tcp_friendliness",
        kind: ParamKind::Bool,
        default: Value::Bool(true),
        unit: "",
        help: "grow at least as fast as Reno with the same beta would (RFC 9438 §4.3)",
    },
    ParamSpec {
        name: "hystart",
        kind: ParamKind::Bool,
        default: Value::Bool(true),
        unit: "",
        help: "leave slow start on an ACK train or an RTT increase (HyStart)",
    },
    ParamSpec {
        name: "hystart_low_window",
        kind: ParamKind::Int {
            min: 2,
            max: 1_000_000_000,
        },
        default: Value::Int(16),
        unit: "packets",
        help: "HyStart is active only from this window on",
    },
    ParamSpec {
        name: "hystart_ack_delta",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.002),
        unit: "s",
        help: "ACKs at most this far apart count as one ACK train",
    },
];

/// `linux`: Linux's fixed-point β and C.
pub const PRESETS: &[Preset] = &[Preset {
    name: "linux",
    help: "Linux tcp_cubic.c constants: beta = 717/1024, C = bic_scale 41 × 10 / 1024",
    values: &[
        ("beta", Value::Float(717.0 / 1024.0)),
        ("c", Value::Float(410.0 / 1024.0)),
    ],
}];

/// CUBIC as the registry lists it (`cubic`).
pub const ALGORITHM: Algorithm = Algorithm {
    name: "cubic",
    summary: "window follows a cubic curve of time since the last loss; HyStart slow start",
    source: "RFC 9438; Linux tcp_cubic.c",
    params: PARAMS,
    presets: PRESETS,
    build,
};

fn build(p: &Params, setup: &Setup) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Cubic::new(*setup, CubicConfig::from_params(p))))
}

/// HyStart needs this many RTT samples in a round before judging its minimum (Linux
/// `HYSTART_MIN_SAMPLES`).
const HYSTART_MIN_SAMPLES: u32 = 8;
/// Bounds of the delay-increase threshold `delay_min / 8` (Linux `HYSTART_DELAY_MIN/MAX`).
const HYSTART_DELAY_MIN: Duration = Duration::from_millis(4);
const HYSTART_DELAY_MAX: Duration = Duration::from_millis(16);
/// RTT samples this soon after an epoch starts are ignored: they still carry the queue that
/// caused the loss.
const EPOCH_SETTLE: Duration = Duration::from_secs(1);
/// Before the first loss, grow at least 1/20 = 5% per RTT after slow start.
const CNT_BEFORE_FIRST_LOSS: f64 = 20.0;
/// At most one packet per two acknowledged: 1.5× per RTT.
const MIN_CNT: f64 = 2.0;

/// CUBIC's parameters, typed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CubicConfig {
    /// Multiplicative decrease: the window after a loss is `beta × cwnd`.
    pub beta: f64,
    /// The curve's scaling constant C, in packets/s³.
    pub c: f64,
    /// After a loss below the previous `W_max`, remember `W_max = cwnd·(1 + β)/2` (RFC 9438 §4.7).
    pub fast_convergence: bool,
    /// Grow at least as fast as Reno with the same β would (RFC 9438 §4.3).
    pub tcp_friendliness: bool,
    /// Leave slow start on an ACK train or an RTT increase (HyStart).
    pub hystart: bool,
    /// The window, in packets, from which HyStart is active.
    pub hystart_low_window: f64,
    /// ACKs at most this far apart count as one ACK train.
    pub hystart_ack_delta: Duration,
}

impl CubicConfig {
    /// The typed values of validated `cubic` parameters.
    pub fn from_params(p: &Params) -> CubicConfig {
        CubicConfig {
            beta: p.f64("beta"),
            c: p.f64("c"),
            fast_convergence: p.bool("fast_convergence"),
            tcp_friendliness: p.bool("tcp_friendliness"),
            hystart: p.bool("hystart"),
            hystart_low_window: p.i64("hystart_low_window") as f64,
            hystart_ack_delta: Duration::from_secs_f64(p.f64("hystart_ack_delta")),
        }
    }

    /// The Reno-friendly additive increase per RTT, `3(1 − β)/(1 + β)`.
    pub fn alpha(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }
}

impl Default for CubicConfig {
    /// The RFC 9438 values (also the registry defaults).
    fn default() -> CubicConfig {
        CubicConfig {
            beta: 0.7,
            c: 0.4,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_low_window: 16.0,
            hystart_ack_delta: Duration::from_millis(2),
        }
    }
}

/// `K = ∛((W_max − cwnd)/C)`: seconds for the curve to climb from `cwnd` back to `W_max`.
pub fn cubic_k(w_max: f64, cwnd: f64, c: f64) -> f64 {
    ((w_max - cwnd).max(0.0) / c).cbrt()
}

/// One congestion-avoidance epoch: the curve `origin + C·(t − K)³` from `start` on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Epoch {
    /// The epoch's start: the first congestion-avoidance ACK after a reduction, moved forward by
    /// idle periods.
    pub start: Time,
    /// K, in seconds.
    pub k: f64,
    /// The curve's plateau: W_max, or the window at the epoch start if that is already higher.
    pub origin: f64,
}

impl Epoch {
    /// `W_cubic(t)` for `t` seconds since the epoch start.
    pub fn w_cubic(&self, c: f64, t: f64) -> f64 {
        self.origin + c * (t - self.k).powi(3)
    }
}

/// HyStart's per-round state (Linux `round_start`, `end_seq`, `last_ack`, `curr_rtt`,
/// `sample_cnt`, `found`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct HyStart {
    found: bool,
    round_start: Time,
    /// The round ends when this packet is acknowledged; `None` before the first round.
    end_packet: Option<u64>,
    last_ack: Time,
    /// Minimum RTT in this round.
    curr_rtt: Duration,
    samples: u32,
}

impl HyStart {
    const fn new() -> HyStart {
        HyStart {
            found: false,
            round_start: Time::ZERO,
            end_packet: None,
            last_ack: Time::ZERO,
            curr_rtt: Duration::MAX,
            samples: 0,
        }
    }

    fn start_round(&mut self, now: Time, next_packet: u64) {
        self.round_start = now;
        self.last_ack = now;
        self.end_packet = Some(next_packet);
        self.curr_rtt = Duration::MAX;
        self.samples = 0;
    }
}

/// CUBIC's state.
#[derive(Debug, Clone)]
pub struct Cubic {
    setup: Setup,
    cfg: CubicConfig,
    cwnd: f64,
    ssthresh: f64,
    /// The window before the last reduction (Linux `last_max_cwnd`); 0 before the first loss.
    w_max: f64,
    /// The current epoch; `None` until the first congestion-avoidance ACK after a reduction.
    epoch: Option<Epoch>,
    /// The Reno-friendly estimate W_est (Linux `tcp_cwnd`).
    w_est: f64,
    /// Packets to acknowledge per one-packet increase (Linux `ca->cnt`).
    cnt: f64,
    /// Minimum RTT seen (Linux `delay_min`).
    delay_min: Option<Duration>,
    hystart: HyStart,
    /// When a data packet was last sent (Linux `lsndtime`), to detect idle restarts.
    last_send: Option<Time>,
    /// Which part of the curve the last update used, for `phase()`.
    region: &'static str,
    /// The transport paces (`on_transport_pacing`): the ACK-train threshold is not halved.
    paced: bool,
}

impl Cubic {
    /// A controller in slow start with the initial window and no loss history.
    pub fn new(setup: Setup, cfg: CubicConfig) -> Cubic {
        Cubic {
            setup,
            cfg,
            cwnd: setup.clamp_cwnd(setup.initial_cwnd),
            ssthresh: INFINITE_SSTHRESH,
            w_max: 0.0,
            epoch: None,
            w_est: 0.0,
            cnt: 0.0,
            delay_min: None,
            hystart: HyStart::new(),
            last_send: None,
            region: "congestion_avoidance",
            paced: false,
        }
    }

    /// W_max, the window remembered from the last loss (0 before any).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// The current epoch, if congestion avoidance has started since the last reduction.
    pub fn epoch(&self) -> Option<Epoch> {
        self.epoch
    }

    /// The Reno-friendly estimate W_est of the current epoch.
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    /// Packets acknowledged per one-packet increase, as last computed.
    pub fn cnt(&self) -> f64 {
        self.cnt
    }

    /// The minimum RTT seen.
    pub fn delay_min(&self) -> Option<Duration> {
        self.delay_min
    }

    /// RTT bookkeeping and HyStart (Linux `cubictcp_acked`).
    fn on_rtt_sample(&mut self, ev: &AckEvent, rtt: Duration) {
        if let Some(e) = self.epoch {
            if ev.now.saturating_since(e.start) < EPOCH_SETTLE {
                return;
            }
        }
        let delay = rtt.max(Duration::from_micros(1));
        let delay_min = match self.delay_min {
            Some(d) if d <= delay => d,
            _ => delay,
        };
        self.delay_min = Some(delay_min);
        if self.cfg.hystart && !self.hystart.found && in_slow_start(self.cwnd, self.ssthresh) {
            self.hystart_update(ev, delay, delay_min);
        }
    }

    /// HyStart's two exit tests (Linux `hystart_update`).
    fn hystart_update(&mut self, ev: &AckEvent, delay: Duration, delay_min: Duration) {
        let h = &mut self.hystart;
        if !matches!(h.end_packet, Some(end) if ev.largest_acked < end) {
            h.start_round(ev.now, ev.next_packet);
        }
        if self.cwnd < self.cfg.hystart_low_window {
            return;
        }
        // ACK train: closely spaced ACKs have kept arriving for over half the minimum RTT.
        if ev.now.saturating_since(h.last_ack) <= self.cfg.hystart_ack_delta {
            h.last_ack = ev.now;
            // Linux halves the threshold only for an unpaced socket: paced slow start spreads
            // a round's packets, and so its ACKs, over half an RTT by itself.
            let threshold = if self.paced { delay_min } else { delay_min / 2 };
            if ev.now.saturating_since(h.round_start) > threshold {
                h.found = true;
            }
        }
        // Delay increase: this round's minimum RTT is clearly above the path's.
        h.curr_rtt = h.curr_rtt.min(delay);
        if h.samples < HYSTART_MIN_SAMPLES {
            h.samples += 1;
        } else if h.curr_rtt
            > delay_min + (delay_min / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)
        {
            h.found = true;
        }
        if h.found {
            self.ssthresh = self.cwnd;
        }
    }

    /// Compute `cnt` for this ACK (Linux `bictcp_update`).
    fn update(&mut self, now: Time, acked: f64) {
        let cwnd = self.cwnd;
        let c = self.cfg.c;
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                // A new epoch: the curve starts at this window and plateaus at W_max.
                self.w_est = cwnd;
                let e = if self.w_max <= cwnd {
                    Epoch {
                        start: now,
                        k: 0.0,
                        origin: cwnd,
                    }
                } else {
                    Epoch {
                        start: now,
                        k: cubic_k(self.w_max, cwnd, c),
                        origin: self.w_max,
                    }
                };
                self.epoch = Some(e);
                e
            }
        };
        // Aim one (minimum) RTT ahead.
        let t = now.saturating_since(epoch.start) + self.delay_min.unwrap_or_default();
        let t = t.as_secs_f64();
        let target = epoch.w_cubic(c, t);
        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            100.0 * cwnd
        };
        self.region = if t < epoch.k { "concave" } else { "convex" };
        if self.w_max == 0.0 {
            self.cnt = self.cnt.min(CNT_BEFORE_FIRST_LOSS);
        }
        if self.cfg.tcp_friendliness {
            self.w_est += self.cfg.alpha() * acked / cwnd;
            if self.w_est > cwnd {
                let reno_cnt = cwnd / (self.w_est - cwnd);
                if reno_cnt < self.cnt {
                    self.cnt = reno_cnt;
                    self.region = "reno_friendly";
                }
            }
        }
        self.cnt = self.cnt.max(MIN_CNT);
    }

    /// Forget everything learned (Linux `bictcp_reset` + `bictcp_hystart_reset` on RTO).
    fn reset(&mut self) {
        self.w_max = 0.0;
        self.epoch = None;
        self.w_est = 0.0;
        self.cnt = 0.0;
        self.delay_min = None;
        self.hystart = HyStart::new();
    }

    /// The threshold after a loss, before the floor of 2; also sets W_max (Linux
    /// `cubictcp_recalc_ssthresh`).
    fn recalc_ssthresh(&mut self) -> f64 {
        self.epoch = None;
        self.region = "congestion_avoidance";
        self.w_max = if self.cwnd < self.w_max && self.cfg.fast_convergence {
            self.cwnd * (1.0 + self.cfg.beta) / 2.0
        } else {
            self.cwnd
        };
        self.cwnd * self.cfg.beta
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_sent(&mut self, ev: &SentEvent) {
        // Restarting from idle: shift the epoch by the idle time so the curve resumes where it
        // was instead of jumping ahead (Linux CA_EVENT_TX_START).
        if ev.bytes_in_flight <= u64::from(ev.bytes) {
            if let (Some(last), Some(e)) = (self.last_send, self.epoch.as_mut()) {
                e.start = (e.start + ev.now.saturating_since(last)).min(ev.now);
            }
        }
        self.last_send = Some(ev.now);
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if let Some(rtt) = ev.rtt {
            self.on_rtt_sample(ev, rtt);
        }
        if ev.in_recovery || !ev.cwnd_limited {
            return;
        }
        let mut acked = ev.acked_packets as f64;
        if in_slow_start(self.cwnd, self.ssthresh) {
            acked = slow_start(&mut self.cwnd, self.ssthresh, acked);
            if acked <= 0.0 {
                self.cwnd = self.setup.clamp_cwnd(self.cwnd);
                return;
            }
        }
        self.update(ev.now, acked);
        let cnt = self.cnt;
        additive_increase(&mut self.cwnd, cnt, acked);
        self.cwnd = self.setup.clamp_cwnd(self.cwnd);
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        if ev.first_in_window {
            let t = self.recalc_ssthresh();
            reduce_to_threshold(&self.setup, &mut self.cwnd, &mut self.ssthresh, t);
        }
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        let t = timeout_lowers_threshold(ev.consecutive).then(|| self.recalc_ssthresh());
        self.reset();
        restart_after_timeout(&self.setup, &mut self.cwnd, &mut self.ssthresh, t, 1.0);
    }

    fn on_transport_pacing(&mut self, paced: bool) {
        self.paced = paced;
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
            self.region
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{ack, ack_rtt, loss, rto};

    fn setup(initial_cwnd: f64) -> Setup {
        Setup {
            initial_cwnd,
            ..Setup::default()
        }
    }

    fn config(tcp_friendliness: bool) -> CubicConfig {
        CubicConfig {
            tcp_friendliness,
            hystart: false,
            ..CubicConfig::default()
        }
    }

    /// One round trip of single-packet ACKs, evenly spread over `rtt`, each carrying an RTT
    /// sample of `rtt`. Returns the time after the round.
    fn round_trip(cc: &mut Cubic, now: Time, rtt: Duration) -> Time {
        let n = cc.cwnd().ceil() as u32;
        let spacing = rtt / n;
        let mut t = now;
        for _ in 0..n {
            cc.on_ack(&ack_rtt(t, 1, rtt));
            t += spacing;
        }
        now + rtt
    }

    #[test]
    fn k_and_the_curve_match_rfc_9438() {
        // W_max = 100, beta = 0.7, C = 0.4: K = cbrt(100 · 0.3 / 0.4) = cbrt(75) = 4.2172 s.
        assert!((cubic_k(100.0, 70.0, 0.4) - 4.217_163).abs() < 1e-6);
        let mut cc = Cubic::new(setup(100.0), config(true));
        cc.on_loss(&loss(true));
        assert_eq!((cc.cwnd(), cc.ssthresh(), cc.w_max()), (70.0, 70.0, 100.0));
        assert_eq!(
            cc.epoch(),
            None,
            "the epoch starts with the first ACK after the loss"
        );
        let t0 = Time::from_millis(10_000);
        cc.on_ack(&AckEvent { now: t0, ..ack(1) });
        let e = cc.epoch().unwrap();
        assert_eq!((e.start, e.origin), (t0, 100.0));
        assert!((e.k - 4.217_163).abs() < 1e-6, "K = {}", e.k);
        assert!(
            (e.w_cubic(0.4, 0.0) - 70.0).abs() < 1e-9,
            "W(0) = beta · W_max"
        );
        assert!((e.w_cubic(0.4, e.k) - 100.0).abs() < 1e-12, "W(K) = W_max");
        // W(2) = 100 − 0.4 · 2.2172³ = 95.640; W(8) = 100 + 0.4 · 3.7828³ = 121.652.
        assert!((e.w_cubic(0.4, 2.0) - 95.640).abs() < 1e-3);
        assert!((e.w_cubic(0.4, 8.0) - 121.652).abs() < 1e-3);
    }

    #[test]
    fn growth_is_concave_below_w_max_and_convex_above() {
        let mut cc = Cubic::new(setup(100.0), config(false));
        cc.on_loss(&loss(true));
        let rtt = Duration::from_millis(100);
        let start = Time::from_millis(1_000);
        let mut now = start;
        let mut per_second = vec![cc.cwnd()];
        for i in 1..=90 {
            now = round_trip(&mut cc, now, rtt);
            if i % 10 == 0 {
                per_second.push(cc.cwnd());
            }
            if i == 42 {
                // t = 4.2 s ≈ K: the window is back at W_max = 100 and barely moving.
                assert!((cc.cwnd() - 100.0).abs() < 1.0, "cwnd at K: {}", cc.cwnd());
            }
        }
        let inc: Vec<f64> = per_second.windows(2).map(|w| w[1] - w[0]).collect();
        // Concave: each second adds less than the one before, until K = 4.2 s …
        for s in 1..4 {
            assert!(inc[s] < inc[s - 1], "concave at {s} s: {inc:?}");
        }
        // … then convex: each second adds more than the one before.
        for s in 5..9 {
            assert!(inc[s] > inc[s - 1], "convex at {s} s: {inc:?}");
        }
        // The window tracks the curve W(t) = 100 + 0.4 (t − 4.217)³ within a few packets
        // (the target is one RTT ahead, reached over the next RTT).
        let e = cc.epoch().unwrap();
        for (s, w) in per_second.iter().enumerate().skip(1) {
            let curve = e.w_cubic(0.4, s as f64);
            assert!(
                (w - curve).abs() < 2.5,
                "t = {s} s: cwnd {w} vs W(t) {curve}"
            );
        }
        assert_eq!(cc.phase(), "convex");
    }

    #[test]
    fn fast_convergence_lowers_w_max_after_a_loss_below_it() {
        for (fast, expected) in [(true, 70.0 * 1.7 / 2.0), (false, 70.0)] {
            let mut cc = Cubic::new(
                setup(100.0),
                CubicConfig {
                    fast_convergence: fast,
                    ..config(true)
                },
            );
            cc.on_loss(&loss(true));
            assert_eq!(cc.w_max(), 100.0, "first loss: W_max is the window");
            cc.on_loss(&loss(true));
            // The second loss comes at cwnd = 70 < W_max = 100.
            assert!((cc.w_max() - expected).abs() < 1e-12, "fast={fast}");
            assert!((cc.cwnd() - 49.0).abs() < 1e-12);
        }
    }

    #[test]
    fn growth_is_capped_at_one_and_a_half_per_rtt() {
        let mut cc = Cubic::new(setup(1000.0), config(false));
        cc.on_loss(&loss(true));
        let t0 = Time::from_millis(1_000);
        cc.on_ack(&AckEvent { now: t0, ..ack(1) });
        let w0 = cc.cwnd();
        // 30 s later the curve is far above: W(30) = 1000 + 0.4 (30 − 9.086)³ ≈ 4659 packets,
        // which the window would reach in one round trip if uncapped.
        let late = t0 + Duration::from_secs(30);
        assert!(cc.epoch().unwrap().w_cubic(0.4, 30.0) > 4000.0);
        for _ in 0..700 {
            cc.on_ack(&AckEvent {
                now: late,
                ..ack(1)
            });
            assert_eq!(cc.cnt(), 2.0, "cnt never goes below 2");
        }
        // 700 ACKs (one window) add 700 / 2 = 350 packets: 1.5×.
        assert!(
            (cc.cwnd() / w0 - 1.5).abs() < 1e-6,
            "{} → {}",
            w0,
            cc.cwnd()
        );
    }

    #[test]
    fn reno_friendly_region_dominates_at_small_bdp() {
        // W_max = 20 packets at 10 ms: K = cbrt(6 / 0.4) = 2.47 s = 247 RTTs. The cubic curve
        // only reaches W(0.5 s) = 20 − 0.4 · 1.97³ = 16.95 packets after 50 RTTs, while Reno
        // with beta = 0.7 adds alpha = 3 · 0.3 / 1.7 = 0.529 packets per RTT: 14 + 26.5 = 40.5.
        let rtt = Duration::from_millis(10);
        let run = |friendly: bool| {
            let mut cc = Cubic::new(setup(20.0), config(friendly));
            cc.on_loss(&loss(true));
            let mut now = Time::from_millis(1_000);
            for _ in 0..50 {
                now = round_trip(&mut cc, now, rtt);
            }
            cc
        };
        let cubic_only = run(false);
        assert!(
            (cubic_only.cwnd() - 16.95).abs() < 1.0,
            "cubic alone: {}",
            cubic_only.cwnd()
        );
        let friendly = run(true);
        let alpha = CubicConfig::default().alpha();
        assert!((alpha - 0.529_41).abs() < 1e-5);
        assert!(
            (friendly.cwnd() - (14.0 + 50.0 * alpha)).abs() < 2.0,
            "Reno-friendly: {}",
            friendly.cwnd()
        );
        assert_eq!(friendly.phase(), "reno_friendly");
        assert!(friendly.w_est() >= friendly.cwnd());
    }

    /// One HyStart round: `n` single-packet ACKs `spacing` apart acknowledging packets
    /// `*base ..`, each with RTT sample `rtt`; the next round's packets start at `*base + n`.
    fn hystart_round(
        cc: &mut Cubic,
        now: &mut Time,
        base: &mut u64,
        n: u64,
        spacing: Duration,
        rtt: Duration,
    ) {
        for i in 0..n {
            cc.on_ack(&AckEvent {
                largest_acked: *base + i,
                next_packet: *base + n,
                ..ack_rtt(*now, 1, rtt)
            });
            if cc.phase() != "slow_start" {
                return;
            }
            *now += spacing;
        }
        *base += n;
    }

    fn hystart_cubic() -> Cubic {
        Cubic::new(
            setup(16.0),
            CubicConfig {
                hystart: true,
                ..CubicConfig::default()
            },
        )
    }

    #[test]
    fn hystart_leaves_slow_start_when_rtt_rises_above_the_threshold() {
        // delay_min = 100 ms: threshold 100 ms + clamp(100/8 = 12.5 ms, 4, 16) = 112.5 ms.
        // ACKs 3 ms apart never form an ACK train (delta 2 ms), so only the delay test acts.
        let spacing = Duration::from_millis(3);
        let mut cc = hystart_cubic();
        let (mut now, mut base) = (Time::from_millis(5), 0);
        hystart_round(
            &mut cc,
            &mut now,
            &mut base,
            16,
            spacing,
            Duration::from_millis(100),
        );
        assert_eq!((cc.cwnd(), cc.phase()), (32.0, "slow_start"));
        assert_eq!(cc.delay_min(), Some(Duration::from_millis(100)));
        hystart_round(
            &mut cc,
            &mut now,
            &mut base,
            32,
            spacing,
            Duration::from_millis(113),
        );
        // The first 8 samples of the round are only collected; the 9th triggers the exit
        // with cwnd = 32 + 8.
        assert_eq!(cc.ssthresh(), 40.0);
        assert_ne!(cc.phase(), "slow_start");
    }

    #[test]
    fn hystart_stays_in_slow_start_when_rtt_rise_is_below_the_threshold() {
        let spacing = Duration::from_millis(3);
        let mut cc = hystart_cubic();
        let (mut now, mut base) = (Time::from_millis(5), 0);
        hystart_round(
            &mut cc,
            &mut now,
            &mut base,
            16,
            spacing,
            Duration::from_millis(100),
        );
        hystart_round(
            &mut cc,
            &mut now,
            &mut base,
            32,
            spacing,
            Duration::from_millis(112),
        );
        assert_eq!(cc.cwnd(), 64.0);
        assert_eq!(
            (cc.ssthresh(), cc.phase()),
            (INFINITE_SSTHRESH, "slow_start")
        );
    }

    #[test]
    fn hystart_ack_train_ends_slow_start_after_half_the_min_rtt() {
        // ACKs 1 ms apart with delay_min = 100 ms: the train exits once it spans > 50 ms.
        let spacing = Duration::from_millis(1);
        let rtt = Duration::from_millis(100);
        let mut cc = hystart_cubic();
        let (mut now, mut base) = (Time::from_millis(5), 0);
        hystart_round(&mut cc, &mut now, &mut base, 16, spacing, rtt);
        now += Duration::from_millis(85);
        hystart_round(&mut cc, &mut now, &mut base, 32, spacing, rtt);
        assert_eq!(cc.phase(), "slow_start", "a 31 ms train is too short");
        now += Duration::from_millis(69);
        hystart_round(&mut cc, &mut now, &mut base, 64, spacing, rtt);
        // The ACK 51 ms into the third round (cwnd 64 + 51) ends slow start.
        assert_eq!(cc.ssthresh(), 115.0);
        assert_ne!(cc.phase(), "slow_start");
    }

    #[test]
    fn a_paced_transport_needs_a_train_of_a_whole_min_rtt() {
        // The same rounds: unpaced, the third round's train ends slow start at 51 ms; paced
        // (Linux: sk_pacing_status set), the threshold is the whole 100 ms, so a 64-ACK train
        // 1 ms apart is too short, and a 128-ACK round ends slow start 101 ms in.
        let spacing = Duration::from_millis(1);
        let rtt = Duration::from_millis(100);
        let mut cc = hystart_cubic();
        cc.on_transport_pacing(true);
        let (mut now, mut base) = (Time::from_millis(5), 0);
        hystart_round(&mut cc, &mut now, &mut base, 16, spacing, rtt);
        now += Duration::from_millis(85);
        hystart_round(&mut cc, &mut now, &mut base, 32, spacing, rtt);
        now += Duration::from_millis(69);
        hystart_round(&mut cc, &mut now, &mut base, 64, spacing, rtt);
        assert_eq!(
            cc.phase(),
            "slow_start",
            "a 63 ms train is too short when paced"
        );
        now += Duration::from_millis(37);
        hystart_round(&mut cc, &mut now, &mut base, 128, spacing, rtt);
        assert_eq!(cc.ssthresh(), 128.0 + 101.0);
        assert_ne!(cc.phase(), "slow_start");
    }

    #[test]
    fn hystart_waits_for_the_low_window() {
        let mut cc = Cubic::new(
            setup(4.0),
            CubicConfig {
                hystart: true,
                ..CubicConfig::default()
            },
        );
        let (mut now, mut base) = (Time::from_millis(5), 0);
        let spacing = Duration::from_millis(3);
        hystart_round(
            &mut cc,
            &mut now,
            &mut base,
            4,
            spacing,
            Duration::from_millis(100),
        );
        hystart_round(
            &mut cc,
            &mut now,
            &mut base,
            8,
            spacing,
            Duration::from_millis(200),
        );
        assert_eq!((cc.cwnd(), cc.phase()), (16.0, "slow_start"));
    }

    #[test]
    fn rto_forgets_everything_and_restarts_slow_start() {
        let mut cc = Cubic::new(setup(100.0), config(true));
        cc.on_ack(&ack_rtt(Time::from_millis(1), 1, Duration::from_millis(50)));
        cc.on_loss(&loss(true));
        cc.on_ack(&AckEvent {
            now: Time::from_millis(2),
            ..ack(1)
        });
        assert!(cc.epoch().is_some());
        let w = cc.cwnd();
        cc.on_rto(&rto(1));
        assert!((cc.ssthresh() - (w * 0.7).max(2.0)).abs() < 1e-9);
        assert_eq!((cc.cwnd(), cc.w_max(), cc.epoch()), (1.0, 0.0, None));
        assert_eq!((cc.delay_min(), cc.phase()), (None, "slow_start"));
        let ss = cc.ssthresh();
        cc.on_rto(&rto(2));
        assert_eq!(cc.ssthresh(), ss, "a backed-off RTO does not reduce again");
    }

    #[test]
    fn idle_restart_shifts_the_epoch_by_the_idle_time() {
        let mut cc = Cubic::new(setup(100.0), config(true));
        cc.on_loss(&loss(true));
        let t0 = Time::from_millis(1_000);
        cc.on_ack(&AckEvent { now: t0, ..ack(1) });
        let sent = |now: Time, in_flight: u64| SentEvent {
            now,
            packet_number: 0,
            bytes: 1448,
            bytes_in_flight: in_flight,
            is_retransmission: false,
        };
        cc.on_sent(&sent(t0 + Duration::from_secs(1), 10 * 1448));
        // Nothing in flight for 10 s, then a packet: the curve resumes 10 s later.
        cc.on_sent(&sent(t0 + Duration::from_secs(11), 1448));
        assert_eq!(cc.epoch().unwrap().start, t0 + Duration::from_secs(10));
        // A send with other packets in flight is not a restart.
        cc.on_sent(&sent(t0 + Duration::from_secs(20), 2 * 1448));
        assert_eq!(cc.epoch().unwrap().start, t0 + Duration::from_secs(10));
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_or_in_recovery() {
        let mut cc = Cubic::new(Setup::default(), config(true));
        cc.on_ack(&AckEvent {
            cwnd_limited: false,
            ..ack(5)
        });
        cc.on_ack(&AckEvent {
            in_recovery: true,
            ..ack(5)
        });
        assert_eq!(cc.cwnd(), 10.0);
    }

    #[test]
    fn registry_builds_cubic_with_the_linux_preset() {
        let spec: crate::CcSpec = "cubic:preset=linux,hystart=false".parse().unwrap();
        assert_eq!(spec.params.f64("beta"), 717.0 / 1024.0);
        assert_eq!(spec.params.f64("c"), 410.0 / 1024.0);
        let reparsed: crate::CcSpec = spec.to_string().parse().unwrap();
        assert_eq!(reparsed, spec, "the canonical form round-trips");
        let mut cc = spec
            .build(&Setup {
                initial_cwnd: 1024.0,
                ..Setup::default()
            })
            .unwrap();
        assert_eq!(cc.name(), "cubic");
        cc.on_loss(&loss(true));
        assert_eq!(cc.cwnd(), 717.0);
        assert!("cubic:beta=1.5".parse::<crate::CcSpec>().is_err());
    }
}
