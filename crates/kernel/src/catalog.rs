//! The algorithms this crate ships, their load-time parameters, and how parameter values map
//! onto the fixed-point globals (`const volatile struct lh_<algorithm>_params lh_params`) the
//! eBPF programs read.
//!
//! Every program's parameter block is four `u32`s; [`ParamValues::encode`] and
//! [`ParamValues::decode`] convert between user units and that block, so the values a loaded
//! program really uses can be read back from its pinned `.rodata` map.

use crate::error::KernelError;
use std::fmt;

/// One of the congestion controls in `src/bpf/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    Fast,
    Scalable,
    HighSpeed,
    Vegas,
}

/// A load-time parameter.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: f64,
    pub min: f64,
    pub max: f64,
    /// Only whole numbers (booleans are 0 or 1).
    pub integer: bool,
    pub unit: &'static str,
    pub help: &'static str,
}

const FAST_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha",
        default: 20.0,
        min: 1.0,
        max: 100_000.0,
        integer: true,
        unit: "packets",
        help: "packets the flow keeps queued at the bottleneck in equilibrium",
    },
    ParamSpec {
        name: "gamma",
        default: 0.5,
        min: 1.0 / 1024.0,
        max: 1.0,
        integer: false,
        unit: "",
        help: "fraction of the gap to the target window closed per update (Q10: steps of 1/1024)",
    },
    ParamSpec {
        name: "update_period_ms",
        default: 10.0,
        min: 0.0,
        max: 10_000.0,
        integer: false,
        unit: "ms",
        help: "minimum spacing of window updates (updates also wait every other RTT)",
    },
    ParamSpec {
        name: "mi_threshold_ms",
        default: 0.75,
        min: 0.0,
        max: 10_000.0,
        integer: false,
        unit: "ms",
        help: "queueing delay below which the window doubles per RTT (multiplicative increase)",
    },
];

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
        help: "1: halve on a loss at or below the legacy threshold (Kelly); 0: always b (Linux)",
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
        help: "1: backlog = cwnd·(rtt−base)/base as Linux since 2008; 0: /rtt as the paper",
    },
];

impl Algorithm {
    pub const ALL: [Algorithm; 4] = [
        Algorithm::Fast,
        Algorithm::Scalable,
        Algorithm::HighSpeed,
        Algorithm::Vegas,
    ];

    /// The algorithm's name, also its default registered congestion-control name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Fast => "fast",
            Algorithm::Scalable => "scalable",
            Algorithm::HighSpeed => "highspeed",
            Algorithm::Vegas => "vegas",
        }
    }

    pub fn summary(self) -> &'static str {
        match self {
            Algorithm::Fast => "FAST TCP: delay-based, keeps alpha packets queued per flow",
            Algorithm::Scalable => "Scalable TCP: +a per ACK, -b on loss above a legacy window",
            Algorithm::HighSpeed => "HighSpeed TCP (RFC 3649): window-dependent a(w), b(w) table",
            Algorithm::Vegas => "TCP Vegas: +-1 packet per RTT to keep alpha..beta queued",
        }
    }

    pub fn params(self) -> &'static [ParamSpec] {
        match self {
            Algorithm::Fast => FAST_PARAMS,
            Algorithm::Scalable => SCALABLE_PARAMS,
            Algorithm::HighSpeed => &[],
            Algorithm::Vegas => VEGAS_PARAMS,
        }
    }

    pub fn parse(name: &str) -> Result<Algorithm, KernelError> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .ok_or_else(|| KernelError::UnknownAlgorithm(name.to_string()))
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Validated parameter values for one algorithm, in the order of its [`ParamSpec`]s.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamValues {
    pub algorithm: Algorithm,
    pub values: Vec<(&'static str, f64)>,
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
            let v: f64 = match value.trim() {
                "true" | "on" | "yes" if spec.unit == "bool" => 1.0,
                "false" | "off" | "no" if spec.unit == "bool" => 0.0,
                text => text
                    .parse()
                    .map_err(|_| bad(format!("{key}: `{text}` is not a number")))?,
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
        Ok(values)
    }

    pub fn get(&self, name: &str) -> f64 {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("{} has no parameter {name}", self.algorithm))
    }

    /// The program's parameter block (four u32, in the C struct's field order).
    pub fn encode(&self) -> [u32; 4] {
        match self.algorithm {
            Algorithm::Fast => [
                self.get("alpha") as u32,
                q10(self.get("gamma")),
                (self.get("update_period_ms") * 1000.0).round() as u32,
                (self.get("mi_threshold_ms") * 1000.0).round() as u32,
            ],
            Algorithm::Scalable => [
                (1.0 / self.get("a")).round() as u32,
                q10(self.get("b")),
                self.get("legacy_threshold") as u32,
                self.get("legacy_decrease") as u32,
            ],
            Algorithm::Vegas => [
                self.get("alpha") as u32,
                self.get("beta") as u32,
                self.get("gamma") as u32,
                self.get("linux_compat") as u32,
            ],
            Algorithm::HighSpeed => [0; 4],
        }
    }

    /// The values a parameter block stands for (the effective values after fixed point).
    pub fn decode(algorithm: Algorithm, raw: [u32; 4]) -> ParamValues {
        let values = match algorithm {
            Algorithm::Fast => vec![
                ("alpha", raw[0] as f64),
                ("gamma", raw[1] as f64 / 1024.0),
                ("update_period_ms", raw[2] as f64 / 1000.0),
                ("mi_threshold_ms", raw[3] as f64 / 1000.0),
            ],
            Algorithm::Scalable => vec![
                ("a", 1.0 / raw[0].max(1) as f64),
                ("b", raw[1] as f64 / 1024.0),
                ("legacy_threshold", raw[2] as f64),
                ("legacy_decrease", raw[3] as f64),
            ],
            Algorithm::Vegas => vec![
                ("alpha", raw[0] as f64),
                ("beta", raw[1] as f64),
                ("gamma", raw[2] as f64),
                ("linux_compat", raw[3] as f64),
            ],
            Algorithm::HighSpeed => vec![],
        };
        ParamValues { algorithm, values }
    }
}

impl fmt::Display for ParamValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .values
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        f.write_str(&parts.join(" "))
    }
}

fn q10(x: f64) -> u32 {
    (x * 1024.0).round() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_encode_to_the_linux_and_paper_constants() {
        // Scalable: 1/a = 100 (TCP_SCALABLE_AI_CNT), b = 128/1024 = 1/8 (MD_SCALE 3).
        let s = ParamValues::defaults(Algorithm::Scalable).encode();
        assert_eq!(s, [100, 128, 100, 0]);
        // FAST: γ = 0.5 is 512 in Q10; 10 ms and 0.75 ms in µs.
        let f = ParamValues::defaults(Algorithm::Fast).encode();
        assert_eq!(f, [20, 512, 10_000, 750]);
        // Vegas: Linux module defaults α = 2, β = 4, γ = 1.
        assert_eq!(
            ParamValues::defaults(Algorithm::Vegas).encode(),
            [2, 4, 1, 0]
        );
    }

    #[test]
    fn settings_override_and_round_trip() {
        let v = ParamValues::from_settings(Algorithm::Fast, &["alpha=50", "gamma=0.25"]).unwrap();
        assert_eq!(v.encode(), [50, 256, 10_000, 750]);
        assert_eq!(ParamValues::decode(Algorithm::Fast, v.encode()), v);
        let k = ParamValues::from_settings(
            Algorithm::Scalable,
            &["legacy_threshold=16", "legacy_decrease=true", "a=0.02"],
        )
        .unwrap();
        assert_eq!(k.encode(), [50, 128, 16, 1]);
    }

    #[test]
    fn bad_settings_are_rejected_with_the_reason() {
        let e = ParamValues::from_settings(Algorithm::Fast, &["beta=3"]).unwrap_err();
        assert!(e.to_string().contains("unknown parameter `beta`"), "{e}");
        let e = ParamValues::from_settings(Algorithm::Fast, &["gamma=2"]).unwrap_err();
        assert!(e.to_string().contains("outside"), "{e}");
        let e = ParamValues::from_settings(Algorithm::Vegas, &["alpha=1.5"]).unwrap_err();
        assert!(e.to_string().contains("whole number"), "{e}");
        let e = ParamValues::from_settings(Algorithm::Vegas, &["alpha"]).unwrap_err();
        assert!(e.to_string().contains("key=value"), "{e}");
        let e = ParamValues::from_settings(Algorithm::HighSpeed, &["x=1"]).unwrap_err();
        assert!(e.to_string().contains("parameters: none"), "{e}");
    }
}
