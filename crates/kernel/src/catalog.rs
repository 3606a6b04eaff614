//! The algorithms this crate ships, their load-time parameters, and how parameter values map
//! onto the fixed-point globals (`const volatile struct lh_<algorithm>_params lh_params`) the
//! eBPF programs read.
//!
//! Every program's parameter block is a struct of `u32`s; [`ParamValues::encode`] and
//! [`ParamValues::decode`] convert between user units and that block, so the values a loaded
//! program really uses can be read back from its pinned `.rodata` map.

use crate::error::KernelError;
use std::fmt;

/// One of the congestion controls in `src/bpf/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// FAST TCP (`fast.bpf.c`).
    Fast,
    /// Scalable TCP (`scalable.bpf.c`).
    Scalable,
    /// HighSpeed TCP, RFC 3649 (`highspeed.bpf.c`).
    HighSpeed,
    /// TCP Vegas (`vegas.bpf.c`).
    Vegas,
    /// The Lion pacing controller (`lion.bpf.c`).
    Lion,
}

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

const FAST_PARAMS: &[ParamSpec] = &[
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

const HIGHSPEED_PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "per_ack_ignores_acked",
    default: 1.0,
    min: 0.0,
    max: 1.0,
    integer: true,
    unit: "bool",
    help:
        "true: +a(w)/cwnd per ACK whatever it acknowledges (Linux); false: per acknowledged packet (RFC)",
}];

const SCALABLE_PARAMS: &[ParamSpec] = &[
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

const VEGAS_PARAMS: &[ParamSpec] = &[
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
const LION_PARAMS: &[ParamSpec] = &[
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

impl Algorithm {
    /// Every algorithm, in the order they are listed.
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Fast,
        Algorithm::Scalable,
        Algorithm::HighSpeed,
        Algorithm::Vegas,
        Algorithm::Lion,
    ];

    /// The algorithm's name, also its default registered congestion-control name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Fast => "fast",
            Algorithm::Scalable => "scalable",
            Algorithm::HighSpeed => "highspeed",
            Algorithm::Vegas => "vegas",
            Algorithm::Lion => "lion",
        }
    }

    /// One line on how the algorithm works, for `longhaul kernel algorithms`.
    pub fn summary(self) -> &'static str {
        match self {
            Algorithm::Fast => "FAST TCP: delay-based, keeps alpha packets queued per flow",
            Algorithm::Scalable => "Scalable TCP: +a per ACK, -b on loss above a legacy window",
            Algorithm::HighSpeed => "HighSpeed TCP (RFC 3649): window-dependent a(w), b(w) table",
            Algorithm::Vegas => "TCP Vegas: +-1 packet per RTT to keep alpha..beta queued",
            Algorithm::Lion => {
                "Lion: paces at the available bandwidth in bursts of the MBS; ignores random loss"
            }
        }
    }

    /// The algorithm's load-time parameters.
    pub fn params(self) -> &'static [ParamSpec] {
        match self {
            Algorithm::Fast => FAST_PARAMS,
            Algorithm::Scalable => SCALABLE_PARAMS,
            Algorithm::HighSpeed => HIGHSPEED_PARAMS,
            Algorithm::Vegas => VEGAS_PARAMS,
            Algorithm::Lion => LION_PARAMS,
        }
    }

    /// Its entry in `longhaul kernel algorithms`: name and summary, then one line per
    /// parameter (default, unit, range, help).
    pub fn describe(self) -> String {
        let mut out = format!("{:<10} {}\n", self.name(), self.summary());
        for p in self.params() {
            let unit = if p.unit.is_empty() || p.unit == "bool" {
                String::new()
            } else {
                format!(" {}", p.unit)
            };
            out += &format!(
                "{:<12}{}={}{} [{}..{}]  {}\n",
                "", p.name, p.default, unit, p.min, p.max, p.help
            );
        }
        out
    }

    /// The algorithm called `name`.
    pub fn parse(name: &str) -> Result<Algorithm, KernelError> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| KernelError::UnknownAlgorithm {
                name: name.to_string(),
                available: Algorithm::ALL.map(Algorithm::name).join(", "),
            })
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A parameter that may not exceed another of the same algorithm. Ranges are per parameter
/// (`ParamSpec`); these are the relations between them, every algorithm's in this one table.
struct Order {
    algorithm: Algorithm,
    low: &'static str,
    high: &'static str,
    /// `high = 0` means "equal to `low`" (FAST's beta: no dead band).
    zero_means_low: bool,
    /// `high` must exceed `low`, not merely equal it.
    strict: bool,
    why: &'static str,
}

const ORDERS: &[Order] = &[
    Order {
        algorithm: Algorithm::Fast,
        low: "alpha",
        high: "beta",
        zero_means_low: true,
        strict: false,
        why: "the window holds in the dead band [alpha, beta)",
    },
    Order {
        algorithm: Algorithm::Vegas,
        low: "alpha",
        high: "beta",
        zero_means_low: false,
        strict: false,
        why: "the window grows below alpha, shrinks above beta and holds between \
              (Brakmo & Peterson; Linux tcp_vegas.c)",
    },
    Order {
        algorithm: Algorithm::Lion,
        low: "mbs_initial",
        high: "mbs_max",
        zero_means_low: false,
        strict: false,
        why: "the burst starts at mbs_initial and never exceeds mbs_max",
    },
    Order {
        algorithm: Algorithm::Lion,
        low: "probe_gain",
        high: "compete_drop",
        zero_means_low: false,
        strict: true,
        why: "a probe shortens the delivered/sent ratio by up to probe_gain, which must not \
              look like new traffic",
    },
];

/// Validated parameter values for one algorithm, in the order of its [`ParamSpec`]s.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamValues {
    /// The algorithm the values are for.
    pub algorithm: Algorithm,
    /// Each parameter's name and value, in the order of the algorithm's [`ParamSpec`]s.
    pub values: Vec<(&'static str, f64)>,
}

/// `NAME[:key=value,…]` and the `--param` settings: the algorithm's name and every setting.
pub fn split_spec(spec: &str, params: &[String]) -> (String, Vec<String>) {
    let (name, inline) = spec.split_once(':').unwrap_or((spec, ""));
    let mut settings: Vec<String> = inline
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    settings.extend(params.iter().cloned());
    (name.trim().to_string(), settings)
}

impl ParamValues {
    /// The defaults.
    pub fn defaults(algorithm: Algorithm) -> ParamValues {
        ParamValues {
            algorithm,
            values: algorithm
                .params()
                .iter()
                .map(|p| (p.name, p.default))
                .collect(),
        }
    }

    /// Defaults overridden by `key=value` settings.
    pub fn from_settings<S: AsRef<str>>(
        algorithm: Algorithm,
        settings: &[S],
    ) -> Result<ParamValues, KernelError> {
        let bad = |message: String| KernelError::BadParam {
            algorithm: algorithm.name(),
            message,
        };
        let mut values = ParamValues::defaults(algorithm);
        for setting in settings {
            let setting = setting.as_ref();
            let (key, value) = setting
                .split_once('=')
                .ok_or_else(|| bad(format!("`{setting}` is not key=value")))?;
            let spec = algorithm
                .params()
                .iter()
                .find(|p| p.name == key.trim())
                .ok_or_else(|| {
                    let known: Vec<&str> = algorithm.params().iter().map(|p| p.name).collect();
                    bad(format!(
                        "unknown parameter `{key}` (parameters: {})",
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    ))
                })?;
            // Booleans read as in algorithm specs everywhere (longhaul_cc::params::parse_bool).
            let v: f64 = if spec.unit == "bool" {
                match longhaul_cc::params::parse_bool(value) {
                    Some(b) => f64::from(u8::from(b)),
                    None => {
                        return Err(bad(format!(
                            "{key}: `{}` is not true or false",
                            value.trim()
                        )))
                    }
                }
            } else {
                let text = value.trim();
                text.parse()
                    .map_err(|_| bad(format!("{key}: `{text}` is not a number")))?
            };
            if !v.is_finite() || v < spec.min || v > spec.max {
                return Err(bad(format!(
                    "{key} = {v} is outside [{}, {}]",
                    spec.min, spec.max
                )));
            }
            if spec.integer && v.fract() != 0.0 {
                return Err(bad(format!("{key} = {v} must be a whole number")));
            }
            let slot = values
                .values
                .iter_mut()
                .find(|(n, _)| *n == spec.name)
                .expect("every spec has a slot");
            slot.1 = v;
        }
        values.check_orders().map_err(bad)?;
        Ok(values)
    }

    /// The relations of [`ORDERS`] that concern this algorithm.
    fn check_orders(&self) -> Result<(), String> {
        for o in ORDERS.iter().filter(|o| o.algorithm == self.algorithm) {
            let (low, high) = (self.get(o.low), self.get(o.high));
            if (o.zero_means_low && high == 0.0) || high > low || (high == low && !o.strict) {
                continue;
            }
            let zero = if o.zero_means_low { "0 or " } else { "" };
            let relation = if o.strict { "above" } else { "at least" };
            return Err(format!(
                "{h} ({high}) must be {zero}{relation} {l} ({low}): {why}; raise {h} or lower {l}",
                h = o.high,
                l = o.low,
                why = o.why
            ));
        }
        Ok(())
    }

    /// The value of parameter `name`; panics if the algorithm has no such parameter.
    pub fn get(&self, name: &str) -> f64 {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("{} has no parameter {name}", self.algorithm))
    }

    /// The program's parameter block: the C struct `lh_<algorithm>_params`, field by field.
    pub fn encode(&self) -> Vec<u32> {
        let flag = |n: &str| self.get(n) as u32;
        match self.algorithm {
            Algorithm::Fast => vec![
                flag("alpha"),
                q10(self.get("gamma")),
                (self.get("update_period") * 1e6).round() as u32,
                (self.get("mi_threshold") * 1e6).round() as u32,
                (1.0 / self.get("eta_cap")).round() as u32,
                flag("min2w_cap"),
                flag("every_other_rtt"),
                flag("pace_increments"),
                flag("rto_cwnd"),
                flag("beta"),
                flag("period_min"),
                flag("pace"),
                q10(self.get("climb")),
                flag("mi_backlog"),
            ],
            Algorithm::Scalable => vec![
                (1.0 / self.get("a")).round() as u32,
                q10(self.get("b")),
                flag("legacy_threshold"),
                flag("legacy_decrease"),
            ],
            Algorithm::Vegas => vec![
                flag("alpha"),
                flag("beta"),
                flag("gamma"),
                flag("linux_compat"),
            ],
            Algorithm::HighSpeed => vec![flag("per_ack_ignores_acked"), 0, 0, 0],
            Algorithm::Lion => vec![
                (self.get("queue_threshold") * 1e6).round() as u32,
                (self.get("rise_threshold") * 1e6).round() as u32,
                q10(self.get("mbs_initial")),
                q10(self.get("mbs_max")),
                q10(self.get("mbs_step")),
                q16(self.get("mbs_decrease")),
                q16(self.get("startup_gain")),
                q16(self.get("probe_gain")),
                q16(self.get("compete_drop")),
                q16(self.get("loss_decrease")),
                q16(self.get("shuffle_scale")),
                flag("yield_rounds"),
                q16(self.get("balance_gain")),
                q16(self.get("balance_share")),
                q16(self.get("cwnd_gain")),
            ],
        }
    }

    /// The values a parameter block stands for (the effective values after fixed point);
    /// `None` when the block is too short for the algorithm.
    pub fn decode(algorithm: Algorithm, raw: &[u32]) -> Option<ParamValues> {
        let f = |i: usize| raw.get(i).map(|&v| v as f64);
        let values = match algorithm {
            Algorithm::Fast => vec![
                ("alpha", f(0)?),
                // Absent from blocks written before the dead band existed: no band.
                ("beta", f(9).unwrap_or(0.0)),
                ("gamma", f(1)? / 1024.0),
                ("update_period", f(2)? / 1e6),
                ("mi_threshold", f(3)? / 1e6),
                ("eta_cap", 1.0 / f(4)?.max(1.0)),
                ("min2w_cap", f(5)?),
                ("every_other_rtt", f(6)?),
                ("pace_increments", f(7)?),
                ("rto_cwnd", f(8)?),
                // Absent from blocks written before these options existed: the papers' way.
                ("period_min", f(10).unwrap_or(0.0)),
                ("pace", f(11).unwrap_or(0.0)),
                ("climb", f(12).unwrap_or(0.0) / 1024.0),
                ("mi_backlog", f(13).unwrap_or(0.0)),
            ],
            Algorithm::Scalable => vec![
                ("a", 1.0 / f(0)?.max(1.0)),
                ("b", f(1)? / 1024.0),
                ("legacy_threshold", f(2)?),
                ("legacy_decrease", f(3)?),
            ],
            Algorithm::Vegas => vec![
                ("alpha", f(0)?),
                ("beta", f(1)?),
                ("gamma", f(2)?),
                ("linux_compat", f(3)?),
            ],
            Algorithm::HighSpeed => vec![("per_ack_ignores_acked", f(0)?)],
            Algorithm::Lion => vec![
                ("queue_threshold", f(0)? / 1e6),
                ("rise_threshold", f(1)? / 1e6),
                ("mbs_initial", f(2)? / 1024.0),
                ("mbs_max", f(3)? / 1024.0),
                ("mbs_step", f(4)? / 1024.0),
                ("mbs_decrease", f(5)? / 65536.0),
                ("startup_gain", f(6)? / 65536.0),
                ("probe_gain", f(7)? / 65536.0),
                ("compete_drop", f(8)? / 65536.0),
                ("loss_decrease", f(9)? / 65536.0),
                ("shuffle_scale", f(10)? / 65536.0),
                ("yield_rounds", f(11)?),
                ("balance_gain", f(12)? / 65536.0),
                ("balance_share", f(13)? / 65536.0),
                ("cwnd_gain", f(14)? / 65536.0),
            ],
        };
        Some(ParamValues { algorithm, values })
    }
}

impl fmt::Display for ParamValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The `key=value,…` of an algorithm spec (`fast:alpha=20,beta=20`), booleans as words.
        let parts: Vec<String> = self
            .values
            .iter()
            .map(|(n, v)| {
                let bool = self
                    .algorithm
                    .params()
                    .iter()
                    .any(|p| p.name == *n && p.unit == "bool");
                match bool {
                    true => format!("{n}={}", *v != 0.0),
                    false => format!("{n}={v}"),
                }
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

fn q10(x: f64) -> u32 {
    (x * 1024.0).round() as u32
}

fn q16(x: f64) -> u32 {
    (x * 65536.0).round() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `kernel load` takes algorithms as every other command does, `NAME[:key=value,…]`, and
    /// the settings reach the same validation as `--param`.
    #[test]
    fn load_takes_name_colon_parameters() {
        let (name, settings) = split_spec("fast:alpha=20,beta=20", &["gamma=0.25".into()]);
        assert_eq!(name, "fast");
        assert_eq!(settings, ["alpha=20", "beta=20", "gamma=0.25"]);
        let algorithm = Algorithm::parse(&name).unwrap();
        let v = ParamValues::from_settings(algorithm, &settings).unwrap();
        assert!(
            v.to_string().starts_with("alpha=20,beta=20,gamma=0.25"),
            "{v}"
        );
        assert_eq!(split_spec("vegas", &[]), ("vegas".to_string(), vec![]));
    }

    #[test]
    fn an_unknown_name_lists_every_algorithm() {
        let e = Algorithm::parse("reno").unwrap_err().to_string();
        for a in Algorithm::ALL {
            assert!(e.contains(a.name()), "{e}");
        }
        assert!(e.contains("`reno`"), "{e}");
    }

    #[test]
    fn defaults_encode_to_the_linux_and_paper_constants() {
        // Scalable: 1/a = 100 (TCP_SCALABLE_AI_CNT), b = 128/1024 = 1/8 (MD_SCALE 3).
        let s = ParamValues::defaults(Algorithm::Scalable).encode();
        assert_eq!(s, [100, 128, 100, 0]);
        // FAST: γ = 0.5 is 512 in Q10; 20 ms and 0.75 ms in µs; η cap 1/4; no dead
        // band; the per-period minimum RTT, TCP's pacing, a climb of 1/8 (128 in Q10) and MI
        // ending at a backlog of 4 packets.
        let f = ParamValues::defaults(Algorithm::Fast).encode();
        assert_eq!(f, [200, 512, 20_000, 750, 4, 1, 1, 1, 2, 0, 1, 1, 128, 4]);
        assert_eq!(
            ParamValues::defaults(Algorithm::HighSpeed).encode(),
            [1, 0, 0, 0]
        );
        // Vegas: Linux module defaults α = 2, β = 4, γ = 1.
        assert_eq!(
            ParamValues::defaults(Algorithm::Vegas).encode(),
            [2, 4, 1, 0]
        );
    }

    #[test]
    fn settings_override_and_round_trip() {
        let v = ParamValues::from_settings(
            Algorithm::Fast,
            &[
                "alpha=50",
                "gamma=0.25",
                "eta_cap=0.00390625",
                "min2w_cap=false",
                "beta=80",
                "period_min=true",
                "pace=1",
                "climb=0.125",
                "mi_backlog=12",
            ],
        )
        .unwrap();
        assert_eq!(
            v.encode(),
            [50, 256, 20_000, 750, 256, 0, 1, 1, 2, 80, 1, 1, 128, 12]
        );
        assert_eq!(ParamValues::decode(Algorithm::Fast, &v.encode()), Some(v));
        assert_eq!(ParamValues::decode(Algorithm::Fast, &[1, 2, 3]), None);
        let k = ParamValues::from_settings(
            Algorithm::Scalable,
            &["legacy_threshold=16", "legacy_decrease=true", "a=0.02"],
        )
        .unwrap();
        assert_eq!(k.encode(), [50, 128, 16, 1]);
    }

    /// Booleans read and print as algorithm specs write them (`true`/`false`, or `1`/`0`),
    /// and the values print as a spec's `key=value,…`.
    #[test]
    fn booleans_are_one_form_and_values_print_as_a_spec() {
        let a = ParamValues::from_settings(Algorithm::Fast, &["min2w_cap=false"]).unwrap();
        let b = ParamValues::from_settings(Algorithm::Fast, &["min2w_cap=0"]).unwrap();
        assert_eq!(a, b);
        let text = a.to_string();
        assert!(text.starts_with("alpha=200,"), "{text}");
        assert!(text.contains(",min2w_cap=false,"), "{text}");
        for bad in ["min2w_cap=0.5", "min2w_cap=yes", "min2w_cap=2"] {
            let e = ParamValues::from_settings(Algorithm::Fast, &[bad]).unwrap_err();
            assert!(e.to_string().contains("is not true or false"), "{bad}: {e}");
        }
    }

    #[test]
    fn bad_settings_are_rejected_with_the_reason() {
        let e = ParamValues::from_settings(Algorithm::Fast, &["beta=3"]).unwrap_err();
        assert!(
            e.to_string()
                .contains("beta (3) must be 0 or at least alpha (200): the window holds"),
            "{e}"
        );
        assert!(ParamValues::from_settings(Algorithm::Fast, &["alpha=20", "beta=20"]).is_ok());
        let e = ParamValues::from_settings(Algorithm::Fast, &["fc_threshold=1"]).unwrap_err();
        assert!(
            e.to_string().contains("unknown parameter `fc_threshold`"),
            "{e}"
        );
        let e = ParamValues::from_settings(Algorithm::Fast, &["gamma=2"]).unwrap_err();
        assert!(e.to_string().contains("outside"), "{e}");
        let e = ParamValues::from_settings(Algorithm::Vegas, &["alpha=1.5"]).unwrap_err();
        assert!(e.to_string().contains("whole number"), "{e}");
        let e = ParamValues::from_settings(Algorithm::Vegas, &["alpha"]).unwrap_err();
        assert!(e.to_string().contains("key=value"), "{e}");
        let e = ParamValues::from_settings(Algorithm::HighSpeed, &["x=1"]).unwrap_err();
        assert!(
            e.to_string().contains("parameters: per_ack_ignores_acked"),
            "{e}"
        );
    }

    #[test]
    fn vegas_needs_beta_at_least_alpha() {
        // `kernel load vegas -p alpha=10 -p beta=2` was accepted.
        let e = ParamValues::from_settings(Algorithm::Vegas, &["alpha=10", "beta=2"]).unwrap_err();
        assert!(
            e.to_string()
                .contains("beta (2) must be at least alpha (10): the window grows below alpha"),
            "{e}"
        );
        let e = ParamValues::from_settings(Algorithm::Vegas, &["alpha=5"]).unwrap_err();
        assert!(
            e.to_string()
                .contains("beta (4) must be at least alpha (5)"),
            "{e}"
        );
        assert!(ParamValues::from_settings(Algorithm::Vegas, &["alpha=4", "beta=4"]).is_ok());
        // Vegas has no "0 means alpha": beta = 0 with alpha 2 is refused.
        assert!(ParamValues::from_settings(Algorithm::Vegas, &["beta=0"]).is_err());
    }

    #[test]
    fn every_algorithms_defaults_satisfy_its_relations() {
        for a in Algorithm::ALL {
            assert_eq!(ParamValues::defaults(a).check_orders(), Ok(()), "{a}");
        }
        for o in ORDERS {
            let names: Vec<&str> = o.algorithm.params().iter().map(|p| p.name).collect();
            assert!(
                names.contains(&o.low) && names.contains(&o.high),
                "{}",
                o.algorithm
            );
        }
    }

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

    #[test]
    fn lion_encodes_in_microseconds_q10_packets_and_q16_fractions() {
        let d = ParamValues::defaults(Algorithm::Lion).encode();
        // 1 ms, 0.5 ms; 4, 4096 and 1 packets in Q10; 0.75, 2, 0.05, 0.2, 0.85, 1 in Q16; 4
        // rounds; 0.1, 0.5, 2 in Q16.
        assert_eq!(
            d,
            [
                1000, 500, 4096, 4_194_304, 1024, 49152, 131_072, 3277, 13107, 55706, 65536, 4,
                6554, 32768, 131_072
            ]
        );
        let back = ParamValues::decode(Algorithm::Lion, &d).unwrap();
        assert_eq!(back.get("mbs_max"), 4096.0);
        assert!((back.get("probe_gain") - 0.05).abs() < 1.0 / 65536.0);
    }

    #[test]
    fn lion_relations_are_checked() {
        let e = ParamValues::from_settings(Algorithm::Lion, &["mbs_initial=64", "mbs_max=32"])
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("mbs_max (32) must be at least mbs_initial (64)"),
            "{e}"
        );
        // The reference refuses compete_drop <= probe_gain, equality included.
        let e = ParamValues::from_settings(Algorithm::Lion, &["probe_gain=0.2"]).unwrap_err();
        assert!(
            e.to_string()
                .contains("compete_drop (0.2) must be above probe_gain (0.2)"),
            "{e}"
        );
        assert!(ParamValues::from_settings(Algorithm::Lion, &["probe_gain=0.19"]).is_ok());
        let e = ParamValues::from_settings(Algorithm::Lion, &["yield_rounds=2.5"]).unwrap_err();
        assert!(e.to_string().contains("whole number"), "{e}");
    }
}
