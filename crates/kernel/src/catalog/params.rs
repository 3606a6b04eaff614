//! Each algorithm's load-time parameters, as tables: name, default, range, unit and one line
//! of help. They are most of the catalog's length, and read best whole.

/// A load-time parameter.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// The parameter's name, as given in `name=value`.
    pub name: &'static str,
    /// The value used when none is given.
    pub default: f64,
    /// The smallest value accepted.
    pub min: f64,
    /// The largest value accepted.
    pub max: f64,
    /// Only whole numbers (booleans are 0 or 1).
    pub integer: bool,
    /// The unit the value is given in, for help output.
    pub unit: &'static str,
    /// One line on what the parameter does.
    pub help: &'static str,
}

pub(super) const FAST_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha",
        default: 200.0,
        min: 1.0,
        max: 1e6,
        integer: true,
        unit: "packets",
        help: "packets the flow keeps queued at the bottleneck in equilibrium (x·q = alpha)",
    },
    ParamSpec {
        name: "beta",
        default: 0.0,
        min: 0.0,
        max: 1e6,
        integer: true,
        unit: "packets",
        help: "upper end of the dead band [alpha, beta) in which an update holds the window; \
               0 = alpha (no band, ns-2's default)",
    },
    ParamSpec {
        name: "gamma",
        default: 0.5,
        min: 1.0 / 1024.0,
        max: 1.0,
        integer: false,
        unit: "",
        help: "fraction of the gap to the target window closed per update (steps of 1/1024)",
    },
    ParamSpec {
        name: "update_period",
        default: 0.02,
        min: 0.0,
        max: 10.0,
        integer: false,
        unit: "s",
        help: "minimum spacing of window updates",
    },
    ParamSpec {
        name: "mi_threshold",
        default: 0.00075,
        min: 0.0,
        max: 10.0,
        integer: false,
        unit: "s",
        help: "queueing delay below which the window doubles per RTT (multiplicative increase)",
    },
    ParamSpec {
        name: "eta_cap",
        default: 0.25,
        min: 1.0 / 65536.0,
        max: 1.0,
        integer: false,
        unit: "",
        help: "cap of the RTT-average weight min(3/w, cap): 1/4 paper, 1/256 ns-2 (used as 1/round(1/cap))",
    },
    ParamSpec {
        name: "min2w_cap",
        default: 1.0,
        min: 0.0,
        max: 1.0,
        integer: true,
        unit: "bool",
        help: "true: an update at most doubles the window (paper); false: no cap (ns-2)",
    },
    ParamSpec {
        name: "every_other_rtt",
        default: 1.0,
        min: 0.0,
        max: 1.0,
        integer: true,
        unit: "bool",
        help: "true: update only in every other round trip (ns-2, Linux prototype)",
    },
    ParamSpec {
        name: "pace_increments",
        default: 1.0,
        min: 0.0,
        max: 1.0,
        integer: true,
        unit: "bool",
        help: "true: spread an increase over the ACKs of one update period when baseRTT >= 4 ms",
    },
    ParamSpec {
        name: "rto_cwnd",
        default: 2.0,
        min: 1.0,
        max: 1000.0,
        integer: true,
        unit: "packets",
        help: "window after a retransmission timeout (ns-2: 2)",
    },
    ParamSpec {
        name: "period_min",
        default: 1.0,
        min: 0.0,
        max: 1.0,
        integer: true,
        unit: "bool",
        help: "true: avgRTT is the smallest RTT sample of the last update period instead of the \
               EWMA of all samples (the papers): blind to delay a host or a burst adds to some \
               packets of a period, not to a standing queue",
    },
    ParamSpec {
        name: "pace",
        default: 1.0,
        min: 0.0,
        max: 1.0,
        integer: true,
        unit: "bool",
        help: "true: ask for TCP's internal pacing (120 % of cwnd/srtt once MI ends), so the \
               window leaves spread over the RTT, not in the bursts the ACKs clock out",
    },
    ParamSpec {
        name: "climb",
        default: 0.125,
        min: 0.0,
        max: 1.0,
        integer: false,
        unit: "× acked",
        help: "with period_min, after MI: once a whole round trip found no queue, add this \
               share of each ACK's packets to the window (Q10); 0 = off",
    },
    ParamSpec {
        name: "mi_backlog",
        default: 4.0,
        min: 0.0,
        max: 1e6,
        integer: true,
        unit: "packets",
        help: "MI ends only at a queue holding at least this many of the flow's packets \
               (w_old·q/avgRTT); 0 = any queue above mi_threshold (the papers' rule)",
    },
];

pub(super) const HIGHSPEED_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "per_ack_ignores_acked",
    default: 1.0,
    min: 0.0,
    max: 1.0,
    integer: true,
    unit: "bool",
    help:
        "true: +a(w)/cwnd per ACK whatever it acknowledges (Linux); false: per acknowledged packet (RFC)",
}];

pub(super) const SCALABLE_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "a",
        default: 0.01,
        min: 0.0001,
        max: 0.5,
        integer: false,
        unit: "packets",
        help: "increase per acknowledged packet above the legacy threshold (used as 1/round(1/a))",
    },
    ParamSpec {
        name: "b",
        default: 0.125,
        min: 1.0 / 1024.0,
        max: 0.5,
        integer: false,
        unit: "",
        help: "fraction of the window removed on a loss (Q10: steps of 1/1024)",
    },
    ParamSpec {
        name: "legacy_threshold",
        default: 100.0,
        min: 0.0,
        max: 1e9,
        integer: true,
        unit: "packets",
        help: "at or below this window grow as Reno (Linux 100, Kelly 16)",
    },
    ParamSpec {
        name: "legacy_decrease",
        default: 0.0,
        min: 0.0,
        max: 1.0,
        integer: true,
        unit: "bool",
        help: "true: halve on a loss at or below the legacy threshold (Kelly); false: always b (Linux)",
    },
];

pub(super) const VEGAS_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha",
        default: 2.0,
        min: 0.0,
        max: 1e6,
        integer: true,
        unit: "packets",
        help: "grow by one packet per RTT while the backlog is below alpha",
    },
    ParamSpec {
        name: "beta",
        default: 4.0,
        min: 0.0,
        max: 1e6,
        integer: true,
        unit: "packets",
        help: "shrink by one packet per RTT while the backlog is above beta",
    },
    ParamSpec {
        name: "gamma",
        default: 1.0,
        min: 0.0,
        max: 1e6,
        integer: true,
        unit: "packets",
        help: "leave slow start once the backlog exceeds gamma",
    },
    ParamSpec {
        name: "linux_compat",
        default: 0.0,
        min: 0.0,
        max: 1.0,
        integer: true,
        unit: "bool",
        help: "true: backlog = cwnd·(rtt−base)/base as Linux since 2008; false: /rtt as the paper",
    },
];

/// A Lion parameter: a real number with the reference's range and default.
const fn lion(
    name: &'static str,
    default: f64,
    min: f64,
    max: f64,
    unit: &'static str,
    help: &'static str,
) -> ParamSpec {
    ParamSpec {
        name,
        default,
        min,
        max,
        integer: false,
        unit,
        help,
    }
}

/// The reference's parameters (crates/cc/src/algorithms/lion.rs), same names, ranges and
/// defaults; a test holds them equal.
pub(super) const LION_PARAMS: &[ParamSpec] = &[
    lion(
        "queue_threshold",
        0.001,
        0.0,
        1.0,
        "s",
        "queueing delay above which a queue is taken to exist (whole microseconds)",
    ),
    lion(
        "rise_threshold",
        0.0005,
        0.0,
        1.0,
        "s",
        "growth of the queueing delay from one round to the next that counts as rising",
    ),
    lion(
        "mbs_initial",
        4.0,
        1.0,
        1e6,
        "packets",
        "burst size at start and after a timeout",
    ),
    lion("mbs_max", 4096.0, 1.0, 1e6, "packets", "largest burst size"),
    lion(
        "mbs_step",
        1.0,
        0.0,
        1e4,
        "packets",
        "burst growth per clear round once a queue has been seen",
    ),
    lion(
        "mbs_decrease",
        0.75,
        0.05,
        1.0,
        "",
        "burst size factor when the queue grows or a loss occurs",
    ),
    lion(
        "startup_gain",
        2.0,
        1.0,
        4.0,
        "",
        "rate factor per clear round in startup",
    ),
    lion(
        "probe_gain",
        0.05,
        0.0,
        1.0,
        "",
        "relative rate increase per clear round in drop avoidance",
    ),
    lion(
        "compete_drop",
        0.2,
        0.01,
        0.99,
        "",
        "delivered-rate shortfall (fraction of our rate) meaning new traffic when the queue rises",
    ),
    lion(
        "loss_decrease",
        0.85,
        0.05,
        1.0,
        "",
        "rate factor after a loss that followed queueing",
    ),
    lion(
        "shuffle_scale",
        1.0,
        0.0,
        10.0,
        "",
        "scale of the shuffle yield table",
    ),
    ParamSpec {
        name: "yield_rounds",
        default: 4.0,
        min: 1.0,
        // Counted, up to 2 · yield_rounds, in 8 bits (struct lh_lion).
        max: 100.0,
        integer: true,
        unit: "rounds",
        help: "rounds to watch a newcomer after yielding",
    },
    lion(
        "balance_gain",
        0.1,
        0.001,
        1.0,
        "",
        "relative rate increase per round while balancing against a non-yielding competitor",
    ),
    lion(
        "balance_share",
        0.5,
        0.05,
        1.0,
        "",
        "fair share to balance up to, as a fraction of the largest delivered rate seen",
    ),
    lion(
        "cwnd_gain",
        2.0,
        1.0,
        100.0,
        "",
        "window cap as a multiple of rate × smoothed RTT",
    ),
];

#[cfg(test)]
mod tests {
    use crate::catalog::Algorithm;

    /// The kernel's Lion takes the reference's parameters: same names, defaults and ranges.
    #[test]
    fn lion_parameters_are_the_references() {
        use longhaul_cc::{ParamKind, Value};
        let reference = longhaul_cc::algorithms::lion::PARAMS;
        let ours = Algorithm::Lion.params();
        assert_eq!(ours.len(), reference.len());
        for (k, r) in ours.iter().zip(reference) {
            assert_eq!(k.name, r.name);
            assert_eq!(k.unit, r.unit, "{}", k.name);
            let (min, max, integer) = match r.kind {
                ParamKind::Float { min, max } => (min, max, false),
                ParamKind::Int { min, max } => (min as f64, max as f64, true),
                other => panic!("{}: {other:?}", r.name),
            };
            let default = match r.default {
                Value::Float(v) => v,
                Value::Int(v) => v as f64,
                other => panic!("{}: {other:?}", r.name),
            };
            assert_eq!(
                (k.min, k.max, k.integer, k.default),
                (min, max, integer, default),
                "{}",
                k.name
            );
        }
    }
}
