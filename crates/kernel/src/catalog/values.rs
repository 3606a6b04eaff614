//! Parameter values as people give them (`NAME[:key=value,…]`, `--param`): each setting
//! checked against its parameter's range, then the relations between parameters of one
//! algorithm.

use super::Algorithm;
use crate::error::KernelError;
use std::fmt;

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

/// Validated parameter values for one algorithm, in the order of its
/// [`ParamSpec`](super::ParamSpec)s.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamValues {
    /// The algorithm the values are for.
    pub algorithm: Algorithm,
    /// Each parameter's name and value, in the order of the algorithm's
    /// [`ParamSpec`](super::ParamSpec)s.
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
