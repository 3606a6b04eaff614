//! HighSpeed TCP (RFC 3649): a window-dependent increase `a(w)` and decrease `b(w)` that turn
//! Reno's response function into one that reaches 10 Gb/s windows at realistic loss rates.
//!
//! Standard TCP's window in equilibrium is `w ≈ 1.2/√p` at packet loss rate `p`: an 83,000-packet
//! window (10 Gb/s at 100 ms with 1500-byte packets) needs at most one loss in 5·10⁹ packets.
//! HighSpeed TCP keeps Reno below `Low_Window` = 38 packets and above it uses the response
//! function `w = 0.12/p^0.835`, a straight line in log-log space from (Low_Window, Low_P) to
//! (High_Window = 83,000, High_P = 10⁻⁷):
//!
//! ```text
//! log p(w) = log Low_P + (log w − log Low_W)·(log High_P − log Low_P)/(log High_W − log Low_W)
//! b(w)     = (High_Decrease − 0.5)·(log w − log Low_W)/(log High_W − log Low_W) + 0.5
//! a(w)     = w²·p(w)·2·b(w)/(2 − b(w))
//! ```
//!
//! with `Low_P = 1.5/Low_Window²` (the standard response function at Low_Window) and
//! `High_Decrease = 0.1`. In congestion avoidance every ACK adds `a(w)/w`, so one round trip adds
//! `a(w)` packets; the first loss of a window leaves `(1 − b(w))·w`. `a` rises from 1 at 38
//! packets to about 72 at 83,000 while `b` falls from 1/2 to 1/10, so a large window both grows
//! faster and gives up less on each loss. The `a(w)` expression is what makes an AIMD flow with
//! these parameters settle on the response function: an AIMD(a, b) flow averages
//! `w ≈ √(a·(2−b)/(2·b·p))`.
//!
//! Two ways to get `a` and `b` (`mode`):
//! - `table` (default): RFC 3649 Appendix B as Linux `tcp_highspeed.c` stores it, 72 rows of
//!   (window, `b·256`), with `a = row index + 1`. Row `i` applies to windows in
//!   `(window[i−1], window[i]]`, so a window just above 38 already uses `a = 2`, `b = 112/256`,
//!   and windows above 89,053 stay on the last row (`a = 72`, `b = 24/256`). Linux keeps the row
//!   index between ACKs and walks it up or down as the window moves; so do we.
//! - `formula`: the expressions above, with `low_window`, `high_window`, `high_p` and
//!   `high_decrease` as parameters (ns-2's `Agent/TCP` HighSpeed variables). They give
//!   a(1058) = 8.31, a(10661) = 30.94, b(10661) = 0.207, b(84035) = 0.099, where the table says
//!   8, 30, 52/256 = 0.203, 25/256 = 0.098.
//!
//! The table rounds up: a row's `a` applies from the previous row's window on (a = 2 from 39
//! packets, where the formula gives 1.02). With one loss every 1/p packets the table's sawtooth
//! therefore averages above the response function: 303 packets instead of 263 at p = 10⁻⁴
//! (+16 %), +5 % at 10⁻⁵, +1 % at 10⁻⁶, while the formula mode stays within 2.5 % (269, 1840 and
//! 12,296 packets against 263, 1795 and 12,280).
//!
//! Sources: RFC 3649 §5 and Appendix B; Linux `net/ipv4/tcp_highspeed.c` (table, index walk,
//! `ssthresh = max(cwnd − (cwnd·md >> 8), 2)`); ns-2 `tcp.cc` (`increase_param`, `decrease_param`)
//! for the formula with `Low_P = 1.5/Low_Window²`.
//!
//! Deviations and interpretation:
//! - Linux adds `(ai+1)/cwnd` once per ACK and ignores how many packets the ACK covers, so
//!   delayed and stretch ACKs slow it down (half the RFC's growth with delayed ACKs). By default
//!   we scale the increase by the packets acknowledged, as the RFC's per-packet `a(w)/w` intends;
//!   `per_ack_ignores_acked = true` reproduces Linux.
//! - Linux reduces with the row index left by the last congestion-avoidance ACK, so a loss that
//!   ends slow start (where the index never moved) halves the window. We move the index to the
//!   current window before reducing, as RFC 3649 defines `b(w)` for the window at the loss.
//! - Windows are floating point, so `a(w)/w` per ACK is applied exactly instead of through
//!   Linux's integer `snd_cwnd_cnt` credit, and Linux's clamp of the window to 2³²/128 (which
//!   only protects its 32-bit multiply) is not needed.
//! - The RFC defines the formulas up to High_Window; beyond it the formula mode extrapolates the
//!   log-linear `p(w)` and `b(w)`, keeping `b(w)` at or above `high_decrease/2` so that it cannot
//!   reach zero or turn negative (it would at about 570,000 packets with the RFC constants).
//! - Slow start is Reno's (Linux `tcp_slow_start`); a stretch ACK that crosses the threshold
//!   feeds its leftover packets into congestion avoidance, where Linux drops them. RFC 3742
//!   limited slow start (used with HighSpeed in ns-2 experiments) is not implemented.
//! - After a timeout the threshold follows the loss rule and the window restarts from one packet.

use crate::controller::{CongestionControl, Setup, INFINITE_SSTHRESH};
use crate::event::{AckEvent, LossEvent, RtoEvent};
use crate::params::{ParamError, ParamKind, ParamSpec, Params, Value};
use crate::registry::Algorithm;
use crate::window::{
    in_slow_start, reduce_to_threshold, restart_after_timeout, slow_start, timeout_lowers_threshold,
};

/// The parameters that only `mode=formula` reads.
const FORMULA_PARAMS: [&str; 4] = ["low_window", "high_window", "high_p", "high_decrease"];

/// HighSpeed's parameters: the response (table or formula), per-ACK counting, and the formula's
/// anchors.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "mode",
        kind: ParamKind::Choice(&["table", "formula"]),
        default: Value::Choice("table"),
        unit: "",
        help: "table: RFC 3649 Appendix B as in Linux (72 rows); formula: RFC 3649 §5 expressions",
    },
    ParamSpec {
        name: "per_ack_ignores_acked",
        kind: ParamKind::Bool,
        default: Value::Bool(false),
        unit: "",
        help:
            "add a(w)/cwnd once per ACK whatever it acknowledges (Linux); false = per packet (RFC)",
    },
    ParamSpec {
        name: "low_window",
        kind: ParamKind::Float { min: 4.0, max: 1e6 },
        default: Value::Float(38.0),
        unit: "packets",
        help: "formula mode: at or below this window, standard TCP (a = 1, b = 0.5)",
    },
    ParamSpec {
        name: "high_window",
        kind: ParamKind::Float {
            min: 10.0,
            max: 1e9,
        },
        default: Value::Float(83000.0),
        unit: "packets",
        help: "formula mode: the window reached at loss rate high_p",
    },
    ParamSpec {
        name: "high_p",
        kind: ParamKind::Float {
            min: 1e-15,
            max: 0.1,
        },
        default: Value::Float(1e-7),
        unit: "",
        help: "formula mode: the loss rate that sustains high_window",
    },
    ParamSpec {
        name: "high_decrease",
        kind: ParamKind::Float {
            min: 0.01,
            max: 0.5,
        },
        default: Value::Float(0.1),
        unit: "",
        help: "formula mode: b(w) at high_window",
    },
];

/// HighSpeed TCP as the registry lists it (`highspeed`).
pub const ALGORITHM: Algorithm = Algorithm {
    name: "highspeed",
    summary: "HighSpeed TCP: increase a(w) per RTT and decrease b(w) that depend on the window",
    source: "RFC 3649; Linux tcp_highspeed.c",
    params: PARAMS,
    presets: &[],
    build,
};

fn build(p: &Params, setup: &Setup) -> Result<Box<dyn CongestionControl>, ParamError> {
    let response = match p.choice("mode") {
        "formula" => Response::Formula(
            Formula::new(
                p.f64("low_window"),
                p.f64("high_window"),
                p.f64("high_p"),
                p.f64("high_decrease"),
            )
            .map_err(|reason| p.invalid(reason))?,
        ),
        _ => {
            if let Some((name, _)) = p
                .non_default()
                .find(|(name, _)| FORMULA_PARAMS.contains(name))
            {
                return Err(p.invalid(format!(
                    "`{name}` is only used with mode=formula; add mode=formula or drop it"
                )));
            }
            Response::Table
        }
    };
    Ok(Box::new(HighSpeed::new(
        *setup,
        response,
        p.bool("per_ack_ignores_acked"),
    )))
}

/// RFC 3649 Appendix B as Linux stores it: (window in packets, decrease factor × 256). Row `i`
/// has `a = i + 1` and applies to windows above row `i − 1`'s and up to its own.
pub const TABLE: [(u32, u32); 72] = [
    (38, 128),
    (118, 112),
    (221, 104),
    (347, 98),
    (495, 93),
    (663, 89),
    (851, 86),
    (1058, 83),
    (1284, 81),
    (1529, 78),
    (1793, 76),
    (2076, 74),
    (2378, 72),
    (2699, 71),
    (3039, 69),
    (3399, 68),
    (3778, 66),
    (4177, 65),
    (4596, 64),
    (5036, 62),
    (5497, 61),
    (5979, 60),
    (6483, 59),
    (7009, 58),
    (7558, 57),
    (8130, 56),
    (8726, 55),
    (9346, 54),
    (9991, 53),
    (10661, 52),
    (11358, 52),
    (12082, 51),
    (12834, 50),
    (13614, 49),
    (14424, 48),
    (15265, 48),
    (16137, 47),
    (17042, 46),
    (17981, 45),
    (18955, 45),
    (19965, 44),
    (21013, 43),
    (22101, 43),
    (23230, 42),
    (24402, 41),
    (25618, 41),
    (26881, 40),
    (28193, 39),
    (29557, 39),
    (30975, 38),
    (32450, 38),
    (33986, 37),
    (35586, 36),
    (37253, 36),
    (38992, 35),
    (40808, 35),
    (42707, 34),
    (44694, 33),
    (46776, 33),
    (48961, 32),
    (51258, 32),
    (53677, 31),
    (56230, 30),
    (58932, 30),
    (61799, 29),
    (64851, 28),
    (68113, 28),
    (71617, 27),
    (75401, 26),
    (79517, 26),
    (84035, 25),
    (89053, 24),
];

/// Move a table row index so that `TABLE[i−1].0 < w ≤ TABLE[i].0` (or `i` is the last row), by
/// the walk Linux does on every ACK: a few steps at most between consecutive ACKs.
pub fn walk_table_index(mut i: usize, w: f64) -> usize {
    i = i.min(TABLE.len() - 1);
    while i < TABLE.len() - 1 && w > TABLE[i].0 as f64 {
        i += 1;
    }
    while i > 0 && w <= TABLE[i - 1].0 as f64 {
        i -= 1;
    }
    i
}

/// The table's increase for window `w`: packets added per round trip.
pub fn table_a(w: f64) -> f64 {
    (walk_table_index(0, w) + 1) as f64
}

/// The table's decrease for window `w`: the fraction of the window given up on a loss.
pub fn table_b(w: f64) -> f64 {
    TABLE[walk_table_index(0, w)].1 as f64 / 256.0
}

/// The RFC 3649 §5 response function and the `a(w)`, `b(w)` derived from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Formula {
    /// At or below this window, in packets, the response is standard TCP's (`a = 1`, `b = 0.5`).
    pub low_window: f64,
    /// The window, in packets, that loss rate `high_p` sustains.
    pub high_window: f64,
    /// Standard TCP's loss rate at `low_window`, `1.5/low_window²` (derived, not set).
    pub low_p: f64,
    /// The loss rate that sustains `high_window`.
    pub high_p: f64,
    /// The decrease `b(w)` at `high_window`.
    pub high_decrease: f64,
}

impl Formula {
    /// RFC 3649's constants: Low_Window 38, High_Window 83,000, High_P 10⁻⁷, High_Decrease 0.1.
    pub fn rfc3649() -> Formula {
        Formula::new(38.0, 83000.0, 1e-7, 0.1).expect("RFC 3649 constants are consistent")
    }

    /// A response function through (low_window, 1.5/low_window²) and (high_window, high_p).
    pub fn new(
        low_window: f64,
        high_window: f64,
        high_p: f64,
        high_decrease: f64,
    ) -> Result<Formula, String> {
        let low_p = 1.5 / (low_window * low_window);
        if high_window <= low_window {
            return Err(format!(
                "high_window ({high_window}) must be larger than low_window ({low_window})"
            ));
        }
        if high_p >= low_p {
            return Err(format!(
                "high_p ({high_p}) must be below the standard-TCP loss rate at low_window, \
                 1.5/low_window² = {low_p:.3e}"
            ));
        }
        if high_decrease <= 0.0 || high_decrease > 0.5 {
            return Err(format!(
                "high_decrease ({high_decrease}) must be in (0, 0.5]"
            ));
        }
        Ok(Formula {
            low_window,
            high_window,
            low_p,
            high_p,
            high_decrease,
        })
    }

    /// How far `w` is from Low_Window towards High_Window on the log scale (0 at Low, 1 at High).
    fn log_position(&self, w: f64) -> f64 {
        (w / self.low_window).ln() / (self.high_window / self.low_window).ln()
    }

    /// The loss rate at which HighSpeed TCP's average window is `w`.
    pub fn p(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 1.5 / (w * w);
        }
        self.low_p * ((self.high_p / self.low_p).ln() * self.log_position(w)).exp()
    }

    /// The decrease: the fraction of the window given up on a loss.
    pub fn b(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 0.5;
        }
        let b = (self.high_decrease - 0.5) * self.log_position(w) + 0.5;
        b.max(self.high_decrease / 2.0)
    }

    /// The increase: packets added per round trip.
    pub fn a(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 1.0;
        }
        let b = self.b(w);
        w * w * self.p(w) * 2.0 * b / (2.0 - b)
    }
}

/// Where `a(w)` and `b(w)` come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Response {
    /// RFC 3649 Appendix B / Linux.
    Table,
    /// RFC 3649 §5.
    Formula(Formula),
}

/// HighSpeed TCP's state.
#[derive(Debug, Clone)]
pub struct HighSpeed {
    setup: Setup,
    response: Response,
    per_ack_ignores_acked: bool,
    cwnd: f64,
    ssthresh: f64,
    /// The table row of the current window (Linux `ca->ai`); unused in formula mode.
    row: usize,
}

impl HighSpeed {
    /// A controller in slow start with the initial window, using `response` for `a(w)` and `b(w)`;
    /// `per_ack_ignores_acked` adds `a(w)/cwnd` once per ACK (Linux) rather than per packet
    /// acknowledged (RFC 3649).
    pub fn new(setup: Setup, response: Response, per_ack_ignores_acked: bool) -> HighSpeed {
        HighSpeed {
            setup,
            response,
            per_ack_ignores_acked,
            cwnd: setup.clamp_cwnd(setup.initial_cwnd),
            ssthresh: INFINITE_SSTHRESH,
            row: 0,
        }
    }

    /// Packets added per round trip at window `w`.
    pub fn a(&self, w: f64) -> f64 {
        match &self.response {
            Response::Table => table_a(w),
            Response::Formula(f) => f.a(w),
        }
    }

    /// Fraction of the window `w` given up on a loss.
    pub fn b(&self, w: f64) -> f64 {
        match &self.response {
            Response::Table => table_b(w),
            Response::Formula(f) => f.b(w),
        }
    }

    /// `a` and `b` at the current window, moving the table index as Linux does.
    fn current_ab(&mut self) -> (f64, f64) {
        match &self.response {
            Response::Table => {
                self.row = walk_table_index(self.row, self.cwnd);
                ((self.row + 1) as f64, TABLE[self.row].1 as f64 / 256.0)
            }
            Response::Formula(f) => (f.a(self.cwnd), f.b(self.cwnd)),
        }
    }

    fn reduced_threshold(&mut self) -> f64 {
        let (_, b) = self.current_ab();
        (1.0 - b) * self.cwnd
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
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
            let (a, _) = self.current_ab();
            let counted = if self.per_ack_ignores_acked {
                1.0
            } else {
                acked
            };
            self.cwnd += a * counted / self.cwnd;
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
        } else {
            "congestion_avoidance"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::CcSpec;
    use crate::testkit::{ack, arbitrary_events, loss, rto};

    fn table() -> HighSpeed {
        HighSpeed::new(Setup::default(), Response::Table, false)
    }

    fn formula() -> HighSpeed {
        HighSpeed::new(
            Setup::default(),
            Response::Formula(Formula::rfc3649()),
            false,
        )
    }

    /// A controller in congestion avoidance at window `w`.
    fn in_avoidance(w: f64, response: Response, per_ack_ignores_acked: bool) -> HighSpeed {
        let mut h = HighSpeed::new(
            Setup {
                initial_cwnd: w,
                ..Setup::default()
            },
            response,
            per_ack_ignores_acked,
        );
        h.ssthresh = w;
        h
    }

    fn close(x: f64, want: f64, tol: f64) -> bool {
        (x - want).abs() <= tol
    }

    #[test]
    fn table_rows_and_their_boundaries() {
        let h = table();
        // (window, a, md/256): each row's own window uses that row.
        for (w, a, md) in [
            (1.0, 1.0, 128.0),
            (38.0, 1.0, 128.0),
            (39.0, 2.0, 112.0),
            (118.0, 2.0, 112.0),
            (119.0, 3.0, 104.0),
            (1058.0, 8.0, 83.0),
            (10000.0, 30.0, 52.0),
            (10661.0, 30.0, 52.0),
            (38992.0, 55.0, 35.0),
            (84035.0, 71.0, 25.0),
            (84036.0, 72.0, 24.0),
            (89053.0, 72.0, 24.0),
            (1e6, 72.0, 24.0),
        ] {
            assert_eq!(h.a(w), a, "a({w})");
            assert_eq!(h.b(w), md / 256.0, "b({w})");
        }
        assert!(close(h.b(118.0), 0.438, 0.001));
        assert!(close(h.b(84035.0), 0.098, 0.001));
    }

    #[test]
    fn table_index_walk_matches_a_fresh_lookup_in_both_directions() {
        let mut i = 0;
        let mut w = 30.0;
        while w < 200_000.0 {
            i = walk_table_index(i, w);
            assert_eq!(i, walk_table_index(0, w), "up at {w}");
            w *= 1.07;
        }
        while w > 1.0 {
            i = walk_table_index(i, w);
            assert_eq!(i, walk_table_index(0, w), "down at {w}");
            w /= 1.3;
        }
    }

    #[test]
    fn formula_values_match_rfc3649() {
        let h = formula();
        assert_eq!((h.a(38.0), h.b(38.0)), (1.0, 0.5));
        assert_eq!((h.a(10.0), h.b(10.0)), (1.0, 0.5));
        assert!(close(h.a(118.0), 2.09, 0.01), "{}", h.a(118.0));
        assert!(close(h.b(118.0), 0.441, 0.001), "{}", h.b(118.0));
        assert!(close(h.a(1058.0), 8.31, 0.01), "{}", h.a(1058.0));
        assert!(close(h.a(10661.0), 30.94, 0.01), "{}", h.a(10661.0));
        assert!(close(h.b(10661.0), 0.207, 0.001), "{}", h.b(10661.0));
        assert!(close(h.a(38992.0), 56.48, 0.01), "{}", h.a(38992.0));
        assert!(close(h.b(84035.0), 0.099, 0.001), "{}", h.b(84035.0));
        assert!(close(h.a(84035.0), 72.74, 0.01), "{}", h.a(84035.0));
        // The end points of the response function.
        let f = Formula::rfc3649();
        assert!(close(f.b(83000.0), 0.1, 1e-12));
        assert!(close(f.p(83000.0), 1e-7, 1e-18));
        assert!(close(f.p(38.0), 1.5 / 1444.0, 1e-15));
        // w = 0.12/p^0.835 holds along the line (the RFC rounds the exponent).
        let w = 0.12 / f.p(10661.0).powf(0.835);
        assert!((w / 10661.0 - 1.0).abs() < 0.02, "{w}");
        // Extrapolation past High_Window never makes b vanish.
        assert_eq!(f.b(1e8), 0.05);
    }

    #[test]
    fn one_rtt_of_acks_adds_a_of_w() {
        for response in [Response::Table, Response::Formula(Formula::rfc3649())] {
            // Windows whose table row does not change within the round trip.
            for w in [1100.0, 10000.0, 50000.0] {
                let mut h = in_avoidance(w, response, false);
                let a = h.a(w);
                // One stretch ACK covering the whole window: exactly a(w).
                h.on_ack(&ack(w as u32));
                assert!(close(h.cwnd() - w, a, 1e-9), "{response:?} at {w}");
                // One ACK per packet: each adds a/cwnd as cwnd creeps up by at most a, so the
                // total lies between a·w/(w+a) and a.
                let mut h = in_avoidance(w, response, false);
                for _ in 0..w as u32 {
                    h.on_ack(&ack(1));
                }
                let grown = h.cwnd() - w;
                assert!(
                    grown <= a && grown >= a * w / (w + a),
                    "{response:?} at {w}: {grown} vs a = {a}"
                );
            }
        }
        let mut h = in_avoidance(10000.0, Response::Table, false);
        for _ in 0..10000 {
            h.on_ack(&ack(1));
        }
        // Σ 30/cwnd over 10,000 ACKs from 10,000 packets = 29.955.
        assert!(close(h.cwnd(), 10029.955, 0.001), "{}", h.cwnd());
    }

    #[test]
    fn periodic_losses_reproduce_the_rfc_response_function() {
        // One loss every 1/p packets: the formula mode's sawtooth should average the window
        // the response function gives for p, w = 0.12/p^0.835 (RFC 3649 §5): 263 packets at
        // p = 10⁻⁴ and 1795 at 10⁻⁵. The RFC derives a(w) from the sawtooth approximation, so
        // allow 5 %.
        for (p, w_rfc) in [(1e-4, 262.5), (1e-5, 1795.5)] {
            let mut h = in_avoidance(1000.0, Response::Formula(Formula::rfc3649()), false);
            let (mut sent, mut next_loss) = (0.0, 1.0 / p);
            let (mut sum, mut rtts) = (0.0, 0);
            for rtt in 0..3000 {
                let mut lost = false;
                for _ in 0..h.cwnd() as u64 {
                    sent += 1.0;
                    if sent >= next_loss {
                        next_loss += 1.0 / p;
                        lost = true;
                    }
                    h.on_ack(&ack(1));
                }
                if lost {
                    h.on_loss(&loss(true));
                }
                if rtt >= 1000 {
                    sum += h.cwnd();
                    rtts += 1;
                }
            }
            let mean = sum / rtts as f64;
            assert!(
                (mean / w_rfc - 1.0).abs() < 0.05,
                "p = {p}: mean {mean}, RFC {w_rfc}"
            );
        }
    }

    #[test]
    fn linux_per_ack_mode_ignores_how_much_an_ack_covers() {
        let mut rfc = in_avoidance(10000.0, Response::Table, false);
        let mut linux = in_avoidance(10000.0, Response::Table, true);
        for _ in 0..5000 {
            rfc.on_ack(&ack(2));
            linux.on_ack(&ack(2));
        }
        // Delayed ACKs (two packets each): Linux earns half a round trip's a(w) = 30.
        assert!(close(rfc.cwnd() - 10000.0, 29.955, 0.001), "{}", rfc.cwnd());
        assert!(
            close(linux.cwnd() - 10000.0, 14.989, 0.001),
            "{}",
            linux.cwnd()
        );
    }

    #[test]
    fn loss_at_10000_packets_gives_up_52_of_256() {
        let mut h = in_avoidance(10000.0, Response::Table, false);
        h.on_loss(&loss(true));
        // 10000 − 10000·52/256 = 7968.75 (Linux's integer arithmetic: 7969).
        assert_eq!((h.cwnd(), h.ssthresh()), (7968.75, 7968.75));
        h.on_loss(&loss(false));
        assert_eq!(h.cwnd(), 7968.75);
        let mut h = in_avoidance(10661.0, Response::Formula(Formula::rfc3649()), false);
        h.on_loss(&loss(true));
        assert!(
            close(h.cwnd(), 10661.0 * (1.0 - 0.20676), 0.5),
            "{}",
            h.cwnd()
        );
    }

    #[test]
    fn small_windows_are_standard_tcp() {
        for response in [Response::Table, Response::Formula(Formula::rfc3649())] {
            let mut h = in_avoidance(20.0, response, false);
            h.on_ack(&ack(20));
            assert!(close(h.cwnd(), 21.0, 1e-12));
            h.on_loss(&loss(true));
            assert_eq!(h.cwnd(), 10.5);
        }
        let mut h = in_avoidance(3.0, Response::Table, false);
        h.on_loss(&loss(true));
        assert_eq!(h.cwnd(), 2.0, "floor of two packets");
    }

    #[test]
    fn a_loss_straight_out_of_slow_start_uses_the_current_window() {
        let mut h = table();
        for _ in 0..12 {
            let w = h.cwnd() as u32;
            h.on_ack(&ack(w)); // doubling in slow start: 10 · 2^12 = 40960
        }
        assert_eq!(h.cwnd(), 40960.0);
        h.on_loss(&loss(true));
        // 40960 lies in row 56 (40808 < w ≤ 42707): md 34/256, not the 1/2 Linux would use
        // with the row index it last set in congestion avoidance.
        assert_eq!(h.cwnd(), 40960.0 - 40960.0 * 34.0 / 256.0);
    }

    #[test]
    fn rto_restarts_from_one_packet() {
        let mut h = in_avoidance(10000.0, Response::Table, false);
        h.on_rto(&rto(1));
        assert_eq!((h.cwnd(), h.ssthresh()), (1.0, 7968.75));
        h.on_rto(&rto(2));
        assert_eq!(h.ssthresh(), 7968.75);
        assert_eq!(h.phase(), "slow_start");
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_or_in_recovery() {
        let mut h = in_avoidance(1000.0, Response::Table, false);
        h.on_ack(&AckEvent {
            cwnd_limited: false,
            ..ack(50)
        });
        h.on_ack(&AckEvent {
            in_recovery: true,
            ..ack(50)
        });
        assert_eq!(h.cwnd(), 1000.0);
    }

    #[test]
    fn parameters_are_validated() {
        let spec: CcSpec = "highspeed:mode=formula,high_p=1e-8".parse().unwrap();
        assert_eq!(spec.params.f64("high_p"), 1e-8);
        assert!("highspeed:per_ack_ignores_acked=true"
            .parse::<CcSpec>()
            .is_ok());
        let e = "highspeed:high_p=1e-8".parse::<CcSpec>().unwrap_err();
        assert!(e.to_string().contains("mode=formula"), "{e}");
        let e = "highspeed:mode=formula,low_window=100,high_window=90"
            .parse::<CcSpec>()
            .unwrap_err();
        assert!(e.to_string().contains("high_window"), "{e}");
        let e = "highspeed:mode=formula,high_p=0.01"
            .parse::<CcSpec>()
            .unwrap_err();
        assert!(e.to_string().contains("1.5/low_window"), "{e}");
        assert!("highspeed:mode=lookup".parse::<CcSpec>().is_err());
        assert!("highspeed:mode=formula,high_decrease=0.6"
            .parse::<CcSpec>()
            .is_err());
        // The built controller uses the formula.
        let cc = "highspeed:mode=formula"
            .parse::<CcSpec>()
            .unwrap()
            .build(&Setup::default())
            .unwrap();
        assert_eq!(cc.name(), "highspeed");
    }

    proptest::proptest! {
        #[test]
        fn window_stays_finite_and_within_bounds(
            events in arbitrary_events(400),
            initial in 1.0f64..2_000_000.0,
            formula in proptest::bool::ANY,
            per_ack_ignores_acked in proptest::bool::ANY,
        ) {
            let setup = Setup { initial_cwnd: initial, max_cwnd: 1_000_000.0, ..Setup::default() };
            let response = if formula {
                Response::Formula(Formula::rfc3649())
            } else {
                Response::Table
            };
            let mut h = HighSpeed::new(setup, response, per_ack_ignores_acked);
            for ev in &events {
                ev.apply(&mut h);
                proptest::prop_assert!(
                    h.cwnd().is_finite() && h.cwnd() >= 1.0 && h.cwnd() <= 1_000_000.0,
                    "cwnd {} after {:?}", h.cwnd(), ev
                );
                proptest::prop_assert!(h.ssthresh() >= 2.0, "ssthresh {}", h.ssthresh());
            }
        }
    }
}
