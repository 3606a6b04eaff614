//! FAST TCP: delay-based window control that stays stable at multi-Gbit/s over long paths.
//!
//! FAST measures congestion by queueing delay instead of loss. It keeps two RTT estimates:
//! `baseRTT`, the smallest RTT seen (the propagation delay), and `avgRTT`, an exponentially
//! weighted average of every ACK's RTT sample with weight `η = min(3/w, cap)` (so it averages
//! over about a third of a window; the cap is 1/4 in the paper and 1/256 in ns-2). Their
//! difference `q = avgRTT − baseRTT` is the queueing delay, and by Little's law the flow's own
//! packets sitting in queues are `w·q/avgRTT`. Once per update period FAST moves its window a
//! fraction `γ` of the way to the window that would leave exactly `α` of its packets queued:
//!
//! ```text
//!     w ← min{ 2w, (1 − γ)·w + γ·( (baseRTT/avgRTT)·w_old + α ) }
//! ```
//!
//! At the fixed point `w·q/avgRTT = α`: with rate `x = w/avgRTT`, **`x·q = α`**. Every flow keeps
//! α packets in the bottleneck buffer, flows sharing a link get rates in proportion to their α
//! whatever their propagation delays (weighted proportional fairness), and the distance to the
//! target shrinks geometrically by `(1 − γ)` per update rather than by one packet per RTT as in
//! Vegas. `w_old` is the window the acknowledged packet saw when it was sent (ns-2's
//! `cwnd_array_[seq]`, here [`AckEvent::in_flight_at_send`]), which compensates the one-RTT-old
//! delay measurement; the `(1 − γ)` term uses the current window.
//!
//! The Linux prototype ("FAST TCP in Linux", seed 001) runs in four phases, reported by
//! [`CongestionControl::phase`]:
//! - `slow_start`: while the queueing delay is below `mi_threshold` the window grows by one packet
//!   per packet acknowledged (doubling per RTT, ns-2's "MI mode"); there is no Reno slow start.
//! - `fast_convergence`: a queue exists and the flow's backlog is far from α (further than
//!   `fc_threshold·α` packets outside the `[α, β]` band): the γ-weighted update closes the gap.
//! - `equilibrium`: the backlog is within `fc_threshold·α` of the band. If `β > α`, a backlog in
//!   `[α, β)` freezes the window (a Vegas-like dead band); with `β = α` the update always runs.
//! - `loss_recovery`: the first loss of a window halves cwnd and ssthresh, as Reno; the window does
//!   not move until recovery ends. A retransmission timeout sets cwnd to `rto_cwnd` (2, as ns-2's
//!   `slowstart_`), halves ssthresh (on the first timeout of a series only, so a backed-off timer
//!   does not halve it again) and returns to `slow_start`.
//!
//! Updates happen at most once per `update_period` and, as in the Linux prototype and ns-2 v1.1.3,
//! only during every other round trip (rounds are counted by packet number: acknowledging a
//! packet sent after the round began starts the next one), so the RTT an update sees reflects the
//! windows of the round before. When the RTT is longer than the period, several updates fall in
//! one such round trip, each moving γ of the way to the target (ns-2 `on_first_rtt_`).
//!
//! Window pacing (seed 001's "pacing: increment to cwnd"): when `baseRTT ≥ 4 ms` an increase is
//! released gradually over the ACKs of one update period (ns-2 `fast_pace`), so a large step does
//! not leave as a line-rate burst; decreases apply at once.
//!
//! Sources: C. Jin, D. X. Wei, S. H. Low, "FAST TCP: motivation, architecture, algorithms,
//! performance", IEEE INFOCOM 2004; D. X. Wei, C. Jin, S. H. Low, S. Hegde, same title, IEEE/ACM
//! ToN 14(6), 2006; seeds 000 (SC2002 results) and 001 (phases, pacing); the ns-2 module by
//! T. Cui and L. Andrew, v1.1.3 (`tcp/tcp-fast.cc`), whose defaults are the `ns2` preset.
//!
//! Parameter choices: the default α (also the `paper` preset's) is 200 packets: the Caltech prototype's α-tuning
//! used 200 above 100 Mb/s, where every longhaul path lives, ns-2's `fast-test1` uses it, and at
//! 1 Gb/s with 1500-byte packets it is 2.4 ms of queue per flow, enough to be measured above
//! RTT noise yet small next to the buffers of the SC2002 paths. The paper's 20 ms update period
//! and η cap 1/4 are used, with the `min{2w, ·}` cap. The paper's multiplicative increase,
//! α(w, q) = a·w while q = 0, needs a threshold on measured RTTs; it shares ns-2's 0.75 ms.
//! `fc_threshold` 0.1 calls the flow converged when its backlog is within 10 % of α (about
//! three updates at γ = 1/2 from a fresh start). The `ns2` preset is ns-2's `ns-default.tcl`:
//! α = β = 100, γ = 0.5, 10 ms period, 0.75 ms MI threshold, η cap 1/256, no 2w cap, cwnd 2
//! after a timeout; both presets update every other RTT and pace increments, as ns-2 and the
//! Linux prototype did.
//!
//! Deviations:
//! - The MI rule adds the packets acknowledged (stretch-ACK aware, as Linux slow start) instead of
//!   one per ACK, and only when the window was used (`cwnd_limited`); an update never raises the
//!   window of an application-limited sender (it may lower it).
//! - Paced increments are released as equal fractional steps, one per ACK, over the ACKs one
//!   period is expected to bring (`acks_last_rtt · period / avgRTT`), instead of ns-2's whole
//!   packets every `spacing` ACKs; the total and the span are the same. A new update replaces the
//!   unreleased remainder (its target already includes it) rather than adding to it.
//! - An ACK covering `n` packets weighs in the RTT average as `n` samples (`1 − (1 − η)^n`),
//!   as ns-2 with its ACK per packet sees it; one sample per stretch ACK would slow the average
//!   by the ACK ratio and, with delayed ACKs on a long path, keep FAST cycling between an
//!   emptied queue (MI re-entered) and a doubled window instead of settling.
//! - RTT samples are still taken during loss recovery (seed 001: "use SACK to increase the
//!   number of RTT samples during recovery"); ns-2 skips estimation then.
//! - The phases `fast_convergence` and `equilibrium` differ only in the dead band; the prototype's
//!   extra per-ACK overshoot monitoring is not public and is not modelled.
//! - baseRTT also takes the handshake's RTT sample (`on_rtt_sample`), as Linux's socket minimum
//!   RTT does (`tcp_update_rtt_min` on the SYN-ACK's sample; BBR starts from it); a flow that
//!   starts after others have filled the queue would otherwise never see the propagation delay
//!   and keep more than α packets queued.
//! - The initial window is the transport's (`Setup::initial_cwnd`), not ns-2's 2 packets.
//!
//! Four options make FAST hold on real hosts: `period_min`, `climb`, `pace` and `mi_backlog`
//! (below). All are on by default, and the `paper` and `ns2` presets turn them off (the papers'
//! and ns-2's FAST, to the letter).
//!
//! Option `period_min`: avgRTT is the smallest RTT sample of the last update period instead of
//! the EWMA. Delay a host or a
//! burst adds to some packets of a period does not count, a standing queue does, as Linux's
//! `tcp_vegas.c` filters its per-RTT estimate (the minimum sample of the last RTT). The
//! equilibrium is the same (α packets standing in the queue). A period's minimum falls below
//! `mi_threshold` whenever the queue empties for one sample, which on a bursty host happens
//! every few periods, and the MI rule's doubling then overshoots by up to a period of ACKs each
//! time; so with `period_min` MI runs only from the start or a timeout until the first ACK that
//! finds a queue, and after a loss the window law refills the window. What it changes on a host
//! whose stalls make the traffic bursty is in docs/lab.md, "FAST at 1 Gb/s × 180 ms".
//!
//! Option `climb` (with `period_min`; 1/8 by default, 0 is off): MI ends at the first queue, and MI's
//! own 2× bursts make one once the window passes about half the path's BDP; a loss halves the
//! window too. From there the window law adds α per two round trips (it aims at
//! `w_old·baseRTT/avgRTT + α`, and `w_old` lags a round trip), which at 1 Gb/s × 180 ms is
//! ~15 s to the BDP. With `climb = a`, once a whole round trip (avgRTT) passed without an ACK
//! that found a queue, each ACK adds `a` × the packets it acknowledges, as MI does with 1: the
//! paper's α(w, q) = a·w while q = 0, with a gentler a, so its overshoot past the point where a
//! queue appears is about `a` × a window (1/8: 12 % of the BDP, inside a quarter-BDP buffer)
//! rather than a doubling. The first period that finds a queue stops it. Below the window the
//! last loss halved it grows at MI's pace instead (that window was carried a moment ago; a
//! timeout forgets it): on seed 000's 180-ms path with random loss 1e-5 the climb alone
//! refills too slowly between losses (docs/reproduce.md, `response`).
//!
//! Option `pace`: ask the transport to pace at Linux's rule with FAST's own RTT (200 % of
//! cwnd/avgRTT in MI, 120 % after; seed 001's "burstiness control"), so a window leaves spread
//! over the round trip instead of in the bursts a host's stalls and the ACK clock make. Bursts
//! put a queue under most packets of a period even below the BDP, which `period_min` would read
//! as FAST's own queue; in the kernel (TCP's internal pacing, no fq needed) this option is what
//! lets the window reach the path's BDP on a 2-vCPU host.
//!
//! Option `mi_backlog` (4 packets by default, 0 is the papers' rule): MI ends only at a queue
//! (`q ≥ mi_threshold`) that holds at least this many of the flow's own packets by Little's law
//! (`w_old·q/avgRTT`, the backlog the window law uses). At a small window a queueing delay
//! says little: 1 ms of delay under a 50-packet window on a 180-ms path is a third of a packet
//! of ours, and a host's stall, or a delayed ACK that lands alone in an update period, fakes
//! it: in the lab such readings ended MI within the first second at a few dozen packets, and
//! `climb` then took seconds to reach the BDP (docs/lab.md, "FAST at 1 Gb/s × 180 ms"). A
//! queue the flow makes itself holds
//! thousands of its packets when MI's 2× bursts first overflow the link at half the BDP, and
//! a queue other flows hold ends MI once `w_old·q/avgRTT` reaches 4 (at 2.4 ms of queue on a
//! 180-ms path, 300 packets), so the rule costs little where the threshold is right. On a slow
//! link (10 Mb/s) 4 packets are 4.8 ms of queue, which MI waits for (0.75 ms without the rule).
//!
//! Why they are the default: on a clean simulated path they change no equilibrium (α packets
//! queued, the same rates and shares) and reach it sooner; on the 1 Gb/s × 180 ms path of
//! seeds 000/001 with a 4000-packet buffer the papers' FAST never settles even without host
//! noise (MI re-entered whenever the average dips, doubling past path and buffer), and with
//! the host stalls measured in the lab it keeps a fraction of the link. The evidence, and the
//! `reproduce` claims checked with both settings, are in docs/lab.md ("FAST at 1 Gb/s × 180
//! ms") and docs/reproduce.md.

use crate::controller::{CongestionControl, Setup, INFINITE_SSTHRESH};
use crate::event::{AckEvent, LossEvent, RtoEvent};
use crate::params::{ParamError, ParamKind, ParamSpec, Params, Preset, Value};
use crate::registry::Algorithm;
use crate::time::Time;
use crate::window::{reduce_to_threshold, restart_after_timeout, timeout_lowers_threshold};
use std::time::Duration;

/// Below this base RTT increments are applied at once (ns-2: pacing only when baseRTT ≥ 4 ms,
/// where an update period holds enough ACKs to spread over).
const PACE_MIN_BASE_RTT: f64 = 0.004;
/// While the window is this small an increase is applied at once, at most doubling per ACK
/// (ns-2 `fast_pace`).
const PACE_SMALL_CWND: f64 = 4.0;
/// The window after an update is never below this (ns-2 `fast_calc_cwnd`).
const MIN_TARGET: f64 = 2.0;

/// FAST's parameters: target backlog, gain, update period, the MI rules and the refinements that
/// each can be turned off.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha",
        kind: ParamKind::Float { min: 1.0, max: 1e6 },
        default: Value::Float(200.0),
        unit: "packets",
        help: "target backlog: packets of this flow kept queued at equilibrium (x·q = alpha)",
    },
    ParamSpec {
        name: "beta",
        kind: ParamKind::Float { min: 0.0, max: 1e6 },
        default: Value::Float(0.0),
        unit: "packets",
        help: "upper end of the dead band [alpha, beta) in which the window is held; 0 = alpha",
    },
    ParamSpec {
        name: "gamma",
        kind: ParamKind::Float {
            min: 0.001,
            max: 1.0,
        },
        default: Value::Float(0.5),
        unit: "",
        help: "gain: fraction of the distance to the target window moved per update",
    },
    ParamSpec {
        name: "update_period",
        kind: ParamKind::Float {
            min: 0.0001,
            max: 10.0,
        },
        default: Value::Float(0.02),
        unit: "s",
        help: "minimum time between window updates",
    },
    ParamSpec {
        name: "mi_threshold",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.00075),
        unit: "s",
        help: "queueing delay below which the window doubles per RTT (slow-start phase)",
    },
    ParamSpec {
        name: "mi_backlog",
        kind: ParamKind::Float { min: 0.0, max: 1e6 },
        default: Value::Float(4.0),
        unit: "packets",
        help: "MI ends only at a queue (q >= mi_threshold) that holds at least this many of the \
               flow's own packets (w_old·q/avgRTT): host delay noise cannot fake one at a \
               small window; 0 = the papers' rule",
    },
    ParamSpec {
        name: "fc_threshold",
        kind: ParamKind::Float {
            min: 0.0,
            max: 100.0,
        },
        default: Value::Float(0.1),
        unit: "× alpha",
        help: "backlog distance from [alpha, beta], as a fraction of alpha, above which the \
               phase is fast_convergence rather than equilibrium",
    },
    ParamSpec {
        name: "eta_cap",
        kind: ParamKind::Float {
            min: 1e-4,
            max: 1.0,
        },
        default: Value::Float(0.25),
        unit: "",
        help: "largest weight of one RTT sample in the average: eta = min(3/w, eta_cap)",
    },
    ParamSpec {
        name: "min2w_cap",
        kind: ParamKind::Bool,
        default: Value::Bool(true),
        unit: "",
        help: "cap each update at doubling the window (the paper's min{2w, ·})",
    },
    ParamSpec {
        name: "pace_increments",
        kind: ParamKind::Bool,
        default: Value::Bool(true),
        unit: "",
        help: "release window increases gradually over one update period (baseRTT >= 4 ms)",
    },
    ParamSpec {
        name: "every_other_rtt",
        kind: ParamKind::Bool,
        default: Value::Bool(true),
        unit: "",
        help: "update only on alternate round trips, as the Linux prototype and ns-2 v1.1.3",
    },
    ParamSpec {
        name: "rto_cwnd",
        kind: ParamKind::Float {
            min: 1.0,
            max: 100.0,
        },
        default: Value::Float(2.0),
        unit: "packets",
        help: "window after a retransmission timeout",
    },
    ParamSpec {
        name: "period_min",
        kind: ParamKind::Bool,
        default: Value::Bool(true),
        unit: "",
        help: "avgRTT is the smallest RTT sample of the last update period instead of the EWMA \
               of all samples: blind to delay a host or a burst adds to some packets of a \
               period, not to a standing queue",
    },
    ParamSpec {
        name: "climb",
        kind: ParamKind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.125),
        unit: "× acked",
        help: "with period_min, after MI: once a whole round trip's update periods found no \
               queue, add this fraction of each ACK's packets to the window (the paper's \
               alpha = a·w while q = 0, with a gentler a than MI's doubling); 0 = off",
    },
    ParamSpec {
        name: "pace",
        kind: ParamKind::Bool,
        default: Value::Bool(true),
        unit: "",
        help: "ask the transport to pace at Linux's rule with FAST's RTT: 200 % of cwnd/avgRTT \
               in MI, 120 % after (seed 001's burstiness control)",
    },
];

/// `paper`: the published algorithm without the refinements; `ns2`: the ns-2 module's defaults.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "paper",
        help: "Jin/Wei/Low INFOCOM 2004 and ToN 2006: alpha 200, 20 ms period, eta cap 1/4, 2w \
               cap, the EWMA of every RTT sample, MI whenever it dips under the threshold",
        values: &[
            ("period_min", Value::Bool(false)),
            ("climb", Value::Float(0.0)),
            ("pace", Value::Bool(false)),
            ("mi_backlog", Value::Float(0.0)),
        ],
    },
    Preset {
        name: "ns2",
        help: "the ns-2 module's defaults (tcp-fast.cc v1.1.3, ns-default.tcl)",
        values: &[
            ("alpha", Value::Float(100.0)),
            ("beta", Value::Float(0.0)),
            ("gamma", Value::Float(0.5)),
            ("update_period", Value::Float(0.01)),
            ("mi_threshold", Value::Float(0.00075)),
            ("eta_cap", Value::Float(1.0 / 256.0)),
            ("min2w_cap", Value::Bool(false)),
            ("pace_increments", Value::Bool(true)),
            ("every_other_rtt", Value::Bool(true)),
            ("rto_cwnd", Value::Float(2.0)),
            ("period_min", Value::Bool(false)),
            ("climb", Value::Float(0.0)),
            ("pace", Value::Bool(false)),
            ("mi_backlog", Value::Float(0.0)),
        ],
    },
];

/// FAST TCP as the registry lists it (`fast`).
pub const ALGORITHM: Algorithm = Algorithm {
    name: "fast",
    summary: "FAST TCP: delay-based, keeps alpha packets queued, converges geometrically",
    source: "Jin/Wei/Low INFOCOM 2004, ToN 2006; seeds 000, 001; ns-2 tcp-fast.cc",
    params: PARAMS,
    presets: PRESETS,
    build,
};

fn build(p: &Params, setup: &Setup) -> Result<Box<dyn CongestionControl>, ParamError> {
    Ok(Box::new(Fast::new(*setup, FastConfig::from_params(p)?)))
}

/// FAST's validated settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FastConfig {
    /// Target backlog: packets of this flow kept queued at equilibrium (`x·q = alpha`).
    pub alpha: f64,
    /// The dead band's upper end, already resolved (`beta = 0` means `alpha`).
    pub beta: f64,
    /// Gain: the fraction of the distance to the target window moved per update.
    pub gamma: f64,
    /// Minimum time between window updates.
    pub update_period: Duration,
    /// Seconds.
    pub mi_threshold: f64,
    /// Packets of the flow's own backlog a queue must hold to end MI.
    pub mi_backlog: f64,
    /// Fraction of alpha.
    pub fc_threshold: f64,
    /// The largest weight one RTT sample gets in the average: `eta = min(3/w, eta_cap)`.
    pub eta_cap: f64,
    /// Cap each update at doubling the window (the paper's `min{2w, ·}`).
    pub min2w_cap: bool,
    /// Release a window increase gradually over one update period rather than at once.
    pub pace_increments: bool,
    /// Update only on alternate round trips, as the Linux prototype and ns-2 do.
    pub every_other_rtt: bool,
    /// Window after a retransmission timeout, in packets.
    pub rto_cwnd: f64,
    /// avgRTT is the smallest sample of the last update period (see the module header).
    pub period_min: bool,
    /// With `period_min`: growth per packet acknowledged once a round trip found no queue.
    pub climb: f64,
    /// Ask the transport to pace (see `pacing_rate`).
    pub pace: bool,
}

impl FastConfig {
    /// The typed values of validated `fast` parameters; `beta` below `alpha` (other than 0) is an
    /// error.
    pub fn from_params(p: &Params) -> Result<FastConfig, ParamError> {
        let alpha = p.f64("alpha");
        let beta = match p.f64("beta") {
            0.0 => alpha,
            b if b < alpha => {
                return Err(p.invalid(format!(
                    "beta ({b}) must be at least alpha ({alpha}), or 0 for no dead band"
                )))
            }
            b => b,
        };
        Ok(FastConfig {
            alpha,
            beta,
            gamma: p.f64("gamma"),
            update_period: Duration::from_secs_f64(p.f64("update_period")),
            mi_threshold: p.f64("mi_threshold"),
            mi_backlog: p.f64("mi_backlog"),
            fc_threshold: p.f64("fc_threshold"),
            eta_cap: p.f64("eta_cap"),
            min2w_cap: p.bool("min2w_cap"),
            pace_increments: p.bool("pace_increments"),
            every_other_rtt: p.bool("every_other_rtt"),
            rto_cwnd: p.f64("rto_cwnd"),
            period_min: p.bool("period_min"),
            climb: p.f64("climb"),
            pace: p.bool("pace"),
        })
    }

    /// A preset's settings (`"paper"` or `"ns2"`).
    pub fn preset(name: &str) -> Result<FastConfig, ParamError> {
        FastConfig::from_params(&Params::defaults("fast", PARAMS, PRESETS, Some(name))?)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    SlowStart,
    FastConvergence,
    Equilibrium,
    LossRecovery,
}

/// FAST's state.
#[derive(Debug, Clone)]
pub struct Fast {
    setup: Setup,
    cfg: FastConfig,
    cwnd: f64,
    ssthresh: f64,
    /// Minimum RTT seen, seconds (infinite until the first sample).
    base_rtt: f64,
    /// EWMA of RTT samples, seconds (0 until the first sample); with `period_min`, the smallest
    /// sample of the last completed update period.
    avg_rtt: f64,
    /// `period_min`: the smallest sample of the current period (infinite: none yet), and when
    /// the period began.
    period_low: f64,
    period_start: Time,
    /// An ACK found a queue (q ≥ mi_threshold) since the start or the last timeout.
    mi_done: bool,
    /// The last ACK that found a queue (q ≥ mi_threshold).
    queue_seen: Time,
    /// The window when the last loss halved it (0: none since the start or a timeout): `climb`
    /// grows at MI's pace below it.
    loss_window: f64,
    /// The packet number whose acknowledgement ends the current round trip.
    round_end: u64,
    /// True on the round trips in which an update may happen (every other one).
    update_round: bool,
    acks_this_round: u32,
    acks_last_round: u32,
    /// When the window was last set by an update or by the MI rule.
    last_update: Option<Time>,
    /// Increase still to be released by window pacing, packets.
    pending: f64,
    /// Packets released per ACK while `pending > 0`.
    step_per_ack: f64,
    phase: Phase,
}

impl Fast {
    /// A controller in its slow-start (MI) phase with the initial window and no RTT sample yet.
    pub fn new(setup: Setup, cfg: FastConfig) -> Fast {
        Fast {
            setup,
            cfg,
            cwnd: setup.clamp_cwnd(setup.initial_cwnd),
            ssthresh: INFINITE_SSTHRESH,
            base_rtt: f64::INFINITY,
            avg_rtt: 0.0,
            period_low: f64::INFINITY,
            period_start: Time::ZERO,
            mi_done: false,
            queue_seen: Time::ZERO,
            loss_window: 0.0,
            round_end: 0,
            update_round: false,
            acks_this_round: 0,
            acks_last_round: 0,
            last_update: None,
            pending: 0.0,
            step_per_ack: 0.0,
            phase: Phase::SlowStart,
        }
    }

    /// The propagation-delay estimate (minimum RTT), once measured.
    pub fn base_rtt(&self) -> Option<Duration> {
        self.base_rtt
            .is_finite()
            .then(|| Duration::from_secs_f64(self.base_rtt))
    }

    /// The averaged RTT, once measured.
    pub fn avg_rtt(&self) -> Option<Duration> {
        (self.avg_rtt > 0.0).then(|| Duration::from_secs_f64(self.avg_rtt))
    }

    fn packets(&self, bytes: u64) -> f64 {
        bytes as f64 / self.setup.mss as f64
    }

    /// Feed one RTT sample to the estimators: baseRTT is the minimum, avgRTT the EWMA with
    /// weight `η = min(3/w, eta_cap)` per packet acknowledged, `w` the packets in flight (ns-2
    /// `fast_est`). An ACK for `n` packets stands for `n` per-packet samples of the same RTT, so
    /// it moves the average by `1 − (1 − η)^n`: the average then spans about a third of a window
    /// whatever the ACK frequency. Weighting a stretch ACK as one sample would make it span
    /// `n/3` of a window; with delayed ACKs (`n = 2`) that lag lets the window settle below the
    /// path's BDP after an overshoot, the queue drains, `q` falls under `mi_threshold` and the
    /// MI rule doubles the window again: a cycle instead of equilibrium.
    ///
    /// With `period_min` the estimate is instead the smallest sample of each update period,
    /// taken when the first sample at or after the period's end arrives (that sample counts in
    /// the period it ends); the first sample stands until then.
    fn estimate(&mut self, now: Time, rtt: Duration, in_flight: f64, acked_packets: u32) {
        let s = rtt.as_secs_f64();
        self.base_rtt = self.base_rtt.min(s);
        if self.cfg.period_min {
            self.period_low = self.period_low.min(s);
            if self.avg_rtt == 0.0 {
                self.avg_rtt = s;
                self.period_start = now;
            } else if now >= self.period_start + self.cfg.update_period {
                self.avg_rtt = self.period_low;
                self.period_low = f64::INFINITY;
                self.period_start = now;
            }
            return;
        }
        if self.avg_rtt == 0.0 {
            self.avg_rtt = s;
        } else {
            let eta = (3.0 / in_flight.max(1.0)).min(self.cfg.eta_cap);
            // An ACK per packet is the common case: (1 − η)^1 without the call to `powi`'s
            // runtime routine (which returns its base for an exponent of 1: the same bits).
            let keep = match acked_packets {
                0 | 1 => 1.0 - eta,
                n => (1.0 - eta).powi(n as i32),
            };
            let weight = 1.0 - keep;
            self.avg_rtt += weight * (s - self.avg_rtt);
        }
    }

    /// The window the acknowledged packet saw when sent (ns-2 `old_pif`), packets.
    fn window_at_send(&self, ev: &AckEvent) -> f64 {
        match ev.in_flight_at_send {
            0 => self.cwnd,
            b => self.packets(b),
        }
    }

    /// This flow's packets queued along the path, by Little's law: `w_old · q / avgRTT`.
    fn backlog(&self, ev: &AckEvent) -> f64 {
        self.window_at_send(ev) * (self.avg_rtt - self.base_rtt) / self.avg_rtt
    }

    /// `equilibrium` when the backlog is within `fc_threshold·α` of `[α, β]`.
    fn classify(&self, backlog: f64) -> Phase {
        let cfg = &self.cfg;
        let off_band = (cfg.alpha - backlog).max(backlog - cfg.beta).max(0.0);
        if off_band > cfg.fc_threshold * cfg.alpha {
            Phase::FastConvergence
        } else {
            Phase::Equilibrium
        }
    }

    /// The periodic FAST update (the window law above), followed by pacing of an increase.
    fn update(&mut self, ev: &AckEvent) {
        let cfg = self.cfg;
        let w = self.cwnd;
        let w_old = self.window_at_send(ev);
        let backlog = self.backlog(ev);
        let mut target = if backlog < cfg.alpha || backlog >= cfg.beta {
            (1.0 - cfg.gamma) * w + cfg.gamma * (w_old * self.base_rtt / self.avg_rtt + cfg.alpha)
        } else {
            w
        };
        if cfg.min2w_cap {
            target = target.min(2.0 * w);
        }
        target = target.max(MIN_TARGET);
        if target > w && !ev.cwnd_limited {
            target = w;
        }
        self.phase = self.classify(backlog);
        if target > w && cfg.pace_increments && self.base_rtt >= PACE_MIN_BASE_RTT {
            let acks_per_rtt = match self.acks_last_round {
                0 => w,
                n => n as f64,
            };
            let acks_per_period = acks_per_rtt * cfg.update_period.as_secs_f64() / self.avg_rtt;
            self.pending = target - w;
            self.step_per_ack = self.pending / acks_per_period.max(1.0);
            self.release_paced();
        } else {
            self.pending = 0.0;
            self.cwnd = target;
        }
    }

    /// Release one ACK's share of a paced increase (ns-2 `fast_pace`).
    fn release_paced(&mut self) {
        if self.pending <= 0.0 {
            return;
        }
        let step = if self.cwnd <= PACE_SMALL_CWND {
            self.pending.min(self.cwnd)
        } else {
            self.step_per_ack.min(self.pending)
        };
        self.cwnd += step;
        self.pending -= step;
        if self.pending < 1e-9 {
            self.pending = 0.0;
        }
    }
}

impl CongestionControl for Fast {
    fn name(&self) -> &'static str {
        "fast"
    }

    fn on_ack(&mut self, ev: &AckEvent) {
        if ev.largest_acked >= self.round_end {
            self.round_end = ev.next_packet.max(ev.largest_acked.saturating_add(1));
            self.acks_last_round = self.acks_this_round;
            self.acks_this_round = 0;
            self.update_round = !self.update_round;
        }
        self.acks_this_round = self.acks_this_round.saturating_add(1);

        if let Some(rtt) = ev.rtt {
            let in_flight = match ev.bytes_in_flight {
                0 => self.cwnd,
                b => self.packets(b),
            };
            self.estimate(ev.now, rtt, in_flight, ev.acked_packets);
        }
        if ev.in_recovery {
            // The window is frozen in recovery, and the next update waits a full period after it.
            self.phase = Phase::LossRecovery;
            self.pending = 0.0;
            self.last_update = Some(ev.now);
            return;
        }
        if self.avg_rtt <= 0.0 || !self.base_rtt.is_finite() {
            return;
        }

        let q = self.avg_rtt - self.base_rtt;
        let no_queue = q < self.cfg.mi_threshold;
        if !no_queue {
            self.queue_seen = ev.now;
        }
        // MI ends at a queue holding `mi_backlog` of our packets; with period_min, MI only
        // until the first such queue, then `climb` once a whole round trip found none
        // (module header).
        let ends_mi =
            !no_queue && (self.cfg.mi_backlog <= 0.0 || self.backlog(ev) >= self.cfg.mi_backlog);
        let mi = !(ends_mi || (self.cfg.period_min && self.mi_done));
        let climb = self.cfg.period_min
            && self.mi_done
            && self.cfg.climb > 0.0
            && no_queue
            && ev.now >= self.queue_seen + Duration::from_secs_f64(self.avg_rtt);
        if mi || climb {
            if ev.cwnd_limited {
                let gain = if mi || self.cwnd < self.loss_window {
                    1.0
                } else {
                    self.cfg.climb
                };
                self.cwnd += gain * ev.acked_packets as f64;
            }
            self.pending = 0.0;
            self.phase = Phase::SlowStart;
            self.last_update = Some(ev.now);
        } else {
            self.mi_done = true;
            let period_over = match self.last_update {
                None => true,
                Some(t) => ev.now >= t + self.cfg.update_period,
            };
            if period_over && (self.update_round || !self.cfg.every_other_rtt) {
                self.update(ev);
                self.last_update = Some(ev.now);
            } else {
                if self.phase != Phase::FastConvergence && self.phase != Phase::Equilibrium {
                    // Leaving slow start or recovery: classify by the current backlog.
                    self.phase = self.classify(self.backlog(ev));
                }
                self.release_paced();
            }
        }
        self.cwnd = self.setup.clamp_cwnd(self.cwnd);
        if self.cfg.pace && self.mi_done && self.ssthresh == INFINITE_SSTHRESH {
            // MI has ended: mark it in ssthresh, as Linux's Vegas marks the end of slow start,
            // so that pacing switches to its congestion-avoidance ratio (`pacing_rate`). The
            // kernel keeps whole packets in ssthresh.
            self.ssthresh = self.cwnd.floor().max(2.0);
        }
    }

    /// The handshake's RTT only lowers baseRTT: no data was in flight, so it says nothing of
    /// this flow's backlog and does not enter avgRTT.
    fn on_rtt_sample(&mut self, _now: Time, rtt: Duration) {
        self.base_rtt = self.base_rtt.min(rtt.as_secs_f64());
    }

    fn on_loss(&mut self, ev: &LossEvent) {
        if ev.first_in_window {
            self.loss_window = self.cwnd;
            let t = self.cwnd * 0.5;
            reduce_to_threshold(&self.setup, &mut self.cwnd, &mut self.ssthresh, t);
            self.pending = 0.0;
            self.phase = Phase::LossRecovery;
        }
    }

    fn on_rto(&mut self, ev: &RtoEvent) {
        let t = timeout_lowers_threshold(ev.consecutive).then_some(self.cwnd * 0.5);
        let restart = self.cfg.rto_cwnd;
        restart_after_timeout(&self.setup, &mut self.cwnd, &mut self.ssthresh, t, restart);
        self.pending = 0.0;
        self.phase = Phase::SlowStart;
        self.mi_done = false;
        self.loss_window = 0.0;
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// With `pace`: Linux's default rule (`tcp_update_pacing_rate`) with FAST's own RTT
    /// estimate in place of the kernel's srtt: 200 % of cwnd/avgRTT while the window is below
    /// half of ssthresh (in MI, until its end marks ssthresh), 120 % after. Without it the
    /// transport decides (`None`).
    fn pacing_rate(&self) -> Option<u64> {
        if !self.cfg.pace || self.avg_rtt <= 0.0 {
            return None;
        }
        let ratio = if self.cwnd < self.ssthresh / 2.0 {
            2.0
        } else {
            1.2
        };
        // At least a byte a second: a tiny window over a huge RTT must not read as "stopped".
        Some(((ratio * self.cwnd * self.setup.mss as f64 / self.avg_rtt) as u64).max(1))
    }

    fn phase(&self) -> &'static str {
        match self.phase {
            Phase::SlowStart => "slow_start",
            Phase::FastConvergence => "fast_convergence",
            Phase::Equilibrium => "equilibrium",
            Phase::LossRecovery => "loss_recovery",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{loss, rto};
    use crate::CcSpec;

    const MSS: u64 = 1448;

    fn config(preset: &str) -> FastConfig {
        FastConfig::preset(preset).unwrap()
    }

    fn fast_with(cfg: FastConfig, initial_cwnd: f64) -> Fast {
        Fast::new(
            Setup {
                initial_cwnd,
                ..Setup::default()
            },
            cfg,
        )
    }

    /// An ACK of one packet as a window-limited sender sees it.
    fn ack_of(now: Time, rtt: f64, pn: u64, next: u64, w_old: f64, in_flight: f64) -> AckEvent {
        AckEvent {
            now,
            acked_packets: 1,
            acked_bytes: MSS,
            rtt: Some(Duration::from_secs_f64(rtt)),
            prior_bytes_in_flight: (in_flight * MSS as f64) as u64,
            bytes_in_flight: (in_flight * MSS as f64) as u64,
            in_flight_at_send: (w_old * MSS as f64).round() as u64,
            largest_acked: pn,
            next_packet: next,
            rate: None,
            in_recovery: false,
            cwnd_limited: true,
        }
    }

    /// One round trip as the sender sees it.
    #[derive(Clone, Copy)]
    struct Round {
        /// The RTT every packet of the round experiences, seconds.
        rtt: f64,
        /// Packets sent at the round's start, each acknowledged by one ACK.
        acks: u64,
        /// The window those packets saw when sent.
        w_old: f64,
        /// Packets in flight reported with each ACK (sets the EWMA weight 3/w).
        in_flight: f64,
    }

    /// Numbers packets and keeps time for one sender.
    struct Path {
        now: Time,
        next_pn: u64,
    }

    impl Path {
        fn new() -> Path {
            Path {
                now: Time::ZERO,
                next_pn: 0,
            }
        }

        /// ACK by ACK; `each` sees the controller after every ACK.
        fn round_with(&mut self, cc: &mut Fast, r: Round, mut each: impl FnMut(&Fast, &AckEvent)) {
            let first = self.next_pn;
            let next = first + r.acks;
            let start = self.now;
            for i in 0..r.acks {
                let now = start + Duration::from_secs_f64(r.rtt * (i + 1) as f64 / r.acks as f64);
                let ev = ack_of(now, r.rtt, first + i, next, r.w_old, r.in_flight);
                cc.on_ack(&ev);
                each(cc, &ev);
            }
            self.now = start + Duration::from_secs_f64(r.rtt);
            self.next_pn = next;
        }

        fn round(&mut self, cc: &mut Fast, r: Round) {
            self.round_with(cc, r, |_, _| {});
        }
    }

    /// Flows sharing one bottleneck of `capacity` packets/s with propagation RTT `base` s, in
    /// the static (ACK-clocked) link model: whatever the windows hold beyond the pipe waits in
    /// the queue, so RTT = base + max(0, Σw − capacity·base)/capacity. Every round each flow
    /// sends its (rounded) window. `observe(flows, windows, rtt)` runs after each round.
    fn share_bottleneck(
        flows: &mut [Fast],
        capacity: f64,
        base: f64,
        rounds: usize,
        mut observe: impl FnMut(&[Fast], &[f64], f64),
    ) {
        let mut paths: Vec<Path> = flows.iter().map(|_| Path::new()).collect();
        for _ in 0..rounds {
            let windows: Vec<f64> = flows.iter().map(|f| f.cwnd().round().max(1.0)).collect();
            let total: f64 = windows.iter().sum();
            let rtt = base + (total - capacity * base).max(0.0) / capacity;
            for ((cc, path), &w) in flows.iter_mut().zip(&mut paths).zip(&windows) {
                let r = Round {
                    rtt,
                    acks: w as u64,
                    w_old: w,
                    in_flight: w,
                };
                path.round(cc, r);
            }
            observe(flows, &windows, rtt);
        }
    }

    #[test]
    fn each_flow_keeps_alpha_packets_queued_at_equilibrium() {
        // 10,000 packets/s, 40 ms: a 400-packet pipe. Paper preset, alpha 200 and 100: the
        // queue settles at 300 packets (30 ms), 200 of them from the first flow, 100 from the
        // second, and the rates split 2:1 (weighted proportional fairness).
        let (capacity, base) = (10_000.0, 0.040);
        let mut flows = vec![
            fast_with(config("paper"), 10.0),
            fast_with(
                FastConfig {
                    alpha: 100.0,
                    beta: 100.0,
                    ..config("paper")
                },
                10.0,
            ),
        ];
        let mut last = Vec::new();
        let mut phases: Vec<&'static str> = Vec::new();
        share_bottleneck(&mut flows, capacity, base, 400, |f, w, rtt| {
            let q = rtt - base;
            last.push((w[0] * q / rtt, w[1] * q / rtt, w[0] / w[1]));
            if phases.last() != Some(&f[0].phase()) {
                phases.push(f[0].phase());
            }
        });
        for &(backlog_a, backlog_b, ratio) in &last[last.len() - 20..] {
            assert!((backlog_a / 200.0 - 1.0).abs() < 0.01, "{backlog_a}");
            assert!((backlog_b / 100.0 - 1.0).abs() < 0.01, "{backlog_b}");
            assert!((ratio / 2.0 - 1.0).abs() < 0.01, "{ratio}");
        }
        assert_eq!(phases.first(), Some(&"slow_start"));
        assert!(phases.contains(&"fast_convergence"), "{phases:?}");
        assert_eq!(phases.last(), Some(&"equilibrium"), "{phases:?}");
    }

    #[test]
    fn equal_alpha_gets_equal_rates_whatever_the_propagation_delay() {
        // Two paper-preset flows with 20 ms and 100 ms propagation delay share 10,000 packets/s.
        // Static link model: the queueing delay q solves Σ w_i/(d_i + q) = capacity. At the
        // fixed point both flows keep 200 packets queued, so q = 400/10,000 = 40 ms and each gets
        // 5,000 packets/s (windows 300 and 700), independent of d_i (seed 000's FAST property).
        let capacity = 10_000.0;
        let delays = [0.020, 0.100];
        let mut flows = [
            fast_with(config("paper"), 10.0),
            fast_with(config("paper"), 10.0),
        ];
        let mut paths = [Path::new(), Path::new()];
        let queueing_delay = |w: &[f64]| {
            let excess =
                |q: f64| w.iter().zip(&delays).map(|(w, d)| w / (d + q)).sum::<f64>() - capacity;
            let (mut lo, mut hi) = (0.0, w.iter().sum::<f64>() / capacity);
            if excess(0.0) <= 0.0 {
                return 0.0;
            }
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if excess(mid) > 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        let mut last = [(0.0, 0.0); 2];
        // Each flow runs its own round trips; the one whose next round starts first goes next.
        while paths.iter().map(|p| p.now).min().unwrap() < Time::from_secs_f64(60.0) {
            let i = if paths[0].now <= paths[1].now { 0 } else { 1 };
            let w = [flows[0].cwnd().round(), flows[1].cwnd().round()];
            let q = queueing_delay(&w);
            let r = Round {
                rtt: delays[i] + q,
                acks: w[i] as u64,
                w_old: w[i],
                in_flight: w[i],
            };
            paths[i].round(&mut flows[i], r);
            last[i] = (w[i] / (delays[i] + q), w[i] * q / (delays[i] + q));
        }
        let [(rate_short, backlog_short), (rate_long, backlog_long)] = last;
        assert!((rate_short / 5000.0 - 1.0).abs() < 0.01, "{last:?}");
        assert!((rate_long / 5000.0 - 1.0).abs() < 0.01, "{last:?}");
        assert!((backlog_short / 200.0 - 1.0).abs() < 0.01, "{last:?}");
        assert!((backlog_long / 200.0 - 1.0).abs() < 0.01, "{last:?}");
    }

    #[test]
    fn ns2_preset_flows_converge_to_alpha_each() {
        // Three ns-2-default flows (alpha 100) on the same 400-packet pipe: 300 packets queued.
        let (capacity, base) = (10_000.0, 0.040);
        let mut flows: Vec<Fast> = (0..3).map(|_| fast_with(config("ns2"), 10.0)).collect();
        let mut tail = Vec::new();
        share_bottleneck(&mut flows, capacity, base, 600, |_, w, rtt| {
            let q = rtt - base;
            tail.push(w.iter().map(|w| w * q / rtt).collect::<Vec<_>>());
        });
        for backlogs in &tail[tail.len() - 20..] {
            for b in backlogs {
                assert!((b / 100.0 - 1.0).abs() < 0.01, "{backlogs:?}");
            }
        }
    }

    /// Feeds `rounds` round trips of 100 ACKs at a fixed `rtt` after one sample at `base`; the
    /// acknowledged packets always saw a 400-packet window, so the target is fixed at
    /// `400·base/rtt + alpha`. Returns, per round, the windows set by updates in that round.
    fn updates_at_fixed_rtt(cfg: FastConfig, base: f64, rtt: f64, rounds: usize) -> Vec<Vec<f64>> {
        let mut cc = fast_with(cfg, 10.0);
        let mut path = Path::new();
        let once = Round {
            rtt: base,
            acks: 1,
            w_old: 10.0,
            in_flight: 12.0,
        };
        path.round(&mut cc, once);
        // 12 packets in flight: the EWMA weight is min(3/12, 1/4) = 1/4, so avgRTT equals `rtt`
        // to 1e-12 after a hundred samples.
        let r = Round {
            rtt,
            acks: 100,
            w_old: 400.0,
            in_flight: 12.0,
        };
        (0..rounds)
            .map(|_| {
                let mut set = vec![];
                let mut w = cc.cwnd();
                path.round_with(&mut cc, r, |cc, _| {
                    if cc.cwnd() != w {
                        set.push(cc.cwnd());
                        w = cc.cwnd();
                    }
                });
                set
            })
            .collect()
    }

    #[test]
    fn distance_to_a_fixed_target_shrinks_by_one_minus_gamma_per_update() {
        for gamma in [0.5, 0.25] {
            let cfg = FastConfig {
                gamma,
                min2w_cap: false,
                pace_increments: false,
                ..config("paper")
            };
            // Base 60 ms, RTT 100 ms: target 400 · 0.6 + 200 = 440 packets.
            let rounds = updates_at_fixed_rtt(cfg, 0.060, 0.100, 4);
            // Start from the 11 packets left by the one MI step of the first sample.
            let windows: Vec<f64> = std::iter::once(11.0)
                .chain(rounds.into_iter().flatten())
                .collect();
            assert!(windows.len() >= 8, "{windows:?}");
            for pair in windows.windows(2) {
                let ratio = (440.0 - pair[1]) / (440.0 - pair[0]);
                assert!((ratio - (1.0 - gamma)).abs() < 1e-9, "{ratio} {windows:?}");
            }
        }
    }

    #[test]
    fn updates_wait_for_the_period_and_alternate_round_trips() {
        let cfg = FastConfig {
            gamma: 0.25,
            min2w_cap: false,
            pace_increments: false,
            ..config("paper")
        };
        let per_round = |cfg, base, rtt, rounds| -> Vec<usize> {
            updates_at_fixed_rtt(cfg, base, rtt, rounds)
                .iter()
                .map(Vec::len)
                .collect()
        };
        // RTT 100 ms, ACKs every millisecond, period 20 ms: updates at 1, 21, 41, 61 and 81 ms of
        // every other round trip (ns-2 `on_first_rtt_`), none in between.
        assert_eq!(per_round(cfg, 0.060, 0.100, 6), [0, 5, 0, 5, 0, 5]);
        let every_rtt = FastConfig {
            every_other_rtt: false,
            ..cfg
        };
        assert_eq!(per_round(every_rtt, 0.060, 0.100, 3), [5, 5, 5]);
        // RTT 5 ms and a 20 ms period: one update per four round trips.
        let counts = per_round(every_rtt, 0.003, 0.005, 16);
        assert_eq!(counts.iter().sum::<usize>(), 4, "{counts:?}");
        assert!(counts.iter().all(|&n| n <= 1));
    }

    #[test]
    fn slow_start_doubles_per_rtt_while_queueing_delay_is_below_mi_threshold() {
        let mut cc = fast_with(config("ns2"), 10.0);
        let mut path = Path::new();
        let round = |rtt: f64, n: f64| Round {
            rtt,
            acks: n as u64,
            w_old: n,
            in_flight: n,
        };
        for expect in [20.0, 40.0, 80.0] {
            let w = cc.cwnd();
            path.round(&mut cc, round(0.050, w));
            assert_eq!(cc.cwnd(), expect);
            assert_eq!(cc.phase(), "slow_start");
        }
        // 0.5 ms of queueing is still below the 0.75 ms threshold.
        path.round(&mut cc, round(0.0505, 80.0));
        assert_eq!(cc.cwnd(), 160.0);
        assert_eq!(cc.phase(), "slow_start");
        // 10 ms of queueing. With eta = 1/256 the average after k samples is
        // 60 − (60 − avg₀)·(255/256)^k ms; MI continues only while that is below 50.75 ms.
        let mut avg = cc.avg_rtt;
        let mut expected_mi_acks = 0;
        loop {
            avg += (0.060 - avg) / 256.0;
            if avg - 0.050 >= 0.00075 {
                break;
            }
            expected_mi_acks += 1;
        }
        assert!((10..=30).contains(&expected_mi_acks), "{expected_mi_acks}");
        let mut mi_acks = 0;
        let mut prev = cc.cwnd();
        path.round_with(&mut cc, round(0.060, 160.0), |cc, _| {
            if cc.phase() == "slow_start" {
                assert_eq!(cc.cwnd(), prev + 1.0, "one packet per packet acked");
                mi_acks += 1;
            }
            prev = cc.cwnd();
        });
        assert_eq!(mi_acks, expected_mi_acks);
        assert!(cc.cwnd() < 2.0 * 160.0, "no longer doubling: {}", cc.cwnd());
        assert_ne!(cc.phase(), "slow_start");
    }

    #[test]
    fn the_paper_caps_an_update_at_doubling_and_ns2_does_not() {
        let first_update = |cfg: FastConfig| {
            let mut cc = fast_with(
                FastConfig {
                    pace_increments: false,
                    every_other_rtt: false,
                    ..cfg
                },
                10.0,
            );
            cc.on_ack(&ack_of(Time::from_millis(50), 0.050, 0, 1, 10.0, 12.0));
            assert_eq!(cc.cwnd(), 11.0, "one MI step");
            for pn in 1..1000u64 {
                let before = cc.cwnd();
                let now = Time::from_millis(50 + pn);
                cc.on_ack(&ack_of(now, 0.080, pn, 1000, 10.0, 12.0));
                if cc.phase() != "slow_start" && cc.cwnd() != before {
                    // The law with the estimates this ACK left: w_old = 10, base 50 ms.
                    let law = 0.5 * before + 0.5 * (10.0 * cc.base_rtt / cc.avg_rtt + cfg.alpha);
                    return (before, cc.cwnd(), law);
                }
            }
            panic!("no update");
        };
        let (before, after, law) = first_update(config("paper"));
        assert!(law > 2.0 * before);
        assert_eq!(after, 2.0 * before);
        let (before, after, law) = first_update(config("ns2"));
        assert!(law > 2.0 * before);
        assert!((after - law).abs() < 1e-9, "{after} {law}");
    }

    #[test]
    fn an_increase_is_released_step_by_step_over_one_update_period() {
        // ns-2 preset, window 100: one 50 ms sample, then rounds of 100 ACKs at 80 ms (one ACK
        // every 0.8 ms); the next update comes 10 ms (13 ACKs) after the first.
        let run = |cfg: FastConfig, base: f64, rtt: f64| {
            let mut cc = fast_with(cfg, 100.0);
            let mut path = Path::new();
            let once = Round {
                rtt: base,
                acks: 1,
                w_old: 100.0,
                in_flight: 100.0,
            };
            path.round(&mut cc, once);
            let r = Round {
                rtt,
                acks: 100,
                w_old: 100.0,
                in_flight: 100.0,
            };
            let mut prev = cc.cwnd();
            let mut update = None;
            let mut trace = vec![];
            while trace.len() < 12 {
                path.round_with(&mut cc, r, |cc, _| {
                    if update.is_none() && cc.phase() != "slow_start" && cc.cwnd() != prev {
                        // The law with this ACK's estimates (w_old = 100, gamma = 1/2), and the
                        // ACKs of the last round trip scaled to one 10 ms period.
                        let target =
                            0.5 * prev + 0.5 * (100.0 * cc.base_rtt / cc.avg_rtt + cc.cfg.alpha);
                        let per_period = cc.acks_last_round as f64 * 0.010 / cc.avg_rtt;
                        update = Some((prev, target, per_period));
                    }
                    if update.is_some() {
                        trace.push(cc.cwnd());
                    }
                    prev = cc.cwnd();
                });
            }
            let (start, target, per_period) = update.unwrap();
            (start, target, per_period, trace)
        };
        let (start, target, per_period, trace) = run(config("ns2"), 0.050, 0.080);
        let total = target - start;
        assert!(total > 10.0, "{total}");
        assert!(per_period > 12.0, "{per_period}");
        let step = total / per_period;
        for (i, w) in trace[..12].iter().enumerate() {
            let expect = start + (i + 1) as f64 * step;
            assert!((w - expect).abs() < 1e-9, "ACK {i}: {w} vs {expect}");
        }
        assert!(trace[11] < target, "not all of it before the period ends");
        // Without pacing, or with a base RTT under 4 ms, the increase is applied at once.
        let unpaced = FastConfig {
            pace_increments: false,
            ..config("ns2")
        };
        let (start, target, _, trace) = run(unpaced, 0.050, 0.080);
        assert!((trace[0] - target).abs() < 1e-9 && target > start + 10.0);
        // (MI off, so that the first update is an increase rather than a cut after MI.)
        let no_mi = FastConfig {
            mi_threshold: 0.0,
            ..config("ns2")
        };
        let (start, target, _, trace) = run(no_mi, 0.002, 0.006);
        assert!(
            (trace[0] - target).abs() < 1e-9 && target > start,
            "{start} {target} {trace:?}"
        );
    }

    #[test]
    fn rtt_average_weight_is_three_over_w_capped() {
        let avg_after = |preset: &str, in_flight: f64| {
            let mut cc = fast_with(config(preset), 10.0);
            cc.on_ack(&ack_of(
                Time::from_millis(100),
                0.100,
                0,
                1,
                10.0,
                in_flight,
            ));
            cc.on_ack(&ack_of(
                Time::from_millis(300),
                0.200,
                1,
                2,
                10.0,
                in_flight,
            ));
            (cc.avg_rtt().unwrap().as_secs_f64(), cc.base_rtt().unwrap())
        };
        let (avg, base) = avg_after("paper", 12.0);
        assert!((avg - 0.125).abs() < 1e-12, "eta = 1/4: {avg}");
        assert_eq!(base, Duration::from_millis(100));
        assert!(
            (avg_after("paper", 3000.0).0 - 0.1001).abs() < 1e-12,
            "eta = 3/3000"
        );
        assert!((avg_after("ns2", 12.0).0 - (0.1 + 0.1 / 256.0)).abs() < 1e-12);
        assert!((avg_after("ns2", 3000.0).0 - 0.1001).abs() < 1e-12);
    }

    #[test]
    fn dead_band_holds_the_window_when_the_backlog_is_between_alpha_and_beta() {
        let cfg = FastConfig {
            alpha: 100.0,
            beta: 300.0,
            pace_increments: false,
            every_other_rtt: false,
            ..config("paper")
        };
        // Base 50 ms, samples 100 ms: q/avgRTT = 1/2, so the backlog is w_old/2.
        let run = |w_old: f64| {
            let mut cc = fast_with(cfg, 150.0);
            cc.on_ack(&ack_of(Time::from_millis(50), 0.050, 0, 1, w_old, 4.0));
            cc.on_ack(&ack_of(Time::from_millis(60), 0.100, 1, 2, w_old, 4.0));
            let w = cc.cwnd();
            for pn in 2..1000u64 {
                cc.on_ack(&ack_of(
                    Time::from_millis(60 + pn),
                    0.100,
                    pn,
                    200,
                    w_old,
                    4.0,
                ));
            }
            (w, cc.cwnd(), cc.phase())
        };
        // Backlog 200 in [100, 300): frozen.
        let (w, after, phase) = run(400.0);
        assert_eq!((after, phase), (w, "equilibrium"));
        // Backlog 50 < alpha: the law moves the window; 150 → 0.5·150 + 0.5·(100·0.5 + 100) =
        // 150 at the first update, then stays; fast convergence because 50 is far from 100.
        let (_, after, phase) = run(100.0);
        assert!((after - 150.0).abs() < 1e-6, "{after}");
        assert_eq!(phase, "fast_convergence");
    }

    #[test]
    fn loss_halves_and_timeout_restarts_from_two_packets() {
        let mut cc = fast_with(config("ns2"), 100.0);
        cc.on_loss(&loss(true));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (50.0, 50.0));
        assert_eq!(cc.phase(), "loss_recovery");
        cc.on_loss(&loss(false));
        assert_eq!(cc.cwnd(), 50.0, "one halving per window");
        let in_recovery = AckEvent {
            in_recovery: true,
            ..ack_of(Time::from_millis(10), 0.05, 0, 10, 50.0, 50.0)
        };
        cc.on_ack(&in_recovery);
        assert_eq!(cc.cwnd(), 50.0, "frozen during recovery");
        cc.on_rto(&rto(1));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (2.0, 25.0));
        assert_eq!(cc.phase(), "slow_start");
        cc.on_rto(&rto(2));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (2.0, 25.0));
    }

    #[test]
    fn presets_and_parameter_checks() {
        let paper = config("paper");
        let ns2 = config("ns2");
        // The defaults are the paper's values with the four options for real hosts on.
        assert_eq!(
            FastConfig::from_params(&CcSpec::default_for("fast").unwrap().params),
            Ok(FastConfig {
                period_min: true,
                climb: 0.125,
                pace: true,
                mi_backlog: 4.0,
                ..paper
            })
        );
        assert!(!paper.period_min && !paper.pace && paper.climb == 0.0);
        assert!(!ns2.period_min && !ns2.pace && ns2.climb == 0.0);
        assert_eq!((paper.mi_backlog, ns2.mi_backlog), (0.0, 0.0));
        assert_eq!(
            (paper.alpha, paper.beta, ns2.alpha, ns2.beta),
            (200.0, 200.0, 100.0, 100.0)
        );
        assert_eq!((paper.gamma, ns2.gamma), (0.5, 0.5));
        assert_eq!(paper.update_period, Duration::from_millis(20));
        assert_eq!(ns2.update_period, Duration::from_millis(10));
        assert_eq!((paper.eta_cap, ns2.eta_cap), (0.25, 1.0 / 256.0));
        assert_eq!((paper.min2w_cap, ns2.min2w_cap), (true, false));
        assert_eq!((paper.mi_threshold, ns2.mi_threshold), (0.00075, 0.00075));
        assert_eq!((paper.rto_cwnd, ns2.rto_cwnd), (2.0, 2.0));

        let spec: CcSpec = "fast:preset=ns2,alpha=300".parse().unwrap();
        assert_eq!(spec.to_string().parse::<CcSpec>(), Ok(spec.clone()));
        assert_eq!(FastConfig::from_params(&spec.params).unwrap().beta, 300.0);
        let e = "fast:alpha=200,beta=150".parse::<CcSpec>().unwrap_err();
        assert!(
            e.to_string()
                .contains("beta (150) must be at least alpha (200)"),
            "{e}"
        );
        assert!("fast:gamma=0".parse::<CcSpec>().is_err());
        let cc = "fast"
            .parse::<CcSpec>()
            .unwrap()
            .build(&Setup::default())
            .unwrap();
        assert_eq!(
            (cc.name(), cc.cwnd(), cc.phase()),
            ("fast", 10.0, "slow_start")
        );
    }

    #[test]
    fn the_largest_packet_number_does_not_overflow_the_round_counter() {
        let mut cc = fast_with(config("paper"), 10.0);
        let top = AckEvent {
            largest_acked: u64::MAX,
            next_packet: 0,
            ..ack_of(Time::from_millis(100), 0.1, 0, 0, 10.0, 10.0)
        };
        cc.on_ack(&top);
        // The first sample sets baseRTT = avgRTT: no queue, so one MI step.
        assert_eq!(cc.cwnd(), 11.0);
        cc.on_ack(&top);
        assert_eq!(cc.cwnd(), 12.0);
    }

    #[test]
    fn an_ack_for_two_packets_weighs_as_two_rtt_samples() {
        // Window 300: η = 3/300 = 0.01. First sample 100 ms sets avgRTT; then one ACK of two
        // packets at 200 ms moves it by 1 − 0.99² = 0.0199 of the gap: 100 + 1.99 = 101.99 ms,
        // exactly where two one-packet ACKs at 200 ms would leave it (100 + 1 + 0.99).
        let mut cc = fast_with(config("paper"), 300.0);
        cc.on_ack(&ack_of(Time::from_millis(100), 0.1, 0, 300, 300.0, 300.0));
        let stretch = AckEvent {
            acked_packets: 2,
            acked_bytes: 2 * MSS,
            ..ack_of(Time::from_millis(300), 0.2, 2, 300, 300.0, 300.0)
        };
        cc.on_ack(&stretch);
        let avg = cc.avg_rtt().unwrap().as_secs_f64() * 1e3;
        assert!((avg - 101.99).abs() < 1e-6, "avgRTT {avg} ms");
    }

    /// Seed 000's first row on the idealised path: 1 Gb/s, 180 ms, a 1.5-BDP buffer, and a
    /// receiver that acknowledges every second packet (as the transports do by default).
    fn settle_with_delayed_acks() -> Vec<crate::bottleneck::Sample> {
        use crate::bottleneck::{run, PathConfig};
        let setup = Setup::for_mtu(1500);
        let mut path = PathConfig::new(1e9, Duration::from_millis(180), setup.mss);
        path.buffer_packets = 22_500;
        path.ack_every = 2;
        let mut cc = Fast::new(setup, config("paper"));
        let (samples, _) = run(
            &path,
            &setup,
            &mut cc,
            Duration::from_secs(16),
            Duration::from_millis(100),
            &mut |_, _| {},
        );
        samples
    }

    #[test]
    fn delayed_acks_settle_at_alpha_packets_queued() {
        // BDP = 1e9 / (1500·8) · 0.18 = 15,000 packets; equilibrium is BDP + α = 15,200 with
        // 200 packets queued. Weighting each ACK as one sample made the window cycle here from
        // about 14,000 (queue empty, MI re-entered) to 30,000 every 1.5–2 s.
        let samples = settle_with_delayed_acks();
        let tail: Vec<_> = samples
            .iter()
            .filter(|s| s.t >= Time::from_millis(10_000))
            .collect();
        assert!(tail.len() >= 50);
        let (lo, hi) = tail.iter().fold((f64::MAX, 0.0f64), |(lo, hi), s| {
            (lo.min(s.cwnd), hi.max(s.cwnd))
        });
        let queues: Vec<u64> = tail.iter().map(|s| s.queue).collect();
        println!("cwnd {lo:.0}..{hi:.0}, queue {queues:?}");
        assert!(lo >= 15_100.0 && hi <= 15_300.0, "cwnd {lo:.0}..{hi:.0}");
        assert!(
            queues.iter().all(|&q| (150..=250).contains(&q)),
            "{queues:?}"
        );
        assert!(tail.iter().all(|s| s.phase == "equilibrium"));
    }

    #[test]
    fn the_handshake_rtt_lowers_base_rtt_only() {
        // Handshake 140 ms; data ACKs then see 146 ms of which 6 ms are queue. baseRTT must be
        // 140 (q = 6 ms, above the 0.75 ms MI threshold: no MI step), avgRTT the data's 146.
        let mut cc = fast_with(config("paper"), 10.0);
        cc.on_rtt_sample(Time::from_millis(140), Duration::from_millis(140));
        assert_eq!(cc.base_rtt(), Some(Duration::from_millis(140)));
        assert_eq!(cc.avg_rtt(), None);
        cc.on_ack(&ack_of(Time::from_millis(286), 0.146, 0, 10, 10.0, 10.0));
        assert_eq!(cc.base_rtt(), Some(Duration::from_millis(140)));
        assert_eq!(cc.avg_rtt(), Some(Duration::from_millis(146)));
        assert_ne!(cc.phase(), "slow_start");
        // Without it the first data sample is taken as the propagation delay: MI, 10 → 11.
        let mut blind = fast_with(config("paper"), 10.0);
        blind.on_ack(&ack_of(Time::from_millis(286), 0.146, 0, 10, 10.0, 10.0));
        assert_eq!((blind.cwnd(), blind.phase()), (11.0, "slow_start"));
    }

    /// `period_min`: the estimate is the smallest sample of each 20 ms period, taken when the
    /// period ends. Delay added to some packets of a period (a host's stall, a burst's queue)
    /// does not count; delay every packet of a period sees (a standing queue) does. The paper's
    /// EWMA counts both.
    #[test]
    fn period_min_ignores_spikes_but_not_a_standing_queue() {
        let base = 0.1;
        let run = |period_min: bool, rtt_of: &dyn Fn(u64) -> f64| -> Vec<f64> {
            let cfg = FastConfig {
                period_min,
                ..config("paper")
            };
            let mut cc = fast_with(cfg, 1000.0);
            let mut avg = Vec::new();
            // One ACK per ms for 200 ms; in_flight 1000 (η = 3/1000).
            for k in 0..200u64 {
                let now = Time::from_millis(k + 1);
                cc.on_ack(&ack_of(now, rtt_of(k), k, 2000, 1000.0, 1000.0));
                avg.push(cc.avg_rtt().unwrap().as_secs_f64());
            }
            avg
        };
        // A 5 ms spike on one ACK in three: the first sample (a spike) stands until the first
        // period ends at ACK 20; from then on every period's minimum is the base.
        let spiky = |k: u64| if k % 3 == 0 { base + 0.005 } else { base };
        let min = run(true, &spiky);
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(min[19], base + 0.005));
        assert!(min[20..].iter().all(|&a| near(a, base)), "{min:?}");
        let ewma = run(false, &spiky);
        assert!(
            ewma[199] > base + 0.001,
            "the EWMA counts the spikes: {}",
            ewma[199]
        );
        // A standing queue of 3 ms from ACK 100 on. Periods end at ACKs 20, 40, …, each holding
        // the ACKs since the last end: the one ending at ACK 100 still has unqueued samples, the
        // one ending at ACK 120 only queued ones, and reports the queue.
        let standing = |k: u64| if k >= 100 { base + 0.003 } else { base };
        let min = run(true, &standing);
        let first = min.iter().position(|&a| a > base + 0.0029).unwrap();
        assert_eq!(first, 120);
        assert!(near(min[199], base + 0.003));
    }

    /// `mi_backlog`: MI ends at a queueing delay above the threshold only when it holds that
    /// many of the flow's packets (w_old·q/avgRTT). A 50-packet window on a 180-ms path: 2 ms
    /// of delay on every sample is 0.55 packets of ours and MI goes on (the papers' rule stops
    /// it); 20 ms is 5 packets and ends it.
    #[test]
    fn mi_ends_only_at_a_queue_holding_mi_backlog_packets() {
        let base = 0.18;
        let run = |mi_backlog: f64, queue: f64| -> (String, f64) {
            let cfg = FastConfig {
                period_min: true,
                climb: 0.0,
                mi_backlog,
                ..config("paper")
            };
            let mut cc = fast_with(cfg, 50.0);
            // One ACK per ms: 40 at the base RTT, then 160 delayed by `queue`.
            for k in 0..200u64 {
                let rtt = if k < 40 { base } else { base + queue };
                cc.on_ack(&ack_of(Time::from_millis(k + 1), rtt, k, 1000, 50.0, 50.0));
            }
            (cc.phase().to_string(), cc.cwnd())
        };
        let (phase, w) = run(4.0, 0.002);
        assert_eq!(phase, "slow_start", "window {w}");
        assert_eq!(w, 250.0, "MI adds every packet acknowledged");
        // MI ended: the window law took over (it then aims at α = 200 packets of backlog).
        let (phase, w) = run(0.0, 0.002);
        assert_ne!(phase, "slow_start", "the papers' rule ends MI (window {w})");
        let (phase, w) = run(4.0, 0.020);
        assert_ne!(phase, "slow_start", "5 packets of backlog end MI ({w})");
    }

    /// `pace`: no rate without it; with it Linux's rule on FAST's average, 200 % of cwnd/avgRTT
    /// in MI and 120 % from the first ACK that finds a queue, which also marks ssthresh.
    #[test]
    fn pace_asks_for_linux_pacing_and_marks_the_end_of_mi() {
        let mss = Setup::default().mss as f64;
        let mut plain = fast_with(config("paper"), 10.0);
        plain.on_ack(&ack_of(Time::from_millis(100), 0.1, 0, 10, 10.0, 10.0));
        assert_eq!(plain.pacing_rate(), None);
        let cfg = FastConfig {
            pace: true,
            ..config("paper")
        };
        let mut cc = fast_with(cfg, 10.0);
        assert_eq!(cc.pacing_rate(), None, "no RTT yet");
        cc.on_ack(&ack_of(Time::from_millis(100), 0.1, 0, 10, 10.0, 10.0));
        assert_eq!(
            (cc.phase(), cc.ssthresh()),
            ("slow_start", INFINITE_SSTHRESH)
        );
        let w = cc.cwnd();
        assert_eq!(cc.pacing_rate(), Some((2.0 * w * mss / 0.1) as u64));
        // A queue of 5 ms on every sample: MI ends at the first ACK whose average shows it.
        let mut k = 1;
        while cc.phase() == "slow_start" {
            cc.on_ack(&ack_of(
                Time::from_millis(100 + k),
                0.105,
                k,
                40,
                10.0,
                10.0,
            ));
            k += 1;
            assert!(k < 100, "MI never ended");
        }
        assert_eq!(cc.ssthresh(), cc.cwnd().floor());
        let rate = 1.2 * cc.cwnd() * mss / cc.avg_rtt().unwrap().as_secs_f64();
        assert_eq!(cc.pacing_rate(), Some(rate as u64));
    }
}
